/* A bounded fuzz of the C API: random handles (valid, null, freed, garbage),
 * counts (negative, zero, huge), ranks, tags, roots and NULL pointers, into
 * point-to-point, datatype, group, communicator, collective, info and error
 * calls on one rank under MPI_ERRORS_RETURN. Every call must return (an
 * error or success), never crash or hang. Argument: iterations, seed. */
#include "check.h"

static unsigned long long st;
static unsigned rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (unsigned)(st >> 11); }

static int pick_int(void) {
    static const int v[] = { 0, 1, 2, 3, -1, -2, -3, -32766, 7, 100, 4096, 1 << 20, 0x7fffffff, -0x7fffffff - 1, 65535 };
    return v[rnd() % (sizeof v / sizeof v[0])];
}
static MPI_Count pick_count(void) {
    static const MPI_Count v[] = { 0, 1, 2, 5, -1, (MPI_Count)1 << 40, (MPI_Count)1 << 62, 0x7fffffff };
    return v[rnd() % (sizeof v / sizeof v[0])];
}
static MPI_Datatype types[8];
static MPI_Comm comms[6];
static MPI_Group groups[5];
static MPI_Op ops[5];
static char buf[1 << 16];
static void *ptr(void) { return rnd() % 5 == 0 ? NULL : buf; }

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    st = argc > 2 ? strtoull(argv[2], NULL, 10) : 0x2545F4914F6CDD1DULL;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Datatype freed; OK(MPI_Type_contiguous(2, MPI_INT, &freed)); MPI_Datatype freed_h = freed; OK(MPI_Type_free(&freed));
    MPI_Datatype uncommitted; OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &uncommitted));
    MPI_Datatype vec; OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec)); OK(MPI_Type_commit(&vec));
    types[0] = MPI_INT; types[1] = MPI_DOUBLE; types[2] = MPI_DATATYPE_NULL; types[3] = freed_h;
    types[4] = uncommitted; types[5] = vec; types[6] = (MPI_Datatype)0x7777777; types[7] = MPI_BYTE;
    MPI_Comm dup; OK(MPI_Comm_dup(MPI_COMM_SELF, &dup)); OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MPI_Comm gone; OK(MPI_Comm_dup(MPI_COMM_SELF, &gone)); MPI_Comm gone_h = gone; OK(MPI_Comm_free(&gone));
    comms[0] = MPI_COMM_SELF; comms[1] = MPI_COMM_WORLD; comms[2] = MPI_COMM_NULL; comms[3] = gone_h; comms[4] = dup; comms[5] = (MPI_Comm)0x1234567;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &groups[0])); groups[1] = MPI_GROUP_EMPTY; groups[2] = MPI_GROUP_NULL; groups[3] = (MPI_Group)0x999999; groups[4] = groups[0];
    ops[0] = MPI_SUM; ops[1] = MPI_OP_NULL; ops[2] = MPI_MAXLOC; ops[3] = (MPI_Op)0x4242; ops[4] = MPI_BAND;
    int calls = 0, errors = 0;
    for (int i = 0; i < iters; i++) {
        MPI_Datatype t = types[rnd() % 8], t2 = types[rnd() % 8];
        MPI_Comm c = comms[rnd() % 6];
        MPI_Group g = groups[rnd() % 5];
        MPI_Op op = ops[rnd() % 5];
        int n = pick_int(), r = pick_int(), tag = pick_int();
        /* counts that are valid stay inside the buffer (a program may not lie
         * about its memory); invalid ones (negative) go through as they are */
        int cnt = n > 8 ? 8 : n;
        int disp = r < 0 ? r : r % 9;
        int e = MPI_SUCCESS, out = 0;
        MPI_Request rq = MPI_REQUEST_NULL;
        MPI_Status stt;
        switch (rnd() % 24) {
        case 0: e = MPI_Send(ptr(), cnt, t, r, tag, c); break;
        case 1: e = MPI_Isend(ptr(), cnt, t, r % 2, tag, c, &rq); break;
        case 2: e = MPI_Irecv(ptr(), cnt, t, r, tag, c, &rq); break;
        case 3: e = MPI_Iprobe(r, tag, c, &out, &stt); break;
        case 4: e = MPI_Type_size(t, &out); break;
        case 5: { MPI_Datatype nt; e = MPI_Type_vector(n, r, tag, t, &nt); if (e == MPI_SUCCESS) MPI_Type_free(&nt); break; }
        case 6: { MPI_Datatype nt; e = MPI_Type_contiguous_c(pick_count(), t, &nt); if (e == MPI_SUCCESS) MPI_Type_free(&nt); break; }
        case 7: { int ranks[2] = { r, n }; MPI_Group ng; e = MPI_Group_incl(g, rnd() % 3, ranks, &ng); if (e == MPI_SUCCESS && ng != MPI_GROUP_EMPTY) MPI_Group_free(&ng); break; }
        case 8: e = MPI_Comm_size(c, &out); break;
        case 9: e = MPI_Bcast(ptr(), cnt, t, r, c); break;
        case 10: e = MPI_Allreduce(ptr(), buf + 32768, cnt, t, op, c); break;
        case 11: e = MPI_Reduce(ptr(), ptr(), cnt, t, op, r, c); break;
        case 12: { int cs[2] = { cnt, cnt }, ds[2] = { 0, disp }; e = MPI_Alltoallv(ptr(), cs, ds, t, buf + 32768, cs, ds, t2, c); break; }
        case 13: e = MPI_Get_count(&stt, t, &out); break;
        case 14: { char s[MPI_MAX_ERROR_STRING]; e = MPI_Error_string(n, s, &out); break; }
        case 15: e = MPI_Error_class(n, &out); break;
        case 16: { MPI_Comm nc; e = MPI_Comm_split(c, n, r, &nc); if (e == MPI_SUCCESS && nc != MPI_COMM_NULL) MPI_Comm_free(&nc); break; }
        case 17: { int pos = 0; e = MPI_Pack(ptr(), cnt, t, buf + 40000, rnd() % 2 ? 100 : (n > 1000 ? 1000 : n), &pos, c); break; }
        case 18: { MPI_Aint sz; e = MPI_Pack_external_size("external32", cnt, t, &sz); break; }
        case 19: { int dims[3] = { n, 0, r }; e = MPI_Dims_create(tag, rnd() % 4, dims); break; }
        case 20: { int d[2] = { 1, 1 }, p[2] = { 0, 1 }; MPI_Comm nc; e = MPI_Cart_create(c, rnd() % 3, d, p, n, &nc); if (e == MPI_SUCCESS && nc != MPI_COMM_NULL) MPI_Comm_free(&nc); break; }
        case 21: { MPI_Request pr; e = MPI_Psend_init(ptr(), n, pick_count(), t, r, tag, c, MPI_INFO_NULL, &pr); if (e == MPI_SUCCESS) MPI_Request_free(&pr); break; }
        case 22: { MPI_Request pr; int cs[2] = { cnt, cnt }; e = MPI_Reduce_scatter_init(ptr(), buf + 32768, cs, t, op, c, MPI_INFO_NULL, &pr); if (e == MPI_SUCCESS) { if (MPI_Start(&pr) == MPI_SUCCESS) MPI_Wait(&pr, MPI_STATUS_IGNORE); MPI_Request_free(&pr); } break; }
        case 23: e = MPI_Wait(rnd() % 2 ? &rq : NULL, &stt); break;
        }
        calls++;
        if (e != MPI_SUCCESS) {
            errors++;
            int cls; CHECK(MPI_Error_class(e, &cls) == MPI_SUCCESS);
        }
        /* requests that started: cancel receives, wait for all */
        if (rq != MPI_REQUEST_NULL) {
            MPI_Cancel(&rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        }
        /* drain any message a send left behind */
        int flag = 1;
        while (flag) {
            MPI_Status s2;
            if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, &s2) != MPI_SUCCESS) break;
            if (flag) MPI_Recv(buf + 50000, 15000, MPI_BYTE, s2.MPI_SOURCE, s2.MPI_TAG, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        }
    }
    MPI_Type_free(&uncommitted); MPI_Type_free(&vec); MPI_Comm_free(&dup); MPI_Group_free(&groups[0]);
    printf("fuzz: %d calls, %d errors, no crash\n", calls, errors);
    MPI_Finalize();
    return 0;
}

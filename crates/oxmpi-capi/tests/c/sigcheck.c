/* Type-signature checking (OXMPI_CHECK_SIGNATURES=1) of mixed types from C.
 *   sigcheck check    checking on (set before MPI_Init): mismatches are MPI_ERR_TYPE
 *                     and deliver nothing, prefixes and regroupings pass
 *   sigcheck          checking off: the same mismatches arrive as bytes
 *   sigcheck fatal    checking on, default error handler: a {int, double} message
 *                     into {double, int} ends the job with the error text
 * Rank 0 sends to rank 1 (to itself on one rank). */
#include <stddef.h>
#include "check.h"

struct id { int i; double d; };
struct di { double d; int i; };

static MPI_Datatype make_struct(MPI_Datatype first, MPI_Aint off1, MPI_Datatype second, MPI_Aint off2, MPI_Aint extent) {
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {off1, off2};
    MPI_Datatype types[2] = {first, second}, t, r;
    OK(MPI_Type_create_struct(2, bl, disp, types, &t));
    OK(MPI_Type_create_resized(t, 0, extent, &r));
    OK(MPI_Type_free(&t));
    OK(MPI_Type_commit(&r));
    return r;
}

/* Receives tag `tag` from `src` into `count` of `dt`; the error class (MPI_SUCCESS if none). */
static int recv_class(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Status *st) {
    int err = MPI_Recv(buf, count, dt, src, tag, MPI_COMM_WORLD, st), cls;
    OK(MPI_Error_class(err, &cls));
    return cls;
}

int main(int argc, char **argv) {
    int check = argc > 1 && (strcmp(argv[1], "check") == 0 || strcmp(argv[1], "fatal") == 0);
    int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
    if (check) setenv("OXMPI_CHECK_SIGNATURES", "1", 1);
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int src = 0, dst = size > 1 ? 1 : 0;
    MPI_Datatype id = make_struct(MPI_INT, offsetof(struct id, i), MPI_DOUBLE, offsetof(struct id, d), sizeof(struct id));
    MPI_Datatype di = make_struct(MPI_DOUBLE, offsetof(struct di, d), MPI_INT, offsetof(struct di, i), sizeof(struct di));
    MPI_Datatype c4;
    OK(MPI_Type_contiguous(4, MPI_INT, &c4));
    OK(MPI_Type_commit(&c4));

    if (fatal) {
        struct id s = {7, 2.5};
        struct di r;
        MPI_Request q = MPI_REQUEST_NULL;
        if (rank == src) OK(MPI_Isend(&s, 1, id, dst, 3, MPI_COMM_WORLD, &q));
        if (rank == dst) MPI_Recv(&r, 1, di, src, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Finalize();
        return 0;
    }

    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    enum { BIG = 20000 }; /* 240 KB of {int, double}: rendezvous */
    struct id *ids = malloc(BIG * sizeof *ids);
    struct id *rids = malloc(BIG * sizeof *rids);
    struct di *rdis = malloc(BIG * sizeof *rdis);
    CHECK(ids && rids && rdis);
    for (int k = 0; k < BIG; k++) { ids[k].i = k; ids[k].d = k + 0.5; }
    int ints[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MPI_Request reqs[8];
    int nreq = 0;
    if (rank == src) {
        OK(MPI_Isend(ids, 2, id, dst, 1, MPI_COMM_WORLD, &reqs[nreq++]));     /* {int,double}x2 into x4 */
        OK(MPI_Isend(ints, 1, c4, dst, 2, MPI_COMM_WORLD, &reqs[nreq++]));    /* contiguous(4,int) into int x4 */
        OK(MPI_Isend(ids, 1, id, dst, 3, MPI_COMM_WORLD, &reqs[nreq++]));     /* {int,double} into {double,int} */
        OK(MPI_Isend(ints, 3, MPI_INT, dst, 4, MPI_COMM_WORLD, &reqs[nreq++])); /* 3 ints into 2: truncation */
        OK(MPI_Isend(ids, 1, id, dst, 5, MPI_COMM_WORLD, &reqs[nreq++]));     /* into MPI_BYTE: anything goes */
        OK(MPI_Isend(ids, BIG, id, dst, 6, MPI_COMM_WORLD, &reqs[nreq++]));   /* big, mismatched */
        OK(MPI_Isend(ids, BIG, id, dst, 7, MPI_COMM_WORLD, &reqs[nreq++]));   /* big, matching */
        OK(MPI_Isend(ints, 3, MPI_INT, dst, 8, MPI_COMM_WORLD, &reqs[nreq++])); /* ints into a struct */
    }
    if (rank == dst) {
        MPI_Status st;
        int n;
        memset(rids, 0, 4 * sizeof *rids);
        CHECK(recv_class(rids, 4, id, src, 1, &st) == MPI_SUCCESS);
        OK(MPI_Get_count(&st, id, &n)); CHECK(n == 2);
        CHECK(rids[0].i == 0 && rids[0].d == 0.5 && rids[1].i == 1 && rids[1].d == 1.5);

        int four[4] = {0};
        CHECK(recv_class(four, 4, MPI_INT, src, 2, &st) == MPI_SUCCESS);
        OK(MPI_Get_count(&st, MPI_INT, &n)); CHECK(n == 4 && four[3] == 4);

        struct di r = {-1.0, -1};
        int cls = recv_class(&r, 1, di, src, 3, &st);
        if (check) CHECK(cls == MPI_ERR_TYPE && r.d == -1.0 && r.i == -1);
        else CHECK(cls == MPI_SUCCESS);

        int two[2];
        CHECK(recv_class(two, 2, MPI_INT, src, 4, &st) == MPI_ERR_TRUNCATE);

        unsigned char bytes[64];
        CHECK(recv_class(bytes, 64, MPI_BYTE, src, 5, &st) == MPI_SUCCESS);
        OK(MPI_Get_count(&st, MPI_BYTE, &n)); CHECK(n == 12);

        rdis[0].i = -1;
        cls = recv_class(rdis, BIG, di, src, 6, &st);
        if (check) CHECK(cls == MPI_ERR_TYPE && rdis[0].i == -1);
        else CHECK(cls == MPI_SUCCESS);

        CHECK(recv_class(rids, BIG, id, src, 7, &st) == MPI_SUCCESS);
        CHECK(rids[BIG - 1].i == BIG - 1 && rids[BIG - 1].d == BIG - 0.5);

        rids[0].i = -1;
        cls = recv_class(rids, 2, id, src, 8, &st);
        if (check) CHECK(cls == MPI_ERR_TYPE && rids[0].i == -1);
        else CHECK(cls == MPI_SUCCESS);
    }
    /* The senders' requests complete, mismatched or not. */
    OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    free(ids); free(rids); free(rdis);
    OK(MPI_Type_free(&id)); OK(MPI_Type_free(&di)); OK(MPI_Type_free(&c4));
    if (rank == 0) printf("sigcheck: all checks passed on %d ranks (checking %s)\n", size, check ? "on" : "off");
    OK(MPI_Finalize());
    return 0;
}

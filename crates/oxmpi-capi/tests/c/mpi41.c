/* The MPI-4.0/4.1/5.0 calls outside the big chapters, as a program uses them:
 * status accessors, MPI_Request_get_status_{any,all,some}, buffer flushes and
 * per-communicator buffers, communicators from groups with string tags,
 * Fortran 90 types, value-index pairs, info queries, handle/int converters,
 * the guided and unguided hardware splits. Any number of ranks. */
#include "check.h"

static int rank, size;

/* A returned error code is a code of its own; its class is what a program compares. */
static int eclass(int rc) { int c = rc; if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c); return c; }

static void status_accessors(void) {
    MPI_Status s;
    int v;
    OK(MPI_Status_set_source(&s, 7));
    OK(MPI_Status_set_tag(&s, 42));
    OK(MPI_Status_set_error(&s, MPI_ERR_TRUNCATE));
    OK(MPI_Status_get_source(&s, &v)); CHECK(v == 7 && s.MPI_SOURCE == 7);
    OK(MPI_Status_get_tag(&s, &v)); CHECK(v == 42 && s.MPI_TAG == 42);
    OK(MPI_Status_get_error(&s, &v)); CHECK(v == MPI_ERR_TRUNCATE);
    /* MPI_STATUS_IGNORE is no status to read. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(eclass(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v)) == MPI_ERR_ARG);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* Fortran 2008 statuses round-trip. */
    MPI_F08_status f08;
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_Status back;
    OK(MPI_Status_c2f08(&s, &f08));
    CHECK(f08.MPI_SOURCE == 7 && f08.MPI_TAG == 42);
    OK(MPI_Status_f082f(&f08, f));
    CHECK(f[MPI_F_SOURCE] == 7 && f[MPI_F_TAG] == 42);
    OK(MPI_Status_f2f08(f, &f08));
    OK(MPI_Status_f082c(&f08, &back));
    CHECK(back.MPI_SOURCE == 7 && back.MPI_TAG == 42 && back.MPI_ERROR == MPI_ERR_TRUNCATE);
}

static void get_status_families(void) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int buf = -1, msg = 100 + rank, idx, flag, outcount, indices[3];
    MPI_Status st, sts[3];
    /* Only null requests: flag true, index MPI_UNDEFINED, the empty status. */
    OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
    OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED);
    OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag && sts[2].MPI_TAG == MPI_ANY_TAG && sts[2].MPI_ERROR == MPI_SUCCESS);
    /* A receive nobody has sent to yet is not complete. */
    OK(MPI_Irecv(&buf, 1, MPI_INT, from, 5, MPI_COMM_WORLD, &reqs[1]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag && idx == MPI_UNDEFINED);
    OK(MPI_Request_get_status_all(3, reqs, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag);
    OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == 0);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Send(&msg, 1, MPI_INT, to, 5, MPI_COMM_WORLD));
    do {
        OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
    } while (!flag);
    CHECK(idx == 1 && st.MPI_SOURCE == from && st.MPI_TAG == 5);
    /* The queries leave the request alone: all and some see it too, then Wait frees it. */
    OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag && sts[1].MPI_SOURCE == from && sts[0].MPI_SOURCE == MPI_ANY_SOURCE);
    OK(MPI_Request_get_status_some(3, reqs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 1 && sts[0].MPI_TAG == 5);
    CHECK(reqs[1] != MPI_REQUEST_NULL);
    OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
    CHECK(reqs[1] == MPI_REQUEST_NULL && buf == 100 + from);
}

static void buffers(void) {
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int n = 1000, i, sz;
    int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
    for (i = 0; i < n; i++) out[i] = rank * 10000 + i;
    int bufsize = n * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *pbuf = malloc(bufsize), *cbuf = malloc(bufsize);
    void *addr;
    MPI_Request r, fr;
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));

    /* The process's buffer: MPI_Buffer_flush waits for the buffered message, the buffer stays. */
    OK(MPI_Buffer_attach(pbuf, bufsize));
    OK(MPI_Irecv(in, n, MPI_INT, from, 1, MPI_COMM_WORLD, &r));
    OK(MPI_Bsend(out, n, MPI_INT, to, 1, MPI_COMM_WORLD));
    OK(MPI_Buffer_flush());
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(in[n - 1] == from * 10000 + n - 1);
    /* The whole buffer is free again after the flush: the same message fits once more. */
    OK(MPI_Irecv(in, n, MPI_INT, from, 2, MPI_COMM_WORLD, &r));
    OK(MPI_Bsend(out, n, MPI_INT, to, 2, MPI_COMM_WORLD));
    OK(MPI_Buffer_iflush(&fr));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK(fr == MPI_REQUEST_NULL);
    OK(MPI_Buffer_detach(&addr, &sz));
    CHECK(addr == pbuf && sz == bufsize);
    OK(MPI_Buffer_flush()); /* nothing attached: nothing to wait for */

    /* A communicator's own buffer serves its buffered sends; other communicators have none. */
    OK(MPI_Comm_attach_buffer(dup, cbuf, bufsize));
    CHECK(eclass(MPI_Comm_attach_buffer(dup, cbuf, bufsize)) == MPI_ERR_BUFFER);
    int e = MPI_Bsend(out, 1, MPI_INT, to, 3, MPI_COMM_WORLD);
    int cls;
    OK(MPI_Error_class(e, &cls));
    CHECK(cls == MPI_ERR_BUFFER);
    OK(MPI_Irecv(in, n, MPI_INT, from, 4, dup, &r));
    OK(MPI_Bsend(out, n, MPI_INT, to, 4, dup));
    OK(MPI_Comm_flush_buffer(dup));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Irecv(in, n, MPI_INT, from, 5, dup, &r));
    OK(MPI_Bsend(out, n, MPI_INT, to, 5, dup));
    OK(MPI_Comm_iflush_buffer(dup, &fr));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK(in[0] == from * 10000);
    OK(MPI_Comm_detach_buffer(dup, &addr, &sz));
    CHECK(addr == cbuf && sz == bufsize);
    CHECK(eclass(MPI_Comm_detach_buffer(dup, &addr, &sz)) == MPI_ERR_BUFFER);
    /* Large-count forms, and MPI_BUFFER_AUTOMATIC (no size limit). */
    MPI_Count csz;
    OK(MPI_Comm_attach_buffer_c(dup, cbuf, (MPI_Count)bufsize));
    OK(MPI_Comm_detach_buffer_c(dup, &addr, &csz));
    CHECK(addr == cbuf && csz == bufsize);
    OK(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    for (i = 0; i < 4; i++) OK(MPI_Bsend(out, n, MPI_INT, to, 6, dup));
    for (i = 0; i < 4; i++) OK(MPI_Recv(in, n, MPI_INT, from, 6, dup, MPI_STATUS_IGNORE));
    OK(MPI_Comm_detach_buffer(dup, &addr, &sz));
    CHECK(addr == MPI_BUFFER_AUTOMATIC);
    /* Freeing a communicator detaches its buffer. */
    OK(MPI_Comm_attach_buffer(dup, cbuf, bufsize));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(out); free(in); free(pbuf); free(cbuf);
}

static void from_groups(void) {
    MPI_Group world, mine, other;
    int i, n = 0, ranks[64], oranks[64], on = 0;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (i = 0; i < size; i++) {
        if (i % 2 == rank % 2) ranks[n++] = i; else oranks[on++] = i;
    }
    OK(MPI_Group_incl(world, n, ranks, &mine));
    MPI_Comm c;
    /* Evens and odds create at the same time, each with its own string tag. */
    OK(MPI_Comm_create_from_group(mine, rank % 2 ? "org.oxmpi.test.odds" : "org.oxmpi.test.evens", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int csize, crank, sum = 0;
    OK(MPI_Comm_size(c, &csize));
    OK(MPI_Comm_rank(c, &crank));
    CHECK(csize == n && crank == rank / 2);
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    int want = 0;
    for (i = 0; i < n; i++) want += ranks[i];
    CHECK(sum == want);
    OK(MPI_Comm_free(&c));
    /* A group without the caller is an error. */
    if (on > 0) {
        OK(MPI_Group_incl(world, on, oranks, &other));
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        CHECK(MPI_Comm_create_from_group(other, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) != MPI_SUCCESS);
        CHECK(c == MPI_COMM_NULL);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        /* Evens and odds join in an intercommunicator. */
        MPI_Comm ic;
        OK(MPI_Intercomm_create_from_groups(mine, 0, other, 0, "org.oxmpi.test.inter", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &ic));
        int flag, rsize, got = -1;
        OK(MPI_Comm_test_inter(ic, &flag));
        OK(MPI_Comm_remote_size(ic, &rsize));
        CHECK(flag && rsize == on);
        /* Local rank 0 of each side tells the other side's rank 0 its world rank. */
        if (rank / 2 == 0) {
            OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 9, &got, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE));
            CHECK(got == (rank == 0 ? 1 : 0));
        }
        OK(MPI_Comm_free(&ic));
        OK(MPI_Group_free(&other));
    }
    OK(MPI_Group_free(&mine));
    OK(MPI_Group_free(&world));
}

static void f90_and_value_index(void) {
    MPI_Datatype t, t2;
    int sz, ni, na, nd, comb, ints[2];
    OK(MPI_Type_create_f90_integer(9, &t));
    OK(MPI_Type_size(t, &sz)); CHECK(sz == 4);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0);
    OK(MPI_Type_get_contents(t, 1, 0, 0, ints, NULL, NULL));
    CHECK(ints[0] == 9);
    OK(MPI_Type_create_f90_integer(9, &t2));
    CHECK(t2 == t); /* the same arguments give the same type */
    OK(MPI_Type_create_f90_real(15, 300, &t));
    OK(MPI_Type_size(t, &sz)); CHECK(sz == 8);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2);
    OK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    CHECK(ints[0] == 15 && ints[1] == 300);
    /* An F90 real travels and reduces as the real it is. */
    double x = rank + 0.5, y = 0;
    OK(MPI_Allreduce(&x, &y, 1, t, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == size * (size - 1) / 2.0 + size * 0.5);
    OK(MPI_Type_create_f90_complex(6, 30, &t));
    OK(MPI_Type_size(t, &sz)); CHECK(sz == 8);
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_F90_COMPLEX);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK(eclass(MPI_Type_create_f90_real(40, 5000, &t)) == MPI_ERR_ARG);
    CHECK(eclass(MPI_Type_create_f90_integer(40, &t)) == MPI_ERR_ARG);
    /* F90 types are predefined: never freed. */
    OK(MPI_Type_create_f90_integer(4, &t));
    CHECK(eclass(MPI_Type_free(&t)) == MPI_ERR_TYPE);

    /* Value-index pairs: the predefined pair when there is one ... */
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t)); CHECK(t == MPI_DOUBLE_INT);
    OK(MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &t)); CHECK(t == MPI_SHORT_INT);
    OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &t)); CHECK(t == MPI_2INT);
    OK(MPI_Type_get_value_index(MPI_FLOAT, MPI_INT, &t)); CHECK(t == MPI_FLOAT_INT);
    OK(MPI_Type_get_value_index(MPI_LONG_DOUBLE, MPI_INT, &t)); CHECK(t == MPI_LONG_DOUBLE_INT);
    OK(MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, &t)); CHECK(t == MPI_2DOUBLE_PRECISION);
    /* ... and MPI_DATATYPE_NULL when there is none (as MPICH). */
    OK(MPI_Type_get_value_index(MPI_INT, MPI_SHORT, &t)); CHECK(t == MPI_DATATYPE_NULL);
    OK(MPI_Type_get_value_index(MPI_INT, MPI_FLOAT, &t)); CHECK(t == MPI_DATATYPE_NULL);
    CHECK(eclass(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t)) == MPI_ERR_TYPE);
    CHECK(eclass(MPI_Type_get_value_index(MPI_INT, MPI_DATATYPE_NULL, &t)) == MPI_ERR_TYPE);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static int info_get(MPI_Info info, const char *key, char *val) {
    int buflen = MPI_MAX_INFO_VAL, flag = 0;
    OK(MPI_Info_get_string(info, key, &buflen, val, &flag));
    return flag;
}

static void infos(void) {
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL];
    OK(MPI_Get_hw_resource_info(&info));
    CHECK(info_get(info, "mpi_shared_memory", val));
    OK(MPI_Info_free(&info));
    OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info_get(info, "mpi_integer_size", val) && strcmp(val, "4") == 0);
    CHECK(info_get(info, "mpi_double_precision_size", val) && strcmp(val, "8") == 0);
    OK(MPI_Info_free(&info));
}

static void handle_ints(void) {
    MPI_Comm dup;
    MPI_Group g;
    MPI_Info info;
    MPI_Request r;
    int x = 0;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_group(dup, &g));
    OK(MPI_Info_create(&info));
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, dup, &r));
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(dup)) == dup);
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_NULL)) == MPI_COMM_NULL);
    CHECK(MPI_Group_fromint(MPI_Group_toint(g)) == g);
    CHECK(MPI_Info_fromint(MPI_Info_toint(info)) == info);
    CHECK(MPI_Request_fromint(MPI_Request_toint(r)) == r);
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE);
    CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_MAXLOC)) == MPI_MAXLOC);
    CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN);
    CHECK(MPI_Message_fromint(MPI_Message_toint(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC);
    CHECK(MPI_Session_fromint(MPI_Session_toint(MPI_SESSION_NULL)) == MPI_SESSION_NULL);
    CHECK(MPI_Win_fromint(MPI_Win_toint(MPI_WIN_NULL)) == MPI_WIN_NULL);
    CHECK(MPI_File_fromint(MPI_File_toint(MPI_FILE_NULL)) == MPI_FILE_NULL);
    /* Predefined handles are their standard ABI values. */
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == (int)(intptr_t)MPI_COMM_WORLD);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Info_free(&info));
    OK(MPI_Group_free(&g));
    OK(MPI_Comm_free(&dup));
}

static void hw_splits(void) {
    MPI_Comm shared, c;
    MPI_Info info;
    int ssize, csize, flag;
    char val[MPI_MAX_INFO_VAL];
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
    OK(MPI_Comm_size(shared, &ssize));
    /* Guided without a resource (or an unknown one): no communicator. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL);
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "@no-such-thing@"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c));
    CHECK(c == MPI_COMM_NULL);
    /* Shared memory: the same ranks as MPI_COMM_TYPE_SHARED, also by hwloc's name. */
    const char *same[] = {"mpi_shared_memory", "hwloc://Machine"};
    int types[] = {MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_RESOURCE_GUIDED};
    for (int t = 0; t < 2; t++) {
        for (int k = 0; k < 2; k++) {
            OK(MPI_Info_set(info, "mpi_hw_resource_type", same[k]));
            OK(MPI_Comm_split_type(MPI_COMM_WORLD, types[t], rank, info, &c));
            CHECK(c != MPI_COMM_NULL);
            OK(MPI_Comm_size(c, &csize));
            CHECK(csize == ssize);
            OK(MPI_Comm_free(&c));
        }
    }
    /* Only the ranks that ask get one; the others pass MPI_UNDEFINED. */
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, rank == 0 ? MPI_COMM_TYPE_HW_GUIDED : MPI_UNDEFINED, 0, info, &c));
    if (rank == 0) {
        OK(MPI_Comm_size(c, &csize)); CHECK(csize == 1);
        OK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL);
    }
    /* The info argument is left as it was. */
    CHECK(info_get(info, "mpi_hw_resource_type", val) && strcmp(val, "mpi_shared_memory") == 0);
    /* Packages and NUMA nodes: a communicator when this rank is bound inside one. */
    OK(MPI_Info_set(info, "mpi_hw_resource_type", "hwloc://NUMANode"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c));
    if (c != MPI_COMM_NULL) {
        OK(MPI_Comm_size(c, &csize)); CHECK(csize <= ssize);
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Info_free(&info));
    /* Unguided: a strict subset of the parent naming its resource, or none. */
    OK(MPI_Comm_split_type(shared, MPI_COMM_TYPE_HW_UNGUIDED, rank, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        MPI_Info used;
        OK(MPI_Comm_size(c, &csize)); CHECK(csize < ssize);
        OK(MPI_Comm_get_info(c, &used));
        flag = info_get(used, "mpi_hw_resource_type", val);
        CHECK(flag && strncmp(val, "hwloc://", 8) == 0);
        OK(MPI_Info_free(&used));
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Comm_free(&shared));
    /* On an intercommunicator each side splits its local group. */
    if (size > 1) {
        MPI_Comm half, ic, s;
        int lsize;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 77, &ic));
        OK(MPI_Comm_size(half, &lsize));
        OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &s));
        CHECK(s != MPI_COMM_NULL);
        OK(MPI_Comm_free(&s));
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
        OK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_HW_GUIDED, rank, info, &s));
        CHECK(s != MPI_COMM_NULL);
        OK(MPI_Comm_free(&s));
        OK(MPI_Info_free(&info));
        OK(MPI_Comm_free(&ic));
        OK(MPI_Comm_free(&half));
    }
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    status_accessors();
    get_status_families();
    buffers();
    from_groups();
    f90_and_value_index();
    infos();
    handle_ints();
    hw_splits();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("mpi41: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

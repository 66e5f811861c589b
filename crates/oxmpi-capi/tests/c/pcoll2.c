/* Persistent collectives: the count/displacement arrays are taken at _init
 * (the caller overwrites and frees them afterwards); requests match in the
 * order they were initialized, not started (rank 0 starts its bcast first,
 * the others their barrier first); garbage counts give an MPI error, never an
 * abort. */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm w; OK(MPI_Comm_dup(MPI_COMM_WORLD, &w));

    /* 1. arrays overwritten and freed after init */
    int *rc = malloc(sizeof(int) * size), *sc = malloc(sizeof(int) * size);
    int *sd = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
    int *sbuf = malloc(sizeof(int) * 4 * size), *rbuf = malloc(sizeof(int) * 4 * size);
    for (int j = 0; j < size; j++) { sc[j] = 2; rc[j] = 2; sd[j] = 2 * j; rd[j] = 2 * j; }
    MPI_Request rq[4];
    OK(MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, w, MPI_INFO_NULL, &rq[0]));
    int *rsc = malloc(sizeof(int) * size);
    for (int j = 0; j < size; j++) rsc[j] = 2;
    int *rs_in = malloc(sizeof(int) * 2 * size), rs_out[2];
    OK(MPI_Reduce_scatter_init(rs_in, rs_out, rsc, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq[1]));
    int *gc = malloc(sizeof(int) * size), *gd = malloc(sizeof(int) * size);
    for (int j = 0; j < size; j++) { gc[j] = 1; gd[j] = size - 1 - j; }
    int gv[64], mine = rank;
    OK(MPI_Gatherv_init(&mine, 1, MPI_INT, gv, gc, gd, MPI_INT, 0, w, MPI_INFO_NULL, &rq[2]));
    int *ac = malloc(sizeof(int) * size), *ad = malloc(sizeof(int) * size), av[64];
    for (int j = 0; j < size; j++) { ac[j] = 1; ad[j] = j; }
    OK(MPI_Allgatherv_init(&mine, 1, MPI_INT, av, ac, ad, MPI_INT, w, MPI_INFO_NULL, &rq[3]));
    /* the caller reuses its arrays: garbage in them from now on */
    for (int j = 0; j < size; j++) {
        sc[j] = rc[j] = rsc[j] = gc[j] = ac[j] = 0x7ffffff0;
        sd[j] = rd[j] = gd[j] = ad[j] = -123456;
    }
    free(sc); free(rc); free(sd); free(rd); free(rsc); free(gc); free(gd); free(ac); free(ad);
    for (int it = 0; it < 3; it++) {
        for (int j = 0; j < size; j++) { sbuf[2 * j] = 100 * rank + j + it; sbuf[2 * j + 1] = -rank - it; }
        for (int j = 0; j < 2 * size; j++) rs_in[j] = j + rank + it;
        OK(MPI_Startall(4, rq));
        OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        for (int j = 0; j < size; j++) CHECK(rbuf[2 * j] == 100 * j + rank + it && rbuf[2 * j + 1] == -j - it);
        for (int k = 0; k < 2; k++) {
            int want = 0;
            for (int r = 0; r < size; r++) want += 2 * rank + k + r + it;
            CHECK(rs_out[k] == want);
        }
        if (rank == 0) for (int j = 0; j < size; j++) CHECK(gv[size - 1 - j] == j);
        for (int j = 0; j < size; j++) CHECK(av[j] == j);
    }
    for (int i = 0; i < 4; i++) OK(MPI_Request_free(&rq[i]));
    free(sbuf); free(rbuf); free(rs_in);

    /* 2. matched in init order, started in different orders */
    for (int it = 0; it < 20; it++) {
        int v = rank == 0 ? 40 + it : -1, s = rank, tot = -1;
        MPI_Request b, bar, red;
        OK(MPI_Bcast_init(&v, 1, MPI_INT, 0, w, MPI_INFO_NULL, &b));
        OK(MPI_Barrier_init(w, MPI_INFO_NULL, &bar));
        OK(MPI_Allreduce_init(&s, &tot, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &red));
        if (rank == 0) { OK(MPI_Start(&b)); OK(MPI_Start(&red)); OK(MPI_Start(&bar)); }
        else if (rank % 2) { OK(MPI_Start(&bar)); OK(MPI_Start(&b)); OK(MPI_Start(&red)); }
        else { OK(MPI_Start(&red)); OK(MPI_Start(&bar)); OK(MPI_Start(&b)); }
        /* a blocking collective in between takes the next tag, after all three */
        int x = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, w)); CHECK(x == size);
        MPI_Request all[3] = { red, b, bar };
        OK(MPI_Waitall(3, all, MPI_STATUSES_IGNORE));
        CHECK(v == 40 + it && tot == size * (size - 1) / 2);
        OK(MPI_Request_free(&all[0])); OK(MPI_Request_free(&all[1])); OK(MPI_Request_free(&all[2]));
    }

    /* 3. garbage counts: an MPI error, not an abort */
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    double d[4] = { 0, 0, 0, 0 };
    MPI_Count huge = (MPI_Count)1 << 45;
    int err = MPI_Reduce_scatter_c(d, d + 2, &huge, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    CHECK(err != MPI_SUCCESS);
    int cls; OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_NO_MEM || cls == MPI_ERR_COUNT || cls == MPI_ERR_BUFFER || cls == MPI_ERR_ARG);
    MPI_Request pr = MPI_REQUEST_NULL;
    /* oxmpi plans the schedule at init, so the error comes from init; an MPI
     * that reads the counts at init and fails at the start is right too */
    err = MPI_Reduce_scatter_init_c(d, d + 2, &huge, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF, MPI_INFO_NULL, &pr);
    if (err == MPI_SUCCESS) {
        huge = 1; /* the copy taken at init stays huge */
        err = MPI_Start(&pr);
        if (err == MPI_SUCCESS) err = MPI_Wait(&pr, MPI_STATUS_IGNORE);
        MPI_Request_free(&pr);
    } else {
        char msg[MPI_MAX_ERROR_STRING]; int len;
        OK(MPI_Error_string(err, msg, &len));
        CHECK(strstr(msg, "MPI_Reduce_scatter_init_c") != NULL);
    }
    CHECK(err != MPI_SUCCESS);
    OK(MPI_Error_class(err, &cls));
    CHECK(cls == MPI_ERR_NO_MEM || cls == MPI_ERR_COUNT || cls == MPI_ERR_BUFFER || cls == MPI_ERR_ARG);
    int negc = -5;
    err = MPI_Reduce_scatter(d, d + 2, &negc, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    CHECK(err != MPI_SUCCESS);

    OK(MPI_Comm_free(&w));
    if (rank == 0) printf("pcoll2: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

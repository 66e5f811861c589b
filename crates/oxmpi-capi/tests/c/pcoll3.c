/* Persistent collectives planned once at _init, run again at every MPI_Start:
 * - neighbourhood alltoallv/alltoallw/allgatherv on a periodic ring, arrays
 *   (counts, displacements, datatypes) overwritten and freed after init;
 * - alltoallw and allreduce over non-contiguous (vector) datatypes, freed
 *   after init, so every run packs and unpacks again;
 * - intercommunicator bcast/allreduce/allgather/alltoall (2+ ranks);
 * - all of them started several times with the data changed between runs,
 *   in rank-dependent orders (they match in init order), a blocking
 *   collective in between;
 * - errors of the planning named after the _init call (bad root, bad info),
 *   and MPI_Start of an active request refused. */
#include "check.h"

#define RUNS 5

static int errclass(int err) { int c; MPI_Error_class(err, &c); return c; }

static int names(int err, const char *call) {
    char msg[MPI_MAX_ERROR_STRING]; int len;
    MPI_Error_string(err, msg, &len);
    return strstr(msg, call) != NULL;
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* ---- 1. neighbourhood collectives on a periodic ring ---- */
    MPI_Comm ring;
    int dims[1] = { size }, periods[1] = { 1 };
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* neighbours in order: left (source 0 / dest 0), right (source 1 / dest 1) */
    int *nc = malloc(2 * sizeof(int)), *nd = malloc(2 * sizeof(int));
    int *rcv = malloc(2 * sizeof(int)), *rdv = malloc(2 * sizeof(int));
    MPI_Aint *ndw = malloc(2 * sizeof(MPI_Aint)), *rdw = malloc(2 * sizeof(MPI_Aint));
    MPI_Datatype *nt = malloc(2 * sizeof(MPI_Datatype)), *rt = malloc(2 * sizeof(MPI_Datatype));
    int nsend[4], nrecv[4], wsend[4], wrecv[4], agsend[2], agrecv[6];
    /* alltoallv: 2 ints to the left, 1 to the right; receive 1 from the left
     * (what it sends right) at [3], 2 from the right at [0..1] */
    nc[0] = 2; nc[1] = 1; nd[0] = 0; nd[1] = 2;
    rcv[0] = 1; rcv[1] = 2; rdv[0] = 3; rdv[1] = 0;
    MPI_Request nb[3];
    OK(MPI_Neighbor_alltoallv_init(nsend, nc, nd, MPI_INT, nrecv, rcv, rdv, MPI_INT, ring, MPI_INFO_NULL, &nb[0]));
    /* alltoallw: the same shape with byte displacements */
    nc[0] = 2; nc[1] = 1; ndw[0] = 0; ndw[1] = 2 * sizeof(int); nt[0] = nt[1] = MPI_INT;
    rcv[0] = 1; rcv[1] = 2; rdw[0] = 3 * sizeof(int); rdw[1] = 0; rt[0] = rt[1] = MPI_INT;
    OK(MPI_Neighbor_alltoallw_init(wsend, nc, ndw, nt, wrecv, rcv, rdw, rt, ring, MPI_INFO_NULL, &nb[1]));
    /* allgatherv: 2 ints from each neighbour, the right one's first, a gap between */
    rcv[0] = 2; rcv[1] = 2; rdv[0] = 4; rdv[1] = 0;
    OK(MPI_Neighbor_allgatherv_init(agsend, 2, MPI_INT, agrecv, rcv, rdv, MPI_INT, ring, MPI_INFO_NULL, &nb[2]));
    /* the caller reuses its arrays at once: garbage from now on, then freed */
    nc[0] = nc[1] = rcv[0] = rcv[1] = 0x7fffffff; nd[0] = nd[1] = rdv[0] = rdv[1] = -77;
    ndw[0] = ndw[1] = rdw[0] = rdw[1] = -1000; nt[0] = nt[1] = rt[0] = rt[1] = MPI_DATATYPE_NULL;
    free(nc); free(nd); free(rcv); free(rdv); free(ndw); free(rdw); free(nt); free(rt);
    for (int it = 0; it < RUNS; it++) {
        for (int k = 0; k < 3; k++) { nsend[k] = 1000 * rank + 10 * it + k; wsend[k] = -nsend[k]; }
        agsend[0] = rank + it; agsend[1] = -rank - it;
        for (int k = 0; k < 4; k++) nrecv[k] = wrecv[k] = -1;
        for (int k = 0; k < 6; k++) agrecv[k] = -1;
        int first = (rank + it) % 3;
        for (int k = 0; k < 3; k++) OK(MPI_Start(&nb[(first + k) % 3]));
        OK(MPI_Waitall(3, nb, MPI_STATUSES_IGNORE));
        /* from the right: its 2 ints for its left; from the left: its 1 int for its right */
        int r0 = 1000 * right + 10 * it, l2 = 1000 * left + 10 * it + 2;
        CHECK(nrecv[0] == r0 && nrecv[1] == r0 + 1 && nrecv[3] == l2);
        CHECK(wrecv[0] == -r0 && wrecv[1] == -(r0 + 1) && wrecv[3] == -l2);
        CHECK(agrecv[0] == right + it && agrecv[1] == -right - it);
        CHECK(agrecv[4] == left + it && agrecv[5] == -left - it);
        CHECK(agrecv[2] == -1 && agrecv[3] == -1);
    }
    for (int k = 0; k < 3; k++) OK(MPI_Request_free(&nb[k]));

    /* ---- 2. non-contiguous datatypes, freed after init ---- */
    MPI_Datatype every2; /* 3 ints, every other one */
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &every2));
    OK(MPI_Type_commit(&every2));
    int *a2s = malloc(sizeof(int) * 6 * size), *a2r = malloc(sizeof(int) * 6 * size);
    int *wc = malloc(sizeof(int) * size), *wd = malloc(sizeof(int) * size);
    MPI_Datatype *wt = malloc(sizeof(MPI_Datatype) * size);
    for (int j = 0; j < size; j++) { wc[j] = 1; wd[j] = 6 * j * sizeof(int); wt[j] = every2; }
    MPI_Request vr[2];
    OK(MPI_Alltoallw_init(a2s, wc, wd, wt, a2r, wc, wd, wt, MPI_COMM_WORLD, MPI_INFO_NULL, &vr[0]));
    int red_in[6], red_out[6];
    OK(MPI_Allreduce_init(red_in, red_out, 1, every2, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &vr[1]));
    for (int j = 0; j < size; j++) { wc[j] = -3; wd[j] = 1 << 30; wt[j] = MPI_DATATYPE_NULL; }
    free(wc); free(wd); free(wt);
    OK(MPI_Type_free(&every2));
    for (int it = 0; it < RUNS; it++) {
        for (int j = 0; j < 6 * size; j++) { a2s[j] = 100000 * it + 100 * rank + j; a2r[j] = -1; }
        for (int k = 0; k < 6; k++) { red_in[k] = k * (rank + 1) + it; red_out[k] = -9; }
        if (rank % 2) { OK(MPI_Start(&vr[1])); OK(MPI_Start(&vr[0])); }
        else { OK(MPI_Start(&vr[0])); OK(MPI_Start(&vr[1])); }
        OK(MPI_Waitall(2, vr, MPI_STATUSES_IGNORE));
        for (int j = 0; j < size; j++)
            for (int k = 0; k < 6; k++) {
                int want = k % 2 ? -1 : 100000 * it + 100 * j + 6 * rank + k;
                CHECK(a2r[6 * j + k] == want);
            }
        for (int k = 0; k < 6; k++) {
            int want = -9;
            if (k % 2 == 0) { want = 0; for (int r = 0; r < size; r++) want += k * (r + 1) + it; }
            CHECK(red_out[k] == want);
        }
    }
    OK(MPI_Request_free(&vr[0])); OK(MPI_Request_free(&vr[1]));
    free(a2s); free(a2r);

    /* ---- 3. intercommunicators ---- */
    if (size >= 2) {
        int low = rank < size / 2, nlow = size / 2, nhigh = size - nlow;
        MPI_Comm half, inter;
        OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
        int lr; OK(MPI_Comm_rank(half, &lr));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? nlow : 0, 7, &inter));
        int rsize = low ? nhigh : nlow;
        /* bcast from the low group's rank 0 to the high group */
        int bval[2] = { -1, -1 }, root = low ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int ain = 0, aout = -1;
        int *gin = malloc(sizeof(int)), *gout = malloc(sizeof(int) * rsize);
        int *tin = malloc(sizeof(int) * rsize), *tout = malloc(sizeof(int) * rsize);
        MPI_Request ir[4];
        OK(MPI_Bcast_init(bval, 2, MPI_INT, root, inter, MPI_INFO_NULL, &ir[0]));
        OK(MPI_Allreduce_init(&ain, &aout, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &ir[1]));
        OK(MPI_Allgather_init(gin, 1, MPI_INT, gout, 1, MPI_INT, inter, MPI_INFO_NULL, &ir[2]));
        OK(MPI_Alltoall_init(tin, 1, MPI_INT, tout, 1, MPI_INT, inter, MPI_INFO_NULL, &ir[3]));
        for (int it = 0; it < RUNS; it++) {
            if (root == MPI_ROOT) { bval[0] = 50 + it; bval[1] = -50 - it; }
            ain = rank + it;
            gin[0] = 10 * rank + it;
            for (int j = 0; j < rsize; j++) { tin[j] = 1000 * rank + 10 * j + it; tout[j] = -1; gout[j] = -1; }
            for (int k = 0; k < 4; k++) OK(MPI_Start(&ir[low ? k : 3 - k]));
            int x = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); CHECK(x == size);
            OK(MPI_Waitall(4, ir, MPI_STATUSES_IGNORE));
            if (!low) CHECK(bval[0] == 50 + it && bval[1] == -50 - it);
            /* allreduce over an intercommunicator: the sum of the remote group */
            int want = 0, base = low ? nlow : 0;
            for (int j = 0; j < rsize; j++) want += base + j + it;
            CHECK(aout == want);
            for (int j = 0; j < rsize; j++) {
                CHECK(gout[j] == 10 * (base + j) + it);
                CHECK(tout[j] == 1000 * (base + j) + 10 * lr + it);
            }
        }
        for (int k = 0; k < 4; k++) OK(MPI_Request_free(&ir[k]));
        free(gin); free(gout); free(tin); free(tout);
        OK(MPI_Comm_free(&inter));
        OK(MPI_Comm_free(&half));
    }

    /* ---- 4. errors at init name the _init call; a second start is refused ---- */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request bad = MPI_REQUEST_NULL;
    int v = 0;
    int err = MPI_Bcast_init(&v, 1, MPI_INT, size + 3, MPI_COMM_WORLD, MPI_INFO_NULL, &bad);
    CHECK(err != MPI_SUCCESS && errclass(err) == MPI_ERR_ROOT && names(err, "MPI_Bcast_init"));
    err = MPI_Allreduce_init(&v, &v + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, (MPI_Info)(intptr_t)0x7777, &bad);
    CHECK(err != MPI_SUCCESS && errclass(err) == MPI_ERR_INFO);
    int *bigc = malloc(sizeof(int) * size), *bigd = malloc(sizeof(int) * size);
    for (int j = 0; j < size; j++) { bigc[j] = -1; bigd[j] = 0; }
    err = MPI_Allgatherv_init(&v, 1, MPI_INT, &v, bigc, bigd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &bad);
    CHECK(err != MPI_SUCCESS && errclass(err) == MPI_ERR_COUNT && names(err, "MPI_Allgatherv_init"));
    free(bigc); free(bigd);
    int s1 = rank, s2 = -1;
    MPI_Request pr;
    OK(MPI_Allreduce_init(&s1, &s2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    OK(MPI_Start(&pr));
    err = MPI_Start(&pr);
    CHECK(err != MPI_SUCCESS && errclass(err) == MPI_ERR_REQUEST);
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    CHECK(s2 == size - 1);
    /* inactive again: a wait returns at once, a new start runs again */
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    s1 = -rank; OK(MPI_Start(&pr)); OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    CHECK(s2 == 0);
    OK(MPI_Request_free(&pr));

    OK(MPI_Comm_free(&ring));
    if (rank == 0) printf("pcoll3: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

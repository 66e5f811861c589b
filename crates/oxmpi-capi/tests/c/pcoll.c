/* MPI-4 persistent collectives: each operation initialized once, started
 * several times with new data (MPI_Start and MPI_Startall), completed by the
 * wait/test family, mixed with blocking collectives on the same communicator,
 * freed with MPI_Request_free. */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size, flag;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm w = MPI_COMM_WORLD;
    int n = size;
    int *sb = calloc(4 * n, sizeof(int));
    int *cnt = calloc(n, sizeof(int)), *dsp = calloc(n, sizeof(int));
    for (int i = 0; i < n; i++) { cnt[i] = 1; dsp[i] = i; }
    int v, s, one;
    MPI_Request rq[8];

    /* barrier, bcast, allreduce, reduce, scan, exscan */
    OK(MPI_Barrier_init(w, MPI_INFO_NULL, &rq[0]));
    OK(MPI_Bcast_init(&v, 1, MPI_INT, n - 1, w, MPI_INFO_NULL, &rq[1]));
    OK(MPI_Allreduce_init(&one, &s, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq[2]));
    int red = -1, sc = -1, ex = -1;
    OK(MPI_Reduce_init(&one, &red, 1, MPI_INT, MPI_MAX, 0, w, MPI_INFO_NULL, &rq[3]));
    OK(MPI_Scan_init(&one, &sc, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq[4]));
    OK(MPI_Exscan_init(&one, &ex, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq[5]));
    /* Inactive: waiting returns at once with an empty status. */
    MPI_Status st;
    OK(MPI_Wait(&rq[1], &st));
    CHECK(rq[1] != MPI_REQUEST_NULL && st.MPI_TAG == MPI_ANY_TAG && st.MPI_SOURCE == MPI_ANY_SOURCE);
    for (int it = 0; it < 4; it++) {
        v = rank == n - 1 ? 100 + it : -1;
        one = rank + it;
        OK(MPI_Start(&rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        CHECK(rq[0] != MPI_REQUEST_NULL);
        OK(MPI_Start(&rq[1]));
        /* Starting an active request is an error. */
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
        int e = MPI_Start(&rq[1]), cls; MPI_Error_class(e, &cls); CHECK(cls == MPI_ERR_REQUEST);
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));
        do { OK(MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE)); } while (!flag);
        CHECK(v == 100 + it && rq[1] != MPI_REQUEST_NULL);
        /* A blocking collective between starts keeps the order. */
        int b = rank, bsum;
        OK(MPI_Allreduce(&b, &bsum, 1, MPI_INT, MPI_SUM, w));
        CHECK(bsum == n * (n - 1) / 2);
        OK(MPI_Startall(4, &rq[2]));
        OK(MPI_Waitall(4, &rq[2], MPI_STATUSES_IGNORE));
        CHECK(s == n * (n - 1) / 2 + n * it);
        if (rank == 0) CHECK(red == n - 1 + it);
        CHECK(sc == rank * (rank + 1) / 2 + (rank + 1) * it);
        if (rank > 0) CHECK(ex == rank * (rank - 1) / 2 + rank * it);
        for (int i = 2; i < 6; i++) CHECK(rq[i] != MPI_REQUEST_NULL);
    }

    /* gather(v), scatter(v), allgather(v), alltoall(v,w), reduce_scatter(_block) */
    MPI_Request pr[10];
    int g1 = 0, *gr = calloc(n, sizeof(int)), *gvr = calloc(n, sizeof(int)), sc1 = -1, scv1 = -1;
    int *ag = calloc(n, sizeof(int)), *agv = calloc(n, sizeof(int)), *a2a = calloc(n, sizeof(int)), *a2av = calloc(n, sizeof(int)), *a2aw = calloc(n, sizeof(int));
    int *scat = calloc(n, sizeof(int)), *rsin = calloc(n, sizeof(int));
    int rs = -1, rsb = -1;
    MPI_Datatype *types = malloc(n * sizeof(MPI_Datatype));
    int *bd = calloc(n, sizeof(int));
    for (int i = 0; i < n; i++) { types[i] = MPI_INT; bd[i] = i * (int)sizeof(int); }
    OK(MPI_Gather_init(&g1, 1, MPI_INT, gr, 1, MPI_INT, 0, w, MPI_INFO_NULL, &pr[0]));
    OK(MPI_Gatherv_init(&g1, 1, MPI_INT, gvr, cnt, dsp, MPI_INT, n - 1, w, MPI_INFO_NULL, &pr[1]));
    OK(MPI_Scatter_init(scat, 1, MPI_INT, &sc1, 1, MPI_INT, 0, w, MPI_INFO_NULL, &pr[2]));
    OK(MPI_Scatterv_init(scat, cnt, dsp, MPI_INT, &scv1, 1, MPI_INT, 0, w, MPI_INFO_NULL, &pr[3]));
    OK(MPI_Allgather_init(&g1, 1, MPI_INT, ag, 1, MPI_INT, w, MPI_INFO_NULL, &pr[4]));
    OK(MPI_Allgatherv_init(&g1, 1, MPI_INT, agv, cnt, dsp, MPI_INT, w, MPI_INFO_NULL, &pr[5]));
    OK(MPI_Alltoall_init(sb, 1, MPI_INT, a2a, 1, MPI_INT, w, MPI_INFO_NULL, &pr[6]));
    OK(MPI_Alltoallv_init(sb, cnt, dsp, MPI_INT, a2av, cnt, dsp, MPI_INT, w, MPI_INFO_NULL, &pr[7]));
    OK(MPI_Alltoallw_init(sb, cnt, bd, types, a2aw, cnt, bd, types, w, MPI_INFO_NULL, &pr[8]));
    OK(MPI_Reduce_scatter_block_init(rsin, &rsb, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &pr[9]));
    MPI_Request rsr;
    OK(MPI_Reduce_scatter_init(rsin, &rs, cnt, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rsr));
    for (int it = 0; it < 3; it++) {
        g1 = 10 * rank + it;
        for (int i = 0; i < n; i++) { scat[i] = 7 * i + it; sb[i] = 100 * rank + i + it; rsin[i] = i + rank + it; }
        OK(MPI_Startall(10, pr));
        OK(MPI_Start(&rsr));
        int done = 0, idx[11];
        MPI_Request all[11];
        for (int i = 0; i < 10; i++) all[i] = pr[i];
        all[10] = rsr;
        while (done < 11) { int oc; OK(MPI_Waitsome(11, all, &oc, idx, MPI_STATUSES_IGNORE)); CHECK(oc != MPI_UNDEFINED); done += oc; }
        /* Completed starts leave the requests inactive but allocated. */
        int oc; OK(MPI_Waitsome(11, all, &oc, idx, MPI_STATUSES_IGNORE)); CHECK(oc == MPI_UNDEFINED);
        for (int i = 0; i < n; i++) {
            if (rank == 0) CHECK(gr[i] == 10 * i + it);
            if (rank == n - 1) CHECK(gvr[i] == 10 * i + it);
            CHECK(ag[i] == 10 * i + it && agv[i] == 10 * i + it);
            CHECK(a2a[i] == 100 * i + rank + it && a2av[i] == a2a[i] && a2aw[i] == a2a[i]);
        }
        CHECK(sc1 == 7 * rank + it && scv1 == 7 * rank + it);
        int want = 0;
        for (int r = 0; r < n; r++) want += rank + r + it;
        CHECK(rsb == want && rs == want);
    }
    for (int i = 0; i < 10; i++) { OK(MPI_Request_free(&pr[i])); CHECK(pr[i] == MPI_REQUEST_NULL); }
    OK(MPI_Request_free(&rsr));
    for (int i = 0; i < 6; i++) OK(MPI_Request_free(&rq[i]));

    /* Neighbourhood ones on a periodic ring. */
    MPI_Comm ring;
    int dims[1] = {n}, per[1] = {1};
    OK(MPI_Cart_create(w, 1, dims, per, 0, &ring));
    int nb[2] = {-1, -1}, nbv[2] = {-1, -1}, nsend[2], na2a[2] = {-1, -1};
    int c2[2] = {1, 1}, d2[2] = {0, 1};
    MPI_Request nr[3];
    OK(MPI_Neighbor_allgather_init(&g1, 1, MPI_INT, nb, 1, MPI_INT, ring, MPI_INFO_NULL, &nr[0]));
    OK(MPI_Neighbor_allgatherv_init(&g1, 1, MPI_INT, nbv, c2, d2, MPI_INT, ring, MPI_INFO_NULL, &nr[1]));
    OK(MPI_Neighbor_alltoall_init(nsend, 1, MPI_INT, na2a, 1, MPI_INT, ring, MPI_INFO_NULL, &nr[2]));
    int left = (rank + n - 1) % n, right = (rank + 1) % n;
    for (int it = 0; it < 3; it++) {
        g1 = rank + 1000 * it;
        nsend[0] = 2 * rank + it; nsend[1] = 2 * rank + 1 + it;
        OK(MPI_Startall(3, nr));
        OK(MPI_Waitall(3, nr, MPI_STATUSES_IGNORE));
        CHECK(nb[0] == left + 1000 * it && nb[1] == right + 1000 * it);
        CHECK(nbv[0] == nb[0] && nbv[1] == nb[1]);
        CHECK(na2a[0] == 2 * left + 1 + it && na2a[1] == 2 * right + it);
    }
    for (int i = 0; i < 3; i++) OK(MPI_Request_free(&nr[i]));
    OK(MPI_Comm_free(&ring));

    OK(MPI_Barrier(w));
    if (rank == 0) printf("pcoll: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

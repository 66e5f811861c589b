/* MPI-4 large-count (_c) functions: point-to-point, collectives (blocking,
 * non-blocking, persistent, neighbourhood), datatype constructors and queries,
 * pack/unpack, user operations with MPI_Count lengths. With the argument
 * "fatal", rank 0 calls MPI_Send_c with a negative count under the default
 * error handler (the test checks the message names MPI_Send_c and `count`). */
#include <limits.h>
#include "check.h"

static int cls_of(int e) { int c; MPI_Error_class(e, &c); return c; }

static void add_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    CHECK(*dt == MPI_INT);
    for (MPI_Count i = 0; i < *len; i++) ((int *)inout)[i] += 2 * ((int *)in)[i];
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm w = MPI_COMM_WORLD;
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        int x = 0;
        if (rank == 0) MPI_Send_c(&x, -1, MPI_INT, 0, 0, w);
        MPI_Finalize();
        return 0;
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    MPI_Count cnt;

    /* ---- point-to-point ---- */
    int sb[8], rb[8];
    for (int i = 0; i < 8; i++) sb[i] = rank * 100 + i;
    OK(MPI_Sendrecv_c(sb, 8, MPI_INT, right, 1, rb, 8, MPI_INT, left, 1, w, &st));
    for (int i = 0; i < 8; i++) CHECK(rb[i] == left * 100 + i);
    OK(MPI_Get_count_c(&st, MPI_INT, &cnt)); CHECK(cnt == 8);
    OK(MPI_Get_elements_c(&st, MPI_INT, &cnt)); CHECK(cnt == 8);
    OK(MPI_Get_count_c(&st, MPI_DOUBLE, &cnt)); CHECK(cnt == 4);
    if (size > 1 && rank == 0) {
        OK(MPI_Send_c(sb, 3, MPI_INT, 1, 2, w));
        OK(MPI_Ssend_c(sb, 2, MPI_INT, 1, 3, w));
    } else if (size > 1 && rank == 1) {
        OK(MPI_Recv_c(rb, 8, MPI_INT, 0, 2, w, &st));
        OK(MPI_Get_count_c(&st, MPI_INT, &cnt)); CHECK(cnt == 3 && rb[2] == 2);
        OK(MPI_Recv_c(rb, 8, MPI_INT, 0, 3, w, MPI_STATUS_IGNORE));
    }
    /* buffered sends through a buffer attached with MPI_Buffer_attach_c */
    MPI_Count bsize = 4096 + 4 * MPI_BSEND_OVERHEAD;
    char *buf = malloc(bsize);
    OK(MPI_Buffer_attach_c(buf, bsize));
    MPI_Request rq[8];
    OK(MPI_Irecv_c(rb, 4, MPI_INT, left, 4, w, &rq[0]));
    OK(MPI_Irecv_c(rb + 4, 4, MPI_INT, left, 5, w, &rq[1]));
    OK(MPI_Bsend_c(sb, 4, MPI_INT, right, 4, w));
    OK(MPI_Ibsend_c(sb + 4, 4, MPI_INT, right, 5, w, &rq[2]));
    OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 8; i++) CHECK(rb[i] == left * 100 + i);
    void *got; MPI_Count gotsize;
    OK(MPI_Buffer_detach_c(&got, &gotsize));
    CHECK(got == buf && gotsize == bsize);
    free(buf);
    /* ready sends after the receives are posted; Isend_c, Issend_c */
    OK(MPI_Irecv_c(rb, 1, MPI_INT, left, 6, w, &rq[0]));
    OK(MPI_Irecv_c(rb + 1, 1, MPI_INT, left, 7, w, &rq[1]));
    OK(MPI_Irecv_c(rb + 2, 1, MPI_INT, left, 8, w, &rq[2]));
    OK(MPI_Irecv_c(rb + 3, 1, MPI_INT, left, 9, w, &rq[3]));
    OK(MPI_Barrier(w));
    OK(MPI_Rsend_c(sb + 6, 1, MPI_INT, right, 6, w));
    OK(MPI_Irsend_c(sb + 7, 1, MPI_INT, right, 7, w, &rq[4]));
    OK(MPI_Isend_c(sb + 1, 1, MPI_INT, right, 8, w, &rq[5]));
    OK(MPI_Issend_c(sb + 2, 1, MPI_INT, right, 9, w, &rq[6]));
    OK(MPI_Waitall(7, rq, MPI_STATUSES_IGNORE));
    CHECK(rb[0] == left * 100 + 6 && rb[1] == left * 100 + 7 && rb[2] == left * 100 + 1 && rb[3] == left * 100 + 2);
    /* sendrecv_replace, isendrecv, isendrecv_replace */
    int v[2] = {rank, -rank};
    OK(MPI_Sendrecv_replace_c(v, 2, MPI_INT, right, 10, left, 10, w, MPI_STATUS_IGNORE));
    CHECK(v[0] == left && v[1] == -left);
    OK(MPI_Isendrecv_c(sb, 2, MPI_INT, right, 11, rb, 2, MPI_INT, left, 11, w, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(rb[1] == left * 100 + 1);
    v[0] = rank;
    OK(MPI_Isendrecv_replace_c(v, 1, MPI_INT, right, 12, left, 12, w, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(v[0] == left);
    /* persistent */
    int ps = 0, pr = -1;
    OK(MPI_Recv_init_c(&pr, 1, MPI_INT, left, 13, w, &rq[0]));
    OK(MPI_Send_init_c(&ps, 1, MPI_INT, right, 13, w, &rq[1]));
    OK(MPI_Ssend_init_c(&ps, 1, MPI_INT, right, 14, w, &rq[2]));
    OK(MPI_Recv_init_c(&rb[0], 1, MPI_INT, left, 14, w, &rq[3]));
    for (int it = 0; it < 3; it++) {
        ps = rank * 10 + it;
        OK(MPI_Startall(4, rq));
        OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
        CHECK(pr == left * 10 + it && rb[0] == left * 10 + it);
    }
    for (int i = 0; i < 4; i++) OK(MPI_Request_free(&rq[i]));
    OK(MPI_Bsend_init_c(&ps, 0, MPI_INT, right, 15, w, &rq[0]));
    OK(MPI_Rsend_init_c(&ps, 0, MPI_INT, right, 16, w, &rq[1]));
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));
    /* matched probe + Mrecv_c / Imrecv_c */
    OK(MPI_Send_c(sb, 5, MPI_INT, 0, 17, MPI_COMM_SELF));
    OK(MPI_Send_c(sb, 6, MPI_INT, 0, 18, MPI_COMM_SELF));
    MPI_Message m;
    OK(MPI_Mprobe(0, 17, MPI_COMM_SELF, &m, &st));
    OK(MPI_Get_count_c(&st, MPI_INT, &cnt)); CHECK(cnt == 5);
    OK(MPI_Mrecv_c(rb, cnt, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && rb[4] == sb[4]);
    OK(MPI_Mprobe(0, 18, MPI_COMM_SELF, &m, &st));
    OK(MPI_Imrecv_c(rb, 6, MPI_INT, &m, &rq[0]));
    OK(MPI_Wait(&rq[0], &st));
    OK(MPI_Get_elements_c(&st, MPI_INT, &cnt)); CHECK(cnt == 6 && rb[5] == sb[5]);
    OK(MPI_Status_set_elements_c(&st, MPI_INT, 3));
    OK(MPI_Get_count_c(&st, MPI_INT, &cnt)); CHECK(cnt == 3);
    /* errors: negative counts are MPI_ERR_COUNT */
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
    CHECK(cls_of(MPI_Send_c(sb, -1, MPI_INT, right, 0, w)) == MPI_ERR_COUNT);
    CHECK(cls_of(MPI_Recv_c(rb, -5, MPI_INT, left, 0, w, &st)) == MPI_ERR_COUNT);
    CHECK(cls_of(MPI_Bcast_c(rb, -2, MPI_INT, 0, w)) == MPI_ERR_COUNT);
    MPI_Count badcnt[16];
    for (int i = 0; i < 16; i++) badcnt[i] = -1;
    MPI_Aint dz[16] = {0};
    CHECK(cls_of(MPI_Alltoallv_c(sb, badcnt, dz, MPI_INT, rb, badcnt, dz, MPI_INT, w)) == MPI_ERR_COUNT);
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));

    /* ---- collectives ---- */
    int n = size;
    int *a = calloc(4 * n, sizeof(int)), *b = calloc(4 * n, sizeof(int));
    MPI_Count *cs = calloc(n, sizeof(MPI_Count)), *cr = calloc(n, sizeof(MPI_Count));
    MPI_Aint *ds = calloc(n, sizeof(MPI_Aint)), *dr = calloc(n, sizeof(MPI_Aint));
    MPI_Datatype *ts = calloc(n, sizeof(MPI_Datatype));
    int x = rank == 0 ? 77 : -1;
    OK(MPI_Bcast_c(&x, 1, MPI_INT, 0, w)); CHECK(x == 77);
    int me = rank + 1;
    OK(MPI_Gather_c(&me, 1, MPI_INT, a, 1, MPI_INT, 0, w));
    if (rank == 0) for (int i = 0; i < n; i++) CHECK(a[i] == i + 1);
    for (int i = 0; i < n; i++) { cr[i] = 1; dr[i] = n - 1 - i; }
    OK(MPI_Gatherv_c(&me, 1, MPI_INT, a, cr, dr, MPI_INT, 0, w));
    if (rank == 0) for (int i = 0; i < n; i++) CHECK(a[n - 1 - i] == i + 1);
    for (int i = 0; i < n; i++) a[i] = 10 * i;
    OK(MPI_Scatter_c(a, 1, MPI_INT, &x, 1, MPI_INT, 0, w)); CHECK(x == 10 * rank);
    OK(MPI_Scatterv_c(a, cr, dr, MPI_INT, &x, 1, MPI_INT, 0, w)); CHECK(x == 10 * (n - 1 - rank));
    OK(MPI_Allgather_c(&me, 1, MPI_INT, b, 1, MPI_INT, w));
    for (int i = 0; i < n; i++) CHECK(b[i] == i + 1);
    OK(MPI_Allgatherv_c(&me, 1, MPI_INT, b, cr, dr, MPI_INT, w));
    for (int i = 0; i < n; i++) CHECK(b[n - 1 - i] == i + 1);
    for (int i = 0; i < n; i++) a[i] = rank * 1000 + i;
    OK(MPI_Alltoall_c(a, 1, MPI_INT, b, 1, MPI_INT, w));
    for (int i = 0; i < n; i++) CHECK(b[i] == i * 1000 + rank);
    for (int i = 0; i < n; i++) { cs[i] = 1; ds[i] = i; cr[i] = 1; dr[i] = n - 1 - i; }
    OK(MPI_Alltoallv_c(a, cs, ds, MPI_INT, b, cr, dr, MPI_INT, w));
    for (int i = 0; i < n; i++) CHECK(b[n - 1 - i] == i * 1000 + rank);
    for (int i = 0; i < n; i++) { ds[i] = i * (MPI_Aint)sizeof(int); dr[i] = i * (MPI_Aint)sizeof(int); ts[i] = MPI_INT; }
    OK(MPI_Alltoallw_c(a, cs, ds, ts, b, cr, dr, ts, w));
    for (int i = 0; i < n; i++) CHECK(b[i] == i * 1000 + rank);
    int s = 0;
    OK(MPI_Reduce_c(&me, &s, 1, MPI_INT, MPI_SUM, 0, w));
    if (rank == 0) CHECK(s == n * (n + 1) / 2);
    OK(MPI_Allreduce_c(&me, &s, 1, MPI_INT, MPI_MAX, w)); CHECK(s == n);
    OK(MPI_Scan_c(&me, &s, 1, MPI_INT, MPI_SUM, w)); CHECK(s == (rank + 1) * (rank + 2) / 2);
    OK(MPI_Exscan_c(&me, &s, 1, MPI_INT, MPI_SUM, w)); if (rank > 0) CHECK(s == rank * (rank + 1) / 2);
    for (int i = 0; i < n; i++) { a[i] = i; cr[i] = 1; }
    OK(MPI_Reduce_scatter_c(a, &x, cr, MPI_INT, MPI_SUM, w)); CHECK(x == rank * n);
    OK(MPI_Reduce_scatter_block_c(a, &x, 1, MPI_INT, MPI_SUM, w)); CHECK(x == rank * n);
    /* non-blocking and persistent */
    OK(MPI_Iallreduce_c(&me, &s, 1, MPI_INT, MPI_SUM, w, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE)); CHECK(s == n * (n + 1) / 2);
    OK(MPI_Ibcast_c(&x, 1, MPI_INT, 0, w, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) { a[i] = rank * 1000 + i; ds[i] = i; dr[i] = i; }
    OK(MPI_Ialltoallv_c(a, cs, ds, MPI_INT, b, cr, dr, MPI_INT, w, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) CHECK(b[i] == i * 1000 + rank);
    OK(MPI_Igatherv_c(&me, 1, MPI_INT, b, cr, dr, MPI_INT, 0, w, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    if (rank == 0) for (int i = 0; i < n; i++) CHECK(b[i] == i + 1);
    int in = 0, outv = 0;
    OK(MPI_Allreduce_init_c(&in, &outv, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq[0]));
    OK(MPI_Allgatherv_init_c(&in, 1, MPI_INT, b, cr, dr, MPI_INT, w, MPI_INFO_NULL, &rq[1]));
    for (int it = 0; it < 3; it++) {
        in = rank + it;
        OK(MPI_Startall(2, rq));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(outv == n * (n - 1) / 2 + n * it);
        for (int i = 0; i < n; i++) CHECK(b[i] == i + it);
    }
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));
    /* neighbourhood, on a periodic ring */
    MPI_Comm ring;
    int dims[1] = {n}, periods[1] = {1};
    OK(MPI_Cart_create(w, 1, dims, periods, 0, &ring));
    int nb[2];
    OK(MPI_Neighbor_allgather_c(&me, 1, MPI_INT, nb, 1, MPI_INT, ring));
    CHECK(nb[0] == left + 1 && nb[1] == right + 1);
    int so[2] = {rank * 10, rank * 10 + 1};
    MPI_Count nc[2] = {1, 1};
    MPI_Aint nd[2] = {0, 1};
    OK(MPI_Neighbor_alltoallv_c(so, nc, nd, MPI_INT, nb, nc, nd, MPI_INT, ring));
    CHECK(nb[0] == left * 10 + 1 && nb[1] == right * 10);
    MPI_Aint nbd[2] = {0, sizeof(int)};
    MPI_Datatype nt[2] = {MPI_INT, MPI_INT};
    OK(MPI_Ineighbor_alltoallw_c(so, nc, nbd, nt, nb, nc, nbd, nt, ring, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(nb[0] == left * 10 + 1 && nb[1] == right * 10);
    OK(MPI_Neighbor_alltoall_init_c(so, 1, MPI_INT, nb, 1, MPI_INT, ring, MPI_INFO_NULL, &rq[0]));
    OK(MPI_Start(&rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(nb[0] == left * 10 + 1 && nb[1] == right * 10);
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Comm_free(&ring));

    /* ---- user operations with MPI_Count lengths, reduce_local_c ---- */
    MPI_Op op;
    OK(MPI_Op_create_c(add_c, 1, &op));
    int two[2] = {1, 2}, acc[2] = {10, 20};
    OK(MPI_Reduce_local_c(two, acc, 2, MPI_INT, op));
    CHECK(acc[0] == 12 && acc[1] == 24);
    OK(MPI_Reduce_local_c(two, acc, 2, MPI_INT, MPI_SUM));
    CHECK(acc[0] == 13 && acc[1] == 26);
    OK(MPI_Allreduce_c(&me, &s, 1, MPI_INT, op, w));
    /* each combination adds twice one side: the result lies in [n(n+1)/2, 2^n n(n+1)/2] */
    CHECK(s >= n * (n + 1) / 2);
    if (n == 1) CHECK(s == 1);
    OK(MPI_Op_free(&op));

    /* ---- datatypes ---- */
    MPI_Datatype t;
    MPI_Count sz, lb, ext;
    OK(MPI_Type_contiguous_c(3, MPI_INT, &t));
    OK(MPI_Type_size_c(t, &sz)); CHECK(sz == 12);
    OK(MPI_Type_free(&t));
    /* a type of more than INT_MAX bytes: sizes only through the _c/_x queries */
    OK(MPI_Type_contiguous_c((MPI_Count)3 << 30, MPI_BYTE, &t));
    OK(MPI_Type_size_c(t, &sz)); CHECK(sz == (MPI_Count)3 << 30);
    int isz; OK(MPI_Type_size(t, &isz)); CHECK(isz == MPI_UNDEFINED);
    OK(MPI_Type_get_extent_c(t, &lb, &ext)); CHECK(lb == 0 && ext == (MPI_Count)3 << 30);
    OK(MPI_Type_commit(&t));
    OK(MPI_Pack_size_c(1, t, w, &sz)); CHECK(sz >= (MPI_Count)3 << 30);
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
    int e = MPI_Pack_size(1, t, w, &isz);
    CHECK(e != MPI_SUCCESS && cls_of(e) == MPI_ERR_VALUE_TOO_LARGE);
    MPI_Datatype bad_t;
    CHECK(cls_of(MPI_Type_contiguous_c(-1, MPI_INT, &bad_t)) == MPI_ERR_COUNT);
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Type_free(&t));
    /* vector_c: envelope and contents as large counts */
    OK(MPI_Type_vector_c(2, 3, 5, MPI_INT, &t));
    MPI_Count ni, na, nl, ndt; int comb;
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &ndt, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nl == 3 && ndt == 1);
    int ci[4]; MPI_Aint ca[4]; MPI_Count cl[8]; MPI_Datatype cd[4];
    OK(MPI_Type_get_contents_c(t, 4, 4, 8, 2, ci, ca, cl, cd));
    CHECK(cl[0] == 2 && cl[1] == 3 && cl[2] == 5 && cd[0] == MPI_INT);
    OK(MPI_Type_get_extent_c(t, &lb, &ext)); CHECK(lb == 0 && ext == 8 * 4);
    OK(MPI_Type_get_true_extent_c(t, &lb, &ext)); CHECK(lb == 0 && ext == 8 * 4);
    OK(MPI_Type_free(&t));
    /* int-constructed types report ints and addresses, no large counts */
    OK(MPI_Type_vector(2, 3, 5, MPI_INT, &t));
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &ndt, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nl == 0 && ndt == 1);
    OK(MPI_Type_get_contents_c(t, 4, 4, 8, 2, ci, ca, cl, cd));
    CHECK(ci[0] == 2 && ci[1] == 3 && ci[2] == 5);
    OK(MPI_Type_free(&t));
    /* each constructor, checked by a round trip through pack/unpack */
    int src[32], dst[32];
    for (int i = 0; i < 32; i++) src[i] = i;
    MPI_Count bl[3] = {2, 1, 3}, di[3] = {0, 4, 9}, dbytes[3] = {0, 16, 36};
    MPI_Datatype tys[3] = {MPI_INT, MPI_INT, MPI_INT};
    MPI_Datatype made[9];
    OK(MPI_Type_create_hvector_c(2, 2, 5 * sizeof(int), MPI_INT, &made[0]));
    OK(MPI_Type_indexed_c(3, bl, di, MPI_INT, &made[1]));
    OK(MPI_Type_create_hindexed_c(3, bl, dbytes, MPI_INT, &made[2]));
    OK(MPI_Type_create_indexed_block_c(3, 2, di, MPI_INT, &made[3]));
    OK(MPI_Type_create_hindexed_block_c(3, 2, dbytes, MPI_INT, &made[4]));
    OK(MPI_Type_create_struct_c(3, bl, dbytes, tys, &made[5]));
    OK(MPI_Type_create_resized_c(MPI_INT, -4, 12, &made[6]));
    MPI_Count sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    OK(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &made[7]));
    MPI_Count gs[1] = {8}; int distr[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, psz[1] = {2};
    OK(MPI_Type_create_darray_c(2, 1, 1, gs, distr, darg, psz, MPI_ORDER_C, MPI_INT, &made[8]));
    /* expected element lists */
    int e0[] = {0, 1, 5, 6}, e1[] = {0, 1, 4, 9, 10, 11}, e3[] = {0, 1, 4, 5, 9, 10}, e7[] = {8, 9, 10, 14, 15, 16}, e8[] = {4, 5, 6, 7};
    struct { int *idx; int n; } exp[9] = {{e0, 4}, {e1, 6}, {e1, 6}, {e3, 6}, {e3, 6}, {e1, 6}, {NULL, 1}, {e7, 6}, {e8, 4}};
    int zero = 0; exp[6].idx = &zero;
    for (int k = 0; k < 9; k++) {
        OK(MPI_Type_commit(&made[k]));
        char packed[256];
        MPI_Count pos = 0;
        OK(MPI_Pack_size_c(1, made[k], w, &sz)); CHECK(sz >= (MPI_Count)(exp[k].n * sizeof(int)));
        OK(MPI_Pack_c(src, 1, made[k], packed, sizeof packed, &pos, w));
        CHECK(pos == (MPI_Count)(exp[k].n * sizeof(int)));
        for (int i = 0; i < exp[k].n; i++) CHECK(((int *)packed)[i] == exp[k].idx[i]);
        for (int i = 0; i < 32; i++) dst[i] = -1;
        MPI_Count upos = 0;
        OK(MPI_Unpack_c(packed, pos, &upos, dst, 1, made[k], w));
        CHECK(upos == pos);
        for (int i = 0; i < exp[k].n; i++) CHECK(dst[exp[k].idx[i]] == exp[k].idx[i]);
        OK(MPI_Type_get_envelope_c(made[k], &ni, &na, &nl, &ndt, &comb));
        CHECK(nl > 0 && na == 0);
    }
    /* contents of the subarray_c and darray_c: integers stay ints, sizes are large counts */
    OK(MPI_Type_get_envelope_c(made[7], &ni, &na, &nl, &ndt, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 2 && nl == 6);
    OK(MPI_Type_get_contents_c(made[7], 4, 4, 8, 2, ci, ca, cl, cd));
    CHECK(ci[0] == 2 && ci[1] == MPI_ORDER_C && cl[0] == 4 && cl[1] == 6 && cl[2] == 2 && cl[5] == 2);
    OK(MPI_Type_get_envelope_c(made[8], &ni, &na, &nl, &ndt, &comb));
    CHECK(comb == MPI_COMBINER_DARRAY && ni == 7 && nl == 1);
    OK(MPI_Type_get_envelope_c(made[5], &ni, &na, &nl, &ndt, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 0 && nl == 7 && ndt == 3);
    OK(MPI_Type_get_contents_c(made[5], 0, 0, 8, 3, ci, ca, cl, cd));
    CHECK(cl[0] == 3 && cl[1] == 2 && cl[4] == 0 && cl[6] == 36);
    OK(MPI_Type_get_extent_c(made[6], &lb, &ext)); CHECK(lb == -4 && ext == 12);
    /* a derived type through point-to-point and a collective */
    for (int i = 0; i < 32; i++) dst[i] = -1;
    OK(MPI_Sendrecv_c(src, 1, made[1], right, 20, dst, 1, made[1], left, 20, w, &st));
    OK(MPI_Get_elements_c(&st, made[1], &cnt)); CHECK(cnt == 6);
    OK(MPI_Get_count_c(&st, made[1], &cnt)); CHECK(cnt == 1);
    for (int i = 0; i < 6; i++) CHECK(dst[e1[i]] == e1[i]);
    OK(MPI_Bcast_c(dst, 1, made[7], 0, w));
    for (int k = 0; k < 9; k++) OK(MPI_Type_free(&made[k]));
    /* external32 */
    char ext32[64];
    MPI_Count epos = 0, esz;
    OK(MPI_Pack_external_size_c("external32", 3, MPI_INT, &esz)); CHECK(esz == 12);
    OK(MPI_Pack_external_c("external32", src + 1, 3, MPI_INT, ext32, sizeof ext32, &epos));
    CHECK(epos == 12 && (unsigned char)ext32[3] == 1 && ext32[0] == 0);
    MPI_Count upos2 = 0;
    OK(MPI_Unpack_external_c("external32", ext32, epos, &upos2, dst, 3, MPI_INT));
    CHECK(upos2 == 12 && dst[0] == 1 && dst[2] == 3);

    free(a); free(b); free(cs); free(cr); free(ds); free(dr); free(ts);
    OK(MPI_Finalize());
    if (rank == 0) printf("bigcount: all checks passed\n");
    return 0;
}

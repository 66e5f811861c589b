/* Bad arguments to collectives, communicators, groups, topologies and
 * attributes return the right class under MPI_ERRORS_RETURN. */
#include "check.h"
static int cls(int rc) { int c; if (rc == MPI_SUCCESS) return MPI_SUCCESS; OK(MPI_Error_class(rc, &c)); return c; }

int main(int argc, char **argv) {
    int rank, size, x[8] = {0}, y[8] = {0}, counts[8] = {1, 1, 1, 1, 1, 1, 1, 1}, displs[8] = {0};
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Request rq;
    /* collectives: every rank sees the same error before any communication */
    CHECK(cls(MPI_Bcast(x, 1, MPI_INT, size, MPI_COMM_WORLD)) == MPI_ERR_ROOT);
    CHECK(cls(MPI_Bcast(x, 1, MPI_INT, -1, MPI_COMM_WORLD)) == MPI_ERR_ROOT);
    CHECK(cls(MPI_Ibcast(x, 1, MPI_INT, MPI_ROOT, MPI_COMM_WORLD, &rq)) == MPI_ERR_ROOT);
    CHECK(cls(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, size + 3, MPI_COMM_WORLD)) == MPI_ERR_ROOT);
    CHECK(cls(MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, size, MPI_COMM_WORLD)) == MPI_ERR_ROOT);
    CHECK(cls(MPI_Bcast(x, -1, MPI_INT, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT);
    CHECK(cls(MPI_Allreduce(x, y, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_COUNT);
    counts[size - 1] = -1;
    CHECK(cls(MPI_Allgatherv(x, 1, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_COUNT);
    counts[size - 1] = 1;
    CHECK(cls(MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD)) == MPI_ERR_OP);
    CHECK(cls(MPI_Allreduce(x, y, 1, MPI_INT, (MPI_Op)(intptr_t)0x99999999999, MPI_COMM_WORLD)) == MPI_ERR_OP);
    CHECK(cls(MPI_Allreduce(x, y, 1, MPI_DOUBLE_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_OP);   /* op not defined on the type */
    CHECK(cls(MPI_Reduce(x, y, 1, MPI_FLOAT, MPI_BAND, 0, MPI_COMM_WORLD)) == MPI_ERR_OP);
    CHECK(cls(MPI_Allreduce(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Barrier(MPI_COMM_NULL)) == MPI_ERR_COMM);
    /* freed communicators */
    MPI_Comm d, stale;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d)); stale = d;
    MPI_Errhandler eh; OK(MPI_Comm_get_errhandler(d, &eh)); CHECK(eh == MPI_ERRORS_RETURN);
    CHECK(cls(MPI_Bcast(x, 1, MPI_INT, 0, d)) == MPI_SUCCESS);
    OK(MPI_Comm_free(&d)); CHECK(d == MPI_COMM_NULL);
    CHECK(cls(MPI_Bcast(x, 1, MPI_INT, 0, stale)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Comm_free(&stale)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Comm_size(stale, x)) == MPI_ERR_COMM);
    MPI_Comm w = MPI_COMM_WORLD; CHECK(cls(MPI_Comm_free(&w)) == MPI_ERR_COMM);
    w = MPI_COMM_SELF; CHECK(cls(MPI_Comm_free(&w)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Comm_dup(MPI_COMM_NULL, &d)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Comm_remote_size(MPI_COMM_WORLD, x)) == MPI_ERR_COMM);
    d = MPI_COMM_WORLD; OK(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 0, &d)); CHECK(d == MPI_COMM_NULL);
    CHECK(cls(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, -1, &d)) == MPI_ERR_TAG);
    CHECK(cls(MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_NULL, 0, &d)) == MPI_ERR_GROUP);
    CHECK(cls(MPI_Comm_create_group(MPI_COMM_NULL, MPI_GROUP_EMPTY, 0, &d)) == MPI_ERR_COMM);
    /* groups */
    MPI_Group g, gs;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &g)); gs = g;
    int bad[2] = { 0, size };
    CHECK(cls(MPI_Group_incl(g, 2, bad, &gs)) == MPI_ERR_RANK);
    int dup2[2] = { 0, 0 };
    CHECK(cls(MPI_Group_incl(g, 2, dup2, &gs)) == MPI_ERR_RANK);
    int zero_stride[1][3] = { { 0, 1, 0 } };
    CHECK(cls(MPI_Group_range_incl(g, 1, zero_stride, &gs)) != MPI_SUCCESS);
    gs = g; OK(MPI_Group_free(&g)); CHECK(g == MPI_GROUP_NULL);
    CHECK(cls(MPI_Group_size(gs, x)) == MPI_ERR_GROUP);
    CHECK(cls(MPI_Group_free(&gs)) == MPI_ERR_GROUP);
    CHECK(cls(MPI_Group_size(MPI_GROUP_NULL, x)) == MPI_ERR_GROUP);
    CHECK(cls(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &d)) == MPI_ERR_GROUP);
    CHECK(cls(MPI_Group_union(MPI_GROUP_EMPTY, (MPI_Group)(intptr_t)0x4242424242, &gs)) == MPI_ERR_GROUP);
    /* topologies */
    int dims[2] = { -1, 1 }, periods[2] = { 0, 0 };
    CHECK(cls(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &d)) == MPI_ERR_DIMS);
    CHECK(cls(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &d)) == MPI_ERR_DIMS);
    int d2[2] = { 0, 0 };
    CHECK(cls(MPI_Dims_create(size, -1, d2)) == MPI_ERR_DIMS);
    int d3[2] = { 5 * size + 1, 0 };
    CHECK(cls(MPI_Dims_create(size, 2, d3)) == MPI_ERR_DIMS);
    int st;
    CHECK(cls(MPI_Cartdim_get(MPI_COMM_WORLD, &st)) == MPI_ERR_TOPOLOGY);
    CHECK(cls(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, x, y)) == MPI_ERR_TOPOLOGY);
    CHECK(cls(MPI_Graphdims_get(MPI_COMM_WORLD, x, y)) == MPI_ERR_TOPOLOGY);
    CHECK(cls(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, x, y, &st)) == MPI_ERR_TOPOLOGY);
    CHECK(cls(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_TOPOLOGY);
    int one[1] = { size }, per[1] = { 1 }; MPI_Comm ring;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, per, 0, &ring));
    CHECK(cls(MPI_Graph_neighbors_count(ring, 0, x)) == MPI_ERR_TOPOLOGY);
    CHECK(cls(MPI_Cart_coords(ring, size, 1, x)) == MPI_ERR_RANK);
    OK(MPI_Comm_free(&ring));
    /* keyvals */
    int key, flag; void *v;
    CHECK(cls(MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &v, &flag)) == MPI_ERR_KEYVAL);
    CHECK(cls(MPI_Comm_set_attr(MPI_COMM_WORLD, 123456, NULL)) == MPI_ERR_KEYVAL);
    CHECK(cls(MPI_Comm_delete_attr(MPI_COMM_WORLD, 123456)) == MPI_ERR_KEYVAL);
    CHECK(cls(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL)) == MPI_ERR_KEYVAL);
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    CHECK(cls(MPI_Comm_delete_attr(MPI_COMM_WORLD, key)) == MPI_ERR_KEYVAL);   /* nothing set */
    int k2 = key; OK(MPI_Comm_free_keyval(&key));
    CHECK(cls(MPI_Comm_free_keyval(&k2)) == MPI_ERR_KEYVAL);
    CHECK(cls(MPI_Comm_set_attr(MPI_COMM_WORLD, k2, NULL)) == MPI_ERR_KEYVAL);
    int pre = MPI_TAG_UB; CHECK(cls(MPI_Comm_free_keyval(&pre)) == MPI_ERR_KEYVAL);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}

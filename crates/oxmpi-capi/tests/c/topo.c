/* Process topologies: Dims_create, a periodic Cartesian grid with a halo
 * exchange (Cart_shift + Sendrecv) and neighbourhood collectives, Cart_sub,
 * the shuffle-exchange graph on 8 ranks (Graph_create, its neighbour table and
 * three MPI_Sendrecv_replace permutations), distributed graphs,
 * MPIX_Topo_cluster_info. Run on 4 ranks (grid) or 8 (graph); anything works. */
#include "check.h"

static int rank, size;

static void cart_tests(void) {
    int dims[2] = { 0, 0 }, periods[2] = { 1, 0 }, coords[2], r, st, nd;
    OK(MPI_Dims_create(size, 2, dims)); CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1]);
    MPI_Comm cart;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    OK(MPI_Topo_test(cart, &st)); CHECK(st == MPI_CART);
    OK(MPI_Topo_test(MPI_COMM_WORLD, &st)); CHECK(st == MPI_UNDEFINED);
    OK(MPI_Cartdim_get(cart, &nd)); CHECK(nd == 2);
    int gd[2], gp[2];
    OK(MPI_Cart_get(cart, 2, gd, gp, coords));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0);
    CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1]);
    OK(MPI_Cart_rank(cart, coords, &r)); CHECK(r == rank);
    int c2[2]; OK(MPI_Cart_coords(cart, size - 1, 2, c2)); CHECK(c2[0] == dims[0] - 1 && c2[1] == dims[1] - 1);
    int wrap[2] = { coords[0] + dims[0], coords[1] }; OK(MPI_Cart_rank(cart, wrap, &r)); CHECK(r == rank);
    /* halo exchange: each rank has a 1-D strip with ghost cells in dimension 0 (periodic) and 1 (not) */
    int up, down, left, right;
    OK(MPI_Cart_shift(cart, 0, 1, &up, &down));
    OK(MPI_Cart_shift(cart, 1, 1, &left, &right));
    CHECK(up == ((coords[0] - 1 + dims[0]) % dims[0]) * dims[1] + coords[1]);
    CHECK(down == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1]);
    CHECK(left == (coords[1] == 0 ? MPI_PROC_NULL : rank - 1));
    CHECK(right == (coords[1] == dims[1] - 1 ? MPI_PROC_NULL : rank + 1));
    double u[6] = { -1, rank, rank + 0.25, rank + 0.5, rank + 0.75, -1 };
    OK(MPI_Sendrecv(&u[4], 1, MPI_DOUBLE, down, 1, &u[0], 1, MPI_DOUBLE, up, 1, cart, MPI_STATUS_IGNORE));
    OK(MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, up, 2, &u[5], 1, MPI_DOUBLE, down, 2, cart, MPI_STATUS_IGNORE));
    CHECK(u[0] == up + 0.75 && u[5] == down);
    double h[2] = { -5, -5 };
    OK(MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 3, &h[1], 1, MPI_DOUBLE, right, 3, cart, MPI_STATUS_IGNORE));
    OK(MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, right, 4, &h[0], 1, MPI_DOUBLE, left, 4, cart, MPI_STATUS_IGNORE));
    CHECK(h[0] == (left == MPI_PROC_NULL ? -5 : left) && h[1] == (right == MPI_PROC_NULL ? -5 : right));
    /* the same halo by neighbourhood collectives: order -1, +1 per dimension */
    int nb[4] = { up, down, left, right }, got[4] = { -9, -9, -9, -9 }, mine = rank * 10;
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, cart));
    for (int i = 0; i < 4; i++) CHECK(got[i] == (nb[i] == MPI_PROC_NULL ? -9 : nb[i] * 10));
    int sendv[4], recvv[4];
    for (int i = 0; i < 4; i++) { sendv[i] = rank * 100 + i; recvv[i] = -9; }
    MPI_Request rq;
    OK(MPI_Ineighbor_alltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, cart, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* block i comes from nb[i], which sent it as its block i^1 */
    for (int i = 0; i < 4; i++) CHECK(recvv[i] == (nb[i] == MPI_PROC_NULL ? -9 : nb[i] * 100 + (i ^ 1)));
    int cnt[4] = { 1, 1, 1, 1 }, dsp[4] = { 3, 2, 1, 0 };
    for (int i = 0; i < 4; i++) recvv[i] = -9;
    OK(MPI_Neighbor_alltoallv(sendv, cnt, dsp, MPI_INT, recvv, cnt, dsp, MPI_INT, cart));
    for (int i = 0; i < 4; i++) CHECK(recvv[3 - i] == (nb[i] == MPI_PROC_NULL ? -9 : nb[i] * 100 + (3 - (i ^ 1))));
    MPI_Aint adsp[4] = { 0, 4, 8, 12 }; MPI_Datatype ts[4] = { MPI_INT, MPI_INT, MPI_INT, MPI_INT };
    for (int i = 0; i < 4; i++) recvv[i] = -9;
    OK(MPI_Neighbor_alltoallw(sendv, cnt, adsp, ts, recvv, cnt, adsp, ts, cart));
    for (int i = 0; i < 4; i++) CHECK(recvv[i] == (nb[i] == MPI_PROC_NULL ? -9 : nb[i] * 100 + (i ^ 1)));
    int gv[8]; int gc[4] = { 1, 1, 1, 1 }, gdp[4] = { 0, 2, 4, 6 };
    for (int i = 0; i < 8; i++) gv[i] = -9;
    OK(MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, gv, gc, gdp, MPI_INT, cart));
    for (int i = 0; i < 4; i++) CHECK(gv[2 * i] == (nb[i] == MPI_PROC_NULL ? -9 : nb[i] * 10) && gv[2 * i + 1] == -9);
    /* Cart_sub: rows */
    int remain[2] = { 0, 1 }; MPI_Comm row; int rs, rr;
    OK(MPI_Cart_sub(cart, remain, &row));
    OK(MPI_Comm_size(row, &rs)); OK(MPI_Comm_rank(row, &rr)); CHECK(rs == dims[1] && rr == coords[1]);
    OK(MPI_Cartdim_get(row, &nd)); CHECK(nd == 1);
    int x = coords[1], sum; OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, row)); CHECK(sum == dims[1] * (dims[1] - 1) / 2);
    int nr; OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr)); CHECK(nr == rank);
    OK(MPI_Comm_free(&row)); OK(MPI_Comm_free(&cart));
    /* a grid smaller than the communicator: extra ranks get MPI_COMM_NULL */
    int one = 1, p0 = 0; MPI_Comm c1;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &p0, 1, &c1));
    CHECK((rank == 0) == (c1 != MPI_COMM_NULL));
    if (c1 != MPI_COMM_NULL) OK(MPI_Comm_free(&c1));
    int d3[3] = { 0, 3, 0 }; OK(MPI_Dims_create(24, 3, d3)); CHECK(d3[0] == 4 && d3[1] == 3 && d3[2] == 2);
}

/* The shuffle-exchange graph on 8 nodes: node i's neighbours are
 * exchange(i), shuffle(i), unshuffle(i). */
static const int table[8][3] = { {1,0,0}, {0,2,4}, {3,4,1}, {2,6,5}, {5,1,2}, {4,3,6}, {7,5,3}, {6,7,7} };

static void graph_tests(void) {
    int index[8], edges[24];
    for (int i = 0; i < 8; i++) { index[i] = 3 * (i + 1); for (int k = 0; k < 3; k++) edges[3 * i + k] = table[i][k]; }
    MPI_Comm g; int st, nn, ne, cnt, nbs[3];
    OK(MPI_Graph_create(MPI_COMM_WORLD, 8, index, edges, 1, &g));
    if (rank >= 8) { CHECK(g == MPI_COMM_NULL); return; }
    OK(MPI_Topo_test(g, &st)); CHECK(st == MPI_GRAPH);
    OK(MPI_Graphdims_get(g, &nn, &ne)); CHECK(nn == 8 && ne == 24);
    int gi[8], ge[24]; OK(MPI_Graph_get(g, 8, 24, gi, ge));
    for (int i = 0; i < 8; i++) CHECK(gi[i] == index[i]);
    for (int i = 0; i < 24; i++) CHECK(ge[i] == edges[i]);
    for (int node = 0; node < 8; node++) {
        OK(MPI_Graph_neighbors_count(g, node, &cnt)); CHECK(cnt == 3);
        OK(MPI_Graph_neighbors(g, node, 3, nbs));
        for (int k = 0; k < 3; k++) CHECK(nbs[k] == table[node][k]);
    }
    int nr; OK(MPI_Graph_map(MPI_COMM_WORLD, 8, index, edges, &nr)); CHECK(nr == rank);
    /* the three permutations: send along neighbour k, receive from the node whose
     * neighbour k is me (exchange is its own inverse, shuffle and unshuffle
     * invert each other) */
    OK(MPI_Graph_neighbors(g, rank, 3, nbs));
    int inverse[3] = { 0, 2, 1 };
    for (int k = 0; k < 3; k++) {
        int v = rank * 11;
        OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, nbs[k], k, nbs[inverse[k]], k, g, MPI_STATUS_IGNORE));
        CHECK(v == nbs[inverse[k]] * 11);
        CHECK(table[nbs[inverse[k]]][k] == rank);
    }
    /* neighbour allgather over the graph: block k from neighbour k */
    int got[3] = { -1, -1, -1 }, mine = rank + 100;
    OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g));
    for (int k = 0; k < 3; k++) CHECK(got[k] == nbs[k] + 100);
    OK(MPI_Comm_free(&g));
}

static void dist_graph_tests(void) {
    /* a directed ring, weighted: rank -> rank+1 with weight rank+1 */
    int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
    int sw = prev + 1, dw = rank + 1;
    MPI_Comm dg; int in, out, w, st;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &prev, &sw, 1, &next, &dw, MPI_INFO_NULL, 0, &dg));
    OK(MPI_Topo_test(dg, &st)); CHECK(st == MPI_DIST_GRAPH);
    OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); CHECK(in == 1 && out == 1 && w);
    int s, sww, d, dww; OK(MPI_Dist_graph_neighbors(dg, 1, &s, &sww, 1, &d, &dww));
    CHECK(s == prev && sww == prev + 1 && d == next && dww == rank + 1);
    int v = rank, got = -1;
    OK(MPI_Neighbor_alltoall(&v, 1, MPI_INT, &got, 1, MPI_INT, dg)); CHECK(got == prev);
    OK(MPI_Comm_free(&dg));
    /* the same ring, described by rank 0 alone, unweighted */
    int srcs[16], degs[16], dsts[16];
    for (int i = 0; i < size; i++) { srcs[i] = i; degs[i] = 1; dsts[i] = (i + 1) % size; }
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? size : 0, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
    OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); CHECK(in == 1 && out == 1 && !w);
    OK(MPI_Dist_graph_neighbors(dg, 1, &s, MPI_UNWEIGHTED, 1, &d, MPI_UNWEIGHTED)); CHECK(s == prev && d == next);
    OK(MPI_Comm_free(&dg));
    /* nobody has edges: MPI_WEIGHTS_EMPTY */
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
    OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); CHECK(in == 0 && out == 0);
    OK(MPI_Comm_free(&dg));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    cart_tests();
    if (size >= 8) graph_tests();
    dist_graph_tests();
    int levels, ids[MPIX_TOPO_CLUSTER_MAX_LEVELS], ranks[MPIX_TOPO_CLUSTER_MAX_LEVELS];
    OK(MPIX_Topo_cluster_info(MPI_COMM_WORLD, &levels, ids, ranks));
    CHECK(levels >= 1 && levels <= MPIX_TOPO_CLUSTER_MAX_LEVELS && ids[0] == 0 && ranks[0] == rank);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

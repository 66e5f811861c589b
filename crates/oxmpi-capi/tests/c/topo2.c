/* Topologies in the corners a suite probes: Dims_create balance and errors,
 * zero-dimensional and periodic Cartesian grids (size 1 and 2 rings, where
 * both neighbours are one process), Cart_sub/shift/map/rank/coords, graphs
 * with fewer nodes than processes, Graph_map, dist graphs with MPI_UNWEIGHTED
 * and MPI_WEIGHTS_EMPTY, Topo_test on dups, and every neighbourhood collective
 * (blocking, non-blocking, v and w) on each kind. Rank 0 prints " No Errors". */
#include "check.h"

static int rank, size, errs;
#define E(cond, ...) do { if (!(cond)) { errs++; if (errs < 30) { fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } } while (0)

/* Every neighbourhood collective on comm, whose in/out neighbour lists are given. */
static void neighbours(MPI_Comm comm, int indeg, const int *src, int outdeg, const int *dst, const char *what) {
    int r; MPI_Comm_rank(comm, &r);
    int m = indeg > outdeg ? indeg : outdeg;
    int *sb = malloc(sizeof(int) * (2 * m + 2)), *rb = malloc(sizeof(int) * (4 * m + 4));
    int *rc = malloc(sizeof(int) * (m + 1)), *rd = malloc(sizeof(int) * (m + 1)), *sc = malloc(sizeof(int) * (m + 1)), *sd = malloc(sizeof(int) * (m + 1));
    MPI_Aint *sdw = malloc(sizeof(MPI_Aint) * (m + 1)), *rdw = malloc(sizeof(MPI_Aint) * (m + 1));
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (m + 1)), *rt = malloc(sizeof(MPI_Datatype) * (m + 1));
    MPI_Request rq;
    for (int it = 0; it < 2; it++) {
        /* allgather: everyone sends its rank; the j-th block comes from src[j] */
        for (int j = 0; j < 2 * indeg; j++) rb[j] = -1;
        sb[0] = r; sb[1] = r + 1000;
        if (it == 0) OK(MPI_Neighbor_allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, comm));
        else { OK(MPI_Ineighbor_allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        for (int j = 0; j < indeg; j++) E(src[j] == MPI_PROC_NULL ? rb[2 * j] == -1 : (rb[2 * j] == src[j] && rb[2 * j + 1] == src[j] + 1000), "%s neighbor_allgather[%d] = %d, want %d", what, j, rb[2 * j], src[j]);
        /* allgatherv: block j lands reversed */
        for (int j = 0; j < indeg; j++) { rc[j] = 1; rd[j] = indeg - 1 - j; rb[j] = -1; }
        if (it == 0) OK(MPI_Neighbor_allgatherv(sb, 1, MPI_INT, rb, rc, rd, MPI_INT, comm));
        else { OK(MPI_Ineighbor_allgatherv(sb, 1, MPI_INT, rb, rc, rd, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        for (int j = 0; j < indeg; j++) if (src[j] != MPI_PROC_NULL) E(rb[indeg - 1 - j] == src[j], "%s neighbor_allgatherv", what);
        /* alltoall: block k goes to dst[k] and carries (r, k) */
        for (int k = 0; k < outdeg; k++) sb[k] = r * 100 + k;
        for (int j = 0; j < indeg; j++) rb[j] = -1;
        if (it == 0) OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, comm));
        else { OK(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        /* the value from src[j] is src[j]*100 + (the index k at which src[j] lists me as its out-neighbour) */
        for (int j = 0; j < indeg; j++) if (src[j] != MPI_PROC_NULL) E(rb[j] / 100 == src[j], "%s neighbor_alltoall[%d] = %d from %d", what, j, rb[j], src[j]);
        /* alltoallv with counts 1 and reversed displacements */
        for (int k = 0; k < outdeg; k++) { sc[k] = 1; sd[k] = outdeg - 1 - k; sb[outdeg - 1 - k] = r * 100 + k; }
        for (int j = 0; j < indeg; j++) { rc[j] = 1; rd[j] = j; rb[j] = -1; }
        if (it == 0) OK(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm));
        else { OK(MPI_Ineighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        for (int j = 0; j < indeg; j++) if (src[j] != MPI_PROC_NULL) E(rb[j] / 100 == src[j], "%s neighbor_alltoallv", what);
        /* alltoallw: byte displacements, MPI_INT */
        for (int k = 0; k < outdeg; k++) { sc[k] = 1; sdw[k] = (MPI_Aint)(k * sizeof(int)); st[k] = MPI_INT; sb[k] = r * 100 + k; }
        for (int j = 0; j < indeg; j++) { rc[j] = 1; rdw[j] = (MPI_Aint)(j * sizeof(int)); rt[j] = MPI_INT; rb[j] = -1; }
        if (it == 0) OK(MPI_Neighbor_alltoallw(sb, sc, sdw, st, rb, rc, rdw, rt, comm));
        else { OK(MPI_Ineighbor_alltoallw(sb, sc, sdw, st, rb, rc, rdw, rt, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        for (int j = 0; j < indeg; j++) if (src[j] != MPI_PROC_NULL) E(rb[j] / 100 == src[j], "%s neighbor_alltoallw", what);
    }
    free(sb); free(rb); free(rc); free(rd); free(sc); free(sd); free(sdw); free(rdw); free(st); free(rt);
}

/* Cartesian: the precise block order (negative then positive neighbour, per
 * dimension), checked via the alltoall contents, even when both neighbours are one process. */
static void cart_exchange(MPI_Comm cart, int ndims) {
    int r; MPI_Comm_rank(cart, &r);
    int src[16], dst[16];
    for (int d = 0; d < ndims; d++) {
        OK(MPI_Cart_shift(cart, d, 1, &src[2 * d], &src[2 * d + 1]));
        dst[2 * d] = src[2 * d]; dst[2 * d + 1] = src[2 * d + 1];
    }
    int sb[16], rb[16];
    for (int k = 0; k < 2 * ndims; k++) { sb[k] = r * 100 + k; rb[k] = -1; }
    OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart));
    /* block 2d (from the negative neighbour) is what it sent in its positive direction (2d+1), and vice versa */
    for (int d = 0; d < ndims; d++) {
        if (src[2 * d] != MPI_PROC_NULL) E(rb[2 * d] == src[2 * d] * 100 + 2 * d + 1, "cart alltoall dim %d negative: %d", d, rb[2 * d]);
        else E(rb[2 * d] == -1, "cart alltoall PROC_NULL untouched");
        if (src[2 * d + 1] != MPI_PROC_NULL) E(rb[2 * d + 1] == src[2 * d + 1] * 100 + 2 * d, "cart alltoall dim %d positive: %d", d, rb[2 * d + 1]);
    }
    neighbours(cart, 2 * ndims, src, 2 * ndims, dst, "cart");
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* Dims_create */
    {
        int d[4], c;
        OK(MPI_Dims_create(1, 0, NULL));
        d[0] = d[1] = 0; OK(MPI_Dims_create(1323, 2, d)); E(d[0] == 49 && d[1] == 27, "dims 1323 -> %d x %d", d[0], d[1]);
        d[0] = d[1] = 0; OK(MPI_Dims_create(72, 2, d)); E(d[0] == 9 && d[1] == 8, "dims 72");
        d[0] = d[1] = d[2] = 0; OK(MPI_Dims_create(453528, 3, d)); E(d[0] == 6299 && d[1] == 9 && d[2] == 8, "dims 453528 -> %d %d %d", d[0], d[1], d[2]);
        d[0] = d[1] = d[2] = 0; OK(MPI_Dims_create(454140, 3, d)); E(d[0] == 87 && d[1] == 87 && d[2] == 60, "dims 454140 -> %d %d %d", d[0], d[1], d[2]);
        d[0] = d[1] = d[2] = 0; OK(MPI_Dims_create(461125, 3, d)); E(d[0] == 125 && d[1] == 119 && d[2] == 31, "dims 461125 -> %d %d %d", d[0], d[1], d[2]);
        d[0] = 0; d[1] = 3; d[2] = 0; OK(MPI_Dims_create(24, 3, d)); E(d[0] == 4 && d[1] == 3 && d[2] == 2, "dims fixed middle");
        d[0] = 0; d[1] = 5; c = MPI_Dims_create(12, 2, d); { int cl; MPI_Error_class(c, &cl); E(cl == MPI_ERR_DIMS, "dims non-divisor class %d", cl); }
        d[0] = 2; d[1] = 3; OK(MPI_Dims_create(6, 2, d)); E(d[0] == 2 && d[1] == 3, "dims all fixed");
        d[0] = d[1] = d[2] = d[3] = 0; OK(MPI_Dims_create(size, 4, d)); E(d[0] * d[1] * d[2] * d[3] == size && d[0] >= d[1] && d[1] >= d[2] && d[2] >= d[3], "dims non-increasing");
        c = MPI_Dims_create(4, -1, d); E(c != MPI_SUCCESS, "negative ndims is an error");
    }
    /* Topo_test on a plain communicator */
    { int t; OK(MPI_Topo_test(MPI_COMM_WORLD, &t)); E(t == MPI_UNDEFINED, "topo_test world"); }

    /* zero-dimensional Cartesian */
    {
        MPI_Comm z, zs; int nd = -1, zr = -1;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &z));
        if (rank == 0) {
            E(z != MPI_COMM_NULL, "0-dim cart on rank 0");
            int zsize; OK(MPI_Comm_size(z, &zsize)); E(zsize == 1, "0-dim cart size");
            OK(MPI_Cartdim_get(z, &nd)); E(nd == 0, "cartdim 0");
            OK(MPI_Cart_get(z, 0, NULL, NULL, NULL));
            OK(MPI_Cart_rank(z, NULL, &zr)); E(zr == 0, "cart_rank 0-dim");
            OK(MPI_Cart_coords(z, 0, 0, NULL));
            OK(MPI_Cart_sub(z, NULL, &zs)); nd = -1; OK(MPI_Cartdim_get(zs, &nd)); E(nd == 0, "cart_sub of 0-dim");
            int t; OK(MPI_Topo_test(z, &t)); E(t == MPI_CART, "0-dim is cart");
            int indeg, outdeg, w; (void)indeg; (void)outdeg; (void)w;
            int x = 5, y = -1;
            OK(MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, z)); E(y == -1, "0-dim neighbour allgather");
            OK(MPI_Comm_free(&zs)); OK(MPI_Comm_free(&z));
        } else E(z == MPI_COMM_NULL, "0-dim cart elsewhere is NULL");
    }
    /* 1-D periodic ring over all ranks (size 1 and 2: both neighbours are one process) */
    {
        MPI_Comm ring, dup; int dims[1] = { size }, per[1] = { 1 }, t;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &ring));
        cart_exchange(ring, 1);
        OK(MPI_Comm_dup(ring, &dup)); OK(MPI_Topo_test(dup, &t)); E(t == MPI_CART, "dup keeps the cart");
        int d2[1], p2[1], c2[1]; OK(MPI_Cart_get(dup, 1, d2, p2, c2)); E(d2[0] == size && p2[0] == 1 && c2[0] == rank, "cart_get of dup");
        cart_exchange(dup, 1);
        /* shifts by more than the size and by negative amounts */
        int s, d;
        OK(MPI_Cart_shift(ring, 0, size + 1, &s, &d)); E(d == (rank + 1) % size && s == (rank + size - 1) % size, "periodic shift by size+1");
        OK(MPI_Cart_shift(ring, 0, -2, &s, &d)); E(d == ((rank - 2) % size + size) % size && s == (rank + 2) % size, "periodic shift by -2");
        OK(MPI_Cart_shift(ring, 0, 0, &s, &d)); E(s == rank && d == rank, "shift by 0");
        int bad = MPI_Cart_shift(ring, 1, 1, &s, &d); E(bad != MPI_SUCCESS, "shift in a dimension that does not exist");
        OK(MPI_Comm_free(&dup)); OK(MPI_Comm_free(&ring));
    }
    /* 2-D non-periodic / periodic mix with reorder, and a line */
    {
        int dims[2] = { 0, 0 }, per[2] = { 0, 1 }, coords[2], back;
        OK(MPI_Dims_create(size, 2, dims));
        MPI_Comm g; OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 1, &g));
        int gr; OK(MPI_Comm_rank(g, &gr));
        OK(MPI_Cart_coords(g, gr, 2, coords)); OK(MPI_Cart_rank(g, coords, &back)); E(back == gr, "coords/rank round trip");
        /* out-of-range coordinates: periodic wraps, non-periodic is an error */
        int c2[2] = { coords[0], coords[1] + dims[1] }; OK(MPI_Cart_rank(g, c2, &back)); E(back == gr, "periodic coordinate wraps");
        int c3[2] = { dims[0], 0 }; E(MPI_Cart_rank(g, c3, &back) != MPI_SUCCESS, "non-periodic coordinate out of range");
        int s, d; OK(MPI_Cart_shift(g, 0, 1, &s, &d));
        if (coords[0] == dims[0] - 1) E(d == MPI_PROC_NULL, "edge shift is PROC_NULL");
        if (coords[0] == 0) E(s == MPI_PROC_NULL, "edge shift source is PROC_NULL");
        cart_exchange(g, 2);
        int remain[2] = { 0, 1 }; MPI_Comm row; OK(MPI_Cart_sub(g, remain, &row));
        int rs, nd; OK(MPI_Comm_size(row, &rs)); E(rs == dims[1], "cart_sub row size"); OK(MPI_Cartdim_get(row, &nd)); E(nd == 1, "cart_sub ndims");
        int rd[1], rp[1], rcoord[1]; OK(MPI_Cart_get(row, 1, rd, rp, rcoord)); E(rp[0] == 1 && rcoord[0] == coords[1], "cart_sub keeps periods and coords");
        cart_exchange(row, 1);
        int none[2] = { 0, 0 }; MPI_Comm pt; OK(MPI_Cart_sub(g, none, &pt)); OK(MPI_Comm_size(pt, &rs)); E(rs == 1, "cart_sub to nothing");
        OK(MPI_Comm_free(&pt)); OK(MPI_Comm_free(&row)); OK(MPI_Comm_free(&g));
        /* Cart_map: ranks past the grid get MPI_UNDEFINED */
        int nr, ld[1] = { size > 1 ? size - 1 : 1 }, lp[1] = { 0 };
        OK(MPI_Cart_map(MPI_COMM_WORLD, 1, ld, lp, &nr));
        if (rank < ld[0]) E(nr >= 0 && nr < ld[0], "cart_map in grid"); else E(nr == MPI_UNDEFINED, "cart_map outside grid gives %d", nr);
        /* a Cartesian grid smaller than the communicator */
        MPI_Comm small; OK(MPI_Cart_create(MPI_COMM_WORLD, 1, ld, lp, 0, &small));
        if (rank >= ld[0]) E(small == MPI_COMM_NULL, "outside grid gets COMM_NULL");
        else { cart_exchange(small, 1); OK(MPI_Comm_free(&small)); }
        int big[1] = { size + 1 }; MPI_Comm bg; E(MPI_Cart_create(MPI_COMM_WORLD, 1, big, lp, 0, &bg) != MPI_SUCCESS, "grid bigger than comm");
    }
    /* Graph: a ring on the first nnodes = max(1, size-1) processes, plus an isolated node */
    {
        int nn = size > 1 ? size - 1 : 1;
        int *index = malloc(sizeof(int) * (nn + 1)), *edges = malloc(sizeof(int) * 2 * nn), ne = 0;
        for (int i = 0; i < nn; i++) {
            if (nn > 2) { edges[ne++] = (i + nn - 1) % nn; edges[ne++] = (i + 1) % nn; }
            else if (nn == 2) edges[ne++] = 1 - i;
            index[i] = ne;
        }
        MPI_Comm gr; OK(MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &gr));
        int nr; OK(MPI_Graph_map(MPI_COMM_WORLD, nn, index, edges, &nr));
        if (rank >= nn) { E(gr == MPI_COMM_NULL, "graph outside"); E(nr == MPI_UNDEFINED, "graph_map outside"); }
        else {
            int t, nnodes, nedges, cnt, nb[4];
            OK(MPI_Topo_test(gr, &t)); E(t == MPI_GRAPH, "graph topo");
            OK(MPI_Graphdims_get(gr, &nnodes, &nedges)); E(nnodes == nn && nedges == ne, "graphdims");
            int *gi = malloc(sizeof(int) * (nn + 1)), *ge = malloc(sizeof(int) * (ne + 1));
            OK(MPI_Graph_get(gr, nn, ne, gi, ge)); for (int i = 0; i < nn; i++) E(gi[i] == index[i], "graph_get index");
            for (int i = 0; i < ne; i++) E(ge[i] == edges[i], "graph_get edges");
            OK(MPI_Graph_neighbors_count(gr, rank, &cnt)); OK(MPI_Graph_neighbors(gr, rank, 4, nb));
            neighbours(gr, cnt, nb, cnt, nb, "graph");
            MPI_Comm gd; OK(MPI_Comm_dup(gr, &gd)); OK(MPI_Topo_test(gd, &t)); E(t == MPI_GRAPH, "dup keeps graph");
            neighbours(gd, cnt, nb, cnt, nb, "graph dup");
            OK(MPI_Comm_free(&gd)); OK(MPI_Comm_free(&gr)); free(gi); free(ge);
        }
        free(index); free(edges);
        /* a graph with no edges at all */
        int idx0[1] = { 0 }; MPI_Comm g0; OK(MPI_Graph_create(MPI_COMM_WORLD, 1, idx0, NULL, 0, &g0));
        if (rank == 0) { int cnt; OK(MPI_Graph_neighbors_count(g0, 0, &cnt)); E(cnt == 0, "edgeless"); neighbours(g0, 0, NULL, 0, NULL, "edgeless graph"); OK(MPI_Comm_free(&g0)); }
    }
    /* Dist graphs */
    {
        /* adjacent, unweighted: receive from r-1 and r+2 (mod), send to r+1 and r-2 */
        int src[2] = { (rank + size - 1) % size, (rank + 2) % size }, dst[2] = { (rank + 1) % size, (rank + size - 2) % size };
        MPI_Comm dg; OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
        int t, in, out, w; OK(MPI_Topo_test(dg, &t)); E(t == MPI_DIST_GRAPH, "dist graph topo");
        OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); E(in == 2 && out == 2 && !w, "unweighted counts");
        int gs[2], gd[2]; OK(MPI_Dist_graph_neighbors(dg, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED));
        E(gs[0] == src[0] && gs[1] == src[1] && gd[0] == dst[0] && gd[1] == dst[1], "adjacent neighbours in order");
        neighbours(dg, 2, src, 2, dst, "dist adjacent");
        OK(MPI_Comm_free(&dg));
        /* weighted adjacent */
        int sw[2] = { 5, 6 }, dw[2] = { 7, 8 }, gsw[2], gdw[2];
        OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &dg));
        OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); E(w, "weighted flag");
        OK(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw)); E(gsw[0] == 5 && gsw[1] == 6 && gdw[0] == 7 && gdw[1] == 8, "weights back");
        OK(MPI_Comm_free(&dg));
        /* no neighbours at all, MPI_WEIGHTS_EMPTY */
        OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
        OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); E(in == 0 && out == 0, "empty dist graph");
        neighbours(dg, 0, NULL, 0, NULL, "empty dist graph");
        OK(MPI_Comm_free(&dg));
        /* general form: rank 0 describes every edge r -> r+1 (weights r), others none */
        int n = rank == 0 ? size : 0;
        int *sources = malloc(sizeof(int) * (size + 1)), *degrees = malloc(sizeof(int) * (size + 1)), *dests = malloc(sizeof(int) * (size + 1)), *wts = malloc(sizeof(int) * (size + 1));
        for (int i = 0; i < size; i++) { sources[i] = i; degrees[i] = 1; dests[i] = (i + 1) % size; wts[i] = i; }
        OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, n ? wts : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg));
        OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); E(in == 1 && out == 1 && w, "general dist graph counts %d %d %d", in, out, w);
        OK(MPI_Dist_graph_neighbors(dg, 1, gs, gsw, 1, gd, gdw));
        E(gs[0] == (rank + size - 1) % size && gsw[0] == (rank + size - 1) % size && gd[0] == (rank + 1) % size && gdw[0] == rank, "general dist graph neighbours");
        neighbours(dg, 1, gs, 1, gd, "dist general");
        OK(MPI_Comm_free(&dg));
        /* general form, unweighted, each rank describes its own out-edges, with a duplicate edge */
        int mysrc[1] = { rank }, mydeg[1] = { 2 }, mydst[2] = { (rank + 1) % size, (rank + 1) % size };
        OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, mysrc, mydeg, mydst, MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &dg));
        OK(MPI_Dist_graph_neighbors_count(dg, &in, &out, &w)); E(in == 2 && out == 2 && !w, "duplicate edges count twice");
        int s2[2], d2[2]; OK(MPI_Dist_graph_neighbors(dg, 2, s2, MPI_UNWEIGHTED, 2, d2, MPI_UNWEIGHTED));
        neighbours(dg, 2, s2, 2, d2, "dist duplicate edges");
        OK(MPI_Comm_free(&dg));
        free(sources); free(degrees); free(dests); free(wts);
    }
    int tot;
    OK(MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) { if (tot) printf(" Found %d errors\n", tot); else printf(" No Errors\n"); }
    OK(MPI_Finalize());
    return 0;
}

/* Every collective, with checked results, on any number of ranks: several
 * roots, MPI_IN_PLACE, a derived datatype, blocking and immediate versions,
 * MAXLOC/MINLOC, a non-commutative user operation. */
#include "check.h"

static int rank, size;

/* Affine maps x -> a*x + b composed in rank order (non-commutative). */
typedef struct { long long a, b; } aff;
#define P 1000003LL
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt) {
    aff *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        aff r = { (x[i].a * y[i].a) % P, (x[i].a * y[i].b + x[i].b) % P };
        y[i] = r;
    }
}
static aff mine(int r, int i) { aff v = { r + 2 + i, r + 1 }; return v; }
static aff prod(int from, int to, int i) { /* ranks from..to-1 in order */
    aff acc = { 1, 0 };
    for (int r = from; r < to; r++) { aff m = mine(r, i); aff t = acc; compose(&t, &m, &(int){1}, NULL); acc = m; }
    return acc;
}

static void wait1(MPI_Request *r) { OK(MPI_Wait(r, MPI_STATUS_IGNORE)); CHECK(*r == MPI_REQUEST_NULL); }

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int n = size, N = 3;
    int *a = malloc(sizeof(int) * 64 * n * n), *b = malloc(sizeof(int) * 64 * n * n);
    int counts[16], displs[16], rcounts[16], rdispls[16];
    MPI_Request rq;
    int roots[2] = { 0, size - 1 };

    for (int ri = 0; ri < 2; ri++) {
        int root = roots[ri];
        /* bcast, ibcast */
        for (int i = 0; i < N; i++) a[i] = rank == root ? 100 * root + i : -1;
        OK(MPI_Bcast(a, N, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) CHECK(a[i] == 100 * root + i);
        for (int i = 0; i < N; i++) a[i] = rank == root ? 7 * root + i : -1;
        OK(MPI_Ibcast(a, N, MPI_INT, root, MPI_COMM_WORLD, &rq)); wait1(&rq);
        for (int i = 0; i < N; i++) CHECK(a[i] == 7 * root + i);
        /* gather, igather, in place */
        for (int i = 0; i < N; i++) a[i] = rank * 10 + i;
        for (int i = 0; i < N * n; i++) b[i] = -1;
        OK(MPI_Gather(a, N, MPI_INT, b, N, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root) for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 10 + i);
        for (int i = 0; i < N * n; i++) b[i] = -1;
        OK(MPI_Igather(a, N, MPI_INT, b, N, MPI_INT, root, MPI_COMM_WORLD, &rq)); wait1(&rq);
        if (rank == root) for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 10 + i);
        if (rank == root) {
            for (int i = 0; i < N * n; i++) b[i] = -1;
            for (int i = 0; i < N; i++) b[root * N + i] = root * 10 + i;
            OK(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, N, MPI_INT, root, MPI_COMM_WORLD));
            for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 10 + i);
        } else OK(MPI_Gather(a, N, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
        /* gatherv: rank r sends r+1 ints, placed in reverse order */
        int tot = 0;
        for (int r = n - 1; r >= 0; r--) { counts[r] = r + 1; displs[r] = tot; tot += r + 1; }
        for (int i = 0; i <= rank; i++) a[i] = rank * 100 + i;
        for (int i = 0; i < tot; i++) b[i] = -1;
        OK(MPI_Gatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
        if (rank == root) for (int r = 0; r < n; r++) for (int i = 0; i <= r; i++) CHECK(b[displs[r] + i] == r * 100 + i);
        for (int i = 0; i < tot; i++) b[i] = -1;
        OK(MPI_Igatherv(a, rank + 1, MPI_INT, b, rank == root ? counts : NULL, rank == root ? displs : NULL, MPI_INT, root, MPI_COMM_WORLD, &rq)); wait1(&rq);
        if (rank == root) for (int r = 0; r < n; r++) for (int i = 0; i <= r; i++) CHECK(b[displs[r] + i] == r * 100 + i);
        /* scatter, iscatter, in place */
        if (rank == root) for (int i = 0; i < N * n; i++) b[i] = 1000 + i;
        for (int i = 0; i < N; i++) a[i] = -1;
        OK(MPI_Scatter(b, N, MPI_INT, a, N, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++) CHECK(a[i] == 1000 + rank * N + i);
        for (int i = 0; i < N; i++) a[i] = -1;
        OK(MPI_Iscatter(b, N, MPI_INT, a, N, MPI_INT, root, MPI_COMM_WORLD, &rq)); wait1(&rq);
        for (int i = 0; i < N; i++) CHECK(a[i] == 1000 + rank * N + i);
        if (rank == root) OK(MPI_Scatter(b, N, MPI_INT, MPI_IN_PLACE, N, MPI_INT, root, MPI_COMM_WORLD));
        else { OK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, a, N, MPI_INT, root, MPI_COMM_WORLD)); for (int i = 0; i < N; i++) CHECK(a[i] == 1000 + rank * N + i); }
        /* scatterv */
        if (rank == root) for (int i = 0; i < tot; i++) b[i] = 5000 + i;
        for (int i = 0; i <= rank; i++) a[i] = -1;
        OK(MPI_Scatterv(b, counts, displs, MPI_INT, a, rank + 1, MPI_INT, root, MPI_COMM_WORLD));
        for (int i = 0; i <= rank; i++) CHECK(a[i] == 5000 + displs[rank] + i);
        OK(MPI_Iscatterv(b, counts, displs, MPI_INT, a, rank + 1, MPI_INT, root, MPI_COMM_WORLD, &rq)); wait1(&rq);
        for (int i = 0; i <= rank; i++) CHECK(a[i] == 5000 + displs[rank] + i);
        /* reduce, ireduce, in place */
        for (int i = 0; i < N; i++) { a[i] = rank + i; b[i] = -1; }
        OK(MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
        if (rank == root) for (int i = 0; i < N; i++) CHECK(b[i] == n * (n - 1) / 2 + n * i);
        OK(MPI_Ireduce(a, b, N, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD, &rq)); wait1(&rq);
        if (rank == root) for (int i = 0; i < N; i++) CHECK(b[i] == n - 1 + i);
        if (rank == root) { for (int i = 0; i < N; i++) b[i] = rank + i; OK(MPI_Reduce(MPI_IN_PLACE, b, N, MPI_INT, MPI_MIN, root, MPI_COMM_WORLD)); for (int i = 0; i < N; i++) CHECK(b[i] == i); }
        else OK(MPI_Reduce(a, NULL, N, MPI_INT, MPI_MIN, root, MPI_COMM_WORLD));
        /* non-commutative user op, to a root */
        {
            MPI_Datatype at; MPI_Op op; aff x[2], y[2];
            OK(MPI_Type_contiguous(2, MPI_LONG_LONG, &at)); OK(MPI_Type_commit(&at));
            OK(MPI_Op_create(compose, 0, &op));
            int commute = 1; OK(MPI_Op_commutative(op, &commute)); CHECK(commute == 0);
            for (int i = 0; i < 2; i++) x[i] = mine(rank, i);
            OK(MPI_Reduce(x, y, 2, at, op, root, MPI_COMM_WORLD));
            if (rank == root) for (int i = 0; i < 2; i++) { aff e = prod(0, n, i); CHECK(y[i].a == e.a && y[i].b == e.b); }
            OK(MPI_Allreduce(x, y, 2, at, op, MPI_COMM_WORLD));
            for (int i = 0; i < 2; i++) { aff e = prod(0, n, i); CHECK(y[i].a == e.a && y[i].b == e.b); }
            OK(MPI_Scan(x, y, 2, at, op, MPI_COMM_WORLD));
            for (int i = 0; i < 2; i++) { aff e = prod(0, rank + 1, i); CHECK(y[i].a == e.a && y[i].b == e.b); }
            OK(MPI_Exscan(x, y, 2, at, op, MPI_COMM_WORLD));
            if (rank > 0) for (int i = 0; i < 2; i++) { aff e = prod(0, rank, i); CHECK(y[i].a == e.a && y[i].b == e.b); }
            OK(MPI_Op_free(&op)); OK(MPI_Type_free(&at));
        }
        /* bcast of a derived type (a strided column) */
        {
            MPI_Datatype col; int m[4][5];
            OK(MPI_Type_vector(4, 1, 5, MPI_INT, &col)); OK(MPI_Type_commit(&col));
            for (int i = 0; i < 4; i++) for (int j = 0; j < 5; j++) m[i][j] = rank == root ? i * 5 + j : -1;
            OK(MPI_Bcast(&m[0][2], 1, col, root, MPI_COMM_WORLD));
            for (int i = 0; i < 4; i++) for (int j = 0; j < 5; j++) CHECK(m[i][j] == (j == 2 || rank == root ? i * 5 + j : -1));
            /* gather one column from everybody into contiguous ints at the root */
            for (int i = 0; i < 4; i++) m[i][1] = rank * 4 + i;
            for (int i = 0; i < 4 * n; i++) b[i] = -1;
            OK(MPI_Gather(&m[0][1], 1, col, b, 4, MPI_INT, root, MPI_COMM_WORLD));
            if (rank == root) for (int i = 0; i < 4 * n; i++) CHECK(b[i] == i);
            OK(MPI_Type_free(&col));
        }
    }

    /* allgather, iallgather, in place */
    for (int i = 0; i < N; i++) a[i] = rank * 10 + i;
    OK(MPI_Allgather(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 10 + i);
    for (int i = 0; i < N * n; i++) b[i] = -1;
    OK(MPI_Iallgather(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, &rq)); wait1(&rq);
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 10 + i);
    for (int i = 0; i < N * n; i++) b[i] = i / N == rank ? rank * 10 + i % N : -1;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, N, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 10 + i);
    /* allgatherv */
    int tot = 0;
    for (int r = 0; r < n; r++) { counts[r] = r + 1; displs[r] = tot + r; tot += 2 * r + 1; }
    for (int i = 0; i <= rank; i++) a[i] = rank * 100 + i;
    for (int i = 0; i < tot; i++) b[i] = -7;
    OK(MPI_Allgatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) { for (int i = 0; i <= r; i++) CHECK(b[displs[r] + i] == r * 100 + i); if (r > 0) CHECK(b[displs[r] - 1] == -7); }
    OK(MPI_Iallgatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq)); wait1(&rq);
    for (int r = 0; r < n; r++) for (int i = 0; i <= r; i++) CHECK(b[displs[r] + i] == r * 100 + i);
    /* the same blocks at negative displacements from the end of the blocks */
    for (int i = 0; i < tot; i++) b[i] = -7;
    { int neg[16]; for (int r = 0; r < n; r++) neg[r] = displs[r] - tot;
      OK(MPI_Allgatherv(a, rank + 1, MPI_INT, b + tot, counts, neg, MPI_INT, MPI_COMM_WORLD));
      for (int r = 0; r < n; r++) { for (int i = 0; i <= r; i++) CHECK(b[displs[r] + i] == r * 100 + i); if (r > 0) CHECK(b[displs[r] - 1] == -7); } }
    /* alltoall, ialltoall, in place */
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) a[r * N + i] = rank * 1000 + r * 10 + i;
    OK(MPI_Alltoall(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 1000 + rank * 10 + i);
    for (int i = 0; i < N * n; i++) b[i] = -1;
    OK(MPI_Ialltoall(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, &rq)); wait1(&rq);
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 1000 + rank * 10 + i);
    for (int i = 0; i < N * n; i++) b[i] = a[i];
    OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, N, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) for (int i = 0; i < N; i++) CHECK(b[r * N + i] == r * 1000 + rank * 10 + i);
    /* alltoallv: rank sends r+1 ints to rank r; receives rank+1 from everyone */
    int st = 0, rt = 0;
    for (int r = 0; r < n; r++) { counts[r] = r + 1; displs[r] = st; st += r + 1; rcounts[r] = rank + 1; rdispls[r] = rt; rt += rank + 1; }
    for (int r = 0; r < n; r++) for (int i = 0; i <= r; i++) a[displs[r] + i] = rank * 100 + r * 10 + i;
    OK(MPI_Alltoallv(a, counts, displs, MPI_INT, b, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) for (int i = 0; i <= rank; i++) CHECK(b[rdispls[r] + i] == r * 100 + rank * 10 + i);
    for (int i = 0; i < rt; i++) b[i] = -1;
    OK(MPI_Ialltoallv(a, counts, displs, MPI_INT, b, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD, &rq)); wait1(&rq);
    for (int r = 0; r < n; r++) for (int i = 0; i <= rank; i++) CHECK(b[rdispls[r] + i] == r * 100 + rank * 10 + i);
    /* the same exchange at negative displacements from both buffers' ends (each side rebased at its lowest block) */
    { int nsd[16], nrd[16];
      for (int r = 0; r < n; r++) { nsd[r] = displs[r] - st; nrd[r] = rdispls[r] - rt; }
      for (int i = 0; i < rt; i++) b[i] = -1;
      OK(MPI_Alltoallv(a + st, counts, nsd, MPI_INT, b + rt, rcounts, nrd, MPI_INT, MPI_COMM_WORLD));
      for (int r = 0; r < n; r++) for (int i = 0; i <= rank; i++) CHECK(b[rdispls[r] + i] == r * 100 + rank * 10 + i); }
    /* alltoallw: same exchange with byte displacements and per-peer types */
    {
        MPI_Datatype sts[16], rts[16]; int sd[16], rd[16];
        for (int r = 0; r < n; r++) { sts[r] = rts[r] = MPI_INT; sd[r] = displs[r] * 4; rd[r] = rdispls[r] * 4; }
        for (int i = 0; i < rt; i++) b[i] = -1;
        OK(MPI_Alltoallw(a, counts, sd, sts, b, rcounts, rd, rts, MPI_COMM_WORLD));
        for (int r = 0; r < n; r++) for (int i = 0; i <= rank; i++) CHECK(b[rdispls[r] + i] == r * 100 + rank * 10 + i);
        for (int i = 0; i < rt; i++) b[i] = -1;
        OK(MPI_Ialltoallw(a, counts, sd, sts, b, rcounts, rd, rts, MPI_COMM_WORLD, &rq)); wait1(&rq);
        for (int r = 0; r < n; r++) for (int i = 0; i <= rank; i++) CHECK(b[rdispls[r] + i] == r * 100 + rank * 10 + i);
    }
    /* allreduce, iallreduce, in place */
    for (int i = 0; i < N; i++) a[i] = rank + i;
    OK(MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) CHECK(b[i] == n * (n - 1) / 2 + n * i);
    OK(MPI_Iallreduce(a, b, N, MPI_INT, MPI_PROD, MPI_COMM_WORLD, &rq)); wait1(&rq);
    { long long e = 1; for (int r = 0; r < n; r++) e *= r + 1; CHECK(b[1] == e); }
    for (int i = 0; i < N; i++) b[i] = rank + i;
    OK(MPI_Allreduce(MPI_IN_PLACE, b, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) CHECK(b[i] == n - 1 + i);
    {
        double d[2] = { rank * 1.5, -rank }, dr[2];
        OK(MPI_Allreduce(d, dr, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CHECK(dr[0] == 1.5 * n * (n - 1) / 2 && dr[1] == -(double)(n * (n - 1) / 2));
    }
    /* MAXLOC / MINLOC */
    {
        struct { double v; int i; } x[2], y[2];
        x[0].v = (rank * 7) % n; x[0].i = rank;      /* ties: the smallest index wins */
        x[1].v = -rank; x[1].i = rank * 10;
        OK(MPI_Allreduce(x, y, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
        double best = -1; int bi = -1;
        for (int r = 0; r < n; r++) if ((r * 7) % n > best) { best = (r * 7) % n; bi = r; }
        CHECK(y[0].v == best && y[0].i == bi);
        CHECK(y[1].v == 0 && y[1].i == 0);
        OK(MPI_Reduce(x, y, 2, MPI_DOUBLE_INT, MPI_MINLOC, size - 1, MPI_COMM_WORLD));
        if (rank == size - 1) { CHECK(y[0].v == 0 && y[0].i == 0); CHECK(y[1].v == -(n - 1) && y[1].i == (n - 1) * 10); }
        int p[2] = { rank % 2, rank }, q[2];
        OK(MPI_Allreduce(p, q, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD)); CHECK(q[0] == 0 && q[1] == 0);
        OK(MPI_Allreduce(p, q, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD)); CHECK(q[0] == (n > 1) && q[1] == (n > 1));
    }
    /* reduce_scatter, reduce_scatter_block, in place */
    tot = 0;
    for (int r = 0; r < n; r++) { counts[r] = r + 1; tot += r + 1; }
    for (int i = 0; i < tot; i++) a[i] = rank + i;
    OK(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    { int off = rank * (rank + 1) / 2; for (int i = 0; i <= rank; i++) CHECK(b[i] == n * (n - 1) / 2 + n * (off + i)); }
    OK(MPI_Ireduce_scatter(a, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)); wait1(&rq);
    { int off = rank * (rank + 1) / 2; for (int i = 0; i <= rank; i++) CHECK(b[i] == n * (n - 1) / 2 + n * (off + i)); }
    for (int i = 0; i < N * n; i++) a[i] = rank * i;
    OK(MPI_Reduce_scatter_block(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) CHECK(b[i] == (rank * N + i) * n * (n - 1) / 2);
    OK(MPI_Ireduce_scatter_block(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)); wait1(&rq);
    for (int i = 0; i < N; i++) CHECK(b[i] == (rank * N + i) * n * (n - 1) / 2);
    for (int i = 0; i < N * n; i++) b[i] = rank * i;
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) CHECK(b[i] == (rank * N + i) * n * (n - 1) / 2);
    /* scan, exscan, iscan, iexscan, in place */
    for (int i = 0; i < N; i++) a[i] = rank + 1 + i;
    OK(MPI_Scan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) CHECK(b[i] == (rank + 1) * (rank + 2) / 2 + (rank + 1) * i);
    OK(MPI_Iscan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)); wait1(&rq);
    for (int i = 0; i < N; i++) CHECK(b[i] == (rank + 1) * (rank + 2) / 2 + (rank + 1) * i);
    OK(MPI_Exscan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank > 0) for (int i = 0; i < N; i++) CHECK(b[i] == rank * (rank + 1) / 2 + rank * i);
    OK(MPI_Iexscan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)); wait1(&rq);
    if (rank > 0) for (int i = 0; i < N; i++) CHECK(b[i] == rank * (rank + 1) / 2 + rank * i);
    for (int i = 0; i < N; i++) b[i] = rank + 1 + i;
    OK(MPI_Scan(MPI_IN_PLACE, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) CHECK(b[i] == (rank + 1) * (rank + 2) / 2 + (rank + 1) * i);
    /* several immediate collectives in flight at once */
    {
        MPI_Request rs[3]; int x = rank, s1, s2, bc = rank == 0 ? 42 : 0;
        OK(MPI_Iallreduce(&x, &s1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rs[0]));
        OK(MPI_Ibcast(&bc, 1, MPI_INT, 0, MPI_COMM_WORLD, &rs[1]));
        OK(MPI_Iallreduce(&x, &s2, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rs[2]));
        OK(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
        CHECK(s1 == n * (n - 1) / 2 && s2 == n - 1 && bc == 42);
    }
    /* collectives on a duplicate keep apart from the parent's */
    {
        MPI_Comm d; int x = 1, y = 0;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d)); CHECK(y == n);
        OK(MPI_Comm_free(&d));
    }
    free(a); free(b);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

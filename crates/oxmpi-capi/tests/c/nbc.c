/* Non-blocking collectives started together and completed out of order
 * (on WORLD and on dup'd communicators), v/w variants with MPI_IN_PLACE,
 * alltoallw with zero counts and mixed types, and every collective on an
 * intercommunicator (blocking and non-blocking, MPI_ROOT/MPI_PROC_NULL).
 * Rank 0 prints " No Errors". */
#include "check.h"

static int rank, size, errs;
#define E(cond, ...) do { if (!(cond)) { errs++; if (errs < 20) { fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } } while (0)

static void overlapped(MPI_Comm comm) {
    int r, n;
    MPI_Comm_rank(comm, &r); MPI_Comm_size(comm, &n);
    enum { K = 16 };
    MPI_Request rq[K];
    int bc[4], red[4], ared[4], ag[64], a2a_s[64], a2a_r[64], sc[4], ex[4], scat[4], gat[64], rsb[4], rs_s[64];
    int sbuf[4], agv[64], rcounts[64], displs[64], rs[4];
    int k = 0;
    for (int i = 0; i < 4; i++) { bc[i] = r == 0 ? 40 + i : -1; sbuf[i] = r + i; }
    OK(MPI_Ibarrier(comm, &rq[k++]));
    OK(MPI_Ibcast(bc, 4, MPI_INT, 0, comm, &rq[k++]));
    OK(MPI_Ireduce(sbuf, red, 4, MPI_INT, MPI_SUM, n - 1, comm, &rq[k++]));
    OK(MPI_Iallreduce(sbuf, ared, 4, MPI_INT, MPI_MAX, comm, &rq[k++]));
    OK(MPI_Iallgather(&r, 1, MPI_INT, ag, 1, MPI_INT, comm, &rq[k++]));
    for (int i = 0; i < n; i++) a2a_s[i] = r * 100 + i;
    OK(MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, comm, &rq[k++]));
    OK(MPI_Iscan(sbuf, sc, 4, MPI_INT, MPI_SUM, comm, &rq[k++]));
    OK(MPI_Iexscan(sbuf, ex, 4, MPI_INT, MPI_SUM, comm, &rq[k++]));
    int scsrc[256]; for (int i = 0; i < 4 * n; i++) scsrc[i] = i;
    OK(MPI_Iscatter(scsrc, 4, MPI_INT, scat, 4, MPI_INT, n / 2, comm, &rq[k++]));
    OK(MPI_Igather(&r, 1, MPI_INT, gat, 1, MPI_INT, n / 2, comm, &rq[k++]));
    for (int i = 0; i < 4 * n; i++) rs_s[i] = r + i;
    OK(MPI_Ireduce_scatter_block(rs_s, rsb, 4, MPI_INT, MPI_SUM, comm, &rq[k++]));
    for (int i = 0; i < n; i++) { rcounts[i] = i % 2 + 1; displs[i] = i ? displs[i - 1] + rcounts[i - 1] + 1 : 0; }
    int mine[2] = { r * 3, r * 3 + 1 };
    OK(MPI_Iallgatherv(mine, r % 2 + 1, MPI_INT, agv, rcounts, displs, MPI_INT, comm, &rq[k++]));
    int rsc[64]; for (int i = 0; i < n; i++) rsc[i] = 1;
    OK(MPI_Ireduce_scatter(rs_s, rs, rsc, MPI_INT, MPI_SUM, comm, &rq[k++]));
    /* complete in reverse order with Wait, then check */
    for (int i = k - 1; i >= 0; i--) OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) {
        E(bc[i] == 40 + i, "ibcast");
        if (r == n - 1) E(red[i] == n * i + n * (n - 1) / 2, "ireduce");
        E(ared[i] == n - 1 + i, "iallreduce");
        E(sc[i] == (r + 1) * i + r * (r + 1) / 2, "iscan");
        if (r > 0) E(ex[i] == r * i + r * (r - 1) / 2, "iexscan");
        E(scat[i] == 4 * r + i, "iscatter");
        E(rsb[i] == n * (4 * r + i) + n * (n - 1) / 2, "ireduce_scatter_block");
    }
    E(rs[0] == n * r + n * (n - 1) / 2, "ireduce_scatter");
    for (int i = 0; i < n; i++) {
        E(ag[i] == i, "iallgather");
        E(a2a_r[i] == i * 100 + r, "ialltoall");
        if (r == n / 2) E(gat[i] == i, "igather");
        for (int j = 0; j < rcounts[i]; j++) E(agv[displs[i] + j] == i * 3 + j, "iallgatherv");
    }
}

static void many_outstanding(MPI_Comm comm) {
    /* 64 ibarriers/iallreduces outstanding, completed with Waitall and Testall loops */
    enum { M = 64 };
    MPI_Request rq[M];
    int in[M], out[M], n;
    MPI_Comm_size(comm, &n);
    for (int i = 0; i < M; i++) {
        in[i] = i;
        if (i % 2) OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, comm, &rq[i]));
        else OK(MPI_Ibarrier(comm, &rq[i]));
    }
    int flag = 0;
    while (!flag) OK(MPI_Testall(M, rq, &flag, MPI_STATUSES_IGNORE));
    for (int i = 1; i < M; i += 2) E(out[i] == i * n, "iallreduce %d", i);
    for (int i = 0; i < M; i++) E(rq[i] == MPI_REQUEST_NULL, "request freed");
    /* Waitany / Waitsome over collectives */
    for (int i = 0; i < 8; i++) OK(MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, comm, &rq[i]));
    for (int c = 0; c < 8; c++) { int idx; OK(MPI_Waitany(8, rq, &idx, MPI_STATUS_IGNORE)); E(idx >= 0 && idx < 8, "waitany index"); }
    for (int i = 0; i < 8; i++) E(out[i] == i * n, "waitany results");
    /* request_free is not allowed... but MPI_Test on an ibarrier eventually completes */
    MPI_Request b; OK(MPI_Ibarrier(comm, &b));
    int done = 0; while (!done) OK(MPI_Test(&b, &done, MPI_STATUS_IGNORE));
    E(b == MPI_REQUEST_NULL, "ibarrier test");
    MPI_Status st; OK(MPI_Ibarrier(comm, &b)); OK(MPI_Wait(&b, &st));
}

static void vw_in_place(MPI_Comm comm) {
    int r, n;
    MPI_Comm_rank(comm, &r); MPI_Comm_size(comm, &n);
    int *buf = malloc(sizeof(int) * 16 * n * n), counts[64], displs[64], sd[64], rd[64];
    MPI_Datatype types[64];
    /* allgatherv in place: rank i contributes i+1 ints at displs[i] */
    int tot = 0;
    for (int i = 0; i < n; i++) { counts[i] = i + 1; displs[i] = tot; tot += i + 2; }
    for (int i = 0; i < tot; i++) buf[i] = -1;
    for (int j = 0; j <= r; j++) buf[displs[r] + j] = 10 * r + j;
    OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm));
    for (int i = 0; i < n; i++) for (int j = 0; j <= i; j++) E(buf[displs[i] + j] == 10 * i + j, "allgatherv in place");
    /* allgather in place */
    for (int i = 0; i < 2 * n; i++) buf[i] = (i / 2 == r) ? r * 7 + i % 2 : -1;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, comm));
    for (int i = 0; i < 2 * n; i++) E(buf[i] == (i / 2) * 7 + i % 2, "allgather in place");
    /* alltoall in place */
    for (int i = 0; i < n; i++) buf[i] = r * 1000 + i;
    OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm));
    for (int i = 0; i < n; i++) E(buf[i] == i * 1000 + r, "alltoall in place");
    /* alltoallv in place: i gets (r+i)%3 ints from r */
    tot = 0;
    for (int i = 0; i < n; i++) { counts[i] = (r + i) % 3; displs[i] = tot; tot += counts[i]; }
    for (int i = 0; i < n; i++) for (int j = 0; j < counts[i]; j++) buf[displs[i] + j] = r * 100 + i * 10 + j;
    OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm));
    for (int i = 0; i < n; i++) for (int j = 0; j < counts[i]; j++) E(buf[displs[i] + j] == i * 100 + r * 10 + j, "alltoallv in place");
    /* alltoallw in place with byte displacements */
    for (int i = 0; i < n; i++) { counts[i] = 2; displs[i] = (int)(i * 2 * sizeof(int)); types[i] = MPI_INT; }
    for (int i = 0; i < n; i++) { buf[2 * i] = r; buf[2 * i + 1] = i; }
    OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, displs, types, comm));
    for (int i = 0; i < n; i++) E(buf[2 * i] == i && buf[2 * i + 1] == r, "alltoallw in place");
    /* alltoallw with zero counts everywhere but to the right neighbour, mixed types */
    int right = (r + 1) % n, left = (r + n - 1) % n;
    double dv = r + 0.5, dr = -1; int iv[3] = { r, r, r }, ir[3] = { -1, -1, -1 };
    for (int i = 0; i < n; i++) { counts[i] = 0; sd[i] = rd[i] = 0; types[i] = MPI_INT; }
    MPI_Datatype rtypes[64]; int rcounts[64];
    for (int i = 0; i < n; i++) { rcounts[i] = 0; rtypes[i] = MPI_INT; }
    counts[right] = 1; types[right] = MPI_DOUBLE;
    rcounts[left] = 1; rtypes[left] = MPI_DOUBLE;
    OK(MPI_Alltoallw(&dv, counts, sd, types, &dr, rcounts, rd, rtypes, comm));
    E(dr == left + 0.5, "alltoallw neighbour double");
    for (int i = 0; i < n; i++) { counts[i] = 0; rcounts[i] = 0; }
    OK(MPI_Alltoallw(iv, counts, sd, types, ir, rcounts, rd, rtypes, comm));
    E(ir[0] == -1, "alltoallw all zero");
    /* gatherv / scatterv in place at the root */
    for (int root = 0; root < n; root++) {
        tot = 0;
        for (int i = 0; i < n; i++) { counts[i] = i % 3; displs[i] = tot; tot += counts[i] + 1; }
        if (r == root) {
            for (int i = 0; i < tot; i++) buf[i] = -5;
            for (int j = 0; j < counts[r]; j++) buf[displs[r] + j] = r * 10 + j;
            OK(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, root, comm));
            for (int i = 0; i < n; i++) for (int j = 0; j < counts[i]; j++) E(buf[displs[i] + j] == i * 10 + j, "gatherv in place");
            OK(MPI_Scatterv(buf, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, comm));
        } else {
            int mine[2] = { r * 10, r * 10 + 1 }, got[2] = { -1, -1 };
            OK(MPI_Gatherv(mine, counts[r], MPI_INT, NULL, NULL, NULL, MPI_INT, root, comm));
            OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, got, counts[r], MPI_INT, root, comm));
            for (int j = 0; j < counts[r]; j++) E(got[j] == r * 10 + j, "scatterv");
        }
    }
    /* reduce_scatter in place, with a zero count for rank 0 */
    tot = 0;
    for (int i = 0; i < n; i++) { counts[i] = i == 0 ? 0 : i % 3 + 1; tot += counts[i]; }
    for (int i = 0; i < tot; i++) buf[i] = r + i;
    OK(MPI_Reduce_scatter(MPI_IN_PLACE, buf, counts, MPI_INT, MPI_SUM, comm));
    { int off = 0; for (int i = 0; i < r; i++) off += counts[i];
      for (int j = 0; j < counts[r]; j++) E(buf[j] == n * (off + j) + n * (n - 1) / 2, "reduce_scatter in place"); }
    for (int i = 0; i < 3 * n; i++) buf[i] = r * i;
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, 3, MPI_INT, MPI_SUM, comm));
    for (int j = 0; j < 3; j++) E(buf[j] == (3 * r + j) * n * (n - 1) / 2, "reduce_scatter_block in place");
    /* scan / exscan in place */
    buf[0] = r + 1;
    OK(MPI_Scan(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm)); E(buf[0] == (r + 1) * (r + 2) / 2, "scan in place");
    buf[0] = r + 1;
    OK(MPI_Exscan(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm)); if (r > 0) E(buf[0] == r * (r + 1) / 2, "exscan in place");
    /* non-blocking in-place variants */
    MPI_Request rq;
    for (int i = 0; i < n; i++) buf[i] = r * 1000 + i;
    OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) E(buf[i] == i * 1000 + r, "ialltoall in place");
    for (int i = 0; i < n; i++) { counts[i] = 1; displs[i] = i; types[i] = MPI_INT; buf[i] = r * 1000 + i; sd[i] = (int)(i * sizeof(int)); }
    OK(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) E(buf[i] == i * 1000 + r, "ialltoallv in place");
    OK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, buf, counts, sd, types, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) E(buf[i] == r * 1000 + i, "ialltoallw in place");
    for (int i = 0; i < n; i++) buf[i] = (i == r) ? r : -1;
    OK(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) E(buf[i] == i, "iallgatherv in place");
    buf[0] = 1;
    OK(MPI_Iscan(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); E(buf[0] == r + 1, "iscan in place");
    buf[0] = 1;
    OK(MPI_Iexscan(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); if (r) E(buf[0] == r, "iexscan in place");
    if (r == 0) { buf[0] = 5; OK(MPI_Ireduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, 0, comm, &rq)); }
    else { int v = 5; OK(MPI_Ireduce(&v, NULL, 1, MPI_INT, MPI_SUM, 0, comm, &rq)); }
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); if (r == 0) E(buf[0] == 5 * n, "ireduce in place");
    for (int i = 0; i < n; i++) buf[i] = r + i;
    OK(MPI_Ireduce_scatter_block(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, comm, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    E(buf[0] == n * r + n * (n - 1) / 2, "ireduce_scatter_block in place");
    free(buf);
}

/* Derived datatypes in collectives: a vector column sent, contiguous received. */
static void derived(MPI_Comm comm) {
    int r, n;
    MPI_Comm_rank(comm, &r); MPI_Comm_size(comm, &n);
    MPI_Datatype col, rcol;
    OK(MPI_Type_vector(3, 1, 4, MPI_INT, &col)); OK(MPI_Type_commit(&col));
    OK(MPI_Type_create_resized(col, 0, sizeof(int), &rcol)); OK(MPI_Type_commit(&rcol));
    int m[12], *all = malloc(sizeof(int) * 3 * n), *back = malloc(sizeof(int) * 12 * n);
    for (int i = 0; i < 12; i++) m[i] = r * 100 + i;
    OK(MPI_Allgather(m + 1, 1, col, all, 3, MPI_INT, comm));
    for (int i = 0; i < n; i++) for (int j = 0; j < 3; j++) E(all[3 * i + j] == i * 100 + 1 + 4 * j, "allgather vector column");
    /* a column type resized to one int: gathered columns interleave into rows */
    int sendv[3] = { r, r + 10, r + 20 };
    if (n <= 4) {
        OK(MPI_Allgather(sendv, 3, MPI_INT, back, 1, rcol, comm));
        for (int i = 0; i < n; i++) for (int j = 0; j < 3; j++) E(back[4 * j + i] == i + 10 * j, "allgather into resized columns");
    }
    /* bcast of a struct type */
    struct { double d; char c; int i[2]; } s = { 0, 0, { 0, 0 } };
    int bl[3] = { 1, 1, 2 }; MPI_Aint dp[3]; MPI_Datatype ty[3] = { MPI_DOUBLE, MPI_CHAR, MPI_INT }, st;
    MPI_Get_address(&s.d, &dp[0]); MPI_Get_address(&s.c, &dp[1]); MPI_Get_address(&s.i, &dp[2]);
    dp[2] -= dp[0]; dp[1] -= dp[0]; dp[0] = 0;
    OK(MPI_Type_create_struct(3, bl, dp, ty, &st)); OK(MPI_Type_commit(&st));
    if (r == n - 1) { s.d = 2.5; s.c = 'x'; s.i[0] = 7; s.i[1] = 8; }
    OK(MPI_Bcast(&s, 1, st, n - 1, comm));
    E(s.d == 2.5 && s.c == 'x' && s.i[0] == 7 && s.i[1] == 8, "bcast struct");
    /* reduce on a vector of doubles (every other element) */
    double dv[8], dres[8];
    for (int i = 0; i < 8; i++) { dv[i] = r + i; dres[i] = -1; }
    MPI_Datatype everyother;
    OK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &everyother)); OK(MPI_Type_commit(&everyother));
    OK(MPI_Allreduce(dv, dres, 1, everyother, MPI_SUM, comm));
    for (int i = 0; i < 8; i++) E(i % 2 ? dres[i] == -1 : dres[i] == n * i + n * (n - 1) / 2.0, "allreduce on vector type [%d]=%g", i, dres[i]);
    MPI_Type_free(&everyother); MPI_Type_free(&st); MPI_Type_free(&col); MPI_Type_free(&rcol);
    free(all); free(back);
}

static void intercomm_colls(MPI_Comm inter) {
    int lr, ln, rn, high;
    MPI_Comm_rank(inter, &lr); MPI_Comm_size(inter, &ln); MPI_Comm_remote_size(inter, &rn);
    high = (rank % 2);  /* group A: even world ranks, group B: odd */
    int buf[64], rbuf[256], counts[64], displs[64];
    MPI_Request rq;
    /* barrier */
    OK(MPI_Barrier(inter)); OK(MPI_Ibarrier(inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* bcast from group A rank 0 to group B, then the other way with ibcast */
    for (int dir = 0; dir < 2; dir++) {
        int senders = dir == 0 ? !high : high;
        int root;
        if (senders) root = lr == 0 ? MPI_ROOT : MPI_PROC_NULL; else root = 0;
        for (int i = 0; i < 4; i++) buf[i] = (senders && lr == 0) ? 900 + dir * 10 + i : -1;
        if (dir == 0) OK(MPI_Bcast(buf, 4, MPI_INT, root, inter));
        else { OK(MPI_Ibcast(buf, 4, MPI_INT, root, inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); }
        if (!senders) for (int i = 0; i < 4; i++) E(buf[i] == 900 + dir * 10 + i, "intercomm bcast dir %d", dir);
        if (senders && lr != 0) E(buf[0] == -1, "PROC_NULL bcast untouched");
        /* gather to the root of the sending group from the receivers */
        for (int i = 0; i < rn; i++) rbuf[i] = -1;
        int v = lr * 3 + high;
        if (senders) OK(MPI_Gather(NULL, 0, MPI_INT, rbuf, 1, MPI_INT, root, inter));
        else OK(MPI_Gather(&v, 1, MPI_INT, NULL, 0, MPI_INT, root, inter));
        if (senders && lr == 0) for (int i = 0; i < rn; i++) E(rbuf[i] == i * 3 + !high, "intercomm gather");
        /* igatherv */
        for (int i = 0; i < rn; i++) { counts[i] = i % 2 + 1; displs[i] = 2 * i; rbuf[2 * i] = rbuf[2 * i + 1] = -1; }
        int two[2] = { lr, lr + 50 };
        if (senders) OK(MPI_Igatherv(NULL, 0, MPI_INT, rbuf, counts, displs, MPI_INT, root, inter, &rq));
        else OK(MPI_Igatherv(two, lr % 2 + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, root, inter, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (senders && lr == 0) for (int i = 0; i < rn; i++) { E(rbuf[2 * i] == i, "intercomm igatherv"); if (i % 2) E(rbuf[2 * i + 1] == i + 50, "intercomm igatherv 2"); }
        /* scatter and scatterv */
        for (int i = 0; i < 2 * rn; i++) rbuf[i] = 5000 + i;
        int got[2] = { -1, -1 };
        if (senders) OK(MPI_Scatter(rbuf, 2, MPI_INT, NULL, 0, MPI_INT, root, inter));
        else OK(MPI_Scatter(NULL, 0, MPI_INT, got, 2, MPI_INT, root, inter));
        if (!senders) E(got[0] == 5000 + 2 * lr && got[1] == 5001 + 2 * lr, "intercomm scatter");
        for (int i = 0; i < rn; i++) { counts[i] = 1; displs[i] = rn - 1 - i; }
        if (senders) OK(MPI_Iscatterv(rbuf, counts, displs, MPI_INT, NULL, 0, MPI_INT, root, inter, &rq));
        else OK(MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, got, 1, MPI_INT, root, inter, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (!senders) E(got[0] == 5000 + ln - 1 - lr, "intercomm iscatterv");
        /* reduce to the root of the sending group */
        int rv = -1, sv = lr + 1;
        if (senders) OK(MPI_Reduce(NULL, &rv, 1, MPI_INT, MPI_SUM, root, inter));
        else OK(MPI_Reduce(&sv, NULL, 1, MPI_INT, MPI_SUM, root, inter));
        if (senders && lr == 0) E(rv == rn * (rn + 1) / 2, "intercomm reduce");
        rv = -1;
        if (senders) OK(MPI_Ireduce(NULL, &rv, 1, MPI_INT, MPI_MAX, root, inter, &rq));
        else OK(MPI_Ireduce(&sv, NULL, 1, MPI_INT, MPI_MAX, root, inter, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (senders && lr == 0) E(rv == rn, "intercomm ireduce");
    }
    /* allgather: each side gets the other's */
    int me = 100 * high + lr;
    OK(MPI_Allgather(&me, 1, MPI_INT, rbuf, 1, MPI_INT, inter));
    for (int i = 0; i < rn; i++) E(rbuf[i] == 100 * !high + i, "intercomm allgather");
    OK(MPI_Iallgather(&me, 1, MPI_INT, rbuf, 1, MPI_INT, inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < rn; i++) E(rbuf[i] == 100 * !high + i, "intercomm iallgather");
    for (int i = 0; i < rn; i++) { counts[i] = 1; displs[i] = rn - 1 - i; }
    OK(MPI_Allgatherv(&me, 1, MPI_INT, rbuf, counts, displs, MPI_INT, inter));
    for (int i = 0; i < rn; i++) E(rbuf[rn - 1 - i] == 100 * !high + i, "intercomm allgatherv");
    /* allreduce: each side gets the reduction of the other */
    int s = lr + 1, res = -1;
    OK(MPI_Allreduce(&s, &res, 1, MPI_INT, MPI_SUM, inter)); E(res == rn * (rn + 1) / 2, "intercomm allreduce");
    OK(MPI_Iallreduce(&s, &res, 1, MPI_INT, MPI_SUM, inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); E(res == rn * (rn + 1) / 2, "intercomm iallreduce");
    /* alltoall */
    for (int i = 0; i < rn; i++) buf[i] = me * 1000 + i;
    OK(MPI_Alltoall(buf, 1, MPI_INT, rbuf, 1, MPI_INT, inter));
    for (int i = 0; i < rn; i++) E(rbuf[i] == (100 * !high + i) * 1000 + lr, "intercomm alltoall");
    OK(MPI_Ialltoall(buf, 1, MPI_INT, rbuf, 1, MPI_INT, inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < rn; i++) E(rbuf[i] == (100 * !high + i) * 1000 + lr, "intercomm ialltoall");
    int sc[64], sd[64], rc[64], rd[64]; MPI_Datatype st[64], rt[64];
    for (int i = 0; i < rn; i++) { sc[i] = rc[i] = 1; sd[i] = rd[i] = i; st[i] = rt[i] = MPI_INT; }
    OK(MPI_Alltoallv(buf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, inter));
    for (int i = 0; i < rn; i++) E(rbuf[i] == (100 * !high + i) * 1000 + lr, "intercomm alltoallv");
    for (int i = 0; i < rn; i++) { sd[i] = rd[i] = i * (int)sizeof(int); rbuf[i] = -1; }
    OK(MPI_Ialltoallw(buf, sc, sd, st, rbuf, rc, rd, rt, inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < rn; i++) E(rbuf[i] == (100 * !high + i) * 1000 + lr, "intercomm ialltoallw");
    /* reduce_scatter(_block): one group's reduction (ln * rn elements in both groups: each
     * group's recvcount is the remote size) is scattered over the other group */
    {
        int *sb = malloc(sizeof(int) * ln * rn), out[64];
        for (int i = 0; i < ln * rn; i++) sb[i] = lr + i;
        for (int j = 0; j < rn; j++) out[j] = -1;
        OK(MPI_Reduce_scatter_block(sb, out, rn, MPI_INT, MPI_SUM, inter));
        for (int j = 0; j < rn; j++) E(out[j] == rn * (lr * rn + j) + rn * (rn - 1) / 2, "intercomm reduce_scatter_block got %d", out[j]);
        int rcs[64]; for (int i = 0; i < ln; i++) rcs[i] = rn;
        for (int j = 0; j < rn; j++) out[j] = -1;
        OK(MPI_Ireduce_scatter(sb, out, rcs, MPI_INT, MPI_SUM, inter, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int j = 0; j < rn; j++) E(out[j] == rn * (lr * rn + j) + rn * (rn - 1) / 2, "intercomm ireduce_scatter got %d", out[j]);
        free(sb);
    }
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm dup, rev;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
    overlapped(MPI_COMM_WORLD);
    overlapped(rev);
    /* collectives on two communicators interleaved */
    {
        MPI_Request a, b; int x = rank, y = rank, xs, ys;
        OK(MPI_Iallreduce(&x, &xs, 1, MPI_INT, MPI_SUM, dup, &a));
        OK(MPI_Iallreduce(&y, &ys, 1, MPI_INT, MPI_MAX, rev, &b));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Wait(&b, MPI_STATUS_IGNORE)); OK(MPI_Wait(&a, MPI_STATUS_IGNORE));
        E(xs == size * (size - 1) / 2 && ys == size - 1, "interleaved");
    }
    many_outstanding(dup);
    vw_in_place(MPI_COMM_WORLD);
    vw_in_place(rev);
    derived(dup);
    MPI_Comm self;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &self));
    vw_in_place(self); overlapped(MPI_COMM_SELF);
    OK(MPI_Comm_free(&self));
    if (size >= 2) {
        MPI_Comm half, inter;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
        intercomm_colls(inter);
        OK(MPI_Comm_free(&inter)); OK(MPI_Comm_free(&half));
    }
    OK(MPI_Comm_free(&dup)); OK(MPI_Comm_free(&rev));
    int tot;
    OK(MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) { if (tot) printf(" Found %d errors\n", tot); else printf(" No Errors\n"); }
    OK(MPI_Finalize());
    return 0;
}

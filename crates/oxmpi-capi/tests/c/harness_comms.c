/* Test-suite plumbing: the communicators a typical MPI test harness hands to
 * its tests, one after another (world, dup, rank-reversed split, half split
 * with MPI_UNDEFINED, self, intercomm merge, create_group, create from a
 * range group, shrinking splits; intercommunicators from halves, 1 + rest,
 * 2 + rest, a dup of one, a split of one, one with a rank left out, one made
 * by MPI_Comm_create on an intercommunicator), each exercised with an
 * allreduce (intra) or an isend/recv exchange plus collectives (inter).
 * Errors are counted with MPI_ERRORS_RETURN and summed on rank 0, which prints
 * " No Errors" as harness-driven suites expect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

static int errs = 0, wrank, wsize;
#define EXPECT(c) do { if (!(c)) { errs++; fprintf(stderr, "[%d] %s:%d: %s\n", wrank, __FILE__, __LINE__, #c); } } while (0)
#define RC(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); errs++; fprintf(stderr, "[%d] %s:%d: %s -> %s\n", wrank, __FILE__, __LINE__, #call, s_); } } while (0)

/* Next intracommunicator of at least min_size ranks (MPI_COMM_NULL on ranks
 * left out); returns 0 once all are handed out. */
static int next_intra(MPI_Comm *comm, int idx, int *basic) {
    *basic = 0;
    switch (idx) {
    case 0: *comm = MPI_COMM_WORLD; *basic = 1; return 1;
    case 1: RC(MPI_Comm_dup(MPI_COMM_WORLD, comm)); return 1;
    case 2: RC(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, comm)); return 1;
    case 3: RC(MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2 ? 1 : MPI_UNDEFINED, wsize - wrank, comm)); return 1;
    case 4: *comm = MPI_COMM_SELF; *basic = 1; return 1;
    case 5: {
        MPI_Comm local, inter;
        if (wsize < 2) { *comm = MPI_COMM_NULL; return 1; }
        RC(MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &local));
        int rleader = wrank == 0 ? wsize / 2 : (wrank == wsize / 2 ? 0 : -1);
        RC(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rleader, 99, &inter));
        RC(MPI_Intercomm_merge(inter, wrank < wsize / 2, comm));
        RC(MPI_Comm_free(&inter));
        RC(MPI_Comm_free(&local));
        return 1;
    }
    case 6: {
        MPI_Group wg, even; int *excl = malloc(sizeof(int) * (wsize / 2 + 1));
        for (int i = 0; i < wsize / 2; i++) excl[i] = 2 * i + 1;
        RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        RC(MPI_Group_excl(wg, wsize / 2, excl, &even));
        RC(MPI_Group_free(&wg));
        free(excl);
        if (wrank % 2 == 0) RC(MPI_Comm_create_group(MPI_COMM_WORLD, even, 0, comm));
        else *comm = MPI_COMM_NULL;
        RC(MPI_Group_free(&even));
        return 1;
    }
    case 7: {
        int ranges[1][3] = { { wsize / 2, wsize - 1, 1 } };
        MPI_Group wg, high;
        RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        RC(MPI_Group_range_incl(wg, 1, ranges, &high));
        RC(MPI_Comm_create(MPI_COMM_WORLD, high, comm));
        RC(MPI_Group_free(&wg));
        RC(MPI_Group_free(&high));
        return 1;
    }
    case 8: case 9: case 10: case 11: {
        int newsize = wsize - (idx - 7);
        if (newsize < 1) { *comm = MPI_COMM_NULL; return 1; }
        RC(MPI_Comm_split(MPI_COMM_WORLD, wrank < newsize, wrank, comm));
        if (wrank >= newsize) { RC(MPI_Comm_free(comm)); EXPECT(*comm == MPI_COMM_NULL); }
        return 1;
    }
    default: *comm = MPI_COMM_NULL; return 0;
    }
}

static int next_inter(MPI_Comm *comm, int idx, int *left) {
    MPI_Comm m = MPI_COMM_NULL, m2 = MPI_COMM_NULL;
    int rleader;
    *comm = MPI_COMM_NULL; *left = 0;
    switch (idx) {
    case 0: case 3: case 4:
        if (wsize < 2) return 1;
        RC(MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &m));
        rleader = wrank == 0 ? wsize / 2 : (wrank == wsize / 2 ? 0 : -1);
        *left = wrank < wsize / 2;
        RC(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rleader, 12345, comm));
        if (idx == 3) { MPI_Comm t = *comm; RC(MPI_Comm_dup(t, comm)); RC(MPI_Comm_free(&t)); }
        if (idx == 4) { MPI_Comm t = *comm; int r; RC(MPI_Comm_rank(t, &r)); RC(MPI_Comm_split(t, 0, r, comm)); RC(MPI_Comm_free(&t)); }
        break;
    case 1:
        if (wsize < 2) return 1;
        RC(MPI_Comm_split(MPI_COMM_WORLD, wrank == 0, wrank, &m));
        rleader = wrank == 0 ? 1 : (wrank == 1 ? 0 : -1);
        *left = wrank == 0;
        RC(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rleader, 12346, comm));
        break;
    case 2:
        if (wsize < 4) return 1;
        RC(MPI_Comm_split(MPI_COMM_WORLD, wrank < 2, wrank, &m));
        rleader = wrank == 0 ? 2 : (wrank == 2 ? 0 : -1);
        *left = wrank < 2;
        RC(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rleader, 12347, comm));
        break;
    case 5: {
        if (wsize < 4) return 1;
        int color = wrank < wsize / 2 ? 0 : 1;
        if (wrank == 0) color = MPI_UNDEFINED;
        RC(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &m));
        rleader = wrank == 1 ? wsize / 2 : (wrank == wsize / 2 ? 1 : -1);
        *left = wrank < wsize / 2;
        if (wrank != 0) RC(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rleader, 12345, comm));
        break;
    }
    case 6: {
        if (wsize < 4) return 1;
        MPI_Group old, ng; int zero[1] = { 0 };
        RC(MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2 ? 0 : 1, wrank, &m));
        rleader = wrank == 0 ? wsize / 2 : (wrank == wsize / 2 ? 0 : -1);
        *left = wrank < wsize / 2;
        RC(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rleader, 12345, &m2));
        RC(MPI_Comm_group(m2, &old));
        RC(MPI_Group_excl(old, 1, zero, &ng));
        RC(MPI_Comm_create(m2, ng, comm));
        RC(MPI_Group_free(&old));
        RC(MPI_Group_free(&ng));
        break;
    }
    default: return 0;
    }
    if (m != MPI_COMM_NULL) RC(MPI_Comm_free(&m));
    if (m2 != MPI_COMM_NULL) RC(MPI_Comm_free(&m2));
    return 1;
}

static void use_intra(MPI_Comm c) {
    int in[16], out[16], size, rank;
    RC(MPI_Comm_size(c, &size));
    RC(MPI_Comm_rank(c, &rank));
    for (int i = 0; i < 16; i++) in[i] = i;
    RC(MPI_Allreduce(in, out, 16, MPI_INT, MPI_SUM, c));
    for (int i = 0; i < 16; i++) EXPECT(out[i] == i * size);
    int x = rank;
    RC(MPI_Bcast(&x, 1, MPI_INT, size - 1, c));
    EXPECT(x == size - 1);
}

static void use_inter(MPI_Comm c, int left) {
    int lsize, rsize, rank, flag;
    RC(MPI_Comm_test_inter(c, &flag)); EXPECT(flag);
    RC(MPI_Comm_size(c, &lsize));
    RC(MPI_Comm_remote_size(c, &rsize));
    RC(MPI_Comm_rank(c, &rank));
    MPI_Request *rq = malloc(sizeof(MPI_Request) * rsize);
    int *buf = malloc(sizeof(int) * 2 * rsize);
    for (int j = 0; j < rsize; j++) {
        buf[2 * j] = rank; buf[2 * j + 1] = j;
        RC(MPI_Isend(&buf[2 * j], 2, MPI_INT, j, 0, c, &rq[j]));
    }
    for (int j = 0; j < rsize; j++) {
        int r[2];
        MPI_Status st;
        RC(MPI_Recv(r, 2, MPI_INT, j, 0, c, &st));
        EXPECT(r[0] == j && r[1] == rank && st.MPI_SOURCE == j && st.MPI_TAG == 0);
    }
    RC(MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE));
    free(rq); free(buf);
    /* rooted and all-to-all collectives across the two groups */
    int v = left ? 7 : -1;
    if (left) RC(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, c));
    else RC(MPI_Bcast(&v, 1, MPI_INT, 0, c));
    if (!left || rank == 0) EXPECT(v == 7);
    int one = 1, sum = 0;
    RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
    EXPECT(sum == rsize);
    RC(MPI_Barrier(c));
    int *g = malloc(sizeof(int) * rsize);
    RC(MPI_Allgather(&rank, 1, MPI_INT, g, 1, MPI_INT, c));
    for (int j = 0; j < rsize; j++) EXPECT(g[j] == j);
    free(g);
    MPI_Group lg, rg; int gs;
    RC(MPI_Comm_group(c, &lg)); RC(MPI_Group_size(lg, &gs)); EXPECT(gs == lsize);
    RC(MPI_Comm_remote_group(c, &rg)); RC(MPI_Group_size(rg, &gs)); EXPECT(gs == rsize);
    RC(MPI_Group_free(&lg)); RC(MPI_Group_free(&rg));
}

int main(int argc, char **argv) {
    int provided;
    RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided));
    RC(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    RC(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int round = 0; round < 2; round++) {
        MPI_Comm c; int basic;
        for (int idx = 0; next_intra(&c, idx, &basic); idx++) {
            if (c != MPI_COMM_NULL) {
                use_intra(c);
                if (!basic) RC(MPI_Comm_free(&c));
            }
            int done = 1;
            RC(MPI_Allreduce(MPI_IN_PLACE, &done, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
        }
        int left;
        for (int idx = 0; next_inter(&c, idx, &left); idx++) {
            if (c != MPI_COMM_NULL) {
                use_inter(c, left);
                RC(MPI_Comm_free(&c));
            }
            RC(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    int total = 0;
    RC(MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (wrank == 0) {
        if (total) printf(" Found %d errors\n", total);
        else printf(" No Errors\n");
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

/* MPI_Gatherv, MPI_Scatterv (coll/shm/rooted_v.rs) and MPI_Alltoallv
 * (coll/shm/alltoallv.rs) on the shared-memory path
 * and around it: counts that differ per rank, zero counts on some ranks, blocks
 * over 64 KiB (point-to-point beside the shared area), MPI_IN_PLACE at the root,
 * a derived (strided) datatype on either side, every root, repeated calls (the
 * area is made on a communicator's third call), interleaved with other
 * collectives and point-to-point, on MPI_COMM_WORLD and a split communicator.
 * Prints "coll_v_shm: all checks passed on N ranks". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails = 0;
#define CHECK(c, ...)                                                                    \
    do {                                                                                 \
        if (!(c)) {                                                                      \
            fprintf(stderr, "rank %d: line %d: ", wrank, __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            if (++fails > 10) MPI_Abort(MPI_COMM_WORLD, 1);                              \
        }                                                                                \
    } while (0)
static int wrank;

/* Elements rank r contributes in round `round` (mode picks the shape). */
static int count_of(int r, int n, int round, int mode) {
    switch (mode) {
    case 0: return 1 + r + round;                        /* small, all different */
    case 1: return (r % 2 == 1) ? 0 : 3 + r;             /* zeros on odd ranks */
    case 2: return r == n - 1 ? 20000 + r : 5 + r;       /* one block > 64 KiB (ints) */
    case 3: return 0;                                    /* all empty */
    default: return (r == 0) ? 0 : 17000 * r;            /* big everywhere but 0 */
    }
}
static int val(int r, int i, int round) { return r * 1000003 + i * 7 + round; }

static void run(MPI_Comm comm, int round, int mode, int in_place, int strided) {
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int root = round % n;
    int *counts = malloc(n * sizeof(int)), *displs = malloc(n * sizeof(int));
    int total = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = count_of(r, n, round, mode);
        displs[r] = total + 3 * r; /* gaps between blocks */
        total = displs[r] + counts[r];
    }
    total += 4;
    /* Strided type: every other int of a buffer (extent 2 ints after resizing). */
    MPI_Datatype vec = MPI_INT;
    int stride = 1;
    if (strided) {
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * sizeof(int), &vec);
        MPI_Type_free(&v);
        MPI_Type_commit(&vec);
        stride = 2;
    }
    int mine = counts[me];
    int *sbuf = malloc((mine + 1) * stride * sizeof(int));
    for (int i = 0; i < mine * stride; i++) sbuf[i] = -5;
    for (int i = 0; i < mine; i++) sbuf[i * stride] = val(me, i, round);
    int *rbuf = malloc((total + 1) * stride * sizeof(int));

    /* --- gatherv: the strided type on the sending side only (the root receives ints) */
    for (int i = 0; i < total; i++) rbuf[i] = -1;
    const void *sb = sbuf;
    if (in_place && me == root) {
        for (int i = 0; i < counts[me]; i++) rbuf[displs[me] + i] = val(me, i, round);
        sb = MPI_IN_PLACE;
    }
    MPI_Gatherv(sb, mine, vec, rbuf, counts, displs, MPI_INT, root, comm);
    if (me == root) {
        int at = 0;
        for (int r = 0; r < n; r++) {
            for (; at < displs[r]; at++)
                CHECK(rbuf[at] == -1, "gatherv mode %d round %d: gap %d overwritten", mode, round, at);
            for (int i = 0; i < counts[r]; i++, at++)
                CHECK(rbuf[at] == val(r, i, round), "gatherv mode %d round %d strided %d: block %d[%d] = %d", mode,
                      round, strided, r, i, rbuf[at]);
        }
    }

    /* --- scatterv: the root sends ints, the strided type on the receiving side */
    int *src = malloc((total + 1) * sizeof(int));
    for (int i = 0; i < total; i++) src[i] = -2;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < counts[r]; i++) src[displs[r] + i] = val(r, i, round + 1);
    for (int i = 0; i < mine * stride; i++) sbuf[i] = -7;
    void *rb = sbuf;
    if (in_place && me == root) rb = MPI_IN_PLACE;
    MPI_Scatterv(src, counts, displs, MPI_INT, rb, mine, vec, root, comm);
    if (!(in_place && me == root))
        for (int i = 0; i < mine; i++) {
            CHECK(sbuf[i * stride] == val(me, i, round + 1), "scatterv mode %d round %d strided %d: [%d] = %d",
                  mode, round, strided, i, sbuf[i * stride]);
            if (stride == 2) CHECK(sbuf[i * 2 + 1] == -7, "scatterv wrote between the strided elements");
        }

    /* --- alltoallv: rank r sends count_of(r + j) elements to rank j (so sizes
     * differ per pair and cross the sub-slot size), strided on the receiving side */
    {
        int *sc = malloc(n * sizeof(int)), *sd = malloc(n * sizeof(int));
        int *rc = malloc(n * sizeof(int)), *rd = malloc(n * sizeof(int));
        int st = 0, rt = 0;
        for (int j = 0; j < n; j++) {
            sc[j] = count_of((me + j) % n, n, round, mode) / (j == me ? 1 : 2);
            sd[j] = st + 1;
            st = sd[j] + sc[j];
            rc[j] = count_of((j + me) % n, n, round, mode) / (j == me ? 1 : 2);
            rd[j] = rt + 2;
            rt = rd[j] + rc[j];
        }
        int *a = malloc((st + 1) * sizeof(int)), *r = malloc((rt + 1) * stride * sizeof(int));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < sc[j]; i++) a[sd[j] + i] = val(me, i, round + j * 3);
        for (int i = 0; i < rt * stride; i++) r[i] = -9;
        MPI_Alltoallv(a, sc, sd, MPI_INT, r, rc, rd, vec, comm);
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < rc[j]; i++)
                CHECK(r[(rd[j] + i) * stride] == val(j, i, round + me * 3),
                      "alltoallv mode %d round %d strided %d: from %d [%d] = %d", mode, round, strided, j, i,
                      r[(rd[j] + i) * stride]);
            CHECK(r[(rd[j] - 1) * stride] == -9, "alltoallv wrote into a gap");
        }
        free(a), free(r), free(sc), free(sd), free(rc), free(rd);
    }

    /* Other traffic between the calls: a bcast on the same area and a ring exchange. */
    int token = me == root ? 4242 + round : -1;
    MPI_Bcast(&token, 1, MPI_INT, root, comm);
    CHECK(token == 4242 + round, "bcast after the v-forms: %d", token);
    int left = (me + n - 1) % n, right = (me + 1) % n, got = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, comm, MPI_STATUS_IGNORE);
    CHECK(got == left, "ring after the v-forms: %d", got);

    if (strided) MPI_Type_free(&vec);
    free(src), free(sbuf), free(rbuf), free(counts), free(displs);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half); /* reversed order */
    for (int round = 0; round < 12; round++)
        for (int mode = 0; mode < 5; mode++) {
            run(MPI_COMM_WORLD, round, mode, round % 3 == 1, round % 4 == 2);
            run(half, round, mode, round % 2 == 0, round % 5 == 3);
        }
    MPI_Comm_free(&half);
    /* Zero-count v-calls on a communicator whose area exists do not synchronize:
     * the ranks enter one after another (a token chain), which would deadlock. */
    {
        int x = 1, zc[64] = {0}, zd[64] = {0}, tok = 0;
        for (int i = 0; i < 4; i++) MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (wrank > 0) MPI_Recv(&tok, 1, MPI_INT, wrank - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 5 && n <= 64; i++) {
            MPI_Gatherv(&x, 0, MPI_INT, &x, zc, zd, MPI_INT, i % n, MPI_COMM_WORLD);
            MPI_Scatterv(&x, zc, zd, MPI_INT, &x, 0, MPI_INT, i % n, MPI_COMM_WORLD);
            int y = 0;
            MPI_Alltoallv(&x, zc, zd, MPI_INT, &y, zc, zd, MPI_INT, MPI_COMM_WORLD);
        }
        if (wrank < n - 1) MPI_Send(&tok, 1, MPI_INT, wrank + 1, 9, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all == 0 && wrank == 0) printf("coll_v_shm: all checks passed on %d ranks\n", n);
    MPI_Finalize();
    return all != 0;
}

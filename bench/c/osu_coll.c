/*
 * OSU-style collective latency (osu_barrier, osu_bcast, osu_reduce, osu_allreduce,
 * osu_gather, osu_scatter, osu_allgather, osu_allgatherv, osu_alltoall, osu_alltoallv,
 * osu_reduce_scatter, osu_gatherv, osu_scatterv of the OSU micro-benchmarks, and their non-blocking forms
 * osu_i*) in one program, plain C MPI.
 *
 *   mpicc -O2 -o osu_coll osu_coll.c
 *   mpiexec -n 4 ./osu_coll COLLECTIVE [MAX_BYTES [LOOP [LOOP_LARGE [MIN_BYTES]]]]
 *
 * COLLECTIVE: barrier bcast reduce allreduce gather scatter allgather allgatherv alltoall
 * alltoallv reduce_scatter gatherv scatterv, or one of them prefixed with "i" (ibarrier, ibcast, ...): the
 * non-blocking form, timed as post + MPI_Wait (no overlapped computation: OSU's pure
 * communication latency).
 *
 * Same methodology and output as crates/oxmpi/examples/osu_coll.rs. Sizes: MIN_BYTES
 * (default 8), then 8, 32, 128, ... (powers of 4 from 8 B) up to MAX_BYTES (default
 * 4 MiB), plus MAX_BYTES itself if it is not one of them. MIN_BYTES 0 adds a 0-byte row
 * (a 0-count call) before 8. For each size (OSU):
 *   MPI_Barrier; then skip + loop times { t0 = MPI_Wtime(); COLLECTIVE; timer +=
 *   MPI_Wtime() - t0 (after the skip warmup calls); MPI_Barrier }.
 *   Each rank's latency = timer / loop; MPI_Reduce of min / max / sum to rank 0;
 *   "Avg Latency" = sum / nprocs.
 * loop/skip = LOOP/max(1, LOOP/5) up to 8 KiB, LOOP_LARGE/max(1, LOOP_LARGE/10) above; OSU's
 * defaults are 1000/200 and 100/10, which are the defaults here too.
 * Barrier (osu_barrier, osu_ibarrier): no size and no barrier between iterations;
 * printed as size 0.
 *
 * Sizes are bytes per rank, as OSU's: bcast, reduce and allreduce move SIZE bytes
 * (reductions: SIZE/4 floats, MPI_SUM, root 0); gather, allgather(v) SIZE bytes from every
 * rank; scatter SIZE bytes to every rank; alltoall(v) SIZE bytes per pair of ranks;
 * reduce_scatter SIZE bytes in all (SIZE/4 floats, rank i getting its share
 * count/nprocs, the remainder spread over the first ranks, as osu_reduce_scatter).
 *
 * After the timed loop, one more (untimed) call runs with rank-specific data and its
 * result is checked; a wrong result prints "VALIDATION FAILED" to stderr and makes the
 * program exit with status 3 after all sizes (the timings are still printed).
 * Output: '#' header lines, then "size avg min max iterations" rows from rank 0.
 * Only MPI-1 and MPI-3 calls, so it builds against any MPI (MPICH, Open MPI, oxmpi).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_MESSAGE_SIZE 8192
#define MIN_SIZE 8

enum op {
    BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLGATHERV, ALLTOALL,
    ALLTOALLV, REDUCE_SCATTER, GATHERV, SCATTERV, NOPS
};
static const char *names[] = {"barrier", "bcast", "reduce", "allreduce", "gather", "scatter",
                              "allgather", "allgatherv", "alltoall", "alltoallv",
                              "reduce_scatter", "gatherv", "scatterv"};

static int rank, nprocs;
static int *counts, *displs, *rs_counts; /* per-rank counts and displacements */

static unsigned char pat(long a, long b, long j)
{
    return (unsigned char)((a * 7 + b * 13 + j) & 0xff);
}

/* Counts and displacements of the v-variants and reduce_scatter for SIZE. */
static void set_counts(long size)
{
    long count = size / 4, portion = count / nprocs, rem = count % nprocs;
    for (int i = 0; i < nprocs; i++) {
        counts[i] = (int)size;
        displs[i] = (int)(size * i);
        rs_counts[i] = (int)(portion + (i < rem ? 1 : 0));
    }
}

/* One collective; `nb`: its non-blocking form, waited for at once. */
static void run(enum op op, int nb, long size, char *s_buf, char *r_buf)
{
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Request req = MPI_REQUEST_NULL, *q = &req;
    int n = (int)size, c = (int)(size / 4);
    switch (op) {
    case BARRIER:
        nb ? MPI_Ibarrier(w, q) : MPI_Barrier(w);
        break;
    case BCAST:
        nb ? MPI_Ibcast(s_buf, n, MPI_CHAR, 0, w, q) : MPI_Bcast(s_buf, n, MPI_CHAR, 0, w);
        break;
    case REDUCE:
        nb ? MPI_Ireduce(s_buf, r_buf, c, MPI_FLOAT, MPI_SUM, 0, w, q)
           : MPI_Reduce(s_buf, r_buf, c, MPI_FLOAT, MPI_SUM, 0, w);
        break;
    case ALLREDUCE:
        nb ? MPI_Iallreduce(s_buf, r_buf, c, MPI_FLOAT, MPI_SUM, w, q)
           : MPI_Allreduce(s_buf, r_buf, c, MPI_FLOAT, MPI_SUM, w);
        break;
    case GATHER:
        nb ? MPI_Igather(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, 0, w, q)
           : MPI_Gather(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, 0, w);
        break;
    case SCATTER:
        nb ? MPI_Iscatter(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, 0, w, q)
           : MPI_Scatter(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, 0, w);
        break;
    case ALLGATHER:
        nb ? MPI_Iallgather(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, w, q)
           : MPI_Allgather(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, w);
        break;
    case ALLGATHERV:
        nb ? MPI_Iallgatherv(s_buf, n, MPI_CHAR, r_buf, counts, displs, MPI_CHAR, w, q)
           : MPI_Allgatherv(s_buf, n, MPI_CHAR, r_buf, counts, displs, MPI_CHAR, w);
        break;
    case GATHERV:
        nb ? MPI_Igatherv(s_buf, n, MPI_CHAR, r_buf, counts, displs, MPI_CHAR, 0, w, q)
           : MPI_Gatherv(s_buf, n, MPI_CHAR, r_buf, counts, displs, MPI_CHAR, 0, w);
        break;
    case SCATTERV:
        nb ? MPI_Iscatterv(s_buf, counts, displs, MPI_CHAR, r_buf, n, MPI_CHAR, 0, w, q)
           : MPI_Scatterv(s_buf, counts, displs, MPI_CHAR, r_buf, n, MPI_CHAR, 0, w);
        break;
    case ALLTOALL:
        nb ? MPI_Ialltoall(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, w, q)
           : MPI_Alltoall(s_buf, n, MPI_CHAR, r_buf, n, MPI_CHAR, w);
        break;
    case ALLTOALLV:
        nb ? MPI_Ialltoallv(s_buf, counts, displs, MPI_CHAR, r_buf, counts, displs, MPI_CHAR, w, q)
           : MPI_Alltoallv(s_buf, counts, displs, MPI_CHAR, r_buf, counts, displs, MPI_CHAR, w);
        break;
    case REDUCE_SCATTER:
        nb ? MPI_Ireduce_scatter(s_buf, r_buf, rs_counts, MPI_FLOAT, MPI_SUM, w, q)
           : MPI_Reduce_scatter(s_buf, r_buf, rs_counts, MPI_FLOAT, MPI_SUM, w);
        break;
    default:
        break;
    }
    if (nb)
        MPI_Wait(q, MPI_STATUS_IGNORE);
}

/* The expected float of element j of a sum over ranks of (rank + j % 11). */
static float fsum(long j)
{
    long n = nprocs;
    return (float)(n * (n - 1) / 2 + n * (j % 11));
}

/* One untimed call with rank-specific data; returns the number of wrong elements here. */
static long validate(enum op op, int nb, long size, char *s_buf, char *r_buf)
{
    long bad = 0, n = nprocs, count = size / 4;
    unsigned char *s = (unsigned char *)s_buf, *r = (unsigned char *)r_buf;
    float *sf = (float *)s_buf, *rf = (float *)r_buf;
    switch (op) {
    case BARRIER:
        run(op, nb, size, s_buf, r_buf);
        break;
    case BCAST:
        for (long j = 0; j < size; j++)
            s[j] = rank == 0 ? pat(1, size, j) : 0xee;
        run(op, nb, size, s_buf, r_buf);
        for (long j = 0; j < size; j++)
            bad += s[j] != pat(1, size, j);
        break;
    case REDUCE:
    case ALLREDUCE:
    case REDUCE_SCATTER: {
        for (long j = 0; j < count; j++) {
            sf[j] = (float)(rank + j % 11);
            rf[j] = -1.0f;
        }
        run(op, nb, size, s_buf, r_buf);
        if (op == REDUCE_SCATTER) {
            long first = 0;
            for (int i = 0; i < rank; i++)
                first += rs_counts[i];
            for (long j = 0; j < rs_counts[rank]; j++)
                bad += rf[j] != fsum(first + j);
        } else if (op == ALLREDUCE || rank == 0) {
            for (long j = 0; j < count; j++)
                bad += rf[j] != fsum(j);
        }
        break;
    }
    case GATHER:
    case GATHERV:
    case ALLGATHER:
    case ALLGATHERV:
        for (long j = 0; j < size; j++)
            s[j] = pat(rank, 0, j);
        memset(r, 0xee, (size_t)(size * n));
        run(op, nb, size, s_buf, r_buf);
        if ((op != GATHER && op != GATHERV) || rank == 0)
            for (long p = 0; p < n; p++)
                for (long j = 0; j < size; j++)
                    bad += r[p * size + j] != pat(p, 0, j);
        break;
    case SCATTER:
    case SCATTERV:
        for (long p = 0; p < n; p++)
            for (long j = 0; j < size; j++)
                s[p * size + j] = rank == 0 ? pat(p, 3, j) : 0xee;
        memset(r, 0xee, (size_t)size);
        run(op, nb, size, s_buf, r_buf);
        for (long j = 0; j < size; j++)
            bad += r[j] != pat(rank, 3, j);
        break;
    case ALLTOALL:
    case ALLTOALLV:
        for (long p = 0; p < n; p++)
            for (long j = 0; j < size; j++)
                s[p * size + j] = pat(rank, p, j);
        memset(r, 0xee, (size_t)(size * n));
        run(op, nb, size, s_buf, r_buf);
        for (long p = 0; p < n; p++)
            for (long j = 0; j < size; j++)
                bad += r[p * size + j] != pat(p, rank, j);
        break;
    default:
        break;
    }
    return bad;
}

static long parse_arg(int argc, char **argv, int i, long dflt, long least)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v < least) {
        if (rank == 0)
            fprintf(stderr, "osu_coll: argument %d (%s) must be a number >= %ld\n", i, argv[i],
                    least);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

int main(int argc, char *argv[])
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    int op = -1, nb = 0;
    if (argc > 1) {
        const char *name = argv[1];
        for (int i = 0; i < NOPS; i++)
            if (strcmp(name, names[i]) == 0)
                op = i;
        if (op < 0 && name[0] == 'i')
            for (int i = 0; i < NOPS; i++)
                if (strcmp(name + 1, names[i]) == 0)
                    op = i, nb = 1;
    }
    if (op < 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: osu_coll COLLECTIVE [MAX_BYTES [LOOP [LOOP_LARGE "
                            "[MIN_BYTES]]]]\nCOLLECTIVE:");
            for (int i = 0; i < NOPS; i++)
                fprintf(stderr, " %s i%s", names[i], names[i]);
            fprintf(stderr, "\n");
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long max_size = parse_arg(argc, argv, 2, 4L << 20, 1);
    long loop_small = parse_arg(argc, argv, 3, 1000, 1);
    long loop_large = parse_arg(argc, argv, 4, 100, 1);
    long min_size = parse_arg(argc, argv, 5, MIN_SIZE, 0);
    if (max_size < MIN_SIZE)
        max_size = MIN_SIZE;
    if (min_size > max_size)
        min_size = max_size;

    counts = malloc(sizeof(int) * (size_t)nprocs);
    displs = malloc(sizeof(int) * (size_t)nprocs);
    rs_counts = malloc(sizeof(int) * (size_t)nprocs);
    /* Buffers large enough for the biggest size: SIZE per rank where every rank's block
     * is held (the sending side of scatter and alltoall(v), the receiving side of gather,
     * allgather(v) and alltoall(v)), SIZE otherwise. */
    int all_s = op == SCATTER || op == SCATTERV || op == ALLTOALL || op == ALLTOALLV;
    int all_r = op == GATHER || op == GATHERV || op == ALLGATHER || op == ALLGATHERV || op == ALLTOALL ||
                op == ALLTOALLV;
    size_t bytes = (size_t)max_size * (all_s ? nprocs : 1) + 8;
    size_t r_bytes = (size_t)max_size * (all_r ? nprocs : 1) + 8;
    char *s_buf = malloc(bytes), *r_buf = malloc(r_bytes);
    if (!s_buf || !r_buf || !counts || !displs || !rs_counts) {
        fprintf(stderr, "osu_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Touch the buffers, like OSU, so no page is faulted in while timing. */
    memset(s_buf, 1, bytes);
    memset(r_buf, 0, r_bytes);

    if (rank == 0) {
        printf("# OSU MPI %s%s Latency Test (oxmpi bench, C MPI), %d processes\n",
               nb ? "i" : "", names[op], nprocs);
        printf("%-10s%18s%18s%18s%12s\n", "# Size", "Avg Latency(us)", "Min Latency(us)",
               "Max Latency(us)", "Iterations");
        fflush(stdout);
    }

    long failures = 0;
    for (long size = op == BARRIER ? 0 : min_size; size <= max_size;) {
        long loop = size > LARGE_MESSAGE_SIZE ? loop_large : loop_small;
        long skip = size > LARGE_MESSAGE_SIZE ? loop / 10 : loop / 5;
        if (skip < 1)
            skip = 1;
        double timer = 0.0;
        set_counts(size);

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < loop + skip; i++) {
            double t0 = MPI_Wtime();
            run(op, nb, size, s_buf, r_buf);
            double t1 = MPI_Wtime();
            if (i >= skip)
                timer += t1 - t0;
            if (op != BARRIER)
                MPI_Barrier(MPI_COMM_WORLD);
        }
        double lat = timer * 1e6 / (double)loop, min_t, max_t, sum_t;
        MPI_Reduce(&lat, &min_t, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &max_t, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&lat, &sum_t, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

        long bad = validate(op, nb, size, s_buf, r_buf), all_bad = 0;
        MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        memset(s_buf, 1, bytes); /* back to the timed loop's contents */

        if (rank == 0) {
            printf("%-10ld%18.2f%18.2f%18.2f%12ld\n", size, sum_t / nprocs, min_t, max_t, loop);
            if (all_bad) {
                fprintf(stderr, "osu_coll: VALIDATION FAILED: %s%s, %ld B, %d ranks: %ld wrong "
                                "elements\n", nb ? "i" : "", names[op], size, nprocs, all_bad);
                failures++;
            }
            fflush(stdout);
        }
        if (op == BARRIER || size == max_size)
            break;
        size = size < MIN_SIZE ? MIN_SIZE : size * 4 > max_size ? max_size : size * 4;
    }

    free(s_buf);
    free(r_buf);
    free(counts);
    free(displs);
    free(rs_counts);
    MPI_Finalize();
    return failures ? 3 : 0;
}

/*
 * OSU-style collective latency (osu_bcast, osu_allreduce, osu_allgather, osu_alltoall,
 * osu_barrier of the OSU micro-benchmarks) in one program, plain C MPI.
 *
 *   mpicc -O2 -o osu_coll osu_coll.c
 *   mpiexec -n 4 ./osu_coll bcast|allreduce|allgather|alltoall|barrier \
 *       [MAX_BYTES [LOOP [LOOP_LARGE]]]
 *
 * Same methodology and output as crates/oxmpi/examples/osu_coll.rs. Sizes: 8, 32, 128,
 * ... (powers of 4 from 8 B) up to MAX_BYTES (default 4 MiB), plus MAX_BYTES itself if it
 * is not one of them. For each size (OSU):
 *   MPI_Barrier; then skip + loop times { t0 = MPI_Wtime(); COLLECTIVE; timer +=
 *   MPI_Wtime() - t0 (after the skip warmup calls); MPI_Barrier }.
 *   Each rank's latency = timer / loop; MPI_Reduce of min / max / sum to rank 0;
 *   "Avg Latency" = sum / nprocs.
 * loop/skip = LOOP/max(1, LOOP/5) up to 8 KiB, LOOP_LARGE/max(1, LOOP_LARGE/10) above; OSU's
 * defaults are 1000/200 and 100/10, which are the defaults here too.
 * Barrier (osu_barrier): no size and no barrier between iterations; printed as size 0.
 *
 * Sizes are bytes per rank, as OSU's: bcast and allreduce move SIZE bytes (allreduce:
 * SIZE/4 floats, MPI_SUM), allgather SIZE bytes from every rank, alltoall SIZE bytes per
 * pair of ranks.
 *
 * After the timed loop, one more (untimed) call runs with rank-specific data and its
 * result is checked; a wrong result prints "VALIDATION FAILED" to stderr and makes the
 * program exit with status 3 after all sizes (the timings are still printed).
 * Output: '#' header lines, then "size avg min max iterations" rows from rank 0.
 * Only MPI-1 calls, so it builds against any MPI (MPICH, Open MPI, oxmpi).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_MESSAGE_SIZE 8192
#define MIN_SIZE 8

enum op { BCAST, ALLREDUCE, ALLGATHER, ALLTOALL, BARRIER };
static const char *names[] = {"bcast", "allreduce", "allgather", "alltoall", "barrier"};

static int rank, nprocs;

static unsigned char pat(long a, long b, long j)
{
    return (unsigned char)((a * 7 + b * 13 + j) & 0xff);
}

static void run(enum op op, long size, char *s_buf, char *r_buf)
{
    switch (op) {
    case BCAST:
        MPI_Bcast(s_buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        MPI_Allreduce(s_buf, r_buf, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case ALLGATHER:
        MPI_Allgather(s_buf, (int)size, MPI_CHAR, r_buf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
        break;
    case ALLTOALL:
        MPI_Alltoall(s_buf, (int)size, MPI_CHAR, r_buf, (int)size, MPI_CHAR, MPI_COMM_WORLD);
        break;
    case BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    }
}

/* One untimed call with rank-specific data; returns the number of wrong elements here. */
static long validate(enum op op, long size, char *s_buf, char *r_buf)
{
    long bad = 0, n = nprocs;
    unsigned char *s = (unsigned char *)s_buf, *r = (unsigned char *)r_buf;
    switch (op) {
    case BCAST:
        for (long j = 0; j < size; j++)
            s[j] = rank == 0 ? pat(1, size, j) : 0xee;
        run(op, size, s_buf, r_buf);
        for (long j = 0; j < size; j++)
            bad += s[j] != pat(1, size, j);
        break;
    case ALLREDUCE: {
        float *sf = (float *)s_buf, *rf = (float *)r_buf;
        long count = size / 4;
        for (long j = 0; j < count; j++) {
            sf[j] = (float)(rank + j % 11);
            rf[j] = -1.0f;
        }
        run(op, size, s_buf, r_buf);
        for (long j = 0; j < count; j++)
            bad += rf[j] != (float)(n * (n - 1) / 2 + n * (j % 11));
        break;
    }
    case ALLGATHER:
        for (long j = 0; j < size; j++)
            s[j] = pat(rank, 0, j);
        memset(r, 0xee, (size_t)(size * n));
        run(op, size, s_buf, r_buf);
        for (long p = 0; p < n; p++)
            for (long j = 0; j < size; j++)
                bad += r[p * size + j] != pat(p, 0, j);
        break;
    case ALLTOALL:
        for (long p = 0; p < n; p++)
            for (long j = 0; j < size; j++)
                s[p * size + j] = pat(rank, p, j);
        memset(r, 0xee, (size_t)(size * n));
        run(op, size, s_buf, r_buf);
        for (long p = 0; p < n; p++)
            for (long j = 0; j < size; j++)
                bad += r[p * size + j] != pat(p, rank, j);
        break;
    case BARRIER:
        run(op, size, s_buf, r_buf);
        break;
    }
    return bad;
}

static long parse_arg(int argc, char **argv, int i, long dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end != '\0' || v < 1) {
        if (rank == 0)
            fprintf(stderr, "osu_coll: argument %d (%s) must be a positive number\n", i, argv[i]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

int main(int argc, char *argv[])
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    int op = -1;
    for (int i = 0; argc > 1 && i < 5; i++)
        if (strcmp(argv[1], names[i]) == 0)
            op = i;
    if (op < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: osu_coll bcast|allreduce|allgather|alltoall|barrier "
                            "[MAX_BYTES [LOOP [LOOP_LARGE]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long max_size = parse_arg(argc, argv, 2, 4L << 20);
    long loop_small = parse_arg(argc, argv, 3, 1000);
    long loop_large = parse_arg(argc, argv, 4, 100);
    if (max_size < MIN_SIZE)
        max_size = MIN_SIZE;

    /* Send and receive buffers large enough for the biggest size of any collective. */
    size_t bytes = op == BARRIER ? 8 : (size_t)max_size * (op == ALLTOALL ? nprocs : 1);
    size_t r_bytes = op == BARRIER || op == BCAST ? 8 : (size_t)max_size * nprocs;
    char *s_buf = malloc(bytes), *r_buf = malloc(r_bytes);
    if (!s_buf || !r_buf) {
        fprintf(stderr, "osu_coll: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Touch the buffers, like OSU, so no page is faulted in while timing. */
    memset(s_buf, 1, bytes);
    memset(r_buf, 0, r_bytes);

    if (rank == 0) {
        printf("# OSU MPI %s Latency Test (oxmpi bench, C MPI), %d processes\n", names[op],
               nprocs);
        printf("%-10s%18s%18s%18s%12s\n", "# Size", "Avg Latency(us)", "Min Latency(us)",
               "Max Latency(us)", "Iterations");
        fflush(stdout);
    }

    long failures = 0;
    for (long size = op == BARRIER ? 0 : MIN_SIZE; size <= max_size;) {
        long loop = size > LARGE_MESSAGE_SIZE ? loop_large : loop_small;
        long skip = size > LARGE_MESSAGE_SIZE ? loop / 10 : loop / 5;
        if (skip < 1)
            skip = 1;
        double timer = 0.0;

        MPI_Barrier(MPI_COMM_WORLD);
        for (long i = 0; i < loop + skip; i++) {
            double t0 = MPI_Wtime();
            run(op, size, s_buf, r_buf);
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

        long bad = validate(op, size, s_buf, r_buf), all_bad = 0;
        MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        memset(s_buf, 1, bytes); /* back to the timed loop's contents */

        if (rank == 0) {
            printf("%-10ld%18.2f%18.2f%18.2f%12ld\n", size, sum_t / nprocs, min_t, max_t, loop);
            if (all_bad) {
                fprintf(stderr, "osu_coll: VALIDATION FAILED: %s, %ld B, %d ranks: %ld wrong "
                                "elements\n", names[op], size, nprocs, all_bad);
                failures++;
            }
            fflush(stdout);
        }
        if (op == BARRIER || size == max_size)
            break;
        size = size * 4 > max_size ? max_size : size * 4;
    }

    free(s_buf);
    free(r_buf);
    MPI_Finalize();
    return failures ? 3 : 0;
}

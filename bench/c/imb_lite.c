/*
 * A small stand-in for IMB-MPI1 (Intel MPI Benchmarks) when its sources are not at hand:
 * the same benchmark shapes and methodology, written here, plain MPI-1 C.
 *
 *   mpicc -O2 -o imb_lite imb_lite.c
 *   mpiexec -n 2 ./imb_lite [-msglog MAX] [-time SECS] [BENCH ...]
 *
 * BENCH: PingPong Sendrecv Exchange Allreduce Bcast Barrier (default: all six).
 * Sizes 0, 1, 2, 4, ... 2^MAX bytes (default MAX 16). As IMB: per size, a barrier, then
 * n repetitions where n = min(1000, 40 MB / size) (at least 1), stopped early when a
 * size's loop has run longer than SECS (default 1); t_avg is the mean over the ranks of
 * each rank's loop time / n (PingPong: half a round trip). Output per row:
 * "BENCH BYTES REPS T_AVG_US", then "TOTAL_LOOPS_MS X" (sum of n x t_avg over all rows)
 * and "WALL_S X" (MPI_Init to MPI_Finalize on rank 0).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_REPS 1000
#define OVERALL_VOLUME (40L << 20)

static int rank, nprocs;
static char *sbuf, *rbuf;
static double loops_total_s;

typedef void (*step_fn)(int bytes);

static void pingpong(int bytes)
{
    if (rank == 0) {
        MPI_Send(sbuf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(rbuf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
}

static void sendrecv(int bytes)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    MPI_Sendrecv(sbuf, bytes, MPI_BYTE, right, 2, rbuf, bytes, MPI_BYTE, left, 2,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void exchange(int bytes)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    MPI_Request req[4];
    MPI_Irecv(rbuf, bytes, MPI_BYTE, left, 3, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(rbuf + bytes, bytes, MPI_BYTE, right, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(sbuf, bytes, MPI_BYTE, left, 3, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(sbuf, bytes, MPI_BYTE, right, 3, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

static void allreduce(int bytes)
{
    MPI_Allreduce(sbuf, rbuf, (bytes + 3) / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void bcast(int bytes)
{
    MPI_Bcast(sbuf, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void barrier(int bytes)
{
    (void)bytes;
    MPI_Barrier(MPI_COMM_WORLD);
}

static const struct {
    const char *name;
    step_fn step;
    int sized;   /* 0: one row only (Barrier) */
    int divisor; /* reported time per repetition: loop / reps / divisor */
} benches[] = {
    {"PingPong", pingpong, 1, 2}, {"Sendrecv", sendrecv, 1, 1}, {"Exchange", exchange, 1, 1},
    {"Allreduce", allreduce, 1, 1}, {"Bcast", bcast, 1, 1},     {"Barrier", barrier, 0, 1},
};
#define NBENCH ((int)(sizeof benches / sizeof benches[0]))

/* One row: returns the mean over the ranks of t_avg (µs); `reps` gets the repetitions run. */
static double run_row(int b, int bytes, double time_limit, int *reps)
{
    long n = bytes > 0 ? OVERALL_VOLUME / bytes : MAX_REPS;
    if (n > MAX_REPS)
        n = MAX_REPS;
    if (n < 1)
        n = 1;
    benches[b].step(bytes); /* warm-up, as IMB's */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    long i;
    int stop = 0;
    for (i = 0; i < n && !stop; i++) {
        benches[b].step(bytes);
        /* The time limit is checked by rank 0 every 64 repetitions and agreed on, so
           every rank leaves the loop at the same repetition. */
        if ((i & 63) == 63) {
            int over = rank == 0 && MPI_Wtime() - t0 > time_limit;
            MPI_Bcast(&over, 1, MPI_INT, 0, MPI_COMM_WORLD);
            stop = over;
        }
    }
    double mine = (MPI_Wtime() - t0) / (double)i / benches[b].divisor * 1e6, sum;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    *reps = (int)i;
    return sum / nprocs;
}

int main(int argc, char **argv)
{
    double wall0 = 0;
    int max_log = 16;
    double time_limit = 1.0;
    int selected[NBENCH], any = 0;

    MPI_Init(&argc, &argv);
    wall0 = MPI_Wtime();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    memset(selected, 0, sizeof selected);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-msglog") && a + 1 < argc) {
            const char *v = argv[++a], *colon = strchr(v, ':');
            max_log = atoi(colon ? colon + 1 : v);
        } else if (!strcmp(argv[a], "-time") && a + 1 < argc) {
            time_limit = atof(argv[++a]);
        } else {
            int found = 0;
            for (int b = 0; b < NBENCH; b++)
                if (!strcasecmp(argv[a], benches[b].name))
                    selected[b] = found = any = 1;
            if (!found) {
                if (rank == 0)
                    fprintf(stderr, "imb_lite: unknown argument %s\n", argv[a]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
    }
    if (max_log < 0 || max_log > 24) {
        if (rank == 0)
            fprintf(stderr, "imb_lite: -msglog must be 0..24\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "imb_lite: needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t cap = (size_t)2 << max_log;
    sbuf = malloc(cap);
    rbuf = malloc(cap);
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sbuf, 1, cap);
    memset(rbuf, 0, cap);

    for (int b = 0; b < NBENCH; b++) {
        if (any && !selected[b])
            continue;
        for (int k = -1; k <= max_log; k++) {
            int bytes = k < 0 ? 0 : 1 << k;
            if (!benches[b].sized && k >= 0)
                break;
            int reps;
            double t_avg = run_row(b, bytes, time_limit, &reps);
            loops_total_s += t_avg * 1e-6 * benches[b].divisor * reps;
            if (rank == 0)
                printf("%s %d %d %.2f\n", benches[b].name, bytes, reps, t_avg);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("TOTAL_LOOPS_MS %.1f\n", loops_total_s * 1e3);
        printf("WALL_S %.3f\n", MPI_Wtime() - wall0);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

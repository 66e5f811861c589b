/* Blocking waits in the two placements of 2 ranks on a host: both ranks on one
 * processor, then each on its own (when there are two). A spinning wait keeps
 * its processor through a closed yield gate only while no other rank of ours
 * reported the same processor; wherever it lands, messages and reductions must
 * arrive intact and in order. Before each placement's traffic, rank 1 computes
 * for a few milliseconds while rank 0 waits on it, so rank 0's yields come back
 * late and close the gate (on one processor), as another program's would. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS_SMALL 300
#define ROUNDS_LARGE 100
#define LARGE 4096
#define REDUCTIONS 100

static int failures = 0;

static void check(int cond, const char *what, int rank, int i) {
    if (!cond) {
        fprintf(stderr, "busy_cpu: rank %d: %s (round %d)\n", rank, what, i);
        failures++;
    }
}

/* Keeps this processor busy for `ms` milliseconds with no MPI call. */
static void compute(int ms) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 1000; i++) x += (unsigned long)i;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < ms);
}

static void ping_pong(int rank, int len, int rounds, int tag) {
    char *buf = malloc((size_t)len);
    int peer = 1 - rank;
    for (int i = 0; i < rounds; i++) {
        if (rank == 0) {
            for (int k = 0; k < len; k++) buf[k] = (char)(i + k);
            MPI_Send(buf, len, MPI_CHAR, peer, tag, MPI_COMM_WORLD);
            MPI_Recv(buf, len, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int good = 1;
            for (int k = 0; k < len; k++) good &= buf[k] == (char)(i + k + 1);
            check(good, "reply holds the wrong bytes", rank, i);
        } else {
            MPI_Recv(buf, len, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int good = 1;
            for (int k = 0; k < len; k++) good &= buf[k] == (char)(i + k);
            check(good, "ping holds the wrong bytes", rank, i);
            for (int k = 0; k < len; k++) buf[k] = (char)(buf[k] + 1);
            MPI_Send(buf, len, MPI_CHAR, peer, tag, MPI_COMM_WORLD);
        }
    }
    free(buf);
}

static void traffic(int rank, int placement) {
    /* Rank 0 waits in MPI_Recv (and then in a barrier) while rank 1 computes. */
    for (int burst = 0; burst < 3; burst++) {
        int token = burst;
        if (rank == 1) {
            compute(3);
            MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        } else {
            MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(token == burst, "token", rank, burst);
        }
        if (rank == 1) compute(3);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    ping_pong(rank, 8, ROUNDS_SMALL, 10 + placement);
    ping_pong(rank, LARGE, ROUNDS_LARGE, 20 + placement);
    for (int i = 0; i < REDUCTIONS; i++) {
        long in[2] = {rank + i, 1}, out[2] = {0, 0};
        MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        check(out[0] == 1 + 2L * i && out[1] == 2, "allreduce sum", rank, i);
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "busy_cpu: run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        perror("busy_cpu: sched_getaffinity");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int cpus[2], n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &allowed)) cpus[n++] = c;
    for (int placement = 0; placement < 2; placement++) {
        /* 0: both ranks on the first allowed processor; 1: one each (if two). */
        int cpu = placement == 0 || n < 2 ? cpus[0] : cpus[rank];
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0) {
            perror("busy_cpu: sched_setaffinity");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        traffic(rank, placement);
    }
    sched_setaffinity(0, sizeof allowed, &allowed);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("busy_cpu: all checks passed\n");
    MPI_Finalize();
    return all != 0;
}

/*
 * A small probe for profiling the hot paths (bench/PROFILE.md), plain C MPI, 2+ ranks.
 *
 *   mpicc -O2 -o probe probe.c
 *   mpiexec -n 2 ./probe rate  ITERS [BYTES]   window of 64 MPI_Isend (rank 0) / MPI_Irecv
 *                                              (rank 1) + MPI_Waitall, then a 4-byte ack
 *                                              (osu_bw / osu_mbw_mr style); prints msg/us
 *   mpiexec -n 2 ./probe testall ITERS [BYTES] as rate, the sender completing its window with
 *                                              MPI_Testall until it says all done
 *   mpiexec -n 2 ./probe wait  ITERS [BYTES]   MPI_Isend + MPI_Wait per message (rank 0) /
 *                                              MPI_Irecv + MPI_Wait (rank 1), a 4-byte ack every
 *                                              64 messages: the sender's MPI_Wait finds its
 *                                              eager send complete (per-call cost, no spin)
 *   mpiexec -n 2 ./probe lat   ITERS [BYTES]   blocking MPI_Send/MPI_Recv ping-pong; prints us
 *   mpiexec -n 2 ./probe queued ITERS [BYTES]  ITERS blocking sends (rank 0), a barrier, then
 *                                              ITERS blocking receives of messages already
 *                                              there (rank 1): per-call costs with no wait
 *   mpiexec -n N ./probe allreduce ITERS [COUNT]  MPI_Allreduce of COUNT doubles (may be 0)
 *   mpiexec -n N ./probe barrier   ITERS
 *   mpiexec -n N ./probe alltoall  ITERS [BYTES]  MPI_Alltoall of BYTES per peer (may be 0)
 *
 * Under `valgrind --tool=callgrind`, run it with ITERS and 2*ITERS: the difference of the
 * instruction counts divided by ITERS (times 64 for rate) is the cost of one operation,
 * start-up excluded. Times are the mean over ITERS after ITERS/10 warm-up rounds.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: probe rate|lat|allreduce|barrier|alltoall ITERS [BYTES]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    long iters = atol(argv[2]);
    long bytes = argc > 3 ? atol(argv[3]) : 8;
    long skip = iters / 10;
    char *sbuf = calloc((size_t)(WINDOW * (bytes + 8) * (size > 2 ? size : 2)) + 64, 1);
    char *rbuf = calloc((size_t)(WINDOW * (bytes + 8) * (size > 2 ? size : 2)) + 64, 1);
    MPI_Request req[WINDOW];
    double t0 = 0, t = 0;
    int peer = 1 - rank;

    if (!strcmp(mode, "rate") || !strcmp(mode, "testall")) {
        char ack[4];
        int testall = !strcmp(mode, "testall");
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Isend(sbuf, (int)bytes, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]);
                if (testall) {
                    int flag = 0;
                    while (!flag)
                        MPI_Testall(WINDOW, req, &flag, MPI_STATUSES_IGNORE);
                } else {
                    MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                }
                MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                for (int w = 0; w < WINDOW; w++)
                    MPI_Irecv(rbuf + w * bytes, (int)bytes, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("%s %ld B: %.2f msg/us\n", mode, bytes, (double)iters * WINDOW / (t * 1e6));
    } else if (!strcmp(mode, "wait")) {
        char ack[4];
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            for (int w = 0; w < WINDOW; w++) {
                if (rank == 0) {
                    MPI_Isend(sbuf, (int)bytes, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[0]);
                    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Irecv(rbuf, (int)bytes, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[0]);
                    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
                }
            }
            if (rank == 0)
                MPI_Recv(ack, 4, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (rank == 1)
                MPI_Send(ack, 4, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
        }
        t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("wait %ld B: %.2f msg/us\n", bytes, (double)iters * WINDOW / (t * 1e6));
    } else if (!strcmp(mode, "queued")) {
        /* Costs without waiting (for instruction counts): rank 0 sends ITERS blocking
         * messages (at most ~4000 fit the shared-memory ring and the credit), then both
         * meet in a barrier, then rank 1 receives them, each already there. */
        if (rank == 0)
            for (long i = 0; i < iters; i++)
                MPI_Send(sbuf, (int)bytes, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (rank == 1)
            for (long i = 0; i < iters; i++)
                MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t = MPI_Wtime() - t0;
        if (rank == 1)
            printf("queued %ld B: %.3f us per receive\n", bytes, t * 1e6 / iters);
    } else if (!strcmp(mode, "lat")) {
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (rank == 0) {
                MPI_Send(sbuf, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(rbuf, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("lat %ld B: %.3f us\n", bytes, t * 1e6 / (2.0 * iters));
    } else if (!strcmp(mode, "allreduce") || !strcmp(mode, "barrier") || !strcmp(mode, "alltoall")) {
        int which = mode[0] == 'b' ? 0 : mode[3] == 'r' ? 1 : 2;
        if (argc <= 3)
            bytes = which == 1 ? 1 : 8;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) {
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            if (which == 0)
                MPI_Barrier(MPI_COMM_WORLD);
            else if (which == 1)
                MPI_Allreduce(sbuf, rbuf, (int)bytes, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            else
                MPI_Alltoall(sbuf, (int)bytes, MPI_CHAR, rbuf, (int)bytes, MPI_CHAR, MPI_COMM_WORLD);
        }
        t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("%s %ld x %d ranks: %.3f us\n", mode, bytes, size, t * 1e6 / iters);
    } else {
        if (rank == 0)
            fprintf(stderr, "probe: unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

/*
 * OSU-style point-to-point latency (osu_latency of the OSU micro-benchmarks), plain C MPI.
 *
 *   mpicc -O2 -o osu_latency osu_latency.c && mpiexec -n 2 ./osu_latency [MAX_BYTES]
 *
 * Same methodology and output as crates/oxmpi/examples/osu_latency.rs: for each size
 * 0, 1, 2, 4, ... MAX_BYTES (default 4 MiB), a barrier, then skip + loop ping-pongs with
 * blocking MPI_Send/MPI_Recv; the clock starts after the skip warmup round trips.
 * Latency = elapsed / (2 * loop) in microseconds. loop/skip = 10000/100 up to 8 KiB,
 * 1000/10 above. Only MPI-1 calls, so it builds against any MPI (MPICH, Open MPI, oxmpi).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_MESSAGE_SIZE 8192
#define LOOP_SMALL 10000
#define SKIP_SMALL 100
#define LOOP_LARGE 1000
#define SKIP_LARGE 10
#define TAG 1
#define SYNC_TAG 999

/* Two-rank barrier (zero-byte handshake), the same as the Rust program's; not timed. */
static void sync_ranks(int rank, int peer)
{
    if (rank == 0) {
        MPI_Send(NULL, 0, MPI_CHAR, peer, SYNC_TAG, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_CHAR, peer, SYNC_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(NULL, 0, MPI_CHAR, peer, SYNC_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_CHAR, peer, SYNC_TAG, MPI_COMM_WORLD);
    }
}

int main(int argc, char *argv[])
{
    int rank, nprocs;
    long max_size = 4L << 20;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc > 1) {
        char *end;
        max_size = strtol(argv[1], &end, 10);
        if (*end != '\0' || max_size < 0) {
            if (rank == 0)
                fprintf(stderr, "osu_latency: MAX_BYTES must be a number\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "This test requires exactly two processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank;

    size_t bytes = max_size > 0 ? (size_t)max_size : 1;
    char *s_buf = malloc(bytes), *r_buf = malloc(bytes);
    if (!s_buf || !r_buf) {
        fprintf(stderr, "osu_latency: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Touch the buffers, like OSU, so no page is faulted in while timing. */
    memset(s_buf, 'a', bytes);
    memset(r_buf, 'b', bytes);

    if (rank == 0) {
        printf("# OSU MPI Latency Test (oxmpi bench, C MPI)\n");
        printf("%-10s%18s\n", "# Size", "Latency (us)");
        fflush(stdout);
    }

    for (long size = 0; size <= max_size; size = size ? size * 2 : 1) {
        int loop = LOOP_SMALL, skip = SKIP_SMALL;
        if (size > LARGE_MESSAGE_SIZE) {
            loop = LOOP_LARGE;
            skip = SKIP_LARGE;
        }
        double t_start = 0.0, t_end;

        sync_ranks(rank, peer);
        for (int i = 0; i < loop + skip; i++) {
            if (i == skip)
                t_start = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(s_buf, (int)size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
                MPI_Recv(r_buf, (int)size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(r_buf, (int)size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s_buf, (int)size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
            }
        }
        t_end = MPI_Wtime();

        if (rank == 0) {
            double latency = (t_end - t_start) * 1e6 / (2.0 * loop);
            printf("%-10ld%18.2f\n", size, latency);
            fflush(stdout);
        }
    }

    free(s_buf);
    free(r_buf);
    MPI_Finalize();
    return 0;
}

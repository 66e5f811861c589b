/*
 * OSU-style point-to-point bandwidth (osu_bw of the OSU micro-benchmarks), plain C MPI.
 *
 *   mpicc -O2 -o osu_bw osu_bw.c && mpiexec -n 2 ./osu_bw [MAX_BYTES]
 *
 * Same methodology and output as crates/oxmpi/examples/osu_bw.rs: for each size
 * 1, 2, 4, ... MAX_BYTES (default 4 MiB), a barrier, then skip + loop times: rank 0 posts
 * 64 MPI_Isend and MPI_Waitall, then MPI_Recv of a 4-byte ack; rank 1 posts 64 MPI_Irecv,
 * MPI_Waitall, and sends the ack. The clock starts after the skip warmup windows.
 * MB/s = size * 64 * loop / elapsed / 1e6. loop/skip = 100/10 up to 8 KiB, 20/2 above.
 *
 * One deviation from OSU (shared with the Rust program, which cannot alias 64 mutable
 * receive buffers): each receive of the window gets its own slot of r_buf instead of all
 * 64 receiving into the same buffer.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define LARGE_MESSAGE_SIZE 8192
#define LOOP_SMALL 100
#define SKIP_SMALL 10
#define LOOP_LARGE 20
#define SKIP_LARGE 2
#define TAG 100
#define ACK_TAG 101
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
    MPI_Request req[WINDOW];
    MPI_Status stat[WINDOW];
    char ack[4] = {0};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc > 1) {
        char *end;
        max_size = strtol(argv[1], &end, 10);
        if (*end != '\0' || max_size < 1) {
            if (rank == 0)
                fprintf(stderr, "osu_bw: MAX_BYTES must be a positive number\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "This test requires exactly two processes\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int peer = 1 - rank;

    size_t bytes = max_size > 4 ? (size_t)max_size : 4;
    size_t r_bytes = rank == 1 ? WINDOW * bytes : 4;
    char *s_buf = malloc(bytes), *r_buf = malloc(r_bytes);
    if (!s_buf || !r_buf) {
        fprintf(stderr, "osu_bw: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Touch the buffers, like OSU, so no page is faulted in while timing. */
    memset(s_buf, 'a', bytes);
    memset(r_buf, 'b', r_bytes);

    if (rank == 0) {
        printf("# OSU MPI Bandwidth Test (oxmpi bench, C MPI)\n");
        printf("%-10s%18s\n", "# Size", "Bandwidth (MB/s)");
        fflush(stdout);
    }

    for (long size = 1; size <= max_size; size *= 2) {
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
                for (int j = 0; j < WINDOW; j++)
                    MPI_Isend(s_buf, (int)size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, stat);
                MPI_Recv(ack, 4, MPI_CHAR, peer, ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int j = 0; j < WINDOW; j++)
                    MPI_Irecv(r_buf + (size_t)j * size, (int)size, MPI_CHAR, peer, TAG,
                              MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(WINDOW, req, stat);
                MPI_Send(ack, 4, MPI_CHAR, peer, ACK_TAG, MPI_COMM_WORLD);
            }
        }
        t_end = MPI_Wtime();

        if (rank == 0) {
            double mbytes = (double)size / 1e6 * (double)loop * WINDOW;
            printf("%-10ld%18.2f\n", size, mbytes / (t_end - t_start));
            fflush(stdout);
        }
    }

    free(s_buf);
    free(r_buf);
    MPI_Finalize();
    return 0;
}

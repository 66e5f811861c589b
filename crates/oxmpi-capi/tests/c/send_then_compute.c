/* A message must reach a waiting receiver while its sender computes after the send
 * call returned: MPI_Send, MPI_Isend + MPI_Wait, and a window of MPI_Isends +
 * MPI_Waitall, each followed by a stretch with no MPI call at all. Rank 1 receives
 * and then says so outside MPI (it creates a file); rank 0, still making no MPI
 * call, looks for that file for up to 20 s. Over TCP a packet left in the send
 * queue would wait for rank 0's next MPI call, which comes only after the file. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 8

static void nap(void) {
    struct timespec ts = {0, 1000000}; /* 1 ms */
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "send_then_compute: run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* A directory both ranks know, named after rank 0's pid. */
    long id = (long)getpid();
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512];
    snprintf(dir, sizeof dir, "%s/oxmpi-send-then-compute-%ld", tmp, id);
    if (rank == 0 && mkdir(dir, 0700) != 0) {
        perror("send_then_compute: mkdir");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const char *modes[3] = {"MPI_Send", "MPI_Isend+MPI_Wait", "MPI_Isend window+MPI_Waitall"};
    const int sizes[3] = {8, 8192, 60000};
    char *buf = malloc((size_t)WINDOW * 60000);
    for (int m = 0; m < 3; m++) {
        for (int s = 0; s < 3; s++) {
            int len = sizes[s], n = m == 2 ? WINDOW : 1;
            char flag[600];
            snprintf(flag, sizeof flag, "%s/got-%d-%d", dir, m, len);
            if (rank == 0) {
                for (int i = 0; i < n * len; i++) buf[i] = (char)(i * 7 + m + s);
                MPI_Request req[WINDOW];
                for (int i = 0; i < n; i++) {
                    if (m == 0)
                        MPI_Send(buf + i * len, len, MPI_CHAR, 1, i, MPI_COMM_WORLD);
                    else
                        MPI_Isend(buf + i * len, len, MPI_CHAR, 1, i, MPI_COMM_WORLD, &req[i]);
                }
                if (m > 0) MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
                /* Computing: no MPI call until rank 1 has every message. */
                int waited = 0;
                while (access(flag, F_OK) != 0 && waited < 20000) {
                    nap();
                    waited++;
                }
                if (access(flag, F_OK) != 0) {
                    printf("FAIL %s of %d bytes: not received while the sender computed for 20 s\n",
                           modes[m], len);
                    failures++;
                }
            } else {
                char *got = malloc((size_t)n * len);
                for (int i = 0; i < n; i++)
                    MPI_Recv(got + i * len, len, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < n * len; i++)
                    if (got[i] != (char)(i * 7 + m + s)) {
                        printf("FAIL %s of %d bytes: byte %d differs\n", modes[m], len, i);
                        failures++;
                        break;
                    }
                free(got);
                FILE *f = fopen(flag, "w");
                if (f) fclose(f);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) unlink(flag);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) rmdir(dir);
    int all = 0;
    MPI_Reduce(&failures, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all == 0) printf("send_then_compute: all checks passed\n");
        else printf("send_then_compute: %d failures\n", all);
    }
    free(buf);
    MPI_Finalize();
    return all != 0;
}

/* MPI_Allgatherv with equal counts whose displacements differ between ranks.
 * The counts are the same on every rank, as MPI requires, but each rank places
 * the blocks where it likes: even ranks in order without gaps (allgather's
 * layout), odd ranks in reverse order with gaps. An implementation that picks
 * its algorithm from the displacements sends the ranks down different paths;
 * they must all agree (choose from what they share) and each must find every
 * block where it asked. Sizes from one int to more than 64 KiB, repeated (the
 * shared area is made on a communicator's third call), in place and not.
 * Prints "allgatherv_displs: all checks passed on N ranks". */
#include "check.h"

static int wrank;

static int val(int r, int i, int round) { return r * 1000003 + i * 7 + round; }

static void run(MPI_Comm comm, int c, int round, int in_place) {
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *counts = malloc(n * sizeof(int)), *displs = malloc(n * sizeof(int));
    int gap = (me % 2 == 1) ? 3 : 0;
    for (int r = 0; r < n; r++) {
        int slot = (me % 2 == 1) ? n - 1 - r : r;
        counts[r] = c;
        displs[r] = slot * (c + gap) + gap;
    }
    int total = n * (c + gap) + gap + 1;
    int *recv = malloc(total * sizeof(int)), *send = malloc(c * sizeof(int));
    for (int i = 0; i < total; i++) recv[i] = -1;
    for (int i = 0; i < c; i++) send[i] = val(me, i, round);
    if (in_place)
        for (int i = 0; i < c; i++) recv[displs[me] + i] = val(me, i, round);
    OK(MPI_Allgatherv(in_place ? MPI_IN_PLACE : send, c, MPI_INT, recv, counts, displs, MPI_INT,
                      comm));
    char *mine = calloc(total, 1);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < c; i++) {
            mine[displs[r] + i] = 1;
            int got = recv[displs[r] + i];
            if (got != val(r, i, round))
                fprintf(stderr, "rank %d: c=%d round %d in_place %d: block %d element %d is %d, not %d\n",
                        wrank, c, round, in_place, r, i, got, val(r, i, round));
            CHECK(got == val(r, i, round));
        }
    for (int i = 0; i < total; i++)
        if (!mine[i]) CHECK(recv[i] == -1); /* a gap between blocks stays untouched */
    free(mine);
    free(recv);
    free(send);
    free(counts);
    free(displs);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half);
    const int sizes[] = {1, 2, 5, 64, 300, 2048, 20000};
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
        for (int round = 0; round < 4; round++) {
            run(MPI_COMM_WORLD, sizes[s], round, round % 2);
            run(half, sizes[s], round, 0);
        }
    MPI_Comm_free(&half);
    if (wrank == 0) printf("allgatherv_displs: all checks passed on %d ranks\n", n);
    MPI_Finalize();
    return 0;
}

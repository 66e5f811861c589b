/* Tens of thousands of MPI_Comm_split/MPI_Comm_free in a loop: context ids
 * are recycled, the loop's speed is measured (argument: iterations). */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 20000;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Comm c;
        OK(MPI_Comm_split(MPI_COMM_WORLD, (rank + i) % 2, -rank, &c));
        int r; OK(MPI_Comm_rank(c, &r));
        OK(MPI_Comm_free(&c));
    }
    t = MPI_Wtime() - t;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("split_loop: %d splits in %.3f s (%.1f us each) on %d ranks\n", iters, t, 1e6 * t / iters, size);
    MPI_Finalize();
    return 0;
}

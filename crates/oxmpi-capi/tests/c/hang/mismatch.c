/* Collectives called differently on different ranks, for checking mode:
 * argv[1] = root | op | count | order | ok. Rank size-1 is the odd one out. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, size, x[4] = {1, 2, 3, 4}, y[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "ok";
    int odd = rank == size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(what, "root")) {
        MPI_Bcast(x, 1, MPI_INT, odd ? 1 : 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "op")) {
        MPI_Allreduce(x, y, 1, MPI_INT, odd ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(what, "count")) {
        MPI_Reduce(x, y, odd ? 2 : 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (!strcmp(what, "order")) {
        if (odd) {
            MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            MPI_Bcast(x, 1, MPI_INT, 0, MPI_COMM_WORLD);
        } else {
            MPI_Bcast(x, 1, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        }
    } else {
        MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Allreduce(x, y, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Reduce(x, y, 4, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD);
        MPI_Allgather(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("done %s\n", what);
    MPI_Finalize();
    return 0;
}

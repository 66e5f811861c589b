/* Different collectives at the same point: rank 0 broadcasts while the
 * others reduce (the "ranks 1,2 are in MPI_Reduce #1"). */
#include <mpi.h>
#include <stdlib.h>
#define COUNT (1 << 20)
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *x = calloc(COUNT, sizeof(int)), *y = calloc(COUNT, sizeof(int));
    if (rank == 0)
        MPI_Bcast(x, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
    else
        MPI_Reduce(x, y, COUNT, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

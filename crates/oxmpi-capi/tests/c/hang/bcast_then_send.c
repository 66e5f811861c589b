/* Seed example 4.22: rank 0 broadcasts then sends, rank 1 receives then
 * broadcasts. With a large broadcast (which waits for its receiver) it
 * deadlocks; with argv[1] = "small" (one int) only when collectives
 * synchronize (OXMPI_SYNC_COLLECTIVES=1). */
#include <mpi.h>
#include <stdlib.h>
#define COUNT (1 << 20)
int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    int count = argc > 1 ? 1 : COUNT;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *buf1 = calloc(COUNT, sizeof(int));
    if (rank == 0) {
        MPI_Bcast(buf1, count, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Send(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Bcast(buf1, count, MPI_INT, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}

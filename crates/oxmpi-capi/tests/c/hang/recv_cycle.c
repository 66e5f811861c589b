/* Every rank receives from its right neighbour before sending: a wait-for
 * cycle through all ranks (2 ranks: the classic receive-receive exchange). */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}

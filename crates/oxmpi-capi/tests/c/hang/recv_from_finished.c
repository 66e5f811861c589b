/* Rank 1 waits for a message rank 0 never sends: rank 0 goes to MPI_Finalize. */
#include <mpi.h>
int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        MPI_Recv(&x, 1, MPI_INT, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}

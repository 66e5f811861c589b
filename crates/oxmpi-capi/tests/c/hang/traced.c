/* A small job for the timeline: a ring of sends, a broadcast and an allreduce. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, x, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    x = rank;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 1, &x, 1, MPI_INT, (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) MPI_Send(&rank, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&rank, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("sum %d\n", y);
    MPI_Finalize();
    return 0;
}

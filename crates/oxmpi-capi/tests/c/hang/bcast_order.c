/* Seed example 4.20: two ranks call two broadcasts in opposite orders. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define COUNT (1 << 20)
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *buf1 = calloc(COUNT, sizeof(int)), *buf2 = calloc(COUNT, sizeof(int));
    switch (rank) {
    case 0:
        MPI_Bcast(buf1, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(buf2, COUNT, MPI_INT, 1, MPI_COMM_WORLD);
        break;
    case 1:
        MPI_Bcast(buf2, COUNT, MPI_INT, 1, MPI_COMM_WORLD);
        MPI_Bcast(buf1, COUNT, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    }
    MPI_Finalize();
    return 0;
}

/* Seed example 4.20: ranks 0 and 1 call two broadcasts in opposite orders
 * (other ranks call none). Large messages by default; argv[1] = "small" for
 * one int each (the broadcasts then do not wait for receivers, and the ranks
 * meet at the second one). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define COUNT (1 << 20)
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int count = argc > 1 ? 1 : COUNT;
    int *buf1 = calloc(COUNT, sizeof(int)), *buf2 = calloc(COUNT, sizeof(int));
    switch (rank) {
    case 0:
        MPI_Bcast(buf1, count, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(buf2, count, MPI_INT, 1, MPI_COMM_WORLD);
        break;
    case 1:
        MPI_Bcast(buf2, count, MPI_INT, 1, MPI_COMM_WORLD);
        MPI_Bcast(buf1, count, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    }
    MPI_Finalize();
    return 0;
}

/* A long transfer: rank 0 sends 256 MiB to rank 1, which waits in MPI_Recv
 * while the bytes move. Never a deadlock. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define BYTES (256 << 20)
int main(int argc, char **argv) {
    int rank, count;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = calloc(BYTES, 1);
    if (rank == 0) {
        MPI_Send(buf, BYTES, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(buf, BYTES, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        printf("received %d bytes\n", count);
    }
    MPI_Finalize();
    return 0;
}

/* Seed example 4.21 on 3 ranks: broadcasts on three two-rank communicators
 * {0,1}, {1,2}, {2,0}, each rank first the one it roots; large messages make
 * every broadcast wait for its receiver, so the three form a cycle. */
#include <mpi.h>
#include <stdlib.h>
#define COUNT (1 << 20)
int main(int argc, char **argv) {
    int rank;
    MPI_Comm comm0, comm1, comm2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* commK holds world ranks K and K+1 (mod 3), the lower one first. */
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 || rank == 1 ? 0 : MPI_UNDEFINED, rank, &comm0);
    MPI_Comm_split(MPI_COMM_WORLD, rank == 1 || rank == 2 ? 0 : MPI_UNDEFINED, rank, &comm1);
    MPI_Comm_split(MPI_COMM_WORLD, rank == 2 || rank == 0 ? 0 : MPI_UNDEFINED, rank, &comm2);
    int *buf1 = calloc(COUNT, sizeof(int)), *buf2 = calloc(COUNT, sizeof(int));
    switch (rank) {
    case 0: /* root of comm0 (rank 0 there), then receives on comm2 from world 2 (rank 1 there) */
        MPI_Bcast(buf1, COUNT, MPI_INT, 0, comm0);
        MPI_Bcast(buf2, COUNT, MPI_INT, 1, comm2);
        break;
    case 1:
        MPI_Bcast(buf1, COUNT, MPI_INT, 0, comm1);
        MPI_Bcast(buf2, COUNT, MPI_INT, 0, comm0);
        break;
    case 2:
        MPI_Bcast(buf1, COUNT, MPI_INT, 1, comm2);
        MPI_Bcast(buf2, COUNT, MPI_INT, 0, comm1);
        break;
    }
    MPI_Finalize();
    return 0;
}

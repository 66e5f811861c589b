/* Both ranks post a receive and a synchronous send to each other but with
 * tags that never match: MPI_Waitall waits forever on both. */
#include <mpi.h>
int main(int argc, char **argv) {
    int rank, in = 0, out = 1;
    MPI_Request r[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int peer = 1 - rank;
    MPI_Irecv(&in, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Issend(&out, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    MPI_Finalize();
    return 0;
}

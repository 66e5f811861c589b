/* Persistent collectives: a persistent 8-byte allreduce started and completed ITERS
 * times (argv[1]) on MPI_COMM_WORLD, or on MPI_COMM_SELF with argv[2] = "s";
 * bench/pcoll_count.sh counts its instructions under callgrind. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    int self = argc > 2 && argv[2][0] == 's';
    MPI_Comm c = self ? MPI_COMM_SELF : MPI_COMM_WORLD;
    double x = 1.0, y = 0.0;
    MPI_Request r;
    MPI_Allreduce_init(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c, MPI_INFO_NULL, &r);
    for (int i = 0; i < iters; i++) {
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&r);
    MPI_Finalize();
    return 0;
}

/* A job that ends one of three ways once every rank is up (an allreduce
 * proves the shared-memory segment was in use): "normal" (MPI_Finalize),
 * "kill" (the last rank is killed by SIGKILL while the others wait in a
 * barrier), "abort" (the last rank calls MPI_Abort(..., 5)). */
#include "check.h"
#include <signal.h>
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "normal";
    int rank, size, one = 1, sum = 0;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size);
    if (rank == size - 1 && strcmp(mode, "kill") == 0) raise(SIGKILL);
    if (rank == size - 1 && strcmp(mode, "abort") == 0) MPI_Abort(MPI_COMM_WORLD, 5);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("shm_end %s: rank %d done\n", mode, rank);
    OK(MPI_Finalize());
    return 0;
}

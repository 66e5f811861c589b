/* Exercise 4.1: rank 0 reads integers from standard input and broadcasts each
 * to every rank, until it reads a negative one (which is broadcast too, so
 * every rank knows to stop). Every rank prints its rank and each value it got.
 * Checks: all ranks saw the same sequence (count, sum and a position-weighted
 * hash are compared with MPI_Allreduce MIN/MAX), and rank 0 prints a summary. */
#include "../check.h"

int main(int argc, char **argv) {
    int rank, size, value, n = 0;
    long long sum = 0, hash = 0;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    do {
        if (rank == 0 && scanf("%d", &value) != 1) value = -1; /* end of input ends too */
        OK(MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (value >= 0) {
            printf("rank %d got %d\n", rank, value);
            n++;
            sum += value;
            hash = hash * 31 + value;
        }
    } while (value >= 0);
    long long mine[3] = {n, sum, hash}, lo[3], hi[3];
    OK(MPI_Allreduce(mine, lo, 3, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(mine, hi, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) CHECK(lo[i] == hi[i]);
    fflush(stdout);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("exercise 4.1: %d values, sum %lld, on %d ranks\n", n, sum, size);
    OK(MPI_Finalize());
    return 0;
}

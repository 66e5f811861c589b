/* Exercise 4.5: rank 0 reads pairs (an int and a double) from standard input
 * and sends both with one MPI_Bcast of a struct datatype built with
 * MPI_Type_create_struct (the book's Type_struct), until the int is negative.
 * Every rank prints its rank and the values. Checks: the struct type's size
 * and extent, and that all ranks saw the same sequence. */
#include "../check.h"
#include <stddef.h>

struct pair { int i; double d; };

int main(int argc, char **argv) {
    int rank, size, n = 0;
    double dsum = 0.0;
    long long isum = 0;
    struct pair v;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int blocklens[2] = {1, 1};
    MPI_Aint displs[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, ptype;
    OK(MPI_Type_create_struct(2, blocklens, displs, types, &ptype));
    OK(MPI_Type_commit(&ptype));
    int sz; MPI_Aint lb, ext;
    OK(MPI_Type_size(ptype, &sz)); CHECK(sz == sizeof(int) + sizeof(double));
    OK(MPI_Type_get_extent(ptype, &lb, &ext)); CHECK(lb == 0 && ext == sizeof(struct pair));
    do {
        if (rank == 0 && scanf("%d %lf", &v.i, &v.d) != 2) v.i = -1;
        OK(MPI_Bcast(&v, 1, ptype, 0, MPI_COMM_WORLD));
        if (v.i >= 0) {
            printf("rank %d got %d %.3f\n", rank, v.i, v.d);
            n++;
            isum += v.i;
            dsum += v.d;
        }
    } while (v.i >= 0);
    double mine[3] = {n, (double)isum, dsum}, lo[3], hi[3];
    OK(MPI_Allreduce(mine, lo, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(mine, hi, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) CHECK(lo[i] == hi[i]);
    OK(MPI_Type_free(&ptype));
    fflush(stdout);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("exercise 4.5: %d pairs, int sum %lld, double sum %.3f, on %d ranks\n", n, isum, dsum, size);
    OK(MPI_Finalize());
    return 0;
}

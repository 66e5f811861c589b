/* Exercise 4.6: exercise 4.5 with MPI_Pack / MPI_Unpack: rank 0 packs the int
 * and the double it read into one buffer, broadcasts it as MPI_PACKED, and
 * every rank unpacks it. Checks the pack positions against MPI_Pack_size and
 * that all ranks saw the same sequence. */
#include "../check.h"

int main(int argc, char **argv) {
    int rank, size, n = 0, iv, pos, isz, dsz;
    double dv, dsum = 0.0;
    long long isum = 0;
    char buf[64];
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &isz));
    OK(MPI_Pack_size(1, MPI_DOUBLE, MPI_COMM_WORLD, &dsz));
    CHECK(isz >= (int)sizeof(int) && dsz >= (int)sizeof(double) && isz + dsz <= (int)sizeof buf);
    do {
        pos = 0;
        if (rank == 0) {
            if (scanf("%d %lf", &iv, &dv) != 2) { iv = -1; dv = 0.0; }
            OK(MPI_Pack(&iv, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
            OK(MPI_Pack(&dv, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
            CHECK(pos > 0 && pos <= isz + dsz);
        }
        OK(MPI_Bcast(&pos, 1, MPI_INT, 0, MPI_COMM_WORLD));
        OK(MPI_Bcast(buf, pos, MPI_PACKED, 0, MPI_COMM_WORLD));
        int at = 0;
        OK(MPI_Unpack(buf, pos, &at, &iv, 1, MPI_INT, MPI_COMM_WORLD));
        OK(MPI_Unpack(buf, pos, &at, &dv, 1, MPI_DOUBLE, MPI_COMM_WORLD));
        CHECK(at == pos);
        if (iv >= 0) {
            printf("rank %d got %d %.3f\n", rank, iv, dv);
            n++;
            isum += iv;
            dsum += dv;
        }
    } while (iv >= 0);
    double mine[3] = {n, (double)isum, dsum}, lo[3], hi[3];
    OK(MPI_Allreduce(mine, lo, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(mine, hi, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < 3; i++) CHECK(lo[i] == hi[i]);
    fflush(stdout);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("exercise 4.6: %d pairs, int sum %lld, double sum %.3f, on %d ranks\n", n, isum, dsum, size);
    OK(MPI_Finalize());
    return 0;
}

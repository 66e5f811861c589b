/* Exercise 4.21: the maximum of an array spread evenly over the ranks and its
 * (global) index, with MPI_Allreduce and MPI_MAXLOC on (double, int) pairs
 * (MPI_DOUBLE_INT); the maximum appears twice, so the lowest index must win.
 * Checked on every rank against a serial scan of the whole array; the same
 * with MPI_MINLOC on (int, int) pairs (MPI_2INT) and MPI_Reduce to rank 0. */
#include "../check.h"

#define PER 25

static double value(int g) { return (double)((g * 7919 + 13) % 1009) / 8.0; }
static int ivalue(int g) { return (g * 104729 + 7) % 997 - 500; }

int main(int argc, char **argv) {
    int rank, size, i;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int n = PER * size;
    /* serial: the maximum, then plant a copy of it at a later index on the last rank */
    double best = value(0); int bi = 0;
    for (i = 1; i < n; i++) if (value(i) > best) { best = value(i); bi = i; }
    int dup = n - 1 == bi ? bi : n - 1; /* a second occurrence (or itself) */
    double a[PER];
    for (i = 0; i < PER; i++) {
        int g = rank * PER + i;
        a[i] = g == dup ? best : value(g);
    }
    struct { double val; int idx; } in, out;
    in.val = a[0]; in.idx = rank * PER;
    for (i = 1; i < PER; i++) if (a[i] > in.val) { in.val = a[i]; in.idx = rank * PER + i; }
    OK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(out.val == best && out.idx == bi);

    struct { int val; int idx; } iin, iout;
    iin.val = ivalue(rank * PER); iin.idx = rank * PER;
    for (i = 1; i < PER; i++) if (ivalue(rank * PER + i) < iin.val) { iin.val = ivalue(rank * PER + i); iin.idx = rank * PER + i; }
    OK(MPI_Reduce(&iin, &iout, 1, MPI_2INT, MPI_MINLOC, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        int ib = ivalue(0), ibi = 0;
        for (i = 1; i < n; i++) if (ivalue(i) < ib) { ib = ivalue(i); ibi = i; }
        CHECK(iout.val == ib && iout.idx == ibi);
        printf("exercise 4.21: max %.3f at %d, min %d at %d of %d values\n", out.val, out.idx, iout.val, iout.idx, n);
    }
    OK(MPI_Finalize());
    return 0;
}

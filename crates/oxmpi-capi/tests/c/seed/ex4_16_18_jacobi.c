/* Exercises 4.16-4.18: Jacobi iteration for the Laplace equation on a 12x12
 * grid. The boundary (first and last row and column) is -1 and stays fixed;
 * each interior point starts as the rank that owns its row. The rows are
 * split unevenly over the ranks (4.18); ghost rows are exchanged with
 * MPI_Sendrecv, the squared difference norm is summed with MPI_Allreduce,
 * and the loop stops when sqrt(diffnorm) < 1.0e-2 (4.16). The solution is
 * gathered on rank 0 with MPI_Gatherv (4.17) and compared there with the
 * same iteration run serially: the same number of iterations, the same
 * values. */
#include "../check.h"
#include <math.h>

#define maxn 12
#define MAXIT 1000

static int lo_of(int r, int size) { return r * maxn / size + (r > 0 && r < size ? r % 2 : 0); }

int main(int argc, char **argv) {
    int rank, size, i, j, r;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 6);
    int lo = lo_of(rank, size), hi = lo_of(rank + 1, size), rows = hi - lo; /* my global rows lo..hi-1 */
    CHECK(rows >= 1);
    double (*x)[maxn] = calloc(rows + 2, sizeof *x), (*xnew)[maxn] = calloc(rows + 2, sizeof *xnew);
    for (i = 1; i <= rows; i++) {
        int g = lo + i - 1;
        for (j = 0; j < maxn; j++) x[i][j] = (g == 0 || g == maxn - 1 || j == 0 || j == maxn - 1) ? -1.0 : rank;
    }
    int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int it = 0;
    double gdiff = 0.0;
    do {
        OK(MPI_Sendrecv(x[rows], maxn, MPI_DOUBLE, up, 0, x[0], maxn, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Sendrecv(x[1], maxn, MPI_DOUBLE, down, 1, x[rows + 1], maxn, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double diff = 0.0;
        for (i = 1; i <= rows; i++) {
            int g = lo + i - 1;
            for (j = 0; j < maxn; j++) {
                if (g == 0 || g == maxn - 1 || j == 0 || j == maxn - 1) { xnew[i][j] = x[i][j]; continue; }
                xnew[i][j] = (x[i + 1][j] + x[i - 1][j] + x[i][j + 1] + x[i][j - 1]) / 4.0;
                diff += (xnew[i][j] - x[i][j]) * (xnew[i][j] - x[i][j]);
            }
        }
        for (i = 1; i <= rows; i++)
            for (j = 0; j < maxn; j++) x[i][j] = xnew[i][j];
        OK(MPI_Allreduce(&diff, &gdiff, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        gdiff = sqrt(gdiff);
        it++;
    } while (gdiff >= 1.0e-2 && it < MAXIT);
    CHECK(it < MAXIT);

    /* 4.17/4.18: gather the (uneven) rows on rank 0 */
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (r = 0; r < size; r++) { displs[r] = lo_of(r, size) * maxn; counts[r] = (lo_of(r + 1, size) - lo_of(r, size)) * maxn; }
    static double xall[maxn][maxn];
    OK(MPI_Gatherv(x[1], rows * maxn, MPI_DOUBLE, xall, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        /* serial reference: same start, same sweep, same stop rule */
        static double s[maxn][maxn], snew[maxn][maxn];
        int owner[maxn];
        for (r = 0; r < size; r++)
            for (i = lo_of(r, size); i < lo_of(r + 1, size); i++) owner[i] = r;
        for (i = 0; i < maxn; i++)
            for (j = 0; j < maxn; j++) s[i][j] = (i == 0 || i == maxn - 1 || j == 0 || j == maxn - 1) ? -1.0 : owner[i];
        int sit = 0;
        double sdiff;
        do {
            sdiff = 0.0;
            for (i = 0; i < maxn; i++)
                for (j = 0; j < maxn; j++) {
                    if (i == 0 || i == maxn - 1 || j == 0 || j == maxn - 1) { snew[i][j] = s[i][j]; continue; }
                    snew[i][j] = (s[i + 1][j] + s[i - 1][j] + s[i][j + 1] + s[i][j - 1]) / 4.0;
                    sdiff += (snew[i][j] - s[i][j]) * (snew[i][j] - s[i][j]);
                }
            for (i = 0; i < maxn; i++)
                for (j = 0; j < maxn; j++) s[i][j] = snew[i][j];
            sdiff = sqrt(sdiff);
            sit++;
            if (sit == it) break; /* compare after the parallel run's iteration count */
        } while (sdiff >= 1.0e-2);
        CHECK(sit == it);                          /* serial did not stop earlier */
        CHECK(fabs(sdiff - gdiff) < 1e-12);        /* same norm (summed in another order) */
        for (i = 0; i < maxn; i++)
            for (j = 0; j < maxn; j++) CHECK(xall[i][j] == s[i][j]);
        printf("exercises 4.16-4.18: converged after %d iterations, diffnorm %.6f, rows per rank:", it, gdiff);
        for (r = 0; r < size; r++) printf(" %d", counts[r] / maxn);
        printf("\n");
    }
    free(x); free(xnew); free(counts); free(displs);
    OK(MPI_Finalize());
    return 0;
}

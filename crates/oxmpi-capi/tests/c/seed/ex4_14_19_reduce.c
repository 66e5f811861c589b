/* Textbook examples 4.14-4.19 and the reduce-scatter/scan text of 4.3.5-4.3.6:
 * MPI_Allgather of 100 ints (4.14); the distributed dot product PAR_BLAS1
 * with MPI_Reduce (4.15); the vector-matrix product PAR_BLAS2 with MPI_Reduce
 * (4.16) and with MPI_Allreduce (4.19); MPI_MAXLOC over 30 (double, rank)
 * pairs (4.17); global MPI_MINLOC with (float, index) pairs (4.18);
 * MPI_Reduce_scatter and MPI_Scan. Every result is checked against the value
 * computed serially from the same inputs. */
#include "../check.h"
#include <math.h>

#define M 8   /* local length of the distributed vectors */
#define N 5   /* columns of the distributed matrix */
#define LEN 1000

static float a_of(int rank, int i) { return (float)((rank * M + i) % 7) - 2.0f; }
static float b_of(int rank, int i, int j) { return (float)((rank * M + i + 3 * j) % 5) * 0.5f; }
static double ain_of(int rank, int i) { return (double)(((rank + 1) * (i + 3) * 7919) % 101) + (i % 3 == 0 ? 0.0 : 0.25 * rank); }

int main(int argc, char **argv) {
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, myrank, root = 0, i, j, r;
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);

    /* 4.14 */
    int sendarray[100], *rbuf = (int *)malloc(gsize * 100 * sizeof(int));
    for (i = 0; i < 100; i++) sendarray[i] = myrank * 1000 + i;
    OK(MPI_Allgather(sendarray, 100, MPI_INT, rbuf, 100, MPI_INT, comm));
    for (r = 0; r < gsize; r++)
        for (i = 0; i < 100; i++) CHECK(rbuf[r * 100 + i] == r * 1000 + i);
    free(rbuf);

    /* 4.15: c = sum over ranks of a.b (values are small integers: exact in float) */
    float a[M], b[M][N], sum = 0.0f, c = -1.0f;
    for (i = 0; i < M; i++) {
        a[i] = a_of(myrank, i);
        for (j = 0; j < N; j++) b[i][j] = b_of(myrank, i, j);
    }
    for (i = 0; i < M; i++) sum += a[i] * b_of(myrank, i, 0);
    OK(MPI_Reduce(&sum, &c, 1, MPI_FLOAT, MPI_SUM, 0, comm));
    if (myrank == 0) {
        float want = 0.0f;
        for (r = 0; r < gsize; r++)
            for (i = 0; i < M; i++) want += a_of(r, i) * b_of(r, i, 0);
        CHECK(c == want);
    }

    /* 4.16 and 4.19 */
    float sumv[N], cv[N], want[N];
    for (j = 0; j < N; j++) {
        sumv[j] = 0.0f;
        for (i = 0; i < M; i++) sumv[j] += a[i] * b[i][j];
    }
    for (j = 0; j < N; j++) {
        want[j] = 0.0f;
        for (r = 0; r < gsize; r++)
            for (i = 0; i < M; i++) want[j] += a_of(r, i) * b_of(r, i, j);
    }
    for (j = 0; j < N; j++) cv[j] = -99.0f;
    OK(MPI_Reduce(sumv, cv, N, MPI_FLOAT, MPI_SUM, 0, comm));
    if (myrank == 0)
        for (j = 0; j < N; j++) CHECK(cv[j] == want[j]);
    for (j = 0; j < N; j++) cv[j] = -99.0f;
    OK(MPI_Allreduce(sumv, cv, N, MPI_FLOAT, MPI_SUM, comm));
    for (j = 0; j < N; j++) CHECK(cv[j] == want[j]);

    /* 4.17 */
    double ain[30], aout[30];
    int ind[30];
    struct { double val; int rank; } in[30], out[30];
    root = gsize - 1;
    for (i = 0; i < 30; i++) ain[i] = ain_of(myrank, i);
    for (i = 0; i < 30; ++i) {
        in[i].val = ain[i];
        in[i].rank = myrank;
    }
    OK(MPI_Reduce(in, out, 30, MPI_DOUBLE_INT, MPI_MAXLOC, root, comm));
    if (myrank == root) {
        for (i = 0; i < 30; ++i) {
            aout[i] = out[i].val;
            ind[i] = out[i].rank;
        }
        for (i = 0; i < 30; i++) {
            double best = ain_of(0, i); int who = 0;
            for (r = 1; r < gsize; r++)
                if (ain_of(r, i) > best) { best = ain_of(r, i); who = r; }
            CHECK(aout[i] == best && ind[i] == who); /* ties: the lowest rank */
        }
    }

    /* 4.18 */
    float val[LEN];
    int count = 10 + (myrank * 37) % 50, minrank = -1, minindex = -1;
    float minval = 0.0f;
    struct { float value; int index; } fin, fout;
    for (i = 0; i < count; i++) val[i] = (float)(((myrank + 5) * (i + 11) * 31) % 97) - 40.0f;
    fin.value = val[0];
    fin.index = 0;
    for (i = 1; i < count; i++)
        if (fin.value > val[i]) { fin.value = val[i]; fin.index = i; }
    fin.index = myrank * LEN + fin.index;
    root = 0;
    OK(MPI_Reduce(&fin, &fout, 1, MPI_FLOAT_INT, MPI_MINLOC, root, comm));
    if (myrank == root) {
        minval = fout.value;
        minrank = fout.index / LEN;
        minindex = fout.index % LEN;
        float best = 1e30f; int br = -1, bi = -1;
        for (r = 0; r < gsize; r++) {
            int cnt = 10 + (r * 37) % 50;
            for (i = 0; i < cnt; i++) {
                float v = (float)(((r + 5) * (i + 11) * 31) % 97) - 40.0f;
                if (v < best) { best = v; br = r; bi = i; }
            }
        }
        CHECK(minval == best && minrank == br && minindex == bi);
    }

    /* 4.3.5: MPI_Reduce_scatter, rank i gets i+1 elements of the sum */
    int *recvcounts = (int *)malloc(gsize * sizeof(int)), total = 0;
    for (r = 0; r < gsize; r++) { recvcounts[r] = r + 1; total += r + 1; }
    int *sv = (int *)malloc(total * sizeof(int)), rv[128];
    for (i = 0; i < total; i++) sv[i] = i * (myrank + 1);
    OK(MPI_Reduce_scatter(sv, rv, recvcounts, MPI_INT, MPI_SUM, comm));
    int first = myrank * (myrank + 1) / 2;
    for (i = 0; i < myrank + 1; i++) CHECK(rv[i] == (first + i) * gsize * (gsize + 1) / 2);
    free(sv); free(recvcounts);

    /* 4.3.6: MPI_Scan, inclusive prefix sums and products */
    int s = myrank + 1, ps = 0;
    OK(MPI_Scan(&s, &ps, 1, MPI_INT, MPI_SUM, comm));
    CHECK(ps == (myrank + 1) * (myrank + 2) / 2);
    double d = 2.0, pd = 0.0;
    OK(MPI_Scan(&d, &pd, 1, MPI_DOUBLE, MPI_PROD, comm));
    CHECK(pd == ldexp(1.0, myrank + 1));

    if (myrank == 0) printf("examples 4.14-4.19: all checks passed on %d ranks\n", gsize);
    OK(MPI_Finalize());
    return 0;
}

/* Reductions over every predefined datatype with every operation that the
 * standard allows on it (and MPI_CHAR/MPI_WCHAR arithmetic, which suites
 * use), with MPI_IN_PLACE, on Allreduce, Reduce, Iallreduce, Scan and
 * Reduce_local; pair types with MINLOC/MAXLOC including ties; MPI_Op_commutative;
 * zero counts. Rank 0 prints " No Errors". */
#include "check.h"
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <wchar.h>

static int rank, size, errs;
#define E(cond, ...) do { if (!(cond)) { errs++; if (errs < 20) { fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } } while (0)
#define CNT 7

/* Integer-like types: SUM PROD MAX MIN LAND LOR LXOR BAND BOR BXOR. */
#define INT_TEST(T, DT, BITOPS) do { \
    T v[CNT], w[CNT]; \
    /* SUM */ for (int i = 0; i < CNT; i++) v[i] = (T)((rank + i) % 3); \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_SUM, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { long long s = 0; for (int r = 0; r < size; r++) s += (r + i) % 3; E((long long)v[i] == s, "%s SUM [%d] %lld != %lld", #DT, i, (long long)v[i], s); } \
    /* PROD */ for (int i = 0; i < CNT; i++) v[i] = (T)(((rank + i) % 4 == 0) ? 2 : 1); \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_PROD, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { long long s = 1; for (int r = 0; r < size; r++) s *= ((r + i) % 4 == 0) ? 2 : 1; E((long long)v[i] == s, "%s PROD", #DT); } \
    /* MAX, MIN via Reduce to a root and Allreduce */ for (int i = 0; i < CNT; i++) { v[i] = (T)((rank * 5 + i) % (size + 2)); w[i] = 0; } \
    OK(MPI_Reduce(v, w, CNT, DT, MPI_MAX, size - 1, MPI_COMM_WORLD)); \
    if (rank == size - 1) for (int i = 0; i < CNT; i++) { long long m = 0; for (int r = 0; r < size; r++) if ((r * 5 + i) % (size + 2) > m) m = (r * 5 + i) % (size + 2); E((long long)w[i] == m, "%s MAX", #DT); } \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_MIN, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { long long m = 1000; for (int r = 0; r < size; r++) if ((r * 5 + i) % (size + 2) < m) m = (r * 5 + i) % (size + 2); E((long long)v[i] == m, "%s MIN", #DT); } \
    if (BITOPS) { \
        /* LAND LOR LXOR */ for (int i = 0; i < CNT; i++) v[i] = (T)(((rank + i) % 3) ? 5 : 0); \
        memcpy(w, v, sizeof v); \
        OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_LAND, MPI_COMM_WORLD)); \
        for (int i = 0; i < CNT; i++) { int s = 1; for (int r = 0; r < size; r++) s = s && ((r + i) % 3); E(((long long)v[i] != 0) == s, "%s LAND", #DT); } \
        memcpy(v, w, sizeof v); OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_LOR, MPI_COMM_WORLD)); \
        for (int i = 0; i < CNT; i++) { int s = 0; for (int r = 0; r < size; r++) s = s || ((r + i) % 3); E(((long long)v[i] != 0) == s, "%s LOR", #DT); } \
        memcpy(v, w, sizeof v); OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_LXOR, MPI_COMM_WORLD)); \
        for (int i = 0; i < CNT; i++) { int s = 0; for (int r = 0; r < size; r++) s = s ^ (((r + i) % 3) != 0); E(((long long)v[i] != 0) == s, "%s LXOR", #DT); } \
        /* BAND BOR BXOR */ for (int i = 0; i < CNT; i++) v[i] = (T)(((rank + i) % 7 == 0) ? 0x7f : (1 << ((rank + i) % 7))); \
        memcpy(w, v, sizeof v); \
        OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_BOR, MPI_COMM_WORLD)); \
        for (int i = 0; i < CNT; i++) { long long s = 0; for (int r = 0; r < size; r++) s |= ((r + i) % 7 == 0) ? 0x7f : (1 << ((r + i) % 7)); E((long long)v[i] == s, "%s BOR", #DT); } \
        memcpy(v, w, sizeof v); OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_BAND, MPI_COMM_WORLD)); \
        for (int i = 0; i < CNT; i++) { long long s = 0x7f; for (int r = 0; r < size; r++) s &= ((r + i) % 7 == 0) ? 0x7f : (1 << ((r + i) % 7)); E((long long)v[i] == s, "%s BAND", #DT); } \
        memcpy(v, w, sizeof v); OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_BXOR, MPI_COMM_WORLD)); \
        for (int i = 0; i < CNT; i++) { long long s = 0; for (int r = 0; r < size; r++) s ^= ((r + i) % 7 == 0) ? 0x7f : (1 << ((r + i) % 7)); E((long long)v[i] == s, "%s BXOR", #DT); } \
    } \
    /* Scan SUM, Exscan MAX, Reduce_local */ for (int i = 0; i < CNT; i++) v[i] = (T)(i % 2 + 1); \
    OK(MPI_Scan(MPI_IN_PLACE, v, CNT, DT, MPI_SUM, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) E((long long)v[i] == (long long)(i % 2 + 1) * (rank + 1), "%s SCAN", #DT); \
    for (int i = 0; i < CNT; i++) { v[i] = (T)(i + 1); w[i] = (T)2; } \
    OK(MPI_Reduce_local(v, w, CNT, DT, MPI_SUM)); \
    for (int i = 0; i < CNT; i++) E((long long)w[i] == i + 3, "%s Reduce_local", #DT); \
} while (0)

#define FLOAT_TEST(T, DT) do { \
    T v[CNT]; \
    for (int i = 0; i < CNT; i++) v[i] = (T)(rank + i) * (T)0.5; \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_SUM, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { T s = 0; for (int r = 0; r < size; r++) s += (T)(r + i) * (T)0.5; E(v[i] == s, "%s SUM", #DT); } \
    for (int i = 0; i < CNT; i++) v[i] = ((rank + i) % 3 == 0) ? (T)-2 : (T)1; \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_PROD, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { T s = 1; for (int r = 0; r < size; r++) s *= ((r + i) % 3 == 0) ? (T)-2 : (T)1; E(v[i] == s, "%s PROD", #DT); } \
    for (int i = 0; i < CNT; i++) v[i] = (T)((rank * 3 + i) % (size + 1)) - (T)1.25; \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_MAX, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { T m = -100; for (int r = 0; r < size; r++) { T x = (T)((r * 3 + i) % (size + 1)) - (T)1.25; if (x > m) m = x; } E(v[i] == m, "%s MAX", #DT); } \
    for (int i = 0; i < CNT; i++) v[i] = (T)((rank * 3 + i) % (size + 1)) - (T)1.25; \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_MIN, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { T m = 100; for (int r = 0; r < size; r++) { T x = (T)((r * 3 + i) % (size + 1)) - (T)1.25; if (x < m) m = x; } E(v[i] == m, "%s MIN", #DT); } \
} while (0)

#define COMPLEX_TEST(T, DT) do { \
    T v[CNT]; \
    for (int i = 0; i < CNT; i++) v[i] = (T)(rank + i) + (T)(i) * I; \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_SUM, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { T s = 0; for (int r = 0; r < size; r++) s += (T)(r + i) + (T)(i) * I; E(v[i] == s, "%s SUM", #DT); } \
    for (int i = 0; i < CNT; i++) v[i] = ((rank + i) % 2) ? (T)I : (T)1; \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_PROD, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { T s = 1; for (int r = 0; r < size; r++) s *= ((r + i) % 2) ? (T)I : (T)1; E(v[i] == s, "%s PROD", #DT); } \
} while (0)

#define BOOL_TEST(T, DT) do { \
    T v[CNT], w[CNT]; \
    for (int i = 0; i < CNT; i++) v[i] = (T)(((rank + i) % 3) != 0); \
    memcpy(w, v, sizeof v); \
    OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_LAND, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { int s = 1; for (int r = 0; r < size; r++) s = s && ((r + i) % 3); E((v[i] != 0) == s, "%s LAND", #DT); } \
    memcpy(v, w, sizeof v); OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_LOR, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { int s = 0; for (int r = 0; r < size; r++) s = s || ((r + i) % 3); E((v[i] != 0) == s, "%s LOR", #DT); } \
    memcpy(v, w, sizeof v); OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, DT, MPI_LXOR, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { int s = 0; for (int r = 0; r < size; r++) s ^= (((r + i) % 3) != 0); E((v[i] != 0) == s, "%s LXOR", #DT); } \
} while (0)

#define PAIR_TEST(T, DT) do { \
    struct { T val; int loc; } p[CNT]; \
    for (int i = 0; i < CNT; i++) { p[i].val = (T)((rank / 2 + i) % (size / 2 + 1)); p[i].loc = rank; } \
    OK(MPI_Allreduce(MPI_IN_PLACE, p, CNT, DT, MPI_MAXLOC, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { long long m = -1; int at = -1; for (int r = 0; r < size; r++) { long long x = (r / 2 + i) % (size / 2 + 1); if (x > m) { m = x; at = r; } } \
        E((long long)p[i].val == m && p[i].loc == at, "%s MAXLOC [%d] got (%lld,%d) want (%lld,%d)", #DT, i, (long long)p[i].val, p[i].loc, m, at); } \
    for (int i = 0; i < CNT; i++) { p[i].val = (T)((rank / 2 + i) % (size / 2 + 1)); p[i].loc = rank; } \
    OK(MPI_Allreduce(MPI_IN_PLACE, p, CNT, DT, MPI_MINLOC, MPI_COMM_WORLD)); \
    for (int i = 0; i < CNT; i++) { long long m = 1 << 20; int at = -1; for (int r = 0; r < size; r++) { long long x = (r / 2 + i) % (size / 2 + 1); if (x < m) { m = x; at = r; } } \
        E((long long)p[i].val == m && p[i].loc == at, "%s MINLOC", #DT); } \
} while (0)

static void noncommutative(void *in, void *inout, int *len, MPI_Datatype *dt) {
    /* 2x2 integer matrix product inout = in * inout (row-major, mod 101) */
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = { (a[0] * b[0] + a[1] * b[2]) % 101, (a[0] * b[1] + a[1] * b[3]) % 101,
                     (a[2] * b[0] + a[3] * b[2]) % 101, (a[2] * b[1] + a[3] * b[3]) % 101 };
        memcpy(b, c, sizeof c);
    }
}
static void mat_of(int r, int *m) { m[0] = r + 1; m[1] = 1; m[2] = r % 3; m[3] = 2; }
static void matmul(const int *a, const int *b, int *c) {
    int t[4] = { (a[0] * b[0] + a[1] * b[2]) % 101, (a[0] * b[1] + a[1] * b[3]) % 101,
                 (a[2] * b[0] + a[3] * b[2]) % 101, (a[2] * b[1] + a[3] * b[3]) % 101 };
    memcpy(c, t, sizeof t);
}

int main(int argc, char **argv) {
    OK(MPI_Init(NULL, NULL));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    INT_TEST(char, MPI_CHAR, 1);
    INT_TEST(signed char, MPI_SIGNED_CHAR, 1);
    INT_TEST(unsigned char, MPI_UNSIGNED_CHAR, 1);
    INT_TEST(short, MPI_SHORT, 1);
    INT_TEST(unsigned short, MPI_UNSIGNED_SHORT, 1);
    INT_TEST(int, MPI_INT, 1);
    INT_TEST(unsigned, MPI_UNSIGNED, 1);
    INT_TEST(long, MPI_LONG, 1);
    INT_TEST(unsigned long, MPI_UNSIGNED_LONG, 1);
    INT_TEST(long long, MPI_LONG_LONG, 1);
    INT_TEST(long long, MPI_LONG_LONG_INT, 1);
    INT_TEST(unsigned long long, MPI_UNSIGNED_LONG_LONG, 1);
    INT_TEST(int8_t, MPI_INT8_T, 1);
    INT_TEST(uint8_t, MPI_UINT8_T, 1);
    INT_TEST(int16_t, MPI_INT16_T, 1);
    INT_TEST(uint16_t, MPI_UINT16_T, 1);
    INT_TEST(int32_t, MPI_INT32_T, 1);
    INT_TEST(uint32_t, MPI_UINT32_T, 1);
    INT_TEST(int64_t, MPI_INT64_T, 1);
    INT_TEST(uint64_t, MPI_UINT64_T, 1);
    INT_TEST(MPI_Aint, MPI_AINT, 1);
    INT_TEST(MPI_Offset, MPI_OFFSET, 1);
    INT_TEST(MPI_Count, MPI_COUNT, 1);
    INT_TEST(wchar_t, MPI_WCHAR, 0);
    INT_TEST(int, MPI_INTEGER, 1);
    /* MPI_BYTE: bitwise operations only */
    {
        unsigned char v[CNT];
        for (int i = 0; i < CNT; i++) v[i] = (unsigned char)(1 << ((rank + i) % 8));
        OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD));
        for (int i = 0; i < CNT; i++) { int s = 0; for (int r = 0; r < size; r++) s |= 1 << ((r + i) % 8); E(v[i] == s, "MPI_BYTE BOR"); }
        for (int i = 0; i < CNT; i++) v[i] = (unsigned char)(0xf0 | rank);
        OK(MPI_Allreduce(MPI_IN_PLACE, v, CNT, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD));
        for (int i = 0; i < CNT; i++) { int s = 0; for (int r = 0; r < size; r++) s ^= 0xf0 | r; E(v[i] == s, "MPI_BYTE BXOR"); }
    }
    FLOAT_TEST(float, MPI_FLOAT);
    FLOAT_TEST(double, MPI_DOUBLE);
    FLOAT_TEST(long double, MPI_LONG_DOUBLE);
    FLOAT_TEST(float, MPI_REAL);
    FLOAT_TEST(double, MPI_DOUBLE_PRECISION);
    COMPLEX_TEST(float _Complex, MPI_C_FLOAT_COMPLEX);
    COMPLEX_TEST(float _Complex, MPI_C_COMPLEX);
    COMPLEX_TEST(double _Complex, MPI_C_DOUBLE_COMPLEX);
    COMPLEX_TEST(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX);
    COMPLEX_TEST(float _Complex, MPI_COMPLEX);
    COMPLEX_TEST(double _Complex, MPI_DOUBLE_COMPLEX);
    COMPLEX_TEST(float _Complex, MPI_CXX_FLOAT_COMPLEX);
    COMPLEX_TEST(double _Complex, MPI_CXX_DOUBLE_COMPLEX);
    BOOL_TEST(_Bool, MPI_C_BOOL);
    BOOL_TEST(_Bool, MPI_CXX_BOOL);
    BOOL_TEST(int, MPI_LOGICAL);
    PAIR_TEST(int, MPI_2INT);
    PAIR_TEST(short, MPI_SHORT_INT);
    PAIR_TEST(long, MPI_LONG_INT);
    PAIR_TEST(float, MPI_FLOAT_INT);
    PAIR_TEST(double, MPI_DOUBLE_INT);
    PAIR_TEST(long double, MPI_LONG_DOUBLE_INT);
    /* Fortran pair types: two of the same kind */
    {
        float p[2 * CNT]; double q[2 * CNT]; int z[2 * CNT];
        for (int i = 0; i < CNT; i++) { p[2 * i] = (float)((rank + i) % 3); p[2 * i + 1] = (float)rank; q[2 * i] = p[2 * i]; q[2 * i + 1] = rank; z[2 * i] = (rank + i) % 3; z[2 * i + 1] = rank; }
        OK(MPI_Allreduce(MPI_IN_PLACE, p, CNT, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD));
        OK(MPI_Allreduce(MPI_IN_PLACE, q, CNT, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
        OK(MPI_Allreduce(MPI_IN_PLACE, z, CNT, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD));
        for (int i = 0; i < CNT; i++) {
            int mx = -1, mxat = -1, mn = 99, mnat = -1;
            for (int r = 0; r < size; r++) { int x = (r + i) % 3; if (x > mx) { mx = x; mxat = r; } if (x < mn) { mn = x; mnat = r; } }
            E(p[2 * i] == mx && p[2 * i + 1] == mxat, "2REAL MAXLOC");
            E(q[2 * i] == mn && q[2 * i + 1] == mnat, "2DOUBLE MINLOC");
            E(z[2 * i] == mx && z[2 * i + 1] == mxat, "2INTEGER MAXLOC");
        }
    }

    /* Op_commutative on predefined and user ops */
    int commute;
    OK(MPI_Op_commutative(MPI_SUM, &commute)); E(commute == 1, "SUM commutative");
    OK(MPI_Op_commutative(MPI_MAXLOC, &commute)); E(commute == 1, "MAXLOC commutative");
    MPI_Op nc, cm;
    OK(MPI_Op_create(noncommutative, 0, &nc));
    OK(MPI_Op_create(noncommutative, 1, &cm));
    OK(MPI_Op_commutative(nc, &commute)); E(commute == 0, "user op non-commutative");
    OK(MPI_Op_commutative(cm, &commute)); E(commute == 1, "user op commutative");
    OK(MPI_Op_free(&cm)); E(cm == MPI_OP_NULL, "Op_free sets NULL");
    /* Non-commutative reductions: rank order, several counts, every root */
    MPI_Datatype mat;
    OK(MPI_Type_contiguous(4, MPI_INT, &mat)); OK(MPI_Type_commit(&mat));
    for (int cnt = 0; cnt <= 65; cnt += 13) {
        int *m = malloc(sizeof(int) * 4 * (cnt + 1)), *o = malloc(sizeof(int) * 4 * (cnt + 1));
        int want[4] = { 1, 0, 0, 1 }, mr[4];
        for (int r = 0; r < size; r++) { mat_of(r, mr); matmul(want, mr, want); }
        for (int k = 0; k < cnt; k++) mat_of(rank, m + 4 * k);
        OK(MPI_Allreduce(m, o, cnt, mat, nc, MPI_COMM_WORLD));
        for (int k = 0; k < cnt; k++) E(memcmp(o + 4 * k, want, sizeof want) == 0, "noncommutative allreduce count %d", cnt);
        for (int root = 0; root < size; root++) {
            memset(o, 0, sizeof(int) * 4 * (cnt + 1));
            if (rank == root) { for (int k = 0; k < cnt; k++) mat_of(rank, o + 4 * k); OK(MPI_Reduce(MPI_IN_PLACE, o, cnt, mat, nc, root, MPI_COMM_WORLD)); }
            else OK(MPI_Reduce(m, NULL, cnt, mat, nc, root, MPI_COMM_WORLD));
            if (rank == root) for (int k = 0; k < cnt; k++) E(memcmp(o + 4 * k, want, sizeof want) == 0, "noncommutative reduce count %d root %d", cnt, root);
        }
        /* scan: prefix product */
        int pre[4] = { 1, 0, 0, 1 };
        for (int r = 0; r <= rank; r++) { mat_of(r, mr); matmul(pre, mr, pre); }
        OK(MPI_Scan(m, o, cnt, mat, nc, MPI_COMM_WORLD));
        for (int k = 0; k < cnt; k++) E(memcmp(o + 4 * k, pre, sizeof pre) == 0, "noncommutative scan");
        /* exscan: prefix product of ranks before me */
        int ex[4] = { 1, 0, 0, 1 };
        for (int r = 0; r < rank; r++) { mat_of(r, mr); matmul(ex, mr, ex); }
        OK(MPI_Exscan(m, o, cnt, mat, nc, MPI_COMM_WORLD));
        if (rank > 0) for (int k = 0; k < cnt; k++) E(memcmp(o + 4 * k, ex, sizeof ex) == 0, "noncommutative exscan");
        MPI_Request rq;
        OK(MPI_Iallreduce(MPI_IN_PLACE, m, cnt, mat, nc, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int k = 0; k < cnt; k++) E(memcmp(m + 4 * k, want, sizeof want) == 0, "noncommutative iallreduce");
        free(m); free(o);
    }
    /* Reduce_local with a user op and with an in-place-like aliasing pattern */
    {
        int a[8], b[8], r4[4];
        mat_of(3, a); mat_of(5, a + 4); mat_of(1, b); mat_of(2, b + 4);
        OK(MPI_Reduce_local(a, b, 2, mat, nc));
        int x[4], y[4]; mat_of(3, x); mat_of(1, y); matmul(x, y, r4);
        E(memcmp(b, r4, sizeof r4) == 0, "Reduce_local user op");
        OK(MPI_Reduce_local(a, b, 0, mat, nc));
    }
    OK(MPI_Type_free(&mat));
    OK(MPI_Op_free(&nc));

    /* Zero counts on every reduction */
    {
        int d = 17, e = 23; MPI_Request rq;
        int rc[64]; for (int i = 0; i < size; i++) rc[i] = 0;
        OK(MPI_Allreduce(&d, &e, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); E(e == 23, "zero allreduce");
        OK(MPI_Reduce(&d, &e, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD)); E(e == 23, "zero reduce");
        OK(MPI_Scan(&d, &e, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Exscan(&d, &e, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Reduce_scatter(&d, &e, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Reduce_scatter_block(&d, &e, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Iallreduce(MPI_IN_PLACE, &e, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Ireduce_scatter(MPI_IN_PLACE, &e, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        E(e == 23, "zero counts left the buffer");
        OK(MPI_Bcast(&d, 0, MPI_INT, 0, MPI_COMM_WORLD));
        OK(MPI_Allgather(&d, 0, MPI_INT, &e, 0, MPI_INT, MPI_COMM_WORLD));
        OK(MPI_Alltoall(&d, 0, MPI_INT, &e, 0, MPI_INT, MPI_COMM_WORLD));
        OK(MPI_Gather(&d, 0, MPI_INT, &e, 0, MPI_INT, 0, MPI_COMM_WORLD));
        OK(MPI_Scatter(&d, 0, MPI_INT, &e, 0, MPI_INT, 0, MPI_COMM_WORLD));
        E(e == 23 && d == 17, "zero counts touched data");
    }
    /* Large count: 1M doubles allreduce and 4M bytes bcast */
    {
        int n = 1 << 20;
        double *v = malloc(sizeof(double) * n);
        for (int i = 0; i < n; i++) v[i] = (double)(i % 1000) + rank;
        OK(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) if (v[i] != (double)(i % 1000) * size + (double)size * (size - 1) / 2) { E(0, "large allreduce at %d", i); break; }
        free(v);
        char *c = malloc(4 << 20);
        for (int i = 0; i < (4 << 20); i++) c[i] = rank == 0 ? (char)(i * 7) : 0;
        OK(MPI_Bcast(c, 4 << 20, MPI_CHAR, 0, MPI_COMM_WORLD));
        for (int i = 0; i < (4 << 20); i++) if (c[i] != (char)(i * 7)) { E(0, "large bcast at %d", i); break; }
        free(c);
    }

    int tot;
    OK(MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0) { if (tot) printf(" Found %d errors\n", tot); else printf(" No Errors\n"); }
    OK(MPI_Finalize());
    return 0;
}

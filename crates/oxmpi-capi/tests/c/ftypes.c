/* Fortran's sized and optional datatypes from C: the optional types oxmpi
 * cannot support are MPI_DATATYPE_NULL (programs test for that, as with
 * MPICH); every other one has its size, travels through point-to-point, and
 * reduces with each operation the standard allows for its class (plus the
 * logical operations on floating point types, an MPICH extension). */
#include <stdint.h>
#include "check.h"

static int n, rank;
static MPI_Comm w;

static int cls_of(int e) { int c; MPI_Error_class(e, &c); return c; }

static void put(void *p, int width, int64_t v) { memcpy(p, &v, width); } /* little endian */
static int64_t get(const void *p, int width) {
    int64_t v = 0; memcpy(&v, p, width);
    int sh = 64 - 8 * width;
    return sh ? (v << sh) >> sh : v;
}

/* Integer-like types (Fortran integers; logicals through the logical ops). */
static int64_t reduce_int(MPI_Datatype t, int width, int64_t mine, MPI_Op op) {
    char a[8], r[8];
    put(a, width, mine);
    OK(MPI_Allreduce(a, r, 1, t, op, w));
    return get(r, width);
}

static void ring(MPI_Datatype t, int width) {
    char s[3 * 16], r[3 * 16];
    for (int i = 0; i < 3 * width; i++) s[i] = (char)(rank * 7 + i);
    memset(r, 0, sizeof r);
    OK(MPI_Sendrecv(s, 3, t, (rank + 1) % n, 5, r, 3, t, (rank + n - 1) % n, 5, w, MPI_STATUS_IGNORE));
    int left = (rank + n - 1) % n;
    for (int i = 0; i < 3 * width; i++) CHECK(r[i] == (char)(left * 7 + i));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    w = MPI_COMM_WORLD;
    OK(MPI_Comm_rank(w, &rank));
    OK(MPI_Comm_size(w, &n));

    /* optional types oxmpi cannot support */
    MPI_Datatype absent[] = {MPI_REAL2, MPI_COMPLEX4, MPI_REAL16, MPI_COMPLEX32, MPI_INTEGER16, MPI_LOGICAL16};
    for (unsigned i = 0; i < sizeof absent / sizeof absent[0]; i++) CHECK(absent[i] == MPI_DATATYPE_NULL);

    struct { MPI_Datatype t; int width; } ints[] = {
        {MPI_INTEGER1, 1}, {MPI_INTEGER2, 2}, {MPI_INTEGER4, 4}, {MPI_INTEGER8, 8}, {MPI_INTEGER, 4}};
    for (unsigned k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        MPI_Datatype t = ints[k].t; int wd = ints[k].width, sz;
        CHECK(t != MPI_DATATYPE_NULL);
        OK(MPI_Type_size(t, &sz)); CHECK(sz == wd);
        ring(t, wd);
        CHECK(reduce_int(t, wd, rank + 1, MPI_SUM) == n * (n + 1) / 2);
        CHECK(reduce_int(t, wd, rank + 1, MPI_MAX) == n);
        CHECK(reduce_int(t, wd, -(rank + 1), MPI_MIN) == -n);
        CHECK(reduce_int(t, wd, rank % 2 + 1, MPI_PROD) == (1 << (n / 2)));
        CHECK(reduce_int(t, wd, 1 << rank, MPI_BOR) == (1 << n) - 1);
        CHECK(reduce_int(t, wd, 1 << rank, MPI_BXOR) == (1 << n) - 1);
        CHECK(reduce_int(t, wd, rank == 0 ? 3 : 1, MPI_BAND) == (n == 1 ? 3 : 1));
    }
    struct { MPI_Datatype t; int width; } logs[] = {
        {MPI_LOGICAL1, 1}, {MPI_LOGICAL2, 2}, {MPI_LOGICAL4, 4}, {MPI_LOGICAL8, 8}, {MPI_LOGICAL, 4}};
    for (unsigned k = 0; k < sizeof logs / sizeof logs[0]; k++) {
        MPI_Datatype t = logs[k].t; int wd = logs[k].width, sz;
        CHECK(t != MPI_DATATYPE_NULL);
        OK(MPI_Type_size(t, &sz)); CHECK(sz == wd);
        ring(t, wd);
        CHECK(reduce_int(t, wd, rank == 0, MPI_LAND) == (n == 1));
        CHECK(reduce_int(t, wd, rank == 0, MPI_LOR) == 1);
        CHECK(reduce_int(t, wd, rank == 0, MPI_LXOR) == 1);
        CHECK(reduce_int(t, wd, 1, MPI_LAND) == 1);
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
        char a[8] = {0}, r[8];
        CHECK(cls_of(MPI_Allreduce(a, r, 1, t, MPI_SUM, w)) == MPI_ERR_OP);
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));
    }
    /* real types: 4-byte and 8-byte */
    MPI_Datatype f4[] = {MPI_REAL4, MPI_REAL, MPI_FLOAT}, f8[] = {MPI_REAL8, MPI_DOUBLE_PRECISION, MPI_DOUBLE};
    for (int k = 0; k < 3; k++) {
        int sz;
        OK(MPI_Type_size(f4[k], &sz)); CHECK(sz == 4);
        OK(MPI_Type_size(f8[k], &sz)); CHECK(sz == 8);
        ring(f4[k], 4); ring(f8[k], 8);
        float a = rank + 1, r;
        double b = rank + 1, q;
        OK(MPI_Allreduce(&a, &r, 1, f4[k], MPI_SUM, w)); CHECK(r == n * (n + 1) / 2);
        OK(MPI_Allreduce(&b, &q, 1, f8[k], MPI_SUM, w)); CHECK(q == n * (n + 1) / 2);
        OK(MPI_Allreduce(&a, &r, 1, f4[k], MPI_MAX, w)); CHECK(r == n);
        OK(MPI_Allreduce(&b, &q, 1, f8[k], MPI_MIN, w)); CHECK(q == 1);
        a = 2; b = 0.5;
        OK(MPI_Allreduce(&a, &r, 1, f4[k], MPI_PROD, w)); CHECK(r == (float)(1 << n));
        OK(MPI_Allreduce(&b, &q, 1, f8[k], MPI_PROD, w)); CHECK(q == 1.0 / (1 << n));
        /* logical operations on floating point (MPICH extension): non-zero is
         * true (on one process the value is copied, not combined) */
        a = (float)rank * 1.5f; b = rank == 0 ? -2.5 : 0.0;
        if (n > 1) {
        OK(MPI_Allreduce(&a, &r, 1, f4[k], MPI_LAND, w)); CHECK(r == 0.0f);
        OK(MPI_Allreduce(&a, &r, 1, f4[k], MPI_LOR, w)); CHECK(r == (n > 1 ? 1.0f : 0.0f));
        OK(MPI_Allreduce(&b, &q, 1, f8[k], MPI_LXOR, w)); CHECK(q == 1.0);
        OK(MPI_Allreduce(&b, &q, 1, f8[k], MPI_LOR, w)); CHECK(q == 1.0);
        b = 3.0;
        OK(MPI_Allreduce(&b, &q, 1, f8[k], MPI_LAND, w)); CHECK(q == 1.0);
        }
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
        CHECK(cls_of(MPI_Allreduce(&b, &q, 1, f8[k], MPI_BAND, w)) == MPI_ERR_OP);
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));
    }
    long double la = rank == 0 ? 0.0L : 4.0L, lr;
    OK(MPI_Allreduce(&la, &lr, 1, MPI_LONG_DOUBLE, MPI_LOR, w)); CHECK(lr == (n > 1 ? 1.0L : 0.0L));
    OK(MPI_Allreduce(&la, &lr, 1, MPI_LONG_DOUBLE, MPI_LAND, w)); CHECK(lr == 0.0L);
    /* complex types */
    MPI_Datatype c8[] = {MPI_COMPLEX8, MPI_COMPLEX, MPI_C_FLOAT_COMPLEX}, c16[] = {MPI_COMPLEX16, MPI_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX};
    for (int k = 0; k < 3; k++) {
        int sz;
        OK(MPI_Type_size(c8[k], &sz)); CHECK(sz == 8);
        OK(MPI_Type_size(c16[k], &sz)); CHECK(sz == 16);
        ring(c8[k], 8); ring(c16[k], 16);
        float a[2] = {(float)rank, 1}, r[2];
        double b[2] = {0, 1}, q[2];
        OK(MPI_Allreduce(a, r, 1, c8[k], MPI_SUM, w)); CHECK(r[0] == n * (n - 1) / 2 && r[1] == n);
        OK(MPI_Allreduce(b, q, 1, c16[k], MPI_PROD, w)); /* i^n */
        double er[4] = {1, 0, -1, 0}, ei[4] = {0, 1, 0, -1};
        CHECK(q[0] == er[n % 4] && q[1] == ei[n % 4]);
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
        CHECK(cls_of(MPI_Allreduce(b, q, 1, c16[k], MPI_LAND, w)) == MPI_ERR_OP);
        CHECK(cls_of(MPI_Allreduce(b, q, 1, c16[k], MPI_MAX, w)) == MPI_ERR_OP);
        OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));
    }
    /* no reduction class: send/receive only */
    int sz;
    OK(MPI_Type_size(MPI_CHARACTER, &sz)); CHECK(sz == 1);
    ring(MPI_CHARACTER, 1);
    ring(MPI_PACKED, 1);
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
    char c = 'x', cr;
    CHECK(cls_of(MPI_Allreduce(&c, &cr, 1, MPI_CHARACTER, MPI_SUM, w)) == MPI_ERR_OP);
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL));

    OK(MPI_Finalize());
    if (rank == 0) printf("ftypes: all checks passed\n");
    return 0;
}

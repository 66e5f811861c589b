/* Datatype constructors and conversions of MPI-2 that suites test:
 * MPI_Type_create_subarray (C and Fortran order; envelope and contents),
 * MPI_Type_create_darray (block, cyclic, cyclic(k), none; every element of
 * the global array owned by exactly one rank), MPI_Type_match_size, and
 * MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size
 * (big-endian external32 bytes, round trip of a struct type). */
#include "check.h"

static int rank, size;

/* The array indices (row-major, C order) a type selects from a buffer of n ints. */
static int selected(MPI_Datatype t, int n, int *idx) {
    int *src = malloc(n * sizeof(int)), psize, pos = 0;
    for (int i = 0; i < n; i++) src[i] = i;
    OK(MPI_Pack_size(1, t, MPI_COMM_SELF, &psize));
    int *packed = malloc(psize + 4);
    OK(MPI_Pack(src, 1, t, packed, psize, &pos, MPI_COMM_SELF));
    int k = pos / (int)sizeof(int);
    memcpy(idx, packed, pos);
    free(src); free(packed);
    return k;
}

static void subarray(void) {
    /* a 4x6 array, the 2x3 block at (1,2) */
    int sizes[2] = { 4, 6 }, sub[2] = { 2, 3 }, starts[2] = { 1, 2 }, idx[24];
    MPI_Datatype t, f;
    OK(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    MPI_Aint lb, ext; OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == 24 * (MPI_Aint)sizeof(int));
    int sz; OK(MPI_Type_size(t, &sz)); CHECK(sz == 6 * (int)sizeof(int));
    int k = selected(t, 24, idx);
    int want[6] = { 8, 9, 10, 14, 15, 16 };
    CHECK(k == 6);
    for (int i = 0; i < 6; i++) CHECK(idx[i] == want[i]);
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 3 * 2 + 2 && na == 0 && nd == 1);
    int ints[8]; MPI_Aint addrs[1]; MPI_Datatype types[1];
    OK(MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[2] == 6 && ints[3] == 2 && ints[4] == 3 && ints[5] == 1 && ints[6] == 2 && ints[7] == MPI_ORDER_C);
    CHECK(types[0] == MPI_INT);
    /* Fortran order: sizes are (columns-first); the same block seen transposed */
    int fs[2] = { 6, 4 }, fsub[2] = { 3, 2 }, fst[2] = { 2, 1 };
    OK(MPI_Type_create_subarray(2, fs, fsub, fst, MPI_ORDER_FORTRAN, MPI_INT, &f));
    OK(MPI_Type_commit(&f));
    k = selected(f, 24, idx);
    CHECK(k == 6);
    for (int i = 0; i < 6; i++) CHECK(idx[i] == want[i]);
    /* 3-d, and sending one with a subarray on both sides */
    int s3[3] = { 3, 4, 5 }, b3[3] = { 2, 2, 2 }, o3[3] = { 1, 1, 3 };
    MPI_Datatype t3; OK(MPI_Type_create_subarray(3, s3, b3, o3, MPI_ORDER_C, MPI_INT, &t3)); OK(MPI_Type_commit(&t3));
    k = selected(t3, 60, idx);
    CHECK(k == 8 && idx[0] == 1 * 20 + 1 * 5 + 3 && idx[7] == 2 * 20 + 2 * 5 + 4);
    int a[60], b[60];
    for (int i = 0; i < 60; i++) { a[i] = i; b[i] = -1; }
    OK(MPI_Sendrecv(a, 1, t3, 0, 0, b, 1, t3, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    for (int i = 0; i < 60; i++) {
        int z = i / 20, y = i / 5 % 4, x = i % 5;
        int in = z >= 1 && z < 3 && y >= 1 && y < 3 && x >= 3;
        CHECK(b[i] == (in ? i : -1));
    }
    OK(MPI_Type_free(&t)); OK(MPI_Type_free(&f)); OK(MPI_Type_free(&t3));
}

/* Each rank's darray part; rank 0 checks that the parts tile the array. */
static void darray_case(int ndims, int *gsizes, int *distribs, int *dargs, int *psizes, int order) {
    int n = 1;
    for (int i = 0; i < ndims; i++) n *= gsizes[i];
    MPI_Datatype t;
    OK(MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    MPI_Aint lb, ext; OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == n * (MPI_Aint)sizeof(int));
    int *idx = malloc(n * sizeof(int)), *owner = malloc(n * sizeof(int));
    int k = selected(t, n, idx);
    for (int i = 0; i < n; i++) owner[i] = 0;
    for (int i = 0; i < k; i++) owner[idx[i]] = 1;
    int *count = malloc(n * sizeof(int));
    OK(MPI_Allreduce(owner, count, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) CHECK(count[i] == 1);
    /* a 1-d block distribution: rank r holds a contiguous, ordered run */
    if (ndims == 1 && distribs[0] == MPI_DISTRIBUTE_BLOCK && dargs[0] == MPI_DISTRIBUTE_DFLT_DARG) {
        int blk = (gsizes[0] + size - 1) / size;
        for (int i = 0; i < k; i++) CHECK(idx[i] == rank * blk + i);
    }
    /* cyclic(1) on one dimension: rank r holds r, r+size, ... */
    if (ndims == 1 && distribs[0] == MPI_DISTRIBUTE_CYCLIC && dargs[0] == 1)
        for (int i = 0; i < k; i++) CHECK(idx[i] == rank + i * size);
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_DARRAY && ni == 4 * ndims + 4 && nd == 1);
    free(idx); free(owner); free(count);
    OK(MPI_Type_free(&t));
}

static void darray(void) {
    int g1[1] = { 17 }, blk[1] = { MPI_DISTRIBUTE_BLOCK }, cyc[1] = { MPI_DISTRIBUTE_CYCLIC }, dflt[1] = { MPI_DISTRIBUTE_DFLT_DARG }, one[1] = { 1 }, three[1] = { 3 }, p1[1];
    p1[0] = size;
    darray_case(1, g1, blk, dflt, p1, MPI_ORDER_C);
    darray_case(1, g1, cyc, one, p1, MPI_ORDER_C);
    darray_case(1, g1, cyc, three, p1, MPI_ORDER_FORTRAN);
    int dims[2] = { 0, 0 };
    OK(MPI_Dims_create(size, 2, dims));
    int g2[2] = { 7, 10 }, d2[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC }, a2[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 };
    darray_case(2, g2, d2, a2, dims, MPI_ORDER_C);
    darray_case(2, g2, d2, a2, dims, MPI_ORDER_FORTRAN);
    int d3[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE }, a3[2] = { MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG }, p3[2] = { size, 1 };
    darray_case(2, g2, d3, a3, p3, MPI_ORDER_C);
}

static void match_size(void) {
    MPI_Datatype t; int sz;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &t)); OK(MPI_Type_size(t, &sz)); CHECK(sz == sizeof(double));
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(float), &t)); CHECK(t == MPI_FLOAT);
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, sizeof(int), &t)); OK(MPI_Type_size(t, &sz)); CHECK(sz == sizeof(int));
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t)); OK(MPI_Type_size(t, &sz)); CHECK(sz == 8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t)); OK(MPI_Type_size(t, &sz)); CHECK(sz == 16);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t) != MPI_SUCCESS);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

struct rec { int i; double d; short s[2]; };

static void external(void) {
    int v[2] = { 0x01020304, -2 };
    unsigned char buf[64]; MPI_Aint pos = 0, sz;
    OK(MPI_Pack_external_size("external32", 2, MPI_INT, &sz)); CHECK(sz == 8);
    OK(MPI_Pack_external("external32", v, 2, MPI_INT, buf, sizeof buf, &pos));
    CHECK(pos == 8 && buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4 && buf[4] == 0xff && buf[7] == 0xfe);
    int back[2]; MPI_Aint in = 0;
    OK(MPI_Unpack_external("external32", buf, pos, &in, back, 2, MPI_INT));
    CHECK(in == 8 && back[0] == v[0] && back[1] == v[1]);
    double d = 1.0; pos = 0;
    OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    CHECK(buf[0] == 0x3f && buf[1] == 0xf0 && buf[7] == 0);
    /* a struct type round trip, packed after other data */
    struct rec r[3], got[3]; MPI_Datatype rt;
    int bl[3] = { 1, 1, 2 }; MPI_Aint disp[3] = { offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, s) };
    MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_SHORT };
    OK(MPI_Type_create_struct(3, bl, disp, ty, &rt)); OK(MPI_Type_commit(&rt));
    for (int i = 0; i < 3; i++) { r[i].i = i * 11; r[i].d = i + 0.5; r[i].s[0] = -i; r[i].s[1] = 300 + i; }
    OK(MPI_Pack_external_size("external32", 3, rt, &sz)); CHECK(sz == 3 * (4 + 8 + 4));
    unsigned char *p = malloc(sz + 8); pos = 0;
    OK(MPI_Pack_external("external32", v, 1, MPI_INT, p, sz + 8, &pos));
    OK(MPI_Pack_external("external32", r, 3, rt, p, sz + 8, &pos)); CHECK(pos == sz + 4);
    in = 0; int first;
    OK(MPI_Unpack_external("external32", p, pos, &in, &first, 1, MPI_INT)); CHECK(first == v[0]);
    memset(got, 0, sizeof got);
    OK(MPI_Unpack_external("external32", p, pos, &in, got, 3, rt)); CHECK(in == pos);
    for (int i = 0; i < 3; i++) CHECK(got[i].i == r[i].i && got[i].d == r[i].d && got[i].s[0] == r[i].s[0] && got[i].s[1] == r[i].s[1]);
    free(p);
    OK(MPI_Type_free(&rt));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    subarray();
    darray();
    match_size();
    external();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

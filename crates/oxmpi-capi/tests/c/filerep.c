/* Data representations whose sizes in the file differ from the native ones.
 * external32 (MPI-4.1 Table 14.2): MPI_LONG and MPI_UNSIGNED_LONG take 4
 * bytes, MPI_LONG_INT 4 + 4, long double 16 (IEEE binary128); views of them
 * are laid out in file sizes (offsets in 4-byte etypes, vector and subarray
 * filetypes scaled), bytes checked with pread(2), round trips, collective
 * writes. A user representation ("half": an int takes 2 bytes, big-endian):
 * the extent function is honoured (MPI_File_get_type_extent, file sizes,
 * offsets), and the conversion functions get the right counts and positions
 * (large accesses are converted in several calls). argv[1] is a directory. */
#include "check.h"
#include <fcntl.h>
#include <unistd.h>

static int rank, size;
static char dir[512];

static void path(char *out, const char *name) { snprintf(out, 600, "%s/%s", dir, name); }

static long fsize(const char *p) {
    int fd = open(p, O_RDONLY); CHECK(fd >= 0);
    long n = lseek(fd, 0, SEEK_END); close(fd); return n;
}

static void pread_all(const char *p, void *buf, long n, long off) {
    int fd = open(p, O_RDONLY); CHECK(fd >= 0);
    CHECK(pread(fd, buf, n, off) == n);
    close(fd);
}

static unsigned be32(const unsigned char *b) { return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3]; }

static void external32_long(void) {
    char p[600]; path(p, "long.e32");
    MPI_File fh; MPI_Status st; int cnt;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    MPI_Aint ext; OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext)); CHECK(ext == 4);
    OK(MPI_File_get_type_extent(fh, MPI_LONG_INT, &ext)); CHECK(ext == 8);
    OK(MPI_File_get_type_extent(fh, MPI_LONG_DOUBLE, &ext)); CHECK(ext == 16);
    MPI_Datatype v3; OK(MPI_Type_vector(3, 1, 2, MPI_LONG, &v3)); OK(MPI_Type_commit(&v3));
    OK(MPI_File_get_type_extent(fh, v3, &ext)); CHECK(ext == 20); /* (3-1)*2+1 elements of 4 bytes */
    MPI_Offset bo; OK(MPI_File_get_byte_offset(fh, 5, &bo)); CHECK(bo == 20);
    /* explicit offsets in 4-byte etypes: rank r's 3 longs at etype 3r */
    long v[3] = { -2 - rank, 5 + 1000 * rank, 0x12345678 }, w[4];
    OK(MPI_File_write_at_all(fh, 3 * rank, v, 3, MPI_LONG, &st));
    OK(MPI_Get_count(&st, MPI_LONG, &cnt)); CHECK(cnt == 3);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset sz; OK(MPI_File_get_size(fh, &sz)); CHECK(sz == 12 * size);
    int peer = (rank + 1) % size;
    memset(w, 0, sizeof w);
    OK(MPI_File_read_at(fh, 3 * peer, w, 4, MPI_LONG, &st));  /* the last rank's read is short */
    OK(MPI_Get_count(&st, MPI_LONG, &cnt)); CHECK(cnt == (peer == size - 1 ? 3 : 4));
    CHECK(w[0] == -2 - peer && w[1] == 5 + 1000 * peer && w[2] == 0x12345678);
    /* the individual pointer counts file etypes */
    OK(MPI_File_seek(fh, 3 * peer + 1, MPI_SEEK_SET));
    OK(MPI_File_read(fh, w, 2, MPI_LONG, &st));
    CHECK(w[0] == 5 + 1000 * peer && w[1] == 0x12345678);
    MPI_Offset pos; OK(MPI_File_get_position(fh, &pos)); CHECK(pos == 3 * peer + 3);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(fsize(p) == 12L * size);
        unsigned char b[12];
        for (int r = 0; r < size; r++) {
            pread_all(p, b, 12, 12L * r);
            CHECK(be32(b) == (unsigned)(-2 - r) && be32(b + 4) == (unsigned)(5 + 1000 * r) && be32(b + 8) == 0x12345678u);
        }
    }
    OK(MPI_Type_free(&v3));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
}

/* A vector filetype of MPI_LONG (interleaved ranks) and a subarray filetype
 * of MPI_UNSIGNED_LONG, both scaled to 4-byte elements in the file. */
static void external32_filetypes(void) {
    char p[600]; path(p, "ftype.e32");
    MPI_File fh; MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* resized: a byte bound, taken as it is (4-byte slots of all ranks per element) */
    MPI_Datatype vec0, vec; OK(MPI_Type_vector(4, 1, size, MPI_LONG, &vec0));
    OK(MPI_Type_create_resized(vec0, 0, 16 * size, &vec)); OK(MPI_Type_commit(&vec)); OK(MPI_Type_free(&vec0));
    /* the displacement is in bytes: rank r's first element is the r-th 4-byte slot */
    OK(MPI_File_set_view(fh, 4 * rank, MPI_LONG, vec, "external32", MPI_INFO_NULL));
    long v[8]; for (int i = 0; i < 8; i++) v[i] = 100 * rank + i;
    OK(MPI_File_write_all(fh, v, 8, MPI_LONG, &st)); /* two tiles */
    /* subarray of a 2 x (2*size) global array of unsigned longs after the vector part */
    int gs[2] = { 2, 2 * size }, ss[2] = { 2, 2 }, starts[2] = { 0, 2 * rank };
    MPI_Datatype sub; OK(MPI_Type_create_subarray(2, gs, ss, starts, MPI_ORDER_C, MPI_UNSIGNED_LONG, &sub)); OK(MPI_Type_commit(&sub));
    MPI_Offset base = 8L * size * 4;
    OK(MPI_File_set_view(fh, base, MPI_UNSIGNED_LONG, sub, "external32", MPI_INFO_NULL));
    unsigned long u[4]; for (int i = 0; i < 4; i++) u[i] = 0xA0000000UL + 16 * rank + i;
    OK(MPI_File_write_all(fh, u, 4, MPI_UNSIGNED_LONG, &st));
    unsigned long uu[4] = { 0 };
    OK(MPI_File_read_at_all(fh, 0, uu, 4, MPI_UNSIGNED_LONG, &st));
    for (int i = 0; i < 4; i++) CHECK(uu[i] == u[i]);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(fsize(p) == 8L * size * 4 + 4L * size * 4);
        unsigned char *b = malloc(8 * size * 4 + 16 * size); CHECK(b);
        pread_all(p, b, 8L * size * 4 + 16L * size, 0);
        for (int k = 0; k < 8; k++)
            for (int r = 0; r < size; r++) CHECK(be32(b + 4 * (k * size + r)) == (unsigned)(100 * r + k));
        for (int row = 0; row < 2; row++)
            for (int col = 0; col < 2 * size; col++) {
                int r = col / 2, i = row * 2 + col % 2;
                CHECK(be32(b + base + 4 * (row * 2 * size + col)) == 0xA0000000u + 16 * r + i);
            }
        free(b);
        OK(MPI_File_delete(p, MPI_INFO_NULL));
    }
    OK(MPI_Type_free(&vec)); OK(MPI_Type_free(&sub));
}

/* long double (binary128) and MPI_LONG_INT (4 + 4) in external32. */
static void external32_long_double_and_pairs(void) {
    char p[600], name[64]; snprintf(name, sizeof name, "ld%d.e32", rank); path(p, name);
    MPI_File fh; MPI_Status st; int cnt;
    OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    long double d[2] = { 1.5L, -3.25L }, e[2] = { 0, 0 };
    OK(MPI_File_write_at(fh, 0, d, 2, MPI_LONG_DOUBLE, &st));
    struct { long v; int i; } li[2] = { { -7, 9 }, { 1L << 20, -1 } }, lo[2];
    OK(MPI_File_write_at(fh, 32, li, 2, MPI_LONG_INT, &st));
    OK(MPI_Get_count(&st, MPI_LONG_INT, &cnt)); CHECK(cnt == 2);
    OK(MPI_File_sync(fh));
    CHECK(fsize(p) == 48);
    unsigned char b[48]; pread_all(p, b, 48, 0);
    CHECK(b[0] == 0x3f && b[1] == 0xff && b[2] == 0x80 && b[3] == 0); /* 1.5 in binary128 */
    CHECK(b[16] == 0xc0 && b[17] == 0x00 && b[18] == 0xa0);           /* -3.25 = -1.625 * 2^1 */
    CHECK(be32(b + 32) == (unsigned)-7 && be32(b + 36) == 9 && be32(b + 40) == 1u << 20 && be32(b + 44) == 0xffffffffu);
    OK(MPI_File_read_at(fh, 0, e, 2, MPI_LONG_DOUBLE, &st));
    CHECK(e[0] == 1.5L && e[1] == -3.25L);
    memset(lo, 0, sizeof lo);
    OK(MPI_File_read_at(fh, 32, lo, 2, MPI_LONG_INT, &st));
    CHECK(lo[0].v == -7 && lo[0].i == 9 && lo[1].v == 1L << 20 && lo[1].i == -1);
    OK(MPI_File_close(&fh));
}

/* "half": an int is 2 bytes in the file, big-endian. The conversion
 * functions log their calls. */
#define MAXCALLS 64
static int calls_w, calls_r;
static long pos_w[MAXCALLS], cnt_w[MAXCALLS], pos_r[MAXCALLS], cnt_r[MAXCALLS];
static int extent_calls;

static int half_extent(MPI_Datatype t, MPI_Aint *ext, void *extra) {
    CHECK(extra == &extent_calls);
    extent_calls++;
    int sz; OK(MPI_Type_size(t, &sz));
    *ext = t == MPI_INT ? 2 : sz;
    return MPI_SUCCESS;
}

/* Elements of `t` are whole numbers of ints (MPI_INT or contiguous ints). */
static int ints_per(MPI_Datatype t) { int sz; MPI_Type_size(t, &sz); return sz / 4; }

static int half_write(void *user, MPI_Datatype t, int count, void *file, MPI_Offset position, void *extra) {
    CHECK(calls_w < MAXCALLS);
    pos_w[calls_w] = position; cnt_w[calls_w] = count; calls_w++;
    int k = ints_per(t);
    const int *u = (const int *)user + position * k;
    unsigned char *f = file;
    for (long i = 0; i < (long)count * k; i++) { f[2 * i] = (unsigned)u[i] >> 8 & 0xff; f[2 * i + 1] = u[i] & 0xff; }
    return MPI_SUCCESS;
}

static int half_read(void *user, MPI_Datatype t, int count, void *file, MPI_Offset position, void *extra) {
    CHECK(calls_r < MAXCALLS);
    pos_r[calls_r] = position; cnt_r[calls_r] = count; calls_r++;
    int k = ints_per(t);
    int *u = (int *)user + position * k;
    const unsigned char *f = file;
    for (long i = 0; i < (long)count * k; i++) u[i] = (short)(f[2 * i] << 8 | f[2 * i + 1]);
    return MPI_SUCCESS;
}

/* The calls cover elements 0..n in order, each at most `chunk` elements. */
static void covered(const long *pos, const long *cnt, int calls, long n, long chunk) {
    long at = 0;
    for (int c = 0; c < calls; c++) {
        CHECK(pos[c] == at && cnt[c] > 0 && cnt[c] <= chunk);
        at += cnt[c];
    }
    CHECK(at == n);
}

static void user_datarep(void) {
    OK(MPI_Register_datarep("half", half_read, half_write, half_extent, &extent_calls));
    char p[600]; path(p, "half.dat");
    MPI_File fh; MPI_Status st; int cnt;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "half", MPI_INFO_NULL));
    CHECK(extent_calls > 0);
    MPI_Aint ext; OK(MPI_File_get_type_extent(fh, MPI_INT, &ext)); CHECK(ext == 2);
    MPI_Datatype pair; OK(MPI_Type_contiguous(2, MPI_INT, &pair)); OK(MPI_Type_commit(&pair));
    OK(MPI_File_get_type_extent(fh, pair, &ext)); CHECK(ext == 4);
    /* 40000 ints per rank: 80000 bytes in the file, more than one conversion
     * buffer (64 KiB), so the write converts in several calls. */
    const long n = 40000;
    int *v = malloc(n * sizeof(int)), *w = malloc(n * sizeof(int)); CHECK(v && w);
    for (long i = 0; i < n; i++) v[i] = (int)((i * 37 + rank * 11) % 60000) - 30000;
    calls_w = 0;
    OK(MPI_File_write_at_all(fh, n * rank, v, (int)n, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == n);
    CHECK(calls_w >= 2);
    covered(pos_w, cnt_w, calls_w, n, 65536 / 2);
    /* a pair datatype: positions count pairs */
    calls_r = 0;
    memset(w, 0, n * sizeof(int));
    int peer = (rank + 1) % size;
    OK(MPI_File_read_at_all(fh, n * peer, w, (int)(n / 2), pair, &st));
    OK(MPI_Get_count(&st, pair, &cnt)); CHECK(cnt == n / 2);
    CHECK(calls_r >= 2);
    covered(pos_r, cnt_r, calls_r, n / 2, 65536 / 4);
    for (long i = 0; i < n; i++) CHECK(w[i] == (int)((i * 37 + peer * 11) % 60000) - 30000);
    /* a short read at end of file converts the elements that are there */
    calls_r = 0;
    OK(MPI_File_read_at(fh, n * size - 3, w, 10, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 3);
    CHECK(calls_r == 1 && pos_r[0] == 0 && cnt_r[0] == 3);
    CHECK(w[2] == (int)(((n - 1) * 37 + (size - 1) * 11) % 60000) - 30000);
    MPI_Offset bo; OK(MPI_File_get_byte_offset(fh, 7, &bo)); CHECK(bo == 14);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(fsize(p) == 2 * n * size);
        unsigned char b[4];
        pread_all(p, b, 4, 2 * n * (size - 1) + 2 * 5);
        int x = (short)(b[0] << 8 | b[1]);
        CHECK(x == (int)((5 * 37 + (size - 1) * 11) % 60000) - 30000);
        OK(MPI_File_delete(p, MPI_INFO_NULL));
    }
    OK(MPI_Type_free(&pair));
    free(v); free(w);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc > 1);
    snprintf(dir, sizeof dir, "%s", argv[1]);
    external32_long();
    external32_filetypes();
    external32_long_double_and_pairs();
    user_datarep();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

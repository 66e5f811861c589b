/* MPI-IO: every positioning style (explicit offsets, individual and shared
 * pointers) blocking, non-blocking, collective and split; views with vector,
 * subarray and darray filetypes, checked byte for byte with plain read(2);
 * external32 round trips; write_ordered gives rank order; atomic mode with
 * overlapping writers; DELETE_ON_CLOSE; hints; short reads at end of file.
 * argv[1] is a directory to work in. */
#include "check.h"
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

static int rank, size;
static char dir[512];

static void path(char *out, const char *name) { snprintf(out, 600, "%s/%s", dir, name); }

/* The whole file, read serially with read(2). */
static long slurp(const char *p, unsigned char *buf, long cap) {
    int fd = open(p, O_RDONLY);
    CHECK(fd >= 0);
    long n = 0, r;
    while ((r = read(fd, buf + n, cap - n)) > 0) n += r;
    close(fd);
    return n;
}

static void basic_access(void) {
    char p[600], up[620]; path(p, "basic.dat"); snprintf(up, sizeof up, "ufs:%s", p);
    MPI_File fh; MPI_Status st; int cnt;
    OK(MPI_File_open(MPI_COMM_WORLD, up, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));   /* ROMIO's prefix */
    int amode; OK(MPI_File_get_amode(fh, &amode)); CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR));
    /* explicit offsets: each rank writes 10 ints at rank*10 */
    int v[10], w[10];
    for (int i = 0; i < 10; i++) v[i] = rank * 100 + i;
    OK(MPI_File_write_at(fh, (MPI_Offset)rank * 10 * sizeof(int), v, 10, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 10);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int peer = (rank + 1) % size;
    OK(MPI_File_read_at(fh, (MPI_Offset)peer * 10 * sizeof(int), w, 10, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 10);
    for (int i = 0; i < 10; i++) CHECK(w[i] == peer * 100 + i);
    MPI_Offset sz; OK(MPI_File_get_size(fh, &sz)); CHECK(sz == (MPI_Offset)(size * 10 * sizeof(int)));
    /* short read at end of file: not an error, the count says how much */
    memset(w, 0, sizeof w);
    OK(MPI_File_read_at(fh, sz - 3 * sizeof(int), w, 10, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 3);
    CHECK(w[0] == (size - 1) * 100 + 7 && w[2] == (size - 1) * 100 + 9);
    OK(MPI_File_read_at(fh, sz + 100, w, 10, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 0);
    /* individual pointer: seek, read, position, collective forms */
    OK(MPI_File_seek(fh, (MPI_Offset)peer * 10 * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read(fh, w, 5, MPI_INT, &st));
    MPI_Offset pos; OK(MPI_File_get_position(fh, &pos)); CHECK(pos == (MPI_Offset)(peer * 10 + 5) * (MPI_Offset)sizeof(int));
    OK(MPI_File_read_all(fh, w + 5, 5, MPI_INT, &st));
    for (int i = 0; i < 10; i++) CHECK(w[i] == peer * 100 + i);
    OK(MPI_File_seek(fh, -4, MPI_SEEK_END));
    OK(MPI_File_read(fh, w, 1, MPI_INT, &st)); CHECK(w[0] == (size - 1) * 100 + 9);
    /* collective explicit offsets, non-blocking forms, split collectives */
    for (int i = 0; i < 10; i++) v[i] = -(rank * 100 + i);
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 10 * sizeof(int), v, 10, MPI_INT, &st));
    MPI_Request rq[2];
    OK(MPI_File_iread_at(fh, (MPI_Offset)rank * 10 * sizeof(int), w, 10, MPI_INT, &rq[0]));
    OK(MPI_Wait(&rq[0], &st)); OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 10);
    for (int i = 0; i < 10; i++) CHECK(w[i] == -(rank * 100 + i));
    for (int i = 0; i < 10; i++) v[i] = rank * 1000 + i;
    OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * 10 * sizeof(int), v, 10, MPI_INT, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    OK(MPI_File_iread_at_all(fh, (MPI_Offset)peer * 10 * sizeof(int), w, 10, MPI_INT, &rq[1]));
    OK(MPI_Wait(&rq[1], &st));
    for (int i = 0; i < 10; i++) CHECK(w[i] == peer * 1000 + i);
    OK(MPI_File_seek(fh, (MPI_Offset)rank * 10 * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_iwrite(fh, v, 10, MPI_INT, &rq[0])); OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    OK(MPI_File_seek(fh, (MPI_Offset)rank * 10 * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_iread_all(fh, w, 10, MPI_INT, &rq[0])); OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 10; i++) CHECK(w[i] == rank * 1000 + i);
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_iwrite_all(fh, v, 0, MPI_INT, &rq[0])); OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    OK(MPI_File_iread(fh, w, 0, MPI_INT, &rq[0])); OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    OK(MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * 10 * sizeof(int), v, 10, MPI_INT));
    OK(MPI_File_write_at_all_end(fh, v, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == 10);
    OK(MPI_File_read_at_all_begin(fh, (MPI_Offset)peer * 10 * sizeof(int), w, 10, MPI_INT));
    OK(MPI_File_read_at_all_end(fh, w, &st));
    for (int i = 0; i < 10; i++) CHECK(w[i] == peer * 1000 + i);
    OK(MPI_File_seek(fh, (MPI_Offset)peer * 10 * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read_all_begin(fh, w, 10, MPI_INT));
    OK(MPI_File_read_all_end(fh, w, &st));
    for (int i = 0; i < 10; i++) CHECK(w[i] == peer * 1000 + i);
    OK(MPI_File_write_all_begin(fh, v, 0, MPI_INT));
    OK(MPI_File_write_all_end(fh, v, &st));
    /* large-count forms */
    MPI_Count cc;
    OK(MPI_File_read_at_c(fh, (MPI_Offset)peer * 10 * sizeof(int), w, (MPI_Count)10, MPI_INT, &st));
    OK(MPI_Get_count_c(&st, MPI_INT, &cc)); CHECK(cc == 10);
    OK(MPI_File_write_at_all_c(fh, (MPI_Offset)rank * 10 * sizeof(int), v, (MPI_Count)10, MPI_INT, &st));
    /* size, preallocate, sync, group, info */
    OK(MPI_File_sync(fh));
    OK(MPI_File_preallocate(fh, 4096));
    OK(MPI_File_get_size(fh, &sz)); CHECK(sz >= 4096);
    OK(MPI_File_set_size(fh, 40));
    OK(MPI_File_get_size(fh, &sz)); CHECK(sz == 40);
    MPI_Group g; int gs; OK(MPI_File_get_group(fh, &g)); OK(MPI_Group_size(g, &gs)); CHECK(gs == size); OK(MPI_Group_free(&g));
    MPI_Info info, used; OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "cb_buffer_size", "1048576"));
    OK(MPI_Info_set(info, "romio_cb_write", "enable"));
    OK(MPI_Info_set(info, "striping_unit", "65536"));
    OK(MPI_File_set_info(fh, info));
    OK(MPI_File_get_info(fh, &used));
    char val[MPI_MAX_INFO_VAL + 1]; int flag;
    OK(MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, val, &flag)); CHECK(flag && strcmp(val, "1048576") == 0);
    OK(MPI_Info_get(used, "romio_cb_write", MPI_MAX_INFO_VAL, val, &flag)); CHECK(flag && strcmp(val, "enable") == 0);
    OK(MPI_Info_get(used, "striping_unit", MPI_MAX_INFO_VAL, val, &flag)); CHECK(flag && strcmp(val, "65536") == 0);
    OK(MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, val, &flag)); CHECK(flag && atoi(val) >= 1);
    OK(MPI_Info_free(&used)); OK(MPI_Info_free(&info));
    /* Fortran handles */
    MPI_Fint f = MPI_File_c2f(fh); CHECK(MPI_File_f2c(f) == fh);
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == MPI_File_c2f(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL))));
    OK(MPI_File_close(&fh)); CHECK(fh == MPI_FILE_NULL);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
}

/* A 2-D array of doubles, NR x NC, split over a process grid, written
 * collectively through a subarray view and compared with read(2). Then the
 * same with darray, and read back collectively. */
static void grid_views(int use_darray) {
    char p[600]; path(p, use_darray ? "darray.dat" : "subarray.dat");
    int dims[2] = {0, 0}; OK(MPI_Dims_create(size, 2, dims));
    int NR = dims[0] * 6 + 0, NC = dims[1] * 5;
    int gsizes[2] = {NR, NC}, lsizes[2] = {NR / dims[0], NC / dims[1]};
    int coords[2] = {rank / dims[1], rank % dims[1]};
    int starts[2] = {coords[0] * lsizes[0], coords[1] * lsizes[1]};
    MPI_Datatype ft;
    if (use_darray) {
        int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK}, dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
        OK(MPI_Type_create_darray(size, rank, 2, gsizes, distribs, dargs, dims, MPI_ORDER_C, MPI_DOUBLE, &ft));
    } else {
        OK(MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &ft));
    }
    OK(MPI_Type_commit(&ft));
    int n = lsizes[0] * lsizes[1];
    double *loc = malloc(n * sizeof(double));
    for (int i = 0; i < lsizes[0]; i++)
        for (int j = 0; j < lsizes[1]; j++) loc[i * lsizes[1] + j] = (starts[0] + i) * 1000.0 + (starts[1] + j);
    MPI_File fh;
    MPI_Info winfo; OK(MPI_Info_create(&winfo));
    if (use_darray) OK(MPI_Info_set(winfo, "cb_buffer_size", "4096"));   /* many two-phase rounds */
    else { OK(MPI_Info_set(winfo, "oxmpi_cb_window", "disable")); OK(MPI_Info_set(winfo, "cb_nodes", "3")); OK(MPI_Info_set(winfo, "cb_buffer_size", "8192")); }
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, winfo, &fh));
    OK(MPI_Info_free(&winfo));
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    MPI_Offset d; MPI_Datatype et, ft2; char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &d, &et, &ft2, rep)); CHECK(d == 0 && et == MPI_DOUBLE && strcmp(rep, "native") == 0);
    { int ni, na, nd, comb; OK(MPI_Type_get_envelope(ft2, &ni, &na, &nd, &comb)); CHECK(comb == (use_darray ? MPI_COMBINER_DARRAY : MPI_COMBINER_SUBARRAY)); OK(MPI_Type_free(&ft2)); }
    MPI_Status st;
    OK(MPI_File_write_all(fh, loc, n, MPI_DOUBLE, &st));
    int cnt; OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt)); CHECK(cnt == n);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        double *all = malloc((size_t)NR * NC * sizeof(double) + 64);
        long got = slurp(p, (unsigned char *)all, (long)NR * NC * sizeof(double) + 64);
        CHECK(got == (long)NR * NC * (long)sizeof(double));
        for (int i = 0; i < NR; i++)
            for (int j = 0; j < NC; j++) CHECK(all[i * NC + j] == i * 1000.0 + j);
        free(all);
    }
    /* read back collectively through the view, with a small cb buffer (many rounds);
     * the subarray case by messages (no shared-memory windows), both with two aggregators */
    MPI_Info info; OK(MPI_Info_create(&info)); OK(MPI_Info_set(info, "cb_buffer_size", "4096"));
    if (!use_darray) { OK(MPI_Info_set(info, "oxmpi_cb_window", "disable")); OK(MPI_Info_set(info, "cb_nodes", "2")); }
    else OK(MPI_Info_set(info, "cb_nodes", "2"));   /* two aggregators' windows on one host */
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, info, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    double *back = calloc(n, sizeof(double));
    OK(MPI_File_read_all(fh, back, n, MPI_DOUBLE, &st));
    OK(MPI_Get_count(&st, MPI_DOUBLE, &cnt)); CHECK(cnt == n);
    for (int k = 0; k < n; k++) CHECK(back[k] == loc[k]);
    MPI_Offset bo; OK(MPI_File_get_byte_offset(fh, 0, &bo));
    CHECK(bo == ((MPI_Offset)starts[0] * NC + starts[1]) * (MPI_Offset)sizeof(double));
    OK(MPI_File_close(&fh)); OK(MPI_Info_free(&info));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
    OK(MPI_Type_free(&ft)); free(loc); free(back);
}

/* Interleaved vector view: rank r owns int blocks r, r+size, r+2*size... of 2 ints;
 * writes go through the view only (holes of other ranks untouched). */
static void vector_view(void) {
    char p[600]; path(p, "vector.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* pre-fill with a marker so we can see nothing outside the view changes */
    if (rank == 0) { int m[64]; for (int i = 0; i < 64; i++) m[i] = -7; OK(MPI_File_write_at(fh, 0, m, 64, MPI_INT, MPI_STATUS_IGNORE)); }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Datatype vec, ft;
    OK(MPI_Type_vector(1, 2, 2 * size, MPI_INT, &vec));
    OK(MPI_Type_create_resized(vec, 0, 2 * size * sizeof(int), &ft)); OK(MPI_Type_commit(&ft));
    OK(MPI_File_set_view(fh, 8 + rank * 2 * sizeof(int), MPI_INT, ft, "native", MPI_INFO_NULL));
    int v[6]; for (int i = 0; i < 6; i++) v[i] = rank * 10 + i;
    if (rank % 2 == 0) OK(MPI_File_write(fh, v, 6, MPI_INT, MPI_STATUS_IGNORE));  /* only even ranks write */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank % 2 == 0) {   /* independent strided read back (one sieving pread), short at end of file */
        int back[100]; MPI_Status st; int cnt, want = 0;
        for (int k = 0; k < 50; k++) for (int e = 0; e < 2; e++) if (2 + k * 2 * size + rank * 2 + e < 64) want++;
        OK(MPI_File_read_at(fh, 0, back, 100, MPI_INT, &st));
        OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == want);
        for (int i = 0; i < 6; i++) CHECK(back[i] == v[i]);
        for (int i = 6; i < want; i++) CHECK(back[i] == -7);
    }
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        int all[256]; long got = slurp(p, (unsigned char *)all, sizeof all);
        CHECK(got >= 64 * 4);
        CHECK(all[0] == -7 && all[1] == -7);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < 3; k++)
                for (int e = 0; e < 2; e++) {
                    int at = 2 + k * 2 * size + r * 2 + e;
                    if (at >= 64) continue;
                    CHECK(all[at] == (r % 2 == 0 ? r * 10 + k * 2 + e : -7));
                }
        OK(MPI_File_delete(p, MPI_INFO_NULL));
    }
    OK(MPI_Type_free(&vec)); OK(MPI_Type_free(&ft));
}

static void external32(void) {
    char p[600]; path(p, "ext32.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int v[4] = {0x01020304, rank, -2, 0x7f000001};
    OK(MPI_File_write_at_all(fh, rank * 4, v, 4, MPI_INT, MPI_STATUS_IGNORE));
    int w[4];
    OK(MPI_File_read_at_all(fh, rank * 4, w, 4, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(memcmp(v, w, sizeof v) == 0);
    MPI_Aint ext; OK(MPI_File_get_type_extent(fh, MPI_INT, &ext)); CHECK(ext == 4);
    MPI_Count extc; OK(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &extc)); CHECK(extc == 8);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        unsigned char b[1024]; long got = slurp(p, b, sizeof b);
        CHECK(got == size * 16);
        CHECK(b[0] == 1 && b[1] == 2 && b[2] == 3 && b[3] == 4);   /* big-endian on disk */
        CHECK(b[8] == 0xff && b[11] == 0xfe);
        /* and the same bytes as MPI_Pack_external */
        unsigned char pk[16]; MPI_Aint pos = 0; int v0[4] = {0x01020304, 0, -2, 0x7f000001};
        OK(MPI_Pack_external("external32", v0, 4, MPI_INT, pk, sizeof pk, &pos));
        CHECK(memcmp(pk, b, 16) == 0);
        OK(MPI_File_delete(p, MPI_INFO_NULL));
    }
}

static void shared_pointer(void) {
    char p[600]; path(p, "shared.dat");
    MPI_File fh; MPI_Status st; int cnt;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    /* write_ordered: rank r writes r+1 ints of value r, in rank order */
    int v[16]; for (int i = 0; i < 16; i++) v[i] = rank;
    OK(MPI_File_write_ordered(fh, v, rank + 1, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == rank + 1);
    MPI_Offset sp; OK(MPI_File_get_position_shared(fh, &sp));
    int total = size * (size + 1) / 2;
    CHECK(sp == (MPI_Offset)total * (MPI_Offset)sizeof(int));
    if (rank == 0) {
        int all[64]; int k = 0;
        OK(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
        for (int r = 0; r < size; r++) for (int j = 0; j <= r; j++) CHECK(all[k++] == r);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* independent shared writes: every rank appends 3 ints; all end up there, none lost */
    int mine[3] = {1000 + rank, 1000 + rank, 1000 + rank};
    OK(MPI_File_write_shared(fh, mine, 3, MPI_INT, &st));
    MPI_Request rq; OK(MPI_File_iwrite_shared(fh, mine, 3, MPI_INT, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_get_position_shared(fh, &sp));
    CHECK(sp == (MPI_Offset)(total + 6 * size) * (MPI_Offset)sizeof(int));
    if (rank == 0) {
        int all[256], seen[64] = {0};
        OK(MPI_File_read_at(fh, total * sizeof(int), all, 6 * size, MPI_INT, &st));
        for (int k = 0; k < 6 * size; k += 3) { CHECK(all[k] == all[k + 1] && all[k] == all[k + 2]); seen[all[k] - 1000]++; }
        for (int r = 0; r < size; r++) CHECK(seen[r] == 2);
    }
    /* seek_shared, read_shared, read_ordered */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int back[16];
    OK(MPI_File_read_ordered(fh, back, rank + 1, MPI_INT, &st));
    for (int j = 0; j <= rank; j++) CHECK(back[j] == rank);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    if (rank == 0) { OK(MPI_File_read_shared(fh, back, 1, MPI_INT, &st)); CHECK(back[0] == 0);
                     int ref[2]; OK(MPI_File_read_at(fh, sizeof(int), ref, 2, MPI_INT, &st));
                     OK(MPI_File_iread_shared(fh, back, 2, MPI_INT, &rq)); OK(MPI_Wait(&rq, &st)); CHECK(back[0] == ref[0] && back[1] == ref[1]);
                     CHECK(ref[0] == (size > 1 ? 1 : 1000)); }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_File_get_position_shared(fh, &sp)); CHECK(sp == 3 * (MPI_Offset)sizeof(int));
    OK(MPI_File_write_ordered_begin(fh, v, 1, MPI_INT));
    OK(MPI_File_write_ordered_end(fh, v, &st));
    OK(MPI_File_seek_shared(fh, 3 * sizeof(int), MPI_SEEK_SET));
    OK(MPI_File_read_ordered_begin(fh, back, 1, MPI_INT));
    OK(MPI_File_read_ordered_end(fh, back, &st)); CHECK(back[0] == rank);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    struct stat sb; CHECK(stat(p, &sb) != 0);   /* DELETE_ON_CLOSE */
}

/* Atomic mode: all ranks write overlapping ranges of 4096 ints, each filled
 * with its rank; in atomic mode every 4096-int region read back is one rank's. */
static void atomic_mode(void) {
    char p[600]; path(p, "atomic.dat");
    MPI_File fh; const int N = 4096;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_atomicity(fh, 1));
    int fl; OK(MPI_File_get_atomicity(fh, &fl)); CHECK(fl == 1);
    int *v = malloc(N * sizeof(int)), *w = malloc(N * sizeof(int));
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < N; i++) v[i] = rank + 1;
        OK(MPI_File_write_at(fh, 0, v, N, MPI_INT, MPI_STATUS_IGNORE));
        OK(MPI_File_read_at(fh, 0, w, N, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 1; i < N; i++) CHECK(w[i] == w[0]);
        CHECK(w[0] >= 1 && w[0] <= size);
        OK(MPI_File_write_at_all(fh, 0, v, N, MPI_INT, MPI_STATUS_IGNORE));
        OK(MPI_File_read_at_all(fh, 0, w, N, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 1; i < N; i++) CHECK(w[i] == w[0]);
    }
    OK(MPI_File_set_atomicity(fh, 0));
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
    free(v); free(w);
}

/* A user data representation that stores ints byte-swapped. */
static int conv_calls;
static int swap_conv(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra) {
    unsigned char *u = userbuf, *f = filebuf;
    conv_calls++;
    CHECK(dt == MPI_INT && *(int *)extra == 42);
    for (int i = 0; i < count * 4; i += 4) { unsigned char t[4] = {u[i + 3], u[i + 2], u[i + 1], u[i]}; memcpy(f + i, t, 4); }
    return MPI_SUCCESS;
}
static int swap_conv_read(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra) {
    return swap_conv(filebuf, dt, count, userbuf, position, extra);
}
static int extent_fn(MPI_Datatype dt, MPI_Aint *ext, void *extra) { MPI_Aint lb; return MPI_Type_get_extent(dt, &lb, ext); }

static void user_datarep(void) {
    static int extra = 42;
    OK(MPI_Register_datarep("oxswap", swap_conv_read, swap_conv, extent_fn, &extra));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    int rc = MPI_Register_datarep("oxswap", swap_conv_read, swap_conv, extent_fn, &extra), cls;
    OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_DUP_DATAREP);
    char p[600]; path(p, "user.dat");
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxswap", MPI_INFO_NULL));
    int v = 0x0a0b0c0d + rank, w = 0;
    OK(MPI_File_write_at(fh, rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    OK(MPI_File_read_at(fh, rank, &w, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(w == v && conv_calls >= 2);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        unsigned char b[4]; slurp(p, b, 4); CHECK(b[0] == 0x0a && b[3] == 0x0d);
        OK(MPI_File_delete(p, MPI_INFO_NULL));
    }
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc > 1);
    snprintf(dir, sizeof dir, "%s", argv[1]);
    basic_access();
    grid_views(0);
    grid_views(1);
    vector_view();
    external32();
    shared_pointer();
    atomic_mode();
    user_datarep();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

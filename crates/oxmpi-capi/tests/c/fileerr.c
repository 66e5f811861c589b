/* MPI-IO errors: each class from its cause, the message naming the call and
 * the path; files default to MPI_ERRORS_RETURN; MPI_FILE_NULL's handler and
 * a file's own handler are called. argv[1] is a directory to work in. */
#include "check.h"
#include <unistd.h>
#include <sys/stat.h>

static int rank, size;

#define EXPECT(call, cls) do { int rc_ = (call), c_; CHECK(rc_ != MPI_SUCCESS); OK(MPI_Error_class(rc_, &c_)); \
    if (c_ != (cls)) { char m_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, m_, &l_); fprintf(stderr, "got class %d want %d: %s\n", c_, (cls), m_); } \
    CHECK(c_ == (cls)); } while (0)

static int handler_calls, last_code;
static void on_error(MPI_File *fh, int *code, ...) { handler_calls++; last_code = *code; }

static int bad_conv(void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position, void *extra) { return MPI_ERR_OTHER; }
static int extent_fn(MPI_Datatype dt, MPI_Aint *ext, void *extra) { MPI_Aint lb; return MPI_Type_get_extent(dt, &lb, ext); }

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc > 1);
    char p[600], q[600], missing[600];
    snprintf(p, sizeof p, "%s/err.dat", argv[1]);
    snprintf(missing, sizeof missing, "%s/no/such/file", argv[1]);
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh; OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh)); CHECK(eh == MPI_ERRORS_RETURN);

    EXPECT(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    EXPECT(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_close(&fh));
    EXPECT(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);

    /* read-only file: writes are MPI_ERR_READ_ONLY; write-only: reads are MPI_ERR_ACCESS */
    int v[4] = {1, 2, 3, 4};
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_write_at(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    EXPECT(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    EXPECT(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "bogus-rep", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    EXPECT(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    EXPECT(MPI_File_read_at(fh, -1, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    /* a file's own handler is called */
    MPI_Errhandler mine; OK(MPI_File_create_errhandler(on_error, &mine));
    OK(MPI_File_set_errhandler(fh, mine));
    MPI_Errhandler got; OK(MPI_File_get_errhandler(fh, &got)); CHECK(got == mine); OK(MPI_Errhandler_free(&got));
    int rc = MPI_File_write_at(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1 && last_code == rc);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO)); CHECK(handler_calls == 2 && last_code == MPI_ERR_IO);
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    EXPECT(MPI_File_read_at(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    OK(MPI_File_close(&fh));
    /* a closed handle is MPI_ERR_FILE, raised on MPI_FILE_NULL's handler */
    MPI_File stale = fh;
    EXPECT(MPI_File_get_size(stale, NULL), MPI_ERR_FILE);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    CHECK(handler_calls == 3 && last_code == rc);
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&mine));
    EXPECT(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);

    /* a collective open that fails on some ranks leaves no file behind: rank 0 can
     * create `sub/half.dat` relative to its working directory, the others cannot */
    if (size > 1) {
        char a[700], b[700], sub[720], cwd[1024];
        CHECK(getcwd(cwd, sizeof cwd) != NULL);
        snprintf(a, sizeof a, "%s/a", argv[1]); snprintf(b, sizeof b, "%s/b", argv[1]); snprintf(sub, sizeof sub, "%s/sub", a);
        if (rank == 0) { CHECK(mkdir(a, 0700) == 0 && mkdir(sub, 0700) == 0 && mkdir(b, 0700) == 0); }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK(chdir(rank == 0 ? a : b) == 0);
        EXPECT(MPI_File_open(MPI_COMM_WORLD, "sub/half.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
        if (rank == 0) { struct stat sb; CHECK(stat("sub/half.dat", &sb) != 0); }
        CHECK(chdir(cwd) == 0);
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) { CHECK(rmdir(sub) == 0 && rmdir(a) == 0 && rmdir(b) == 0); }
    }
    /* more opens than there are communicator context ids (each file has its own
     * communicator): closing gives them back */
    for (int i = 0; i < 2100; i++) {
        OK(MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        OK(MPI_File_close(&fh));
    }
    /* a full device: MPI_ERR_NO_SPACE */
    if (access("/dev/full", W_OK) == 0) {
        OK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        EXPECT(MPI_File_write(fh, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE);
        OK(MPI_File_close(&fh));
    }
    /* an I/O error from the kernel (EIO): reading unmapped memory through /proc/self/mem */
    if (access("/proc/self/mem", R_OK) == 0) {
        OK(MPI_File_open(MPI_COMM_SELF, "/proc/self/mem", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        EXPECT(MPI_File_read_at(fh, 0, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_IO);
        OK(MPI_File_close(&fh));
    }
    /* a conversion function that fails: MPI_ERR_CONVERSION */
    OK(MPI_Register_datarep("oxbad", bad_conv, bad_conv, extent_fn, NULL));
    EXPECT(MPI_Register_datarep("external32", bad_conv, bad_conv, extent_fn, NULL), MPI_ERR_DUP_DATAREP);
    snprintf(q, sizeof q, "%s/conv.dat", argv[1]);
    OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxbad", MPI_INFO_NULL));
    EXPECT(MPI_File_write_at(fh, rank * 4, v, 4, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_CONVERSION);
    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) OK(MPI_File_delete(p, MPI_INFO_NULL));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    if (argc > 2 && strcmp(argv[2], "fatal") == 0) {   /* the fatal handler names the call and the path */
        OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL));
        MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    }
    OK(MPI_Finalize());
    return 0;
}

/* A non-blocking collective write that keeps the file's I/O thread busy for a while
 * (a large strided view) while the program waits for it: run with a tiny
 * --hang-after, the launcher must not mistake the wait for a deadlock (the rank is
 * working, not waiting for another). argv[1] is a directory to work in. */
#include "check.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    CHECK(argc > 1);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/busy.dat", argv[1]);
    const int n = 4 << 20; /* 4 Mi ints: 16 MiB of data in 64-byte pieces */
    int *buf = malloc((size_t)n * sizeof(int));
    CHECK(buf != NULL);
    for (int i = 0; i < n; i++) buf[i] = i;
    MPI_Datatype ftype;
    OK(MPI_Type_vector(n / 16, 16, 32, MPI_INT, &ftype));
    OK(MPI_Type_commit(&ftype));
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL));
    for (int round = 0; round < 3; round++) {
        MPI_Request req;
        MPI_Status st;
        OK(MPI_File_iwrite_at_all(fh, 0, buf, n, MPI_INT, &req));
        OK(MPI_Wait(&req, &st));
        int count;
        OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == n);
    }
    int first = -1;
    OK(MPI_File_read_at(fh, 1, &first, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(first == 1);
    OK(MPI_File_close(&fh));
    OK(MPI_Type_free(&ftype));
    free(buf);
    MPI_Finalize();
    if (rank == 0) printf("file_iwrite_busy: no false deadlock\n");
    return 0;
}

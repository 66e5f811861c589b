/* Collective checkpoint: a 2-D array of doubles (NR x NC, 256 MiB by default)
 * split over a 2-D process grid, written with MPI_File_write_all through a
 * subarray view, then read back with MPI_File_read_all and verified.
 * Usage: checkpoint FILE [MiB] [reps] [w] (w: write only, for syscall counts). Prints the best write and read
 * throughput over `reps` runs (MiB/s, from the barrier before to the close after). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) { if (!rank) fprintf(stderr, "usage: checkpoint FILE [MiB] [reps]\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    long mib = argc > 2 ? atol(argv[2]) : 256; int reps = argc > 3 ? atoi(argv[3]) : 3;
    int dims[2] = {0, 0}; MPI_Dims_create(size, 2, dims);
    long total = mib << 20, elems = total / 8;
    int NC = 8192; int NR = (int)(elems / NC); NR -= NR % dims[0];
    int gs[2] = {NR, NC}, ls[2] = {NR / dims[0], NC / dims[1]};
    int st[2] = {(rank / dims[1]) * ls[0], (rank % dims[1]) * ls[1]};
    MPI_Datatype ft; MPI_Type_create_subarray(2, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &ft); MPI_Type_commit(&ft);
    long n = (long)ls[0] * ls[1];
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
    for (long i = 0; i < ls[0]; i++) for (long j = 0; j < ls[1]; j++) a[i * ls[1] + j] = (st[0] + i) * 1e5 + st[1] + j;
    int wonly = argc > 4 && argv[4][0] == 'w';
    double bw = 0, br = 0;
    for (int r = 0; r < reps; r++) {
        MPI_File fh;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
        MPI_File_write_all(fh, a, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        double tw = MPI_Wtime() - t0, m;
        MPI_Allreduce(&tw, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if ((double)NR * NC * 8 / m / 1048576 > bw) bw = (double)NR * NC * 8 / m / 1048576;
        if (wonly) continue;
        memset(b, 0, n * sizeof(double));
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
        MPI_File_read_all(fh, b, (int)n, MPI_DOUBLE, MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
        double trd = MPI_Wtime() - t0;
        MPI_Allreduce(&trd, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if ((double)NR * NC * 8 / m / 1048576 > br) br = (double)NR * NC * 8 / m / 1048576;
        if (memcmp(a, b, n * sizeof(double)) != 0) { fprintf(stderr, "rank %d: read back differs\n", rank); MPI_Abort(MPI_COMM_WORLD, 1); }
    }
    if (!rank) printf("ranks %d grid %dx%d array %dx%d (%ld MiB): write %.0f MiB/s read %.0f MiB/s\n", size, dims[0], dims[1], NR, NC, (long)NR * NC * 8 >> 20, bw, br);
    if (!rank) MPI_File_delete(argv[1], MPI_INFO_NULL);
    free(a); free(b); MPI_Type_free(&ft);
    MPI_Finalize();
    return 0;
}

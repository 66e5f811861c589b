/* Non-blocking collective and split-collective I/O progress in the background.
 * Ranks communicate between starting a collective access and waiting for it,
 * in orders that deadlock if the start call waits for the other ranks to join
 * (or that the launcher's deadlock detection must not mistake for one):
 * a chain of synchronous sends where rank r starts only after rank r-1 started
 * (forwards and backwards), a barrier on another communicator that half the
 * ranks enter before starting and half after, several accesses outstanding at
 * once and completed in reverse order, a blocking collective behind a pending
 * one, MPI_Test polling, split collectives (explicit, individual, ordered).
 * Two-phase I/O runs many rounds (cb_buffer_size 4096). The file is checked
 * with plain read(2). argv[1] is a directory to work in. */
#include "check.h"
#include <fcntl.h>
#include <unistd.h>

#define N 4096 /* ints per rank and region */

static int rank, size;
static char dir[512];

static int val(int r, int i, int salt) { return r * 1000003 + i * 7 + salt; }

static void fill(int *v, int r, int salt) {
    for (int i = 0; i < N; i++) v[i] = val(r, i, salt);
}

static void expect(const int *v, int r, int salt) {
    for (int i = 0; i < N; i++)
        if (v[i] != val(r, i, salt)) {
            fprintf(stderr, "rank %d: element %d of rank %d's block is %d, want %d (salt %d)\n", rank, i, r, v[i], val(r, i, salt), salt);
            CHECK(0);
        }
}

/* Forward chain: rank r starts after rank r-1 told it (synchronously) that it
 * had started. */
static void wait_prev(void) {
    if (rank > 0) { int t; OK(MPI_Recv(&t, 1, MPI_INT, rank - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); CHECK(t == rank - 1); }
}
static void tell_next(void) {
    if (rank < size - 1) OK(MPI_Ssend(&rank, 1, MPI_INT, rank + 1, 77, MPI_COMM_WORLD));
}
/* Backward chain: rank size-1 starts first. */
static void wait_next(void) {
    if (rank < size - 1) { int t; OK(MPI_Recv(&t, 1, MPI_INT, rank + 1, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); CHECK(t == rank + 1); }
}
static void tell_prev(void) {
    if (rank > 0) OK(MPI_Ssend(&rank, 1, MPI_INT, rank - 1, 78, MPI_COMM_WORLD));
}

static MPI_Offset region(int which, int r) { return ((MPI_Offset)which * size + r) * N * (MPI_Offset)sizeof(int); }

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc > 1);
    snprintf(dir, sizeof dir, "%s", argv[1]);
    char p[600]; snprintf(p, sizeof p, "%s/async.dat", dir);
    MPI_Comm other; OK(MPI_Comm_dup(MPI_COMM_WORLD, &other));
    MPI_Info info; OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "cb_buffer_size", "4096"));
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    int *v = malloc(N * sizeof(int)), *w = malloc(N * sizeof(int)), *u = malloc(N * sizeof(int));
    CHECK(v && w && u);
    MPI_Request r[3]; MPI_Status st; int cnt;

    /* A: iwrite_at_all, forward chain between start and wait. */
    fill(v, rank, 1);
    wait_prev();
    OK(MPI_File_iwrite_at_all(fh, region(0, rank), v, N, MPI_INT, &r[0]));
    tell_next();
    OK(MPI_Wait(&r[0], &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);

    /* A2: as A, but each rank computes (sleeps) after starting, outside MPI,
     * before it tells the next: the background access waits meanwhile for
     * ranks that wait for this one, which is no deadlock. */
    wait_prev();
    OK(MPI_File_iwrite_at_all(fh, region(0, rank), v, N, MPI_INT, &r[0]));
    if (rank == 0) usleep(2500000);
    tell_next();
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));

    /* B: iwrite_all at the individual pointer, backward chain; the pointer
     * moves when the access starts. */
    fill(u, rank, 2);
    OK(MPI_File_seek(fh, region(1, rank), MPI_SEEK_SET));
    wait_next();
    OK(MPI_File_iwrite_all(fh, u, N, MPI_INT, &r[0]));
    MPI_Offset pos; OK(MPI_File_get_position(fh, &pos)); CHECK(pos == region(1, rank) + N * (MPI_Offset)sizeof(int));
    tell_prev();
    OK(MPI_Wait(&r[0], &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);

    /* C: iread_at_all of a neighbour's block, a barrier on another
     * communicator that even ranks enter after starting, odd ranks before. */
    int peer = (rank + 1) % size;
    memset(w, 0, N * sizeof(int));
    if (rank % 2 == 0) {
        OK(MPI_File_iread_at_all(fh, region(0, peer), w, N, MPI_INT, &r[0]));
        OK(MPI_Barrier(other));
    } else {
        OK(MPI_Barrier(other));
        OK(MPI_File_iread_at_all(fh, region(0, peer), w, N, MPI_INT, &r[0]));
    }
    OK(MPI_Wait(&r[0], &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);
    expect(w, peer, 1);

    /* D: three collective accesses outstanding at once, completed in reverse
     * order, with the chain between the starts; then a blocking collective
     * while one more is pending. */
    int *x = malloc(N * sizeof(int)); CHECK(x);
    fill(v, rank, 3);
    fill(x, rank, 4);
    wait_prev();
    OK(MPI_File_iwrite_at_all(fh, region(2, rank), v, N, MPI_INT, &r[0]));
    OK(MPI_File_iwrite_at_all(fh, region(3, rank), x, N, MPI_INT, &r[1]));
    memset(w, 0, N * sizeof(int));
    OK(MPI_File_iread_at_all(fh, region(1, peer), w, N, MPI_INT, &r[2]));
    tell_next();
    MPI_Status sts[3];
    MPI_Request rev[3] = { r[2], r[1], r[0] };
    OK(MPI_Waitall(3, rev, sts));
    for (int k = 0; k < 3; k++) { OK(MPI_Get_count(&sts[k], MPI_INT, &cnt)); CHECK(cnt == N); }
    expect(w, peer, 2);
    fill(v, rank, 5);
    OK(MPI_File_iwrite_at_all(fh, region(4, rank), v, N, MPI_INT, &r[0]));
    /* Runs after the pending access on every rank: reads what it wrote. */
    memset(w, 0, N * sizeof(int));
    OK(MPI_File_read_at_all(fh, region(4, peer), w, N, MPI_INT, &st));
    expect(w, peer, 5);
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));

    /* E: MPI_Test polling while the backward chain runs. */
    memset(w, 0, N * sizeof(int));
    wait_next();
    OK(MPI_File_iread_at_all(fh, region(2, peer), w, N, MPI_INT, &r[0]));
    tell_prev();
    for (int flag = 0; !flag;) {
        OK(MPI_Test(&r[0], &flag, &st));
        if (!flag) usleep(100);
    }
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);
    expect(w, peer, 3);

    /* F: split collectives with communication between _begin and _end. */
    fill(v, rank, 6);
    wait_prev();
    OK(MPI_File_write_at_all_begin(fh, region(5, rank), v, N, MPI_INT));
    tell_next();
    OK(MPI_File_write_at_all_end(fh, v, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);
    OK(MPI_File_seek(fh, region(5, peer), MPI_SEEK_SET));
    memset(w, 0, N * sizeof(int));
    if (rank % 2 == 1) OK(MPI_Barrier(other));
    OK(MPI_File_read_all_begin(fh, w, N, MPI_INT));
    if (rank % 2 == 0) OK(MPI_Barrier(other));
    OK(MPI_File_read_all_end(fh, w, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);
    expect(w, peer, 6);
    /* a second split collective before the first ends is refused */
    OK(MPI_File_write_at_all_begin(fh, region(6, rank), v, N, MPI_INT));
    CHECK(MPI_File_write_at_all_begin(fh, region(6, rank), v, N, MPI_INT) != MPI_SUCCESS);
    OK(MPI_File_write_at_all_end(fh, v, MPI_STATUS_IGNORE));

    /* G: ordered split collective after the backward chain: rank order. */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    OK(MPI_File_seek_shared(fh, region(7, 0) / (MPI_Offset)sizeof(int), MPI_SEEK_SET));
    fill(v, rank, 7);
    wait_next();
    OK(MPI_File_write_ordered_begin(fh, v, N, MPI_INT));
    tell_prev();
    OK(MPI_File_write_ordered_end(fh, v, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt)); CHECK(cnt == N);

    /* H: two-phase off (independent accesses and a barrier), forward chain. */
    MPI_Info off; OK(MPI_Info_create(&off));
    OK(MPI_Info_set(off, "romio_cb_write", "disable"));
    OK(MPI_File_set_info(fh, off));
    fill(v, rank, 8);
    wait_prev();
    OK(MPI_File_iwrite_at_all(fh, region(8, rank) / (MPI_Offset)sizeof(int), v, N, MPI_INT, &r[0])); /* etypes of the int view */
    tell_next();
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    OK(MPI_Info_free(&off));

    OK(MPI_File_close(&fh));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        /* The whole file, read with read(2). */
        int salts[9] = { 1, 2, 3, 4, 5, 6, 0, 7, 8 };
        int fd = open(p, O_RDONLY); CHECK(fd >= 0);
        for (int reg = 0; reg < 9; reg++)
            for (int q = 0; q < size; q++) {
                CHECK(pread(fd, w, N * sizeof(int), region(reg, q)) == (ssize_t)(N * sizeof(int)));
                if (reg == 6) { for (int i = 0; i < N; i++) CHECK(w[i] == val(q, i, 6)); continue; }
                expect(w, q, salts[reg]);
            }
        close(fd);
        OK(MPI_File_delete(p, MPI_INFO_NULL));
    }
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_free(&other));
    free(v); free(w); free(u); free(x);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

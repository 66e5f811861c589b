/* One-sided errors: each wrong use gets its error class, through the window's (or
 * the communicator's) error handler, and no write lands outside a window.
 * With argument "fatal": a range error under MPI_ERRORS_ARE_FATAL ends the job. */
#include "check.h"

static int cls_of(int rc) {
    int c;
    OK(MPI_Error_class(rc, &c));
    return c;
}
#define EXPECT(call, cls) do { int rc_ = (call); CHECK(rc_ != MPI_SUCCESS); CHECK(cls_of(rc_) == (cls)); } while (0)

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt) { (void)in; (void)inout; (void)len; (void)dt; }

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (rank + 1) % size;
    /* guard bytes around the window memory: never written */
    int *block = malloc(12 * sizeof(int));
    for (int i = 0; i < 12; i++) block[i] = 1000 + i;
    int *mem = block + 2; /* 8 ints of window */
    MPI_Win win;
    OK(MPI_Win_create(mem, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        int x = 1;
        OK(MPI_Win_fence(0, win));
        MPI_Put(&x, 1, MPI_INT, right, 8, 1, MPI_INT, win); /* one past the end: fatal */
        printf("not reached\n");
    }
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x[4] = {1, 2, 3, 4}, y[4];

    /* MPI_ERR_RMA_SYNC: operations outside an epoch, unlock without lock, wrong nesting */
    EXPECT(MPI_Put(x, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Get(y, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Accumulate(x, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_fence(0, win), MPI_ERR_RMA_SYNC);
    EXPECT(MPI_Win_free(&win), MPI_ERR_RMA_SYNC);
    CHECK(win != MPI_WIN_NULL);
    /* MPI_ERR_RMA_RANGE: past the end, partly past, a derived type reaching out */
    EXPECT(MPI_Put(x, 1, MPI_INT, right, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(x, 4, MPI_INT, right, 6, 4, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Get(y, 2, MPI_INT, right, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Accumulate(x, 1, MPI_INT, right, 100, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_RANGE);
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 8, MPI_INT, &vec)); OK(MPI_Type_commit(&vec));
    EXPECT(MPI_Put(x, 2, MPI_INT, right, 0, 1, vec, win), MPI_ERR_RMA_RANGE);
    EXPECT(MPI_Put(x, 1, MPI_INT, right, -1, 1, MPI_INT, win), MPI_ERR_DISP);
    /* MPI_ERR_RANK, MPI_ERR_TYPE (signature), MPI_ERR_OP (user op), MPI_ERR_COUNT */
    EXPECT(MPI_Put(x, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT(MPI_Put(x, 2, MPI_INT, right, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE);
    MPI_Op uop;
    OK(MPI_Op_create(user_fn, 1, &uop));
    EXPECT(MPI_Accumulate(x, 1, MPI_INT, right, 0, 1, MPI_INT, uop, win), MPI_ERR_OP);
    OK(MPI_Op_free(&uop));
    double d = 1.0;
    EXPECT(MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win), MPI_ERR_OP);
    EXPECT(MPI_Put(x, -1, MPI_INT, right, 0, -1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT(MPI_Compare_and_swap(&d, &d, y, MPI_DOUBLE, right, 0, win), MPI_ERR_TYPE);
    /* MPI_PROC_NULL: nothing happens, no error */
    OK(MPI_Put(x, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
    OK(MPI_Win_unlock(right, win));
    /* MPI_ERR_LOCKTYPE */
    EXPECT(MPI_Win_lock(12345, right, 0, win), MPI_ERR_LOCKTYPE);
    /* MPI_ERR_RMA_FLAVOR: attach/detach on a window that is not dynamic. shared_query on a
     * created window answers (MPI-4.1): its memory is not shared, so size 0 and a NULL base. */
    EXPECT(MPI_Win_attach(win, y, sizeof y), MPI_ERR_RMA_FLAVOR);
    EXPECT(MPI_Win_detach(win, y), MPI_ERR_RMA_FLAVOR);
    { MPI_Aint s = 1; int du = 0; void *b = &s; OK(MPI_Win_shared_query(win, 0, &s, &du, &b)); CHECK(s == 0 && b == NULL && du > 0); }
    /* nothing was written around or into the windows by the failed calls */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 12; i++) CHECK(block[i] == 1000 + i);
    OK(MPI_Win_free(&win));
    /* MPI_ERR_RMA_ATTACH: overlapping regions, detach of what was never attached */
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_attach(win, block, 8 * sizeof(int)));
    EXPECT(MPI_Win_attach(win, block + 4, 8 * sizeof(int)), MPI_ERR_RMA_ATTACH);
    EXPECT(MPI_Win_detach(win, block + 1), MPI_ERR_RMA_ATTACH);
    OK(MPI_Win_detach(win, block));
    OK(MPI_Win_free(&win));
    /* MPI_ERR_WIN: null and freed windows (through the communicator's handler) */
    EXPECT(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT(MPI_Win_fence(0, win), MPI_ERR_WIN);
    /* creation errors go to the communicator: size, disp_unit */
    int *p;
    EXPECT(MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win), MPI_ERR_SIZE);
    EXPECT(MPI_Win_allocate(8, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win), MPI_ERR_DISP);
    OK(MPI_Type_free(&vec));
    free(block);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

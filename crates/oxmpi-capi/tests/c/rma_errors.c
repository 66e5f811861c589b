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
/* ... and the message names the call and the argument */
#define EXPECT_MSG(call, cls, name, arg) do { \
        int rc_ = (call), len_; char msg_[MPI_MAX_ERROR_STRING]; \
        CHECK(rc_ != MPI_SUCCESS); CHECK(cls_of(rc_) == (cls)); \
        OK(MPI_Error_string(rc_, msg_, &len_)); \
        if (!strstr(msg_, name) || !strstr(msg_, arg)) fprintf(stderr, "message: %s\n", msg_); \
        CHECK(strstr(msg_, name) && strstr(msg_, arg)); \
    } while (0)

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

    /* MPI_ERR_ASSERT: bits a synchronization call does not know */
    EXPECT_MSG(MPI_Win_fence(MPI_MODE_NOCHECK, win), MPI_ERR_ASSERT, "MPI_Win_fence", "assert");
    EXPECT_MSG(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOPUT, win), MPI_ERR_ASSERT, "MPI_Win_lock", "assert");
    EXPECT(MPI_Win_lock_all(1, win), MPI_ERR_ASSERT);
    /* a fence asserting MPI_MODE_NOPRECEDE after this process made RMA calls: MPI_ERR_RMA_SYNC */
    OK(MPI_Win_fence(0, win));
    OK(MPI_Get(y, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    EXPECT_MSG(MPI_Win_fence(MPI_MODE_NOPRECEDE, win), MPI_ERR_RMA_SYNC, "MPI_Win_fence", "MPI_MODE_NOPRECEDE");
    OK(MPI_Win_fence(0, win));
    /* MPI_ERR_RMA_CONFLICT: an update of a window whose owner asserted MPI_MODE_NOPUT for the
     * epoch (partner: the other rank of a pair, on one host also in the two-host run) */
    int partner = (rank ^ 1) < size ? (rank ^ 1) : rank;
    OK(MPI_Win_fence(MPI_MODE_NOPUT, win));
    EXPECT_MSG(MPI_Put(x, 1, MPI_INT, partner, 0, 1, MPI_INT, win), MPI_ERR_RMA_CONFLICT, "MPI_Put", "target_rank");
    EXPECT(MPI_Accumulate(x, 1, MPI_INT, partner, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_CONFLICT);
    OK(MPI_Get(y, 1, MPI_INT, partner, 0, 1, MPI_INT, win)); /* reading is fine */
    OK(MPI_Win_fence(0, win));
    /* the next epoch's assertion: a target that moved on already flags nothing, so wait */
    OK(MPI_Win_fence(MPI_MODE_NOPUT, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    EXPECT(MPI_Put(x, 1, MPI_INT, partner, 0, 1, MPI_INT, win), MPI_ERR_RMA_CONFLICT);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(x, 1, MPI_INT, partner, 0, 1, MPI_INT, win)); /* this epoch allows updates */
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    { /* the same for a post asserting MPI_MODE_NOPUT */
        MPI_Group wg, pg;
        OK(MPI_Win_get_group(win, &wg));
        OK(MPI_Group_incl(wg, 1, &partner, &pg));
        OK(MPI_Win_post(pg, MPI_MODE_NOPUT, win));
        OK(MPI_Win_start(pg, 0, win));
        EXPECT_MSG(MPI_Accumulate(x, 1, MPI_INT, partner, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RMA_CONFLICT, "MPI_Accumulate", "MPI_MODE_NOPUT");
        OK(MPI_Get(y, 1, MPI_INT, partner, 0, 1, MPI_INT, win));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        EXPECT(MPI_Win_post(pg, MPI_MODE_NOPRECEDE, win), MPI_ERR_ASSERT);
        OK(MPI_Group_free(&pg));
        OK(MPI_Group_free(&wg));
    }
    /* MPI_ERR_RMA_CONFLICT: locks that conflict with a lock taken with MPI_MODE_NOCHECK,
     * between ranks 0 and 1 (one host) */
    if (size >= 2 && rank < 2) {
        int other = 1 - rank;
        if (rank == 1) OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) EXPECT_MSG(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock", "target_rank 0");
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) OK(MPI_Win_unlock(0, win));
        if (rank == 1) OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            EXPECT_MSG(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), MPI_ERR_RMA_CONFLICT, "MPI_Win_lock", "MPI_MODE_NOCHECK");
            OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)); /* shared with shared: fine */
            OK(MPI_Put(x, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
            OK(MPI_Win_unlock(0, win));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) OK(MPI_Win_unlock(0, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        /* released: now the exclusive lock is granted */
        if (rank == 0) { OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, MPI_MODE_NOCHECK, win)); OK(MPI_Win_unlock(0, win)); }
        (void)other;
    } else {
        for (int i = 0; i < 5; i++) OK(MPI_Barrier(MPI_COMM_WORLD)); /* as many as ranks 0 and 1 make */
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(block[0] == 1000 && block[1] == 1001 && block[10] == 1010 && block[11] == 1011);
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
    /* MPI_ERR_RMA_SHARED: shared memory over processes of several hosts, and the
     * shared query of a rank on another host (the two-host run); on one host the
     * window is made and every rank's memory is found */
    MPI_Comm node;
    int nsize, remote = -1;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    OK(MPI_Comm_size(node, &nsize));
    MPI_Group wg, ng;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Comm_group(node, &ng));
    for (int r = 0; r < size && remote < 0; r++) {
        int t;
        OK(MPI_Group_translate_ranks(wg, 1, &r, ng, &t));
        if (t == MPI_UNDEFINED) remote = r;
    }
    CHECK((remote < 0) == (nsize == size));
    if (nsize == size) {
        OK(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win));
        MPI_Aint qs;
        int qd;
        int *qp = NULL;
        OK(MPI_Win_shared_query(win, size - 1, &qs, &qd, &qp));
        CHECK(qs == 8 && qd == 1 && qp != NULL);
        OK(MPI_Win_free(&win));
    } else {
        EXPECT_MSG(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win), MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared", "host");
        OK(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p, &win));
        OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        MPI_Aint qs;
        int qd;
        int *qp;
        EXPECT(MPI_Win_shared_query(win, remote, &qs, &qd, &qp), MPI_ERR_RMA_SHARED);
        OK(MPI_Win_free(&win));
    }
    OK(MPI_Group_free(&wg));
    OK(MPI_Group_free(&ng));
    OK(MPI_Comm_free(&node));
    OK(MPI_Type_free(&vec));
    free(block);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

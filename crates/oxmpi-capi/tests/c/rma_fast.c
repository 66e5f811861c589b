/* The fast path of small one-sided operations (same predefined type and count on
 * both sides, a passive-target epoch, a target on this host): results per type and
 * op (signed and unsigned max, floating sums that take the compare-exchange way,
 * MPI_NO_OP and MPI_REPLACE), get+put increments under exclusive locks from every
 * rank at once (exact total: the lock orders the plain copies), and the errors the
 * fast path must leave to the general one: out of range, no epoch (after unlock,
 * after unlock_all), an op undefined on the type, and a freed window's handle
 * (cached by the fast path) rejected as MPI_ERR_WIN. */
#include "check.h"

enum { ITER = 200 };

static int err_class(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(64 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(mem, 0, 64 * sizeof(long));
    int peer = (rank + 1) % size;
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Each rank works on its right neighbour's slots 0..15 (its own on 1 rank). */
    OK(MPI_Win_lock_all(0, win));
    long lv = 1234567890123L, lr = 0, lone = 5, lcmp;
    OK(MPI_Put(&lv, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win));
    OK(MPI_Get(&lr, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win));
    CHECK(lr == lv);
    OK(MPI_Fetch_and_op(&lone, &lr, MPI_LONG, peer, 0, MPI_SUM, win));
    CHECK(lr == lv);
    OK(MPI_Fetch_and_op(NULL, &lr, MPI_LONG, peer, 0, MPI_NO_OP, win));
    CHECK(lr == lv + 5);
    lcmp = lv + 5;
    long lnew = -7;
    OK(MPI_Compare_and_swap(&lnew, &lcmp, &lr, MPI_LONG, peer, 0, win));
    CHECK(lr == lv + 5);
    OK(MPI_Compare_and_swap(&lnew, &lcmp, &lr, MPI_LONG, peer, 0, win)); /* no match now */
    CHECK(lr == -7);
    /* Signed and unsigned max on 4 bytes, in slot 1 (bytes 8..15). */
    int im = -3, ir;
    OK(MPI_Put(&im, 1, MPI_INT, peer, 1, 1, MPI_INT, win));
    int ineg = -9;
    OK(MPI_Fetch_and_op(&ineg, &ir, MPI_INT, peer, 1, MPI_MAX, win));
    CHECK(ir == -3);
    OK(MPI_Get(&ir, 1, MPI_INT, peer, 1, 1, MPI_INT, win));
    CHECK(ir == -3);
    unsigned ubig = 4000000000u, ur;
    OK(MPI_Fetch_and_op(&ubig, &ur, MPI_UNSIGNED, peer, 1, MPI_MAX, win));
    CHECK(ur == (unsigned)-3); /* as unsigned, -3 is larger than 4e9 */
    OK(MPI_Fetch_and_op(&ubig, &ur, MPI_UNSIGNED, peer, 1, MPI_MIN, win));
    OK(MPI_Get(&ur, 1, MPI_UNSIGNED, peer, 1, 1, MPI_UNSIGNED, win));
    CHECK(ur == 4000000000u);
    /* Doubles: sum (compare-exchange), replace, no-op. */
    double d0 = 1.5, dinc = 2.25, dr;
    OK(MPI_Put(&d0, 1, MPI_DOUBLE, peer, 2, 1, MPI_DOUBLE, win));
    OK(MPI_Accumulate(&dinc, 1, MPI_DOUBLE, peer, 2, 1, MPI_DOUBLE, MPI_SUM, win));
    double drep = -1.0;
    OK(MPI_Fetch_and_op(&drep, &dr, MPI_DOUBLE, peer, 2, MPI_REPLACE, win));
    CHECK(dr == 3.75);
    OK(MPI_Get_accumulate(&drep, 1, MPI_DOUBLE, &dr, 1, MPI_DOUBLE, peer, 2, 1, MPI_DOUBLE, MPI_NO_OP, win));
    CHECK(dr == -1.0);
    /* A run of shorts: accumulate 3, get_accumulate back. */
    short sv[3] = {1, -2, 300}, sr[3];
    OK(MPI_Put(sv, 3, MPI_SHORT, peer, 3, 3, MPI_SHORT, win));
    OK(MPI_Accumulate(sv, 3, MPI_SHORT, peer, 3, 3, MPI_SHORT, MPI_SUM, win));
    OK(MPI_Get_accumulate(sv, 3, MPI_SHORT, sr, 3, MPI_SHORT, peer, 3, 3, MPI_SHORT, MPI_BXOR, win));
    CHECK(sr[0] == 2 && sr[1] == -4 && sr[2] == 600);
    OK(MPI_Get(sr, 3, MPI_SHORT, peer, 3, 3, MPI_SHORT, win));
    CHECK(sr[0] == (2 ^ 1) && sr[1] == (-4 ^ -2) && sr[2] == (600 ^ 300));
    /* Errors the fast path leaves to the general one. */
    int rc = MPI_Put(&lv, 1, MPI_LONG, peer, 64, 1, MPI_LONG, win);
    CHECK(err_class(rc) == MPI_ERR_RMA_RANGE);
    rc = MPI_Get(&lv, 2, MPI_LONG, peer, 63, 2, MPI_LONG, win);
    CHECK(err_class(rc) == MPI_ERR_RMA_RANGE);
    rc = MPI_Put(&lv, 1, MPI_LONG, peer, -1, 1, MPI_LONG, win);
    CHECK(rc != MPI_SUCCESS);
    rc = MPI_Put(&lv, 1, MPI_LONG, size, 0, 1, MPI_LONG, win);
    CHECK(err_class(rc) == MPI_ERR_RANK);
    unsigned char b = 1, br;
    rc = MPI_Fetch_and_op(&b, &br, MPI_BYTE, peer, 40, MPI_SUM, win);
    CHECK(err_class(rc) == MPI_ERR_OP);
    rc = MPI_Accumulate(&lv, 1, MPI_LONG, peer, 0, 1, MPI_LONG, MPI_MAXLOC, win);
    CHECK(err_class(rc) == MPI_ERR_OP);
    OK(MPI_Win_flush(peer, win));
    OK(MPI_Win_flush_local(peer, win));
    OK(MPI_Win_unlock_all(win));
    rc = MPI_Put(&lv, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win);
    CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
    rc = MPI_Win_flush(peer, win);
    CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    OK(MPI_Get(&lr, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win));
    CHECK(lr == -7);
    if (size > 1) {
        /* Locked: peer only. */
        rc = MPI_Get(&lr, 1, MPI_LONG, (peer + 1) % size, 0, 1, MPI_LONG, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
    }
    OK(MPI_Win_unlock(peer, win));
    rc = MPI_Get(&lr, 1, MPI_LONG, peer, 0, 1, MPI_LONG, win);
    CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Every rank increments rank 0's slot 8 by get + put under an exclusive lock. */
    for (int i = 0; i < ITER; i++) {
        long c;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Get(&c, 1, MPI_LONG, 0, 8, 1, MPI_LONG, win));
        c++;
        OK(MPI_Put(&c, 1, MPI_LONG, 0, 8, 1, MPI_LONG, win));
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(mem[8] == (long)ITER * size);
        OK(MPI_Win_unlock(0, win));
    }

    /* Fence epochs take the fast path too: results as in a lock epoch, the epoch
     * counted as used (MPI_MODE_NOPRECEDE and a lock after it fail with
     * MPI_ERR_RMA_SYNC), updates refused where the target asserted MPI_MODE_NOPUT.
     * Slots 20 and 21 of peer. */
    {
        OK(MPI_Win_fence(0, win));
        long fv = 77 + rank, fr = 0, fone = 1;
        OK(MPI_Put(&fv, 1, MPI_LONG, peer, 20, 1, MPI_LONG, win));
        OK(MPI_Accumulate(&fone, 1, MPI_LONG, peer, 21, 1, MPI_LONG, MPI_SUM, win));
        OK(MPI_Win_fence(0, win));
        OK(MPI_Get(&fr, 1, MPI_LONG, peer, 20, 1, MPI_LONG, win));
        rc = MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
        OK(MPI_Win_fence(0, win));
        CHECK(fr == 77 + rank && mem[21] == 1);
        OK(MPI_Get(&fr, 1, MPI_LONG, peer, 20, 1, MPI_LONG, win));
        rc = MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
        OK(MPI_Win_fence(MPI_MODE_NOPUT, win));
        rc = MPI_Put(&fv, 1, MPI_LONG, peer, 20, 1, MPI_LONG, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_CONFLICT);
        rc = MPI_Accumulate(&fone, 1, MPI_LONG, peer, 21, 1, MPI_LONG, MPI_SUM, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_CONFLICT);
        OK(MPI_Get(&fr, 1, MPI_LONG, peer, 21, 1, MPI_LONG, win));
        CHECK(fr == 1);
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    }

    /* Post/start epochs too: a put lands; updates of a target whose post asserted
     * MPI_MODE_NOPUT fail with MPI_ERR_RMA_CONFLICT; after complete, no epoch is
     * left for the fast path (MPI_ERR_RMA_SYNC). Slot 22 of peer. */
    {
        MPI_Group world, to, from;
        int left = (rank + size - 1) % size;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        OK(MPI_Group_incl(world, 1, &peer, &to));
        OK(MPI_Group_incl(world, 1, &left, &from));
        long pv = 500 + rank;
        OK(MPI_Win_post(from, 0, win));
        OK(MPI_Win_start(to, 0, win));
        OK(MPI_Put(&pv, 1, MPI_LONG, peer, 22, 1, MPI_LONG, win));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        CHECK(mem[22] == 500 + left);
        OK(MPI_Win_post(from, MPI_MODE_NOPUT, win));
        OK(MPI_Win_start(to, 0, win));
        rc = MPI_Put(&pv, 1, MPI_LONG, peer, 22, 1, MPI_LONG, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_CONFLICT);
        long one = 1;
        rc = MPI_Accumulate(&one, 1, MPI_LONG, peer, 22, 1, MPI_LONG, MPI_SUM, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_CONFLICT);
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        CHECK(mem[22] == 500 + left);
        rc = MPI_Put(&pv, 1, MPI_LONG, peer, 22, 1, MPI_LONG, win);
        CHECK(err_class(rc) == MPI_ERR_RMA_SYNC);
        OK(MPI_Group_free(&world)); OK(MPI_Group_free(&to)); OK(MPI_Group_free(&from));
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* Request-based operations on the fast path: each hands out a request that is
     * complete (MPI_Test answers at once), results as the blocking forms; a null
     * request pointer is MPI_ERR_ARG, with nothing written. Slots 16..19 of peer. */
    OK(MPI_Win_lock_all(0, win));
    {
        MPI_Request q[4];
        long a = 41, b = -1, c = 2, d = 0;
        OK(MPI_Rput(&a, 1, MPI_LONG, peer, 16, 1, MPI_LONG, win, &q[0]));
        int flag = 0;
        OK(MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE));
        CHECK(flag && q[0] == MPI_REQUEST_NULL);
        OK(MPI_Rget(&b, 1, MPI_LONG, peer, 16, 1, MPI_LONG, win, &q[0]));
        OK(MPI_Raccumulate(&c, 1, MPI_LONG, peer, 16, 1, MPI_LONG, MPI_SUM, win, &q[1]));
        OK(MPI_Rget_accumulate(&c, 1, MPI_LONG, &d, 1, MPI_LONG, peer, 16, 1, MPI_LONG, MPI_SUM, win, &q[2]));
        OK(MPI_Rget(&a, 1, MPI_LONG, peer, 16, 1, MPI_LONG, win, &q[3]));
        OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        CHECK(b == 41 && d == 43 && a == 45);
        /* every completion call takes them: distinct handles, complete at once */
        for (int k = 0; k < 4; k++) OK(MPI_Rput(&a, 1, MPI_LONG, peer, 18, 1, MPI_LONG, win, &q[k]));
        CHECK(q[0] != q[1] && q[1] != q[2] && q[2] != q[3] && q[0] != q[3]);
        OK(MPI_Request_get_status(q[0], &flag, MPI_STATUS_IGNORE));
        CHECK(flag && q[0] != MPI_REQUEST_NULL);
        int idx = -1, cnt = -1, idxs[4];
        OK(MPI_Waitany(4, q, &idx, MPI_STATUS_IGNORE));
        CHECK(idx >= 0 && idx < 4 && q[idx] == MPI_REQUEST_NULL);
        OK(MPI_Testsome(4, q, &cnt, idxs, MPI_STATUSES_IGNORE));
        CHECK(cnt == 3);
        for (int k = 0; k < 4; k++) CHECK(q[k] == MPI_REQUEST_NULL);
        OK(MPI_Rget(&b, 1, MPI_LONG, peer, 18, 1, MPI_LONG, win, &q[0]));
        OK(MPI_Cancel(&q[0]));
        OK(MPI_Request_free(&q[0]));
        CHECK(q[0] == MPI_REQUEST_NULL);
        OK(MPI_Rget(&b, 1, MPI_LONG, peer, 18, 1, MPI_LONG, win, &q[1]));
        flag = 0;
        OK(MPI_Testall(1, &q[1], &flag, MPI_STATUSES_IGNORE));
        CHECK(flag && q[1] == MPI_REQUEST_NULL && b == 45);
        OK(MPI_Rput(&a, 1, MPI_LONG, peer, 18, 1, MPI_LONG, win, &q[2]));
        OK(MPI_Wait(&q[2], MPI_STATUS_IGNORE));
        CHECK(q[2] == MPI_REQUEST_NULL);
        OK(MPI_Wait(&q[2], MPI_STATUS_IGNORE)); /* MPI_REQUEST_NULL: at once */
        rc = MPI_Rput(&a, 1, MPI_LONG, peer, 17, 1, MPI_LONG, win, NULL);
        CHECK(err_class(rc) == MPI_ERR_ARG);
        long big[64] = {0};
        rc = MPI_Raccumulate(big, 64, MPI_LONG, peer, 0, 64, MPI_LONG, MPI_SUM, win, NULL);
        CHECK(err_class(rc) == MPI_ERR_ARG);
        OK(MPI_Get(&b, 1, MPI_LONG, peer, 17, 1, MPI_LONG, win));
        CHECK(b == 0);
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A freed window's handle: the fast path's cache must not answer for it. */
    MPI_Win old = win;
    OK(MPI_Win_free(&win));
    rc = MPI_Put(&lv, 1, MPI_LONG, peer, 0, 1, MPI_LONG, old);
    CHECK(err_class(rc) == MPI_ERR_WIN);
    rc = MPI_Win_flush(peer, old);
    CHECK(err_class(rc) == MPI_ERR_WIN);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("rma_fast: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

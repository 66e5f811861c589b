/* Passive-target locks (MPI_Win_lock/unlock, lock_all), taken without a mutex on
 * this host: what they must guarantee whatever way they are taken.
 * - exclusive locks exclude each other: every rank enters rank 0's window under an
 *   exclusive lock many times and must find nobody else inside (an owner slot it
 *   sets, then reads back after a get round trip), and get+put increments add up;
 * - an exclusive lock excludes shared locks and lock_all: a rank that asks while
 *   another holds it gets in only after the holder left;
 * - shared locks are concurrent: two ranks hold a shared lock on rank 0 at once
 *   (each waits, inside, for a message the other sends from inside: exclusive
 *   shared locks would hang here);
 * - the target spins without calling MPI while the others lock, update and unlock
 *   its window: it sees the exact count arrive;
 * - MPI_ERR_RMA_SYNC for every misuse (lock twice, unlock unlocked, lock inside
 *   lock_all, lock_all/fence/start/free with a lock held, put and flush after the
 *   unlock), and lock after an empty fence epoch, fence after the unlock. */
#include "check.h"
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int err_class(int rc) {
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

#define SYNC_ERR(call) CHECK(err_class(call) == MPI_ERR_RMA_SYNC)

enum { ROUNDS = 60, OWNER = 0, COUNT = 1, INSIDE = 2, SPIN = 3, SLOTS = 8 };

/* Sleeps about `ms` milliseconds outside MPI. */
static void pause_ms(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    int rank, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < SLOTS; i++) mem[i] = 0;
    mem[OWNER] = -1;
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* 1. Exclusive locks exclude each other (every rank, rank 0 included). */
    for (int i = 0; i < ROUNDS; i++) {
        long owner = -2, me = rank, none = -1, c = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Get(&owner, 1, MPI_LONG, 0, OWNER, 1, MPI_LONG, win));
        OK(MPI_Win_flush(0, win));
        CHECK(owner == -1);
        OK(MPI_Put(&me, 1, MPI_LONG, 0, OWNER, 1, MPI_LONG, win));
        OK(MPI_Get(&c, 1, MPI_LONG, 0, COUNT, 1, MPI_LONG, win));
        OK(MPI_Win_flush(0, win));
        c += 1;
        OK(MPI_Put(&c, 1, MPI_LONG, 0, COUNT, 1, MPI_LONG, win));
        OK(MPI_Get(&owner, 1, MPI_LONG, 0, OWNER, 1, MPI_LONG, win));
        OK(MPI_Win_flush(0, win));
        CHECK(owner == me);
        OK(MPI_Put(&none, 1, MPI_LONG, 0, OWNER, 1, MPI_LONG, win));
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) CHECK(mem[COUNT] == (long)size * ROUNDS && mem[OWNER] == -1);

    if (size >= 2) {
        /* 2. An exclusive lock excludes a shared lock, then lock_all, asked for while
         * it is held: rank 1 holds it and marks INSIDE, tells rank b, waits, clears
         * the mark and unlocks; b's lock is granted after that, so b reads 0. */
        int b = size > 2 ? 2 : 0;
        for (int kind = 0; kind < 2; kind++) {
            if (rank == 1) {
                long one = 1, zero = 0;
                int token = kind;
                OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                OK(MPI_Put(&one, 1, MPI_LONG, 0, INSIDE, 1, MPI_LONG, win));
                OK(MPI_Win_flush(0, win));
                OK(MPI_Send(&token, 1, MPI_INT, b, 5, MPI_COMM_WORLD));
                pause_ms(100);
                OK(MPI_Put(&zero, 1, MPI_LONG, 0, INSIDE, 1, MPI_LONG, win));
                OK(MPI_Win_unlock(0, win));
            } else if (rank == b) {
                int token = -1;
                long inside = -1;
                OK(MPI_Recv(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(token == kind);
                /* granted only once the holder (pausing 100 ms inside) left */
                if (kind == 0) OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
                else OK(MPI_Win_lock_all(0, win));
                OK(MPI_Get(&inside, 1, MPI_LONG, 0, INSIDE, 1, MPI_LONG, win));
                OK(MPI_Win_flush(0, win));
                CHECK(inside == 0);
                if (kind == 0) OK(MPI_Win_unlock(0, win));
                else OK(MPI_Win_unlock_all(win));
            }
            OK(MPI_Barrier(MPI_COMM_WORLD));
        }

        /* 3. Shared locks are held at once by rank 1 and rank b. */
        if (rank == 1 || rank == b) {
            int other = rank == 1 ? b : 1, in = 1, got = 0;
            OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            OK(MPI_Sendrecv(&in, 1, MPI_INT, other, 6, &got, 1, MPI_INT, other, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(got == 1);
            long v = -1;
            OK(MPI_Get(&v, 1, MPI_LONG, 0, COUNT, 1, MPI_LONG, win));
            OK(MPI_Win_unlock(0, win));
            CHECK(v == (long)size * ROUNDS);
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));

        /* 4. The target spins outside MPI; the others lock exclusively, increment
         * SPIN by get + put, unlock. It sees the exact total arrive. */
        if (rank == 0) {
            volatile long *m = mem;
            long want = (long)(size - 1) * ROUNDS;
            double t0 = now(), x = 1.0;
            while (m[SPIN] != want && now() - t0 < 60.0) {
                for (int i = 0; i < 1000; i++) x = x * 1.0000001 + 1e-9;
            }
            CHECK(m[SPIN] == want);
            CHECK(x > 0);
        } else {
            for (int i = 0; i < ROUNDS; i++) {
                long c = -1;
                OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                OK(MPI_Get(&c, 1, MPI_LONG, 0, SPIN, 1, MPI_LONG, win));
                OK(MPI_Win_flush(0, win));
                c += 1;
                OK(MPI_Put(&c, 1, MPI_LONG, 0, SPIN, 1, MPI_LONG, win));
                OK(MPI_Win_unlock(0, win));
            }
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* 5. Synchronization errors, each leaving the window usable. */
    int peer = (rank + 1) % size;
    long v = 0;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    SYNC_ERR(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    SYNC_ERR(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win));
    SYNC_ERR(MPI_Win_lock_all(0, win));
    SYNC_ERR(MPI_Win_fence(0, win));
    MPI_Group g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    SYNC_ERR(MPI_Win_start(g, 0, win));
    MPI_Win keep = win;
    SYNC_ERR(MPI_Win_free(&keep));
    CHECK(keep == win);
    if (size > 1) {
        /* another target: not in this lock's epoch */
        int third = (rank + 2) % size;
        if (third != peer) SYNC_ERR(MPI_Put(&v, 1, MPI_LONG, third, 0, 1, MPI_LONG, win));
        if (third != peer) SYNC_ERR(MPI_Win_flush(third, win));
        if (third != peer) SYNC_ERR(MPI_Win_unlock(third, win));
    }
    OK(MPI_Win_flush(peer, win));
    OK(MPI_Win_flush_all(win));
    OK(MPI_Put(&v, 1, MPI_LONG, peer, 7, 1, MPI_LONG, win));
    OK(MPI_Win_unlock(peer, win));
    SYNC_ERR(MPI_Win_unlock(peer, win));
    SYNC_ERR(MPI_Put(&v, 1, MPI_LONG, peer, 7, 1, MPI_LONG, win));
    SYNC_ERR(MPI_Win_flush(peer, win));
    SYNC_ERR(MPI_Win_flush_all(win));
    /* lock_all excludes lock, and lock_all twice */
    OK(MPI_Win_lock_all(0, win));
    SYNC_ERR(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    SYNC_ERR(MPI_Win_lock_all(0, win));
    SYNC_ERR(MPI_Win_unlock(peer, win));
    OK(MPI_Win_unlock_all(win));
    SYNC_ERR(MPI_Win_unlock_all(win));
    /* a lock after an empty fence epoch, then fence again after the unlock */
    OK(MPI_Win_fence(0, win));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win));
    OK(MPI_Put(&v, 1, MPI_LONG, peer, 7, 1, MPI_LONG, win));
    OK(MPI_Win_unlock(peer, win));
    /* and locks again afterwards (the way without a mutex reopened) */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    OK(MPI_Win_unlock(peer, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    /* a start epoch excludes locks */
    OK(MPI_Win_post(g, 0, win));
    OK(MPI_Win_start(g, 0, win));
    SYNC_ERR(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    OK(MPI_Win_complete(win));
    OK(MPI_Win_wait(win));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
    OK(MPI_Win_unlock(peer, win));
    OK(MPI_Group_free(&g));
    /* MPI_PROC_NULL locks nothing */
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, MPI_PROC_NULL, 0, win));
    OK(MPI_Win_unlock(MPI_PROC_NULL, win));

    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_free(&win));
    if (rank == 0) printf("rma_locks: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

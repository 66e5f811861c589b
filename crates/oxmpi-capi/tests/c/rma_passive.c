/* Passive target without the target: rank 0 computes in a loop that makes no MPI
 * call while every other rank locks its window, puts, accumulates, gets and
 * unlocks. Rank 0 sees every origin's "done" flag appear in its own memory while
 * it is still computing, for an MPI_Win_allocate and an MPI_Win_create window.
 * Then the same while rank 0 is blocked in MPI_Recv of messages the origins send
 * only after their epochs ended. Across hosts (origins on another host than rank 0)
 * the target's progress thread serves them. */
#include "check.h"
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

enum { ROUNDS = 40 };

static void run(MPI_Win win, volatile int *mem, int rank, int size, int blocked) {
    /* mem[0]: counter; mem[1..size-1]: done flags; mem[size..]: scratch */
    if (rank == 0) {
        for (int i = 0; i < 2 * size + 2; i++) mem[i] = 0;
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0 && blocked) {
        /* blocked in an unrelated receive: each origin sends after its epochs */
        for (int r = 1; r < size; r++) {
            int token = -1;
            OK(MPI_Recv(&token, 1, MPI_INT, r, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == r);
        }
        for (int r = 1; r < size; r++) CHECK(mem[r] == 1);
        CHECK(mem[0] == (size - 1) * ROUNDS * 3);
        for (int r = 1; r < size; r++) CHECK(mem[size + r] == r * 7);
    } else if (rank == 0) {
        /* no MPI call in here: compute until every origin said it is done */
        double t0 = now(), x = 1.0;
        int seen = 0;
        while (now() - t0 < 30.0) {
            for (int i = 0; i < 10000; i++) x = x * 1.0000001 + 1e-9;
            seen = 0;
            for (int r = 1; r < size; r++) seen += mem[r] == 1;
            if (seen == size - 1) break;
        }
        CHECK(seen == size - 1); /* origins finished while the target computed */
        CHECK(x > 0);
        /* exclusive updates of the counter: exact */
        CHECK(mem[0] == (size - 1) * ROUNDS * 3);
        for (int r = 1; r < size; r++) CHECK(mem[size + r] == r * 7);
    } else {
        for (int i = 0; i < ROUNDS; i++) {
            /* read-modify-write under an exclusive lock */
            OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            int c;
            OK(MPI_Get(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
            OK(MPI_Win_flush(0, win));
            c += 2;
            OK(MPI_Put(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
            OK(MPI_Win_unlock(0, win));
            /* and an atomic add under a shared lock */
            int one = 1;
            OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
            OK(MPI_Win_unlock(0, win));
        }
        int v = rank * 7, done = 1;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        OK(MPI_Put(&v, 1, MPI_INT, 0, size + rank, 1, MPI_INT, win));
        OK(MPI_Win_flush(0, win));
        OK(MPI_Put(&done, 1, MPI_INT, 0, rank, 1, MPI_INT, win));
        OK(MPI_Win_unlock(0, win));
        if (blocked) OK(MPI_Send(&rank, 1, MPI_INT, 0, 77, MPI_COMM_WORLD));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int n = 2 * size + 2;
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    run(win, mem, rank, size, 0);
    run(win, mem, rank, size, 1);
    OK(MPI_Win_free(&win));
    int *user = calloc(n, sizeof(int));
    OK(MPI_Win_create(user, n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    run(win, user, rank, size, 0);
    run(win, user, rank, size, 1);
    OK(MPI_Win_free(&win));
    free(user);
    if (rank == 0) printf("passive target progressed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

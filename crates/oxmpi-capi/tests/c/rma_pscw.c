/* Post/start/complete/wait over many epochs: every rank an origin of rank 0 in
 * each round (MPI_Win_wait and MPI_Win_test rounds), a ring in which every rank
 * is target and origin at once with groups made and freed every round (their
 * handles reuse table slots), MPI_Win_test that must say "not yet" while an
 * origin has not completed, and freed group handles refused with MPI_ERR_GROUP. */
#include "check.h"

#define ROUNDS 200
/* The call fails with an error of class `want`. */
#define CLASS(call, want) do { int e_ = (call), c_ = -1; OK(MPI_Error_class(e_, &c_)); CHECK(e_ != MPI_SUCCESS && c_ == (want)); } while (0)

static int rank, size;

/* Every rank puts (round, rank) into its own slot of rank 0's window, each round. */
static void many_origins(MPI_Win win, int *mem) {
    MPI_Group world, zero, origins;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int z = 0;
    OK(MPI_Group_incl(world, 1, &z, &zero));
    origins = world;
    for (int round = 1; round <= ROUNDS; round++) {
        if (rank == 0) OK(MPI_Win_post(origins, 0, win));
        OK(MPI_Win_start(zero, 0, win));
        int v[2] = {round, rank};
        OK(MPI_Put(v, 2, MPI_INT, 0, 2 * rank, 2, MPI_INT, win));
        OK(MPI_Win_complete(win));
        if (rank == 0) {
            if (round % 2) {
                OK(MPI_Win_wait(win));
            } else {
                int flag = 0;
                while (!flag) OK(MPI_Win_test(win, &flag));
            }
            /* The epoch ended: every origin's put of this round is visible. */
            for (int r = 0; r < size; r++) CHECK(mem[2 * r] == round && mem[2 * r + 1] == r);
        }
    }
    OK(MPI_Group_free(&zero));
    OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Every rank exposes to its left neighbour and accesses its right one, with new
 * groups each round (freed at its end: the next ones reuse their handles' slots). */
static void ring(MPI_Win win, int *mem) {
    MPI_Group world;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 1; round <= ROUNDS; round++) {
        /* every third round the two groups swap their roles' order of creation */
        MPI_Group from, to;
        if (round % 3) {
            OK(MPI_Group_incl(world, 1, &left, &from));
            OK(MPI_Group_incl(world, 1, &right, &to));
        } else {
            OK(MPI_Group_incl(world, 1, &right, &to));
            OK(MPI_Group_incl(world, 1, &left, &from));
        }
        OK(MPI_Win_post(from, 0, win));
        OK(MPI_Win_start(to, 0, win));
        int v = round * 1000 + rank;
        OK(MPI_Put(&v, 1, MPI_INT, right, 100, 1, MPI_INT, win));
        OK(MPI_Win_complete(win));
        OK(MPI_Win_wait(win));
        CHECK(mem[100] == round * 1000 + left);
        OK(MPI_Group_free(&from));
        OK(MPI_Group_free(&to));
    }
    OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 1 starts an access epoch to rank 0 but completes it only after rank 0's
 * MPI_Win_test said the exposure epoch has not ended. */
static void test_waits_for_complete(MPI_Win win, int *mem) {
    if (size < 2) return;
    MPI_Group world, g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (rank == 0) {
        int others = size - 1, ranks[64];
        for (int r = 1; r < size && r <= 64; r++) ranks[r - 1] = r;
        OK(MPI_Group_incl(world, others, ranks, &g));
        mem[200] = 0;
        OK(MPI_Win_post(g, 0, win));
        int flag = 1;
        OK(MPI_Win_test(win, &flag));
        CHECK(flag == 0);
        /* rank 1 may complete now; the others completed without waiting */
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 7, MPI_COMM_WORLD));
        while (!flag) OK(MPI_Win_test(win, &flag));
        CHECK(mem[200] == 42);
        flag = 0;
        CLASS(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC); /* no exposure epoch now */
    } else {
        int z = 0;
        OK(MPI_Group_incl(world, 1, &z, &g));
        OK(MPI_Win_start(g, 0, win));
        if (rank == 1) {
            OK(MPI_Recv(NULL, 0, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int v = 42;
            OK(MPI_Put(&v, 1, MPI_INT, 0, 200, 1, MPI_INT, win));
        }
        OK(MPI_Win_complete(win));
    }
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A freed group handle (its value kept) is refused, also right after it was the
 * group of the previous post and start. */
static void freed_groups(MPI_Win win) {
    MPI_Group world, g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_incl(world, 1, &rank, &g));
    OK(MPI_Win_post(g, 0, win));
    OK(MPI_Win_start(g, 0, win));
    OK(MPI_Win_complete(win));
    OK(MPI_Win_wait(win));
    MPI_Group stale = g;
    OK(MPI_Group_free(&g));
    CHECK(g == MPI_GROUP_NULL);
    CLASS(MPI_Win_post(stale, 0, win), MPI_ERR_GROUP);
    CLASS(MPI_Win_start(stale, 0, win), MPI_ERR_GROUP);
    /* nothing was opened by the refused calls */
    int flag = 0;
    CLASS(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC);
    CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 64);
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(256 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 256; i++) mem[i] = -1;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    many_origins(win, mem);
    ring(win, mem);
    test_waits_for_complete(win, mem);
    freed_groups(win);
    OK(MPI_Win_free(&win));
    /* the same over memory of MPI_Win_create (reached by cross-memory attach) */
    int *own = malloc(256 * sizeof(int));
    for (int i = 0; i < 256; i++) own[i] = -1;
    OK(MPI_Win_create(own, 256 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    many_origins(win, own);
    ring(win, own);
    test_waits_for_complete(win, own);
    OK(MPI_Win_free(&win));
    free(own);
    if (rank == 0) printf("rma_pscw: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

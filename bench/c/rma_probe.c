/* One-sided instruction-count probe (for callgrind; see bench/PROFILE.md).
 *
 *   mpiexec -n 2 ./rma_probe OP ITERS [BYTES]
 *
 * Rank 0 repeats one operation to rank 1's MPI_Win_allocate window ITERS times;
 * rank 1 waits in a barrier. OP:
 *   put, get MPI_Put / MPI_Get of BYTES of MPI_LONG, in lock_all + flush
 *   acc      MPI_Accumulate of BYTES of MPI_LONG, MPI_SUM, in lock_all + flush
 *   getacc   MPI_Get_accumulate of BYTES of MPI_LONG, MPI_SUM, in lock_all + flush
 *   cas      MPI_Compare_and_swap on one MPI_LONG, in lock_all + flush
 *   accd     the same on MPI_DOUBLE
 *   fop      MPI_Fetch_and_op on one MPI_LONG, in lock_all + flush
 *   lock     MPI_Win_lock(exclusive) + one 8-byte MPI_Put + MPI_Win_unlock
 *   lockonly MPI_Win_lock(shared) + MPI_Win_unlock
 *   lockx    MPI_Win_lock(exclusive) + MPI_Win_unlock
 *   lockall  MPI_Win_lock_all + MPI_Win_unlock_all
 *   fence    MPI_Put of BYTES inside fence epochs (ITERS puts per epoch)
 *   rput     MPI_Rput of BYTES + MPI_Wait, in lock_all
 *   rget     MPI_Rget of BYTES + MPI_Wait, in lock_all
 *   racc     MPI_Raccumulate of BYTES (MPI_SUM) + MPI_Wait, in lock_all
 *   pscw     rank 0: MPI_Win_start + MPI_Put of BYTES + MPI_Win_complete; rank 1:
 *            MPI_Win_post + MPI_Win_wait (OSU's put latency with `-s pscw`)
 *   pscwself rank 0 with itself as origin and target: MPI_Win_post, MPI_Win_start,
 *            MPI_Put of BYTES, MPI_Win_complete, MPI_Win_wait (no call waits for the
 *            other rank: the counts are each call's own work)
 * Under callgrind, compare the inclusive counts of the calls (or two ITERS). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: rma_probe OP ITERS [BYTES]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *op = argv[1];
    long iters = atol(argv[2]);
    size_t bytes = argc > 3 ? (size_t)atol(argv[3]) : 8;
    if (bytes < 8) bytes = 8;
    int n = (int)(bytes / 8);
    char *mem;
    MPI_Win win;
    /* PROBE_SAME_OP=1: the window is made with info accumulate_ops = same_op */
    MPI_Info info = MPI_INFO_NULL;
    if (getenv("PROBE_SAME_OP")) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "accumulate_ops", "same_op");
    }
    MPI_Win_allocate((MPI_Aint)bytes, 1, info, MPI_COMM_WORLD, &mem, &win);
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    void *buf = calloc(n + 1, 8), *res = calloc(n + 1, 8);
    double t0 = MPI_Wtime();
    if (!strcmp(op, "pscw")) {
        MPI_Group world, peer;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        int other = 1 - rank;
        MPI_Group_incl(world, 1, &other, &peer);
        for (long i = 0; i < iters; i++) {
            if (rank == 0) {
                MPI_Win_start(peer, 0, win);
                MPI_Put(buf, n, MPI_LONG, 1, 0, n, MPI_LONG, win);
                MPI_Win_complete(win);
            } else {
                MPI_Win_post(peer, 0, win);
                MPI_Win_wait(win);
            }
        }
        MPI_Group_free(&peer);
        MPI_Group_free(&world);
    } else if (!strcmp(op, "pscwself")) {
        MPI_Group world, me;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &rank, &me);
        if (rank == 0)
            for (long i = 0; i < iters; i++) {
                MPI_Win_post(me, 0, win);
                MPI_Win_start(me, 0, win);
                MPI_Put(buf, n, MPI_LONG, 0, 0, n, MPI_LONG, win);
                MPI_Win_complete(win);
                MPI_Win_wait(win);
            }
        MPI_Group_free(&me);
        MPI_Group_free(&world);
    } else if (!strcmp(op, "fence")) {
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (long i = 0; i < iters; i++) MPI_Put(buf, n, MPI_LONG, 1, 0, n, MPI_LONG, win);
        MPI_Win_fence(0, win);
    } else if (rank == 0) {
        int all = strcmp(op, "lock") && strcmp(op, "lockonly") && strcmp(op, "lockx") && strcmp(op, "lockall");
        if (all) MPI_Win_lock_all(0, win);
        for (long i = 0; i < iters; i++) {
            if (!strcmp(op, "put")) {
                MPI_Put(buf, n, MPI_LONG, 1, 0, n, MPI_LONG, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "get")) {
                MPI_Get(res, n, MPI_LONG, 1, 0, n, MPI_LONG, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "getacc")) {
                MPI_Get_accumulate(buf, n, MPI_LONG, res, n, MPI_LONG, 1, 0, n, MPI_LONG, MPI_SUM, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "cas")) {
                MPI_Compare_and_swap(buf, res, (char *)res + 8, MPI_LONG, 1, 0, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "acc")) {
                MPI_Accumulate(buf, n, MPI_LONG, 1, 0, n, MPI_LONG, MPI_SUM, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "accd")) {
                MPI_Accumulate(buf, n, MPI_DOUBLE, 1, 0, n, MPI_DOUBLE, MPI_SUM, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "fop")) {
                MPI_Fetch_and_op(buf, res, MPI_LONG, 1, 0, MPI_SUM, win);
                MPI_Win_flush(1, win);
            } else if (!strcmp(op, "lock")) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(buf, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win);
                MPI_Win_unlock(1, win);
            } else if (!strcmp(op, "lockonly")) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Win_unlock(1, win);
            } else if (!strcmp(op, "lockx")) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Win_unlock(1, win);
            } else if (!strcmp(op, "lockall")) {
                MPI_Win_lock_all(0, win);
                MPI_Win_unlock_all(win);
            } else if (!strcmp(op, "rget")) {
                MPI_Request r;
                MPI_Rget(res, n, MPI_LONG, 1, 0, n, MPI_LONG, win, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else if (!strcmp(op, "racc")) {
                MPI_Request r;
                MPI_Raccumulate(buf, n, MPI_LONG, 1, 0, n, MPI_LONG, MPI_SUM, win, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            } else if (!strcmp(op, "rput")) {
                MPI_Request r;
                MPI_Rput(buf, n, MPI_LONG, 1, 0, n, MPI_LONG, win, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
        }
        if (all) MPI_Win_unlock_all(win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("%s %zu bytes: %.3f us per iteration\n", op, bytes, t * 1e6 / (double)iters);
    MPI_Win_free(&win);
    free(buf);
    free(res);
    MPI_Finalize();
    return 0;
}

/* OSU-style one-sided benchmarks on 2 ranks (rank 0 the origin, rank 1 the target,
 * which waits in MPI_Barrier meanwhile), after OSU's osu_put_latency, osu_get_latency,
 * osu_put_bw, osu_acc_latency, osu_fop_latency, osu_cas_latency with the
 * MPI_Win_allocate window and lock_all/flush synchronization (OSU's `-w allocate -s
 * flush`), osu_get_acc_latency, plus put latency with fence synchronization (`-s fence`,
 * both ranks) and with post/start/complete/wait (`-s pscw`: rank 1 posts and waits), and
 * put, get and fetch_and_op with an exclusive MPI_Win_lock/unlock per operation (`-s lock`).
 * Output: "# test" then "size value" lines (latency in us, bandwidth in MB/s). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX (1 << 22)
#define WINDOW 64

static int rank;
static MPI_Win win;
static char *wbuf, *obuf;

static int iters(int size, int small, int large) { return size > 8192 ? large : small; }

/* sync 0: lock_all once, MPI_Win_flush after each operation (OSU `-s flush`);
 * sync 1: MPI_Win_lock (exclusive) + operation + MPI_Win_unlock per iteration (`-s lock`). */
static void lat(const char *name, int max, int which, int sync) {
    if (rank == 0) printf("# %s\n", name);
    for (int size = (which >= 3 ? 8 : 1); size <= max; size *= 2) {
        int loop = iters(size, 5000, 500), skip = loop / 10;
        if (rank == 0) {
            double t0 = 0;
            long long one = 1, res, cmp = 0;
            int n = size / 4 ? size / 4 : 1;
            if (!sync) MPI_Win_lock_all(0, win);
            for (int i = 0; i < loop + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                if (sync) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                switch (which) {
                case 0: MPI_Put(obuf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win); break;
                case 1: MPI_Get(obuf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win); break;
                case 2: MPI_Accumulate(obuf, n, MPI_INT, 1, 0, n, MPI_INT, MPI_SUM, win); break;
                case 3: MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, 1, 0, MPI_SUM, win); break;
                case 4: MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG_LONG, 1, 0, win); break;
                case 5: MPI_Get_accumulate(obuf, n, MPI_INT, obuf + MAX / 2, n, MPI_INT, 1, 0, n, MPI_INT, MPI_SUM, win); break;
                }
                if (sync) MPI_Win_unlock(1, win); else MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            if (!sync) MPI_Win_unlock_all(win);
            printf("%d %.2f\n", (which == 2 || which == 5) ? n * 4 : size, t * 1e6 / loop);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void bw(void) {
    if (rank == 0) printf("# put_bw\n");
    for (int size = 1; size <= MAX; size *= 2) {
        int loop = iters(size, 100, 20), skip = loop / 10;
        if (rank == 0) {
            double t0 = 0;
            MPI_Win_lock_all(0, win);
            for (int i = 0; i < loop + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                for (int j = 0; j < WINDOW; j++) {
                    long off = (long)j * size % (MAX - size + 1);
                    MPI_Put(obuf, size, MPI_CHAR, 1, off, size, MPI_CHAR, win);
                }
                MPI_Win_flush(1, win);
            }
            double t = MPI_Wtime() - t0;
            MPI_Win_unlock_all(win);
            printf("%d %.2f\n", size, (double)size * WINDOW * loop / t / 1e6);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void fence_lat(void) {
    if (rank == 0) printf("# put_fence_latency\n");
    for (int size = 1; size <= 65536; size *= 2) {
        int loop = iters(size, 2000, 200), skip = loop / 10;
        double t0 = 0;
        MPI_Win_fence(0, win);
        for (int i = 0; i < loop + skip; i++) {
            if (i == skip) t0 = MPI_Wtime();
            if (rank == 0) MPI_Put(obuf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
            MPI_Win_fence(0, win);
        }
        double t = MPI_Wtime() - t0;
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        if (rank == 0) { printf("%d %.2f\n", size, t * 1e6 / loop); fflush(stdout); }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

static void pscw_lat(void) {
    if (rank == 0) printf("# put_pscw_latency\n");
    MPI_Group world, peer;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int other = 1 - rank;
    MPI_Group_incl(world, 1, &other, &peer);
    for (int size = 1; size <= 65536; size *= 2) {
        int loop = iters(size, 2000, 200), skip = loop / 10;
        double t0 = 0;
        for (int i = 0; i < loop + skip; i++) {
            if (i == skip) t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Win_start(peer, 0, win);
                MPI_Put(obuf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
                MPI_Win_complete(win);
            } else {
                MPI_Win_post(peer, 0, win);
                MPI_Win_wait(win);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0) { printf("%d %.2f\n", size, t * 1e6 / loop); fflush(stdout); }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&peer);
    MPI_Group_free(&world);
}

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "osu_rma: run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    obuf = malloc(MAX);
    memset(obuf, 1, MAX);
    MPI_Win_allocate(MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbuf, &win);
    memset(wbuf, 0, MAX);
    MPI_Barrier(MPI_COMM_WORLD);
    const char *only = argc > 1 ? argv[1] : "";
    if (!*only || !strcmp(only, "put")) lat("put_latency", 65536, 0, 0);
    if (!*only || !strcmp(only, "get")) lat("get_latency", 65536, 1, 0);
    if (!*only || !strcmp(only, "acc")) lat("acc_latency", 65536, 2, 0);
    if (!*only || !strcmp(only, "fop")) lat("fop_latency", 8, 3, 0);
    if (!*only || !strcmp(only, "cas")) lat("cas_latency", 8, 4, 0);
    if (!*only || !strcmp(only, "getacc")) lat("get_acc_latency", 65536, 5, 0);
    if (!*only || !strcmp(only, "putlock")) lat("put_lock_latency", 65536, 0, 1);
    if (!*only || !strcmp(only, "getlock")) lat("get_lock_latency", 65536, 1, 1);
    if (!*only || !strcmp(only, "foplock")) lat("fop_lock_latency", 8, 3, 1);
    if (!*only || !strcmp(only, "bw")) bw();
    if (!*only || !strcmp(only, "fence")) fence_lat();
    if (!*only || !strcmp(only, "pscw")) pscw_lat();
    MPI_Win_free(&win);
    free(obuf);
    MPI_Finalize();
    return 0;
}

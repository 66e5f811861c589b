/* Eager messages of 1-64 KiB whose receives are posted before they arrive: over TCP
 * such a message is matched at its header and read straight into the receive's
 * buffer (engine/net.rs land_eager). Checked here: contents and statuses; receives
 * posted in another order than the messages come (each message lands in the receive
 * it matches, not the oldest one); wildcard receives filled in send order when small
 * messages (which do not land) and medium ones (which may) alternate in one window;
 * synchronous sends; a receive too small (truncation, through the ordinary path);
 * a non-contiguous receive; a message that arrives before its receive. 2 ranks. */
#include "check.h"

#define WINDOW 32
#define BIG (64 * 1024)

static unsigned char pattern(int msg, int i) { return (unsigned char)(msg * 31 + i * 7 + (i >> 8)); }

static void fill(unsigned char *b, int len, int msg) {
    for (int i = 0; i < len; i++) b[i] = pattern(msg, i);
}

static int same(const unsigned char *b, int len, int msg) {
    for (int i = 0; i < len; i++)
        if (b[i] != pattern(msg, i)) return 0;
    return 1;
}

/* Sizes of a window: small (< 1 KiB, never landed) and medium alternate. */
static int window_size(int i) {
    static const int sizes[] = {100, 8192, 1500, 16, 4096, 65536, 700, 2048, 32768, 1024};
    return sizes[i % 10];
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "eager_land: run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank;
    unsigned char *buf = malloc(BIG), *bufs[WINDOW];
    for (int i = 0; i < WINDOW; i++) bufs[i] = malloc(BIG);
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];

    /* 1. Ping-pong, 1 KiB to 64 KiB, the receive posted first. */
    for (int len = 1024; len <= BIG; len *= 2) {
        for (int it = 0; it < 20; it++) {
            int msg = len / 1024 + it;
            if (rank == 0) {
                fill(buf, len, msg);
                OK(MPI_Send(buf, len, MPI_BYTE, peer, it, MPI_COMM_WORLD));
                memset(buf, 0, len);
                OK(MPI_Recv(buf, len, MPI_BYTE, peer, it, MPI_COMM_WORLD, &st[0]));
                CHECK(same(buf, len, msg + 1));
            } else {
                memset(buf, 0, len);
                OK(MPI_Recv(buf, BIG, MPI_BYTE, peer, it, MPI_COMM_WORLD, &st[0]));
                int count;
                MPI_Get_count(&st[0], MPI_BYTE, &count);
                CHECK(count == len && st[0].MPI_SOURCE == peer && st[0].MPI_TAG == it);
                CHECK(same(buf, len, msg));
                fill(buf, len, msg + 1);
                OK(MPI_Send(buf, len, MPI_BYTE, peer, it, MPI_COMM_WORLD));
            }
        }
    }

    /* 2. Receives posted in reverse tag order: message k goes to the receive of tag k. */
    for (int round = 0; round < 10; round++) {
        if (rank == 1) {
            for (int k = 0; k < WINDOW; k++) {
                int tag = WINDOW - 1 - k;
                memset(bufs[tag], 0, BIG);
                OK(MPI_Irecv(bufs[tag], BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req[k]));
            }
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Waitall(WINDOW, req, st));
            for (int tag = 0; tag < WINDOW; tag++) {
                int len = 2048 + 512 * tag, count;
                CHECK(same(bufs[tag], len, round + tag));
                CHECK(st[WINDOW - 1 - tag].MPI_TAG == tag);
                MPI_Get_count(&st[WINDOW - 1 - tag], MPI_BYTE, &count);
                CHECK(count == len);
            }
        } else {
            OK(MPI_Barrier(MPI_COMM_WORLD));
            for (int tag = 0; tag < WINDOW; tag++) {
                int len = 2048 + 512 * tag;
                fill(bufs[tag], len, round + tag);
                OK(MPI_Isend(bufs[tag], len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req[tag]));
            }
            OK(MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE));
        }
    }

    /* 3. Wildcard receives, small and medium messages alternating: send order kept. */
    for (int round = 0; round < 20; round++) {
        if (rank == 1) {
            for (int k = 0; k < WINDOW; k++) {
                memset(bufs[k], 0, BIG);
                OK(MPI_Irecv(bufs[k], BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                             &req[k]));
            }
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Waitall(WINDOW, req, st));
            for (int k = 0; k < WINDOW; k++) {
                int len = window_size(k + round), count;
                MPI_Get_count(&st[k], MPI_BYTE, &count);
                CHECK(st[k].MPI_TAG == k && count == len && st[k].MPI_SOURCE == peer);
                CHECK(same(bufs[k], len, round * WINDOW + k));
            }
        } else {
            OK(MPI_Barrier(MPI_COMM_WORLD));
            for (int k = 0; k < WINDOW; k++) {
                int len = window_size(k + round);
                fill(bufs[k], len, round * WINDOW + k);
                OK(MPI_Isend(bufs[k], len, MPI_BYTE, peer, k, MPI_COMM_WORLD, &req[k]));
            }
            OK(MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE));
        }
    }

    /* 4. Synchronous sends into posted receives complete. */
    for (int it = 0; it < 20; it++) {
        int len = 1024 << (it % 7);
        if (rank == 1) {
            OK(MPI_Irecv(buf, BIG, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &req[0]));
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Wait(&req[0], &st[0]));
            CHECK(same(buf, len, it));
        } else {
            OK(MPI_Barrier(MPI_COMM_WORLD));
            fill(buf, len, it);
            OK(MPI_Ssend(buf, len, MPI_BYTE, peer, 5, MPI_COMM_WORLD));
        }
    }

    /* 5. A receive too small: truncated (MPI_ERR_TRUNCATE), the next message intact. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 1) {
        OK(MPI_Irecv(buf, 4096, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &req[0]));
        OK(MPI_Irecv(bufs[0], BIG, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &req[1]));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        int rc = MPI_Wait(&req[0], &st[0]), cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE);
        OK(MPI_Wait(&req[1], &st[1]));
        CHECK(same(bufs[0], 8192, 77));
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        fill(buf, 8192, 66);
        OK(MPI_Send(buf, 8192, MPI_BYTE, peer, 6, MPI_COMM_WORLD));
        fill(buf, 8192, 77);
        OK(MPI_Send(buf, 8192, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* 6. A non-contiguous receive (every other int) and a message before its receive. */
    {
        int n = 2048;
        MPI_Datatype every_other;
        OK(MPI_Type_vector(n, 1, 2, MPI_INT, &every_other));
        OK(MPI_Type_commit(&every_other));
        int *ints = (int *)bufs[1];
        if (rank == 1) {
            for (int i = 0; i < 2 * n; i++) ints[i] = -1;
            OK(MPI_Irecv(ints, 1, every_other, peer, 8, MPI_COMM_WORLD, &req[0]));
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
            for (int i = 0; i < 2 * n; i++) CHECK(ints[i] == (i % 2 ? -1 : i / 2));
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* the next message is sent now */
            OK(MPI_Barrier(MPI_COMM_WORLD)); /* and has arrived (or is on its way) */
            memset(buf, 0, BIG);
            OK(MPI_Recv(buf, BIG, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &st[0]));
            CHECK(same(buf, 16384, 99));
        } else {
            for (int i = 0; i < n; i++) ints[i] = i;
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Send(ints, n, MPI_INT, peer, 8, MPI_COMM_WORLD));
            OK(MPI_Barrier(MPI_COMM_WORLD));
            fill(buf, 16384, 99);
            OK(MPI_Send(buf, 16384, MPI_BYTE, peer, 9, MPI_COMM_WORLD));
            OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPI_Type_free(&every_other);
    }

    for (int i = 0; i < WINDOW; i++) free(bufs[i]);
    free(buf);
    if (rank == 0) printf("eager_land: all checks passed\n");
    MPI_Finalize();
    return 0;
}

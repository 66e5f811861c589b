/* Defects found by MPICH 4.0.2's own test suite (dirs pt2pt, datatype,
 * threads, coll): cancelling buffered sends (plain, persistent, to self),
 * the name of MPI_LONG_LONG_INT, a session's default thread level. */
#include "check.h"

static int rank, size;

/* One buffered send of n bytes with tag `tag` to `dest`, cancelled before anybody
 * receives it; `persistent` uses MPI_Bsend_init + MPI_Start. */
static void cancel_one(int dest, int n, int tag, int persistent) {
    char *buf = malloc(n), *bb;
    int bsize = n + MPI_BSEND_OVERHEAD, flag = 0;
    MPI_Request req;
    MPI_Status st;
    for (int i = 0; i < n; i++) buf[i] = (char)i;
    bb = malloc(bsize);
    OK(MPI_Buffer_attach(bb, bsize));
    if (persistent) {
        OK(MPI_Bsend_init(buf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &req));
        OK(MPI_Start(&req));
    } else {
        OK(MPI_Ibsend(buf, n, MPI_CHAR, dest, tag, MPI_COMM_WORLD, &req));
    }
    OK(MPI_Cancel(&req));
    OK(MPI_Wait(&req, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag);
    if (persistent) {
        /* The persistent request can start again, this time to be received. */
        CHECK(req != MPI_REQUEST_NULL);
        OK(MPI_Request_free(&req));
    }
    /* Detaching waits until the buffer is free: the cancelled message gave it back. */
    OK(MPI_Buffer_detach(&bb, &bsize));
    free(bb);
    free(buf);
}

static void bsend_cancel(void) {
    int sizes[] = {1, 100, 20000, 200000};
    int peer = size - 1;
    for (int k = 0; k < 4; k++) {
        int n = sizes[k], tag = 100 + k;
        for (int persistent = 0; persistent < 2; persistent++) {
            if (rank == 0) {
                cancel_one(peer, n, tag, persistent);
                /* A second message on the same tag: the receiver must get this one,
                 * not the cancelled one. */
                int marker = 1000 + k;
                OK(MPI_Send(&marker, 1, MPI_INT, peer, tag, MPI_COMM_WORLD));
                /* Only now may the receiver post its receive (an already posted
                 * receive would match the message on arrival: no cancel then). */
                OK(MPI_Send(&marker, 0, MPI_INT, peer, 99, MPI_COMM_WORLD));
            }
            if (rank == peer) {
                int got = -1, count = -1;
                MPI_Status st;
                char *big = malloc(n + 4);
                OK(MPI_Recv(&got, 0, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                OK(MPI_Recv(big, n + 4, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
                OK(MPI_Get_count(&st, MPI_BYTE, &count));
                CHECK(count == (int)sizeof(int));
                memcpy(&got, big, sizeof got);
                CHECK(got == 1000 + k);
                free(big);
            }
            OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    /* A buffered send that was received already is not cancelled. */
    if (size > 1) {
        if (rank == 0) {
            int x = 7, bsize = 64 + MPI_BSEND_OVERHEAD, flag = 1;
            char *bb = malloc(bsize);
            MPI_Request req;
            MPI_Status st;
            OK(MPI_Buffer_attach(bb, bsize));
            OK(MPI_Ibsend(&x, 1, MPI_INT, 1, 200, MPI_COMM_WORLD, &req));
            OK(MPI_Recv(&x, 0, MPI_INT, 1, 201, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            OK(MPI_Cancel(&req));
            OK(MPI_Wait(&req, &st));
            OK(MPI_Test_cancelled(&st, &flag));
            CHECK(!flag);
            OK(MPI_Buffer_detach(&bb, &bsize));
            free(bb);
        } else if (rank == 1) {
            int x = 0;
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == 7);
            OK(MPI_Send(&x, 0, MPI_INT, 0, 201, MPI_COMM_WORLD));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

static void long_long_name(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(MPI_LONG_LONG_INT, name, &len));
    CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0 && len == (int)strlen(name));
}

static void session_default_level(void) {
    MPI_Session s;
    MPI_Info info;
    char val[64];
    int flag = 0;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    OK(MPI_Session_get_info(s, &info));
    OK(MPI_Info_get(info, "thread_level", sizeof val - 1, val, &flag));
    CHECK(flag && strcmp(val, "MPI_THREAD_MULTIPLE") == 0);
    OK(MPI_Info_free(&info));
    OK(MPI_Session_finalize(&s));
}

int main(int argc, char **argv) {
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bsend_cancel();
    long_long_name();
    session_default_level();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("mts_core ok\n");
    MPI_Finalize();
    return 0;
}

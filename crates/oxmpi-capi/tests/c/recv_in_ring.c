/* MPI_Recv of messages still in the shared-memory ring when the receive is
 * posted (rank 0 streams blocking sends; rank 1 lags behind, so most receives
 * find their message at the ring's head and complete in the post's progress
 * step): data, status (source, tag, count) of each, wildcards, a message larger
 * than the buffer failing with MPI_ERR_TRUNCATE and still naming what it
 * matched, a synchronous send, and nothing left over. 2 ranks. */
#include "check.h"

#define N 300

static void fill(char *b, int len, int i) {
    for (int k = 0; k < len; k++) b[k] = (char)(i * 31 + k);
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char b[64];
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            int len = i % 41; /* 0-40 B: one ring slot with the compact header */
            fill(b, len, i);
            OK(MPI_Send(b, len, MPI_CHAR, 1, i % 5, MPI_COMM_WORLD));
        }
        fill(b, 24, N);
        OK(MPI_Send(b, 24, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
        fill(b, 8, N + 1);
        OK(MPI_Ssend(b, 8, MPI_CHAR, 1, 8, MPI_COMM_WORLD));
    } else {
        MPI_Status s;
        int count;
        for (int i = 0; i < N; i++) {
            int len = i % 41;
            char want[64];
            fill(want, len, i);
            memset(b, 0x55, sizeof b);
            int src = i % 2 ? MPI_ANY_SOURCE : 0;
            int tag = i % 3 ? i % 5 : MPI_ANY_TAG;
            OK(MPI_Recv(b, 64, MPI_CHAR, src, tag, MPI_COMM_WORLD, &s));
            CHECK(memcmp(b, want, len) == 0 && b[len] == 0x55);
            CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == i % 5);
            OK(MPI_Get_count(&s, MPI_CHAR, &count));
            CHECK(count == len);
        }
        /* 24 bytes into 16: truncated, the status names the message. */
        int rc = MPI_Recv(b, 16, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
        int cls;
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE);
        CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == 7);
        char want[8];
        fill(want, 8, N + 1);
        OK(MPI_Recv(b, 8, MPI_CHAR, 0, 8, MPI_COMM_WORLD, &s));
        CHECK(memcmp(b, want, 8) == 0 && s.MPI_TAG == 8);
        int flag = 1;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("recv_in_ring: all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}

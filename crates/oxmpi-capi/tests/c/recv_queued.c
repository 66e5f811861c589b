/* MPI_Recv of messages already in the receiver's unexpected queue (the sender
 * sent them all before a barrier): data, status (source, tag, count), FIFO order
 * among messages that match, a wildcard receive taking the oldest one, a message
 * larger than the buffer failing with MPI_ERR_TRUNCATE and still reporting
 * what it matched, a multi-cell eager message, and a zero-byte one. 2 ranks. */
#include "check.h"

#define N 40
#define BIG 3000

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    static char big[BIG];
    if (rank == 0) {
        for (int i = 0; i < N; i++) {
            long v[2] = {i, 1000 + i};
            OK(MPI_Send(v, 2, MPI_LONG, 1, i % 3, MPI_COMM_WORLD));
        }
        char t[16];
        memset(t, 'x', sizeof t);
        OK(MPI_Send(t, 16, MPI_CHAR, 1, 50, MPI_COMM_WORLD));
        for (int i = 0; i < BIG; i++) big[i] = (char)(i * 7);
        OK(MPI_Send(big, BIG, MPI_CHAR, 1, 51, MPI_COMM_WORLD));
        OK(MPI_Send(NULL, 0, MPI_CHAR, 1, 52, MPI_COMM_WORLD));
        OK(MPI_Send(t, 4, MPI_CHAR, 1, 53, MPI_COMM_WORLD));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        MPI_Status s;
        int count;
        /* Tag 2 first: messages of other tags are skipped, those of tag 2 come in order. */
        for (int i = 2; i < N; i += 3) {
            long v[2] = {-1, -1};
            OK(MPI_Recv(v, 2, MPI_LONG, 0, 2, MPI_COMM_WORLD, &s));
            CHECK(v[0] == i && v[1] == 1000 + i);
            CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == 2);
            OK(MPI_Get_count(&s, MPI_LONG, &count));
            CHECK(count == 2);
        }
        /* The rest by wildcards: the oldest first, a buffer larger than the message. */
        for (int i = 0; i < N; i++) {
            if (i % 3 == 2) continue;
            long v[4] = {-1, -1, -1, -1};
            OK(MPI_Recv(v, 4, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
            CHECK(v[0] == i && v[1] == 1000 + i && v[2] == -1);
            CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == i % 3);
            OK(MPI_Get_count(&s, MPI_LONG, &count));
            CHECK(count == 2);
        }
        /* 16 bytes into 8: truncated, the status names the message. */
        char t[16];
        memset(t, 0, sizeof t);
        int rc = MPI_Recv(t, 8, MPI_CHAR, 0, 50, MPI_COMM_WORLD, &s);
        int cls;
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE);
        CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == 50);
        char rbig[BIG];
        OK(MPI_Recv(rbig, BIG, MPI_CHAR, 0, 51, MPI_COMM_WORLD, &s));
        for (int i = 0; i < BIG; i++) CHECK(rbig[i] == (char)(i * 7));
        OK(MPI_Get_count(&s, MPI_CHAR, &count));
        CHECK(count == BIG);
        OK(MPI_Recv(NULL, 0, MPI_CHAR, 0, 52, MPI_COMM_WORLD, &s));
        OK(MPI_Get_count(&s, MPI_CHAR, &count));
        CHECK(count == 0 && s.MPI_TAG == 52);
        memset(t, 0, sizeof t);
        OK(MPI_Recv(t, 16, MPI_CHAR, 0, 53, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(t[0] == 'x' && t[3] == 'x' && t[4] == 0);
        /* Nothing left over. */
        int flag = 1;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("recv_queued: all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}

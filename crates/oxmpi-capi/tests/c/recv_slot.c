/* MPI_Recv posted before its message arrives, with no other receive posted: it
 * waits in the engine's blocking slot (bench/PROFILE.md, recv37). Rank 1
 * receives; before each receive it tells the sender(s) to go with a 0-byte
 * message, so the receive is nearly always posted first. Checked: data, status
 * and count with source/tag wildcards (MPI_ANY_SOURCE among two senders),
 * truncation (MPI_ERR_TRUNCATE naming the message), a synchronous send, messages
 * longer than one packet and than the eager limit (fragments, rendezvous),
 * FIFO order with messages that arrive while the slot waits for another tag and
 * with MPI_Irecv's posted before and after, a type-signature mismatch when
 * OXMPI_CHECK_SIGNATURES=1, and nothing left over. 3 ranks. */
#include "check.h"

#define ROUNDS 200
#define BIG (1 << 20)

static void fill(char *b, int len, int seed) {
    for (int k = 0; k < len; k++) b[k] = (char)(seed * 31 + k * 7 + 1);
}

static int same(const char *b, int len, int seed) {
    for (int k = 0; k < len; k++)
        if (b[k] != (char)(seed * 31 + k * 7 + 1)) return 0;
    return 1;
}

/* Receiver: let `to` send its next message. */
static void go(int to) { OK(MPI_Send(NULL, 0, MPI_CHAR, to, 99, MPI_COMM_WORLD)); }

/* Sender: wait until rank 1 has (nearly certainly) posted its receive. */
static void wait_go(void) {
    OK(MPI_Recv(NULL, 0, MPI_CHAR, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 3);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    const char *sig_env = getenv("OXMPI_CHECK_SIGNATURES");
    int sigs = sig_env && !strcmp(sig_env, "1");
    char *b = malloc(BIG + 64);
    CHECK(b);
    MPI_Status s;
    int count;

    /* 1. Wildcards: each round one sender (alternating) sends 0-40 B. */
    for (int i = 0; i < ROUNDS; i++) {
        int from = i % 2 ? 2 : 0, len = i % 41;
        if (rank == 1) {
            go(from);
            memset(b, 0x55, 64);
            int src = i % 3 ? MPI_ANY_SOURCE : from;
            int tag = i % 4 ? MPI_ANY_TAG : i % 5;
            OK(MPI_Recv(b, 64, MPI_CHAR, src, tag, MPI_COMM_WORLD, &s));
            CHECK(same(b, len, i) && b[len] == 0x55);
            CHECK(s.MPI_SOURCE == from && s.MPI_TAG == i % 5);
            OK(MPI_Get_count(&s, MPI_CHAR, &count));
            CHECK(count == len);
        } else if (rank == from) {
            wait_go();
            fill(b, len, i);
            OK(MPI_Send(b, len, MPI_CHAR, 1, i % 5, MPI_COMM_WORLD));
        }
    }

    /* 2. MPI_ANY_SOURCE with both senders sending at once: one of each. */
    for (int i = 0; i < 20; i++) {
        if (rank == 1) {
            go(0);
            go(2);
            int seen = 0;
            for (int k = 0; k < 2; k++) {
                OK(MPI_Recv(b, 64, MPI_CHAR, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &s));
                CHECK(s.MPI_SOURCE == 0 || s.MPI_SOURCE == 2);
                CHECK(same(b, 8, 1000 + s.MPI_SOURCE));
                seen |= 1 << s.MPI_SOURCE;
            }
            CHECK(seen == 5);
        } else {
            wait_go();
            fill(b, 8, 1000 + rank);
            OK(MPI_Send(b, 8, MPI_CHAR, 1, 3, MPI_COMM_WORLD));
        }
    }

    /* 3. Truncation: 24 B into 16, the status names the message; then the
     * slot is free again for a synchronous send. */
    if (rank == 1) {
        go(0);
        memset(b, 0x55, 64);
        int rc = MPI_Recv(b, 16, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
        int cls;
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_TRUNCATE);
        CHECK(s.MPI_SOURCE == 0 && s.MPI_TAG == 7);
        CHECK(b[16] == 0x55);
        go(0);
        OK(MPI_Recv(b, 8, MPI_CHAR, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &s));
        CHECK(same(b, 8, 8) && s.MPI_SOURCE == 0 && s.MPI_TAG == 8);
    } else if (rank == 0) {
        wait_go();
        fill(b, 24, 7);
        OK(MPI_Send(b, 24, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
        wait_go();
        fill(b, 8, 8);
        OK(MPI_Ssend(b, 8, MPI_CHAR, 1, 8, MPI_COMM_WORLD));
    }

    /* 4. Longer messages: more than one packet, and past the eager limit. */
    int lens[] = {100, 1000, 4096, 20000, 70000, BIG};
    for (int i = 0; i < 6; i++) {
        int len = lens[i];
        if (rank == 1) {
            go(2);
            b[len] = 0x55;
            OK(MPI_Recv(b, len, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
            CHECK(same(b, len, 50 + i) && b[len] == 0x55);
            OK(MPI_Get_count(&s, MPI_CHAR, &count));
            CHECK(count == len && s.MPI_SOURCE == 2 && s.MPI_TAG == i);
            /* The same sizes synchronously, and one that is truncated. */
            go(2);
            OK(MPI_Recv(b, len, MPI_CHAR, 2, i, MPI_COMM_WORLD, &s));
            CHECK(same(b, len, 60 + i));
            go(2);
            int rc = MPI_Recv(b, len - 1, MPI_CHAR, 2, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
            int cls;
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_TRUNCATE && s.MPI_SOURCE == 2 && s.MPI_TAG == i);
        } else if (rank == 2) {
            wait_go();
            fill(b, len, 50 + i);
            OK(MPI_Send(b, len, MPI_CHAR, 1, i, MPI_COMM_WORLD));
            wait_go();
            fill(b, len, 60 + i);
            OK(MPI_Ssend(b, len, MPI_CHAR, 1, i, MPI_COMM_WORLD));
            wait_go();
            fill(b, len, 70 + i);
            OK(MPI_Send(b, len, MPI_CHAR, 1, i, MPI_COMM_WORLD));
        }
    }

    /* 5. Order. Rank 0 sends tag 5 (x), tag 5 (y), tag 6 (z) while rank 1's
     * receive for tag 6 waits: x and y queue as unexpected and keep their order
     * for the MPI_Irecv's posted after it. Then an MPI_Irecv posted before a
     * blocking receive on the same tag gets the first message. */
    if (rank == 1) {
        go(0);
        OK(MPI_Recv(b, 8, MPI_CHAR, 0, 6, MPI_COMM_WORLD, &s));
        CHECK(same(b, 8, 302));
        char x[8], y[8];
        MPI_Request r[2];
        OK(MPI_Irecv(x, 8, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Irecv(y, 8, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
        OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(same(x, 8, 300) && same(y, 8, 301));
        for (int i = 0; i < 20; i++) {
            char first[8];
            MPI_Request ri;
            OK(MPI_Irecv(first, 8, MPI_CHAR, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &ri));
            go(0);
            OK(MPI_Recv(b, 8, MPI_CHAR, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
            CHECK(same(b, 8, 401 + 2 * i) && s.MPI_TAG == 4);
            OK(MPI_Wait(&ri, &s));
            CHECK(same(first, 8, 400 + 2 * i));
            /* And an MPI_Irecv posted after a blocking receive returned. */
            go(0);
            OK(MPI_Recv(b, 8, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &s));
            OK(MPI_Irecv(first, 8, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &ri));
            OK(MPI_Wait(&ri, &s));
            CHECK(same(b, 8, 500 + 2 * i) && same(first, 8, 501 + 2 * i));
        }
    } else if (rank == 0) {
        wait_go();
        for (int k = 0; k < 3; k++) {
            fill(b, 8, 300 + k);
            OK(MPI_Send(b, 8, MPI_CHAR, 1, k < 2 ? 5 : 6, MPI_COMM_WORLD));
        }
        for (int i = 0; i < 20; i++) {
            wait_go();
            for (int k = 0; k < 2; k++) {
                fill(b, 8, 400 + 2 * i + k);
                OK(MPI_Send(b, 8, MPI_CHAR, 1, 4, MPI_COMM_WORLD));
            }
            wait_go();
            for (int k = 0; k < 2; k++) {
                fill(b, 8, 500 + 2 * i + k);
                OK(MPI_Send(b, 8, MPI_CHAR, 1, 4, MPI_COMM_WORLD));
            }
        }
    }

    /* 6. A signature mismatch (a double received as two ints) is MPI_ERR_TYPE
     * with checking on, delivered without. */
    if (rank == 1) {
        go(0);
        int two[2] = {-1, -1};
        int rc = MPI_Recv(two, 2, MPI_INT, 0, 9, MPI_COMM_WORLD, &s);
        int cls;
        OK(MPI_Error_class(rc, &cls));
        if (sigs)
            CHECK(cls == MPI_ERR_TYPE && two[0] == -1 && two[1] == -1);
        else
            CHECK(cls == MPI_SUCCESS);
    } else if (rank == 0) {
        wait_go();
        double d = 2.5;
        OK(MPI_Send(&d, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD));
    }

    if (rank == 1) {
        int flag = 1;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("recv_slot: all checks passed\n");
    free(b);
    OK(MPI_Finalize());
    return 0;
}

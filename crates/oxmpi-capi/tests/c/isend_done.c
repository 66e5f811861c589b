/* Small standard-mode MPI_Isend calls complete inside the call (written whole
 * into the peer's ring), and get the engine's one complete request instead of
 * a request entry (bench/PROFILE.md, rrate36). Every consumer must take such a
 * handle as a completed send: each wait and test family over many of them
 * (alone, mixed with receives, with null handles and a large send among them),
 * MPI_Request_free, MPI_Request_get_status, MPI_Cancel (the cancel may lose to
 * the completed send: then the message is delivered, else it is not), the
 * Fortran handle round trip, on MPI_COMM_WORLD and on a duplicate (table
 * handles). Any number of ranks >= 1 (a ring; one rank sends to itself). */
#include "check.h"

enum { W = 64, FAMILIES = 8, BIG = 1 << 20 };

static int rank, size, right, left;

/* Completes the n requests in rq with family f; every one must end MPI_REQUEST_NULL
 * and none may report cancelled. */
static void complete_with(int f, int n, MPI_Request *rq)
{
    MPI_Status st[2 * W + 4];
    int flag = 0, idx, out, ind[2 * W + 4], left_over = n;
    for (int i = 0; i < n; i++) left_over -= rq[i] == MPI_REQUEST_NULL;
    switch (f) {
    case 0:
        for (int i = 0; i < n; i++) OK(MPI_Wait(&rq[i], &st[i]));
        break;
    case 1:
        OK(MPI_Waitall(n, rq, st));
        break;
    case 2:
        while (left_over > 0) {
            OK(MPI_Waitany(n, rq, &idx, &st[0]));
            CHECK(idx != MPI_UNDEFINED && rq[idx] == MPI_REQUEST_NULL);
            int c;
            OK(MPI_Test_cancelled(&st[0], &c)); CHECK(!c);
            left_over--;
        }
        OK(MPI_Waitany(n, rq, &idx, MPI_STATUS_IGNORE)); CHECK(idx == MPI_UNDEFINED);
        return;
    case 3:
        while (left_over > 0) {
            OK(MPI_Waitsome(n, rq, &out, ind, st));
            CHECK(out >= 1 && out <= left_over);
            for (int k = 0; k < out; k++) CHECK(rq[ind[k]] == MPI_REQUEST_NULL);
            left_over -= out;
        }
        OK(MPI_Waitsome(n, rq, &out, ind, st)); CHECK(out == MPI_UNDEFINED);
        return;
    case 4:
        for (int i = 0; i < n; i++) {
            do OK(MPI_Test(&rq[i], &flag, &st[i])); while (!flag);
        }
        break;
    case 5:
        do OK(MPI_Testall(n, rq, &flag, st)); while (!flag);
        break;
    case 6:
        while (left_over > 0) {
            OK(MPI_Testany(n, rq, &idx, &flag, &st[0]));
            if (flag) {
                CHECK(idx != MPI_UNDEFINED && rq[idx] == MPI_REQUEST_NULL);
                left_over--;
            }
        }
        OK(MPI_Testany(n, rq, &idx, &flag, MPI_STATUS_IGNORE));
        CHECK(flag && idx == MPI_UNDEFINED);
        return;
    case 7:
        while (left_over > 0) {
            OK(MPI_Testsome(n, rq, &out, ind, st));
            for (int k = 0; k < out; k++) CHECK(rq[ind[k]] == MPI_REQUEST_NULL);
            left_over -= out;
        }
        OK(MPI_Testsome(n, rq, &out, ind, st)); CHECK(out == MPI_UNDEFINED);
        return;
    }
    for (int i = 0; i < n; i++) {
        int c;
        CHECK(rq[i] == MPI_REQUEST_NULL);
        OK(MPI_Test_cancelled(&st[i], &c)); CHECK(!c);
    }
}

/* A window of W small sends to the right (tags base..base+W-1), plus, on odd
 * rounds, one large send, completed by family f together with the receives of
 * the left neighbour's window (posted first on even rounds, after on odd ones). */
static void window(MPI_Comm c, int f, int round)
{
    static int big_out[BIG / 4], big_in[BIG / 4];
    int sbuf[W], rbuf[W];
    MPI_Request rq[2 * W + 4];
    int n = 0, base = 1000 + 100 * f;
    int with_big = round % 2, recv_first = round % 2 == 0;
    for (int i = 0; i < W; i++) { sbuf[i] = rank * 100000 + round * 1000 + i; rbuf[i] = -1; }
    if (recv_first)
        for (int i = 0; i < W; i++) OK(MPI_Irecv(&rbuf[i], 1, MPI_INT, left, base + i, c, &rq[n++]));
    rq[n++] = MPI_REQUEST_NULL;
    for (int i = 0; i < W; i++) {
        OK(MPI_Isend(&sbuf[i], 1, MPI_INT, right, base + i, c, &rq[n]));
        CHECK(rq[n] != MPI_REQUEST_NULL);
        n++;
    }
    /* The send buffers are the caller's again once the sends completed: the
     * ones that went whole into the ring already did. Overwriting them after
     * completion below must not change what arrives. */
    if (with_big) {
        for (int i = 0; i < BIG / 4; i++) { big_out[i] = rank + i; big_in[i] = -1; }
        OK(MPI_Irecv(big_in, BIG / 4, MPI_INT, left, 99, c, &rq[n++]));
        OK(MPI_Isend(big_out, BIG / 4, MPI_INT, right, 99, c, &rq[n++]));
    }
    if (!recv_first)
        for (int i = 0; i < W; i++) OK(MPI_Irecv(&rbuf[i], 1, MPI_INT, left, base + i, c, &rq[n++]));
    complete_with(f, n, rq);
    for (int i = 0; i < W; i++) sbuf[i] = -7;
    for (int i = 0; i < W; i++) CHECK(rbuf[i] == left * 100000 + round * 1000 + i);
    if (with_big)
        for (int i = 0; i < BIG / 4; i += 4099) CHECK(big_in[i] == left + i);
}

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));

    /* 1. Every family, windows on WORLD (direct handles) and on the dup (table
     * handles), receives posted before and after the sends. */
    for (int round = 0; round < 4; round++)
        for (int f = 0; f < FAMILIES; f++) {
            window(MPI_COMM_WORLD, f, round);
            window(dup, f, round);
        }

    MPI_Comm comms[2] = {MPI_COMM_WORLD, dup};
    for (int k = 0; k < 2; k++) {
        MPI_Comm c = comms[k];
        int x = 11 + rank, got = -1, flag = 0, cancelled = 1, c2 = 1;
        MPI_Request rq;
        MPI_Status st;

        /* 2. Cancel: either the cancel wins and nothing arrives, or the send
         * completed first (the small one always did on one host) and its
         * message is delivered; the receiver learns which from a second message. */
        OK(MPI_Isend(&x, 1, MPI_INT, right, 20, c, &rq));
        OK(MPI_Cancel(&rq));
        OK(MPI_Wait(&rq, &st));
        CHECK(rq == MPI_REQUEST_NULL);
        OK(MPI_Test_cancelled(&st, &cancelled));
        OK(MPI_Send(&cancelled, 1, MPI_INT, right, 21, c));
        OK(MPI_Recv(&c2, 1, MPI_INT, left, 21, c, MPI_STATUS_IGNORE));
        if (!c2) {
            OK(MPI_Recv(&got, 1, MPI_INT, left, 20, c, MPI_STATUS_IGNORE));
            CHECK(got == 11 + left);
        }
        OK(MPI_Barrier(c));
        OK(MPI_Iprobe(left, 20, c, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag);

        /* 3. Request_free: the handle becomes null, the message still arrives. */
        OK(MPI_Isend(&x, 1, MPI_INT, right, 22, c, &rq));
        OK(MPI_Request_free(&rq));
        CHECK(rq == MPI_REQUEST_NULL);
        OK(MPI_Recv(&got, 1, MPI_INT, left, 22, c, &st));
        CHECK(got == 11 + left && st.MPI_SOURCE == left && st.MPI_TAG == 22);

        /* 4. Request_get_status: complete, the handle untouched, then waited. */
        OK(MPI_Isend(&x, 1, MPI_INT, right, 23, c, &rq));
        flag = 0;
        double t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < 30) OK(MPI_Request_get_status(rq, &flag, &st));
        CHECK(flag && rq != MPI_REQUEST_NULL);
        OK(MPI_Test_cancelled(&st, &cancelled)); CHECK(!cancelled);
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(rq == MPI_REQUEST_NULL);
        OK(MPI_Recv(&got, 1, MPI_INT, left, 23, c, MPI_STATUS_IGNORE));
        CHECK(got == 11 + left);

        /* 5. The Fortran round trip of such a handle, then a wait on the result. */
        OK(MPI_Isend(&x, 1, MPI_INT, right, 24, c, &rq));
        MPI_Fint fh = MPI_Request_c2f(rq);
        MPI_Request back = MPI_Request_f2c(fh);
        CHECK(back == rq && back != MPI_REQUEST_NULL);
        OK(MPI_Wait(&back, MPI_STATUS_IGNORE));
        CHECK(back == MPI_REQUEST_NULL);
        OK(MPI_Recv(&got, 1, MPI_INT, left, 24, c, MPI_STATUS_IGNORE));
        CHECK(got == 11 + left);
    }

    OK(MPI_Comm_free(&dup));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("isend_done: all checks passed\n");
    MPI_Finalize();
    return 0;
}

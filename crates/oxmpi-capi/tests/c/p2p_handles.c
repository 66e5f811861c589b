/* Request handles of the point-to-point fast path (MPI_Isend/MPI_Irecv on
 * MPI_COMM_WORLD and MPI_COMM_SELF with predefined types, whose handles are the
 * engine's own requests) on every completion path, mixed with table handles
 * (a duplicated communicator, a derived type, persistent requests), through
 * Fortran integers, freed, cancelled, stale. Any number of ranks. */
#include "check.h"

static int cls(int err) { int c; MPI_Error_class(err, &c); return c; }

int main(int argc, char **argv)
{
    OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));

    /* 1. Windows of sends and receives on WORLD, SELF and the dup, completed in one
     * MPI_Waitall over a mixed array; contents and statuses checked. */
    enum { W = 40 };
    for (int round = 0; round < 3; round++) {
        int sbuf[W][2], rbuf[W][2], selfbuf[2] = {0, 0}, selfout[2] = {rank, -rank};
        MPI_Request rq[2 * W + 2];
        MPI_Status st[2 * W + 2];
        int n = 0;
        for (int i = 0; i < W; i++) {
            rbuf[i][0] = rbuf[i][1] = -1;
            MPI_Comm c = i % 3 == 2 ? dup : MPI_COMM_WORLD;
            if (i % 5 == 4)
                OK(MPI_Irecv(rbuf[i], 1, pair, left, i, c, &rq[n++]));
            else
                OK(MPI_Irecv(rbuf[i], 2, MPI_INT, left, i, c, &rq[n++]));
        }
        for (int i = 0; i < W; i++) {
            sbuf[i][0] = rank * 1000 + i;
            sbuf[i][1] = round;
            MPI_Comm c = i % 3 == 2 ? dup : MPI_COMM_WORLD;
            OK(MPI_Isend(sbuf[i], 2, MPI_INT, right, i, c, &rq[n++]));
        }
        OK(MPI_Irecv(selfbuf, 2, MPI_INT, 0, 77, MPI_COMM_SELF, &rq[n++]));
        OK(MPI_Isend(selfout, 2, MPI_INT, 0, 77, MPI_COMM_SELF, &rq[n++]));
        /* Direct handles are never one of the ABI's small constants. */
        for (int i = 0; i < n; i++)
            CHECK(rq[i] != MPI_REQUEST_NULL && (uintptr_t)rq[i] >= 4096);
        if (round == 1) {
            /* Through Fortran integers and back: the same handle. */
            for (int i = 0; i < n; i++) {
                MPI_Fint f = MPI_Request_c2f(rq[i]);
                MPI_Request back = MPI_Request_f2c(f);
                CHECK(back == rq[i]);
            }
        }
        if (round == 2) {
            /* Waitany and Waitsome on the mixed array first. */
            int idx, out, ind[2 * W + 2];
            OK(MPI_Waitany(n, rq, &idx, &st[0]));
            CHECK(idx >= 0 && idx < n && rq[idx] == MPI_REQUEST_NULL);
            OK(MPI_Waitsome(n, rq, &out, ind, st));
            CHECK(out >= 1);
            for (int k = 0; k < out; k++)
                CHECK(rq[ind[k]] == MPI_REQUEST_NULL);
        }
        OK(MPI_Waitall(n, rq, st));
        for (int i = 0; i < n; i++)
            CHECK(rq[i] == MPI_REQUEST_NULL);
        for (int i = 0; i < W; i++) {
            CHECK(rbuf[i][0] == left * 1000 + i && rbuf[i][1] == round);
        }
        CHECK(selfbuf[0] == rank && selfbuf[1] == -rank);
        if (round == 0) {
            for (int i = 0; i < W; i++) {
                int count;
                CHECK(st[i].MPI_SOURCE == left && st[i].MPI_TAG == i);
                OK(MPI_Get_count(&st[i], MPI_INT, &count));
                CHECK(count == 2);
            }
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }

    /* 2. MPI_Test / MPI_Testall / MPI_Request_get_status until done. */
    {
        int v = rank, got = -1, flag = 0;
        MPI_Request r[2];
        OK(MPI_Irecv(&got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Isend(&v, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &r[1]));
        MPI_Status s;
        do {
            OK(MPI_Request_get_status(r[0], &flag, &s));
        } while (!flag);
        CHECK(r[0] != MPI_REQUEST_NULL);
        CHECK(s.MPI_SOURCE == left && s.MPI_TAG == 9);
        flag = 0;
        while (!flag)
            OK(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
        CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && got == left);
        OK(MPI_Isend(&v, 1, MPI_INT, rank, 10, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Recv(&got, 1, MPI_INT, rank, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        flag = 0;
        while (!flag)
            OK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
        CHECK(r[0] == MPI_REQUEST_NULL);
    }

    /* 2b. MPI_Testall with statuses: while a receive waits for its message, flag 0
     * and every handle left as it was (the send already complete included); once
     * all are done, each status filled, the NULL entry's empty, handles nulled. */
    {
        int v = rank + 100, got = -1, flag = 1, go = 0;
        MPI_Request r[3];
        MPI_Status st[3];
        OK(MPI_Irecv(&got, 1, MPI_INT, rank, 15, MPI_COMM_WORLD, &r[0]));
        r[1] = MPI_REQUEST_NULL;
        OK(MPI_Isend(&v, 1, MPI_INT, right, 16, MPI_COMM_WORLD, &r[2]));
        MPI_Request keep0 = r[0], keep2 = r[2];
        OK(MPI_Testall(3, r, &flag, st));
        CHECK(flag == 0 && r[0] == keep0 && r[1] == MPI_REQUEST_NULL && r[2] == keep2);
        OK(MPI_Recv(&go, 1, MPI_INT, left, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(go == left + 100);
        OK(MPI_Send(&v, 1, MPI_INT, rank, 15, MPI_COMM_WORLD));
        flag = 0;
        while (!flag)
            OK(MPI_Testall(3, r, &flag, st));
        CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL);
        CHECK(got == rank + 100 && st[0].MPI_SOURCE == rank && st[0].MPI_TAG == 15);
        CHECK(st[1].MPI_SOURCE == MPI_ANY_SOURCE && st[1].MPI_TAG == MPI_ANY_TAG);
        int count = -1;
        OK(MPI_Get_count(&st[0], MPI_INT, &count));
        CHECK(count == 1);
        /* An empty array: all (none) complete. */
        flag = 0;
        OK(MPI_Testall(0, r, &flag, MPI_STATUSES_IGNORE));
        CHECK(flag == 1);
    }

    /* 3. Stale and misused handles: MPI_ERR_REQUEST, alone and in an array. */
    {
        int x = 1, y = 0;
        MPI_Request rq, stale, arr[2];
        OK(MPI_Isend(&x, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &rq));
        stale = rq;
        OK(MPI_Recv(&y, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(cls(MPI_Wait(&stale, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
        CHECK(cls(MPI_Request_free(&stale)) == MPI_ERR_REQUEST);
        CHECK(cls(MPI_Cancel(&stale)) == MPI_ERR_REQUEST);
        OK(MPI_Irecv(&y, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &arr[0]));
        arr[1] = stale;
        CHECK(cls(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE)) == MPI_ERR_REQUEST);
        /* A non-persistent request cannot be started. */
        CHECK(cls(MPI_Start(&arr[0])) == MPI_ERR_REQUEST);
        /* Cancel a pending receive: completes as cancelled. */
        MPI_Status s;
        int cancelled = 0;
        OK(MPI_Cancel(&arr[0]));
        OK(MPI_Wait(&arr[0], &s));
        OK(MPI_Test_cancelled(&s, &cancelled));
        CHECK(cancelled && arr[0] == MPI_REQUEST_NULL);
        /* A freed send still delivers its message. */
        OK(MPI_Isend(&x, 1, MPI_INT, right, 13, MPI_COMM_WORLD, &rq));
        OK(MPI_Request_free(&rq));
        CHECK(rq == MPI_REQUEST_NULL);
        y = 0;
        OK(MPI_Recv(&y, 1, MPI_INT, left, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(y == 1);
        /* A Fortran integer that names no live request gives no valid handle. */
        OK(MPI_Isend(&x, 1, MPI_INT, rank, 14, MPI_COMM_WORLD, &rq));
        MPI_Fint f = MPI_Request_c2f(rq);
        OK(MPI_Recv(&y, 1, MPI_INT, rank, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_Request gone = MPI_Request_f2c(f);
        CHECK(gone != MPI_REQUEST_NULL);
        CHECK(cls(MPI_Wait(&gone, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
    }

    OK(MPI_Type_free(&pair));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_handles: all checks passed\n");
    MPI_Finalize();
    return 0;
}

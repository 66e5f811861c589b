/* MPI_Waitany over [receive, send] twice, the receive's status read from the
 * second call (as MPICH's irsendf does): a send that finished when the first
 * call began is returned by it, before a receive that the call's own progress
 * completes. Rank 0 lets its partner answer before it waits, so without that
 * order the receive would overtake the send. Also checks the statuses
 * Waitany gives for each kind. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void fail(const char *what, int it, int v) {
    fprintf(stderr, "waitany_order: iteration %d: %s (%d)\n", it, what, v);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    float sb[2000], rb[2000];
    for (int i = 0; i < 2000; i++) sb[i] = (float)i;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int it = 0; it < 200 && size > 1; it++) {
        MPI_Request rq[2];
        MPI_Status st;
        int idx;
        if (rank == 0) {
            MPI_Irecv(rb, 2000, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
            MPI_Sendrecv(NULL, 0, MPI_INT, next, 0, NULL, 0, MPI_INT, next, 0, dup, MPI_STATUS_IGNORE);
            MPI_Irsend(sb, 666, MPI_FLOAT, next, 2456, MPI_COMM_WORLD, &rq[1]);
            /* Give the partner time to answer: its message then waits in this
             * rank's queue for the first Waitany's progress step. */
            usleep(2000);
            MPI_Waitany(2, rq, &idx, &st);
            if (idx != 1) fail("first MPI_Waitany did not return the finished send", it, idx);
            MPI_Waitany(2, rq, &idx, &st);
            if (idx != 0) fail("second MPI_Waitany did not return the receive", it, idx);
            if (st.MPI_SOURCE != next) fail("receive status: wrong MPI_SOURCE", it, st.MPI_SOURCE);
            if (st.MPI_TAG != 2456) fail("receive status: wrong MPI_TAG", it, st.MPI_TAG);
            int count;
            MPI_Get_count(&st, MPI_FLOAT, &count);
            if (count != 666) fail("receive status: wrong count", it, count);
            for (int i = 0; i < 666; i++)
                if (rb[i] != (float)i) fail("wrong data at index", it, i);
            MPI_Waitany(2, rq, &idx, &st);
            if (idx != MPI_UNDEFINED) fail("third MPI_Waitany on null requests: index not MPI_UNDEFINED", it, idx);
        } else if (prev == 0) {
            MPI_Irecv(rb, 2000, MPI_FLOAT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
            MPI_Sendrecv(NULL, 0, MPI_INT, prev, 0, NULL, 0, MPI_INT, prev, 0, dup, MPI_STATUS_IGNORE);
            MPI_Wait(&rq[0], &st);
            MPI_Rsend(rb, 666, MPI_FLOAT, prev, 2456, MPI_COMM_WORLD);
        }
    }
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("waitany_order: all checks passed\n");
    MPI_Finalize();
    return 0;
}

/* Partitioned operations match in the order of their initialization calls
 * (MPI-4.0 section 4.2), whatever order they are started in: rank 0 makes three
 * partitioned sends with one tag and starts them 2, 0, 1; the last rank makes the
 * three receives and starts them 0, 1, 2 (then, in a second round, the other way
 * round); each receive must get the data of the send initialized in the same
 * position. Then only the third pair of a fresh set is started (the first two never
 * are): it still meets its own partner. Status carries the user's tag. Last,
 * MPI_Pready does not wait for the receiver: the sender marks its partition ready
 * and then sends a zero-byte notice (count 0 of MPI_DATATYPE_NULL, which an empty
 * message may name) that the receiver waits for before it starts its receive. */
#include "check.h"

enum { P = 4, C = 8, T = P * C };
static int bufs[3][T];

static void fill(int *b, int v) {
    for (int i = 0; i < T; i++) b[i] = v;
}

static void send_in(int order[3], MPI_Request *r) {
    for (int k = 0; k < 3; k++) {
        int i = order[k];
        OK(MPI_Start(&r[i]));
        fill(bufs[i], 100 * (i + 1));
        OK(MPI_Pready_range(0, P - 1, r[i]));
    }
    OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
}

static void recv_in(int order[3], MPI_Request *r, int tag) {
    for (int i = 0; i < 3; i++) fill(bufs[i], -1);
    for (int k = 0; k < 3; k++) OK(MPI_Start(&r[order[k]]));
    MPI_Status st[3];
    OK(MPI_Waitall(3, r, st));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < T; j++) CHECK(bufs[i][j] == 100 * (i + 1));
        CHECK(st[i].MPI_SOURCE == 0 && st[i].MPI_TAG == tag && st[i].MPI_ERROR == MPI_SUCCESS);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dest = size - 1, tag = 5;
    MPI_Request r[3];
    int s_order[3] = {2, 0, 1}, r_order1[3] = {0, 1, 2}, r_order2[3] = {2, 1, 0};
    if (size > 1 && rank == 0) {
        for (int i = 0; i < 3; i++) OK(MPI_Psend_init(bufs[i], P, C, MPI_INT, dest, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &r[i]));
        send_in(s_order, r);
        send_in(r_order1, r);
        for (int i = 0; i < 3; i++) OK(MPI_Request_free(&r[i]));
        for (int i = 0; i < 3; i++) OK(MPI_Psend_init(bufs[i], P, C, MPI_INT, dest, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &r[i]));
        OK(MPI_Start(&r[2]));
        fill(bufs[2], 300);
        OK(MPI_Pready_range(0, P - 1, r[2]));
        OK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
        for (int i = 0; i < 3; i++) OK(MPI_Request_free(&r[i]));
    } else if (size > 1 && rank == dest) {
        for (int i = 0; i < 3; i++) OK(MPI_Precv_init(bufs[i], P, C, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &r[i]));
        recv_in(r_order1, r, tag);
        recv_in(r_order2, r, tag);
        for (int i = 0; i < 3; i++) OK(MPI_Request_free(&r[i]));
        for (int i = 0; i < 3; i++) OK(MPI_Precv_init(bufs[i], P, C, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &r[i]));
        fill(bufs[2], -1);
        OK(MPI_Start(&r[2]));
        OK(MPI_Wait(&r[2], MPI_STATUS_IGNORE));
        for (int j = 0; j < T; j++) CHECK(bufs[2][j] == 300);
        for (int i = 0; i < 3; i++) OK(MPI_Request_free(&r[i]));
    }
    int a = 0;
    MPI_Request q;
    if (size > 1 && rank == 0) {
        a = 42;
        OK(MPI_Psend_init(&a, 1, 1, MPI_INT, dest, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        OK(MPI_Start(&q));
        OK(MPI_Pready(0, q));
        OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, dest, 0, MPI_COMM_WORLD));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Request_free(&q));
    } else if (size > 1 && rank == dest) {
        OK(MPI_Precv_init(&a, 1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Start(&q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(a == 42);
        OK(MPI_Request_free(&q));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("part_order: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

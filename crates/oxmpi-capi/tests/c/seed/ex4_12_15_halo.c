/* Exercises 4.12-4.15: a maxn x maxn (12x12) grid split by rows over the
 * ranks (4 in the book), each rank holding its rows plus a ghost row above
 * and below. Every rank fills its rows with its rank and its ghost rows with
 * -1, then fills the ghost rows from its neighbours (non-periodic: rank 0 and
 * rank size-1 have one neighbour) four ways: blocking MPI_Send/MPI_Recv
 * (4.12), MPI_Isend/MPI_Irecv + MPI_Waitall (4.13), two MPI_Sendrecv shifts
 * up then down (4.14), and MPI_Sendrecv between pairs 0-1, 2-3, ... then
 * 1-2, 3-4, ... (4.15). After each way the ghost rows are checked. */
#include "../check.h"

#define maxn 12

static double xlocal[(maxn / 1) + 2][maxn];
static int rank, size, rows;

static void reset(void) {
    for (int i = 1; i <= rows; i++)
        for (int j = 0; j < maxn; j++) xlocal[i][j] = rank;
    for (int j = 0; j < maxn; j++) xlocal[0][j] = xlocal[rows + 1][j] = -1;
}

static void check(const char *way) {
    for (int j = 0; j < maxn; j++) {
        CHECK(xlocal[0][j] == (rank > 0 ? rank - 1 : -1));
        CHECK(xlocal[rows + 1][j] == (rank < size - 1 ? rank + 1 : -1));
        for (int i = 1; i <= rows; i++) CHECK(xlocal[i][j] == rank);
    }
    if (rank == 0) printf("%s: ghost rows correct\n", way);
}

int main(int argc, char **argv) {
    MPI_Status status;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(maxn % size == 0);
    rows = maxn / size;
    int up = rank + 1, down = rank - 1; /* row i+1 lives on rank+1 */

    /* 4.12: blocking. Send up first, then down; even/odd order avoids relying on buffering. */
    reset();
    if (rank % 2 == 0) {
        if (up < size) OK(MPI_Send(xlocal[rows], maxn, MPI_DOUBLE, up, 0, MPI_COMM_WORLD));
        if (down >= 0) OK(MPI_Recv(xlocal[0], maxn, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &status));
        if (down >= 0) OK(MPI_Send(xlocal[1], maxn, MPI_DOUBLE, down, 1, MPI_COMM_WORLD));
        if (up < size) OK(MPI_Recv(xlocal[rows + 1], maxn, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &status));
    } else {
        if (down >= 0) OK(MPI_Recv(xlocal[0], maxn, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &status));
        if (up < size) OK(MPI_Send(xlocal[rows], maxn, MPI_DOUBLE, up, 0, MPI_COMM_WORLD));
        if (up < size) OK(MPI_Recv(xlocal[rows + 1], maxn, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &status));
        if (down >= 0) OK(MPI_Send(xlocal[1], maxn, MPI_DOUBLE, down, 1, MPI_COMM_WORLD));
    }
    check("exercise 4.12 (MPI_Send/MPI_Recv)");

    /* 4.13: non-blocking */
    reset();
    MPI_Request req[4];
    int nreq = 0;
    if (up < size) {
        OK(MPI_Irecv(xlocal[rows + 1], maxn, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &req[nreq++]));
        OK(MPI_Isend(xlocal[rows], maxn, MPI_DOUBLE, up, 0, MPI_COMM_WORLD, &req[nreq++]));
    }
    if (down >= 0) {
        OK(MPI_Irecv(xlocal[0], maxn, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, &req[nreq++]));
        OK(MPI_Isend(xlocal[1], maxn, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &req[nreq++]));
    }
    MPI_Status st[4];
    OK(MPI_Waitall(nreq, req, st));
    for (int i = 0; i < nreq; i++) CHECK(req[i] == MPI_REQUEST_NULL);
    check("exercise 4.13 (MPI_Isend/MPI_Irecv/MPI_Waitall)");

    /* 4.14: two shifts with MPI_Sendrecv; MPI_PROC_NULL at the ends */
    reset();
    int upn = up < size ? up : MPI_PROC_NULL, downn = down >= 0 ? down : MPI_PROC_NULL;
    OK(MPI_Sendrecv(xlocal[rows], maxn, MPI_DOUBLE, upn, 0, xlocal[0], maxn, MPI_DOUBLE, downn, 0, MPI_COMM_WORLD, &status));
    if (downn == MPI_PROC_NULL) CHECK(status.MPI_SOURCE == MPI_PROC_NULL);
    OK(MPI_Sendrecv(xlocal[1], maxn, MPI_DOUBLE, downn, 1, xlocal[rows + 1], maxn, MPI_DOUBLE, upn, 1, MPI_COMM_WORLD, &status));
    check("exercise 4.14 (MPI_Sendrecv shifts)");

    /* 4.15: pairwise exchanges, 0-1 2-3 ... then 1-2 3-4 ... */
    reset();
    for (int phase = 0; phase < 2; phase++) {
        int partner = ((rank + phase) % 2 == 0) ? rank + 1 : rank - 1;
        if (partner < 0 || partner >= size) continue;
        if (partner > rank)
            OK(MPI_Sendrecv(xlocal[rows], maxn, MPI_DOUBLE, partner, 2, xlocal[rows + 1], maxn, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD, &status));
        else
            OK(MPI_Sendrecv(xlocal[1], maxn, MPI_DOUBLE, partner, 2, xlocal[0], maxn, MPI_DOUBLE, partner, 2, MPI_COMM_WORLD, &status));
        CHECK(status.MPI_SOURCE == partner && status.MPI_TAG == 2);
    }
    check("exercise 4.15 (MPI_Sendrecv pairs)");
    OK(MPI_Finalize());
    return 0;
}

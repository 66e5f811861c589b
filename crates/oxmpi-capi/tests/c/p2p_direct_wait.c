/* MPI_Wait and MPI_Waitall over requests of MPI_Isend/MPI_Irecv on MPI_COMM_WORLD
 * (handles that are the engine's own requests), with MPI_REQUEST_NULL among them:
 * statuses of completed receives and of null handles, handles set to
 * MPI_REQUEST_NULL, MPI_Wait of a null handle, a window of receives posted before
 * the messages arrive. Rank 0 receives from rank 1; any number of ranks >= 2. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int fails = 0;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "rank %d: line %d: %s\n", rank, __LINE__, #c); fails++; } } while (0)
#define OK(x) CHECK((x) == MPI_SUCCESS)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        int b[6] = {0};
        MPI_Request rq[5];
        MPI_Status st[5];
        memset(st, 0x55, sizeof st);
        OK(MPI_Irecv(&b[0], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq[0]));
        rq[1] = MPI_REQUEST_NULL;
        OK(MPI_Irecv(&b[1], 2, MPI_INT, 1, 2, MPI_COMM_WORLD, &rq[2]));
        rq[3] = MPI_REQUEST_NULL;
        OK(MPI_Irecv(&b[3], 3, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq[4]));
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 9, MPI_COMM_WORLD)); /* go */
        OK(MPI_Waitall(5, rq, st));
        for (int i = 0; i < 5; i++)
            CHECK(rq[i] == MPI_REQUEST_NULL);
        for (int i = 0; i < 5; i += 2) {
            int n = -1;
            CHECK(st[i].MPI_SOURCE == 1 && st[i].MPI_TAG == i / 2 + 1);
            OK(MPI_Get_count(&st[i], MPI_INT, &n));
            CHECK(n == i / 2 + 1);
        }
        for (int i = 1; i < 5; i += 2) {
            int n = -1;
            CHECK(st[i].MPI_SOURCE == MPI_ANY_SOURCE && st[i].MPI_TAG == MPI_ANY_TAG);
            OK(MPI_Get_count(&st[i], MPI_INT, &n));
            CHECK(n == 0);
        }
        CHECK(b[0] == 10 && b[1] == 20 && b[2] == 21 && b[3] == 30 && b[4] == 31 && b[5] == 32);

        /* All null: nothing to wait for. */
        OK(MPI_Waitall(2, &rq[0], st));
        CHECK(st[0].MPI_SOURCE == MPI_ANY_SOURCE && st[1].MPI_TAG == MPI_ANY_TAG);
        OK(MPI_Waitall(0, rq, MPI_STATUSES_IGNORE));

        /* MPI_Wait of a receive and of a null handle. */
        MPI_Status s;
        OK(MPI_Irecv(&b[0], 2, MPI_INT, 1, 4, MPI_COMM_WORLD, &rq[0]));
        OK(MPI_Wait(&rq[0], &s));
        CHECK(rq[0] == MPI_REQUEST_NULL && s.MPI_SOURCE == 1 && s.MPI_TAG == 4 && b[0] == 40);
        memset(&s, 0x55, sizeof s);
        OK(MPI_Wait(&rq[0], &s));
        CHECK(s.MPI_SOURCE == MPI_ANY_SOURCE && s.MPI_TAG == MPI_ANY_TAG);

        /* A send completed by MPI_Wait, the handle spent. */
        OK(MPI_Isend(b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq[0]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        CHECK(rq[0] == MPI_REQUEST_NULL);

        /* A window of 64 receives posted ahead of the messages, statuses ignored. */
        int w[64];
        MPI_Request win[64];
        for (int i = 0; i < 64; i++)
            OK(MPI_Irecv(&w[i], 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &win[i]));
        OK(MPI_Send(NULL, 0, MPI_INT, 1, 9, MPI_COMM_WORLD));
        OK(MPI_Waitall(64, win, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 64; i++)
            CHECK(win[i] == MPI_REQUEST_NULL && w[i] == i);
        /* The 64 empty messages sent as a window of MPI_Isend, one by one. */
        for (int i = 0; i < 64; i++) {
            OK(MPI_Irecv(NULL, 0, MPI_INT, 1, 7, MPI_COMM_WORLD, &rq[0]));
            OK(MPI_Wait(&rq[0], &s));
            CHECK(rq[0] == MPI_REQUEST_NULL && s.MPI_SOURCE == 1 && s.MPI_TAG == 7);
        }
    } else if (rank == 1) {
        int a[3] = {10, 0, 0}, c[3] = {20, 21, 0}, d[3] = {30, 31, 32}, e[2] = {40, 41}, r;
        OK(MPI_Recv(NULL, 0, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(a, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        OK(MPI_Send(c, 2, MPI_INT, 0, 2, MPI_COMM_WORLD));
        OK(MPI_Send(d, 3, MPI_INT, 0, 3, MPI_COMM_WORLD));
        OK(MPI_Send(e, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
        OK(MPI_Recv(&r, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(NULL, 0, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_Request q[64];
        for (int i = 0; i < 64; i++)
            OK(MPI_Isend(&e[0], 0, MPI_INT, 0, 7, MPI_COMM_WORLD, &q[i]));
        OK(MPI_Waitall(64, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 64; i++)
            OK(MPI_Send(&i, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("p2p_direct_wait: all checks passed\n");
    MPI_Finalize();
    return all != 0;
}

/* MPI-4 partitioned communication: the sender divides its buffer into 8
 * partitions of 4 ints, the receiver into 4 of 8 (equal total size);
 * partitions are readied out of order, by MPI_Pready, _range and _list and
 * from several threads; the receiver polls MPI_Parrived; the requests are
 * started again and again; a non-contiguous datatype; wrong uses are errors. */
#include "check.h"
#include <pthread.h>

#define SP 8
#define SC 4
#define RP 4
#define RC 8

static MPI_Request sreq;
static int sbuf[SP * SC];

static void *ready_some(void *arg) {
    int t = (int)(long)arg;
    for (int p = SP - 1 - t; p >= 0; p -= 3) OK(MPI_Pready(p, sreq));
    return NULL;
}

int main(int argc, char **argv) {
    int rank, size, provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int pairs = size / 2 * 2;
    int sender = rank % 2 == 0, peer = sender ? rank + 1 : rank - 1;
    if (rank < pairs) {
        int rbuf[RP * RC];
        MPI_Request rreq;
        if (sender) OK(MPI_Psend_init(sbuf, SP, SC, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
        else OK(MPI_Precv_init(rbuf, RP, RC, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq));
        for (int it = 0; it < 12; it++) {
            if (sender) {
                for (int i = 0; i < SP * SC; i++) sbuf[i] = 1000 * it + i;
                OK(MPI_Start(&sreq));
                switch (it % 4) {
                case 0: for (int p = SP - 1; p >= 0; p--) OK(MPI_Pready(p, sreq)); break;
                case 1: OK(MPI_Pready_range(4, 7, sreq)); OK(MPI_Pready_range(0, 3, sreq)); break;
                case 2: { int l[SP] = { 5, 2, 7, 0, 3, 6, 1, 4 }; OK(MPI_Pready_list(SP, l, sreq)); break; }
                case 3:
                    if (provided == MPI_THREAD_MULTIPLE) {
                        pthread_t th[3];
                        for (int t = 0; t < 3; t++) pthread_create(&th[t], NULL, ready_some, (void *)(long)t);
                        for (int t = 0; t < 3; t++) pthread_join(th[t], NULL);
                    } else {
                        OK(MPI_Pready_range(0, SP - 1, sreq));
                    }
                    break;
                }
                OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
                CHECK(sreq != MPI_REQUEST_NULL);
            } else {
                for (int i = 0; i < RP * RC; i++) rbuf[i] = -1;
                OK(MPI_Start(&rreq));
                int flag = 0;
                for (int p = 0; p < RP; p++) {
                    do { OK(MPI_Parrived(rreq, p, &flag)); } while (!flag);
                    for (int i = 0; i < RC; i++) CHECK(rbuf[p * RC + i] == 1000 * it + p * RC + i);
                }
                OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
                for (int i = 0; i < RP * RC; i++) CHECK(rbuf[i] == 1000 * it + i);
                /* inactive: every partition has arrived */
                OK(MPI_Parrived(rreq, 0, &flag)); CHECK(flag == 1);
            }
        }
        /* wrong uses */
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int cls, flag;
        if (sender) {
            CHECK(MPI_Pready(0, sreq) != MPI_SUCCESS);               /* not started */
            OK(MPI_Start(&sreq));
            int e = MPI_Pready(SP, sreq); OK(MPI_Error_class(e, &cls)); CHECK(cls == MPI_ERR_ARG);
            OK(MPI_Pready(3, sreq));
            CHECK(MPI_Pready(3, sreq) != MPI_SUCCESS);               /* twice */
            CHECK(MPI_Parrived(sreq, 0, &flag) != MPI_SUCCESS);      /* a send request */
            OK(MPI_Pready_range(0, 2, sreq)); OK(MPI_Pready_range(4, SP - 1, sreq));
            OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
            OK(MPI_Request_free(&sreq));
        } else {
            OK(MPI_Start(&rreq));
            int e = MPI_Parrived(rreq, RP, &flag); OK(MPI_Error_class(e, &cls)); CHECK(cls == MPI_ERR_ARG);
            CHECK(MPI_Pready(0, rreq) != MPI_SUCCESS);               /* a receive request */
            OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
            OK(MPI_Request_free(&rreq));
        }
        /* a non-contiguous type: every other int of 2 x 6 */
        MPI_Datatype vec; OK(MPI_Type_vector(6, 1, 2, MPI_INT, &vec)); OK(MPI_Type_commit(&vec));
        int big[24];
        MPI_Request q;
        if (sender) {
            for (int i = 0; i < 24; i++) big[i] = i;
            OK(MPI_Psend_init(big, 2, 1, vec, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
            OK(MPI_Start(&q)); OK(MPI_Pready(1, q)); OK(MPI_Pready(0, q));
        } else {
            for (int i = 0; i < 24; i++) big[i] = -1;
            OK(MPI_Precv_init(big, 1, 12, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
            OK(MPI_Start(&q));
        }
        /* a plain receive with MPI_ANY_TAG does not take partitioned traffic */
        int x = rank;
        if (sender) OK(MPI_Send(&x, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
        else { OK(MPI_Recv(&x, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); CHECK(x == peer); }
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (!sender) {
            /* the vector's elements of the second element start at extent 11 ints */
            int want[12] = { 0, 2, 4, 6, 8, 10, 11, 13, 15, 17, 19, 21 };
            for (int i = 0; i < 12; i++) CHECK(big[i] == want[i]);
        }
        OK(MPI_Request_free(&q)); OK(MPI_Type_free(&vec));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("part: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

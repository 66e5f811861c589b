/* MPI_Isendrecv and MPI_Isendrecv_replace: one request for a send and a
 * receive; its status is the receive's; derived types, MPI_PROC_NULL, wildcards,
 * and many in flight at once around a ring. */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size, flag, count;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request r;
    MPI_Status st;

    /* Ring shift of 5 ints; the status names the sender and the tag. */
    int out[5], in[5];
    for (int i = 0; i < 5; i++) { out[i] = 100 * rank + i; in[i] = -1; }
    OK(MPI_Isendrecv(out, 5, MPI_INT, next, 7, in, 5, MPI_INT, prev, 7, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == prev && st.MPI_TAG == 7);
    OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 5);
    for (int i = 0; i < 5; i++) CHECK(in[i] == 100 * prev + i);

    /* Wildcards, a shorter message, completion by MPI_Test. */
    OK(MPI_Isendrecv(out, 2, MPI_INT, next, 8 + rank, in, 5, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    do { OK(MPI_Test(&r, &flag, &st)); } while (!flag);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 8 + prev);
    OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 2);

    /* Replace with a strided type: the buffer ends up with the neighbour's data. */
    double grid[12];
    MPI_Datatype col;
    OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &col));
    OK(MPI_Type_commit(&col));
    for (int i = 0; i < 12; i++) grid[i] = rank * 1000 + i;
    OK(MPI_Isendrecv_replace(grid, 1, col, next, 9, prev, 9, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == prev);
    for (int i = 0; i < 12; i++) CHECK(grid[i] == (i % 3 == 0 ? prev * 1000 + i : rank * 1000 + i));
    OK(MPI_Type_free(&col));

    /* MPI_PROC_NULL on both sides: an empty status. */
    OK(MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 0, in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);

    /* Many in flight, both directions, then Waitall / Waitany. */
    enum { K = 16 };
    int a[K], b[K], c[K];
    MPI_Request rs[2 * K];
    for (int i = 0; i < K; i++) {
        a[i] = rank * K + i; b[i] = -1; c[i] = rank * K + i;
        OK(MPI_Isendrecv(&a[i], 1, MPI_INT, next, i, &b[i], 1, MPI_INT, prev, i, MPI_COMM_WORLD, &rs[i]));
        OK(MPI_Isendrecv_replace(&c[i], 1, MPI_INT, prev, 100 + i, next, 100 + i, MPI_COMM_WORLD, &rs[K + i]));
    }
    MPI_Status sts[2 * K];
    OK(MPI_Waitall(2 * K, rs, sts));
    for (int i = 0; i < K; i++) {
        CHECK(b[i] == prev * K + i && c[i] == next * K + i);
        CHECK(sts[i].MPI_TAG == i && sts[K + i].MPI_SOURCE == next);
    }

    /* Errors: a bad rank or tag is reported by the call. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int e, cls;
    e = MPI_Isendrecv(out, 1, MPI_INT, size, 0, in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &r);
    MPI_Error_class(e, &cls); CHECK(cls == MPI_ERR_RANK);
    e = MPI_Isendrecv_replace(out, 1, MPI_INT, next, -5, prev, 0, MPI_COMM_WORLD, &r);
    MPI_Error_class(e, &cls); CHECK(cls == MPI_ERR_TAG);
    e = MPI_Isendrecv(out, -1, MPI_INT, next, 0, in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &r);
    MPI_Error_class(e, &cls); CHECK(cls == MPI_ERR_COUNT);
    /* Truncation shows in the wait. */
    OK(MPI_Isendrecv(out, 3, MPI_INT, next, 50, in, 2, MPI_INT, prev, 50, MPI_COMM_WORLD, &r));
    e = MPI_Wait(&r, &st);
    MPI_Error_class(e, &cls); CHECK(cls == MPI_ERR_TRUNCATE);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("isendrecv: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

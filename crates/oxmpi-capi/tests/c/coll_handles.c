/* The collectives' handle look-ups (bench/PROFILE.md capi30: predefined
 * communicators, datatypes and operations borrowed): every invalid handle still
 * gives its class with a message naming the call and the argument, and the
 * handles that take the general look-up (a duplicated communicator, a user
 * operation, a committed derived type) still work. */
#include <stdint.h>
#include "check.h"

static int failures = 0;
/* `rc` has class `want` and its message names `call` and the argument `arg`. */
static void names(int rc, int want, const char *call, const char *arg, int line) {
    char msg[MPI_MAX_ERROR_STRING] = "(success)", quoted[64];
    int c = MPI_SUCCESS, len = 0;
    if (rc != MPI_SUCCESS) { OK(MPI_Error_class(rc, &c)); OK(MPI_Error_string(rc, msg, &len)); }
    snprintf(quoted, sizeof quoted, "`%s`", arg);
    if (c != want || !strstr(msg, call) || !strstr(msg, quoted)) {
        fprintf(stderr, "line %d: %s: class %d (want %d), message: %s\n", line, call, c, want, msg);
        failures++;
    }
}
#define NAMES(rc, want, call, arg) names((rc), (want), (call), (arg), __LINE__)

static void mul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] *= ((int *)in)[i];
}

int main(int argc, char **argv) {
    int rank, size, x[16], y[16], counts[16], displs[16];
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 16);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    for (int i = 0; i < size; i++) { x[i] = rank + 1; counts[i] = 1; displs[i] = i; }
    MPI_Op not_an_op = (MPI_Op)((intptr_t)MPI_OP_NULL + 5);   /* in the predefined range, no operation */
    MPI_Datatype not_a_type = (MPI_Datatype)(intptr_t)0x2ff; /* in the predefined range, no type */

    /* operations */
    NAMES(MPI_Reduce(x, y, 1, MPI_INT, not_an_op, 0, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_Reduce", "op");
    NAMES(MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_Allreduce", "op");
    NAMES(MPI_Allreduce_c(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP, "MPI_Allreduce_c", "op");
    NAMES(MPI_Reduce_scatter_block(x, y, 1, MPI_INT, (MPI_Op)(intptr_t)0x7777777, MPI_COMM_WORLD), MPI_ERR_OP,
          "MPI_Reduce_scatter_block", "op");
    /* datatypes */
    NAMES(MPI_Allreduce(x, y, 1, not_a_type, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Allreduce", "datatype");
    NAMES(MPI_Reduce(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Reduce", "datatype");
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    NAMES(MPI_Allreduce(x, y, 1, pair, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Allreduce", "datatype");
    NAMES(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, not_a_type, MPI_COMM_WORLD), MPI_ERR_TYPE,
          "MPI_Alltoallv", "recvtype");
    NAMES(MPI_Alltoall(x, 1, MPI_INT, y, 1, pair, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Alltoall", "recvtype");
    /* v forms' counts and displacements (one pass over both, coll35): a negative
     * count is MPI_ERR_COUNT naming its entry, before a NULL displacements array
     * is looked at; a NULL array is MPI_ERR_ARG naming it */
    {
        int bad[16];
        char sent[32], recvd[32];
        for (int i = 0; i < size; i++) bad[i] = i == size - 1 ? -1 : 1;
        snprintf(sent, sizeof sent, "sendcounts[%d]", size - 1);
        snprintf(recvd, sizeof recvd, "recvcounts[%d]", size - 1);
        NAMES(MPI_Alltoallv(x, counts, displs, MPI_INT, y, bad, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
              "MPI_Alltoallv", recvd);
        NAMES(MPI_Alltoallv(x, bad, NULL, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
              "MPI_Alltoallv", sent);
        NAMES(MPI_Alltoallv(x, counts, NULL, MPI_INT, y, counts, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG,
              "MPI_Alltoallv", "sdispls");
        NAMES(MPI_Alltoallv(x, counts, displs, MPI_INT, y, NULL, displs, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG,
              "MPI_Alltoallv", "recvcounts");
        NAMES(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, NULL, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG,
              "MPI_Alltoallv", "rdispls");
        NAMES(MPI_Allgatherv(x, 1, MPI_INT, y, bad, NULL, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT,
              "MPI_Allgatherv", recvd);
        NAMES(MPI_Allgatherv(x, 1, MPI_INT, y, counts, NULL, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG,
              "MPI_Allgatherv", "displs");
    }
    /* communicators */
    NAMES(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Allreduce", "comm");
    MPI_Comm d, stale;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    stale = d;
    OK(MPI_Comm_free(&d));
    NAMES(MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, 0, stale), MPI_ERR_COMM, "MPI_Reduce", "comm");
    NAMES(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, stale), MPI_ERR_COMM,
          "MPI_Alltoallv", "comm");

    /* the general look-ups still answer: a duplicated communicator, a user
     * operation, a committed derived type; and the predefined ones */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Op prod;
    OK(MPI_Op_create(mul, 1, &prod));
    y[0] = 0;
    OK(MPI_Allreduce(x, y, 1, MPI_INT, prod, d));
    int fact = 1;
    for (int i = 1; i <= size; i++) fact *= i;
    CHECK(y[0] == fact);
    OK(MPI_Type_commit(&pair));
    int p[2] = { rank, 2 * rank }, q[2] = { -1, -1 };
    OK(MPI_Reduce(p, q, 1, pair, MPI_SUM, size - 1, d));
    if (rank == size - 1) CHECK(q[0] == size * (size - 1) / 2 && q[1] == size * (size - 1));
    OK(MPI_Reduce(x, y, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD));
    if (rank == 0) CHECK(y[0] == size);
    OK(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(y[0] == rank + 1);
    OK(MPI_Alltoallv(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, d));
    for (int i = 0; i < size; i++) CHECK(y[i] == i + 1);
    OK(MPI_Op_free(&prod));
    OK(MPI_Type_free(&pair));
    OK(MPI_Comm_free(&d));

    /* a user communicator looked up again and again (the thread's cached look-up,
     * capi31), then freed while a persistent request still holds it: its handle
     * fails at once, for point-to-point and collectives; one made after it works */
    MPI_Comm e, gone;
    MPI_Request held;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &e));
    OK(MPI_Barrier_init(e, MPI_INFO_NULL, &held));
    OK(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, e));
    CHECK(y[0] == size * (size + 1) / 2);
    OK(MPI_Sendrecv(x, 1, MPI_INT, rank, 3, y, 1, MPI_INT, rank, 3, e, MPI_STATUS_IGNORE));
    CHECK(y[0] == rank + 1);
    gone = e;
    OK(MPI_Comm_free(&e));
    NAMES(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, gone), MPI_ERR_COMM, "MPI_Allreduce", "comm");
    NAMES(MPI_Send(x, 1, MPI_INT, rank, 3, gone), MPI_ERR_COMM, "MPI_Send", "comm");
    OK(MPI_Start(&held));
    OK(MPI_Wait(&held, MPI_STATUS_IGNORE));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &e));
    OK(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, e));
    CHECK(y[0] == size * (size + 1) / 2);
    NAMES(MPI_Recv(y, 1, MPI_INT, rank, 3, gone, MPI_STATUS_IGNORE), MPI_ERR_COMM, "MPI_Recv", "comm");
    OK(MPI_Comm_free(&e));
    OK(MPI_Request_free(&held));

    int all = 0;
    OK(MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank == 0 && all == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return all != 0;
}

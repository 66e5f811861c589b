/* A NULL buffer with a nonzero count of a non-contiguous datatype (relative
 * displacements, so its data would start in the null page) given to the
 * collectives: MPI_ERR_BUFFER naming the call and the argument, on every rank
 * before any communication (the buffer is significant everywhere), never a crash;
 * the communicator works afterwards. Blocking, v, w and immediate forms; once
 * before the shared-memory collectives' area exists (schedules) and once after
 * (the shared-memory kernels). */
#include "check.h"

static int rank, size;

static void expect(int rc, const char *call, const char *arg, int line) {
    int c = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    if (rc != MPI_SUCCESS) OK(MPI_Error_class(rc, &c));
    if (c != MPI_ERR_BUFFER) {
        fprintf(stderr, "line %d: %s returned class %d, not MPI_ERR_BUFFER\n", line, call, c);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    char named[64];
    snprintf(named, sizeof named, "argument `%s`", arg);
    OK(MPI_Error_string(rc, msg, &len));
    if (!strstr(msg, call) || !strstr(msg, named)) {
        fprintf(stderr, "line %d: %s's message does not name %s: %s\n", line, call, arg, msg);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}
#define EXPECT(rc, call, arg) expect((rc), (call), (arg), __LINE__)

static void nulls(MPI_Datatype vec) {
    int n = size, buf[64] = {0}, counts[16], displs[16];
    for (int i = 0; i < n; i++) { counts[i] = 1; displs[i] = 4 * i; }
    MPI_Datatype types[16];
    int wcounts[16], wdispls[16];
    for (int i = 0; i < n; i++) { types[i] = vec; wcounts[i] = 1; wdispls[i] = 16 * i; }
    MPI_Request rq = MPI_REQUEST_NULL;

    EXPECT(MPI_Bcast(NULL, 3, vec, 0, MPI_COMM_WORLD), "MPI_Bcast", "buffer");
    EXPECT(MPI_Gather(NULL, 1, vec, buf, 1, vec, 0, MPI_COMM_WORLD), "MPI_Gather", "sendbuf");
    EXPECT(MPI_Scatter(buf, 1, vec, NULL, 1, vec, 0, MPI_COMM_WORLD), "MPI_Scatter", "recvbuf");
    EXPECT(MPI_Gatherv(NULL, 1, vec, buf, counts, displs, vec, 0, MPI_COMM_WORLD), "MPI_Gatherv", "sendbuf");
    EXPECT(MPI_Scatterv(buf, counts, displs, vec, NULL, 1, vec, 0, MPI_COMM_WORLD), "MPI_Scatterv", "recvbuf");
    EXPECT(MPI_Allgather(NULL, 1, vec, buf, 1, vec, MPI_COMM_WORLD), "MPI_Allgather", "sendbuf");
    EXPECT(MPI_Allgather(buf, 1, vec, NULL, 1, vec, MPI_COMM_WORLD), "MPI_Allgather", "recvbuf");
    EXPECT(MPI_Allgatherv(NULL, 1, vec, buf, counts, displs, vec, MPI_COMM_WORLD), "MPI_Allgatherv", "sendbuf");
    EXPECT(MPI_Alltoall(NULL, 1, vec, buf, 1, vec, MPI_COMM_WORLD), "MPI_Alltoall", "sendbuf");
    EXPECT(MPI_Alltoallv(NULL, counts, displs, vec, buf, counts, displs, vec, MPI_COMM_WORLD), "MPI_Alltoallv", "sendbuf");
    EXPECT(MPI_Alltoallv(buf, counts, displs, vec, NULL, counts, displs, vec, MPI_COMM_WORLD), "MPI_Alltoallv", "recvbuf");
    EXPECT(MPI_Alltoallw(NULL, wcounts, wdispls, types, buf, wcounts, wdispls, types, MPI_COMM_WORLD), "MPI_Alltoallw", "sendbuf");
    EXPECT(MPI_Allreduce(NULL, buf, 1, vec, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce", "sendbuf");
    EXPECT(MPI_Allreduce(buf, NULL, 1, vec, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce", "recvbuf");
    EXPECT(MPI_Reduce(NULL, buf, 1, vec, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce", "sendbuf");
    EXPECT(MPI_Reduce_scatter_block(NULL, buf, 1, vec, MPI_SUM, MPI_COMM_WORLD), "MPI_Reduce_scatter_block", "sendbuf");
    EXPECT(MPI_Scan(NULL, buf, 1, vec, MPI_SUM, MPI_COMM_WORLD), "MPI_Scan", "sendbuf");
    EXPECT(MPI_Ibcast(NULL, 3, vec, 0, MPI_COMM_WORLD, &rq), "MPI_Ibcast", "buffer");
    CHECK(rq == MPI_REQUEST_NULL);
    EXPECT(MPI_Iallreduce(NULL, buf, 1, vec, MPI_SUM, MPI_COMM_WORLD, &rq), "MPI_Iallreduce", "sendbuf");
    CHECK(rq == MPI_REQUEST_NULL);
    EXPECT(MPI_Igatherv(NULL, 1, vec, buf, counts, displs, vec, 0, MPI_COMM_WORLD, &rq), "MPI_Igatherv", "sendbuf");
    CHECK(rq == MPI_REQUEST_NULL);
    EXPECT(MPI_Ialltoallv(NULL, counts, displs, vec, buf, counts, displs, vec, MPI_COMM_WORLD, &rq), "MPI_Ialltoallv", "sendbuf");
    CHECK(rq == MPI_REQUEST_NULL);

}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Datatype vec; /* 2 ints with a gap: non-contiguous, data from byte 0 */
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    nulls(vec);
    /* Enough collectives for the shared-memory area to be made, then again. */
    for (int i = 0; i < 40; i++) {
        int x = i, y = 0;
        OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
        OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(y == i * size);
    }
    nulls(vec);
    int n = size;

    /* The communicator is still in step: a real collective of the same type. */
    int mine[3] = {rank + 1, 0, -1}, all[64];
    OK(MPI_Allgather(mine, 1, vec, all, 1, vec, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++) CHECK(all[3 * i] == i + 1 && all[3 * i + 2] == -1);
    OK(MPI_Type_free(&vec));
    OK(MPI_Finalize());
    if (rank == 0) printf("all checks passed\n");
    return 0;
}

/* Zero-byte collectives other than barrier return without communicating (the standard
 * does not make them synchronize, and oxmpi does not: issue 18).
 *
 * The ranks call them one after another, in a chain: rank r starts only after rank r-1
 * has finished all of them and sent it a token. A collective that waited for the others
 * would deadlock here (the launcher reports it and the job fails). Receive buffers must
 * be left untouched, arguments are still checked, and ordinary collectives on the same
 * communicator afterwards still line up. */
#include "check.h"

#define SENTINEL 0x5a

static void zero_byte_collectives(MPI_Comm comm, int size)
{
    int in[4] = {1, 2, 3, 4};
    unsigned char out[64];
    int counts[64];
    memset(out, SENTINEL, sizeof out);
    for (int i = 0; i < size; i++)
        counts[i] = 0;
    OK(MPI_Allreduce(in, out, 0, MPI_INT, MPI_SUM, comm));
    OK(MPI_Allreduce(MPI_IN_PLACE, out, 0, MPI_DOUBLE, MPI_MAX, comm));
    OK(MPI_Reduce(in, out, 0, MPI_INT, MPI_SUM, 0, comm));
    OK(MPI_Alltoall(in, 0, MPI_INT, out, 0, MPI_INT, comm));
    OK(MPI_Allgather(in, 0, MPI_INT, out, 0, MPI_INT, comm));
    OK(MPI_Gather(in, 0, MPI_INT, out, 0, MPI_INT, 0, comm));
    OK(MPI_Scatter(in, 0, MPI_INT, out, 0, MPI_INT, 0, comm));
    OK(MPI_Bcast(out, 0, MPI_INT, 0, comm));
    OK(MPI_Reduce_scatter_block(in, out, 0, MPI_INT, MPI_SUM, comm));
    OK(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm));
    OK(MPI_Scan(in, out, 0, MPI_INT, MPI_SUM, comm));
    OK(MPI_Exscan(in, out, 0, MPI_INT, MPI_SUM, comm));
    MPI_Request r[3];
    OK(MPI_Iallreduce(in, out, 0, MPI_INT, MPI_SUM, comm, &r[0]));
    OK(MPI_Ialltoall(in, 0, MPI_INT, out, 0, MPI_INT, comm, &r[1]));
    OK(MPI_Ireduce(in, out, 0, MPI_INT, MPI_SUM, 0, comm, &r[2]));
    OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (size_t i = 0; i < sizeof out; i++)
        CHECK(out[i] == SENTINEL);
    /* Still checked: a bad datatype or root is an error even with nothing to move. */
    CHECK(MPI_Allreduce(in, out, 0, MPI_DATATYPE_NULL, MPI_SUM, comm) != MPI_SUCCESS);
    CHECK(MPI_Reduce(in, out, 0, MPI_INT, MPI_SUM, size, comm) != MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64);
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int token = 0;
    if (rank > 0)
        OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    zero_byte_collectives(MPI_COMM_WORLD, size);
    zero_byte_collectives(dup, size);
    token++;
    if (rank < size - 1)
        OK(MPI_Send(&token, 1, MPI_INT, rank + 1, 7, MPI_COMM_WORLD));
    else
        CHECK(token == size);
    /* Collectives with data still meet on both communicators. */
    int one = 1, sum = 0;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size);
    sum = 0;
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size);
    int all[64];
    OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, dup));
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i);
    OK(MPI_Comm_free(&dup));
    if (rank == 0)
        printf("zero-byte collectives: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

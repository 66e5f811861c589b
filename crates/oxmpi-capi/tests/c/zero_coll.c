/* Zero-byte collectives other than barrier return without communicating (the standard
 * does not make them synchronize, and oxmpi does not: issue 18): blocking, non-blocking,
 * persistent (MPI_Start of a 0-count *_init) and neighbourhood forms, and the v/w
 * variants whose counts are all zero (alltoallv/w, gatherv, scatterv, allgatherv).
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
    int displs[64];
    MPI_Datatype types[64];
    for (int i = 0; i < size; i++) {
        displs[i] = 0;
        types[i] = MPI_INT;
    }
    OK(MPI_Allgatherv(in, 0, MPI_INT, out, counts, displs, MPI_INT, comm));
    OK(MPI_Alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm));
    OK(MPI_Alltoallw(in, counts, displs, types, out, counts, displs, types, comm));
    OK(MPI_Gatherv(in, 0, MPI_INT, out, counts, displs, MPI_INT, 0, comm));
    OK(MPI_Scatterv(in, counts, displs, MPI_INT, out, 0, MPI_INT, 0, comm));
    MPI_Request r[16];
    int k = 0;
    OK(MPI_Iallreduce(in, out, 0, MPI_INT, MPI_SUM, comm, &r[k++]));
    OK(MPI_Ialltoall(in, 0, MPI_INT, out, 0, MPI_INT, comm, &r[k++]));
    OK(MPI_Ireduce(in, out, 0, MPI_INT, MPI_SUM, 0, comm, &r[k++]));
    OK(MPI_Ibcast(out, 0, MPI_INT, 0, comm, &r[k++]));
    OK(MPI_Iallgather(in, 0, MPI_INT, out, 0, MPI_INT, comm, &r[k++]));
    OK(MPI_Igather(in, 0, MPI_INT, out, 0, MPI_INT, 0, comm, &r[k++]));
    OK(MPI_Iscatter(in, 0, MPI_INT, out, 0, MPI_INT, 0, comm, &r[k++]));
    OK(MPI_Iscan(in, out, 0, MPI_INT, MPI_SUM, comm, &r[k++]));
    OK(MPI_Iexscan(in, out, 0, MPI_INT, MPI_SUM, comm, &r[k++]));
    OK(MPI_Ireduce_scatter_block(in, out, 0, MPI_INT, MPI_SUM, comm, &r[k++]));
    OK(MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm, &r[k++]));
    OK(MPI_Iallgatherv(in, 0, MPI_INT, out, counts, displs, MPI_INT, comm, &r[k++]));
    OK(MPI_Ialltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, comm, &r[k++]));
    OK(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < k; i++)
        CHECK(r[i] == MPI_REQUEST_NULL);
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
    /* Made before the chain (creating them is collective): a ring for the neighbourhood
     * collectives, and 0-count persistent collectives, started inside the chain. */
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    int pin[4] = {0}, pout[4] = {-1, -1, -1, -1};
    MPI_Request p[4];
    OK(MPI_Allreduce_init(pin, pout, 0, MPI_INT, MPI_SUM, dup, MPI_INFO_NULL, &p[0]));
    OK(MPI_Bcast_init(pout, 0, MPI_INT, 0, dup, MPI_INFO_NULL, &p[1]));
    OK(MPI_Alltoall_init(pin, 0, MPI_INT, pout, 0, MPI_INT, dup, MPI_INFO_NULL, &p[2]));
    OK(MPI_Reduce_init(pin, pout, 0, MPI_INT, MPI_SUM, 0, dup, MPI_INFO_NULL, &p[3]));
    int token = 0;
    if (rank > 0)
        OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    zero_byte_collectives(MPI_COMM_WORLD, size);
    zero_byte_collectives(dup, size);
    for (int round = 0; round < 2; round++) {
        OK(MPI_Startall(4, p));
        OK(MPI_Waitall(4, p, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(p[i] != MPI_REQUEST_NULL); /* persistent: inactive, not freed */
    }
    CHECK(pout[0] == -1 && pout[3] == -1);
    {
        int nin[2] = {5, 6}, nout[2] = {-7, -7}, zc[2] = {0, 0};
        MPI_Aint zd[2] = {0, 0};
        int zdi[2] = {0, 0};
        MPI_Datatype zt[2] = {MPI_INT, MPI_INT};
        MPI_Request nr[2];
        OK(MPI_Neighbor_allgather(nin, 0, MPI_INT, nout, 0, MPI_INT, ring));
        OK(MPI_Neighbor_alltoall(nin, 0, MPI_INT, nout, 0, MPI_INT, ring));
        OK(MPI_Neighbor_alltoallv(nin, zc, zdi, MPI_INT, nout, zc, zdi, MPI_INT, ring));
        OK(MPI_Neighbor_alltoallw(nin, zc, zd, zt, nout, zc, zd, zt, ring));
        OK(MPI_Ineighbor_allgather(nin, 0, MPI_INT, nout, 0, MPI_INT, ring, &nr[0]));
        OK(MPI_Ineighbor_alltoall(nin, 0, MPI_INT, nout, 0, MPI_INT, ring, &nr[1]));
        OK(MPI_Waitall(2, nr, MPI_STATUSES_IGNORE));
        CHECK(nout[0] == -7 && nout[1] == -7);
    }
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
    /* ... and so do non-blocking, persistent, v-variant and neighbourhood ones (the
     * 0-count calls above used up their sequence numbers alike on every rank). */
    MPI_Request q;
    sum = 0;
    OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(sum == size);
    int a2a_in[64], a2a_out[64], ones[64], offs[64];
    for (int i = 0; i < size; i++) {
        a2a_in[i] = rank * 100 + i;
        a2a_out[i] = -1;
        ones[i] = 1;
        offs[i] = i;
    }
    OK(MPI_Alltoallv(a2a_in, ones, offs, MPI_INT, a2a_out, ones, offs, MPI_INT, dup));
    for (int i = 0; i < size; i++)
        CHECK(a2a_out[i] == i * 100 + rank);
    /* 0-count non-blocking calls where rank 0 passes MPI_INT (the C entry's 0-count
     * exit) and the others a committed copy of it (the general path, an empty
     * schedule): both take the call's tag, so non-blocking collectives with data
     * afterwards still meet. */
    MPI_Datatype intcopy;
    OK(MPI_Type_contiguous(1, MPI_INT, &intcopy));
    OK(MPI_Type_commit(&intcopy));
    MPI_Datatype t = rank == 0 ? MPI_INT : intcopy;
    int zin[4] = {1, 2, 3, 4}, zc[64], zd[64];
    unsigned char zout[64];
    memset(zout, SENTINEL, sizeof zout);
    for (int i = 0; i < size; i++)
        zc[i] = zd[i] = 0;
    for (int i = 0; i < 20; i++) {
        MPI_Request m[8];
        int b = rank == i % size ? i : -1, gathered[64];
        OK(MPI_Ibcast(zout, 0, t, i % size, MPI_COMM_WORLD, &m[0]));
        OK(MPI_Iallreduce(zin, zout, 0, t, MPI_SUM, MPI_COMM_WORLD, &m[1]));
        OK(MPI_Iallgatherv(zin, 0, t, zout, zc, zd, t, MPI_COMM_WORLD, &m[2]));
        OK(MPI_Ireduce_scatter(zin, zout, zc, t, MPI_SUM, MPI_COMM_WORLD, &m[3]));
        OK(MPI_Igather(zin, 0, t, zout, 0, t, 0, MPI_COMM_WORLD, &m[4]));
        OK(MPI_Ibcast(&b, 1, MPI_INT, i % size, MPI_COMM_WORLD, &m[5]));
        OK(MPI_Iallgather(&rank, 1, MPI_INT, gathered, 1, MPI_INT, MPI_COMM_WORLD, &m[6]));
        OK(MPI_Iscan(zin, zout, 0, t, MPI_SUM, MPI_COMM_WORLD, &m[7]));
        OK(MPI_Waitall(8, m, MPI_STATUSES_IGNORE));
        CHECK(b == i);
        for (int j = 0; j < size; j++)
            CHECK(gathered[j] == j);
    }
    for (size_t i = 0; i < sizeof zout; i++)
        CHECK(zout[i] == SENTINEL);
    /* Alltoallv where the last rank moves nothing (every count 0: the C entry's short
     * path) while the others exchange: its step and tag stay in step with theirs, so
     * the data arrives and blocking collectives afterwards still meet. */
    for (int i = 0; i < 20; i++) {
        int sc[64], rc[64], dd[64], sv[64], rv[64], last = rank == size - 1;
        for (int j = 0; j < size; j++) {
            sc[j] = rc[j] = !last && j != size - 1;
            dd[j] = j;
            sv[j] = rank * 1000 + j + i;
            rv[j] = -1;
        }
        OK(MPI_Alltoallv(sv, sc, dd, MPI_INT, rv, rc, dd, MPI_INT, MPI_COMM_WORLD));
        for (int j = 0; j < size; j++)
            CHECK(rv[j] == (rc[j] ? j * 1000 + rank + i : -1));
        sum = 0;
        OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == size);
    }
    OK(MPI_Type_free(&intcopy));
    OK(MPI_Request_free(&p[0]));
    int psum = 0;
    OK(MPI_Allreduce_init(&one, &psum, 1, MPI_INT, MPI_SUM, dup, MPI_INFO_NULL, &p[0]));
    OK(MPI_Start(&p[0]));
    OK(MPI_Wait(&p[0], MPI_STATUS_IGNORE));
    CHECK(psum == size);
    int nb[2] = {-1, -1};
    OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, nb, 1, MPI_INT, ring));
    CHECK(nb[0] == (rank - 1 + size) % size && nb[1] == (rank + 1) % size);
    for (int i = 0; i < 4; i++)
        OK(MPI_Request_free(&p[i]));
    OK(MPI_Comm_free(&ring));
    OK(MPI_Comm_free(&dup));
    if (rank == 0)
        printf("zero-byte collectives: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

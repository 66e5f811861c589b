/* A rank with a non-blocking collective pending enters a blocking one while the
 * others enter the blocking one first and start the non-blocking one after
 * (mpi4py's Iagree test does this; MPICH and Open MPI keep the two apart).
 * The barrier must not take the allreduce's messages (that was MPI_ERR_TRUNCATE
 * in the barrier), and both complete with the right result. Any number of ranks. */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int root = 0; root < size; root++) {
        int in = 1 << rank, out = 0, flag = 0;
        MPI_Request r;
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == root) {
            OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD, &r));
            OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            CHECK(size == 1 || !flag); /* the others have not joined yet */
            OK(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD, &r));
        }
        if (!flag) OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(out == (1 << size) - 1);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("nb_then_blocking: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

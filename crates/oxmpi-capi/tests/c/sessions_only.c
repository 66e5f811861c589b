/* Sessions without the World model, and a finished session before MPI_Init.
 * argv[1]: "only"      two sessions one after the other, never MPI_Init: the
 *                      process leaves the job when it exits;
 *          "then-init" a session initialized and finalized, then MPI_Init. */
#include "check.h"

static int ring(MPI_Session s, const char *tag) {
    MPI_Group g; MPI_Comm c; int rank, size, next, prev, token = -1;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c));
    OK(MPI_Group_free(&g));
    OK(MPI_Comm_rank(c, &rank)); OK(MPI_Comm_size(c, &size));
    next = (rank + 1) % size; prev = (rank + size - 1) % size;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 0, &token, 1, MPI_INT, prev, 0, c, MPI_STATUS_IGNORE));
    CHECK(token == prev);
    OK(MPI_Comm_free(&c));
    return size;
}

int main(int argc, char **argv) {
    MPI_Session s;
    int flag, size = 0;
    CHECK(argc == 2);
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s));
    size = ring(s, "first");
    OK(MPI_Session_finalize(&s));
    if (!strcmp(argv[1], "only")) {
        OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s));
        ring(s, "second");
        OK(MPI_Session_finalize(&s));
        OK(MPI_Initialized(&flag)); CHECK(!flag);
    } else {
        int n;
        OK(MPI_Init(&argc, &argv));
        OK(MPI_Comm_size(MPI_COMM_WORLD, &n)); CHECK(n == size);
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Finalize());
    }
    printf("%s: done on %d ranks\n", argv[1], size);
    return 0;
}

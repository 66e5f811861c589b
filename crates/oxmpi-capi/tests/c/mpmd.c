/* One rank of an MPMD job: prints what the launcher gave it (rank, size,
 * MPI_APPNUM, its argument, $BLOCK_VAR, its working directory) and proves the
 * blocks share one MPI_COMM_WORLD with an allreduce and a ring. */
#include "check.h"
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, flag, *appnum;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag);
    int sum = 0, app = *appnum;
    OK(MPI_Allreduce(&app, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    int token = rank, next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    OK(MPI_Sendrecv(&token, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == prev);
    char cwd[4096];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    const char *v = getenv("BLOCK_VAR");
    printf("rank %d of %d appnum %d sum %d arg %s var %s cwd %s\n", rank, size, app, sum,
           argc > 1 ? argv[1] : "-", v ? v : "-", cwd);
    OK(MPI_Finalize());
    return 0;
}

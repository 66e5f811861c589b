/* A profiling tool: its own MPI_Send counts calls and forwards to PMPI_Send. */
#include <stdarg.h>
#include "check.h"
static int sends = 0;
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
    sends++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}
/* ...and its own MPI_Pcontrol (variadic), which records the level and the first
   variadic argument before forwarding to PMPI_Pcontrol. */
static int last_level = -1, last_extra = -1;
int MPI_Pcontrol(const int level, ...) {
    va_list ap;
    va_start(ap, level);
    last_level = level;
    if (level == 7) last_extra = va_arg(ap, int);
    va_end(ap);
    return PMPI_Pcontrol(level, 42, "more", 3.5);
}
int main(int argc, char **argv) {
    int rank, size, v = 0;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int i = 0; i < 3; i++) {
        if (rank == 0) { for (int d = 1; d < size; d++) OK(MPI_Send(&i, 1, MPI_INT, d, 0, MPI_COMM_WORLD)); }
        else { OK(MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); CHECK(v == i); }
    }
    /* MPI_Sendrecv must not go through the tool's MPI_Send */
    int w; OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 1, &w, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(sends == (rank == 0 ? 3 * (size - 1) : 0));
    /* MPI_Pcontrol: no-op returning MPI_SUCCESS, any levels and extra arguments. */
    CHECK(MPI_Pcontrol(0) == MPI_SUCCESS && last_level == 0);
    CHECK(MPI_Pcontrol(7, 99) == MPI_SUCCESS && last_level == 7 && last_extra == 99);
    CHECK(PMPI_Pcontrol(1) == MPI_SUCCESS && PMPI_Pcontrol(-2, 1, 2.0, "x") == MPI_SUCCESS);
    printf("rank %d intercepted %d sends\n", rank, sends);
    OK(MPI_Finalize());
    return 0;
}

/* MPI_Comm_create_group: evens and odds each create their communicator at
 * the same time, collectively over their own members only; then an
 * MPI_Allreduce on it and on MPI_COMM_WORLD. Also: group order sets the new
 * ranks, non-members get MPI_COMM_NULL, the error handler is inherited. */
#include "check.h"

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Group world; OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_Comm parent; OK(MPI_Comm_dup(MPI_COMM_WORLD, &parent));
    OK(MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN));

    for (int it = 0; it < 50; it++) {
        /* my parity's group, in reverse world order on odd iterations */
        int mine[16], n = 0;
        for (int r = 0; r < size; r++) if (r % 2 == rank % 2) mine[n++] = r;
        if (it % 2) for (int i = 0; i < n / 2; i++) { int t = mine[i]; mine[i] = mine[n - 1 - i]; mine[n - 1 - i] = t; }
        MPI_Group g; OK(MPI_Group_incl(world, n, mine, &g));
        MPI_Comm c = MPI_COMM_NULL;
        OK(MPI_Comm_create_group(parent, g, rank % 2 ? 7 : 3, &c));
        CHECK(c != MPI_COMM_NULL);
        int sz, r, want_r = -1;
        OK(MPI_Comm_size(c, &sz)); CHECK(sz == n);
        for (int i = 0; i < n; i++) if (mine[i] == rank) want_r = i;
        OK(MPI_Comm_rank(c, &r)); CHECK(r == want_r);
        MPI_Errhandler eh; OK(MPI_Comm_get_errhandler(c, &eh)); CHECK(eh == MPI_ERRORS_RETURN);
        int x = rank, want = 0;
        for (int i = 0; i < n; i++) want += mine[i];
        OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c)); CHECK(x == want);
        x = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); CHECK(x == size);
        x = rank; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_MAX, parent)); CHECK(x == size - 1);
        OK(MPI_Comm_free(&c)); CHECK(c == MPI_COMM_NULL);
        OK(MPI_Group_free(&g));
    }
    /* only rank 0's group: the others do not call, rank 0 alone creates it */
    if (rank == 0) {
        int zero = 0; MPI_Group g; MPI_Comm c;
        OK(MPI_Group_incl(world, 1, &zero, &g));
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c));
        int sz; OK(MPI_Comm_size(c, &sz)); CHECK(sz == 1);
        int x = 5; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c)); CHECK(x == 5);
        OK(MPI_Comm_free(&c)); OK(MPI_Group_free(&g));
    }
    /* a non-member gets MPI_COMM_NULL without communicating */
    if (size > 1 && rank == 1) {
        int zero = 0; MPI_Group g; MPI_Comm c = MPI_COMM_WORLD;
        OK(MPI_Group_incl(world, 1, &zero, &g));
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c)); CHECK(c == MPI_COMM_NULL);
        OK(MPI_Group_free(&g));
    }
    int x = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); CHECK(x == size);
    OK(MPI_Comm_free(&parent)); OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

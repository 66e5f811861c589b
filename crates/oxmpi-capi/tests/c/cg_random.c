/* MPI_Comm_create_group in a loop over changing, overlapping random
 * subgroups: every rank draws the same sequence of subgroups (shared seed)
 * and calls only for those it belongs to, in the same order. A creation must
 * involve only its members and never wait on another group's creation. Each
 * new communicator is checked with an allreduce over its members. */
#include "check.h"

static unsigned long long st = 0x9e3779b97f4a7c15ULL;
static unsigned rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return (unsigned)(st >> 11); }

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Group world; OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int iters = argc > 1 ? atoi(argv[1]) : 300, made = 0;
    for (int it = 0; it < iters; it++) {
        /* a random subset (at least one member) in a random order */
        int mem[64], n = 0;
        for (int r = 0; r < size; r++) if (rnd() % 2) mem[n++] = r;
        if (n == 0) mem[n++] = rnd() % size;
        for (int i = n - 1; i > 0; i--) { int j = rnd() % (i + 1), t = mem[i]; mem[i] = mem[j]; mem[j] = t; }
        int me = -1;
        for (int i = 0; i < n; i++) if (mem[i] == rank) me = i;
        if (me < 0) continue;
        MPI_Group g; OK(MPI_Group_incl(world, n, mem, &g));
        MPI_Comm c = MPI_COMM_NULL;
        if (getenv("CG_DEBUG")) { fprintf(stderr, "rank %d it %d group", rank, it); for (int i = 0; i < n; i++) fprintf(stderr, " %d", mem[i]); fprintf(stderr, "\n"); }
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, it % 5, &c));
        CHECK(c != MPI_COMM_NULL);
        if (getenv("CG_DEBUG")) fprintf(stderr, "rank %d it %d created\n", rank, it);
        int r, sz; OK(MPI_Comm_rank(c, &r)); OK(MPI_Comm_size(c, &sz));
        CHECK(r == me && sz == n);
        int x = rank, want = 0;
        for (int i = 0; i < n; i++) want += mem[i];
        OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c)); CHECK(x == want);
        /* keep some alive for a while so ids differ between members */
        OK(MPI_Comm_free(&c));
        OK(MPI_Group_free(&g));
        made++;
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Group_free(&world));
    if (rank == 0) printf("cg_random: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

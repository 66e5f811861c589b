/* Intercommunicator duplicates made by MPI_Comm_dup and MPI_Comm_idup mixed
 * with merges, splits and MPI_Intercomm_create, also from several threads at
 * once (each on its own communicators),
 * must each get a context id of their own: an allreduce on every duplicate
 * gives the remote group's sums, never another communicator's values.
 * The groups are split low|high with the split point given in argv[1]
 * (1|2 and 2|1 on 3 ranks). */
#include "check.h"
#include <pthread.h>

#define NT 3
#define ITERS 12
static int wrank, wsize, low, nlow_world;
static MPI_Comm inters[NT], locals[NT], worlds[NT];

/* Every rank contributes a value unique to (communicator id, its world
 * rank); the intercommunicator allreduce returns the remote group's sum. */
static void check_sum(MPI_Comm c, int id, const char *what) {
    int rsize; OK(MPI_Comm_remote_size(c, &rsize));
    int v = 1000 * id + wrank, s = -1;
    OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, c));
    int want = 0;
    /* the remote group is the ranks not in my half */
    for (int r = 0; r < wsize; r++)
        if ((r < nlow_world) != low) want += 1000 * id + r;
    if (s != want) fprintf(stderr, "rank %d: %s (id %d) allreduce gives %d, want %d\n", wrank, what, id, s, want);
    CHECK(s == want);
    /* a second allreduce right after: the remote group's size */
    int b = 1, t = 0;
    OK(MPI_Allreduce(&b, &t, 1, MPI_INT, MPI_SUM, c));
    CHECK(t == rsize);
}

static void round_on(MPI_Comm inter, int id) {
    MPI_Comm a, b, c, d, e;
    MPI_Request ra, rc, re;
    OK(MPI_Comm_idup(inter, &a, &ra));
    OK(MPI_Comm_dup(inter, &b));
    OK(MPI_Comm_idup(inter, &c, &rc));
    check_sum(b, id + 1, "dup while idups are in flight");
    OK(MPI_Wait(&ra, MPI_STATUS_IGNORE));
    OK(MPI_Comm_dup(a, &d));
    OK(MPI_Wait(&rc, MPI_STATUS_IGNORE));
    check_sum(a, id + 2, "idup");
    check_sum(c, id + 3, "second idup");
    check_sum(d, id + 4, "dup of an idup");
    check_sum(inter, id + 5, "the parent");
    /* merge and split (ranks other than the leaders get no communicator)
     * while an idup is in flight */
    MPI_Comm m, l;
    OK(MPI_Comm_idup(inter, &e, &re));
    OK(MPI_Intercomm_merge(inter, !low, &m));
    int mr; OK(MPI_Comm_rank(m, &mr)); CHECK(mr == wrank);
    int v = id + wrank, got;
    OK(MPI_Allreduce(&v, &got, 1, MPI_INT, MPI_SUM, m));
    CHECK(got == wsize * id + wsize * (wsize - 1) / 2);
    int lr; OK(MPI_Comm_rank(inter, &lr));
    OK(MPI_Comm_split(inter, lr == 0 ? 3 : MPI_UNDEFINED, 0, &l));
    CHECK((lr == 0) == (l != MPI_COMM_NULL));
    if (l != MPI_COMM_NULL) {
        int mine = 7 * id + wrank, theirs = -1, rl;
        OK(MPI_Comm_rank(l, &rl)); CHECK(rl == 0);
        OK(MPI_Allreduce(&mine, &theirs, 1, MPI_INT, MPI_SUM, l));
        CHECK(theirs == 7 * id + (low ? nlow_world : 0));
        OK(MPI_Comm_free(&l));
    }
    OK(MPI_Wait(&re, MPI_STATUS_IGNORE));
    check_sum(e, id + 6, "idup across a merge and a split");
    OK(MPI_Comm_free(&m)); OK(MPI_Comm_free(&e));
    OK(MPI_Comm_free(&a)); OK(MPI_Comm_free(&b)); OK(MPI_Comm_free(&c)); OK(MPI_Comm_free(&d));
}

static void *worker(void *arg) {
    int t = (int)(long)arg;
    for (int it = 0; it < ITERS; it++) {
        round_on(inters[t], 100 * (t + 1) + 10 * it);
        /* a new intercommunicator between the halves, made while the other
         * threads agree on ids */
        MPI_Comm x;
        OK(MPI_Intercomm_create(locals[t], 0, worlds[t], low ? nlow_world : 0, 11 + t, &x));
        check_sum(x, 100 * (t + 1) + 10 * it + 7, "a new intercommunicator");
        OK(MPI_Comm_free(&x));
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    int nlow = argc > 1 ? atoi(argv[1]) : wsize / 2;
    nlow_world = nlow;
    if (wsize < 2 || nlow < 1 || nlow >= wsize) {
        if (wrank == 0) printf("inter_dup_mix: all checks passed on %d ranks\n", wsize);
        MPI_Finalize();
        return 0;
    }
    low = wrank < nlow;
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? nlow : 0, 7, &inter));
    for (int it = 0; it < ITERS; it++) round_on(inter, 10 * it);
    if (provided == MPI_THREAD_MULTIPLE) {
        for (int t = 0; t < NT; t++) {
            OK(MPI_Comm_dup(inter, &inters[t]));
            OK(MPI_Comm_dup(local, &locals[t]));
            OK(MPI_Comm_dup(MPI_COMM_WORLD, &worlds[t]));
        }
        pthread_t th[NT];
        for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
        /* the main thread works on the parent meanwhile */
        for (int it = 0; it < ITERS; it++) round_on(inter, 5000 + 10 * it);
        for (int t = 0; t < NT; t++) pthread_join(th[t], NULL);
        for (int t = 0; t < NT; t++) {
            OK(MPI_Comm_free(&inters[t])); OK(MPI_Comm_free(&locals[t])); OK(MPI_Comm_free(&worlds[t]));
        }
    }
    OK(MPI_Comm_free(&inter)); OK(MPI_Comm_free(&local));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("inter_dup_mix: all checks passed on %d ranks (split %d|%d, threads: %s)\n", wsize, nlow, wsize - nlow, provided == MPI_THREAD_MULTIPLE ? "yes" : "no");
    MPI_Finalize();
    return 0;
}

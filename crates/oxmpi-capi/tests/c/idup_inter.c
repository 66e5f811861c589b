/* MPI_Comm_idup on an intercommunicator returns at once and completes in
 * the background: point-to-point traffic between the idup and its wait
 * (which would deadlock if the call blocked), a dup of the duplicate, and
 * several threads each running idups on their own intercommunicator with
 * traffic before the wait. */
#include "check.h"
#include <pthread.h>

static int rank, size, sender;
static MPI_Comm inters[4], intras[4];

static int inter_sum(MPI_Comm c) {
    int r, s; OK(MPI_Comm_rank(c, &r));
    OK(MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, c));
    return s;
}

/* The low group's rank 0 sends first and the high group's rank 0 answers:
 * with a blocking idup, the high side would sit in the idup waiting for the
 * low side, which waits for the answer. */
static void exchange(MPI_Comm inter, int tag) {
    int r; OK(MPI_Comm_rank(inter, &r));
    if (r != 0) return;
    int v = tag;
    if (sender) {
        OK(MPI_Send(&v, 1, MPI_INT, 0, tag, inter));
        OK(MPI_Recv(&v, 1, MPI_INT, 0, tag, inter, MPI_STATUS_IGNORE));
        CHECK(v == tag + 1);
    } else {
        OK(MPI_Recv(&v, 1, MPI_INT, 0, tag, inter, MPI_STATUS_IGNORE));
        v++;
        OK(MPI_Send(&v, 1, MPI_INT, 0, tag, inter));
    }
}

static void one_round(MPI_Comm inter, MPI_Comm intra, int tag) {
    MPI_Comm d = MPI_COMM_NULL, e = MPI_COMM_NULL;
    MPI_Request rq[2];
    int lsize, rsize;
    OK(MPI_Comm_size(inter, &lsize)); OK(MPI_Comm_remote_size(inter, &rsize));
    if (sender) { OK(MPI_Comm_idup(inter, &d, &rq[0])); exchange(inter, tag); }
    else { exchange(inter, tag); OK(MPI_Comm_idup(inter, &d, &rq[0])); }
    OK(MPI_Comm_dup(intra, &e)); rq[1] = MPI_REQUEST_NULL;
    /* more traffic on the parent while both are in flight */
    exchange(inter, tag + 2);
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    int flag; OK(MPI_Comm_test_inter(d, &flag)); CHECK(flag);
    int l2, r2; OK(MPI_Comm_size(d, &l2)); OK(MPI_Comm_remote_size(d, &r2));
    CHECK(l2 == lsize && r2 == rsize);
    int res; OK(MPI_Comm_compare(d, inter, &res)); CHECK(res == MPI_CONGRUENT);
    /* the remote group's rank sum */
    int want = rsize * (rsize - 1) / 2;
    int got0 = inter_sum(d);
    if (got0 != want) fprintf(stderr, "rank %d: idup sums %d, want %d (rsize %d)\n", rank, got0, want, rsize);
    CHECK(got0 == want);
    exchange(d, tag + 4);
    /* a dup of the dup (uses its local intracommunicator) */
    MPI_Comm dd; OK(MPI_Comm_dup(d, &dd)); int got = inter_sum(dd); if (got != want) fprintf(stderr, "rank %d: dup of dup sums %d, want %d\n", rank, got, want); CHECK(got == want); OK(MPI_Comm_free(&dd));
    int s = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_SUM, e)); CHECK(s == lsize);
    OK(MPI_Comm_free(&d)); OK(MPI_Comm_free(&e));
}

/* A thread's round: an idup on its own intercommunicator, traffic on it
 * before the wait (the low group's leader sends first, the high group's
 * leader answers before it calls idup), then traffic on the new one. */
static void thread_round(MPI_Comm inter, int tag) {
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Request rq;
    if (sender) { OK(MPI_Comm_idup(inter, &d, &rq)); exchange(inter, tag); }
    else { exchange(inter, tag); OK(MPI_Comm_idup(inter, &d, &rq)); }
    exchange(inter, tag + 2);
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int flag; OK(MPI_Comm_test_inter(d, &flag)); CHECK(flag);
    exchange(d, tag + 4);
    OK(MPI_Comm_free(&d));
}

static void *worker(void *arg) {
    int t = (int)(long)arg;
    for (int it = 0; it < 10; it++) thread_round(inters[t], 100 * t + 10 * it);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2) {
        if (rank == 0) printf("idup_inter: all checks passed on %d ranks\n", size);
        MPI_Finalize();
        return 0;
    }
    int half = size / 2;
    sender = rank < half;
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, sender, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, sender ? half : 0, 5, &inter));
    int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 10;
    for (int it = 0; it < rounds; it++) one_round(inter, local, 10 * it);
    if (provided == MPI_THREAD_MULTIPLE) {
        int nt = 3;
        for (int t = 0; t < nt; t++) { OK(MPI_Comm_dup(inter, &inters[t])); OK(MPI_Comm_dup(local, &intras[t])); }
        pthread_t th[4];
        for (int t = 0; t < nt; t++) pthread_create(&th[t], NULL, worker, (void *)(long)t);
        for (int t = 0; t < nt; t++) pthread_join(th[t], NULL);
        for (int t = 0; t < nt; t++) { OK(MPI_Comm_free(&inters[t])); OK(MPI_Comm_free(&intras[t])); }
    }
    OK(MPI_Comm_free(&inter)); OK(MPI_Comm_free(&local));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("idup_inter: all checks passed on %d ranks (threads: %s)\n", size, provided == MPI_THREAD_MULTIPLE ? "yes" : "no");
    MPI_Finalize();
    return 0;
}

/* Concurrent MPI_Comm_spawn from several threads of one process
 * (MPI_THREAD_MULTIPLE). Every parent rank runs NTHREADS threads; thread t
 * spawns t + 1 children over its own duplicate of MPI_COMM_WORLD (root
 * t % size), and one more thread per rank spawns one child over
 * MPI_COMM_SELF, so spawns over different communicators (and with different
 * roots) run at the same time, ROUNDS times each. Each thread checks that its
 * intercommunicator reaches its own children and no others: the children
 * were told the thread's number in argv, answer it over point-to-point and
 * an allreduce, and the remote sizes match. Then each side disconnects.
 *   spawn_threads            the parents (run on any number of ranks)
 *   spawn_threads child T K  a child of thread T's spawn of K children */
#include "check.h"
#include <pthread.h>

#define NTHREADS 3
#define ROUNDS 2
#define SELF_TAG 99

static const char *prog;
static MPI_Comm comms[NTHREADS + 1];
static pthread_barrier_t start;
static int wrank, wsize;

/* The tag a thread's children carry: thread t over a world duplicate, or
 * SELF_TAG + world rank over MPI_COMM_SELF. */
static void *spawner(void *arg) {
    int t = (int)(size_t)arg;
    int over_self = t == NTHREADS;
    MPI_Comm comm = comms[t];
    int tag = over_self ? SELF_TAG + wrank : t;
    int kids = over_self ? 1 : t + 1;
    int root = over_self ? 0 : t % wsize;
    int crank;
    OK(MPI_Comm_rank(comm, &crank));
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&start);
        char tagstr[16], kidstr[16];
        snprintf(tagstr, sizeof tagstr, "%d", tag);
        snprintf(kidstr, sizeof kidstr, "%d", kids);
        char *args[] = {"child", tagstr, kidstr, NULL};
        int errs[8];
        MPI_Comm inter;
        OK(MPI_Comm_spawn(prog, args, kids, MPI_INFO_NULL, root, comm, &inter, errs));
        for (int i = 0; i < kids; i++) CHECK(errs[i] == MPI_SUCCESS);
        int rsize;
        OK(MPI_Comm_remote_size(inter, &rsize));
        CHECK(rsize == kids);
        /* Every child tells every parent its tag and rank. */
        for (int c = 0; c < kids; c++) {
            int got[2] = {-1, -1};
            OK(MPI_Recv(got, 2, MPI_INT, c, 5, inter, MPI_STATUS_IGNORE));
            CHECK(got[0] == tag && got[1] == c);
        }
        /* Each side gets the other's sum: the children give tag * 1000 + 1. */
        int mine = 1, sum = 0;
        OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
        CHECK(sum == kids * (tag * 1000 + 1));
        /* Parents' ranks in the intercommunicator are those in `comm`. */
        int irank;
        OK(MPI_Comm_rank(inter, &irank));
        CHECK(irank == crank);
        OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL);
    }
    return NULL;
}

int main(int argc, char **argv) {
    prog = argv[0];
    MPI_Comm parent;
    if (argc == 4 && strcmp(argv[1], "child") == 0) {
        OK(MPI_Init(&argc, &argv));
        OK(MPI_Comm_get_parent(&parent));
        CHECK(parent != MPI_COMM_NULL);
        int tag = atoi(argv[2]), kids = atoi(argv[3]), rank, size, psize;
        OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        OK(MPI_Comm_remote_size(parent, &psize));
        CHECK(size == kids);
        /* A spawn over MPI_COMM_SELF has one parent. */
        CHECK(tag >= SELF_TAG ? psize == 1 : psize >= 1);
        int msg[2] = {tag, rank};
        for (int p = 0; p < psize; p++) OK(MPI_Send(msg, 2, MPI_INT, p, 5, parent));
        int mine = tag * 1000 + 1, sum = 0;
        OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, parent));
        CHECK(sum == psize);
        OK(MPI_Comm_disconnect(&parent));
        OK(MPI_Finalize());
        return 0;
    }
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    for (int t = 0; t < NTHREADS; t++) OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    comms[NTHREADS] = MPI_COMM_SELF;
    pthread_barrier_init(&start, NULL, NTHREADS + 1);
    pthread_t th[NTHREADS + 1];
    for (int t = 0; t <= NTHREADS; t++) CHECK(pthread_create(&th[t], NULL, spawner, (void *)(size_t)t) == 0);
    for (int t = 0; t <= NTHREADS; t++) CHECK(pthread_join(th[t], NULL) == 0);
    pthread_barrier_destroy(&start);
    for (int t = 0; t < NTHREADS; t++) OK(MPI_Comm_free(&comms[t]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("concurrent spawns passed on %d parents\n", wsize);
    OK(MPI_Finalize());
    return 0;
}

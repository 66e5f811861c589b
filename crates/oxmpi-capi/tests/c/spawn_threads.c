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
 *   spawn_threads child T K  a child of thread T's spawn of K children
 *   spawn_threads join       ranks 0 and 1 join over a socket in one thread
 *                            while another makes communicators: the joined
 *                            communicator's context id is distinct from all
 *                            of theirs (messages on each reach only it) */
#include "check.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* Ranks 0 and 1: a connected loopback socket (rank 0 listens). */
static int socket_pair_with_other(int rank) {
    int fd = -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
        socklen_t al = sizeof a;
        CHECK(getsockname(l, (struct sockaddr *)&a, &al) == 0);
        int p = ntohs(a.sin_port);
        OK(MPI_Send(&p, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        int p;
        OK(MPI_Recv(&p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        a.sin_port = htons(p);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    }
    CHECK(fd >= 0);
    return fd;
}

enum { MADE = 40 };
static MPI_Comm made[MADE], joined;
static int join_fd;

static void *joiner(void *arg) {
    OK(MPI_Comm_join(join_fd, &joined));
    return NULL;
}

static void *maker(void *arg) {
    /* Spread over the join's time (a few milliseconds), so that ids are
     * picked while the join picks its own. */
    for (int i = 0; i < MADE; i++) {
        OK(MPI_Comm_dup(MPI_COMM_SELF, &made[i]));
        usleep(500);
    }
    return NULL;
}

static void join_while_making(void) {
    if (wrank < 2) {
        join_fd = socket_pair_with_other(wrank);
        pthread_t a, b;
        CHECK(pthread_create(&a, NULL, joiner, NULL) == 0);
        CHECK(pthread_create(&b, NULL, maker, NULL) == 0);
        CHECK(pthread_join(a, NULL) == 0 && pthread_join(b, NULL) == 0);
        close(join_fd);
        /* A receive from any source on every communicator, then one message
         * on each: to ourselves on the duplicates, to the other side on the
         * joined one. A shared context id lets one take another's message. */
        int got[MADE + 1], val[MADE + 1];
        MPI_Request rq[2 * (MADE + 1)];
        for (int i = 0; i < MADE; i++) OK(MPI_Irecv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, made[i], &rq[i]));
        OK(MPI_Irecv(&got[MADE], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, joined, &rq[MADE]));
        val[MADE] = 5000 + wrank;
        OK(MPI_Isend(&val[MADE], 1, MPI_INT, 0, 1, joined, &rq[2 * MADE + 1]));
        for (int i = 0; i < MADE; i++) {
            val[i] = i;
            OK(MPI_Isend(&val[i], 1, MPI_INT, 0, 1, made[i], &rq[MADE + 1 + i]));
        }
        OK(MPI_Waitall(2 * (MADE + 1), rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < MADE; i++) CHECK(got[i] == i);
        CHECK(got[MADE] == 5001 - wrank);
        for (int i = 0; i < MADE; i++) OK(MPI_Comm_free(&made[i]));
        OK(MPI_Comm_disconnect(&joined));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0) printf("join beside communicator creation passed\n");
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
    if (argc == 2 && strcmp(argv[1], "join") == 0) {
        CHECK(wsize >= 2);
        join_while_making();
        OK(MPI_Finalize());
        return 0;
    }
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

/* Client/server between two separately launched jobs.
 *   connect_accept server FILE   rank 0 opens a port and writes its name to FILE
 *                                (renamed into place), the job accepts
 *   connect_accept client FILE   reads FILE, the job connects
 *   connect_accept forged FILE   connects with the secret of FILE's port name
 *                                altered: must fail with MPI_ERR_PORT, not hang
 *   connect_accept join          ranks 0 and 1 join over a socket pair of theirs,
 *                                twice, then create many communicators on both
 *                                sides and talk on all of them (context ids distinct)
 *   connect_accept publish NAME  as server, but the port goes out through
 *                                MPI_Publish_name under NAME (the launcher's
 *                                name service, shared by separate mpiexecs)
 *   connect_accept lookup NAME   as client, finding the port by MPI_Lookup_name
 *   connect_accept names NAME    within one job (2+ ranks): rank 0 publishes a
 *                                port under NAME (twice: MPI_ERR_SERVICE),
 *                                rank 1 looks it up, then after rank 0
 *                                unpublishes it (twice: MPI_ERR_SERVICE) finds
 *                                nothing (MPI_ERR_NAME)
 * Server and client check the intercommunicator: sizes, point-to-point both
 * ways, rooted and all-to-all collectives across, a merge and an allreduce on
 * it, then MPI_Comm_disconnect. */
#include "check.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static void read_port(const char *file, char *port) {
    for (int i = 0; i < 6000; i++) {
        FILE *f = fopen(file, "r");
        if (f) {
            if (fgets(port, MPI_MAX_PORT_NAME, f)) {
                fclose(f);
                port[strcspn(port, "\n")] = 0;
                return;
            }
            fclose(f);
        }
        usleep(10000);
    }
    fprintf(stderr, "no port name in %s\n", file);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* The checks both sides run; `server` says which side this is. */
static void exercise(MPI_Comm inter, int server) {
    int rank, size, rsize, flag;
    OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag);
    OK(MPI_Comm_rank(inter, &rank));
    OK(MPI_Comm_size(inter, &size));
    OK(MPI_Comm_remote_size(inter, &rsize));
    int wsize;
    OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    CHECK(size == wsize);
    /* Every rank sends to each remote rank and receives from each. */
    for (int r = 0; r < rsize; r++) {
        int out[2] = {server ? 1000 + rank : 2000 + rank, r}, in[2] = {-1, -1};
        MPI_Status st;
        OK(MPI_Sendrecv(out, 2, MPI_INT, r, 7, in, 2, MPI_INT, r, 7, inter, &st));
        CHECK(in[0] == (server ? 2000 + r : 1000 + r) && in[1] == rank);
        CHECK(st.MPI_SOURCE == r && st.MPI_TAG == 7);
    }
    /* A larger message (rendezvous / several packets). */
    enum { BIG = 300000 };
    int *big = malloc(BIG * sizeof(int));
    if (rank == 0) {
        if (server) {
            for (int i = 0; i < BIG; i++) big[i] = i * 3;
            OK(MPI_Send(big, BIG, MPI_INT, 0, 9, inter));
        } else {
            OK(MPI_Recv(big, BIG, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE));
            for (int i = 0; i < BIG; i++) CHECK(big[i] == i * 3);
        }
    }
    free(big);
    /* Bcast from server rank 0 to the client group. */
    int v = server ? 0 : -1;
    if (server) {
        if (rank == 0) v = 4242;
        OK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    } else {
        OK(MPI_Bcast(&v, 1, MPI_INT, 0, inter));
        CHECK(v == 4242);
    }
    /* Allreduce across: each side gets the other side's sum. */
    int mine = server ? rank + 1 : 100 * (rank + 1), sum = 0;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    int expect = server ? 100 * rsize * (rsize + 1) / 2 : rsize * (rsize + 1) / 2;
    CHECK(sum == expect);
    OK(MPI_Barrier(inter));
    /* Merge: server first. */
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(inter, server ? 0 : 1, &merged));
    int mrank, msize;
    OK(MPI_Comm_rank(merged, &mrank));
    OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == size + rsize);
    CHECK(mrank == (server ? rank : rsize + rank));
    int total = 0, one = mrank;
    OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize * (msize - 1) / 2);
    OK(MPI_Comm_free(&merged));
}

/* Ranks 0 and 1 join over a loopback socket of theirs (rank 0 listens, rank 1
 * connects); MPI_COMM_NULL on the other ranks. `earlier` is a joined
 * communicator that must stay distinct. */
static MPI_Comm join_pair(int rank, MPI_Comm earlier) {
    MPI_Comm inter = MPI_COMM_NULL;
    int fd = -1;
    if (rank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        CHECK(bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, 1) == 0);
        socklen_t al = sizeof a;
        CHECK(getsockname(l, (struct sockaddr *)&a, &al) == 0);
        int p = ntohs(a.sin_port);
        OK(MPI_Send(&p, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
        fd = accept(l, NULL, NULL);
        close(l);
    } else if (rank == 1) {
        int p;
        OK(MPI_Recv(&p, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(p);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    }
    if (rank < 2) {
        CHECK(fd >= 0);
        OK(MPI_Comm_join(fd, &inter));
        int rs, x = rank, y = -1, cmp;
        OK(MPI_Comm_remote_size(inter, &rs));
        CHECK(rs == 1);
        if (earlier != MPI_COMM_NULL) {
            OK(MPI_Comm_compare(inter, earlier, &cmp));
            CHECK(cmp != MPI_IDENT);
        }
        OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE));
        CHECK(y == 1 - rank);
        close(fd);
    }
    return inter;
}

/* After a join: many communicators made on both sides (duplicates of the
 * world, of the joined intercommunicator and of MPI_COMM_SELF, in the same
 * order on ranks 0 and 1; rank 2 takes part in the world's only), then on
 * every one a receive from any source with any tag posted first and a
 * message saying which communicator it was sent on: a context id shared by
 * two of them (or with the joined one) delivers a message to the wrong one. */
enum { NEW = 20 };
static void after_join(MPI_Comm inter, int rank) {
    MPI_Comm c[3 * NEW + 1];
    int kind[3 * NEW + 1], n = 0;
    for (int i = 0; i < NEW; i++) {
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[n]));
        kind[n++] = 0;
        if (rank < 2) {
            OK(MPI_Comm_dup(inter, &c[n]));
            kind[n++] = 1;
            OK(MPI_Comm_dup(MPI_COMM_SELF, &c[n]));
            kind[n++] = 2;
        }
    }
    if (rank < 2) {
        c[n] = inter;
        kind[n++] = 1;
        int got[3 * NEW + 1], val[3 * NEW + 1];
        MPI_Request rq[2 * (3 * NEW + 1)];
        for (int i = 0; i < n; i++) OK(MPI_Irecv(&got[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c[i], &rq[i]));
        for (int i = n - 1; i >= 0; i--) {
            val[i] = 1000 * kind[i] + i;
            int to = kind[i] == 0 ? 1 - rank : 0;
            OK(MPI_Isend(&val[i], 1, MPI_INT, to, i, c[i], &rq[n + i]));
        }
        MPI_Status st[2 * (3 * NEW + 1)];
        OK(MPI_Waitall(2 * n, rq, st));
        for (int i = 0; i < n; i++) CHECK(got[i] == 1000 * kind[i] + i && st[i].MPI_TAG == i);
        n--;
    }
    for (int i = 0; i < n; i++) OK(MPI_Comm_free(&c[i]));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    int rank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    const char *mode = argc > 1 ? argv[1] : "";
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter = MPI_COMM_NULL;
    if (strcmp(mode, "server") == 0) {
        if (rank == 0) {
            OK(MPI_Open_port(MPI_INFO_NULL, port));
            CHECK(strncmp(port, "oxmpi-port://", 13) == 0);
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", argv[2]);
            FILE *f = fopen(tmp, "w");
            CHECK(f != NULL);
            fprintf(f, "%s\n", port);
            fclose(f);
            CHECK(rename(tmp, argv[2]) == 0);
        }
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        exercise(inter, 1);
        OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL);
        if (rank == 0) {
            OK(MPI_Close_port(port));
            OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            int cls, rc = MPI_Close_port(port);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_PORT);
        }
    } else if (strcmp(mode, "client") == 0) {
        if (rank == 0) read_port(argv[2], port);
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        exercise(inter, 0);
        OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL);
    } else if (strcmp(mode, "forged") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        if (rank == 0) read_port(argv[2], port);
        /* Another secret of the same length, same address. */
        char *s = port + 13;
        *s = *s == 'a' ? 'b' : 'a';
        int cls, rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL);
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        OK(MPI_Error_string(rc, msg, &len));
        if (rank == 0) printf("forged port refused: %s\n", msg);
        /* Not a port name at all. */
        rc = MPI_Comm_connect("tcp://127.0.0.1:1", MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL);
    } else if (strcmp(mode, "publish") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int cls, rc;
        if (rank == 0) {
            OK(MPI_Open_port(MPI_INFO_NULL, port));
            OK(MPI_Publish_name(argv[2], MPI_INFO_NULL, port));
            rc = MPI_Publish_name(argv[2], MPI_INFO_NULL, port);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_SERVICE);
        }
        OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        exercise(inter, 1);
        OK(MPI_Comm_disconnect(&inter));
        if (rank == 0) {
            OK(MPI_Unpublish_name(argv[2], MPI_INFO_NULL, port));
            rc = MPI_Unpublish_name(argv[2], MPI_INFO_NULL, port);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_SERVICE);
            char again[MPI_MAX_PORT_NAME];
            rc = MPI_Lookup_name(argv[2], MPI_INFO_NULL, again);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_NAME);
            OK(MPI_Close_port(port));
        }
    } else if (strcmp(mode, "names") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int cls, rc, size;
        OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        CHECK(size >= 2);
        if (rank == 0) {
            OK(MPI_Open_port(MPI_INFO_NULL, port));
            OK(MPI_Publish_name(argv[2], MPI_INFO_NULL, port));
            rc = MPI_Publish_name(argv[2], MPI_INFO_NULL, port);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_SERVICE);
        }
        OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD));
        if (rank == 1) {
            char found[MPI_MAX_PORT_NAME] = "";
            OK(MPI_Lookup_name(argv[2], MPI_INFO_NULL, found));
            CHECK(strcmp(found, port) == 0);
            rc = MPI_Lookup_name("oxmpi-no-such-service", MPI_INFO_NULL, found);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_NAME);
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            OK(MPI_Error_string(rc, msg, &len));
            printf("lookup refused: %s\n", msg);
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            OK(MPI_Unpublish_name(argv[2], MPI_INFO_NULL, port));
            rc = MPI_Unpublish_name(argv[2], MPI_INFO_NULL, port);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_SERVICE);
            OK(MPI_Close_port(port));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            char found[MPI_MAX_PORT_NAME];
            rc = MPI_Lookup_name(argv[2], MPI_INFO_NULL, found);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_NAME);
            printf("names passed\n");
        }
    } else if (strcmp(mode, "lookup") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        if (rank == 0) {
            int cls, rc = MPI_Lookup_name("oxmpi-no-such-service", MPI_INFO_NULL, port);
            OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_NAME && port[0] == 0);
            for (int i = 0; i < 6000; i++) {
                if (MPI_Lookup_name(argv[2], MPI_INFO_NULL, port) == MPI_SUCCESS) break;
                usleep(10000);
            }
            CHECK(strncmp(port, "oxmpi-port://", 13) == 0);
        }
        OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
        exercise(inter, 0);
        OK(MPI_Comm_disconnect(&inter));
    } else if (strcmp(mode, "join") == 0) {
        /* Two joins, the first kept while the second is made, each followed by
         * many communicator creations on both sides (and on rank 2, which is in
         * none of them), with an idup in flight across the second join. */
        MPI_Comm first = join_pair(rank, MPI_COMM_NULL);
        after_join(first, rank);
        MPI_Comm pending = MPI_COMM_NULL;
        MPI_Request idup = MPI_REQUEST_NULL;
        if (rank < 2) OK(MPI_Comm_idup(MPI_COMM_SELF, &pending, &idup));
        MPI_Comm second = join_pair(rank, first);
        OK(MPI_Wait(&idup, MPI_STATUS_IGNORE));
        after_join(second, rank);
        if (rank < 2) {
            /* The two joined communicators and the idup's are distinct. */
            int a = 10 + rank, b = 20 + rank, got[2] = {-1, -1}, self = -1;
            MPI_Request rq[5];
            OK(MPI_Irecv(&got[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, first, &rq[0]));
            OK(MPI_Irecv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, second, &rq[1]));
            OK(MPI_Irecv(&self, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, pending, &rq[2]));
            OK(MPI_Isend(&b, 1, MPI_INT, 0, 4, second, &rq[3]));
            OK(MPI_Isend(&a, 1, MPI_INT, 0, 4, first, &rq[4]));
            int s = 30 + rank;
            OK(MPI_Send(&s, 1, MPI_INT, 0, 4, pending));
            OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
            CHECK(got[0] == 11 - rank && got[1] == 21 - rank && self == 30 + rank);
            OK(MPI_Comm_free(&pending));
            OK(MPI_Comm_disconnect(&second));
            OK(MPI_Comm_disconnect(&first));
        }
    } else {
        fprintf(stderr, "usage: connect_accept server|client|forged FILE | join\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed (%s)\n", mode);
    OK(MPI_Finalize());
    return 0;
}

/* Client/server between two separately launched jobs.
 *   connect_accept server FILE   rank 0 opens a port and writes its name to FILE
 *                                (renamed into place), the job accepts
 *   connect_accept client FILE   reads FILE, the job connects
 *   connect_accept forged FILE   connects with the secret of FILE's port name
 *                                altered: must fail with MPI_ERR_PORT, not hang
 *   connect_accept join          ranks 0 and 1 join over a socket pair of theirs
 *   connect_accept publish NAME  as server, but the port goes out through
 *                                MPI_Publish_name under NAME (the launcher's
 *                                name service, shared by separate mpiexecs)
 *   connect_accept lookup NAME   as client, finding the port by MPI_Lookup_name
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
        /* Rank 0 listens on loopback, rank 1 connects; both join. */
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
            int rs, x = rank, y = -1;
            OK(MPI_Comm_remote_size(inter, &rs));
            CHECK(rs == 1);
            OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE));
            CHECK(y == 1 - rank);
            OK(MPI_Comm_disconnect(&inter));
            close(fd);
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

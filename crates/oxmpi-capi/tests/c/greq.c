/* Generalized requests: query/free/cancel callbacks on every completion path,
 * MPI_Request_free before and after MPI_Grequest_complete, errors from the
 * callbacks, MPI_Request_get_status, and completion by another thread. */
#include <pthread.h>
#include <unistd.h>
#include "check.h"

struct greq {
    int queries, frees, cancels, last_complete;
    int query_err, free_err;
    int source, tag, nints, cancelled;
};

static int query_fn(void *extra, MPI_Status *st) {
    struct greq *g = extra;
    g->queries++;
    st->MPI_SOURCE = g->source;
    st->MPI_TAG = g->tag;
    OK(MPI_Status_set_cancelled(st, g->cancelled));
    OK(MPI_Status_set_elements(st, MPI_INT, g->nints));
    return g->query_err;
}
static int free_fn(void *extra) {
    struct greq *g = extra;
    g->frees++;
    return g->free_err;
}
static int cancel_fn(void *extra, int complete) {
    struct greq *g = extra;
    g->cancels++;
    g->last_complete = complete;
    g->cancelled = 1;
    return MPI_SUCCESS;
}

static void init(struct greq *g, int source, int tag, int nints) {
    memset(g, 0, sizeof *g);
    g->source = source; g->tag = tag; g->nints = nints;
}

static void *completer(void *arg) {
    usleep(50000);
    OK(MPI_Grequest_complete(*(MPI_Request *)arg));
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rank, size, flag, idx, count;
    MPI_Status st;
    MPI_Request r, rs[4];
    struct greq g, h, k;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Test before completion: not done, no callback; wait after: query then free, once. */
    init(&g, 5, 17, 3);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Test(&r, &flag, &st));
    CHECK(!flag && g.queries == 0 && g.frees == 0 && r != MPI_REQUEST_NULL);
    OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(!flag && g.queries == 0);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && g.queries == 1 && g.frees == 0 && st.MPI_SOURCE == 5 && st.MPI_TAG == 17);
    OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && g.queries == 2 && g.frees == 1);
    CHECK(st.MPI_SOURCE == 5 && st.MPI_TAG == 17);
    OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 3);
    OK(MPI_Get_elements(&st, MPI_INT, &count)); CHECK(count == 3);
    OK(MPI_Test_cancelled(&st, &flag)); CHECK(!flag);

    /* MPI_STATUS_IGNORE: query still runs (with a status of MPI's), then free. */
    init(&g, 0, 0, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Grequest_complete(r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(g.queries == 1 && g.frees == 1);

    /* Test completes it. */
    init(&g, 1, 2, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Grequest_complete(r));
    OK(MPI_Test(&r, &flag, &st));
    CHECK(flag && r == MPI_REQUEST_NULL && st.MPI_TAG == 2 && g.frees == 1 && g.queries == 1);

    /* MPI_Request_free before completion: free_fn at MPI_Grequest_complete, once, no query. */
    init(&g, 0, 0, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    MPI_Request keep = r;
    OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && g.frees == 0);
    OK(MPI_Grequest_complete(keep));
    CHECK(g.frees == 1 && g.queries == 0);

    /* MPI_Request_free after completion: free_fn at once. */
    init(&g, 0, 0, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Grequest_complete(r));
    OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && g.frees == 1 && g.queries == 0);

    /* Cancel before and after completion: cancel_fn told which. */
    init(&g, 0, 0, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Cancel(&r));
    CHECK(g.cancels == 1 && g.last_complete == 0);
    OK(MPI_Grequest_complete(r));
    OK(MPI_Cancel(&r));
    CHECK(g.cancels == 2 && g.last_complete == 1);
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag)); CHECK(flag);
    CHECK(g.frees == 1);

    /* Null callbacks are allowed. */
    OK(MPI_Grequest_start(NULL, NULL, NULL, NULL, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Grequest_complete(r));
    OK(MPI_Wait(&r, &st));

    /* Waitall / Waitany / Waitsome / Testall / Testany / Testsome with a real receive among them. */
    int peer = (rank + 1) % size, from = (rank + size - 1) % size, got = -1, sent = rank;
    init(&g, 10, 11, 1); init(&h, 20, 21, 2); init(&k, 30, 31, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rs[0]));
    OK(MPI_Irecv(&got, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &rs[1]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &rs[2]));
    OK(MPI_Isend(&sent, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, &rs[3]));
    MPI_Status sts[4];
    OK(MPI_Testall(4, rs, &flag, sts));
    CHECK(!flag && g.queries == 0 && h.queries == 0);
    OK(MPI_Grequest_complete(rs[2]));
    OK(MPI_Grequest_complete(rs[0]));
    OK(MPI_Waitall(4, rs, sts));
    CHECK(g.frees == 1 && h.frees == 1 && g.queries == 1 && h.queries == 1);
    CHECK(sts[0].MPI_SOURCE == 10 && sts[2].MPI_SOURCE == 20 && sts[2].MPI_TAG == 21);
    CHECK(sts[1].MPI_SOURCE == from && sts[1].MPI_TAG == 9 && got == from);
    for (int i = 0; i < 4; i++) CHECK(rs[i] == MPI_REQUEST_NULL);

    init(&g, 1, 1, 0); init(&h, 2, 2, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rs[0]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &rs[1]));
    OK(MPI_Testany(2, rs, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED);
    OK(MPI_Grequest_complete(rs[1]));
    OK(MPI_Waitany(2, rs, &idx, &st));
    CHECK(idx == 1 && st.MPI_SOURCE == 2 && h.frees == 1 && g.frees == 0 && rs[1] == MPI_REQUEST_NULL);
    OK(MPI_Grequest_complete(rs[0]));
    OK(MPI_Testany(2, rs, &idx, &flag, &st));
    CHECK(flag && idx == 0 && st.MPI_SOURCE == 1 && g.frees == 1);

    init(&g, 1, 1, 0); init(&h, 2, 2, 0); init(&k, 3, 3, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rs[0]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &rs[1]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &k, &rs[2]));
    int outcount, idxs[3];
    OK(MPI_Testsome(3, rs, &outcount, idxs, sts));
    CHECK(outcount == 0);
    OK(MPI_Grequest_complete(rs[0]));
    OK(MPI_Grequest_complete(rs[2]));
    OK(MPI_Waitsome(3, rs, &outcount, idxs, sts));
    CHECK(outcount == 2 && idxs[0] == 0 && idxs[1] == 2 && sts[0].MPI_SOURCE == 1 && sts[1].MPI_SOURCE == 3);
    CHECK(g.frees == 1 && k.frees == 1 && h.frees == 0);
    OK(MPI_Grequest_complete(rs[1]));
    OK(MPI_Testsome(3, rs, &outcount, idxs, sts));
    CHECK(outcount == 1 && idxs[0] == 1 && h.frees == 1);

    /* Errors from the callbacks: the wait returns free_fn's code if it failed, else query_fn's. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    init(&g, 0, 0, 0); g.query_err = MPI_ERR_OTHER;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Grequest_complete(r));
    CHECK(MPI_Wait(&r, &st) == MPI_ERR_OTHER);
    CHECK(g.frees == 1 && r == MPI_REQUEST_NULL);
    init(&g, 0, 0, 0); g.query_err = MPI_ERR_OTHER; g.free_err = MPI_ERR_ARG;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Grequest_complete(r));
    CHECK(MPI_Wait(&r, &st) == MPI_ERR_ARG);
    init(&g, 0, 0, 0); init(&h, 0, 0, 0); h.query_err = MPI_ERR_OTHER;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &rs[0]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &rs[1]));
    OK(MPI_Grequest_complete(rs[0]));
    OK(MPI_Grequest_complete(rs[1]));
    CHECK(MPI_Waitall(2, rs, sts) == MPI_ERR_IN_STATUS);
    CHECK(sts[1].MPI_ERROR == MPI_ERR_OTHER && g.frees == 1 && h.frees == 1);
    CHECK(rs[0] == MPI_REQUEST_NULL && rs[1] == MPI_REQUEST_NULL);
    /* Completing twice, or a request that is not generalized, is MPI_ERR_REQUEST. */
    init(&g, 0, 0, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    OK(MPI_Grequest_complete(r));
    int err, cls;
    err = MPI_Grequest_complete(r); MPI_Error_class(err, &cls); CHECK(cls == MPI_ERR_REQUEST);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Irecv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
    err = MPI_Grequest_complete(r); MPI_Error_class(err, &cls); CHECK(cls == MPI_ERR_REQUEST);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    { /* codes are not classes: compare the class */ int e_ = MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, NULL), c_; OK(MPI_Error_class(e_, &c_)); CHECK(c_ == MPI_ERR_ARG); }

    /* Completed by another thread while this one waits. */
    init(&g, 7, 8, 0);
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
    MPI_Request shared = r;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, completer, &shared) == 0);
    OK(MPI_Wait(&r, &st));
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(st.MPI_SOURCE == 7 && g.frees == 1);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("greq: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

/* Point-to-point suite: modes, wildcards, probes, persistent requests,
 * waitany/waitsome, cancel, truncation with MPI_ERRORS_RETURN, statuses. */
#include "check.h"
int rank, size;

static void modes(void) {
    int peer = rank ^ 1, out[4], in[4], i;
    if (peer >= size) return;
    static char bbuf[4096 + MPI_BSEND_OVERHEAD];
    OK(MPI_Buffer_attach(bbuf, sizeof bbuf));
    for (i = 0; i < 4; i++) out[i] = rank * 10 + i;
    if (rank % 2 == 0) {
        OK(MPI_Send(out, 4, MPI_INT, peer, 1, MPI_COMM_WORLD));
        OK(MPI_Ssend(out, 4, MPI_INT, peer, 2, MPI_COMM_WORLD));
        OK(MPI_Bsend(out, 4, MPI_INT, peer, 3, MPI_COMM_WORLD));
        OK(MPI_Recv(in, 0, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); /* peer's receive is posted */
        OK(MPI_Rsend(out, 4, MPI_INT, peer, 4, MPI_COMM_WORLD));
    } else {
        MPI_Request r; MPI_Status st; int count;
        for (int tag = 1; tag <= 3; tag++) {
            memset(in, 0, sizeof in);
            OK(MPI_Recv(in, 4, MPI_INT, peer, tag, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag);
            OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 4);
            for (i = 0; i < 4; i++) CHECK(in[i] == peer * 10 + i);
        }
        OK(MPI_Irecv(in, 4, MPI_INT, peer, 4, MPI_COMM_WORLD, &r));
        OK(MPI_Send(NULL, 0, MPI_INT, peer, 9, MPI_COMM_WORLD));
        OK(MPI_Wait(&r, &st)); CHECK(r == MPI_REQUEST_NULL);
        CHECK(in[3] == peer * 10 + 3);
    }
    void *b; int bs;
    OK(MPI_Buffer_detach(&b, &bs)); CHECK(b == bbuf && bs == (int)sizeof bbuf);
}

static void wildcards_and_probe(void) {
    /* everybody sends to 0 with tag = rank; 0 receives with wildcards */
    if (rank != 0) {
        double x = rank * 1.5;
        OK(MPI_Send(&x, 1, MPI_DOUBLE, 0, rank, MPI_COMM_WORLD));
    } else {
        int seen = 0;
        for (int k = 1; k < size; k++) {
            MPI_Status st; int count, flag = 0; double x;
            OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == st.MPI_SOURCE);
            OK(MPI_Get_count(&st, MPI_DOUBLE, &count)); CHECK(count == 1);
            OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 2);
            OK(MPI_Iprobe(st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE)); CHECK(flag);
            OK(MPI_Recv(&x, 1, MPI_DOUBLE, MPI_ANY_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
            CHECK(x == st.MPI_SOURCE * 1.5);
            seen |= 1 << st.MPI_SOURCE;
        }
        CHECK(seen == ((1 << size) - 2));
        /* nothing left with these tags (later phases may already be sending) */
        int flag = 1;
        for (int k = 1; k < size; k++) { OK(MPI_Iprobe(MPI_ANY_SOURCE, k, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE)); CHECK(!flag); }
    }
    /* MPI_PROC_NULL */
    MPI_Status st; int v = 5;
    OK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && v == 5);
    int count; OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 0);
}

static void mprobe(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[3] = {rank, rank + 1, rank + 2}, in[3];
    MPI_Request sr; MPI_Message m; MPI_Status st; int flag = 0;
    OK(MPI_Isend(out, 3, MPI_INT, next, 11, MPI_COMM_WORLD, &sr));
    OK(MPI_Mprobe(prev, 11, MPI_COMM_WORLD, &m, &st));
    CHECK(m != MPI_MESSAGE_NULL && st.MPI_SOURCE == prev);
    OK(MPI_Mrecv(in, 3, MPI_INT, &m, &st)); CHECK(m == MPI_MESSAGE_NULL);
    CHECK(in[0] == prev && in[2] == prev + 2);
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    OK(MPI_Isend(out, 3, MPI_INT, next, 12, MPI_COMM_WORLD, &sr));
    while (!flag) OK(MPI_Improbe(prev, 12, MPI_COMM_WORLD, &flag, &m, &st));
    MPI_Request rr;
    OK(MPI_Imrecv(in, 3, MPI_INT, &m, &rr));
    OK(MPI_Wait(&rr, &st)); CHECK(in[1] == prev + 1);
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
}

static void persistent(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out, in;
    MPI_Request reqs[2];
    OK(MPI_Recv_init(&in, 1, MPI_INT, prev, 21, MPI_COMM_WORLD, &reqs[0]));
    OK(MPI_Send_init(&out, 1, MPI_INT, next, 21, MPI_COMM_WORLD, &reqs[1]));
    for (int it = 0; it < 5; it++) {
        out = rank * 100 + it;
        OK(MPI_Startall(2, reqs));
        MPI_Status sts[2];
        OK(MPI_Waitall(2, reqs, sts));
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL);
        CHECK(in == prev * 100 + it && sts[0].MPI_SOURCE == prev);
    }
    /* inactive persistent requests complete at once with the empty status (as MPICH: source MPI_ANY_SOURCE) */
    MPI_Status st; OK(MPI_Wait(&reqs[0], &st)); CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
    OK(MPI_Request_free(&reqs[0])); OK(MPI_Request_free(&reqs[1]));
    CHECK(reqs[0] == MPI_REQUEST_NULL);
}

static void any_some(void) {
    if (size < 2) return;
    /* rank 0 posts receives from everybody and completes them with waitany/waitsome */
    if (rank == 0) {
        int n = size - 1, in[64], done = 0, idx, outcount, indices[64];
        MPI_Request r[64]; MPI_Status st, sts[64];
        for (int i = 0; i < n; i++) OK(MPI_Irecv(&in[i], 1, MPI_INT, i + 1, 31, MPI_COMM_WORLD, &r[i]));
        OK(MPI_Waitany(n, r, &idx, &st)); CHECK(idx >= 0 && idx < n && r[idx] == MPI_REQUEST_NULL && in[idx] == (idx + 1) * 7);
        done = 1;
        while (done < n) {
            OK(MPI_Waitsome(n, r, &outcount, indices, sts));
            CHECK(outcount >= 1);
            for (int k = 0; k < outcount; k++) { CHECK(in[indices[k]] == (indices[k] + 1) * 7); CHECK(sts[k].MPI_SOURCE == indices[k] + 1); }
            done += outcount;
        }
        OK(MPI_Waitany(n, r, &idx, &st)); CHECK(idx == MPI_UNDEFINED);
        OK(MPI_Waitsome(n, r, &outcount, indices, sts)); CHECK(outcount == MPI_UNDEFINED);
        int flag; OK(MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE)); CHECK(flag);
    } else {
        int v = rank * 7;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 31, MPI_COMM_WORLD));
    }
}

static void cancel(void) {
    MPI_Request r; MPI_Status st; int x, flag;
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag)); CHECK(flag);
    /* test on a request that never matches, then cancel */
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 998, MPI_COMM_WORLD, &r));
    OK(MPI_Test(&r, &flag, &st)); CHECK(!flag);
    OK(MPI_Request_get_status(r, &flag, &st)); CHECK(!flag);
    OK(MPI_Cancel(&r)); OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag)); CHECK(flag);
}

static void truncation(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[8] = {0}, in[2];
    MPI_Request sr; MPI_Status st;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Isend(out, 8, MPI_INT, next, 41, MPI_COMM_WORLD, &sr));
    int rc = MPI_Recv(in, 2, MPI_INT, prev, 41, MPI_COMM_WORLD, &st);
    int cls; OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE);
    char msg[MPI_MAX_ERROR_STRING]; int len;
    OK(MPI_Error_string(rc, msg, &len)); CHECK(strstr(msg, "MPI_ERR_TRUNCATE") != NULL);
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void sendrecv(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v = rank, w = -1; MPI_Status st;
    OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 51, &w, 1, MPI_INT, prev, 51, MPI_COMM_WORLD, &st));
    CHECK(w == prev && st.MPI_SOURCE == prev && st.MPI_TAG == 51);
    int buf[2] = {rank, -rank};
    OK(MPI_Sendrecv_replace(buf, 2, MPI_INT, next, 52, prev, 52, MPI_COMM_WORLD, &st));
    CHECK(buf[0] == prev && buf[1] == -prev);
    MPI_Request r; OK(MPI_Ibarrier(MPI_COMM_WORLD, &r)); OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

static void status_fields(void) {
    MPI_Status st; int count; MPI_Count cx;
    memset(&st, 0, sizeof st);
    CHECK(sizeof(MPI_Status) == 8 * sizeof(int));
    OK(MPI_Status_set_elements(&st, MPI_DOUBLE, 3));
    OK(MPI_Get_count(&st, MPI_DOUBLE, &count)); CHECK(count == 3);
    OK(MPI_Get_elements(&st, MPI_DOUBLE, &count)); CHECK(count == 3);
    OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 6);
    OK(MPI_Get_count(&st, MPI_LONG_DOUBLE, &count)); CHECK(count == MPI_UNDEFINED);
    OK(MPI_Status_set_elements_x(&st, MPI_CHAR, (MPI_Count)5 << 32));
    OK(MPI_Get_elements_x(&st, MPI_CHAR, &cx)); CHECK(cx == (MPI_Count)5 << 32);
    OK(MPI_Get_count(&st, MPI_CHAR, &count)); CHECK(count == MPI_UNDEFINED);
    int flag; OK(MPI_Status_set_cancelled(&st, 1)); OK(MPI_Test_cancelled(&st, &flag)); CHECK(flag);
    MPI_Fint f[MPI_F_STATUS_SIZE]; MPI_Status back;
    st.MPI_SOURCE = 3; OK(MPI_Status_c2f(&st, f)); CHECK(f[MPI_F_SOURCE] == 3);
    OK(MPI_Status_f2c(f, &back)); CHECK(back.MPI_SOURCE == 3);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    modes(); wildcards_and_probe();
    /* rank 0 probes MPI_ANY_TAG above: no later phase may send to it before it is done */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    mprobe(); persistent(); any_some();
    cancel(); truncation(); sendrecv(); status_fields();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("p2p: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

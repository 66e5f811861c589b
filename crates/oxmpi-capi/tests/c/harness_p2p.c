/* Test-suite plumbing for point-to-point and datatypes, harness style (errors
 * counted under MPI_ERRORS_RETURN, " No Errors" on rank 0): 1500 outstanding
 * irecvs completed out of order, MPI_ANY_SOURCE with waitany / waitsome /
 * testsome, zero-byte messages and self-sends, iprobe/improbe/mrecv,
 * MPI_Sendrecv_replace with a strided datatype, a vector of a struct,
 * MPI_Type_create_resized, MPI_Get_address arithmetic, MPI_Ssend/Issend
 * completion, persistent requests, MPI_Request_get_status, cancelling a
 * receive, MPI_Buffer_attach/detach with MPI_Bsend, and 300 communicators
 * alive at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

static int errs = 0, rank, size;
#define EXPECT(c) do { if (!(c)) { errs++; fprintf(stderr, "[%d] %s:%d: %s\n", rank, __FILE__, __LINE__, #c); } } while (0)
#define RC(call) do { int rc_ = (call); if (rc_ != MPI_SUCCESS) { char s_[MPI_MAX_ERROR_STRING]; int l_; MPI_Error_string(rc_, s_, &l_); errs++; fprintf(stderr, "[%d] %s:%d: %s -> %s\n", rank, __FILE__, __LINE__, #call, s_); } } while (0)

struct particle { double x, y; int id; char tag; };

int main(int argc, char **argv) {
    RC(MPI_Init(&argc, &argv));
    RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    RC(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* many outstanding receives, matched by tag, completed by waitall */
    {
        enum { N = 1500 };
        int *in = malloc(N * sizeof(int)), *out = malloc(N * sizeof(int));
        MPI_Request *r = malloc(2 * N * sizeof(MPI_Request));
        for (int i = 0; i < N; i++) RC(MPI_Irecv(&in[i], 1, MPI_INT, prev, i, MPI_COMM_WORLD, &r[i]));
        for (int i = N - 1; i >= 0; i--) { out[i] = rank * 100000 + i; RC(MPI_Isend(&out[i], 1, MPI_INT, next, i, MPI_COMM_WORLD, &r[N + i])); }
        MPI_Status *st = malloc(2 * N * sizeof(MPI_Status));
        RC(MPI_Waitall(2 * N, r, st));
        for (int i = 0; i < N; i++) { EXPECT(in[i] == prev * 100000 + i); EXPECT(st[i].MPI_TAG == i && st[i].MPI_SOURCE == prev); EXPECT(r[i] == MPI_REQUEST_NULL); }
        free(in); free(out); free(r); free(st);
    }
    /* MPI_ANY_SOURCE receives completed with waitany / waitsome / testsome */
    if (rank == 0) {
        int n = size - 1, got = 0, *buf = malloc(3 * size * sizeof(int)), seen[64] = { 0 };
        MPI_Request *r = malloc(3 * size * sizeof(MPI_Request));
        for (int i = 0; i < n; i++) RC(MPI_Irecv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &r[i]));
        for (int k = 0; k < n; k++) {
            int idx; MPI_Status st;
            RC(MPI_Waitany(n, r, &idx, &st));
            EXPECT(idx >= 0 && idx < n && r[idx] == MPI_REQUEST_NULL);
            EXPECT(buf[idx] == st.MPI_SOURCE * 7 && !seen[st.MPI_SOURCE]);
            seen[st.MPI_SOURCE] = 1;
        }
        { int idx; RC(MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE)); EXPECT(idx == MPI_UNDEFINED); }
        for (int i = 0; i < n; i++) RC(MPI_Irecv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &r[i]));
        RC(MPI_Barrier(MPI_COMM_WORLD));
        while (got < n) {
            int oc, idx[64]; MPI_Status st[64];
            RC(MPI_Waitsome(n, r, &oc, idx, st));
            EXPECT(oc >= 1);
            for (int j = 0; j < oc; j++) EXPECT(buf[idx[j]] == st[j].MPI_SOURCE * 7 + 1);
            got += oc;
        }
        { int oc; RC(MPI_Waitsome(n, r, &oc, NULL, MPI_STATUSES_IGNORE)); EXPECT(oc == MPI_UNDEFINED); }
        got = 0;
        for (int i = 0; i < n; i++) RC(MPI_Irecv(&buf[i], 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &r[i]));
        RC(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        while (got < n && MPI_Wtime() - t0 < 30) {
            int oc, idx[64];
            RC(MPI_Testsome(n, r, &oc, idx, MPI_STATUSES_IGNORE));
            if (oc != MPI_UNDEFINED) got += oc;
        }
        EXPECT(got == n);
        free(buf); free(r);
    } else {
        int v = rank * 7;
        RC(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
        RC(MPI_Barrier(MPI_COMM_WORLD));
        v = rank * 7 + 1;
        RC(MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));
        RC(MPI_Barrier(MPI_COMM_WORLD));
        RC(MPI_Ssend(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
    }
    /* zero-byte messages, self-sends, MPI_PROC_NULL, probe family */
    {
        MPI_Status st; int cnt, flag, x = 42, y = 0;
        RC(MPI_Sendrecv(NULL, 0, MPI_INT, next, 9, NULL, 0, MPI_INT, prev, 9, MPI_COMM_WORLD, &st));
        RC(MPI_Get_count(&st, MPI_INT, &cnt)); EXPECT(cnt == 0 && st.MPI_SOURCE == prev && st.MPI_TAG == 9);
        MPI_Request rq;
        RC(MPI_Isend(&x, 1, MPI_INT, rank, 10, MPI_COMM_WORLD, &rq));
        RC(MPI_Probe(rank, 10, MPI_COMM_WORLD, &st));
        RC(MPI_Get_count(&st, MPI_INT, &cnt)); EXPECT(cnt == 1);
        RC(MPI_Recv(&y, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        EXPECT(y == 42 && st.MPI_SOURCE == rank && st.MPI_TAG == 10);
        RC(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
        EXPECT(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
        RC(MPI_Get_count(&st, MPI_INT, &cnt)); EXPECT(cnt == 0);
        RC(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, &st)); EXPECT(!flag);
        MPI_Message msg;
        RC(MPI_Isend(&x, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &rq));
        flag = 0;
        while (!flag) RC(MPI_Improbe(rank, 11, MPI_COMM_WORLD, &flag, &msg, &st));
        y = 0; RC(MPI_Mrecv(&y, 1, MPI_INT, &msg, &st)); EXPECT(y == 42 && msg == MPI_MESSAGE_NULL);
        RC(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        RC(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st)); EXPECT(msg == MPI_MESSAGE_NO_PROC);
        RC(MPI_Mrecv(&y, 1, MPI_INT, &msg, &st)); EXPECT(st.MPI_SOURCE == MPI_PROC_NULL);
    }
    /* Sendrecv_replace with a strided type; vector of a struct; resized; addresses.
       The barrier keeps the tag-3 ring below from racing rank 0's ANY_SOURCE tag-3
       receives above (a rank whose Ssend matched early would otherwise send its
       40-byte message into one of the 4-byte receives still posted). */
    RC(MPI_Barrier(MPI_COMM_WORLD));
    {
        int a[20]; MPI_Datatype every2; MPI_Status st;
        for (int i = 0; i < 20; i++) a[i] = rank * 1000 + i;
        RC(MPI_Type_vector(10, 1, 2, MPI_INT, &every2)); RC(MPI_Type_commit(&every2));
        RC(MPI_Sendrecv_replace(a, 1, every2, next, 3, prev, 3, MPI_COMM_WORLD, &st));
        for (int i = 0; i < 20; i++) EXPECT(a[i] == (i % 2 == 0 ? prev : rank) * 1000 + i);
        int elems; RC(MPI_Get_elements(&st, every2, &elems)); EXPECT(elems == 10);
        RC(MPI_Get_count(&st, MPI_INT, &elems)); EXPECT(elems == 10);
        RC(MPI_Type_free(&every2));

        struct particle p[6]; MPI_Datatype ptype, ptype_r, pvec;
        int bl[4] = { 2, 1, 1 }; MPI_Aint base, d[3]; MPI_Datatype ty[3] = { MPI_DOUBLE, MPI_INT, MPI_CHAR };
        RC(MPI_Get_address(&p[0], &base));
        RC(MPI_Get_address(&p[0].x, &d[0])); RC(MPI_Get_address(&p[0].id, &d[1])); RC(MPI_Get_address(&p[0].tag, &d[2]));
        for (int i = 0; i < 3; i++) d[i] = MPI_Aint_diff(d[i], base);
        EXPECT(d[1] == (MPI_Aint)offsetof(struct particle, id));
        RC(MPI_Type_create_struct(3, bl, d, ty, &ptype));
        RC(MPI_Type_create_resized(ptype, 0, sizeof(struct particle), &ptype_r));
        MPI_Aint lb, ext; RC(MPI_Type_get_extent(ptype_r, &lb, &ext)); EXPECT(lb == 0 && ext == (MPI_Aint)sizeof(struct particle));
        RC(MPI_Type_vector(3, 1, 2, ptype_r, &pvec)); RC(MPI_Type_commit(&pvec));
        int sz; RC(MPI_Type_size(pvec, &sz)); EXPECT(sz == 3 * (2 * 8 + 4 + 1));
        for (int i = 0; i < 6; i++) { p[i].x = rank + i; p[i].y = -i; p[i].id = rank * 10 + i; p[i].tag = 'a' + i; }
        RC(MPI_Sendrecv_replace(p, 1, pvec, next, 4, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 6; i++) {
            int from = i % 2 == 0 ? prev : rank;
            EXPECT(p[i].x == from + i && p[i].id == from * 10 + i && p[i].tag == 'a' + i);
        }
        EXPECT(MPI_Aint_add(base, d[1]) == (MPI_Aint)&p[0].id);
        RC(MPI_Type_free(&pvec)); RC(MPI_Type_free(&ptype_r)); RC(MPI_Type_free(&ptype));
    }
    /* persistent requests, Request_get_status, Issend, cancel */
    {
        int sv = rank, rv = -1, flag; MPI_Request r[2]; MPI_Status st;
        RC(MPI_Send_init(&sv, 1, MPI_INT, next, 20, MPI_COMM_WORLD, &r[0]));
        RC(MPI_Recv_init(&rv, 1, MPI_INT, prev, 20, MPI_COMM_WORLD, &r[1]));
        for (int it = 0; it < 5; it++) {
            sv = rank + it;
            RC(MPI_Startall(2, r));
            RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            EXPECT(rv == prev + it && r[0] != MPI_REQUEST_NULL);
        }
        RC(MPI_Request_free(&r[0])); RC(MPI_Request_free(&r[1]));
        MPI_Request s;
        RC(MPI_Irecv(&rv, 1, MPI_INT, prev, 21, MPI_COMM_WORLD, &r[0]));
        RC(MPI_Issend(&sv, 1, MPI_INT, next, 21, MPI_COMM_WORLD, &s));
        flag = 0;
        double t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < 30) RC(MPI_Request_get_status(r[0], &flag, &st));
        EXPECT(flag && st.MPI_SOURCE == prev && r[0] != MPI_REQUEST_NULL);
        RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE)); RC(MPI_Wait(&s, MPI_STATUS_IGNORE));
        RC(MPI_Irecv(&rv, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r[0]));
        RC(MPI_Cancel(&r[0]));
        RC(MPI_Wait(&r[0], &st));
        RC(MPI_Test_cancelled(&st, &flag)); EXPECT(flag);
        RC(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st)); EXPECT(flag);
    }
    /* buffered sends */
    {
        int bsize = 10 * (sizeof(int) + MPI_BSEND_OVERHEAD), v[10], got;
        char *b = malloc(bsize); void *det; int dsize;
        RC(MPI_Buffer_attach(b, bsize));
        for (int i = 0; i < 10; i++) { v[i] = rank + i; RC(MPI_Bsend(&v[i], 1, MPI_INT, next, 30 + i, MPI_COMM_WORLD)); }
        for (int i = 9; i >= 0; i--) { RC(MPI_Recv(&got, 1, MPI_INT, prev, 30 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); EXPECT(got == prev + i); }
        RC(MPI_Buffer_detach(&det, &dsize));
        EXPECT(det == b && dsize == bsize);
        free(b);
    }
    /* many communicators at once */
    {
        enum { NC = 300 };
        MPI_Comm *c = malloc(NC * sizeof(MPI_Comm));
        for (int i = 0; i < NC; i++) RC(MPI_Comm_dup(i == 0 ? MPI_COMM_WORLD : c[i - 1], &c[i]));
        int x = 1; RC(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c[NC - 1])); EXPECT(x == size);
        for (int i = NC - 1; i >= 0; i--) RC(MPI_Comm_free(&c[i]));
        free(c);
    }
    int total = 0;
    RC(MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        if (total) printf(" Found %d errors\n", total);
        else printf(" No Errors\n");
    }
    MPI_Finalize();
    return 0;
}

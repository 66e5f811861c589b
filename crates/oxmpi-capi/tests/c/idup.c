/* MPI_Comm_idup is non-blocking: ranks communicate between the idup and its
 * wait, many idups are in flight at once on overlapping communicators (started
 * in different orders on different ranks), idups mix with blocking dups on the
 * same parent, and the new handle appears at completion. */
#include "check.h"

static int sum_on(MPI_Comm c) {
    int r, s;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Allreduce(&r, &s, 1, MPI_INT, MPI_SUM, c));
    return s;
}

int main(int argc, char **argv) {
    int rank, size, flag, res;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int tri = size * (size - 1) / 2;

    /* Basic: the handle is written at completion. */
    MPI_Comm a = MPI_COMM_NULL, b, c;
    MPI_Request r;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(a != MPI_COMM_NULL && r == MPI_REQUEST_NULL);
    OK(MPI_Comm_compare(a, MPI_COMM_WORLD, &res)); CHECK(res == MPI_CONGRUENT);
    CHECK(sum_on(a) == tri);
    OK(MPI_Comm_free(&a));

    /* Point-to-point that needs the other side's progress between idup and wait:
       with a blocking idup, rank 0 would sit in the idup while rank 1 sits in
       its receive. */
    if (size >= 2 && rank < 2) {
        int v = 0;
        if (rank == 0) {
            OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
            v = 41;
            OK(MPI_Ssend(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
            OK(MPI_Recv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 42);
        } else {
            OK(MPI_Recv(&v, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == 41);
            OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
            v = 42;
            OK(MPI_Ssend(&v, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        }
    } else {
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
    }
    /* Complete by testing (progress inside MPI_Test). */
    do { OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE)); } while (!flag);
    CHECK(a != MPI_COMM_NULL);
    CHECK(sum_on(a) == tri);

    /* Ring traffic between idup and wait, completion by MPI_Request_get_status. */
    {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
        OK(MPI_Comm_idup(a, &b, &r));
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == prev);
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 1, &got, 1, MPI_INT, prev, 1, a, MPI_STATUS_IGNORE));
        do { OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE)); } while (!flag);
        CHECK(b != MPI_COMM_NULL);
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(sum_on(b) == tri);
        OK(MPI_Comm_free(&b));
    }

    /* idup and blocking dup on the same parent, in the same order everywhere. */
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &b, &r));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK(sum_on(c) == tri);
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(sum_on(b) == tri);
    OK(MPI_Comm_compare(b, c, &res)); CHECK(res == MPI_CONGRUENT);

    /* Many in flight at once on overlapping communicators, started in different
       orders on different ranks (only the order per communicator matters). */
    MPI_Comm x, y;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &x));
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &y));
    enum { K = 3 };
    MPI_Comm nx[K], ny[K], nw[K];
    MPI_Request reqs[3 * K];
    for (int i = 0; i < K; i++) {
        if (rank % 2 == 0) {
            OK(MPI_Comm_idup(x, &nx[i], &reqs[3 * i]));
            OK(MPI_Comm_idup(y, &ny[i], &reqs[3 * i + 1]));
        } else {
            OK(MPI_Comm_idup(y, &ny[i], &reqs[3 * i + 1]));
            OK(MPI_Comm_idup(x, &nx[i], &reqs[3 * i]));
        }
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &nw[i], &reqs[3 * i + 2]));
    }
    OK(MPI_Waitall(3 * K, reqs, MPI_STATUSES_IGNORE));
    int xs, ys;
    OK(MPI_Comm_size(x, &xs)); OK(MPI_Comm_size(y, &ys));
    /* Contexts are distinct: the same tag and ring pattern on every communicator at once,
       each message arriving on its own communicator. */
    MPI_Comm all[3 * K + 3];
    int n = 0;
    for (int i = 0; i < K; i++) { all[n++] = nx[i]; all[n++] = ny[i]; all[n++] = nw[i]; }
    all[n++] = a; all[n++] = b; all[n++] = c;
    {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        int out[3 * K + 3], in[3 * K + 3];
        MPI_Request sr[2 * (3 * K + 3)];
        for (int i = 0; i < n; i++) {
            int nr; MPI_Group g1, g2;
            /* send to world `next` by its rank in all[i], if there */
            OK(MPI_Comm_group(all[i], &g1)); OK(MPI_Comm_group(MPI_COMM_WORLD, &g2));
            OK(MPI_Group_translate_ranks(g2, 1, &next, g1, &nr));
            int pr; OK(MPI_Group_translate_ranks(g2, 1, &prev, g1, &pr));
            OK(MPI_Group_free(&g1)); OK(MPI_Group_free(&g2));
            out[i] = 1000 * i + rank;
            in[i] = -1;
            OK(MPI_Irecv(&in[i], 1, MPI_INT, pr == MPI_UNDEFINED ? MPI_PROC_NULL : pr, 3, all[i], &sr[2 * i]));
            OK(MPI_Isend(&out[i], 1, MPI_INT, nr == MPI_UNDEFINED ? MPI_PROC_NULL : nr, 3, all[i], &sr[2 * i + 1]));
            if (pr == MPI_UNDEFINED) in[i] = 1000 * i + prev;
        }
        OK(MPI_Waitall(2 * n, sr, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++) CHECK(in[i] == 1000 * i + prev);
    }
    for (int i = 0; i < K; i++) {
        int s;
        OK(MPI_Comm_size(nx[i], &s)); CHECK(s == xs);
        OK(MPI_Comm_size(ny[i], &s)); CHECK(s == ys);
        CHECK(sum_on(nx[i]) == xs * (xs - 1) / 2 && sum_on(ny[i]) == ys * (ys - 1) / 2 && sum_on(nw[i]) == tri);
        OK(MPI_Comm_free(&nx[i])); OK(MPI_Comm_free(&ny[i])); OK(MPI_Comm_free(&nw[i]));
    }

    /* Attributes are copied, the error handler and info hints carried over. */
    int key, val = 77, *got, attr_flag;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_set_attr(x, key, &val));
    OK(MPI_Comm_set_errhandler(x, MPI_ERRORS_RETURN));
    MPI_Info info; OK(MPI_Info_create(&info)); OK(MPI_Info_set(info, "oxmpi_test_hint", "yes"));
    MPI_Comm z;
    OK(MPI_Comm_idup_with_info(x, info, &z, &r));
    OK(MPI_Info_free(&info));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Comm_get_attr(z, key, &got, &attr_flag)); CHECK(attr_flag && *got == 77);
    MPI_Errhandler eh; OK(MPI_Comm_get_errhandler(z, &eh)); CHECK(eh == MPI_ERRORS_RETURN);
    OK(MPI_Comm_get_info(z, &info));
    char hv[16]; int hf; OK(MPI_Info_get(info, "oxmpi_test_hint", 15, hv, &hf)); CHECK(hf && strcmp(hv, "yes") == 0);
    OK(MPI_Info_free(&info));
    { /* codes are not classes: compare the class */ int e_ = MPI_Comm_idup(z, NULL, &r), c_; OK(MPI_Error_class(e_, &c_)); CHECK(c_ == MPI_ERR_ARG); }
    OK(MPI_Comm_free(&z));
    OK(MPI_Comm_free_keyval(&key));

    /* No context ids leak: many rounds of idup + free. */
    for (int i = 0; i < 300; i++) {
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &z, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Comm_free(&z));
    }

    OK(MPI_Comm_free(&a)); OK(MPI_Comm_free(&b)); OK(MPI_Comm_free(&c));
    OK(MPI_Comm_free(&x)); OK(MPI_Comm_free(&y));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("idup: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

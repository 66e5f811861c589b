/* Non-blocking allreduces and barriers on the shared-memory area (communicators whose area
 * exists: made by their third blocking collective), overlapped with each other
 * on two communicators, with point-to-point on a third, queued back to back on
 * one communicator, completed by MPI_Test loops, by waits in any order, and by
 * the progress a blocking collective on the same communicator makes while a
 * peer waits for this rank's part (large messages: every rank folds a block);
 * plus a rank that starts the non-blocking one before a blocking one while the
 * others start it after (as MPICH and Open MPI allow). Sizes span the small
 * (every rank folds), the medium (blocks) and several chunks. Every result is
 * checked element by element. Any number of ranks. */
#include "check.h"

static int rank, size;

/* Sum over ranks r of (r + 1) * (i + 1) + salt. */
static long expect(int i, int salt) {
    long s = 0;
    for (int r = 0; r < size; r++) s += (long)(r + 1) * (i + 1) + salt;
    return s;
}

static void fill(long *v, int n, int salt) {
    for (int i = 0; i < n; i++) v[i] = (long)(rank + 1) * (i + 1) + salt;
}

static void check_sum(const long *v, int n, int salt) {
    for (int i = 0; i < n; i++) {
        if (v[i] != expect(i, salt)) {
            fprintf(stderr, "rank %d: element %d of %d (salt %d): %ld, expected %ld\n", rank, i, n,
                    salt, v[i], expect(i, salt));
            CHECK(0);
        }
    }
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm a, b, p;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &p));
    /* A non-blocking allreduce before the areas exist (schedules). */
    {
        long in = rank, out = -1;
        MPI_Request r;
        OK(MPI_Iallreduce(&in, &out, 1, MPI_LONG, MPI_SUM, a, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(out == (long)size * (size - 1) / 2);
    }
    for (int i = 0; i < 4; i++) {
        OK(MPI_Barrier(a));
        OK(MPI_Barrier(b));
    }
    const int counts[] = {1, 3, 500, 700, 5000, 20000};
    const int ncounts = sizeof counts / sizeof counts[0];
    int maxc = 20000;
    long *sa = malloc(maxc * sizeof(long)), *ra = malloc(maxc * sizeof(long));
    long *sb = malloc(maxc * sizeof(long)), *rb = malloc(maxc * sizeof(long));
    long *q[3];
    for (int k = 0; k < 3; k++) q[k] = malloc(maxc * sizeof(long));
    CHECK(sa && ra && sb && rb && q[0] && q[1] && q[2]);
    for (int rep = 0; rep < 3; rep++) {
        for (int ci = 0; ci < ncounts; ci++) {
            int n = counts[ci];
            int salt = rep * 100 + ci;
            /* Two communicators' allreduces and a ring of messages in flight at once. */
            fill(sa, n, salt);
            fill(sb, n, salt + 7);
            MPI_Request rq[4];
            OK(MPI_Iallreduce(sa, ra, n, MPI_LONG, MPI_SUM, a, &rq[0]));
            int right = (rank + 1) % size, left = (rank + size - 1) % size;
            long token = rank * 1000 + salt, got = -1;
            OK(MPI_Irecv(&got, 1, MPI_LONG, left, 5, p, &rq[1]));
            OK(MPI_Isend(&token, 1, MPI_LONG, right, 5, p, &rq[2]));
            OK(MPI_Iallreduce(sb, rb, n, MPI_LONG, MPI_SUM, b, &rq[3]));
            if ((rank + rep) % 2) {
                OK(MPI_Wait(&rq[3], MPI_STATUS_IGNORE));
                OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
            } else {
                int flag = 0;
                while (!flag) OK(MPI_Testall(4, rq, &flag, MPI_STATUSES_IGNORE));
            }
            check_sum(ra, n, salt);
            check_sum(rb, n, salt + 7);
            CHECK(got == left * 1000 + salt);

            /* Three queued on one communicator, one in place, completed in reverse. */
            MPI_Request r3[3];
            for (int k = 0; k < 3; k++) {
                fill(q[k], n, salt + k);
                if (k == 1) {
                    OK(MPI_Iallreduce(MPI_IN_PLACE, q[k], n, MPI_LONG, MPI_SUM, a, &r3[k]));
                } else {
                    fill(k ? sb : sa, n, salt + k);
                    OK(MPI_Iallreduce(k ? sb : sa, q[k], n, MPI_LONG, MPI_SUM, a, &r3[k]));
                }
            }
            for (int k = 2; k >= 0; k--) OK(MPI_Wait(&r3[k], MPI_STATUS_IGNORE));
            for (int k = 0; k < 3; k++) check_sum(q[k], n, salt + k);

            /* An ibarrier on one communicator overlapped with an iallreduce on another;
             * then one that must not complete before every rank entered it (the
             * others enter only after a message rank 0 sends once it tested it). */
            {
                MPI_Request r2[2];
                fill(sa, n, salt + 5);
                OK(MPI_Ibarrier(b, &r2[0]));
                OK(MPI_Iallreduce(sa, ra, n, MPI_LONG, MPI_SUM, a, &r2[1]));
                OK(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
                check_sum(ra, n, salt + 5);
                long go = salt;
                if (rank == 0) {
                    int flag = 0;
                    OK(MPI_Ibarrier(b, &r2[0]));
                    OK(MPI_Test(&r2[0], &flag, MPI_STATUS_IGNORE));
                    CHECK(size == 1 || !flag);
                    for (int j = 1; j < size; j++) OK(MPI_Send(&go, 1, MPI_LONG, j, 9, p));
                    if (!flag) OK(MPI_Wait(&r2[0], MPI_STATUS_IGNORE));
                } else {
                    OK(MPI_Recv(&go, 1, MPI_LONG, 0, 9, p, MPI_STATUS_IGNORE));
                    CHECK(go == salt);
                    OK(MPI_Ibarrier(b, &r2[0]));
                    OK(MPI_Wait(&r2[0], MPI_STATUS_IGNORE));
                }
            }

            /* A blocking allreduce on the same communicator while a peer waits for
             * this rank's part of the pending non-blocking one. */
            fill(sa, n, salt + 3);
            MPI_Request r;
            OK(MPI_Iallreduce(sa, ra, n, MPI_LONG, MPI_SUM, a, &r));
            long one = 1, all = 0;
            if (rank % 2 == 0) {
                OK(MPI_Allreduce(&one, &all, 1, MPI_LONG, MPI_SUM, a));
                OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else {
                OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                OK(MPI_Allreduce(&one, &all, 1, MPI_LONG, MPI_SUM, a));
            }
            CHECK(all == size);
            check_sum(ra, n, salt + 3);

            /* Rank 0 starts the non-blocking one before a blocking one, the others after. */
            fill(sb, n, salt + 4);
            if (rank == 0) {
                OK(MPI_Iallreduce(sb, rb, n, MPI_LONG, MPI_SUM, b, &r));
                OK(MPI_Barrier(b));
            } else {
                OK(MPI_Barrier(b));
                OK(MPI_Iallreduce(sb, rb, n, MPI_LONG, MPI_SUM, b, &r));
            }
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            check_sum(rb, n, salt + 4);
        }
    }
    /* Non-contiguous types (every other long: 1,592 and 4,792 bytes of span, so
     * every rank folds, or each folds a block) and MPI_MAX; the gaps stay. */
    for (int len = 100; len <= 300; len += 200) {
        MPI_Datatype vec;
        OK(MPI_Type_vector(len, 1, 2, MPI_LONG, &vec));
        OK(MPI_Type_commit(&vec));
        for (int i = 0; i < 2 * len; i++) {
            sa[i] = (i % 2) ? -5 : (long)rank * i;
            ra[i] = -7;
        }
        MPI_Request r;
        OK(MPI_Iallreduce(sa, ra, 1, vec, MPI_MAX, a, &r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * len; i++) CHECK(ra[i] == ((i % 2) ? -7 : (long)(size - 1) * i));
        OK(MPI_Type_free(&vec));
    }
    free(sa);
    free(ra);
    free(sb);
    free(rb);
    for (int k = 0; k < 3; k++) free(q[k]);
    OK(MPI_Comm_free(&a));
    OK(MPI_Comm_free(&b));
    OK(MPI_Comm_free(&p));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("nbc_shm_overlap: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

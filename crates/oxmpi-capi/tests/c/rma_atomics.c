/* One-sided atomics under contention: every rank hammers the same locations of rank
 * 0's window at once (inside MPI_Win_lock_all) with MPI_Fetch_and_op,
 * MPI_Compare_and_swap, MPI_Accumulate and MPI_Get_accumulate, and rank 0 checks
 * that nothing was lost: counters are exact and every fetched counter value was
 * handed out exactly once. The locations mix the CPU-atomic way (aligned integers,
 * floating sums by compare-exchange, an 8-byte MPI_2INT) and the fallbacks under the
 * target's accumulate mutex (long double, an unaligned int, and a whole window over
 * user memory that other processes reach by cross-memory attach). Runs on
 * MPI_Win_allocate, MPI_Win_allocate_shared (info accumulate_ops=same_op_no_op) and
 * MPI_Win_create (info accumulate_ops=same_op: then only one op per location). */
#include "check.h"
#include <stdint.h>

enum { ITER = 300, WINBYTES = 256 };
enum { O_FAO = 0, O_CAS = 8, O_DBL = 16, O_LDBL = 32, O_MAXLOC = 48, O_ODD = 57, O_UMAX = 64, O_IMIN = 68, O_VEC = 72, O_BOR = 104 };

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The values rank 0 gathers must be 0 .. total-1, each once. */
static void check_unique(long *mine, int rank, int size) {
    long *all = rank == 0 ? malloc(sizeof(long) * ITER * size) : NULL;
    OK(MPI_Gather(mine, ITER, MPI_LONG, all, ITER, MPI_LONG, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        qsort(all, (size_t)ITER * size, sizeof(long), cmp_long);
        for (long i = 0; i < (long)ITER * size; i++) {
            if (all[i] != i) fprintf(stderr, "value %ld at %ld\n", all[i], i);
            CHECK(all[i] == i);
        }
        free(all);
    }
}

static void hammer(MPI_Win win, char *mem, int same_op, int rank, int size) {
    if (rank == 0) {
        memset(mem, 0, WINBYTES);
        int init[2] = {-1, 99};
        memcpy(mem + O_MAXLOC, init, sizeof init);
        int big = 1 << 30;
        memcpy(mem + O_IMIN, &big, sizeof big);
    }
    OK(MPI_Win_fence(0, win)); /* rank 0's initial values are in place */
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long *fao = malloc(sizeof(long) * ITER), *cas = malloc(sizeof(long) * ITER), *odd = malloc(sizeof(long) * ITER);
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITER; i++) {
        long one = 1, old;
        OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, O_FAO, MPI_SUM, win));
        fao[i] = old;
        /* increment by compare-and-swap until it takes (only CAS on this location) */
        long guess = 0, next, got;
        for (;;) {
            next = guess + 1;
            OK(MPI_Compare_and_swap(&next, &guess, &got, MPI_LONG, 0, O_CAS, win));
            if (got == guess) break;
            guess = got;
        }
        cas[i] = got;
        double d = 1.0;
        OK(MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, O_DBL, 1, MPI_DOUBLE, MPI_SUM, win));
        long double ld = 1.0L;
        OK(MPI_Accumulate(&ld, 1, MPI_LONG_DOUBLE, 0, O_LDBL, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
        int pair[2] = {i, rank};
        OK(MPI_Accumulate(pair, 1, MPI_2INT, 0, O_MAXLOC, 1, MPI_2INT, MPI_MAXLOC, win));
        int ione = 1, iold;
        OK(MPI_Fetch_and_op(&ione, &iold, MPI_INT, 0, O_ODD, MPI_SUM, win));
        odd[i] = iold;
        unsigned u = (unsigned)rank * 1000u + (unsigned)i;
        OK(MPI_Accumulate(&u, 1, MPI_UNSIGNED, 0, O_UMAX, 1, MPI_UNSIGNED, MPI_MAX, win));
        int neg = -(rank * 1000 + i);
        OK(MPI_Accumulate(&neg, 1, MPI_INT, 0, O_IMIN, 1, MPI_INT, MPI_MIN, win));
        if (i % 10 == 0) {
            long add[4] = {1, 2, 3, 4}, before[4];
            OK(MPI_Get_accumulate(add, 4, MPI_LONG, before, 4, MPI_LONG, 0, O_VEC, 4, MPI_LONG, MPI_SUM, win));
            for (int j = 0; j < 4; j++) CHECK(before[j] % (j + 1) == 0);
            if (!same_op) {
                long seen;
                OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG, 0, O_VEC + 8, MPI_NO_OP, win));
                CHECK(seen % 2 == 0 && seen >= before[1] + 2);
            }
        }
        int bit = 1 << (rank % 30);
        OK(MPI_Accumulate(&bit, 1, MPI_INT, 0, O_BOR, 1, MPI_INT, MPI_BOR, win));
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    check_unique(fao, rank, size);
    check_unique(cas, rank, size);
    check_unique(odd, rank, size);
    free(fao);
    free(cas);
    free(odd);
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        OK(MPI_Win_sync(win));
        long total = (long)ITER * size, l;
        memcpy(&l, mem + O_FAO, sizeof l);
        CHECK(l == total);
        memcpy(&l, mem + O_CAS, sizeof l);
        CHECK(l == total);
        double d;
        memcpy(&d, mem + O_DBL, sizeof d);
        CHECK(d == (double)total);
        long double ld;
        memcpy(&ld, mem + O_LDBL, sizeof ld);
        CHECK(ld == (long double)total);
        int pair[2];
        memcpy(pair, mem + O_MAXLOC, sizeof pair);
        CHECK(pair[0] == ITER - 1 && pair[1] == 0); /* ties: the lowest index */
        int iv;
        memcpy(&iv, mem + O_ODD, sizeof iv);
        CHECK(iv == total);
        unsigned u;
        memcpy(&u, mem + O_UMAX, sizeof u);
        CHECK(u == (unsigned)(size - 1) * 1000u + ITER - 1);
        memcpy(&iv, mem + O_IMIN, sizeof iv);
        CHECK(iv == -((size - 1) * 1000 + ITER - 1));
        for (int j = 0; j < 4; j++) {
            memcpy(&l, mem + O_VEC + 8 * j, sizeof l);
            CHECK(l == (long)(j + 1) * (ITER / 10) * size);
        }
        int want = 0;
        for (int r = 0; r < size; r++) want |= 1 << (r % 30);
        memcpy(&iv, mem + O_BOR, sizeof iv);
        CHECK(iv == want);
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(WINBYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    hammer(win, mem, 0, rank, size);
    OK(MPI_Win_free(&win));

    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "accumulate_ops", "same_op_no_op"));
    MPI_Comm node;
    int nodesize, onehost;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    OK(MPI_Comm_size(node, &nodesize));
    OK(MPI_Allreduce(&(int){nodesize == size}, &onehost, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    OK(MPI_Comm_free(&node));
    if (onehost) { /* shared memory needs every rank on one host */
        OK(MPI_Win_allocate_shared(WINBYTES, 1, info, MPI_COMM_WORLD, &mem, &win));
        hammer(win, mem, 0, rank, size);
        OK(MPI_Win_free(&win));
    }

    OK(MPI_Info_set(info, "accumulate_ops", "same_op"));
    char *user = malloc(WINBYTES);
    OK(MPI_Win_create(user, WINBYTES, 1, info, MPI_COMM_WORLD, &win));
    hammer(win, user, 1, rank, size);
    OK(MPI_Win_free(&win));
    free(user);
    OK(MPI_Info_free(&info));
    if (rank == 0) printf("rma_atomics: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

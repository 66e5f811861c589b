/* Large and small accumulates to overlapping elements at once, from every rank: the
 * large ones (512 bytes and up: 32 KiB of longs, a 1 KiB get_accumulate of doubles, a
 * strided 1 KiB target, exactly 512 bytes) apply in bulk under the target's bulk
 * word, the small ones (one element, 504 bytes, fetch_and_op, a floating sum by
 * compare-exchange) are CPU atomics per element. Rank 0 checks every element's
 * exact sum, and each rank that the values its get_accumulate and fetch_and_op
 * fetched grow by at least its own contribution between its calls (element
 * atomicity: an update lost or read half-applied would break either). Runs on
 * MPI_Win_allocate and, over user memory, MPI_Win_create, then on MPI_Win_allocate
 * with info accumulate_ops = same_op_no_op (every accumulate here is MPI_SUM or an
 * MPI_NO_OP read: the integer sums then go element by element without the bulk
 * word at any size), and MPI_Win_get_info reports the hints in effect. */
#include "check.h"

enum { ITER = 400, N = 4096, D = 128, STRIDED = 2048 };

static void hammer(MPI_Win win, long *lmem, double *dmem, int rank, int size) {
    if (rank == 0) {
        memset(lmem, 0, sizeof(long) * N);
        memset(dmem, 0, sizeof(double) * D);
    }
    OK(MPI_Win_fence(0, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    long *ones = malloc(sizeof(long) * N), twos[63], threes[64];
    double dones[D], dres[D], dprev[D], half = 0.5;
    for (int k = 0; k < N; k++) ones[k] = 1;
    for (int k = 0; k < 63; k++) twos[k] = 2;
    for (int k = 0; k < 64; k++) threes[k] = 3;
    for (int k = 0; k < D; k++) dones[k] = 1.0, dprev[k] = -1.0;
    MPI_Datatype strided; /* 128 longs, every other one: runs of 8 bytes over 2 KiB */
    OK(MPI_Type_vector(128, 1, 2, MPI_LONG, &strided));
    OK(MPI_Type_commit(&strided));
    const MPI_Aint dbase = sizeof(long) * N; /* the doubles follow the longs (disp_unit 1) */
    long prevfao = -1;
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITER; i++) {
        long one = 1, old;
        OK(MPI_Accumulate(ones, N, MPI_LONG, 0, 0, N, MPI_LONG, MPI_SUM, win));
        OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, sizeof(long) * ((i * 7 + rank * 13) % N), 1, MPI_LONG, MPI_SUM, win));
        OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, sizeof(long) * 5, MPI_SUM, win));
        CHECK(old > prevfao); /* its own increment (and the bulk one) came before */
        prevfao = old;
        OK(MPI_Fetch_and_op(NULL, &old, MPI_LONG, 0, sizeof(long) * 5, MPI_NO_OP, win));
        CHECK(old > prevfao); /* an atomic read after it */
        prevfao = old;
        OK(MPI_Accumulate(twos, 63, MPI_LONG, 0, sizeof(long) * rank, 63, MPI_LONG, MPI_SUM, win));
        OK(MPI_Accumulate(threes, 64, MPI_LONG, 0, sizeof(long) * (100 + rank), 64, MPI_LONG, MPI_SUM, win));
        OK(MPI_Accumulate(ones, 128, MPI_LONG, 0, sizeof(long) * STRIDED, 1, strided, MPI_SUM, win));
        OK(MPI_Get_accumulate(dones, D, MPI_DOUBLE, dres, D, MPI_DOUBLE, 0, dbase, D, MPI_DOUBLE, MPI_SUM, win));
        for (int k = 0; k < D; k++) {
            if (!(dres[k] >= dprev[k] + 1.0)) fprintf(stderr, "rank %d iter %d: double %d fetched %g after %g\n", rank, i, k, dres[k], dprev[k]);
            CHECK(dres[k] >= dprev[k] + 1.0);
            dprev[k] = dres[k];
        }
        OK(MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, dbase + sizeof(double) * ((i + rank) % D), 1, MPI_DOUBLE, MPI_SUM, win));
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        long *exp = calloc(N, sizeof(long));
        double dexp[D];
        for (int k = 0; k < D; k++) dexp[k] = (double)ITER * size;
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < ITER; i++) {
                for (int k = 0; k < N; k++) exp[k] += 1;
                exp[(i * 7 + r * 13) % N] += 1;
                exp[5] += 1;
                for (int k = 0; k < 63; k++) exp[r + k] += 2;
                for (int k = 0; k < 64; k++) exp[100 + r + k] += 3;
                for (int k = 0; k < 128; k++) exp[STRIDED + 2 * k] += 1;
                dexp[(i + r) % D] += 0.5;
            }
        }
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int k = 0; k < N; k++) {
            if (lmem[k] != exp[k]) fprintf(stderr, "long %d: %ld, expected %ld\n", k, lmem[k], exp[k]);
            CHECK(lmem[k] == exp[k]);
        }
        for (int k = 0; k < D; k++) {
            if (dmem[k] != dexp[k]) fprintf(stderr, "double %d: %g, expected %g\n", k, dmem[k], dexp[k]);
            CHECK(dmem[k] == dexp[k]);
        }
        OK(MPI_Win_unlock(0, win));
        free(exp);
    }
    OK(MPI_Type_free(&strided));
    free(ones);
}

/* A tight contest on 64 elements: every rank adds 1 to all of them (512 bytes: the
 * bulk size) and, in between, fetch_and_op's 1 to one of them, many times; a bulk
 * kernel and an atomic on one element at once would lose updates. */
static void contest(MPI_Win win, long *lmem, int rank, int size) {
    enum { ROUNDS = 20000, E = 64 };
    if (rank == 0) memset(lmem, 0, sizeof(long) * E);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long ones[E], one = 1, old;
    for (int k = 0; k < E; k++) ones[k] = 1;
    OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        OK(MPI_Accumulate(ones, E, MPI_LONG, 0, 0, E, MPI_LONG, MPI_SUM, win));
        OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, sizeof(long) * (i % E), MPI_SUM, win));
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int k = 0; k < E; k++) {
            long want = (long)size * (ROUNDS + ROUNDS / E + (k < ROUNDS % E));
            if (lmem[k] != want) fprintf(stderr, "contest: element %d: %ld, expected %ld\n", k, lmem[k], want);
            CHECK(lmem[k] == want);
        }
        OK(MPI_Win_unlock(0, win));
    }
}

static void info_is(MPI_Win win, const char *key, const char *want) {
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    OK(MPI_Win_get_info(win, &info));
    OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    if (!flag || strcmp(v, want)) fprintf(stderr, "info %s: %s, expected %s\n", key, flag ? v : "(unset)", want);
    CHECK(flag && !strcmp(v, want));
    OK(MPI_Info_free(&info));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    int rank, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const MPI_Aint bytes = sizeof(long) * N + sizeof(double) * D;
    char *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(rank == 0 ? bytes : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    hammer(win, (long *)mem, (double *)(mem + sizeof(long) * N), rank, size);
    contest(win, (long *)mem, rank, size);
    OK(MPI_Win_free(&win));

    char *user = malloc(bytes);
    OK(MPI_Win_create(user, rank == 0 ? bytes : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    hammer(win, (long *)user, (double *)(user + sizeof(long) * N), rank, size);
    OK(MPI_Win_free(&win));
    free(user);

    MPI_Info hints;
    OK(MPI_Info_create(&hints));
    OK(MPI_Info_set(hints, "accumulate_ops", "same_op_no_op"));
    OK(MPI_Info_set(hints, "accumulate_ordering", "none"));
    OK(MPI_Win_allocate(rank == 0 ? bytes : 0, 1, hints, MPI_COMM_WORLD, &mem, &win));
    info_is(win, "accumulate_ops", "same_op_no_op");
    info_is(win, "accumulate_ordering", "none");
    hammer(win, (long *)mem, (double *)(mem + sizeof(long) * N), rank, size);
    contest(win, (long *)mem, rank, size);
    /* new values are reported (the engine keeps the creation's way) */
    OK(MPI_Info_set(hints, "accumulate_ops", "same_op"));
    OK(MPI_Info_set(hints, "accumulate_ordering", "rar,waw"));
    OK(MPI_Win_set_info(win, hints));
    info_is(win, "accumulate_ops", "same_op");
    info_is(win, "accumulate_ordering", "rar,waw");
    OK(MPI_Win_free(&win));
    /* values that are not the standard's are ignored: the defaults are reported */
    OK(MPI_Info_set(hints, "accumulate_ops", "any_op"));
    OK(MPI_Info_set(hints, "accumulate_ordering", "rar,sideways"));
    OK(MPI_Win_allocate(8, 1, hints, MPI_COMM_WORLD, &mem, &win));
    info_is(win, "accumulate_ops", "same_op_no_op");
    info_is(win, "accumulate_ordering", "rar,raw,war,waw");
    OK(MPI_Win_free(&win));
    OK(MPI_Info_free(&hints));
    if (rank == 0) printf("rma_bulk: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

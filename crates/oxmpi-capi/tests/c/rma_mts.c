/* One-sided cases MPICH's test suite found broken (each checked as a user would):
 * - accumulates on padded pair types (MPI_SHORT_INT: 6 data bytes in 8, MPI_LONG_DOUBLE_INT)
 *   replace and MAXLOC exactly the pairs, not the bytes around them (a heap overflow
 *   once), through a vector type, on MPI_Win_create and MPI_Win_allocate windows;
 *   MPI_Get_accumulate with MPI_NO_OP reads whole pairs;
 * - accumulates whose every side is empty by size (zero-size datatype, count > 0) succeed;
 * - a dynamic window takes hundreds of attached regions, and others reach the last one;
 *   an access may span two regions attached back to back;
 * - MPI_Win_shared_query of a rank that allocated nothing gives size 0 and a NULL base;
 * - MPI_Win_set_info of alloc_shared_noncontig is reported by MPI_Win_get_info. */
#include "check.h"

typedef struct { short a; int b; } short_int;
typedef struct { long double a; int b; } ldouble_int;
enum { N = 25, NREG = 300, REGINTS = 16 };

static void pairs(MPI_Win win, ldouble_int *tar, short_int *star, int rank, int size, int allocated) {
    int right = (rank + 1) % size;
    ldouble_int orig[N];
    for (int i = 0; i < N; i++) { orig[i].a = 1.0L + rank; orig[i].b = rank + 1; }
    MPI_Datatype vec;
    OK(MPI_Type_vector(5, 3, 5, MPI_LONG_DOUBLE_INT, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    OK(MPI_Accumulate(orig, 1, vec, right, 0, 1, vec, MPI_MAXLOC, win));
    OK(MPI_Win_unlock(right, win));
    /* short_int pairs live after the long double ones: 2 pairs replaced, then read back */
    short_int s[2] = {{(short)(7 + rank), 70 + rank}, {(short)(8 + rank), 80 + rank}};
    MPI_Aint sdisp = (MPI_Aint)(N * sizeof(ldouble_int));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    OK(MPI_Accumulate(s, 2, MPI_SHORT_INT, right, sdisp, 2, MPI_SHORT_INT, MPI_REPLACE, win));
    OK(MPI_Win_flush(right, win));
    short_int got[2] = {{0, 0}, {0, 0}};
    OK(MPI_Get_accumulate(NULL, 0, MPI_SHORT_INT, got, 2, MPI_SHORT_INT, right, sdisp, 2, MPI_SHORT_INT, MPI_NO_OP, win));
    OK(MPI_Win_unlock(right, win));
    CHECK(got[0].a == 7 + rank && got[0].b == 70 + rank && got[1].a == 8 + rank && got[1].b == 80 + rank);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int left = (rank + size - 1) % size;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < N; i++) {
        if (i % 5 < 3) CHECK(tar[i].a == 1.0L + left && tar[i].b == left + 1);
        else CHECK(tar[i].a == 0.0L && tar[i].b == 0);
    }
    CHECK(star[0].a == 7 + left && star[0].b == 70 + left && star[1].a == 8 + left && star[1].b == 80 + left);
    /* the int after the two pairs (a guard) is untouched */
    CHECK(((int *)(star + 2))[0] == 12345);
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Type_free(&vec));
    (void)allocated;
}

static void pair_windows(int rank, int size) {
    size_t bytes = N * sizeof(ldouble_int) + 3 * sizeof(short_int);
    for (int allocated = 0; allocated < 2; allocated++) {
        char *mem;
        MPI_Win win;
        if (allocated) {
            OK(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            OK(MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &mem));
            OK(MPI_Win_create(mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        memset(mem, 0, bytes);
        *(int *)(mem + N * sizeof(ldouble_int) + 2 * sizeof(short_int)) = 12345;
        OK(MPI_Win_unlock(rank, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        pairs(win, (ldouble_int *)mem, (short_int *)(mem + N * sizeof(ldouble_int)), rank, size, allocated);
        OK(MPI_Win_free(&win));
        if (!allocated) OK(MPI_Free_mem(mem));
    }
}

static void zero_size(int rank, int size) {
    int buf[4] = {1, 2, 3, 4}, res[4] = {0};
    MPI_Win win;
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Datatype empty;
    OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    OK(MPI_Type_commit(&empty));
    OK(MPI_Win_fence(0, win));
    int t = (rank + 1) % size;
    OK(MPI_Accumulate(buf, 1, empty, t, 0, 0, MPI_INT, MPI_SUM, win));
    OK(MPI_Accumulate(buf, 2, empty, t, 0, 3, empty, MPI_SUM, win));
    OK(MPI_Get_accumulate(NULL, 1, empty, res, 1, empty, t, 0, 1, empty, MPI_SUM, win));
    OK(MPI_Put(NULL, 1, empty, t, 0, 0, MPI_DOUBLE, win));
    OK(MPI_Win_fence(0, win));
    CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4 && res[0] == 0);
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&empty));
}

static void many_regions(int rank, int size) {
    MPI_Win win;
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *reg[NREG];
    for (int i = 0; i < NREG; i++) {
        OK(MPI_Alloc_mem(REGINTS * sizeof(int), MPI_INFO_NULL, &reg[i]));
        for (int j = 0; j < REGINTS; j++) reg[i][j] = -1;
        OK(MPI_Win_attach(win, reg[i], REGINTS * sizeof(int)));
    }
    /* one array attached as two halves, back to back */
    static int twin[2 * REGINTS];
    OK(MPI_Win_attach(win, twin, sizeof(int) * REGINTS));
    OK(MPI_Win_attach(win, twin + REGINTS, sizeof(int) * REGINTS));
    MPI_Aint mine[2], *all = malloc(sizeof(MPI_Aint) * 2 * size);
    OK(MPI_Get_address(reg[NREG - 1], &mine[0]));
    OK(MPI_Get_address(twin, &mine[1]));
    OK(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    int val[2 * REGINTS], back[2 * REGINTS];
    for (int j = 0; j < 2 * REGINTS; j++) val[j] = rank * 1000 + j;
    OK(MPI_Win_lock_all(0, win));
    OK(MPI_Put(val, REGINTS, MPI_INT, t, all[2 * t], REGINTS, MPI_INT, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Get(back, REGINTS, MPI_INT, t, all[2 * t], REGINTS, MPI_INT, win));
    OK(MPI_Win_flush(t, win));
    for (int j = 0; j < REGINTS; j++) CHECK(back[j] == val[j]);
    /* spans both halves of the target's twin array */
    OK(MPI_Accumulate(val, 2 * REGINTS, MPI_INT, t, all[2 * t + 1], 2 * REGINTS, MPI_INT, MPI_REPLACE, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Get(back, 2 * REGINTS, MPI_INT, t, all[2 * t + 1], 2 * REGINTS, MPI_INT, win));
    OK(MPI_Win_flush(t, win));
    for (int j = 0; j < 2 * REGINTS; j++) CHECK(back[j] == val[j]);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int j = 0; j < REGINTS; j++) CHECK(reg[NREG - 1][j] == from * 1000 + j && twin[j] == from * 1000 + j);
    for (int j = 0; j < REGINTS; j++) CHECK(reg[0][j] == -1);
    /* after detaching, the region is out of the window: MPI_ERR_RMA_RANGE */
    OK(MPI_Win_detach(win, reg[NREG - 1]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_lock_all(0, win));
    int err = MPI_Put(val, 1, MPI_INT, t, all[2 * t], 1, MPI_INT, win), cls = 0;
    MPI_Error_class(err, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NREG - 1; i++) OK(MPI_Win_detach(win, reg[i]));
    OK(MPI_Win_detach(win, twin));
    OK(MPI_Win_detach(win, twin + REGINTS));
    OK(MPI_Win_free(&win));
    for (int i = 0; i < NREG; i++) OK(MPI_Free_mem(reg[i]));
    free(all);
}

static void shared(void) {
    MPI_Comm shm;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    int r, n;
    MPI_Comm_rank(shm, &r);
    MPI_Comm_size(shm, &n);
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    int *base;
    MPI_Win win;
    OK(MPI_Win_allocate_shared(r % 2 == 0 ? 4 * sizeof(int) : 0, sizeof(int), info, shm, &base, &win));
    OK(MPI_Info_free(&info));
    for (int i = 0; i < n; i++) {
        MPI_Aint sz;
        int du;
        int *p;
        OK(MPI_Win_shared_query(win, i, &sz, &du, &p));
        if (i % 2 == 0) CHECK(sz == 4 * sizeof(int) && p != NULL);
        else CHECK(sz == 0 && p == NULL);
    }
    MPI_Info got;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    OK(MPI_Win_get_info(win, &got));
    OK(MPI_Info_get(got, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0);
    OK(MPI_Info_free(&got));
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "alloc_shared_noncontig", "false"));
    OK(MPI_Win_set_info(win, info));
    OK(MPI_Info_free(&info));
    OK(MPI_Win_get_info(win, &got));
    OK(MPI_Info_get(got, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0);
    OK(MPI_Info_free(&got));
    OK(MPI_Win_free(&win));
    OK(MPI_Comm_free(&shm));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pair_windows(rank, size);
    zero_size(rank, size);
    many_regions(rank, size);
    shared();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("rma_mts: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

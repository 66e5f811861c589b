/* One-sided communication: every window flavor, every operation, every
 * synchronization mode, derived datatypes on both sides, atomicity of concurrent
 * accumulates, attributes, info, names, keyvals, error handlers. Any rank count. */
#include "check.h"
#include <stdint.h>

static int rank, size;

/* put/get/accumulate in a fence epoch on window `win` whose memory is `mem`
 * (n ints per rank, disp_unit sizeof(int)). */
static void fence_ops(MPI_Win win, int *mem, int n) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < n; i++) mem[i] = -1;
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    int src[4] = {rank * 10, rank * 10 + 1, rank * 10 + 2, rank * 10 + 3};
    OK(MPI_Put(src, 4, MPI_INT, right, 0, 4, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) CHECK(mem[i] == left * 10 + i);
    int got[4] = {0};
    OK(MPI_Get(got, 4, MPI_INT, right, 0, 4, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++) CHECK(got[i] == rank * 10 + i);
    /* every rank adds to element 4 of every rank */
    mem[4] = 0;
    OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        int one = rank + 1;
        OK(MPI_Accumulate(&one, 1, MPI_INT, t, 4, 1, MPI_INT, MPI_SUM, win));
    }
    OK(MPI_Win_fence(0, win));
    CHECK(mem[4] == size * (size + 1) / 2);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
}

static void derived(MPI_Win win, int *mem, int n) {
    /* origin: every other int of 8 (vector); target: 4 ints at stride 3 (indexed). */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype ovec, tidx;
    OK(MPI_Type_vector(4, 1, 2, MPI_INT, &ovec)); OK(MPI_Type_commit(&ovec));
    int bl[4] = {1, 1, 1, 1}, dis[4] = {0, 3, 6, 9};
    OK(MPI_Type_indexed(4, bl, dis, MPI_INT, &tidx)); OK(MPI_Type_commit(&tidx));
    CHECK(n >= 12);
    for (int i = 0; i < n; i++) mem[i] = -7;
    int src[8];
    for (int i = 0; i < 8; i++) src[i] = rank * 100 + i;
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(src, 1, ovec, right, 0, 1, tidx, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 4; k++) CHECK(mem[3 * k] == left * 100 + 2 * k);
    CHECK(mem[1] == -7 && mem[2] == -7 && mem[4] == -7);
    /* get back through the two types the other way round */
    int back[8];
    for (int i = 0; i < 8; i++) back[i] = -1;
    OK(MPI_Get(back, 1, ovec, right, 0, 1, tidx, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 4; k++) CHECK(back[2 * k] == rank * 100 + 2 * k && back[2 * k + 1] == -1);
    /* accumulate with a derived target type; then get_accumulate fetching */
    int add[4] = {1, 2, 3, 4};
    OK(MPI_Accumulate(add, 4, MPI_INT, right, 0, 1, tidx, MPI_SUM, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 4; k++) CHECK(mem[3 * k] == left * 100 + 2 * k + k + 1);
    /* the left neighbour's next update must not land before this look */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int res[4];
    OK(MPI_Get_accumulate(add, 4, MPI_INT, res, 4, MPI_INT, right, 0, 1, tidx, MPI_REPLACE, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 4; k++) CHECK(res[k] == rank * 100 + 2 * k + k + 1);
    for (int k = 0; k < 4; k++) CHECK(mem[3 * k] == k + 1);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Type_free(&ovec)); OK(MPI_Type_free(&tidx));
}

static void passive(MPI_Win win, int *mem) {
    /* everyone does fetch_and_op +1 on rank 0's mem[0] under a shared lock,
     * 50 times, and compare_and_swap tickets; result must be exact. */
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    mem[0] = 0; mem[1] = 0; mem[2] = 0;
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    int one = 1, old, seen_max = -1;
    for (int i = 0; i < 50; i++) {
        OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win));
        CHECK(old >= 0 && old < 50 * size);
        if (old > seen_max) seen_max = old;
    }
    OK(MPI_Win_flush(0, win));
    OK(MPI_Win_unlock(0, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    int v = -1;
    OK(MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    OK(MPI_Win_unlock(0, win));
    CHECK(v == 50 * size);
    /* a ticket lock with compare_and_swap: each rank takes its turn in rank order */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock_all(0, win));
    for (;;) {
        int expect = rank, next = rank + 1, was = -1;
        OK(MPI_Compare_and_swap(&next, &expect, &was, MPI_INT, 0, 1, win));
        OK(MPI_Win_flush(0, win));
        if (was == rank) break;
        CHECK(was < rank);
    }
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) { OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)); CHECK(mem[1] == size); OK(MPI_Win_unlock(0, win)); }
    /* exclusive locks serialize read-modify-write done with get + put */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 20; i++) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        int x;
        OK(MPI_Get(&x, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
        OK(MPI_Win_flush_local(0, win));
        x += 1;
        OK(MPI_Put(&x, 1, MPI_INT, 0, 2, 1, MPI_INT, win));
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) { OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)); CHECK(mem[2] == 20 * size); OK(MPI_Win_unlock(0, win)); }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void pscw(MPI_Win win, int *mem) {
    MPI_Group world, peers;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* only the left neighbour accesses this window */
    OK(MPI_Group_incl(world, 1, &left, &peers));
    mem[5] = -1;
    /* expose to left (and right), access right */
    OK(MPI_Win_post(peers, 0, win));
    MPI_Group tgt; OK(MPI_Group_incl(world, 1, &right, &tgt));
    OK(MPI_Win_start(tgt, 0, win));
    int v = rank;
    OK(MPI_Put(&v, 1, MPI_INT, right, 5, 1, MPI_INT, win));
    OK(MPI_Win_complete(win));
    int flag = 0;
    while (!flag) OK(MPI_Win_test(win, &flag));
    CHECK(mem[5] == left);
    /* again with MPI_Win_wait and request-based operations */
    OK(MPI_Win_post(peers, MPI_MODE_NOCHECK, win));
    OK(MPI_Win_start(tgt, 0, win));
    MPI_Request rq[2];
    int w2 = rank * 2, g = -1;
    OK(MPI_Rput(&w2, 1, MPI_INT, right, 6, 1, MPI_INT, win, &rq[0]));
    OK(MPI_Rget(&g, 1, MPI_INT, right, 5, 1, MPI_INT, win, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(g == rank);
    OK(MPI_Win_complete(win));
    OK(MPI_Win_wait(win));
    CHECK(mem[6] == left * 2);
    OK(MPI_Group_free(&peers)); OK(MPI_Group_free(&tgt)); OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void request_ops(MPI_Win win, int *mem) {
    OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    int right = (rank + 1) % size;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request r;
    int v = 3, res = -5;
    if (rank == 0) mem[7] = 10;
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Raccumulate(&v, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_PROD, win, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Win_flush_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Rget_accumulate(NULL, 0, MPI_INT, &res, 1, MPI_INT, 0, 7, 1, MPI_INT, MPI_NO_OP, win, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int expect = 10; for (int i = 0; i < size; i++) expect *= 3;
    CHECK(res == expect);
    OK(MPI_Win_flush_local_all(win));
    /* MAX, MIN, BAND, BOR, BXOR, LAND, LOR on element 8 of right */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    mem[8] = 0;
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int bit = 1 << (rank % 30);
    OK(MPI_Accumulate(&bit, 1, MPI_INT, 0, 8, 1, MPI_INT, MPI_BOR, win));
    OK(MPI_Accumulate(&rank, 1, MPI_INT, right, 9, 1, MPI_INT, MPI_REPLACE, win));
    OK(MPI_Win_flush_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_sync(win));
    if (rank == 0) { int all = 0; for (int i = 0; i < size; i++) all |= 1 << (i % 30); CHECK(mem[8] == all); }
    CHECK(mem[9] == (rank + size - 1) % size);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static int deleted;
static int del_fn(MPI_Win w, int kv, void *val, void *extra) { (void)w; (void)kv; (void)extra; deleted += *(int *)val; return MPI_SUCCESS; }
static int handler_calls, handler_code;
static void win_handler(MPI_Win *w, int *code, ...) { (void)w; handler_calls++; handler_code = *code; }

static void attrs_and_handlers(MPI_Win win, void *base, MPI_Aint sz, int flavor) {
    deleted = 0; handler_calls = 0;
    void *b; int flag;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag)); CHECK(flag && b == base);
    MPI_Aint *s; OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &s, &flag)); CHECK(flag && *s == sz);
    int *du; OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag)); CHECK(flag && *du == (int)sizeof(int));
    int *fl; OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag)); CHECK(flag && *fl == flavor);
    int *model; OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag)); CHECK(flag && *model == MPI_WIN_UNIFIED);
    MPI_Group g, wg; int cmp;
    OK(MPI_Win_get_group(win, &g)); OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Group_compare(g, wg, &cmp)); CHECK(cmp == MPI_IDENT);
    OK(MPI_Group_free(&g)); OK(MPI_Group_free(&wg));
    char name[MPI_MAX_OBJECT_NAME]; int len;
    OK(MPI_Win_get_name(win, name, &len)); CHECK(len == 0);
    OK(MPI_Win_set_name(win, "my window")); OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 9 && strcmp(name, "my window") == 0);
    MPI_Info info; char val[MPI_MAX_INFO_VAL]; int vf;
    OK(MPI_Win_get_info(win, &info));
    OK(MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, val, &vf)); CHECK(vf && strcmp(val, "rar,raw,war,waw") == 0);
    OK(MPI_Info_get(info, "no_locks", MPI_MAX_INFO_VAL, val, &vf)); CHECK(vf && strcmp(val, "false") == 0);
    OK(MPI_Info_free(&info));
    OK(MPI_Info_create(&info)); OK(MPI_Info_set(info, "accumulate_ops", "same_op"));
    OK(MPI_Win_set_info(win, info)); OK(MPI_Info_free(&info));
    OK(MPI_Win_get_info(win, &info));
    OK(MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL, val, &vf)); CHECK(vf && strcmp(val, "same_op") == 0);
    OK(MPI_Info_free(&info));
    int kv; static int seven = 7;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL));
    OK(MPI_Win_set_attr(win, kv, &seven));
    int *got; OK(MPI_Win_get_attr(win, kv, &got, &flag)); CHECK(flag && got == &seven);
    OK(MPI_Win_delete_attr(win, kv)); CHECK(deleted == 7);
    OK(MPI_Win_get_attr(win, kv, &got, &flag)); CHECK(!flag);
    OK(MPI_Win_set_attr(win, kv, &seven)); /* deleted again at MPI_Win_free */
    OK(MPI_Win_free_keyval(&kv)); CHECK(kv == MPI_KEYVAL_INVALID);
    /* error handlers: default fatal, then return, then a user handler */
    MPI_Errhandler eh;
    OK(MPI_Win_get_errhandler(win, &eh)); CHECK(eh == MPI_ERRORS_ARE_FATAL);
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int x = 0, cls;
    int rc = MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win); /* no epoch */
    OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_RMA_SYNC);
    OK(MPI_Win_create_errhandler(win_handler, &eh));
    OK(MPI_Win_set_errhandler(win, eh));
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Win_fence(0, win));
    rc = MPI_Put(&x, 1, MPI_INT, 0, sz / (MPI_Aint)sizeof(int), 1, MPI_INT, win); /* past the end */
    OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_RMA_RANGE);
    CHECK(handler_calls == 1 && handler_code == rc);
    OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL));
    CHECK(MPI_Win_f2c(MPI_Win_c2f(win)) == win);
}

#define N 16

static int comm_copies;
static int count_copy(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)kv; (void)extra; comm_copies++; *(void **)out = in; *flag = 1; return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* a window's private communicators do not copy the program's attributes */
    {
        int kv; static int v = 1; MPI_Win win; int *mem;
        OK(MPI_Comm_create_keyval(count_copy, MPI_COMM_NULL_DELETE_FN, &kv, NULL));
        OK(MPI_Comm_set_attr(MPI_COMM_WORLD, kv, &v));
        OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        CHECK(comm_copies == 0);
        OK(MPI_Win_free(&win));
        OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, kv)); OK(MPI_Comm_free_keyval(&kv));
    }
    /* MPI_Win_allocate */
    {
        int *mem; MPI_Win win;
        OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        CHECK(mem != NULL);
        fence_ops(win, mem, N);
        derived(win, mem, N);
        passive(win, mem);
        pscw(win, mem);
        request_ops(win, mem);
        attrs_and_handlers(win, mem, N * sizeof(int), MPI_WIN_FLAVOR_ALLOCATE);
        CHECK(deleted == 7);
        OK(MPI_Win_free(&win)); CHECK(win == MPI_WIN_NULL); CHECK(deleted == 14);
    }
    /* MPI_Win_create over user memory (cross-memory attach between processes) */
    {
        int mem[N]; MPI_Win win;
        OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        fence_ops(win, mem, N);
        derived(win, mem, N);
        passive(win, mem);
        pscw(win, mem);
        request_ops(win, mem);
        attrs_and_handlers(win, mem, sizeof mem, MPI_WIN_FLAVOR_CREATE);
        OK(MPI_Win_free(&win));
    }
    /* MPI_Win_allocate_shared + MPI_Win_shared_query: direct load/store (one host only) */
    MPI_Comm node; int nodesize;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    OK(MPI_Comm_size(node, &nodesize));
    OK(MPI_Comm_free(&node));
    if (nodesize == size) {
        int *mem; MPI_Win win;
        OK(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        MPI_Aint qs; int qd; int *q0;
        OK(MPI_Win_shared_query(win, 0, &qs, &qd, &q0));
        CHECK(qs == N * (MPI_Aint)sizeof(int) && qd == (int)sizeof(int));
        CHECK(q0 + rank * N == mem); /* contiguous by default */
        OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qs, &qd, &q0));
        CHECK(q0 == mem - rank * N);
        OK(MPI_Win_lock_all(0, win));
        mem[0] = rank + 100;
        OK(MPI_Win_sync(win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Win_sync(win));
        for (int r = 0; r < size; r++) CHECK(q0[r * N] == r + 100);
        OK(MPI_Win_unlock_all(win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        fence_ops(win, mem, N);
        passive(win, mem);
        OK(MPI_Win_free(&win));
        MPI_Info info; OK(MPI_Info_create(&info)); OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
        OK(MPI_Win_allocate_shared((rank + 1) * 100, 1, info, MPI_COMM_WORLD, &mem, &win));
        OK(MPI_Info_free(&info));
        OK(MPI_Win_shared_query(win, rank, &qs, &qd, &q0));
        CHECK(qs == (rank + 1) * 100 && (void *)q0 == (void *)mem && qd == 1);
        OK(MPI_Win_free(&win));
    }
    /* dynamic windows: attach, exchange addresses, put/get, detach */
    {
        MPI_Win win; int *buf = malloc(N * sizeof(int));
        OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        OK(MPI_Win_attach(win, buf, N * sizeof(int)));
        for (int i = 0; i < N; i++) buf[i] = -1;
        MPI_Aint mine, *addrs = malloc(size * sizeof(MPI_Aint));
        OK(MPI_Get_address(buf, &mine));
        OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        OK(MPI_Win_fence(0, win));
        int v[2] = {rank, rank * 3};
        OK(MPI_Put(v, 2, MPI_INT, right, addrs[right] + 2 * sizeof(int), 2, MPI_INT, win));
        OK(MPI_Win_fence(0, win));
        CHECK(buf[2] == left && buf[3] == left * 3 && buf[1] == -1 && buf[4] == -1);
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        int s = 5;
        OK(MPI_Accumulate(&s, 1, MPI_INT, right, addrs[right] + 2 * sizeof(int), 1, MPI_INT, MPI_SUM, win));
        OK(MPI_Win_unlock(right, win));
        OK(MPI_Win_fence(0, win));
        CHECK(buf[2] == left + 5);
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Win_detach(win, buf));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        /* detached: the same access is out of range now */
        OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
        int cls, rc = MPI_Put(v, 1, MPI_INT, right, addrs[right], 1, MPI_INT, win);
        OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_RMA_RANGE);
        OK(MPI_Win_unlock(right, win));
        OK(MPI_Win_free(&win));
        free(buf); free(addrs);
    }
    /* large-count forms */
    {
        long long *mem; MPI_Win win;
        OK(MPI_Win_allocate_c(8 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        OK(MPI_Win_fence(0, win));
        long long x[2] = {rank, -rank};
        OK(MPI_Put_c(x, 2, MPI_LONG_LONG, right, 1, 2, MPI_LONG_LONG, win));
        OK(MPI_Win_fence(0, win));
        CHECK(mem[1] == left && mem[2] == -left);
        long long y[2];
        OK(MPI_Get_c(y, 2, MPI_LONG_LONG, left, 1, 2, MPI_LONG_LONG, win));
        OK(MPI_Accumulate_c(x, 1, MPI_LONG_LONG, right, 1, 1, MPI_LONG_LONG, MPI_MAX, win));
        OK(MPI_Win_fence(0, win));
        CHECK(y[0] == (left + size - 1) % size);
        CHECK(mem[1] == left);
        MPI_Aint qs, qd; long long *q;
        OK(MPI_Win_shared_query_c(win, rank, &qs, &qd, &q));
        CHECK(q == mem && qd == sizeof(long long) && qs == 8 * (MPI_Aint)sizeof(long long));
        OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        OK(MPI_Win_free(&win));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

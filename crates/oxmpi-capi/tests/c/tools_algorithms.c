/* MPI_T's collective calls per algorithm (oxmpi_coll_<op>_algorithm_<name>):
 * every collective with an OXMPI_<OP>_ALGORITHM choice runs N times blocking
 * and N times nonblocking; the sum of its algorithm counters grows by exactly
 * 2N, and where OXMPI_<OP>_ALGORITHM forces an algorithm, exactly that
 * algorithm's counter grows (shm, the shared-memory path of blocking calls,
 * by the N blocking calls only, except for barrier and allreduce, whose
 * nonblocking calls take it too once the area exists); a persistent allreduce counts once per
 * start. The counters are found by listing every
 * performance variable, and are all in category oxmpi_coll_algorithms.
 * Prints "tools_algorithms: all checks passed on N ranks (K forced)". */
#include "check.h"
#include <ctype.h>

enum { N = 5, COUNT = 4, MAXALG = 8, MAXP = 128 };

static const char *OPS[] = {"barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
                            "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter",
                            "reduce_scatter_block", "scan", "exscan"};
enum { NOPS = sizeof OPS / sizeof OPS[0] };

static int rank, size;
static MPI_T_pvar_session session;

struct alg { char name[64]; MPI_T_pvar_handle h; unsigned long long before; };
static struct alg algs[NOPS][MAXALG];
static int nalgs[NOPS];

static unsigned long long rd(MPI_T_pvar_handle h) { unsigned long long v; OK(MPI_T_pvar_read(session, h, &v)); return v; }

/* Runs collective `op` once, blocking or not. */
static void run(int op, int nonblocking) {
    int in[COUNT * 8], out[COUNT * 8], counts[8], displs[8], one[8], zero[8];
    MPI_Datatype types[8];
    for (int i = 0; i < COUNT * 8; i++) in[i] = rank + i;
    for (int i = 0; i < size; i++) { counts[i] = COUNT; displs[i] = i * COUNT; one[i] = 1; zero[i] = i * (int)sizeof(int); types[i] = MPI_INT; }
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    const char *o = OPS[op];
#define CALL(b, nb) do { if (nonblocking) OK(nb); else OK(b); } while (0)
    if (!strcmp(o, "barrier")) CALL(MPI_Barrier(w), MPI_Ibarrier(w, &r));
    else if (!strcmp(o, "bcast")) CALL(MPI_Bcast(in, COUNT, MPI_INT, 0, w), MPI_Ibcast(in, COUNT, MPI_INT, 0, w, &r));
    else if (!strcmp(o, "gather")) CALL(MPI_Gather(in, COUNT, MPI_INT, out, COUNT, MPI_INT, 0, w), MPI_Igather(in, COUNT, MPI_INT, out, COUNT, MPI_INT, 0, w, &r));
    else if (!strcmp(o, "gatherv")) CALL(MPI_Gatherv(in, COUNT, MPI_INT, out, counts, displs, MPI_INT, 0, w), MPI_Igatherv(in, COUNT, MPI_INT, out, counts, displs, MPI_INT, 0, w, &r));
    else if (!strcmp(o, "scatter")) CALL(MPI_Scatter(in, COUNT, MPI_INT, out, COUNT, MPI_INT, 0, w), MPI_Iscatter(in, COUNT, MPI_INT, out, COUNT, MPI_INT, 0, w, &r));
    else if (!strcmp(o, "scatterv")) CALL(MPI_Scatterv(in, counts, displs, MPI_INT, out, COUNT, MPI_INT, 0, w), MPI_Iscatterv(in, counts, displs, MPI_INT, out, COUNT, MPI_INT, 0, w, &r));
    else if (!strcmp(o, "allgather")) CALL(MPI_Allgather(in, COUNT, MPI_INT, out, COUNT, MPI_INT, w), MPI_Iallgather(in, COUNT, MPI_INT, out, COUNT, MPI_INT, w, &r));
    else if (!strcmp(o, "allgatherv")) CALL(MPI_Allgatherv(in, COUNT, MPI_INT, out, counts, displs, MPI_INT, w), MPI_Iallgatherv(in, COUNT, MPI_INT, out, counts, displs, MPI_INT, w, &r));
    else if (!strcmp(o, "alltoall")) CALL(MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, w), MPI_Ialltoall(in, 1, MPI_INT, out, 1, MPI_INT, w, &r));
    else if (!strcmp(o, "alltoallv")) CALL(MPI_Alltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, w), MPI_Ialltoallv(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, w, &r));
    else if (!strcmp(o, "alltoallw")) CALL(MPI_Alltoallw(in, one, zero, types, out, one, zero, types, w), MPI_Ialltoallw(in, one, zero, types, out, one, zero, types, w, &r));
    else if (!strcmp(o, "reduce")) CALL(MPI_Reduce(in, out, COUNT, MPI_INT, MPI_SUM, 0, w), MPI_Ireduce(in, out, COUNT, MPI_INT, MPI_SUM, 0, w, &r));
    else if (!strcmp(o, "allreduce")) CALL(MPI_Allreduce(in, out, COUNT, MPI_INT, MPI_SUM, w), MPI_Iallreduce(in, out, COUNT, MPI_INT, MPI_SUM, w, &r));
    else if (!strcmp(o, "reduce_scatter")) CALL(MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, w), MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, w, &r));
    else if (!strcmp(o, "reduce_scatter_block")) CALL(MPI_Reduce_scatter_block(in, out, COUNT, MPI_INT, MPI_SUM, w), MPI_Ireduce_scatter_block(in, out, COUNT, MPI_INT, MPI_SUM, w, &r));
    else if (!strcmp(o, "scan")) CALL(MPI_Scan(in, out, COUNT, MPI_INT, MPI_SUM, w), MPI_Iscan(in, out, COUNT, MPI_INT, MPI_SUM, w, &r));
    else if (!strcmp(o, "exscan")) CALL(MPI_Exscan(in, out, COUNT, MPI_INT, MPI_SUM, w), MPI_Iexscan(in, out, COUNT, MPI_INT, MPI_SUM, w, &r));
    else CHECK(!"unknown collective");
#undef CALL
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* The results themselves (a wrong algorithm must not pass by counting right). */
    if (!strcmp(o, "allreduce")) for (int i = 0; i < COUNT; i++) CHECK(out[i] == size * i + size * (size - 1) / 2);
    if (!strcmp(o, "allgather") || !strcmp(o, "allgatherv"))
        for (int p = 0; p < size; p++) for (int i = 0; i < COUNT; i++) CHECK(out[p * COUNT + i] == p + i);
    if (!strcmp(o, "bcast")) for (int i = 0; i < COUNT; i++) CHECK(in[i] == i);
}

/* The algorithm OXMPI_<OP>_ALGORITHM forces (NULL: none). */
static const char *forced(const char *op) {
    char var[64] = "OXMPI_";
    size_t k = strlen(var);
    for (const char *c = op; *c; c++) var[k++] = (char)toupper((unsigned char)*c);
    var[k] = 0;
    strcat(var, "_ALGORITHM");
    const char *v = getenv(var);
    return v && *v && strcmp(v, "auto") ? v : NULL;
}

static unsigned long long sum(int op) {
    unsigned long long s = 0;
    for (int a = 0; a < nalgs[op]; a++) s += rd(algs[op][a].h) - algs[op][a].before;
    return s;
}

static void snapshot(int op) { for (int a = 0; a < nalgs[op]; a++) algs[op][a].before = rd(algs[op][a].h); }

int main(int argc, char **argv) {
    int provided, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 8);
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_pvar_session_create(&session));

    /* Every algorithm counter, found by listing all performance variables. */
    int algcat; OK(MPI_T_category_get_index("oxmpi_coll_algorithms", &algcat));
    int ncat_p; OK(MPI_T_category_get_info(algcat, NULL, NULL, NULL, NULL, NULL, &ncat_p, NULL));
    int incat[MAXP * 2]; CHECK(ncat_p <= MAXP * 2);
    OK(MPI_T_category_get_pvars(algcat, ncat_p, incat));
    OK(MPI_T_pvar_get_num(&n));
    int found = 0;
    for (int i = 0; i < n; i++) {
        char name[128], desc[512]; int nlen = sizeof name, dlen = sizeof desc, verb, cls, bind, ro, cont, atomic, count;
        MPI_Datatype dt; MPI_T_enum et;
        OK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &et, desc, &dlen, &bind, &ro, &cont, &atomic));
        if (!strstr(name, "_algorithm_")) continue;
        int listed = 0;
        for (int k = 0; k < ncat_p; k++) listed |= incat[k] == i;
        CHECK(listed);
        CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && bind == MPI_T_BIND_NO_OBJECT && !cont && !ro);
        CHECK(strstr(desc, "MPI_") != NULL);
        for (int op = 0; op < NOPS; op++) {
            char prefix[96]; snprintf(prefix, sizeof prefix, "oxmpi_coll_%s_algorithm_", OPS[op]);
            if (strncmp(name, prefix, strlen(prefix))) continue;
            CHECK(nalgs[op] < MAXALG);
            struct alg *a = &algs[op][nalgs[op]++];
            snprintf(a->name, sizeof a->name, "%s", name + strlen(prefix));
            OK(MPI_T_pvar_handle_alloc(session, i, NULL, &a->h, &count));
            CHECK(count == 1);
            found++;
        }
    }
    CHECK(found == ncat_p);
    for (int op = 0; op < NOPS; op++) CHECK(nalgs[op] >= 1);
    OK(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES));

    int nforced = 0;
    for (int op = 0; op < NOPS; op++) {
        const char *f = forced(OPS[op]);
        int fi = -1;
        for (int a = 0; f && a < nalgs[op]; a++) if (!strcmp(algs[op][a].name, f)) fi = a;
        CHECK(!f || fi >= 0);
        nforced += f != NULL;
        snapshot(op);
        for (int i = 0; i < N; i++) run(op, 0);
        unsigned long long blocking = sum(op);
        unsigned long long on_forced = fi >= 0 ? rd(algs[op][fi].h) - algs[op][fi].before : 0;
        for (int i = 0; i < N; i++) run(op, 1);
        unsigned long long all = sum(op), on_forced_all = fi >= 0 ? rd(algs[op][fi].h) - algs[op][fi].before : 0;
        if (rank == 0) {
            printf("%s (%s):", OPS[op], f ? f : "auto");
            for (int a = 0; a < nalgs[op]; a++) printf(" %s=%llu", algs[op][a].name, rd(algs[op][a].h) - algs[op][a].before);
            printf("\n");
        }
        if (blocking != N || all != 2 * N)
            fprintf(stderr, "rank %d: %s: %llu blocking, %llu in all (expected %d, %d)\n", rank, OPS[op], blocking, all, N, 2 * N);
        CHECK(blocking == N && all == 2 * N);
        if (fi >= 0) {
            /* Exactly the forced algorithm ran (shm serves the blocking calls, and the
             * nonblocking ones of barrier and allreduce once the area exists). */
            int nb_shm = !strcmp(OPS[op], "barrier") || !strcmp(OPS[op], "allreduce");
            CHECK(on_forced == N);
            CHECK(on_forced_all == (strcmp(f, "shm") || nb_shm ? 2 * N : N));
        }
        if (!strcmp(OPS[op], "allreduce")) {
            /* A persistent allreduce counts once per start (none at its _init). */
            int in[COUNT], out[COUNT];
            for (int i = 0; i < COUNT; i++) in[i] = rank;
            MPI_Request pr;
            OK(MPI_Allreduce_init(in, out, COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
            CHECK(sum(op) == 2 * N);
            for (int i = 0; i < 3; i++) {
                OK(MPI_Start(&pr));
                OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
                CHECK(out[0] == size * (size - 1) / 2);
            }
            OK(MPI_Request_free(&pr));
            CHECK(sum(op) == 2 * N + 3);
            if (fi >= 0 && strcmp(f, "shm")) CHECK(rd(algs[op][fi].h) - algs[op][fi].before == 2 * N + 3);
        }
    }
    OK(MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_session_free(&session));
    OK(MPI_T_finalize());
    MPI_Finalize();
    if (rank == 0) printf("tools_algorithms: all checks passed on %d ranks (%d forced)\n", size, nforced);
    return 0;
}

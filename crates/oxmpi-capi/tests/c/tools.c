/* The MPI tool information interface (MPI_T): initialization before MPI_Init and
 * after MPI_Finalize, every control variable, performance variable, category and
 * enumeration listed and read, writes that change behaviour (the eager limit, a
 * collective algorithm), performance variables that count real traffic (messages
 * and bytes per transport, rendezvous, the unexpected and posted queues, time
 * blocked, collectives per communicator), sessions and handles with
 * start/stop/read/write/reset/readreset, the event source, and the MPI_T error
 * classes. Needs 2 ranks or more; prints "tools: all checks passed" on rank 0. */
#include "check.h"
#include <unistd.h>

#define EXPECT(call, err) do { int rc_ = (call); if (rc_ != (err)) { fprintf(stderr, "line %d: %s returned %d, expected %s (%d)\n", __LINE__, #call, rc_, #err, err); MPI_Abort(MPI_COMM_WORLD, 3); } } while (0)

static int rank, size;

static int cvar_index(const char *name) { int i; OK(MPI_T_cvar_get_index(name, &i)); return i; }

static int pvar_index(const char *name, int cls) { int i; OK(MPI_T_pvar_get_index(name, cls, &i)); return i; }

static int read_int_cvar(const char *name) {
    MPI_T_cvar_handle h; int count, v;
    OK(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count));
    CHECK(count == 1);
    OK(MPI_T_cvar_read(h, &v));
    OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL);
    return v;
}

static int write_int_cvar(const char *name, int v) {
    MPI_T_cvar_handle h; int count;
    OK(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count));
    int rc = MPI_T_cvar_write(h, &v);
    OK(MPI_T_cvar_handle_free(&h));
    return rc;
}

static MPI_T_pvar_session session;

static MPI_T_pvar_handle counter(const char *name, int cls, void *obj) {
    MPI_T_pvar_handle h; int count;
    OK(MPI_T_pvar_handle_alloc(session, pvar_index(name, cls), obj, &h, &count));
    CHECK(count == 1 && h != MPI_T_PVAR_HANDLE_NULL);
    return h;
}

static unsigned long long rd(MPI_T_pvar_handle h) {
    unsigned long long v; OK(MPI_T_pvar_read(session, h, &v)); return v;
}

/* The enumeration item named `item` of cvar `name`'s enumeration. */
static int enum_value(const char *name, const char *item) {
    int verb, bind, scope; MPI_Datatype dt; MPI_T_enum et;
    OK(MPI_T_cvar_get_info(cvar_index(name), NULL, NULL, &verb, &dt, &et, NULL, NULL, &bind, &scope));
    CHECK(dt == MPI_INT && et != MPI_T_ENUM_NULL);
    int n; OK(MPI_T_enum_get_info(et, &n, NULL, NULL));
    for (int i = 0; i < n; i++) {
        int v; char s[64]; int len = sizeof s;
        OK(MPI_T_enum_get_item(et, i, &v, s, &len));
        if (strcmp(s, item) == 0) return v;
    }
    CHECK(!"enumeration item not found");
    return -1;
}

static void strings_and_lookups(void) {
    /* The string convention: length with the null, truncation to len-1. */
    int idx = cvar_index("OXMPI_EAGER_LIMIT");
    char name[8]; int len = sizeof name, dlen = 0;
    char desc[4];
    OK(MPI_T_cvar_get_info(idx, name, &len, NULL, NULL, NULL, desc, &dlen, NULL, NULL));
    CHECK(strcmp(name, "OXMPI_E") == 0 && len == 8);
    CHECK(dlen > 20); /* 0 in: the length the description needs */
    len = 0;
    OK(MPI_T_cvar_get_info(idx, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len == (int)strlen("OXMPI_EAGER_LIMIT") + 1);
    len = 5;
    OK(MPI_T_cvar_get_info(idx, NULL, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len == (int)strlen("OXMPI_EAGER_LIMIT") + 1);
    int n; OK(MPI_T_cvar_get_num(&n));
    EXPECT(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    int i;
    EXPECT(MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &i), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_index("oxmpi_msgs_sent_shm", MPI_T_PVAR_CLASS_LEVEL, &i), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_category_get_index("no_such_category", &i), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &n, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_cvar_handle stale;
    OK(MPI_T_cvar_handle_alloc(idx, NULL, &stale, &n));
    MPI_T_cvar_handle copy = stale;
    OK(MPI_T_cvar_handle_free(&stale));
    EXPECT(MPI_T_cvar_read(copy, &n), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_handle_free(&copy), MPI_T_ERR_INVALID_HANDLE);
}

/* Every cvar: info, index round trip, its value read, its enumeration listed. */
static void all_cvars(void) {
    int n; OK(MPI_T_cvar_get_num(&n));
    CHECK(n >= 20);
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024]; int nlen = sizeof name, dlen = sizeof desc, verb, bind, scope, count;
        MPI_Datatype dt; MPI_T_enum et;
        OK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &et, desc, &dlen, &bind, &scope));
        CHECK(nlen == (int)strlen(name) + 1 && dlen == (int)strlen(desc) + 1 && dlen > 10);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ);
        CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL);
        CHECK(cvar_index(name) == i);
        MPI_T_cvar_handle h;
        OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        char text[160];
        if (dt == MPI_INT) {
            int v; OK(MPI_T_cvar_read(h, &v));
            snprintf(text, sizeof text, "%d", v);
            if (et != MPI_T_ENUM_NULL) {
                int items, found = 0; char ename[64]; int elen = sizeof ename;
                OK(MPI_T_enum_get_info(et, &items, ename, &elen));
                CHECK(items >= 2);
                for (int k = 0; k < items; k++) {
                    int ev; char iname[64]; int ilen = sizeof iname;
                    OK(MPI_T_enum_get_item(et, k, &ev, iname, &ilen));
                    if (ev == v) { found = 1; snprintf(text, sizeof text, "%d (%s)", v, iname); }
                }
                CHECK(found);
                int ev; EXPECT(MPI_T_enum_get_item(et, items, &ev, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
            }
        } else if (dt == MPI_DOUBLE) {
            double v; OK(MPI_T_cvar_read(h, &v));
            snprintf(text, sizeof text, "%g", v);
        } else {
            CHECK(dt == MPI_CHAR && count > 1);
            char s[64]; CHECK(count <= (int)sizeof s); OK(MPI_T_cvar_read(h, s));
            CHECK((int)strlen(s) < count);
            snprintf(text, sizeof text, "\"%s\"", s);
        }
        if (scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_CONSTANT) {
            char junk[256] = {0};
            EXPECT(MPI_T_cvar_write(h, junk), MPI_T_ERR_CVAR_SET_NEVER);
        }
        OK(MPI_T_cvar_handle_free(&h));
        if (rank == 0) printf("cvar %s = %s\n", name, text);
    }
}

/* Every pvar: info, index round trip, a handle, a read. */
static void all_pvars(void) {
    int n; OK(MPI_T_pvar_get_num(&n));
    CHECK(n >= 20);
    MPI_Comm world = MPI_COMM_WORLD;
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024]; int nlen = sizeof name, dlen = sizeof desc, verb, cls, bind, ro, cont, atomic, count;
        MPI_Datatype dt; MPI_T_enum et;
        OK(MPI_T_pvar_get_info(i, name, &nlen, &verb, &cls, &dt, &et, desc, &dlen, &bind, &ro, &cont, &atomic));
        CHECK(nlen == (int)strlen(name) + 1 && dlen > 10);
        CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC);
        CHECK(dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_DOUBLE);
        CHECK(pvar_index(name, cls) == i);
        MPI_T_pvar_handle h;
        if (bind == MPI_T_BIND_MPI_COMM)
            EXPECT(MPI_T_pvar_handle_alloc(session, i, NULL, &h, &count), MPI_T_ERR_INVALID);
        OK(MPI_T_pvar_handle_alloc(session, i, bind == MPI_T_BIND_MPI_COMM ? (void *)&world : NULL, &h, &count));
        CHECK(count == 1);
        double v = 0;
        if (dt == MPI_DOUBLE) OK(MPI_T_pvar_read(session, h, &v));
        else { unsigned long long u; OK(MPI_T_pvar_read(session, h, &u)); v = (double)u; }
        if (cont) {
            EXPECT(MPI_T_pvar_start(session, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
            EXPECT(MPI_T_pvar_stop(session, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
        } else {
            CHECK(v == 0); /* not started yet: nothing counted */
            OK(MPI_T_pvar_start(session, h));
            OK(MPI_T_pvar_stop(session, h));
        }
        if (ro) {
            unsigned long long z = 0;
            EXPECT(MPI_T_pvar_write(session, h, &z), MPI_T_ERR_PVAR_NO_WRITE);
            EXPECT(MPI_T_pvar_reset(session, h), MPI_T_ERR_PVAR_NO_WRITE);
        }
        OK(MPI_T_pvar_handle_free(session, &h));
        CHECK(h == MPI_T_PVAR_HANDLE_NULL);
        if (rank == 0) printf("pvar %s class %d = %g\n", name, cls, v);
    }
}

/* Every category; every variable is listed in exactly one. */
static void all_categories(void) {
    int ncat, ncv, npv; OK(MPI_T_category_get_num(&ncat)); OK(MPI_T_cvar_get_num(&ncv)); OK(MPI_T_pvar_get_num(&npv));
    CHECK(ncat >= 2);
    int seen_c[256] = {0}, seen_p[256] = {0};
    CHECK(ncv <= 256 && npv <= 256);
    for (int c = 0; c < ncat; c++) {
        char name[64], desc[512]; int nlen = sizeof name, dlen = sizeof desc, nc, np, nsub, nev;
        OK(MPI_T_category_get_info(c, name, &nlen, desc, &dlen, &nc, &np, &nsub));
        int idx; OK(MPI_T_category_get_index(name, &idx)); CHECK(idx == c);
        int ids[256];
        OK(MPI_T_category_get_cvars(c, nc, ids));
        for (int k = 0; k < nc; k++) { CHECK(ids[k] >= 0 && ids[k] < ncv); seen_c[ids[k]]++; }
        OK(MPI_T_category_get_pvars(c, np, ids));
        for (int k = 0; k < np; k++) { CHECK(ids[k] >= 0 && ids[k] < npv); seen_p[ids[k]]++; }
        OK(MPI_T_category_get_categories(c, nsub, ids));
        for (int k = 0; k < nsub; k++) CHECK(ids[k] > 0 && ids[k] < ncat && ids[k] != c);
        OK(MPI_T_category_get_num_events(c, &nev)); CHECK(nev == 0);
        if (rank == 0) printf("category %s: %d cvars, %d pvars, %d subcategories\n", name, nc, np, nsub);
    }
    for (int i = 0; i < ncv; i++) CHECK(seen_c[i] == 1);
    for (int i = 0; i < npv; i++) CHECK(seen_p[i] == 1);
    int ids[1];
    EXPECT(MPI_T_category_get_cvars(ncat, 1, ids), MPI_T_ERR_INVALID_INDEX);
    int u1, u2; OK(MPI_T_category_changed(&u1)); OK(MPI_T_category_changed(&u2)); CHECK(u1 == u2);
}

static void events_and_source(void) {
    int n; OK(MPI_T_event_get_num(&n)); CHECK(n == 0);
    int i; EXPECT(MPI_T_event_get_index("anything", &i), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    MPI_T_event_registration reg;
    EXPECT(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    OK(MPI_T_source_get_num(&n)); CHECK(n == 1);
    char name[64]; int len = sizeof name; MPI_T_source_order ord; MPI_Count tps, max; MPI_Info info;
    OK(MPI_T_source_get_info(0, name, &len, NULL, NULL, &ord, &tps, &max, &info));
    CHECK(ord == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0 && len == (int)strlen(name) + 1);
    MPI_Count t1, t2; OK(MPI_T_source_get_timestamp(0, &t1)); usleep(2000); OK(MPI_T_source_get_timestamp(0, &t2));
    CHECK(t2 - t1 >= 1000000);
    EXPECT(MPI_T_source_get_timestamp(1, &t1), MPI_T_ERR_INVALID_INDEX);
}

/* Traffic between ranks 0 and 1 shows in the counters of the transport between them. */
static void counters_count(const char *via) {
    char n_msent[64], n_bsent[64], n_mrecv[64], n_brecv[64];
    snprintf(n_msent, 64, "oxmpi_msgs_sent_%s", via); snprintf(n_bsent, 64, "oxmpi_bytes_sent_%s", via);
    snprintf(n_mrecv, 64, "oxmpi_msgs_received_%s", via); snprintf(n_brecv, 64, "oxmpi_bytes_received_%s", via);
    MPI_T_pvar_handle msent = counter(n_msent, MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle bsent = counter(n_bsent, MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle mrecv = counter(n_mrecv, MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle brecv = counter(n_brecv, MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle rndv = counter("oxmpi_rendezvous_sent", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle unexp = counter("oxmpi_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL, NULL);
    MPI_T_pvar_handle unexp_hwm = counter("oxmpi_unexpected_queue_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK, NULL);
    MPI_T_pvar_handle posted = counter("oxmpi_posted_queue_length", MPI_T_PVAR_CLASS_LEVEL, NULL);
    MPI_T_pvar_handle blocked = counter("oxmpi_time_blocked", MPI_T_PVAR_CLASS_TIMER, NULL);
    MPI_T_pvar_handle waits = counter("oxmpi_blocking_waits", MPI_T_PVAR_CLASS_COUNTER, NULL);
    OK(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES));
    EXPECT(MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, NULL), MPI_T_ERR_INVALID_HANDLE);

    enum { N = 10, S = 200, K = 6 };
    char buf[S * 4]; memset(buf, rank, sizeof buf);
    /* N eager messages of S bytes from 0 to 1: exactly N and N*S on the sender. */
    /* The receiver looks before the barrier (the messages may arrive while it
     * still waits in it), the sender after it (so no barrier message is counted). */
    unsigned long long r0 = rd(mrecv), rb0 = rd(brecv);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long m0 = rd(msent), b0 = rd(bsent);
    if (rank == 0) {
        for (int i = 0; i < N; i++) MPI_Send(buf, S, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        CHECK(rd(msent) - m0 == N && rd(bsent) - b0 == N * S);
    } else if (rank == 1) {
        for (int i = 0; i < N; i++) MPI_Recv(buf, S, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        unsigned long long dm = rd(mrecv) - r0, db = rd(brecv) - rb0;
        CHECK(dm >= N && dm <= N + 2 * (unsigned)size && db >= N * S && db <= N * S + 64);
    }
    /* Stopped handles do not count; readreset gives the count and zeroes it. */
    unsigned long long v;
    OK(MPI_T_pvar_readreset(session, msent, &v));
    CHECK(rd(msent) == 0);
    OK(MPI_T_pvar_stop(session, msent));
    if (rank == 0) MPI_Send(buf, 1, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    if (rank == 1) MPI_Recv(buf, 1, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rd(msent) == 0);
    OK(MPI_T_pvar_start(session, msent));
    /* Write sets the handle's value. */
    unsigned long long big = 1000;
    OK(MPI_T_pvar_write(session, msent, &big));
    CHECK(rd(msent) == 1000);
    OK(MPI_T_pvar_reset(session, msent));
    CHECK(rd(msent) == 0);

    /* Messages sent before their receive wait in the unexpected queue. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) for (int i = 0; i < K; i++) MPI_Send(buf, 8, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* on one ring, the barrier's message follows the K messages */
    if (rank == 1) {
        CHECK(rd(unexp) >= K && rd(unexp_hwm) >= K);
        for (int i = 0; i < K; i++) MPI_Recv(buf, 8, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* (rank 0 may be in the next barrier already: its message can wait here too) */
        CHECK(rd(unexp) < K && rd(unexp_hwm) >= K);
    }
    /* Receives posted before their message wait in the posted queue; the
     * receiver's wait for a late sender is time blocked. */
    MPI_Request reqs[K];
    double t0 = 0;
    unsigned long long w0 = rd(waits);
    double blocked0; OK(MPI_T_pvar_read(session, blocked, &blocked0));
    if (rank == 1) {
        for (int i = 0; i < K; i++) MPI_Irecv(buf, 1, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &reqs[i]);
        CHECK(rd(posted) >= K);
        t0 = MPI_Wtime();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { usleep(300000); for (int i = 0; i < K; i++) MPI_Send(buf, 1, MPI_CHAR, 1, 4, MPI_COMM_WORLD); }
    if (rank == 1) {
        MPI_Waitall(K, reqs, MPI_STATUSES_IGNORE);
        double waited = MPI_Wtime() - t0, blocked1;
        OK(MPI_T_pvar_read(session, blocked, &blocked1));
        CHECK(rd(posted) == 0);
        CHECK(blocked1 - blocked0 >= 0.2 && blocked1 - blocked0 <= waited + 0.05);
        CHECK(rd(waits) > w0);
    }
    /* Beyond the eager limit (set through MPI_T), messages go by rendezvous. */
    int old = read_int_cvar("OXMPI_EAGER_LIMIT");
    OK(write_int_cvar("OXMPI_EAGER_LIMIT", 100));
    CHECK(read_int_cvar("OXMPI_EAGER_LIMIT") == 100);
    unsigned long long rv0 = rd(rndv);
    if (rank == 0) {
        MPI_Send(buf, 50, MPI_CHAR, 1, 5, MPI_COMM_WORLD);
        CHECK(rd(rndv) == rv0);
        MPI_Send(buf, 500, MPI_CHAR, 1, 5, MPI_COMM_WORLD);
        CHECK(rd(rndv) == rv0 + 1);
    } else if (rank == 1) {
        MPI_Recv(buf, 50, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(buf, 500, MPI_CHAR, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    OK(write_int_cvar("OXMPI_EAGER_LIMIT", old));
    EXPECT(write_int_cvar("OXMPI_EAGER_LIMIT", -5), MPI_T_ERR_INVALID);

    /* Messages to oneself count as self traffic. */
    MPI_T_pvar_handle self_sent = counter("oxmpi_msgs_sent_self", MPI_T_PVAR_CLASS_COUNTER, NULL);
    MPI_T_pvar_handle self_recv = counter("oxmpi_bytes_received_self", MPI_T_PVAR_CLASS_COUNTER, NULL);
    OK(MPI_T_pvar_start(session, self_sent)); OK(MPI_T_pvar_start(session, self_recv));
    MPI_Sendrecv(buf, 16, MPI_CHAR, rank, 6, buf + 100, 16, MPI_CHAR, rank, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(rd(self_sent) == 1 && rd(self_recv) == 16);

    /* Handles belong to their session. */
    MPI_T_pvar_session other;
    OK(MPI_T_pvar_session_create(&other));
    EXPECT(MPI_T_pvar_read(other, msent, &v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_handle_free(other, &msent), MPI_T_ERR_INVALID_HANDLE);
    OK(MPI_T_pvar_session_free(&other));
    CHECK(other == MPI_T_PVAR_SESSION_NULL);
    EXPECT(MPI_T_pvar_read(other, msent, &v), MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES));
    CHECK(rd(msent) == 0 && rd(rndv) == 0);
    MPI_T_pvar_handle all[] = {msent, bsent, mrecv, brecv, rndv, unexp, unexp_hwm, posted, blocked, waits, self_sent, self_recv};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) OK(MPI_T_pvar_handle_free(session, &all[i]));
}

/* Collectives started on a communicator; the algorithm chosen through MPI_T. */
static void collectives(void) {
    MPI_Comm dup; MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_T_pvar_handle on_dup = counter("oxmpi_coll_blocking", MPI_T_PVAR_CLASS_COUNTER, &dup);
    MPI_T_pvar_handle nb_dup = counter("oxmpi_coll_nonblocking", MPI_T_PVAR_CLASS_COUNTER, &dup);
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_T_pvar_handle on_world = counter("oxmpi_coll_blocking", MPI_T_PVAR_CLASS_COUNTER, &world);
    OK(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES));
    for (int i = 0; i < 3; i++) MPI_Barrier(dup);
    int x = rank + 1, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, dup);
    MPI_Request r; MPI_Ibarrier(dup, &r); MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(rd(on_dup) == 4 && rd(nb_dup) == 1 && rd(on_world) == 0);
    OK(MPI_T_pvar_handle_free(session, &nb_dup));
    OK(MPI_T_pvar_handle_free(session, &on_world));
    /* Every rank chooses the ring allreduce: still the right sum. */
    int ring = enum_value("OXMPI_ALLREDUCE_ALGORITHM", "ring");
    OK(write_int_cvar("OXMPI_ALLREDUCE_ALGORITHM", ring));
    CHECK(read_int_cvar("OXMPI_ALLREDUCE_ALGORITHM") == ring);
    int big[1000], out[1000];
    for (int i = 0; i < 1000; i++) big[i] = i + rank;
    MPI_Allreduce(big, out, 1000, MPI_INT, MPI_SUM, dup);
    for (int i = 0; i < 1000; i++) CHECK(out[i] == size * i + size * (size - 1) / 2);
    EXPECT(write_int_cvar("OXMPI_ALLREDUCE_ALGORITHM", 999), MPI_T_ERR_INVALID);
    OK(write_int_cvar("OXMPI_ALLREDUCE_ALGORITHM", 0));
    CHECK(read_int_cvar("OXMPI_ALLREDUCE_ALGORITHM") == 0);
    OK(MPI_T_pvar_handle_free(session, &on_dup));
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv) {
    int provided, n;
    /* Before MPI_T_init_thread: not initialized. */
    EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    /* Usable before MPI_Init, reference counted. */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_SINGLE);
    OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE);
    EXPECT(MPI_T_init_thread(12345, &provided), MPI_T_ERR_INVALID);
    /* A cvar written before MPI_Init is the setting MPI_Init starts with. */
    OK(write_int_cvar("OXMPI_EAGER_LIMIT", 4000));
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    CHECK(read_int_cvar("OXMPI_EAGER_LIMIT") == 4000);
    OK(write_int_cvar("OXMPI_EAGER_LIMIT", 65536));
    OK(MPI_T_pvar_session_create(&session));
    strings_and_lookups();
    all_cvars();
    all_pvars();
    all_categories();
    events_and_source();
    MPI_T_cvar_handle th; int count;
    OK(MPI_T_cvar_handle_alloc(cvar_index("OXMPI_TRANSPORT"), NULL, &th, &count));
    char transport[64]; OK(MPI_T_cvar_read(th, transport)); OK(MPI_T_cvar_handle_free(&th));
    counters_count(strcmp(transport, "tcp") == 0 ? "tcp" : "shm");
    collectives();
    char s[MPI_MAX_ERROR_STRING]; int len;
    OK(MPI_Error_string(MPI_T_ERR_INVALID_INDEX, s, &len));
    CHECK(strstr(s, "MPI_T_ERR_INVALID_INDEX") != NULL);
    MPI_T_pvar_handle after = counter("oxmpi_msgs_sent_self", MPI_T_PVAR_CLASS_COUNTER, NULL);
    OK(MPI_T_pvar_start(session, after));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    /* After MPI_Finalize the interface still answers. */
    OK(MPI_T_cvar_get_num(&n));
    unsigned long long v; OK(MPI_T_pvar_read(session, after, &v));
    OK(MPI_T_pvar_session_free(&session));
    OK(MPI_T_finalize());
    OK(MPI_T_cvar_get_num(&n)); /* one init still holds */
    OK(MPI_T_finalize());
    if (MPI_T_cvar_get_num(&n) != MPI_T_ERR_NOT_INITIALIZED) { fprintf(stderr, "still initialized\n"); return 1; }
    if (rank == 0) printf("tools: all checks passed on %d ranks (%s)\n", size, transport);
    return 0;
}

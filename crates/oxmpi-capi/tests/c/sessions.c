/* MPI-4 sessions beside the World model: a session before MPI_Init, two
 * sessions and the World model at once, a session after MPI_Finalize; process
 * sets, groups and communicators from them, session error handlers and
 * buffers, and objects of different sessions refused with MPI_ERR_SESSION. */
#include "check.h"

static int calls, last_code;
static MPI_Session last_session;
static void on_error(MPI_Session *s, int *code, ...) { calls++; last_code = *code; last_session = *s; }

static int class_of(int rc) { int c; MPI_Error_class(rc, &c); return c; }

/* A communicator of all processes from session s: checks ranks and an allreduce. */
static void world_from(MPI_Session s, const char *tag, int expect_size) {
    MPI_Group g; MPI_Comm c; int n, rank, size, grank, sum = 0, one = 1;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    OK(MPI_Group_size(g, &n)); CHECK(n == expect_size || expect_size < 0);
    OK(MPI_Group_rank(g, &grank));
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Comm_rank(c, &rank)); OK(MPI_Comm_size(c, &size));
    CHECK(rank == grank && size == n);
    OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c)); CHECK(sum == size);
    /* a communicator derived from a session communicator */
    MPI_Comm d; OK(MPI_Comm_dup(c, &d)); OK(MPI_Barrier(d)); OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&c)); OK(MPI_Group_free(&g));
}

int main(int argc, char **argv) {
    int flag, n, len, rank, size;
    char name[MPI_MAX_PSET_NAME_LEN], val[64];
    MPI_Session s1, s2, s3;
    MPI_Info info;

    /* ---- a session before MPI_Init */
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
    CHECK(s1 != MPI_SESSION_NULL);
    OK(MPI_Initialized(&flag)); CHECK(!flag);
    OK(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &n)); CHECK(n >= 2);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        len = 0;
        OK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, NULL)); CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN);
        OK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, name)); CHECK((int)strlen(name) == len - 1);
        seen_world |= !strcmp(name, "mpi://WORLD"); seen_self |= !strcmp(name, "mpi://SELF");
    }
    CHECK(seen_world && seen_self);
    CHECK(class_of(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, n, &len, name)) == MPI_ERR_ARG);
    OK(MPI_Session_get_pset_info(s1, "mpi://SELF", &info));
    len = sizeof val; OK(MPI_Info_get_string(info, "mpi_size", &len, val, &flag)); CHECK(flag && !strcmp(val, "1"));
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_pset_info(s1, "mpi://WORLD", &info));
    len = sizeof val; OK(MPI_Info_get_string(info, "mpi_size", &len, val, &flag)); CHECK(flag);
    size = atoi(val); CHECK(size >= 1);
    OK(MPI_Info_free(&info));
    CHECK(class_of(MPI_Session_get_pset_info(s1, "mpi://NOWHERE", &info)) == MPI_ERR_ARG);
    MPI_Group gself; OK(MPI_Group_from_session_pset(s1, "mpi://SELF", &gself));
    OK(MPI_Group_size(gself, &n)); CHECK(n == 1);
    OK(MPI_Group_rank(gself, &n)); CHECK(n == 0);
    OK(MPI_Group_free(&gself));
    world_from(s1, "org.oxmpi.before-init", size);

    /* ---- the World model and two sessions at once */
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank)); OK(MPI_Comm_size(MPI_COMM_WORLD, &n)); CHECK(n == size);
    MPI_Info_create(&info); MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s2));
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_info(s2, &info));
    len = sizeof val; OK(MPI_Info_get_string(info, "thread_level", &len, val, &flag));
    CHECK(flag && !strcmp(val, "MPI_THREAD_MULTIPLE"));
    OK(MPI_Info_free(&info));
    world_from(s2, "org.oxmpi.beside-world", size);
    world_from(s1, "org.oxmpi.beside-world", size);

    /* objects of different sessions (or of a session and the World model) never mix */
    MPI_Group g1, g2, gw, gu; MPI_Comm c;
    OK(MPI_Group_from_session_pset(s1, "mpi://WORLD", &g1));
    OK(MPI_Group_from_session_pset(s2, "mpi://WORLD", &g2));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    CHECK(class_of(MPI_Group_union(g1, g2, &gu)) == MPI_ERR_SESSION); CHECK(gu == MPI_GROUP_NULL);
    CHECK(class_of(MPI_Group_intersection(gw, g1, &gu)) == MPI_ERR_SESSION);
    if (size >= 2) {
        MPI_Group lo, hi; int zero = 0;
        OK(MPI_Group_incl(g1, 1, &zero, &lo));   /* still of session 1 */
        OK(MPI_Group_excl(g2, 1, &zero, &hi));   /* of session 2 */
        CHECK(class_of(MPI_Intercomm_create_from_groups(lo, 0, hi, 0, "org.oxmpi.mix", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c)) == MPI_ERR_SESSION);
        OK(MPI_Group_free(&lo)); OK(MPI_Group_free(&hi));
    }
    /* a union inside one session stays in it and makes a communicator */
    OK(MPI_Group_union(g1, g1, &gu));
    OK(MPI_Comm_create_from_group(gu, "org.oxmpi.union", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    /* the session's buffer serves buffered sends on its communicators */
    static char buf[1 << 16];
    OK(MPI_Session_attach_buffer(s1, buf, sizeof buf));
    CHECK(class_of(MPI_Session_attach_buffer(s1, buf, sizeof buf)) == MPI_ERR_BUFFER);
    int x = 42 + rank, y = -1, me;
    OK(MPI_Comm_rank(c, &me));
    OK(MPI_Bsend(&x, 1, MPI_INT, me, 5, c));
    OK(MPI_Recv(&y, 1, MPI_INT, me, 5, c, MPI_STATUS_IGNORE)); CHECK(y == x);
    OK(MPI_Session_flush_buffer(s1));
    MPI_Request fr; OK(MPI_Session_iflush_buffer(s1, &fr)); OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    void *addr; int bsize;
    OK(MPI_Session_detach_buffer(s1, &addr, &bsize)); CHECK(addr == buf && bsize == (int)sizeof buf);
    CHECK(class_of(MPI_Session_detach_buffer(s1, &addr, &bsize)) == MPI_ERR_BUFFER);
    /* a session with a live communicator cannot be finalized */
    MPI_Session keep = s1;
    CHECK(class_of(MPI_Session_finalize(&keep)) == MPI_ERR_SESSION);
    OK(MPI_Comm_free(&c));
    OK(MPI_Group_free(&gu)); OK(MPI_Group_free(&g1)); OK(MPI_Group_free(&g2)); OK(MPI_Group_free(&gw));

    /* session error handlers */
    MPI_Errhandler eh, got;
    OK(MPI_Session_create_errhandler(on_error, &eh));
    OK(MPI_Session_set_errhandler(s2, eh));
    OK(MPI_Session_get_errhandler(s2, &got)); CHECK(got == eh); OK(MPI_Errhandler_free(&got));
    OK(MPI_Session_call_errhandler(s2, MPI_ERR_OTHER));
    CHECK(calls == 1 && last_code == MPI_ERR_OTHER && last_session == s2);
    MPI_Group bad;
    CHECK(class_of(MPI_Group_from_session_pset(s2, "mpi://ELSEWHERE", &bad)) == MPI_ERR_ARG);
    CHECK(calls == 2 && class_of(last_code) == MPI_ERR_ARG && last_session == s2);
    OK(MPI_Session_set_errhandler(s2, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
    /* handles convert to Fortran and to the ABI's integers and back */
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s2)) == s2);
    CHECK(MPI_Session_fromint(MPI_Session_toint(s2)) == s2);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(MPI_SESSION_NULL)) == MPI_SESSION_NULL);
    OK(MPI_Session_finalize(&s2)); CHECK(s2 == MPI_SESSION_NULL);
    /* a finalized session is an MPI_ERR_SESSION (errors of an invalid session go to MPI_COMM_SELF's handler) */
    MPI_Session dead = keep; OK(MPI_Session_finalize(&keep));
    CHECK(class_of(MPI_Session_get_num_psets(dead, MPI_INFO_NULL, &n)) == MPI_ERR_SESSION);

    /* ---- open a session, end the World model, use the session after it */
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3));
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag)); CHECK(flag);
    world_from(s3, "org.oxmpi.after-finalize", size);
    /* MPI_COMM_WORLD is gone (its error handler, MPI_ERRORS_RETURN, reports it) */
    CHECK(class_of(MPI_Comm_rank(MPI_COMM_WORLD, &n)) == MPI_ERR_COMM);
    /* ... for point-to-point too, whose fast path takes MPI_COMM_WORLD itself (capi31) */
    {
        MPI_Request rq;
        CHECK(class_of(MPI_Send(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_COMM);
        CHECK(class_of(MPI_Isend(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &rq)) == MPI_ERR_COMM);
        CHECK(class_of(MPI_Recv(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) == MPI_ERR_COMM);
    }
    OK(MPI_Session_finalize(&s3));
    if (rank == 0) printf("sessions: all checks passed on %d ranks\n", size);
    return 0;
}

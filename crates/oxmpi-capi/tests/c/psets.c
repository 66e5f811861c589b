/* Process sets of an MPMD job, seen through an MPI-4 session only (no
 * MPI_Init): argv[1] is the application context this block is (the launcher's
 * MPI_APPNUM, which a session-only process cannot ask MPI_COMM_WORLD for).
 * Prints one line "rank R app A psets: NAME NAME ..." and checks that
 *  - mpi://WORLD and mpi://SELF come first;
 *  - every mpix://APP/N set has the size MPI_Session_get_pset_info says, its
 *    members are consecutive world ranks, and this process is in exactly the
 *    one of its own block; a communicator made from it (MPI_Comm_create_from_group)
 *    sums to its size;
 *  - an unknown name is MPI_ERR_ARG.
 * With argv[2] = "count=K", also checks that there are exactly K sets. */
#include "check.h"
static int class_of(int rc) { int c; MPI_Error_class(rc, &c); return c; }

int main(int argc, char **argv) {
    int app = argc > 1 ? atoi(argv[1]) : 0, want = -1;
    if (argc > 2 && strncmp(argv[2], "count=", 6) == 0) want = atoi(argv[2] + 6);
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group world, self;
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    OK(MPI_Group_from_session_pset(s, "mpi://SELF", &self));
    int wrank, wsize;
    OK(MPI_Group_rank(world, &wrank));
    OK(MPI_Group_size(world, &wsize));
    int n;
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2);
    if (want >= 0) CHECK(n == want);
    char line[4096];
    int at = snprintf(line, sizeof line, "rank %d app %d psets:", wrank, app), mine = 0;
    for (int i = 0; i < n; i++) {
        char name[MPI_MAX_PSET_NAME_LEN];
        int len = sizeof name;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        if (i == 0) CHECK(strcmp(name, "mpi://WORLD") == 0);
        if (i == 1) CHECK(strcmp(name, "mpi://SELF") == 0);
        at += snprintf(line + at, sizeof line - at, " %s", name);
        if (strncmp(name, "mpix://APP/", 11) != 0) continue;
        int number = atoi(name + 11);
        MPI_Info info;
        char val[64];
        int flag;
        OK(MPI_Session_get_pset_info(s, name, &info));
        OK(MPI_Info_get_string(info, "mpi_size", (len = sizeof val, &len), val, &flag));
        CHECK(flag);
        OK(MPI_Info_free(&info));
        MPI_Group g;
        OK(MPI_Group_from_session_pset(s, name, &g));
        int gsize, grank;
        OK(MPI_Group_size(g, &gsize));
        OK(MPI_Group_rank(g, &grank));
        CHECK(gsize == atoi(val) && gsize >= 1 && gsize <= wsize);
        /* Members are consecutive world ranks (blocks are placed in order). */
        int first = -1;
        for (int r = 0; r < gsize; r++) {
            int w;
            OK(MPI_Group_translate_ranks(g, 1, &r, world, &w));
            if (r == 0) first = w;
            CHECK(w == first + r);
        }
        CHECK((grank != MPI_UNDEFINED) == (number == app));
        if (number == app) {
            mine++;
            CHECK(grank == wrank - first);
            MPI_Comm c;
            OK(MPI_Comm_create_from_group(g, "oxmpi.test.psets", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
            int one = 1, sum = 0;
            OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
            CHECK(sum == gsize);
            OK(MPI_Comm_free(&c));
        }
        OK(MPI_Group_free(&g));
    }
    MPI_Group none;
    CHECK(class_of(MPI_Group_from_session_pset(s, "mpix://APP/99", &none)) == MPI_ERR_ARG);
    printf("%s app-psets-of-mine %d\n", line, mine);
    OK(MPI_Group_free(&world));
    OK(MPI_Group_free(&self));
    OK(MPI_Session_finalize(&s));
    return 0;
}

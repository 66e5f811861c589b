/* MPI_Comm_spawn and MPI_Comm_spawn_multiple under our mpiexec.
 *   spawn parent N       every parent rank takes part; the root spawns N
 *                        children of this program with argv {"child", "a b"}
 *                        and info wdir=/tmp; both sides check the
 *                        intercommunicator (p2p, bcast, allreduce, merge),
 *                        then disconnect; the parents go on alone.
 *   spawn infofile N     as parent N, but the program named by its bare name
 *                        found through info `path`, `path` and `wdir` given
 *                        in a file named by info `file`.
 *   spawn multiple       spawn_multiple: 1 x "childA" and 2 x "childB",
 *                        MPI_APPNUM 0 and 1, errcodes all MPI_SUCCESS.
 *   spawn dies           the spawned child exits without MPI_Finalize: the
 *                        launcher ends the whole job, naming it.
 *   spawn missing        spawning a program that does not exist fails with
 *                        MPI_ERR_SPAWN (errors returned).
 *   spawn unsupported    where the process manager cannot start processes
 *                        (PMI-2, Slurm's PMIx): MPI_ERR_UNSUPPORTED_OPERATION.
 *   spawn badhost HOST   the process manager refuses to start children on
 *                        HOST (info key `host`): MPI_ERR_SPAWN, errors
 *                        returned, and the parents go on.
 *   spawn remote HOST    two children on HOST (info key `host`), in another
 *                        network namespace than their parents.
 *   spawn usize          rank 0 prints MPI_UNIVERSE_SIZE.
 *   spawn killed         two children print the first one's pid and wait
 *                        for a message that never comes: the test kills that
 *                        child, and the launcher ends the whole job. */
#include "check.h"
#include <unistd.h>

/* The application process sets (mpix://APP/N) an MPI-4 session of this
 * process lists, where the launcher says which rank runs which command (our
 * mpiexec, a PMIx server; not Hydra): each has as many members as its
 * command was given processes (1, then 2), and this process is in the one of
 * its MPI_APPNUM. Returns how many there are. */
static int app_psets(int appnum) {
    MPI_Session s;
    int n, apps = 0;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    for (int i = 0; i < n; i++) {
        char name[MPI_MAX_PSET_NAME_LEN];
        int len = sizeof name, size, me;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        if (strncmp(name, "mpix://APP/", 11) != 0) continue;
        int number = atoi(name + 11);
        MPI_Group g;
        OK(MPI_Group_from_session_pset(s, name, &g));
        OK(MPI_Group_size(g, &size));
        OK(MPI_Group_rank(g, &me));
        CHECK(size == (number == 0 ? 1 : 2));
        CHECK((me != MPI_UNDEFINED) == (number == appnum));
        OK(MPI_Group_free(&g));
        apps++;
    }
    OK(MPI_Session_finalize(&s));
    return apps;
}

static int nparents(MPI_Comm parent) {
    int n;
    OK(MPI_Comm_remote_size(parent, &n));
    return n;
}

static void exercise(MPI_Comm inter, int is_parent) {
    int rank, size, rsize;
    OK(MPI_Comm_rank(inter, &rank));
    OK(MPI_Comm_size(inter, &size));
    OK(MPI_Comm_remote_size(inter, &rsize));
    /* Point-to-point with every remote process, both ways. */
    for (int r = 0; r < rsize; r++) {
        int outv[2] = {is_parent ? 100 + rank : 200 + rank, r}, inv[2] = {-1, -1};
        OK(MPI_Sendrecv(outv, 2, MPI_INT, r, 11, inv, 2, MPI_INT, r, 11, inter, MPI_STATUS_IGNORE));
        CHECK(inv[0] == (is_parent ? 200 + r : 100 + r) && inv[1] == rank);
    }
    /* Bcast from the parents' rank 0. */
    int v = -1;
    if (is_parent) {
        v = 77;
        OK(MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
    } else {
        OK(MPI_Bcast(&v, 1, MPI_INT, 0, inter));
        CHECK(v == 77);
    }
    /* Allreduce: each side gets the other's sum. */
    int mine = is_parent ? 1 : 10, sum = 0;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == (is_parent ? 10 * rsize : rsize));
    /* Merge, parents first, and a collective on it. */
    MPI_Comm merged;
    OK(MPI_Intercomm_merge(inter, is_parent ? 0 : 1, &merged));
    int mrank, msize, total = 0;
    OK(MPI_Comm_rank(merged, &mrank));
    OK(MPI_Comm_size(merged, &msize));
    CHECK(msize == size + rsize && mrank == (is_parent ? rank : rsize + rank));
    OK(MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize * (msize - 1) / 2);
    OK(MPI_Comm_free(&merged));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    int rank, size;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Comm parent;
    OK(MPI_Comm_get_parent(&parent));
    const char *mode = argc > 1 ? argv[1] : "";
    if (parent != MPI_COMM_NULL) {
        /* A child. */
        MPI_Comm again;
        OK(MPI_Comm_get_parent(&again));
        CHECK(again == parent);
        int flag, *appnum;
        OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
        CHECK(flag);
        if (strcmp(mode, "child") == 0) {
            CHECK(argc == 3 && strcmp(argv[2], "a b") == 0);
            char cwd[4096];
            CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, "/tmp") == 0);
            CHECK(*appnum == 0);
            exercise(parent, 0);
            OK(MPI_Comm_disconnect(&parent));
            CHECK(parent == MPI_COMM_NULL);
            OK(MPI_Comm_get_parent(&again));
            CHECK(again == MPI_COMM_NULL);
            if (rank == 0) printf("child checks passed on %d children\n", size);
        } else if (strcmp(mode, "childA") == 0 || strcmp(mode, "childB") == 0) {
            CHECK(size == 3);
            CHECK(*appnum == (mode[5] == 'A' ? 0 : 1));
            CHECK((rank == 0) == (mode[5] == 'A'));
            int apps = app_psets(*appnum);
            if (rank == 0) printf("spawn_multiple children app psets %d\n", apps);
            exercise(parent, 0);
            OK(MPI_Comm_disconnect(&parent));
            if (rank == 0) printf("spawn_multiple children passed\n");
        } else if (strcmp(mode, "die") == 0) {
            _exit(3);
        } else if (strcmp(mode, "remotechild") == 0) {
            exercise(parent, 0);
            /* The parents' host (network namespace) is not ours. */
            char mine[64] = "", theirs[64] = "";
            CHECK(readlink("/proc/self/ns/net", mine, sizeof mine - 1) > 0);
            OK(MPI_Bcast(theirs, sizeof theirs, MPI_CHAR, 0, parent));
            CHECK(theirs[0] && strcmp(mine, theirs) != 0);
            OK(MPI_Comm_disconnect(&parent));
            if (rank == 0) printf("remote children passed on %d children\n", size);
        } else if (strcmp(mode, "hang") == 0) {
            if (rank == 0) {
                printf("hang child pid %d\n", (int)getpid());
                fflush(stdout);
            }
            int x;
            MPI_Recv(&x, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
            printf("not reached\n");
        } else {
            CHECK(0);
        }
        OK(MPI_Finalize());
        return 0;
    }
    int *usize, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &usize, &flag));
    CHECK(flag && *usize >= size);
    MPI_Comm inter;
    if (strcmp(mode, "parent") == 0 || strcmp(mode, "infofile") == 0) {
        int n = atoi(argv[2]);
        char *args[] = {"child", "a b", NULL};
        MPI_Info info;
        OK(MPI_Info_create(&info));
        int errs[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        if (mode[0] == 'p') {
            OK(MPI_Info_set(info, "wdir", "/tmp"));
            /* argv[0] as given to us: a path. */
            OK(MPI_Comm_spawn(argv[0], args, n, info, 0, MPI_COMM_WORLD, &inter, errs));
        } else {
            /* The program's bare name, found through `path`, both keys in a
               file named by the `file` key. */
            char file[64], dir[4096];
            snprintf(file, sizeof file, "/tmp/oxmpi-spawn-info-%d", (int)getpid());
            CHECK(strlen(argv[0]) < sizeof dir && strchr(argv[0], '/'));
            strcpy(dir, argv[0]);
            char *slash = strrchr(dir, '/'), *base = strrchr(argv[0], '/') + 1;
            *slash = 0;
            if (rank == 0) {
                FILE *f = fopen(file, "w");
                CHECK(f);
                fprintf(f, "# spawn info\npath=/nonexistent:%s\nwdir=/tmp\n", dir);
                CHECK(fclose(f) == 0);
            }
            OK(MPI_Info_set(info, "file", file));
            OK(MPI_Comm_spawn(base, args, n, info, 0, MPI_COMM_WORLD, &inter, errs));
            if (rank == 0) CHECK(unlink(file) == 0);
        }
        OK(MPI_Info_free(&info));
        for (int i = 0; i < n; i++) CHECK(errs[i] == MPI_SUCCESS);
        CHECK(errs[n] == -1);
        CHECK(nparents(inter) == n);
        exercise(inter, 1);
        OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL);
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) printf("parent checks passed (%d parents, %d children)\n", size, n);
    } else if (strcmp(mode, "multiple") == 0) {
        char *cmds[2] = {argv[0], argv[0]};
        char *a[] = {"childA", NULL}, *b[] = {"childB", NULL};
        char **argvs[2] = {a, b};
        int maxprocs[2] = {1, 2};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        int errs[3] = {-1, -1, -1};
        OK(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter, errs));
        CHECK(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS && errs[2] == MPI_SUCCESS);
        CHECK(nparents(inter) == 3);
        exercise(inter, 1);
        OK(MPI_Comm_disconnect(&inter));
        if (rank == 0) printf("spawn_multiple parent passed\n");
    } else if (strcmp(mode, "dies") == 0) {
        char *args[] = {"die", NULL};
        OK(MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        /* The child dies in MPI_Init's connection or right after: wait for the end. */
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
        printf("not reached\n");
    } else if (strcmp(mode, "killed") == 0) {
        char *args[] = {"hang", NULL};
        OK(MPI_Comm_spawn(argv[0], args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE));
        int x;
        MPI_Recv(&x, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
        printf("not reached\n");
    } else if (strcmp(mode, "remote") == 0) {
        MPI_Info info;
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "host", argv[2]));
        char *args[] = {"remotechild", NULL};
        int errs[2] = {-1, -1};
        OK(MPI_Comm_spawn(argv[0], args, 2, info, 0, MPI_COMM_WORLD, &inter, errs));
        OK(MPI_Info_free(&info));
        CHECK(errs[0] == MPI_SUCCESS && errs[1] == MPI_SUCCESS && nparents(inter) == 2);
        exercise(inter, 1);
        char ns[64] = "";
        CHECK(readlink("/proc/self/ns/net", ns, sizeof ns - 1) > 0);
        OK(MPI_Bcast(ns, sizeof ns, MPI_CHAR, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
        OK(MPI_Comm_disconnect(&inter));
        if (rank == 0) printf("remote spawn parent passed\n");
    } else if (strcmp(mode, "unsupported") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int cls;
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION && inter == MPI_COMM_NULL);
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        OK(MPI_Error_string(rc, msg, &len));
        if (rank == 0) printf("spawn refused: %s\n", msg);
    } else if (strcmp(mode, "usize") == 0) {
        if (rank == 0) printf("universe size %d\n", *usize);
    } else if (strcmp(mode, "missing") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int cls, errs[2] = {-1, -1};
        int rc = MPI_Comm_spawn("/nonexistent/program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL);
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        OK(MPI_Error_string(rc, msg, &len));
        if (rank == 0) printf("missing program refused: %s\n", msg);
    } else if (strcmp(mode, "badhost") == 0) {
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Info info;
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "host", argv[2]));
        int cls, errs[2] = {-1, -1};
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 2, info, 0, MPI_COMM_WORLD, &inter, errs);
        OK(MPI_Info_free(&info));
        OK(MPI_Error_class(rc, &cls));
        CHECK(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL);
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        OK(MPI_Error_string(rc, msg, &len));
        /* Every parent got the same outcome and can still communicate. */
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) printf("spawn on %s refused: %s\n", argv[2], msg);
    }
    OK(MPI_Finalize());
    return 0;
}

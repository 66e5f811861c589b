/* Dynamic processes' error paths and the handle kinds: MPI_Comm_spawn(_multiple)
 * of a program that does not exist fail with MPI_ERR_SPAWN, a process mpiexec
 * started has no parent, MPI_Comm_disconnect frees, File/Win handle conversion
 * keeps the null handles. With argument `fatal`, the failing spawn under the
 * default error handler ends the job. */
#include "check.h"

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    char *args[] = {NULL};
    int errs[3] = {0, 0, 0}, cls, rc;
    MPI_Comm inter = MPI_COMM_WORLD;
    if (argc > 1 && strcmp(argv[1], "fatal") == 0)
        MPI_Comm_spawn("/nonexistent/oxmpi-test", args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    MPI_Comm parent = MPI_COMM_WORLD;
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_spawn("/nonexistent/oxmpi-test", args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_SPAWN);
    CHECK(inter == MPI_COMM_NULL);
    rc = MPI_Comm_spawn("/nonexistent/oxmpi-test", args, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, errs);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ARG && inter == MPI_COMM_NULL);
    char *cmds[2] = {"/nonexistent/a", "/nonexistent/b"};
    int maxprocs[2] = {1, 2};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    inter = MPI_COMM_WORLD;
    rc = MPI_Comm_spawn_multiple(2, cmds, MPI_ARGVS_NULL, maxprocs, infos, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL);
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_disconnect(&d));
    CHECK(d == MPI_COMM_NULL);
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL);
    int rank;
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 0) printf("all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}

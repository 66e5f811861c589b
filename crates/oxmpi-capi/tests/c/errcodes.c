/* Error codes users can act on: under MPI_ERRORS_RETURN a detected error
 * comes back as a code of its own (as MPICH's) whose MPI_Error_class is the
 * class and whose MPI_Error_string is the full message; an unsupported call
 * names itself; classes keep their generic strings. */
#include "check.h"

static void text_of(int code, char *s) { int len; OK(MPI_Error_string(code, s, &len)); CHECK(len == (int)strlen(s)); }

int main(int argc, char **argv) {
    int rank, size, cls;
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* truncation: 4096 bytes into a 1024-byte buffer */
    static char big[4096], small[1024];
    int e;
    if (rank == 0) {
        OK(MPI_Send(big, 4096, MPI_BYTE, 0, 5, MPI_COMM_SELF));
        e = MPI_Recv(small, 1024, MPI_BYTE, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        CHECK(e != MPI_SUCCESS && e != MPI_ERR_TRUNCATE);
        OK(MPI_Error_class(e, &cls)); CHECK(cls == MPI_ERR_TRUNCATE);
        text_of(e, s);
        if (!strstr(s, "MPI_Recv") || !strstr(s, "4096 bytes arrived") || !strstr(s, "1024")) { fprintf(stderr, "got: %s\n", s); CHECK(0); }
    }
    /* a bad rank names the call and the argument */
    int x = 0;
    int e1 = MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    int e2 = MPI_Send(&x, 1, MPI_INT, -9, 0, MPI_COMM_WORLD);
    CHECK(e1 != e2);
    OK(MPI_Error_class(e1, &cls)); CHECK(cls == MPI_ERR_RANK);
    OK(MPI_Error_class(e2, &cls)); CHECK(cls == MPI_ERR_RANK);
    text_of(e1, s);
    if (!strstr(s, "MPI_Send") || !strstr(s, "dest") || !strstr(s, "MPI_ERR_RANK")) { fprintf(stderr, "got: %s\n", s); CHECK(0); }
    char num[32]; snprintf(num, sizeof num, "%d", size + 3); CHECK(strstr(s, num) != NULL);
    text_of(e2, s); CHECK(strstr(s, "-9") != NULL);
    /* an unsupported call names itself */
    MPI_Win win;
    e = MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (e != MPI_SUCCESS) {
        OK(MPI_Error_class(e, &cls));
        if (cls == MPI_ERR_UNSUPPORTED_OPERATION) { text_of(e, s); CHECK(strstr(s, "MPI_Win_create") != NULL); }
    } else {
        OK(MPI_Win_free(&win));
    }
    /* a class still has its generic text */
    text_of(MPI_ERR_TRUNCATE, s); CHECK(strstr(s, "MPI_ERR_TRUNCATE") != NULL);
    /* an error handler gets the code too, and MPI_Comm_call_errhandler passes codes through */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("errcodes: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

#include "check.h"
int main(int argc, char **argv) {
    int rank, size, len, major, minor, v, sv, flag;
    char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
    OK(MPI_Initialized(&flag)); CHECK(!flag);
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Initialized(&flag)); CHECK(flag);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Get_processor_name(name, &len)); CHECK(len == (int)strlen(name) && len > 0);
    OK(MPI_Get_version(&v, &sv)); CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION);
    OK(MPI_Abi_get_version(&major, &minor)); CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION);
    OK(MPI_Get_library_version(lib, &len)); CHECK(strstr(lib, "oxmpi") != NULL);
    MPI_Info info; char val[64]; int buflen = sizeof val;
    OK(MPI_Abi_get_info(&info));
    OK(MPI_Info_get_string(info, "mpi_aint_size", &buflen, val, &flag));
    CHECK(flag && atoi(val) == (int)sizeof(MPI_Aint));
    OK(MPI_Info_free(&info)); CHECK(info == MPI_INFO_NULL);
    int *tag_ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag)); CHECK(flag && *tag_ub >= 32767);
    CHECK(MPI_Wtime() > 0 && MPI_Wtick() > 0);
    /* ring: a token goes around, every rank adds its rank */
    int token = 0, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    if (size > 1) {
        if (rank == 0) {
            OK(MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD));
            OK(MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == size * (size - 1) / 2);
        } else {
            OK(MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            token += rank;
            OK(MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD));
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("hello from rank %d of %d\n", rank, size);
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag)); CHECK(flag);
    return 0;
}

/* Objects never freed, for checking mode's report at MPI_Finalize; with
 * argv[1] = "clean" everything is freed. */
#include <mpi.h>
#include <string.h>
static void my_max(void *in, void *inout, int *len, MPI_Datatype *dt) {
    for (int i = 0; i < *len; i++) if (((int *)in)[i] > ((int *)inout)[i]) ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv) {
    int x = 0;
    MPI_Comm dup;
    MPI_Datatype vec;
    MPI_Group g;
    MPI_Request r;
    MPI_Op op;
    MPI_Init(&argc, &argv);
    int clean = argc > 1 && !strcmp(argv[1], "clean");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "my dup");
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_SELF, &r);
    MPI_Op_create(my_max, 1, &op);
    if (clean) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Group_free(&g);
        MPI_Op_free(&op);
        MPI_Type_free(&vec);
        MPI_Comm_free(&dup);
    }
    MPI_Finalize();
    return 0;
}

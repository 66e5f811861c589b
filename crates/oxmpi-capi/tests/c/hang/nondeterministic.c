/* Seed example 4.23: correct but non-deterministic matching; must finish. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, buf1 = 0, buf2 = 0, first = -1, second = -1;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    switch (rank) {
    case 0:
        MPI_Bcast(&buf1, 1, MPI_INT, 0, MPI_COMM_WORLD);
        buf2 = 100;
        MPI_Send(&buf2, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        break;
    case 1:
        MPI_Recv(&buf2, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
        first = st.MPI_SOURCE;
        MPI_Bcast(&buf1, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Recv(&buf2, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st);
        second = st.MPI_SOURCE;
        printf("matched %d then %d\n", first, second);
        break;
    case 2:
        buf2 = 200;
        MPI_Send(&buf2, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        MPI_Bcast(&buf1, 1, MPI_INT, 0, MPI_COMM_WORLD);
        break;
    }
    MPI_Finalize();
    return 0;
}

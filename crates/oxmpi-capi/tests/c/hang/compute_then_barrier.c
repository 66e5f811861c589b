/* No deadlock: rank 0 computes (outside MPI) for SECONDS while the others
 * wait in MPI_Barrier; then rank 0 sleeps outside MPI too; all finish. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank;
    double seconds = argc > 1 ? atof(argv[1]) : 6.0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        volatile double x = 0;
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < seconds / 2)
            for (int i = 0; i < 100000; i++) x += 1e-9 * i;
        sleep((unsigned)(seconds / 2));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("all passed the barrier\n");
    MPI_Finalize();
    return 0;
}

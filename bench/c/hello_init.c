/*
 * Start-up probe: MPI_Init then MPI_Finalize, nothing else (bench/startup.sh times
 * `mpiexec -n N` of it). Plain MPI-1, builds against any MPI.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}

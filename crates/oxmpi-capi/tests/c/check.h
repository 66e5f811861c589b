/* Shared by the C test programs: CHECK aborts the job naming the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#define CHECK(cond) do { if (!(cond)) { fprintf(stderr, "CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); fflush(stderr); MPI_Abort(MPI_COMM_WORLD, 3); } } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

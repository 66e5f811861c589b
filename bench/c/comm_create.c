/* Communicator creation cost: microseconds per create+free pair for
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create, MPI_Comm_create_group,
 * MPI_Comm_idup and MPI_Comm_split_type.
 *
 *   mpiexec -n NP comm_create [ITERS] [ONLY]
 *
 * ITERS (default 1000) pairs per call after ITERS/10 warm-up pairs; ONLY runs
 * the one call named (dup, split, create, create_group, idup, split_type).
 * Rank 0 prints one line per call: "name usec_per_pair". Used by
 * bench/comm_create.sh, which runs it with oxmpi and MPICH side by side. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iters = 1000;

static double run(const char *name, int n) {
    MPI_Comm c;
    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double t0 = 0;
    for (int i = -n / 10; i < n; i++) {
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (!strcmp(name, "dup")) {
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        } else if (!strcmp(name, "split")) {
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
        } else if (!strcmp(name, "create")) {
            MPI_Comm_create(MPI_COMM_WORLD, world_group, &c);
        } else if (!strcmp(name, "create_group")) {
            MPI_Comm_create_group(MPI_COMM_WORLD, world_group, 7, &c);
        } else if (!strcmp(name, "idup")) {
            MPI_Request r;
            MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else if (!strcmp(name, "split_type")) {
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c);
        } else {
            abort();
        }
        MPI_Comm_free(&c);
    }
    double t = MPI_Wtime() - t0;
    MPI_Group_free(&world_group);
    double tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return tmax * 1e6 / n;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc > 1) iters = atoi(argv[1]);
    const char *only = argc > 2 ? argv[2] : NULL;
    const char *names[] = {"dup", "split", "create", "create_group", "idup", "split_type"};
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (only && strcmp(only, names[k])) continue;
        double us = run(names[k], iters);
        if (rank == 0) {
            printf("%s %.2f\n", names[k], us);
            fflush(stdout);
        }
    }
    MPI_Finalize();
    return 0;
}

/* Intercommunicator alltoall(v/w), blocking, non-blocking and persistent,
 * where one group sends n and receives 0 while the other sends 0 and
 * receives n: each direction's signature is checked on its own. */
#include "check.h"

#define N 3

static void check_recv(int *rb, int remote, int remote_base, int it) {
    for (int j = 0; j < remote; j++)
        for (int k = 0; k < N; k++)
            CHECK(rb[j * N + k] == 1000 * (remote_base + j) + 10 * it + k);
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (size < 2) {
        if (rank == 0) printf("inter_a2a: all checks passed on %d ranks\n", size);
        MPI_Finalize();
        return 0;
    }
    int half = size / 2, sender = rank < half; /* group A (low ranks) sends */
    MPI_Comm local, inter;
    OK(MPI_Comm_split(MPI_COMM_WORLD, sender, rank, &local));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, sender ? half : 0, 7, &inter));
    int remote; OK(MPI_Comm_remote_size(inter, &remote));
    int remote_base = sender ? half : 0;
    int *sb = malloc(sizeof(int) * N * size), *rb = malloc(sizeof(int) * N * size);
    int *sc = calloc(size, sizeof(int)), *rc = calloc(size, sizeof(int));
    int *sd = calloc(size, sizeof(int)), *rd = calloc(size, sizeof(int));
    MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * size), *rts = malloc(sizeof(MPI_Datatype) * size);
    for (int j = 0; j < remote; j++) {
        sc[j] = sender ? N : 0; rc[j] = sender ? 0 : N;
        sd[j] = j * N; rd[j] = j * N;
        sts[j] = rts[j] = MPI_INT;
    }
    int *swd = calloc(size, sizeof(int)), *rwd = calloc(size, sizeof(int));
    for (int j = 0; j < remote; j++) { swd[j] = sd[j] * (int)sizeof(int); rwd[j] = rd[j] * (int)sizeof(int); }
    for (int it = 0; it < 9; it++) {
        for (int j = 0; j < remote; j++)
            for (int k = 0; k < N; k++) sb[j * N + k] = 1000 * rank + 10 * it + k;
        for (int i = 0; i < N * size; i++) rb[i] = -1;
        int scount = sender ? N : 0, rcount = sender ? 0 : N;
        MPI_Request rq = MPI_REQUEST_NULL;
        switch (it) {
        case 0: OK(MPI_Alltoall(sb, scount, MPI_INT, rb, rcount, MPI_INT, inter)); break;
        case 1: OK(MPI_Ialltoall(sb, scount, MPI_INT, rb, rcount, MPI_INT, inter, &rq)); break;
        case 2: OK(MPI_Alltoall_init(sb, scount, MPI_INT, rb, rcount, MPI_INT, inter, MPI_INFO_NULL, &rq)); break;
        case 3: OK(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter)); break;
        case 4: OK(MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter, &rq)); break;
        case 5: OK(MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter, MPI_INFO_NULL, &rq)); break;
        case 6: OK(MPI_Alltoallw(sb, sc, swd, sts, rb, rc, rwd, rts, inter)); break;
        case 7: OK(MPI_Ialltoallw(sb, sc, swd, sts, rb, rc, rwd, rts, inter, &rq)); break;
        case 8: OK(MPI_Alltoallw_init(sb, sc, swd, sts, rb, rc, rwd, rts, inter, MPI_INFO_NULL, &rq)); break;
        }
        if (it % 3 == 2) {
            for (int rep = 0; rep < 3; rep++) {
                OK(MPI_Start(&rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                if (!sender) check_recv(rb, remote, remote_base, it);
            }
            OK(MPI_Request_free(&rq));
        } else if (it % 3 == 1) {
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        if (!sender) check_recv(rb, remote, remote_base, it);
        else for (int i = 0; i < N * size; i++) CHECK(rb[i] == -1);
    }
    /* a real mismatch is still an error, not a hang */
    OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    int bad = MPI_Alltoall(sb, N, MPI_INT, rb, sender ? 0 : N - 1, MPI_INT, inter);
    CHECK((bad == MPI_SUCCESS) == (sender != 0));
    if (!sender) { int cls; OK(MPI_Error_class(bad, &cls)); CHECK(cls == MPI_ERR_TRUNCATE); }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Comm_free(&inter)); OK(MPI_Comm_free(&local));
    free(sb); free(rb); free(sc); free(rc); free(sd); free(rd); free(sts); free(rts); free(swd); free(rwd);
    if (rank == 0) printf("inter_a2a: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

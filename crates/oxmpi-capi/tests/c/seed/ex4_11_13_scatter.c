/* Textbook examples 4.11-4.13: MPI_Scatter of 100 ints to every rank (4.11);
 * MPI_Scatterv of 100-int blocks laid out with a stride >= 100 (4.12);
 * MPI_Scatterv of 100-i ints per rank from blocks at varying strides into
 * column `myrank` of a 100x150 receive array (a MPI_Type_vector receive type,
 * 4.13). Checks every received value and that nothing else is written. */
#include "../check.h"
int recvarray[100][150];

int main(int argc, char **argv) {
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, myrank, root = 0, rbuf[100], i;
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);
    CHECK(gsize <= 100);
    if (gsize > 1) root = 1;

    /* 4.11 */
    int *sendbuf = NULL;
    if (myrank == root) {
        sendbuf = (int *)malloc(gsize * 100 * sizeof(int));
        for (i = 0; i < gsize * 100; i++) sendbuf[i] = 3 * i + 1;
    }
    OK(MPI_Scatter(sendbuf, 100, MPI_INT, rbuf, 100, MPI_INT, root, comm));
    for (i = 0; i < 100; i++) CHECK(rbuf[i] == 3 * (myrank * 100 + i) + 1);
    free(sendbuf);

    /* 4.12 */
    int stride = 117, *displs, *scounts;
    sendbuf = (int *)malloc(gsize * stride * sizeof(int));
    for (i = 0; i < gsize * stride; i++) sendbuf[i] = i;
    displs = (int *)malloc(gsize * sizeof(int));
    scounts = (int *)malloc(gsize * sizeof(int));
    for (i = 0; i < gsize; i++) {
        displs[i] = i * stride;
        scounts[i] = 100;
    }
    for (i = 0; i < 100; i++) rbuf[i] = -1;
    OK(MPI_Scatterv(sendbuf, scounts, displs, MPI_INT, rbuf, 100, MPI_INT, root, comm));
    for (i = 0; i < 100; i++) CHECK(rbuf[i] == myrank * stride + i);
    free(sendbuf); free(displs); free(scounts);

    /* 4.13 */
    int *rptr, bufsize, *strides, offset;
    MPI_Datatype rtype;
    strides = (int *)malloc(gsize * sizeof(int));
    for (i = 0; i < gsize; i++) strides[i] = 100 + (i * 37) % 11; /* a set of different values */
    displs = (int *)malloc(gsize * sizeof(int));
    scounts = (int *)malloc(gsize * sizeof(int));
    offset = 0;
    for (i = 0; i < gsize; i++) {
        displs[i] = offset;
        offset += strides[i];
        scounts[i] = 100 - i;
    }
    bufsize = offset;
    sendbuf = (int *)malloc(bufsize * sizeof(int));
    for (i = 0; i < bufsize; i++) sendbuf[i] = 1000000 + i;
    for (i = 0; i < 100 * 150; i++) recvarray[i / 150][i % 150] = -5;
    OK(MPI_Type_vector(100 - myrank, 1, 150, MPI_INT, &rtype));
    OK(MPI_Type_commit(&rtype));
    rptr = &recvarray[0][myrank];
    OK(MPI_Scatterv(sendbuf, scounts, displs, MPI_INT, rptr, 1, rtype, root, comm));
    for (int r = 0; r < 100; r++)
        for (int c = 0; c < 150; c++) {
            if (c == myrank && r < 100 - myrank) CHECK(recvarray[r][c] == 1000000 + displs[myrank] + r);
            else CHECK(recvarray[r][c] == -5);
        }
    OK(MPI_Type_free(&rtype));
    free(sendbuf); free(displs); free(scounts); free(strides);
    printf("examples 4.11-4.13: rank %d all checks passed\n", myrank);
    OK(MPI_Finalize());
    return 0;
}

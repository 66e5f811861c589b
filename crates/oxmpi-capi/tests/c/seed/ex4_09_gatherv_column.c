/* Textbook example 4.9: every rank sends the first 100-rank ints of column
 * `rank` of its 100x150 array (MPI_Type_vector); the root gathers them with a
 * stride stride[i] between the blocks (MPI_Gatherv). Checks every received
 * value and that the gaps between blocks are left untouched. */
#include "../check.h"
int sendarray[100][150];

int main(int argc, char **argv) {
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr, root = 0, *rbuf, *stride, myrank, bufsize;
    MPI_Datatype stype;
    int *displs, i, *rcounts, offset;
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);
    CHECK(gsize <= 100);
    for (i = 0; i < 100 * 150; i++) sendarray[i / 150][i % 150] = myrank * 100000 + i;
    stride = (int *)malloc(gsize * sizeof(int));
    for (i = 0; i < gsize; i++) stride[i] = 100 + 7 * i; /* a different stride per block, >= 100-i */
    displs = (int *)malloc(gsize * sizeof(int));
    rcounts = (int *)malloc(gsize * sizeof(int));
    offset = 0;
    for (i = 0; i < gsize; i++) {
        displs[i] = offset;
        offset += stride[i];
        rcounts[i] = 100 - i;
    }
    bufsize = displs[gsize - 1] + rcounts[gsize - 1];
    rbuf = (int *)malloc(bufsize * sizeof(int));
    for (i = 0; i < bufsize; i++) rbuf[i] = -7;
    OK(MPI_Type_vector(100 - myrank, 1, 150, MPI_INT, &stype));
    OK(MPI_Type_commit(&stype));
    sptr = &sendarray[0][myrank];
    OK(MPI_Gatherv(sptr, 1, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (myrank == root) {
        for (int r = 0; r < gsize; r++) {
            for (int k = 0; k < rcounts[r]; k++) CHECK(rbuf[displs[r] + k] == r * 100000 + k * 150 + r);
            int end = r + 1 < gsize ? displs[r + 1] : bufsize;
            for (int k = displs[r] + rcounts[r]; k < end; k++) CHECK(rbuf[k] == -7);
        }
        printf("example 4.9: gathered %d columns, all checks passed\n", gsize);
    }
    OK(MPI_Type_free(&stype));
    free(stride); free(displs); free(rcounts); free(rbuf);
    OK(MPI_Finalize());
    return 0;
}

/* Textbook example 4.10: rank i sends `num` ints of column i of its 100x150
 * array; the root learns the nums with MPI_Gather, then gathers the data
 * contiguously with MPI_Gatherv. The send type is the book's MPI_Type_struct
 * of one MPI_INT plus an MPI_UB marker at 150*sizeof(int), which stretches one
 * int to a whole row (MPI-1 names, offered by oxmpi as extensions).
 * (The book declares `int disp[2]`; MPI_Type_struct takes MPI_Aint, as here.) */
#include "../check.h"
int sendarray[100][150];

int main(int argc, char **argv) {
    MPI_Comm comm = MPI_COMM_WORLD;
    int gsize, *sptr, root, *rbuf, myrank, blocklen[2];
    MPI_Aint disp[2];
    MPI_Datatype stype, type[2];
    int *displs, i, *rcounts, num;
    OK(MPI_Init(&argc, &argv));
    MPI_Comm_size(comm, &gsize);
    MPI_Comm_rank(comm, &myrank);
    root = gsize - 1; /* any root works; use the last rank */
    CHECK(gsize <= 100);
    for (i = 0; i < 100 * 150; i++) sendarray[i / 150][i % 150] = myrank * 100000 + i;
    num = 20 + 13 * myrank % 80; /* the root does not know these */
    rcounts = (int *)malloc(gsize * sizeof(int));
    OK(MPI_Gather(&num, 1, MPI_INT, rcounts, 1, MPI_INT, root, comm));
    displs = (int *)malloc(gsize * sizeof(int));
    rbuf = NULL;
    if (myrank == root) {
        displs[0] = 0;
        for (i = 1; i < gsize; i++) displs[i] = displs[i - 1] + rcounts[i - 1];
        rbuf = (int *)malloc(gsize * (displs[gsize - 1] + rcounts[gsize - 1]) * sizeof(int));
    }
    /* one int extended to a whole row */
    disp[0] = 0; disp[1] = 150 * sizeof(int);
    type[0] = MPI_INT; type[1] = MPI_UB;
    blocklen[0] = 1; blocklen[1] = 1;
    OK(MPI_Type_struct(2, blocklen, disp, type, &stype));
    OK(MPI_Type_commit(&stype));
    MPI_Aint ext; int sz;
    OK(MPI_Type_extent(stype, &ext)); CHECK(ext == 150 * sizeof(int));
    OK(MPI_Type_size(stype, &sz)); CHECK(sz == sizeof(int));
    sptr = &sendarray[0][myrank];
    OK(MPI_Gatherv(sptr, num, stype, rbuf, rcounts, displs, MPI_INT, root, comm));
    if (myrank == root) {
        for (int r = 0; r < gsize; r++) {
            CHECK(rcounts[r] == 20 + 13 * r % 80);
            for (int k = 0; k < rcounts[r]; k++) CHECK(rbuf[displs[r] + k] == r * 100000 + k * 150 + r);
        }
        printf("example 4.10: gathered %d rows of column data, all checks passed\n", displs[gsize - 1] + rcounts[gsize - 1]);
        free(rbuf);
    }
    OK(MPI_Type_free(&stype));
    free(displs); free(rcounts);
    OK(MPI_Finalize());
    return 0;
}

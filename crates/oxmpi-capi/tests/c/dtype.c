/* Datatypes: the textbook's column of a 100x150 array (MPI_Type_vector) and
 * the MPI_Type_struct with MPI_UB example, sent point-to-point to rank 0;
 * extents, envelope/contents, Pack/Unpack round trip. */
#include "check.h"
int sendarray[100][150];

int main(int argc, char **argv) {
    int rank, size, i;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (i = 0; i < 100 * 150; i++) sendarray[i / 150][i % 150] = rank * 100000 + i;

    /* Example 4.9 (sender side): 100-rank ints of column `rank`. */
    MPI_Datatype stype;
    OK(MPI_Type_vector(100 - rank, 1, 150, MPI_INT, &stype));
    OK(MPI_Type_commit(&stype));
    int sz; MPI_Aint lb, ext;
    OK(MPI_Type_size(stype, &sz)); CHECK(sz == (100 - rank) * 4);
    OK(MPI_Type_get_extent(stype, &lb, &ext)); CHECK(lb == 0 && ext == (MPI_Aint)((99 - rank) * 150 + 1) * 4);
    MPI_Request r;
    OK(MPI_Isend(&sendarray[0][rank], 1, stype, 0, 1, MPI_COMM_WORLD, &r));
    if (rank == 0) {
        int rbuf[100];
        for (int src = 0; src < size; src++) {
            MPI_Status st; int count;
            OK(MPI_Recv(rbuf, 100, MPI_INT, src, 1, MPI_COMM_WORLD, &st));
            OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 100 - src);
            for (i = 0; i < count; i++) CHECK(rbuf[i] == src * 100000 + i * 150 + src);
        }
    }
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    OK(MPI_Type_free(&stype)); CHECK(stype == MPI_DATATYPE_NULL);

    /* Example 4.10: one int with its extent stretched to a whole row (MPI_UB). */
    int num = 5 + rank, blocklen[2] = {1, 1};
    MPI_Aint disp[2] = {0, 150 * sizeof(int)};
    MPI_Datatype type[2] = {MPI_INT, MPI_UB};
    OK(MPI_Type_struct(2, blocklen, disp, type, &stype));
    OK(MPI_Type_commit(&stype));
    OK(MPI_Type_extent(stype, &ext)); CHECK(ext == 150 * sizeof(int));
    OK(MPI_Type_size(stype, &sz)); CHECK(sz == sizeof(int));
    MPI_Aint ub; OK(MPI_Type_ub(stype, &ub)); CHECK(ub == 150 * sizeof(int));
    OK(MPI_Type_lb(stype, &lb)); CHECK(lb == 0);
    OK(MPI_Isend(&sendarray[0][rank], num, stype, 0, 2, MPI_COMM_WORLD, &r));
    if (rank == 0) {
        int rbuf[64];
        for (int src = 0; src < size; src++) {
            MPI_Status st; int count;
            OK(MPI_Recv(rbuf, 64, MPI_INT, src, 2, MPI_COMM_WORLD, &st));
            OK(MPI_Get_count(&st, MPI_INT, &count)); CHECK(count == 5 + src);
            for (i = 0; i < count; i++) CHECK(rbuf[i] == src * 100000 + i * 150 + src);
        }
    }
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* the receiver can use the strided type too: a column of rank 0's own array */
    if (size > 1 && rank == 1) {
        OK(MPI_Send(&sendarray[0][0], 10, MPI_INT, 0, 3, MPI_COMM_WORLD));
    } else if (size > 1 && rank == 0) {
        static int recvarray[100][150];
        OK(MPI_Recv(&recvarray[0][7], 10, stype, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (i = 0; i < 10; i++) CHECK(recvarray[i][7] == 100000 + i);
        CHECK(recvarray[0][8] == 0);
    }
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(stype, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2);
    int ints[3]; MPI_Aint addrs[2]; MPI_Datatype tys[2];
    OK(MPI_Type_get_contents(stype, 3, 2, 2, ints, addrs, tys));
    CHECK(ints[0] == 2 && addrs[1] == 150 * sizeof(int) && tys[0] == MPI_INT && tys[1] == MPI_UB);
    OK(MPI_Type_free(&stype));

    /* struct built from addresses, hvector, indexed, resized, dup, names */
    struct { char c; double d[2]; int i; } s = {'x', {1.5, 2.5}, 42}, t;
    MPI_Aint base, a[3];
    OK(MPI_Get_address(&s, &base)); OK(MPI_Get_address(&s.c, &a[0]));
    OK(MPI_Get_address(&s.d, &a[1])); OK(MPI_Get_address(&s.i, &a[2]));
    for (i = 0; i < 3; i++) a[i] = MPI_Aint_diff(a[i], base);
    int bl[3] = {1, 2, 1}; MPI_Datatype ts[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, st3, st3r;
    OK(MPI_Type_create_struct(3, bl, a, ts, &st3));
    OK(MPI_Type_create_resized(st3, 0, sizeof s, &st3r));
    OK(MPI_Type_commit(&st3r));
    OK(MPI_Type_size(st3r, &sz)); CHECK(sz == 1 + 16 + 4);
    OK(MPI_Type_get_extent(st3r, &lb, &ext)); CHECK(ext == sizeof s);
    OK(MPI_Type_set_name(st3r, "my struct"));
    char name[MPI_MAX_OBJECT_NAME]; int len;
    OK(MPI_Type_get_name(st3r, name, &len)); CHECK(strcmp(name, "my struct") == 0);
    OK(MPI_Type_get_name(MPI_DOUBLE, name, &len)); CHECK(strcmp(name, "MPI_DOUBLE") == 0);

    /* Pack / Unpack round trip */
    char packed[256]; int pos = 0, psize;
    int arr[6] = {1, 2, 3, 4, 5, 6}, arr2[6] = {0};
    MPI_Datatype ix; int ibl[2] = {1, 2}, idp[2] = {0, 3};
    OK(MPI_Type_indexed(2, ibl, idp, MPI_INT, &ix)); OK(MPI_Type_commit(&ix));
    OK(MPI_Pack_size(1, st3r, MPI_COMM_WORLD, &psize)); CHECK(psize >= sz);
    OK(MPI_Pack(&s, 1, st3r, packed, sizeof packed, &pos, MPI_COMM_WORLD)); CHECK(pos == sz);
    OK(MPI_Pack(arr, 1, ix, packed, sizeof packed, &pos, MPI_COMM_WORLD)); CHECK(pos == sz + 12);
    int total = pos; pos = 0;
    memset(&t, 0, sizeof t);
    OK(MPI_Unpack(packed, total, &pos, &t, 1, st3r, MPI_COMM_WORLD));
    OK(MPI_Unpack(packed, total, &pos, arr2, 1, ix, MPI_COMM_WORLD));
    CHECK(t.c == 'x' && t.d[0] == 1.5 && t.d[1] == 2.5 && t.i == 42);
    CHECK(arr2[0] == 1 && arr2[1] == 0 && arr2[3] == 4 && arr2[4] == 5 && pos == total);
    /* packed data travels as MPI_PACKED */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char inpk[256]; MPI_Status stt; int cnt;
    OK(MPI_Sendrecv(packed, total, MPI_PACKED, next, 4, inpk, sizeof inpk, MPI_PACKED, prev, 4, MPI_COMM_WORLD, &stt));
    OK(MPI_Get_count(&stt, MPI_PACKED, &cnt)); CHECK(cnt == total);

    MPI_Datatype hv, dup, cont;
    OK(MPI_Type_create_hvector(2, 1, 3 * sizeof(int), MPI_INT, &hv)); OK(MPI_Type_commit(&hv));
    OK(MPI_Type_dup(hv, &dup)); OK(MPI_Type_contiguous(2, dup, &cont)); OK(MPI_Type_commit(&cont));
    OK(MPI_Type_size(cont, &sz)); CHECK(sz == 16);
    MPI_Aint tlb, text; OK(MPI_Type_get_true_extent(hv, &tlb, &text)); CHECK(tlb == 0 && text == 16);
    MPI_Fint f = MPI_Type_c2f(hv); CHECK(MPI_Type_f2c(f) == hv);
    CHECK(MPI_Type_c2f(MPI_INT) == (MPI_Fint)(intptr_t)MPI_INT);
    OK(MPI_Type_free(&hv)); OK(MPI_Type_free(&dup)); OK(MPI_Type_free(&cont)); OK(MPI_Type_free(&ix));
    OK(MPI_Type_free(&st3)); OK(MPI_Type_free(&st3r));

    /* user reduction op through MPI_Reduce_local */
    OK(MPI_Finalize());
    if (rank == 0) printf("dtype: all checks passed on %d ranks\n", size);
    return 0;
}

/* Datatypes with more blocks than a flat list could hold: a vector of 2^31
 * one-byte elements (and large-count types built on it) is made, committed,
 * queried and freed at once; a vector of 8M+1 one-byte blocks (twice the old
 * limit of 4,194,304) is sent, received, packed, unpacked, broadcast and
 * gathered; a vector of 2M+1 ints is reduced. Memory stays under ~100 MB a rank. */
#include "check.h"
#include <stdint.h>

#define N ((8 << 20) + 1)
#define M ((2 << 20) + 1)

static unsigned char pat(long i, int who) { return (unsigned char)(i * 7 + i / 251 + 13 * who); }

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* 2^31 one-byte blocks, stride 2: made by structure, nothing materialised. */
    MPI_Datatype huge, huger, hc;
    OK(MPI_Type_vector_c((MPI_Count)1 << 31, 1, 2, MPI_BYTE, &huge));
    OK(MPI_Type_commit(&huge));
    MPI_Count sz, lb, ext;
    OK(MPI_Type_size_c(huge, &sz)); CHECK(sz == (MPI_Count)1 << 31);
    OK(MPI_Type_get_extent_c(huge, &lb, &ext)); CHECK(lb == 0 && ext == ((MPI_Count)1 << 32) - 1);
    OK(MPI_Type_contiguous_c(4, huge, &huger));
    OK(MPI_Type_commit(&huger));
    OK(MPI_Type_size_c(huger, &sz)); CHECK(sz == (MPI_Count)1 << 33);
    OK(MPI_Type_contiguous_c((MPI_Count)1 << 31, MPI_BYTE, &hc));
    OK(MPI_Type_commit(&hc));
    OK(MPI_Type_size_c(hc, &sz)); CHECK(sz == (MPI_Count)1 << 31);
    OK(MPI_Type_free(&huger)); OK(MPI_Type_free(&huge)); OK(MPI_Type_free(&hc));

    /* 8M+1 one-byte blocks, stride 2. */
    MPI_Datatype v;
    OK(MPI_Type_vector(N, 1, 2, MPI_BYTE, &v));
    OK(MPI_Type_commit(&v));
    int isz; OK(MPI_Type_size(v, &isz)); CHECK(isz == N);
    unsigned char *spread = malloc(2 * (size_t)N), *dense = malloc(N), *packed = malloc(N);
    CHECK(spread && dense && packed);
    for (long i = 0; i < 2L * N; i++) spread[i] = pat(i, rank);

    /* pack / unpack */
    int pos = 0, psz;
    OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &psz)); CHECK(psz >= N);
    OK(MPI_Pack(spread, 1, v, packed, N, &pos, MPI_COMM_WORLD)); CHECK(pos == N);
    for (long i = 0; i < N; i++) CHECK(packed[i] == pat(2 * i, rank));
    unsigned char *back = malloc(2 * (size_t)N); CHECK(back);
    memset(back, 0xee, 2 * (size_t)N);
    pos = 0;
    OK(MPI_Unpack(packed, N, &pos, back, 1, v, MPI_COMM_WORLD)); CHECK(pos == N);
    for (long i = 0; i < 2L * N - 1; i++) CHECK(back[i] == (i % 2 ? 0xee : pat(i, rank)));

    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        /* strided out, dense in; then dense out, strided in */
        if (rank == 0) {
            OK(MPI_Send(spread, 1, v, peer, 1, MPI_COMM_WORLD));
            memset(back, 0xee, 2 * (size_t)N);
            MPI_Status st;
            OK(MPI_Recv(back, 1, v, peer, 2, MPI_COMM_WORLD, &st));
            MPI_Count got; OK(MPI_Get_count_c(&st, v, &got)); CHECK(got == 1);
            for (long i = 0; i < 2L * N - 1; i++) CHECK(back[i] == (i % 2 ? 0xee : pat(i / 2, 1)));
        } else {
            OK(MPI_Recv(dense, N, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (long i = 0; i < N; i++) CHECK(dense[i] == pat(2 * i, 0));
            for (long i = 0; i < N; i++) dense[i] = pat(i, 1);
            OK(MPI_Send(dense, N, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
        }
    }

    /* bcast from the last rank, strided on every rank */
    int root = size - 1;
    memcpy(back, spread, 2 * (size_t)N);
    OK(MPI_Bcast(back, 1, v, root, MPI_COMM_WORLD));
    for (long i = 0; i < 2L * N; i++) CHECK(back[i] == (i % 2 ? pat(i, rank) : pat(i, root)));

    /* gather of one strided element per rank into a dense array at rank 0 */
    unsigned char *all = rank == 0 ? malloc((size_t)N * size) : NULL;
    CHECK(rank != 0 || all);
    OK(MPI_Gather(spread, 1, v, all, N, MPI_BYTE, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            for (long i = 0; i < N; i++) CHECK(all[(size_t)r * N + i] == pat(2 * i, r));
    free(all);
    OK(MPI_Type_free(&v));
    free(spread); free(dense); free(packed); free(back);

    /* a reduction over 2M+1 strided ints */
    MPI_Datatype vi;
    OK(MPI_Type_vector(M, 1, 2, MPI_INT, &vi));
    OK(MPI_Type_commit(&vi));
    int *a = malloc(2 * sizeof(int) * (size_t)M), *b = malloc(2 * sizeof(int) * (size_t)M);
    CHECK(a && b);
    for (long i = 0; i < 2L * M; i++) { a[i] = (int)(i + rank); b[i] = -7; }
    OK(MPI_Allreduce(a, b, 1, vi, MPI_SUM, MPI_COMM_WORLD));
    long rs = (long)size * (size - 1) / 2;
    for (long i = 0; i < 2L * M - 1; i++) CHECK(b[i] == (i % 2 ? -7 : (int)(size * i + rs)));
    OK(MPI_Type_free(&vi));
    free(a); free(b);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("dtype_many_blocks: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

/* Struct datatypes whose type signature has more runs than the old limit of
 * 4,194,304 (a repetition of a struct of mixed basic types: each element adds
 * two runs, int then double): a contiguous of 2M+3 structs (4,194,310 runs)
 * is committed, its size, element count and pack sizes queried, sent from
 * rank 0 to rank 1 (and received as the same number of structs described
 * another way: a vector of them) and as bytes, checked, packed and unpacked
 * (natively and in external32).
 * A vector of 2^31
 * structs is made, committed and queried without materialising anything.
 * Memory: ~70 MB a rank. Runs on 2 or more ranks (ranks 2.. only query). */
#include "check.h"
#include <stdint.h>

#define NS ((2 << 20) + 3)

struct s { int i; double d; };

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2);

    MPI_Datatype st, big, vec, huge;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct s, i), offsetof(struct s, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, disp, ty, &st));
    OK(MPI_Type_commit(&st));
    /* 2 runs an element: NS elements are 2 NS > 4,194,304 runs. */
    OK(MPI_Type_contiguous(NS, st, &big));
    OK(MPI_Type_commit(&big));
    int isz; OK(MPI_Type_size(big, &isz)); CHECK(isz == 12 * NS);
    MPI_Aint lb, ext; OK(MPI_Type_get_extent(big, &lb, &ext)); CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct s) * NS);
    int psz; OK(MPI_Pack_size(1, big, MPI_COMM_WORLD, &psz)); CHECK(psz >= 12 * NS);
    MPI_Aint esz; OK(MPI_Pack_external_size("external32", 1, big, &esz)); CHECK(esz == (MPI_Aint)12 * NS);
    /* The same structs as a vector of NS blocks of one struct, stride 1. */
    OK(MPI_Type_vector(NS, 1, 1, st, &vec));
    OK(MPI_Type_commit(&vec));

    /* 2^31 structs, stride 2: kept by structure (signature and blocks). */
    OK(MPI_Type_vector_c((MPI_Count)1 << 31, 1, 2, st, &huge));
    OK(MPI_Type_commit(&huge));
    MPI_Count csz; OK(MPI_Type_size_c(huge, &csz)); CHECK(csz == ((MPI_Count)12 << 31));
    OK(MPI_Type_free(&huge));

    if (rank < 2) {
        struct s *buf = malloc(sizeof(struct s) * (size_t)NS);
        CHECK(buf);
        if (rank == 0) {
            for (long k = 0; k < NS; k++) { buf[k].i = (int)(k * 3 + 1); buf[k].d = k * 0.5; }
            OK(MPI_Send(buf, 1, big, 1, 7, MPI_COMM_WORLD));
            OK(MPI_Send(buf, 1, big, 1, 8, MPI_COMM_WORLD));
        } else {
            memset(buf, 0, sizeof(struct s) * (size_t)NS);
            MPI_Status stt;
            OK(MPI_Recv(buf, 1, vec, 0, 7, MPI_COMM_WORLD, &stt));
            int n; OK(MPI_Get_count(&stt, st, &n)); CHECK(n == NS);
            OK(MPI_Get_elements(&stt, st, &n)); CHECK(n == 2 * NS);
            OK(MPI_Get_elements(&stt, big, &n)); CHECK(n == 2 * NS);
            for (long k = 0; k < NS; k++) CHECK(buf[k].i == (int)(k * 3 + 1) && buf[k].d == k * 0.5);
            /* Received into MPI_BYTE: any signature matches bytes. */
            char *raw = malloc(12 * (size_t)NS);
            CHECK(raw);
            OK(MPI_Recv(raw, 12 * NS, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &stt));
            OK(MPI_Get_count(&stt, MPI_BYTE, &n)); CHECK(n == 12 * NS);
            int i0; memcpy(&i0, raw + 12 * 5, 4); CHECK(i0 == 16);
            free(raw);
        }
        free(buf);
    }

    /* Pack and unpack a part: the first 100 structs packed with `st` equal
     * the first 1200 bytes of the big type packed. */
    {
        struct s *b = malloc(sizeof(struct s) * (size_t)NS);
        char *p1 = malloc(12 * (size_t)NS), *p2 = malloc(1200);
        CHECK(b && p1 && p2);
        for (long k = 0; k < NS; k++) { b[k].i = (int)k; b[k].d = -(double)k; }
        int pos = 0; OK(MPI_Pack(b, 1, big, p1, 12 * NS, &pos, MPI_COMM_WORLD)); CHECK(pos == 12 * NS);
        pos = 0; OK(MPI_Pack(b, 100, st, p2, 1200, &pos, MPI_COMM_WORLD)); CHECK(pos == 1200);
        CHECK(memcmp(p1, p2, 1200) == 0);
        memset(b, 0, sizeof(struct s) * (size_t)NS);
        pos = 0; OK(MPI_Unpack(p1, 12 * NS, &pos, b, 1, big, MPI_COMM_WORLD));
        CHECK(b[NS - 1].i == NS - 1 && b[NS - 1].d == -(double)(NS - 1));
        free(b); free(p1); free(p2);
    }

    /* external32 of the big type, converted by the structure of its
     * signature: big-endian int then double per struct; the first 1200
     * bytes equal 100 structs of `st` packed alike; it unpacks back. */
    {
        struct s *b = malloc(sizeof(struct s) * (size_t)NS);
        unsigned char *e1 = malloc(12 * (size_t)NS), *e2 = malloc(1200);
        CHECK(b && e1 && e2);
        for (long k = 0; k < NS; k++) { b[k].i = (int)(k * 5 - 7); b[k].d = k * 0.25; }
        MPI_Aint pos = 0;
        OK(MPI_Pack_external("external32", b, 1, big, e1, (MPI_Aint)12 * NS, &pos)); CHECK(pos == (MPI_Aint)12 * NS);
        pos = 0; OK(MPI_Pack_external("external32", b, 100, st, e2, 1200, &pos)); CHECK(pos == 1200);
        CHECK(memcmp(e1, e2, 1200) == 0);
        for (long k = 0; k < NS; k += NS / 7) {
            const unsigned char *q = e1 + 12 * k;
            uint32_t v = (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | (uint32_t)q[2] << 8 | q[3];
            uint64_t w = 0;
            for (int j = 0; j < 8; j++) w = w << 8 | q[4 + j];
            double d; memcpy(&d, &w, 8);
            CHECK((int32_t)v == (int32_t)(k * 5 - 7) && d == k * 0.25);
        }
        memset(b, 0, sizeof(struct s) * (size_t)NS);
        pos = 0;
        OK(MPI_Unpack_external("external32", e1, (MPI_Aint)12 * NS, &pos, b, 1, big)); CHECK(pos == (MPI_Aint)12 * NS);
        for (long k = 0; k < NS; k++) CHECK(b[k].i == (int)(k * 5 - 7) && b[k].d == k * 0.25);
        free(b); free(e1); free(e2);
    }

    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&big));
    OK(MPI_Type_free(&st));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("dtype_big_struct: all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

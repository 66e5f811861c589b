/* Small defects found by programs from outside (issue 11): error classes
 * added without a string, names of null handles and MPI_C_COMPLEX, the empty
 * status of MPI_REQUEST_NULL, constructors that fail null their output,
 * MPI_Dims_create as MPICH decides, external32 sizes of every type. */
#include "check.h"

static void names(void) {
    char name[MPI_MAX_OBJECT_NAME]; int len;
    OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == (int)strlen(name));
    OK(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == (int)strlen(name));
    OK(MPI_Type_get_name(MPI_C_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0);
    OK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_FLOAT_COMPLEX") == 0 || strcmp(name, "MPI_C_COMPLEX") == 0);
    OK(MPI_Type_get_name(MPI_C_DOUBLE_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_DOUBLE_COMPLEX") == 0);
}

static void error_classes(void) {
    int cls, code, len, c2;
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Add_error_class(&cls));
    s[0] = 'x';
    OK(MPI_Error_string(cls, s, &len));
    CHECK(len == 0 && s[0] == '\0');
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Error_string(code, s, &len));
    CHECK(len == 0 && s[0] == '\0');
    OK(MPI_Error_class(code, &c2)); CHECK(c2 == cls);
    OK(MPI_Add_error_string(cls, "my class"));
    OK(MPI_Error_string(cls, s, &len));
    CHECK(strcmp(s, "my class") == 0 && len == 8);
}

static void check_empty(MPI_Status *st) {
    int n = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && st->MPI_ERROR == MPI_SUCCESS);
    OK(MPI_Get_count(st, MPI_INT, &n)); CHECK(n == 0);
    OK(MPI_Get_elements(st, MPI_INT, &n)); CHECK(n == 0);
    int c = 1; OK(MPI_Test_cancelled(st, &c)); CHECK(c == 0);
}

static void null_request(void) {
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st; int flag = 0;
    memset(&st, 0x55, sizeof st);
    OK(MPI_Request_get_status(r, &flag, &st)); CHECK(flag == 1); check_empty(&st);
    memset(&st, 0x55, sizeof st); flag = 0;
    OK(MPI_Test(&r, &flag, &st)); CHECK(flag == 1); check_empty(&st);
    memset(&st, 0x55, sizeof st);
    OK(MPI_Wait(&r, &st)); check_empty(&st);
    CHECK(r == MPI_REQUEST_NULL);
}

static void failing_constructors(int size) {
    MPI_Comm c;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int dims[1] = { size + 1 }, periods[1] = { 0 };
    c = MPI_COMM_WORLD;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c) != MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    int index[1] = { 1 }, edges[1] = { size + 5 };
    c = MPI_COMM_WORLD;
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &c) != MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    c = MPI_COMM_WORLD;
    CHECK(MPI_Comm_create(MPI_COMM_WORLD, (MPI_Group)0x1234567, &c) != MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    c = MPI_COMM_WORLD;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &c) != MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    c = MPI_COMM_WORLD;
    CHECK(MPI_Comm_dup(MPI_COMM_NULL, &c) != MPI_SUCCESS);
    CHECK(c == MPI_COMM_NULL);
    MPI_Datatype t = MPI_INT;
    CHECK(MPI_Type_contiguous(-1, MPI_INT, &t) != MPI_SUCCESS);
    CHECK(t == MPI_DATATYPE_NULL);
    t = MPI_INT;
    CHECK(MPI_Type_vector(2, 1, 2, MPI_DATATYPE_NULL, &t) != MPI_SUCCESS);
    CHECK(t == MPI_DATATYPE_NULL);
    MPI_Group g = MPI_GROUP_EMPTY, wg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int bad[1] = { size + 3 };
    CHECK(MPI_Group_incl(wg, 1, bad, &g) != MPI_SUCCESS);
    CHECK(g == MPI_GROUP_NULL);
    OK(MPI_Group_free(&wg));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void dims(void) {
    /* MPICH's answers where several grids are equally balanced */
    struct { int n, nd, in[4], out[4]; } t[] = {
        { 360, 3, {0, 0, 0, 0}, {10, 6, 6, 0} },
        { 3696, 3, {0, 0, 0, 0}, {22, 14, 12, 0} },
        { 2160, 4, {0, 0, 0, 0}, {10, 6, 6, 6} },
        { 168, 4, {0, 0, 0, 0}, {7, 4, 3, 2} },
        { 720, 4, {0, 2, 0, 0}, {10, 2, 6, 6} },
        { 12, 2, {0, 0, 0, 0}, {4, 3, 0, 0} },
        { 7, 2, {0, 0, 0, 0}, {7, 1, 0, 0} },
    };
    for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++) {
        OK(MPI_Dims_create(t[i].n, t[i].nd, t[i].in));
        for (int d = 0; d < t[i].nd; d++) CHECK(t[i].in[d] == t[i].out[d]);
    }
}

static void external32(void) {
    /* the standard's external32 table (MPI-4.1 section 14.5.2) */
    struct { MPI_Datatype t; MPI_Aint size; } tab[] = {
        { MPI_PACKED, 1 }, { MPI_BYTE, 1 }, { MPI_CHAR, 1 }, { MPI_UNSIGNED_CHAR, 1 },
        { MPI_SIGNED_CHAR, 1 }, { MPI_WCHAR, 4 }, { MPI_SHORT, 2 }, { MPI_UNSIGNED_SHORT, 2 },
        { MPI_INT, 4 }, { MPI_UNSIGNED, 4 }, { MPI_LONG, 4 }, { MPI_UNSIGNED_LONG, 4 },
        { MPI_LONG_LONG_INT, 8 }, { MPI_UNSIGNED_LONG_LONG, 8 }, { MPI_FLOAT, 4 },
        { MPI_DOUBLE, 8 }, { MPI_LONG_DOUBLE, 16 }, { MPI_C_BOOL, 1 }, { MPI_INT8_T, 1 },
        { MPI_INT16_T, 2 }, { MPI_INT32_T, 4 }, { MPI_INT64_T, 8 }, { MPI_UINT8_T, 1 },
        { MPI_UINT16_T, 2 }, { MPI_UINT32_T, 4 }, { MPI_UINT64_T, 8 }, { MPI_AINT, 8 },
        { MPI_COUNT, 8 }, { MPI_OFFSET, 8 }, { MPI_C_COMPLEX, 8 }, { MPI_C_FLOAT_COMPLEX, 8 },
        { MPI_C_DOUBLE_COMPLEX, 16 }, { MPI_C_LONG_DOUBLE_COMPLEX, 32 },
        { MPI_CHARACTER, 1 }, { MPI_LOGICAL, 4 }, { MPI_INTEGER, 4 }, { MPI_REAL, 4 },
        { MPI_DOUBLE_PRECISION, 8 }, { MPI_COMPLEX, 8 }, { MPI_DOUBLE_COMPLEX, 16 },
        { MPI_INTEGER1, 1 }, { MPI_INTEGER2, 2 }, { MPI_INTEGER4, 4 }, { MPI_INTEGER8, 8 },
        { MPI_REAL4, 4 }, { MPI_REAL8, 8 }, { MPI_COMPLEX8, 8 },
        { MPI_COMPLEX16, 16 },
        { MPI_FLOAT_INT, 8 }, { MPI_DOUBLE_INT, 12 }, { MPI_LONG_INT, 8 }, { MPI_2INT, 8 },
        { MPI_SHORT_INT, 6 }, { MPI_LONG_DOUBLE_INT, 20 },
    };
    for (unsigned i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        MPI_Aint sz = -1;
        OK(MPI_Pack_external_size("external32", 3, tab[i].t, &sz));
        if (sz != 3 * tab[i].size) {
            char name[MPI_MAX_OBJECT_NAME]; int len;
            MPI_Type_get_name(tab[i].t, name, &len);
            fprintf(stderr, "external32 size of %s: %ld, want %ld\n", name, (long)sz, (long)(3 * tab[i].size));
        }
        CHECK(sz == 3 * tab[i].size);
    }
    /* a long round-trips through its 4-byte external form */
    long v[3] = { -5, 123456, -2147483647L }, w[3] = { 0, 0, 0 };
    char buf[64]; MPI_Aint pos = 0;
    OK(MPI_Pack_external("external32", v, 3, MPI_LONG, buf, sizeof buf, &pos));
    CHECK(pos == 12);
    CHECK((unsigned char)buf[4] == 0x00 && (unsigned char)buf[7] == 0x40); /* 123456 = 0x0001E240, big-endian */
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 12, &pos, w, 3, MPI_LONG));
    CHECK(pos == 12 && w[0] == -5 && w[1] == 123456 && w[2] == -2147483647L);
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    dims();
    external32();
    names();
    error_classes();
    null_request();
    failing_constructors(size);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("defects: all checks passed on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}

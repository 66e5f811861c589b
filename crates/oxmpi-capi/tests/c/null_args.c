/* NULL pointer arguments of calls whose checks abi.txt's `out(...)`/`nonnull(...)`
 * annotations generate: each returns MPI_ERR_ARG (under MPI_ERRORS_RETURN) with a
 * message naming the call and the argument, and does nothing else. */
#include "check.h"

static int failures = 0;
/* The error `rc` has class MPI_ERR_ARG and its message names `call` and `arg`. */
static void null_arg(int rc, const char *call, const char *arg, int line) {
    char msg[MPI_MAX_ERROR_STRING], quoted[128];
    int c = MPI_SUCCESS, len = 0;
    if (rc != MPI_SUCCESS) OK(MPI_Error_class(rc, &c));
    if (rc != MPI_SUCCESS) OK(MPI_Error_string(rc, msg, &len)); else strcpy(msg, "(success)");
    snprintf(quoted, sizeof quoted, "`%s`", arg);
    if (c != MPI_ERR_ARG || !strstr(msg, call) || !strstr(msg, quoted)) {
        fprintf(stderr, "line %d: %s(%s = NULL): class %d, message: %s\n", line, call, arg, c, msg);
        failures++;
    }
}
#define NULL_ARG(rc, call, arg) null_arg((rc), (call), (arg), __LINE__)

int main(int argc, char **argv) {
    int rank, len, flag;
    char buf[MPI_MAX_OBJECT_NAME];
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* Communicators (errors through the communicator's handler). */
    NULL_ARG(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL),
             "MPI_Comm_split_type", "newcomm");
    NULL_ARG(MPI_Comm_group(MPI_COMM_WORLD, NULL), "MPI_Comm_group", "group");
    NULL_ARG(MPI_Comm_get_info(MPI_COMM_WORLD, NULL), "MPI_Comm_get_info", "info_used");
    NULL_ARG(MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &len), "MPI_Comm_get_name", "comm_name");
    NULL_ARG(MPI_Comm_get_name(MPI_COMM_WORLD, buf, NULL), "MPI_Comm_get_name", "resultlen");
    NULL_ARG(MPI_Ibarrier(MPI_COMM_WORLD, NULL), "MPI_Ibarrier", "request");

    /* Environment and MPI_Comm_idup. */
    {
        MPI_Comm dupc;
        MPI_Request ireq;
        NULL_ARG(MPI_Get_processor_name(NULL, &len), "MPI_Get_processor_name", "name");
        NULL_ARG(MPI_Get_processor_name(buf, NULL), "MPI_Get_processor_name", "resultlen");
        NULL_ARG(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL), "MPI_Alloc_mem", "baseptr");
        NULL_ARG(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &ireq), "MPI_Comm_idup", "newcomm");
        NULL_ARG(MPI_Comm_idup(MPI_COMM_WORLD, &dupc, NULL), "MPI_Comm_idup", "request");
        NULL_ARG(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dupc, NULL), "MPI_Comm_idup_with_info", "request");
        /* Calls with no handle to route by (abi.txt `route(...)`). */
        NULL_ARG(MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, NULL), "MPI_Init_thread", "provided");
        NULL_ARG(MPI_Comm_join(-1, NULL), "MPI_Comm_join", "intercomm");
        NULL_ARG(MPI_Comm_accept("x", MPI_INFO_NULL, 0, MPI_COMM_SELF, NULL), "MPI_Comm_accept", "newcomm");
        NULL_ARG(MPI_Comm_connect("x", MPI_INFO_NULL, 0, MPI_COMM_SELF, NULL), "MPI_Comm_connect", "newcomm");
        NULL_ARG(MPI_File_open(MPI_COMM_SELF, "/nonexistent/x", MPI_MODE_RDONLY, MPI_INFO_NULL, NULL), "MPI_File_open", "fh");
        NULL_ARG(MPI_File_create_errhandler(NULL, NULL), "MPI_File_create_errhandler", "errhandler");
        NULL_ARG(MPI_Session_create_errhandler(NULL, NULL), "MPI_Session_create_errhandler", "errhandler");
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &dupc, &ireq));
        OK(MPI_Wait(&ireq, MPI_STATUS_IGNORE));
        OK(MPI_Comm_free(&dupc));
    }

    /* Handles freed through a pointer. */
    NULL_ARG(MPI_Type_commit(NULL), "MPI_Type_commit", "datatype");
    NULL_ARG(MPI_Type_free(NULL), "MPI_Type_free", "datatype");
    NULL_ARG(MPI_Group_free(NULL), "MPI_Group_free", "group");
    NULL_ARG(MPI_Op_free(NULL), "MPI_Op_free", "op");
    NULL_ARG(MPI_Errhandler_free(NULL), "MPI_Errhandler_free", "errhandler");
    NULL_ARG(MPI_Info_free(NULL), "MPI_Info_free", "info");
    NULL_ARG(MPI_Cancel(NULL), "MPI_Cancel", "request");
    NULL_ARG(MPI_Request_free(NULL), "MPI_Request_free", "request");

    /* Names and strings. */
    NULL_ARG(MPI_Type_get_name(MPI_INT, NULL, &len), "MPI_Type_get_name", "type_name");
    NULL_ARG(MPI_Type_get_name(MPI_INT, buf, NULL), "MPI_Type_get_name", "resultlen");
    NULL_ARG(MPI_Get_library_version(NULL, &len), "MPI_Get_library_version", "version");
    NULL_ARG(MPI_Error_string(MPI_ERR_ARG, NULL, &len), "MPI_Error_string", "string");

    /* Info. */
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "k", "v"));
    NULL_ARG(MPI_Info_get(info, "k", 10, buf, NULL), "MPI_Info_get", "flag");
    NULL_ARG(MPI_Info_get_valuelen(info, "k", NULL, &flag), "MPI_Info_get_valuelen", "valuelen");
    NULL_ARG(MPI_Info_get_valuelen(info, "k", &len, NULL), "MPI_Info_get_valuelen", "flag");
    NULL_ARG(MPI_Info_get_nthkey(info, 0, NULL), "MPI_Info_get_nthkey", "key");
    /* Nothing was done: the info still holds its key. */
    OK(MPI_Info_get_valuelen(info, "k", &len, &flag));
    CHECK(flag && len == 1);
    OK(MPI_Info_free(&info));

    /* A status that may be MPI_STATUS_IGNORE (abi.txt `status(...)`): ignored or written. */
    int idx = 7;
    MPI_Status st;
    st.MPI_SOURCE = 12345;
    OK(MPI_Request_get_status_any(0, NULL, &idx, &flag, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED && flag);
    OK(MPI_Request_get_status_any(0, NULL, &idx, &flag, &st));
    CHECK(idx == MPI_UNDEFINED && flag && st.MPI_SOURCE == MPI_ANY_SOURCE);
    NULL_ARG(MPI_Request_get_status_any(0, NULL, NULL, &flag, &st), "MPI_Request_get_status_any", "index");

    /* A pointer that may be NULL on one path only (abi.txt `lenquery(...)`): the length
     * query of MPI_Session_get_nth_pset (pset_len 0) takes a NULL name. */
    MPI_Session s;
    OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    len = 0;
    OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
    CHECK(len > 1);
    NULL_ARG(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL), "MPI_Session_get_nth_pset", "pset_name");
    NULL_ARG(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, NULL, buf), "MPI_Session_get_nth_pset", "pset_len");
    {
        void *bp = NULL;
        int bsz = 0;
        NULL_ARG(MPI_Session_detach_buffer(s, NULL, &bsz), "MPI_Session_detach_buffer", "buffer_addr");
        NULL_ARG(MPI_Session_detach_buffer(s, &bp, NULL), "MPI_Session_detach_buffer", "size");
    }
    OK(MPI_Session_finalize(&s));

    /* Datatype constructors (abi.txt `made(newtype)`, `array(P, count)`): a NULL OUT
     * handle; a NULL array with a positive count names the array and leaves the null
     * handle; a count of 0 takes NULL arrays; a negative count is MPI_ERR_COUNT. */
    {
        MPI_Datatype t = MPI_INT, t2;
        int bl[2] = {1, 1}, dis[2] = {0, 2}, sizes[2] = {4, 4}, subs[2] = {2, 2}, starts[2] = {0, 0};
        MPI_Aint adis[2] = {0, 8};
        MPI_Count cbl[2] = {1, 1}, cdis[2] = {0, 8};
        MPI_Datatype tys[2] = {MPI_INT, MPI_INT};
        int c = MPI_SUCCESS, rc;
        NULL_ARG(MPI_Type_contiguous(2, MPI_INT, NULL), "MPI_Type_contiguous", "newtype");
        NULL_ARG(MPI_Type_contiguous_c(2, MPI_INT, NULL), "MPI_Type_contiguous_c", "newtype");
        NULL_ARG(MPI_Type_vector(2, 1, 2, MPI_INT, NULL), "MPI_Type_vector", "newtype");
        NULL_ARG(MPI_Type_create_resized(MPI_INT, 0, 8, NULL), "MPI_Type_create_resized", "newtype");
        NULL_ARG(MPI_Type_dup(MPI_INT, NULL), "MPI_Type_dup", "newtype");
        NULL_ARG(MPI_Type_indexed(2, bl, dis, MPI_INT, NULL), "MPI_Type_indexed", "newtype");
        NULL_ARG(MPI_Type_indexed(2, NULL, dis, MPI_INT, &t), "MPI_Type_indexed", "array_of_blocklengths");
        CHECK(t == MPI_DATATYPE_NULL);
        NULL_ARG(MPI_Type_indexed(2, bl, NULL, MPI_INT, &t), "MPI_Type_indexed", "array_of_displacements");
        NULL_ARG(MPI_Type_create_hindexed(2, bl, NULL, MPI_INT, &t), "MPI_Type_create_hindexed", "array_of_displacements");
        NULL_ARG(MPI_Type_create_indexed_block(2, 1, NULL, MPI_INT, &t), "MPI_Type_create_indexed_block", "array_of_displacements");
        NULL_ARG(MPI_Type_create_hindexed_block(2, 1, NULL, MPI_INT, &t), "MPI_Type_create_hindexed_block", "array_of_displacements");
        NULL_ARG(MPI_Type_create_struct(2, bl, adis, NULL, &t), "MPI_Type_create_struct", "array_of_types");
        NULL_ARG(MPI_Type_create_struct_c(2, cbl, NULL, tys, &t), "MPI_Type_create_struct_c", "array_of_displacements");
        NULL_ARG(MPI_Type_indexed_c(2, NULL, cdis, MPI_INT, &t), "MPI_Type_indexed_c", "array_of_blocklengths");
        NULL_ARG(MPI_Type_create_subarray(2, sizes, NULL, starts, MPI_ORDER_C, MPI_INT, &t), "MPI_Type_create_subarray", "array_of_subsizes");
        NULL_ARG(MPI_Type_create_darray(1, 0, 2, sizes, NULL, NULL, NULL, MPI_ORDER_C, MPI_INT, &t), "MPI_Type_create_darray", "array_of_distribs");
        CHECK(t == MPI_DATATYPE_NULL);
        /* A negative count: MPI_ERR_COUNT naming `count` (nothing looked at). */
        rc = MPI_Type_indexed(-1, bl, dis, MPI_INT, &t);
        if (rc != MPI_SUCCESS) OK(MPI_Error_class(rc, &c));
        CHECK(c == MPI_ERR_COUNT && t == MPI_DATATYPE_NULL);
        /* Count 0: NULL arrays are not looked at; the type is empty. */
        OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &t));
        OK(MPI_Type_size(t, &len));
        CHECK(len == 0);
        OK(MPI_Type_free(&t));
        /* The generated checks pass valid arguments on. */
        OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t2));
        OK(MPI_Type_size(t2, &len));
        CHECK(len == 4 * (int)sizeof(int));
        OK(MPI_Type_free(&t2));
        OK(MPI_Type_create_hindexed(2, bl, adis, MPI_INT, &t2));
        OK(MPI_Type_size(t2, &len));
        CHECK(len == 2 * (int)sizeof(int));
        OK(MPI_Type_free(&t2));
    }

    /* Pack and unpack (abi.txt `out(position)`, `out(size)`). */
    {
        int x = 5, y = 0;
        char pbuf[64];
        MPI_Aint esize;
        MPI_Count cpos = 0;
        NULL_ARG(MPI_Pack(&x, 1, MPI_INT, pbuf, sizeof pbuf, NULL, MPI_COMM_WORLD), "MPI_Pack", "position");
        NULL_ARG(MPI_Pack_c(&x, 1, MPI_INT, pbuf, sizeof pbuf, NULL, MPI_COMM_WORLD), "MPI_Pack_c", "position");
        NULL_ARG(MPI_Unpack(pbuf, sizeof pbuf, NULL, &y, 1, MPI_INT, MPI_COMM_WORLD), "MPI_Unpack", "position");
        NULL_ARG(MPI_Pack_external_size("external32", 1, MPI_INT, NULL), "MPI_Pack_external_size", "size");
        NULL_ARG(MPI_Pack_external("external32", &x, 1, MPI_INT, pbuf, sizeof pbuf, NULL), "MPI_Pack_external", "position");
        OK(MPI_Pack_external_size("external32", 2, MPI_INT, &esize));
        CHECK(esize == 8);
        OK(MPI_Pack_c(&x, 1, MPI_INT, pbuf, sizeof pbuf, &cpos, MPI_COMM_WORLD));
        cpos = 0;
        OK(MPI_Unpack_c(pbuf, sizeof pbuf, &cpos, &y, 1, MPI_INT, MPI_COMM_WORLD));
        CHECK(y == 5 && cpos == (MPI_Count)sizeof(int));
    }

    /* MPI_Pready_list (abi.txt `array(array_of_partitions, length)`): NULL with a
     * positive length names the array; with length 0 it is not looked at. */
    {
        int part[4] = {0, 0, 0, 0}, list[2] = {0, 1};
        MPI_Request preq;
        if (rank == 0) {
            OK(MPI_Psend_init(part, 2, 2, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &preq));
            OK(MPI_Start(&preq));
            OK(MPI_Pready_list(0, NULL, preq));
            NULL_ARG(MPI_Pready_list(2, NULL, preq), "MPI_Pready_list", "array_of_partitions");
            OK(MPI_Pready_list(2, list, preq));
        } else if (rank == 1) {
            OK(MPI_Precv_init(part, 2, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &preq));
            OK(MPI_Start(&preq));
        }
        if (rank < 2) {
            OK(MPI_Wait(&preq, MPI_STATUS_IGNORE));
            OK(MPI_Request_free(&preq));
        }
    }

    /* Attributes (abi.txt `outaddr(attribute_val) out(flag)`). */
    {
        int *tag_ub = NULL;
        void *v = NULL;
        NULL_ARG(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag), "MPI_Comm_get_attr", "attribute_val");
        NULL_ARG(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, NULL), "MPI_Comm_get_attr", "flag");
        OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
        CHECK(flag && *tag_ub >= 32767);
        NULL_ARG(MPI_Type_get_attr(MPI_INT, 0, NULL, &flag), "MPI_Type_get_attr", "attribute_val");
        NULL_ARG(MPI_Type_get_attr(MPI_INT, 0, &v, NULL), "MPI_Type_get_attr", "flag");
    }

    /* Groups (abi.txt `made(newgroup)`) and error handlers. */
    {
        MPI_Group wg, g = MPI_GROUP_EMPTY;
        MPI_Errhandler eh;
        int r0 = 0, tri[3] = {0, 0, 1};
        OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        NULL_ARG(MPI_Group_union(wg, wg, NULL), "MPI_Group_union", "newgroup");
        NULL_ARG(MPI_Group_intersection(wg, wg, NULL), "MPI_Group_intersection", "newgroup");
        NULL_ARG(MPI_Group_difference(wg, wg, NULL), "MPI_Group_difference", "newgroup");
        NULL_ARG(MPI_Group_incl(wg, 1, &r0, NULL), "MPI_Group_incl", "newgroup");
        NULL_ARG(MPI_Group_excl(wg, 1, &r0, NULL), "MPI_Group_excl", "newgroup");
        NULL_ARG(MPI_Group_range_incl(wg, 1, (int (*)[3])tri, NULL), "MPI_Group_range_incl", "newgroup");
        NULL_ARG(MPI_Group_range_excl(wg, 1, (int (*)[3])tri, NULL), "MPI_Group_range_excl", "newgroup");
        /* A failing constructor leaves the null handle. */
        NULL_ARG(MPI_Group_incl(wg, 1, NULL, &g), "MPI_Group_incl", "ranks");
        CHECK(g == MPI_GROUP_NULL);
        OK(MPI_Group_incl(wg, 1, &r0, &g));
        OK(MPI_Group_size(g, &len));
        CHECK(len == 1);
        OK(MPI_Group_free(&g));
        OK(MPI_Group_free(&wg));
        NULL_ARG(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL), "MPI_Comm_get_errhandler", "errhandler");
        NULL_ARG(MPI_Comm_create_errhandler(NULL, NULL), "MPI_Comm_create_errhandler", "errhandler");
        OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
        CHECK(eh == MPI_ERRORS_RETURN);
        OK(MPI_Errhandler_free(&eh));
    }

    /* Windows (errors through the window's handler; a constructor's through its
     * communicator's). */
    MPI_Win win;
    int mem = 0;
    {
        void *base = NULL;
        MPI_Aint qsize;
        int qdisp;
        NULL_ARG(MPI_Win_create(&mem, sizeof mem, sizeof mem, MPI_INFO_NULL, MPI_COMM_WORLD, NULL), "MPI_Win_create", "win");
        NULL_ARG(MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, NULL, &win), "MPI_Win_allocate", "baseptr");
        NULL_ARG(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, NULL), "MPI_Win_allocate_shared", "win");
        OK(MPI_Win_allocate_shared(8, 1, MPI_INFO_NULL, MPI_COMM_SELF, &base, &win));
        CHECK(base != NULL);
        OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
        NULL_ARG(MPI_Win_shared_query(win, 0, NULL, &qdisp, &base), "MPI_Win_shared_query", "size");
        NULL_ARG(MPI_Win_shared_query(win, 0, &qsize, &qdisp, NULL), "MPI_Win_shared_query", "baseptr");
        {
            void *wv = NULL;
            NULL_ARG(MPI_Win_get_attr(win, MPI_WIN_BASE, NULL, &flag), "MPI_Win_get_attr", "attribute_val");
            NULL_ARG(MPI_Win_get_attr(win, MPI_WIN_BASE, &wv, NULL), "MPI_Win_get_attr", "flag");
            OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &wv, &flag));
            CHECK(flag && wv == base);
        }
        OK(MPI_Win_shared_query(win, 0, &qsize, &qdisp, &base));
        CHECK(qsize == 8 && qdisp == 1);
        OK(MPI_Win_free(&win));
    }
    OK(MPI_Win_create(&mem, sizeof mem, sizeof mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    NULL_ARG(MPI_Win_get_group(win, NULL), "MPI_Win_get_group", "group");
    NULL_ARG(MPI_Win_get_name(win, NULL, &len), "MPI_Win_get_name", "win_name");
    NULL_ARG(MPI_Win_get_info(win, NULL), "MPI_Win_get_info", "info_used");
    OK(MPI_Win_free(&win));

    CHECK(failures == 0);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}

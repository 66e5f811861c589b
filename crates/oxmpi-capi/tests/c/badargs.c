/* Bad arguments. With `return`: MPI_ERRORS_RETURN gives the right class for
 * each. With `fatal <what>`: the default handler must end the job. With
 * `handler`: a user error handler is called. */
#include "check.h"
static int calls = 0, last = 0;
static MPI_Comm last_comm = MPI_COMM_NULL;
static void handler(MPI_Comm *comm, int *code, ...) { last_comm = *comm; calls++; last = *code; }

static int cls(int rc) { int c; if (rc == MPI_SUCCESS) return MPI_SUCCESS; OK(MPI_Error_class(rc, &c)); return c; }
/* The error `rc` has class `c` and its message names `call` and `arg`. */
static int names(int rc, int c, const char *call, const char *arg) {
    char msg[MPI_MAX_ERROR_STRING]; int len;
    if (cls(rc) != c) return 0;
    OK(MPI_Error_string(rc, msg, &len));
    char quoted[128]; snprintf(quoted, sizeof quoted, "`%s`", arg);
    if (!strstr(msg, call) || !strstr(msg, quoted)) { fprintf(stderr, "message: %s\n", msg); return 0; }
    return 1;
}

int main(int argc, char **argv) {
    int rank, size, x[4] = {0};
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *mode = argc > 1 ? argv[1] : "return";
    if (strcmp(mode, "fatal") == 0) {
        if (rank == 0) MPI_Send(x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
        else MPI_Barrier(MPI_COMM_WORLD);
        return 0; /* not reached on rank 0 */
    }
    if (strcmp(mode, "fatal-type") == 0) {
        MPI_Datatype t; OK(MPI_Type_contiguous(2, MPI_INT, &t)); /* never committed */
        MPI_Send(x, 1, t, 0, 0, MPI_COMM_SELF);
        return 0;
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Errhandler eh; OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh)); CHECK(eh == MPI_ERRORS_RETURN);
    CHECK(cls(MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
    CHECK(cls(MPI_Send(x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
    CHECK(cls(MPI_Send(x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD)) == MPI_ERR_TAG);
    CHECK(cls(MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT);
    CHECK(cls(MPI_Send(NULL, 3, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
    CHECK(cls(MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Send(x, 1, (MPI_Datatype)(intptr_t)0x123456789, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Send(x, 1, MPI_INT, 0, 0, (MPI_Comm)(intptr_t)0xdeadbeef)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Recv(x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) == MPI_ERR_RANK);
    CHECK(cls(MPI_Recv(x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) == MPI_ERR_TAG);
    /* MPI_Isend's fast path (a predefined type on MPI_COMM_WORLD or MPI_COMM_SELF,
       the engine handed on from the handle look-up): its errors name the call and
       the argument, the handle is left alone, and MPI_PROC_NULL completes. */
    MPI_Request ir = MPI_REQUEST_NULL;
    CHECK(names(MPI_Isend(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &ir), MPI_ERR_RANK, "MPI_Isend", "dest"));
    CHECK(names(MPI_Isend(x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &ir), MPI_ERR_RANK, "MPI_Isend", "dest"));
    CHECK(names(MPI_Isend(x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD, &ir), MPI_ERR_TAG, "MPI_Isend", "tag"));
    CHECK(names(MPI_Isend(x, 1, MPI_INT, 1, 0, MPI_COMM_SELF, &ir), MPI_ERR_RANK, "MPI_Isend", "dest"));
    CHECK(ir == MPI_REQUEST_NULL);
    OK(MPI_Isend(x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &ir));
    OK(MPI_Wait(&ir, MPI_STATUS_IGNORE)); CHECK(ir == MPI_REQUEST_NULL);
    MPI_Datatype t, freed;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK(cls(MPI_Send(x, 1, t, 0, 0, MPI_COMM_SELF)) == MPI_ERR_TYPE); /* uncommitted */
    freed = t; OK(MPI_Type_free(&t));
    CHECK(cls(MPI_Type_commit(&freed)) == MPI_ERR_TYPE);               /* freed */
    CHECK(cls(MPI_Type_free(&freed)) == MPI_ERR_TYPE);                 /* double free */
    MPI_Datatype pre = MPI_INT;
    CHECK(cls(MPI_Type_free(&pre)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Type_contiguous(-1, MPI_INT, &t)) == MPI_ERR_COUNT);
    MPI_Request r = (MPI_Request)(intptr_t)0x7777777700000001;
    CHECK(cls(MPI_Wait(&r, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
    MPI_Request rq; OK(MPI_Isend(x, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &rq));
    MPI_Request stale = rq;
    OK(MPI_Recv(x, 1, MPI_INT, 0, 5, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); CHECK(rq == MPI_REQUEST_NULL);
    CHECK(cls(MPI_Wait(&stale, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);
    CHECK(cls(MPI_Request_free(&rq)) == MPI_ERR_REQUEST);
    MPI_Op op = MPI_SUM; CHECK(cls(MPI_Op_free(&op)) == MPI_ERR_OP);
    CHECK(cls(MPI_Reduce_local(x, x + 1, 1, MPI_INT, MPI_OP_NULL)) == MPI_ERR_OP);
    CHECK(cls(MPI_Reduce_local(x, x + 1, 1, MPI_INT, (MPI_Op)(intptr_t)0x99999999999)) == MPI_ERR_OP);
    CHECK(cls(MPI_Comm_rank(MPI_COMM_WORLD, NULL)) == MPI_ERR_ARG);
    /* The checks gen.rs writes for abi.txt's `query` lines: NULL OUT pointers and
     * negative counts, each naming the call and the argument. */
    {
        MPI_Aint lb, ext; MPI_Count cl, ce; int n, res;
        CHECK(names(MPI_Type_get_extent(MPI_INT, &lb, NULL), MPI_ERR_ARG, "MPI_Type_get_extent", "extent"));
        CHECK(names(MPI_Type_get_extent(MPI_INT, NULL, &ext), MPI_ERR_ARG, "MPI_Type_get_extent", "lb"));
        CHECK(names(MPI_Type_get_true_extent_c(MPI_INT, &cl, NULL), MPI_ERR_ARG, "MPI_Type_get_true_extent_c", "true_extent"));
        CHECK(names(MPI_Type_size_c(MPI_INT, NULL), MPI_ERR_ARG, "MPI_Type_size_c", "size"));
        CHECK(names(MPI_Type_size(MPI_DATATYPE_NULL, &n), MPI_ERR_TYPE, "MPI_Type_size", "datatype"));
        CHECK(names(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, NULL), MPI_ERR_ARG, "MPI_Group_compare", "result"));
        CHECK(names(MPI_Pack_size(-3, MPI_INT, MPI_COMM_WORLD, &n), MPI_ERR_COUNT, "MPI_Pack_size", "incount"));
        CHECK(names(MPI_Pack_size_c(-3, MPI_INT, MPI_COMM_WORLD, &cl), MPI_ERR_COUNT, "MPI_Pack_size_c", "incount"));
        CHECK(names(MPI_Pack_size(2, MPI_INT, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Pack_size", "size"));
        CHECK(names(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, NULL), MPI_ERR_ARG, "MPI_Comm_compare", "result"));
        CHECK(names(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &res), MPI_ERR_COMM, "MPI_Comm_compare", "comm2"));
        CHECK(names(MPI_Error_class(MPI_ERR_COUNT, NULL), MPI_ERR_ARG, "MPI_Error_class", "errorclass"));
        CHECK(cls(MPI_Graphdims_get(MPI_COMM_WORLD, &n, NULL)) == MPI_ERR_TOPOLOGY); /* no graph: the area answers first */
        MPI_Status st; OK(MPI_Sendrecv(x, 3, MPI_INT, 0, 77, x, 3, MPI_INT, 0, 77, MPI_COMM_SELF, &st));
        CHECK(names(MPI_Get_count(&st, MPI_INT, NULL), MPI_ERR_ARG, "MPI_Get_count", "count"));
        CHECK(names(MPI_Get_elements_c(&st, MPI_INT, NULL), MPI_ERR_ARG, "MPI_Get_elements_c", "count"));
        OK(MPI_Get_count(&st, MPI_INT, &n)); CHECK(n == 3);
        OK(MPI_Get_elements_x(&st, MPI_SHORT, &cl)); CHECK(cl == 6);
        OK(MPI_Get_count_c(&st, MPI_DOUBLE, &cl)); CHECK(cl == MPI_UNDEFINED);
        /* and the answers themselves */
        OK(MPI_Type_get_extent(MPI_INT, &lb, &ext)); CHECK(lb == 0 && ext == 4);
        OK(MPI_Type_get_extent_x(MPI_DOUBLE, &cl, &ce)); CHECK(cl == 0 && ce == 8);
        OK(MPI_Type_size(MPI_SHORT, &n)); CHECK(n == 2);
        OK(MPI_Pack_size(3, MPI_INT, MPI_COMM_WORLD, &n)); CHECK(n >= 12);
        OK(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &res)); CHECK(res == MPI_IDENT);
        int ni, na, nd, comb;
        OK(MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb)); CHECK(comb == MPI_COMBINER_NAMED && ni == 0);
    }
    /* The queries whose OUT check abi.txt generates (`query` lines): NULL is
     * MPI_ERR_ARG, and the message names the call and the argument. */
    {
        MPI_Group wg; MPI_Info in; OK(MPI_Comm_group(MPI_COMM_WORLD, &wg)); OK(MPI_Info_create(&in));
        struct { int rc; const char *call, *arg; } q[] = {
            {MPI_Comm_size(MPI_COMM_WORLD, NULL), "MPI_Comm_size", "`size`"},
            {MPI_Comm_test_inter(MPI_COMM_WORLD, NULL), "MPI_Comm_test_inter", "`flag`"},
            {MPI_Group_size(wg, NULL), "MPI_Group_size", "`size`"},
            {MPI_Group_rank(wg, NULL), "MPI_Group_rank", "`rank`"},
            {MPI_Topo_test(MPI_COMM_WORLD, NULL), "MPI_Topo_test", "`status`"},
            {MPI_Info_get_nkeys(in, NULL), "MPI_Info_get_nkeys", "`nkeys`"},
            {MPI_Op_commutative(MPI_SUM, NULL), "MPI_Op_commutative", "`commute`"},
            {MPI_Query_thread(NULL), "MPI_Query_thread", "`provided`"},
            {MPI_Is_thread_main(NULL), "MPI_Is_thread_main", "`flag`"},
            {MPI_Initialized(NULL), "MPI_Initialized", "`flag`"},
            {MPI_Finalized(NULL), "MPI_Finalized", "`flag`"},
        };
        for (unsigned i = 0; i < sizeof q / sizeof q[0]; i++) {
            char m[MPI_MAX_ERROR_STRING]; int ml;
            CHECK(cls(q[i].rc) == MPI_ERR_ARG);
            OK(MPI_Error_string(q[i].rc, m, &ml));
            if (!strstr(m, q[i].call) || !strstr(m, q[i].arg)) { printf("query %s: message \"%s\"\n", q[i].call, m); CHECK(0); }
        }
        /* A bad handle is still found before the missing OUT argument. */
        CHECK(cls(MPI_Comm_size(MPI_COMM_NULL, NULL)) == MPI_ERR_COMM);
        OK(MPI_Info_free(&in)); OK(MPI_Group_free(&wg));
    }
    /* user error classes, codes and strings */
    int ec, ecode; char s[MPI_MAX_ERROR_STRING]; int len;
    OK(MPI_Add_error_class(&ec)); OK(MPI_Add_error_code(ec, &ecode));
    OK(MPI_Add_error_string(ecode, "my error"));
    CHECK(cls(ecode) == ec);
    OK(MPI_Error_string(ecode, s, &len)); CHECK(strcmp(s, "my error") == 0);
    /* a user handler */
    MPI_Errhandler mine;
    OK(MPI_Comm_create_errhandler(handler, &mine));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine));
    int rc = MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    CHECK(calls == 1 && cls(rc) == MPI_ERR_RANK && cls(last) == MPI_ERR_RANK);
    OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, ecode)); CHECK(calls == 2 && last == ecode);
    OK(MPI_Errhandler_free(&mine)); CHECK(mine == MPI_ERRHANDLER_NULL);
    rc = MPI_Send(x, 1, MPI_INT, size, 0, MPI_COMM_WORLD); CHECK(calls == 3); /* still attached */
    /* The blocking collectives' lean entries (MPI_Allreduce, MPI_Scan, MPI_Barrier): an
     * error reaches the handler of the call's communicator, a duplicate's as WORLD's;
     * a success calls none. */
    {
        MPI_Comm dup; MPI_Errhandler mine2; float fin = 1.0f, fout = 0.0f;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        OK(MPI_Comm_create_errhandler(handler, &mine2));
        OK(MPI_Comm_set_errhandler(dup, mine2));
        OK(MPI_Errhandler_free(&mine2));
        rc = MPI_Allreduce(&fin, &fout, 1, MPI_FLOAT, MPI_OP_NULL, MPI_COMM_WORLD);
        CHECK(calls == 4 && cls(rc) == MPI_ERR_OP && last_comm == MPI_COMM_WORLD);
        rc = MPI_Allreduce(&fin, &fout, 1, MPI_DATATYPE_NULL, MPI_SUM, dup);
        CHECK(calls == 5 && cls(rc) == MPI_ERR_TYPE && last_comm == dup);
        rc = MPI_Scan(&fin, &fout, -1, MPI_FLOAT, MPI_SUM, dup);
        CHECK(calls == 6 && cls(rc) == MPI_ERR_COUNT && last_comm == dup);
        OK(MPI_Allreduce(&fin, &fout, 1, MPI_FLOAT, MPI_SUM, dup));
        CHECK(calls == 6 && fout == (float)size);
        OK(MPI_Barrier(dup)); OK(MPI_Barrier(MPI_COMM_WORLD)); CHECK(calls == 6);
        CHECK(cls(MPI_Barrier(MPI_COMM_NULL)) == MPI_ERR_COMM);
        calls = 3; /* what the checks below expect */
        OK(MPI_Comm_free(&dup));
    }
    /* errors tied to no communicator go to MPI_COMM_SELF's handler */
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    CHECK(cls(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t)) == MPI_ERR_TYPE && calls == 3);
    OK(MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* attributes */
    int key, val = 17, *got, flag;
    OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Attr_put(MPI_COMM_WORLD, key, &val));
    OK(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag)); CHECK(flag && *got == 17);
    OK(MPI_Attr_delete(MPI_COMM_WORLD, key));
    OK(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag)); CHECK(!flag);
    OK(MPI_Keyval_free(&key));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("badargs: all checks passed\n");
    OK(MPI_Finalize());
    return 0;
}

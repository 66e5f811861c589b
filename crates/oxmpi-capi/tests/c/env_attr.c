/* Attributes, error handlers, groups and the environment as suites probe them.
 * Rank 0 prints " No Errors" (after MPI_Finalize, once MPI_COMM_SELF's delete
 * callbacks have run in LIFO order). With argument "exit": rank 1 returns 3
 * after MPI_Finalize; with "abort": the last rank calls MPI_Abort(..., 7). */
#include "check.h"

static int rank, size, errs;
#define E(cond, ...) do { if (!(cond)) { errs++; if (errs < 30) { fprintf(stderr, "rank %d line %d: ", rank, __LINE__); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } } while (0)

/* ---- attributes ---- */
static int copies, deletes, order[32], norder;
static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    copies++; *(void **)out = (char *)in + 1; *flag = 1; return MPI_SUCCESS;
}
static int nocopy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) { *flag = 0; return MPI_SUCCESS; }
static int del_fn(MPI_Comm c, int key, void *val, void *extra) {
    deletes++;
    /* the communicator is still usable inside the callback */
    void *v; int f; if (MPI_Comm_get_attr(c, key, &v, &f) != MPI_SUCCESS) errs++;
    return MPI_SUCCESS;
}
static int failing_copy(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) { return MPI_ERR_OTHER; }
static int failing_del(MPI_Comm c, int key, void *val, void *extra) { return MPI_ERR_OTHER + 0; }
static int self_exit_calls, self_exit_bad;
static int self_del(MPI_Comm c, int key, void *val, void *extra) {
    int idx = (int)(long)val, fin;
    MPI_Finalized(&fin);
    if (fin) self_exit_bad++;
    /* LIFO: every attribute set after this one was deleted already */
    for (int i = 0; i < norder; i++) if (order[i] <= idx) self_exit_bad++;
    order[norder++] = idx;
    self_exit_calls++;
    return MPI_SUCCESS;
}
static int type_copies, type_deletes;
static int tcopy(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag) { type_copies++; *(void **)out = in; *flag = 1; return MPI_SUCCESS; }
static int tdel(MPI_Datatype t, int key, void *val, void *extra) { type_deletes++; return MPI_SUCCESS; }

static void attributes(void) {
    int key, key2, flag; void *v;
    /* predefined attributes */
    int *p;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag)); E(flag && *p >= 32767, "TAG_UB");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag)); E(flag && (*p == MPI_PROC_NULL || (*p >= 0 && *p < size)), "HOST");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag)); E(flag && (*p == MPI_PROC_NULL || *p == MPI_ANY_SOURCE || (*p >= 0 && *p < size)), "IO");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag)); E(!flag || *p == 0 || *p == 1, "WTIME_IS_GLOBAL");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag)); E(!flag || *p >= 0, "APPNUM");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag)); E(!flag || *p >= size, "UNIVERSE_SIZE");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag)); E(flag && *p >= MPI_ERR_LASTCODE - 100000, "LASTUSEDCODE");
    OK(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag)); E(flag && *p >= 32767, "Attr_get TAG_UB");
    OK(MPI_Comm_get_attr(MPI_COMM_SELF, MPI_TAG_UB, &p, &flag)); E(flag && *p >= 32767, "TAG_UB on SELF");
    /* predefined attributes cannot be set or deleted */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    E(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag) != MPI_SUCCESS, "setting TAG_UB fails");
    E(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB) != MPI_SUCCESS, "deleting TAG_UB fails");
    /* copy and delete callbacks: dup copies (value + 1), free deletes */
    OK(MPI_Comm_create_keyval(copy_fn, del_fn, &key, NULL));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
    E(key != MPI_KEYVAL_INVALID, "keyval");
    MPI_Comm a, b;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    static char base[8];
    OK(MPI_Comm_set_attr(a, key, base)); OK(MPI_Comm_set_attr(a, key2, base + 3));
    OK(MPI_Comm_dup(a, &b));
    OK(MPI_Comm_get_attr(b, key, &v, &flag)); E(flag && v == base + 1, "copied value");
    OK(MPI_Comm_get_attr(b, key2, &v, &flag)); E(!flag, "NULL_COPY_FN does not copy");
    E(copies == 1, "one copy");
    /* replacing a value deletes the old one */
    OK(MPI_Comm_set_attr(b, key, base + 5)); E(deletes == 1, "set over an old value calls delete");
    OK(MPI_Comm_delete_attr(b, key)); E(deletes == 2, "delete_attr calls delete");
    OK(MPI_Comm_get_attr(b, key, &v, &flag)); E(!flag, "deleted");
    /* freeing the keyval while attached: the attribute stays until the comm goes */
    OK(MPI_Comm_free_keyval(&key)); E(key == MPI_KEYVAL_INVALID, "free_keyval sets INVALID");
    OK(MPI_Comm_free(&a)); E(deletes == 3, "comm_free deletes with a freed keyval (%d)", deletes);
    OK(MPI_Comm_free(&b));
    /* MPI_COMM_DUP_FN copies the pointer itself */
    int k3; OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k3, base + 2)); OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_get_attr(a, k3, &v, &flag)); E(flag && v == base + 2, "DUP_FN");
    OK(MPI_Comm_free(&a)); OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k3)); OK(MPI_Comm_free_keyval(&k3));
    /* MPI-1 names: MPI_NULL_COPY_FN / MPI_DUP_FN */
    int k4; OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &k4, NULL));
    OK(MPI_Attr_put(MPI_COMM_WORLD, k4, base + 4)); OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Attr_get(a, k4, &v, &flag)); E(flag && v == base + 4, "MPI_DUP_FN");
    OK(MPI_Attr_delete(a, k4)); OK(MPI_Comm_free(&a)); OK(MPI_Attr_delete(MPI_COMM_WORLD, k4)); OK(MPI_Keyval_free(&k4));
    /* freeing an invalid keyval fails */
    int kbad = MPI_KEYVAL_INVALID; E(MPI_Comm_free_keyval(&kbad) != MPI_SUCCESS, "free of KEYVAL_INVALID");
    /* a failing copy callback makes MPI_Comm_dup fail, a failing delete makes delete_attr/free fail */
    int kf; OK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kf, NULL));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a)); OK(MPI_Comm_set_attr(a, kf, base));
    b = MPI_COMM_WORLD; E(MPI_Comm_dup(a, &b) != MPI_SUCCESS, "failing copy fails the dup");
    OK(MPI_Comm_delete_attr(a, kf)); OK(MPI_Comm_free(&a)); OK(MPI_Comm_free_keyval(&kf));
    int kd; OK(MPI_Comm_create_keyval(nocopy_fn, failing_del, &kd, NULL));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &a)); OK(MPI_Comm_set_attr(a, kd, base));
    E(MPI_Comm_delete_attr(a, kd) != MPI_SUCCESS, "failing delete fails delete_attr");
    OK(MPI_Comm_free_keyval(&kd));
    /* attributes on datatypes: dup copies, free deletes */
    int tk; MPI_Datatype t, t2;
    OK(MPI_Type_create_keyval(tcopy, tdel, &tk, NULL));
    OK(MPI_Type_contiguous(2, MPI_INT, &t)); OK(MPI_Type_set_attr(t, tk, base));
    OK(MPI_Type_dup(t, &t2)); OK(MPI_Type_get_attr(t2, tk, &v, &flag)); E(flag && v == base && type_copies == 1, "type attr copied");
    OK(MPI_Type_free(&t)); OK(MPI_Type_free(&t2)); E(type_deletes == 2, "type attrs deleted (%d)", type_deletes);
    OK(MPI_Type_free_keyval(&tk));
    /* attributes on predefined types */
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    OK(MPI_Type_set_attr(MPI_INT, tk, base)); OK(MPI_Type_get_attr(MPI_INT, tk, &v, &flag)); E(flag && v == base, "attr on MPI_INT");
    OK(MPI_Type_delete_attr(MPI_INT, tk)); OK(MPI_Type_free_keyval(&tk));
    /* MPI_COMM_SELF delete callbacks at finalize, LIFO */
    for (int i = 0; i < 12; i++) {
        int k; OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_del, &k, NULL));
        OK(MPI_Comm_set_attr(MPI_COMM_SELF, k, (void *)(long)i));
        OK(MPI_Comm_free_keyval(&k));
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* ---- error handlers ---- */
static int handler_calls, handler_code; static MPI_Comm handler_comm;
static void handler(MPI_Comm *c, int *code, ...) { handler_calls++; handler_code = *code; handler_comm = *c; }

static void errhandlers(void) {
    MPI_Errhandler eh, got;
    OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_Comm a; OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    OK(MPI_Comm_set_errhandler(a, eh));
    /* inherited by dups */
    MPI_Comm b; OK(MPI_Comm_dup(a, &b)); OK(MPI_Comm_get_errhandler(b, &got)); E(got == eh, "dup inherits the handler");
    OK(MPI_Errhandler_free(&got));
    /* an error on b calls the handler with b and the code, and the call returns the code */
    int one = 1; int rc = MPI_Send(&one, 1, MPI_INT, size + 5, 0, b);
    E(handler_calls == 1 && handler_comm == b, "user handler called");
    { int cl; MPI_Error_class(rc, &cl); E(cl == MPI_ERR_RANK && handler_code == rc, "code passed and returned"); }
    /* MPI_Comm_call_errhandler */
    OK(MPI_Comm_call_errhandler(a, MPI_ERR_OTHER)); E(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
    /* user error classes and codes */
    int cls, code, code2, c2; char s[MPI_MAX_ERROR_STRING]; int len;
    OK(MPI_Add_error_class(&cls)); OK(MPI_Add_error_code(cls, &code)); OK(MPI_Add_error_code(cls, &code2));
    E(code != code2 && code != cls, "distinct codes");
    OK(MPI_Add_error_string(code, "my special error"));
    OK(MPI_Error_string(code, s, &len)); E(strcmp(s, "my special error") == 0 && len == (int)strlen(s), "user string");
    OK(MPI_Error_class(code, &c2)); E(c2 == cls, "class of user code");
    OK(MPI_Error_class(cls, &c2)); E(c2 == cls, "class of user class");
    OK(MPI_Add_error_string(cls, "my class")); OK(MPI_Error_string(cls, s, &len)); E(strcmp(s, "my class") == 0, "class string");
    int *last, flag; OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag)); E(flag && *last >= code2 && *last >= cls, "LASTUSEDCODE covers new codes");
    OK(MPI_Comm_call_errhandler(b, code)); E(handler_code == code, "user code through handler");
    /* removal (MPI-4.1): strings, codes, then the class */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    E(MPI_Remove_error_class(cls) != MPI_SUCCESS, "class with codes cannot go");
    E(MPI_Remove_error_code(code) != MPI_SUCCESS, "code with a string cannot go");
    OK(MPI_Remove_error_string(code));
    OK(MPI_Error_string(code, s, &len)); E(len == 0 && s[0] == 0, "a removed string reads as empty");
    OK(MPI_Remove_error_code(code)); OK(MPI_Remove_error_code(code2));
    E(MPI_Error_class(code, &c2) != MPI_SUCCESS, "removed code is invalid");
    E(MPI_Remove_error_code(cls) != MPI_SUCCESS, "a class is not a code");
    E(MPI_Remove_error_class(cls) != MPI_SUCCESS, "class with a string cannot go");
    OK(MPI_Remove_error_string(cls)); OK(MPI_Remove_error_class(cls));
    E(MPI_Remove_error_class(MPI_ERR_ARG) != MPI_SUCCESS, "predefined class cannot go");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* a code in a predefined class */
    int oc; OK(MPI_Add_error_code(MPI_ERR_ARG, &oc)); OK(MPI_Error_class(oc, &c2)); E(c2 == MPI_ERR_ARG, "code in predefined class");
    /* every predefined class has a non-empty string and is its own class */
    for (int i = 0; i <= MPI_ERR_ABI; i++) {
        s[0] = 0; OK(MPI_Error_string(i, s, &len)); E(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len, "string of class %d", i);
        OK(MPI_Error_class(i, &c2)); E(c2 == i, "class of %d", i);
    }
    /* MPI_ERRORS_RETURN / ARE_FATAL / ABORT handles compare */
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got)); E(got == MPI_ERRORS_ARE_FATAL, "world default is FATAL");
    OK(MPI_Comm_set_errhandler(a, MPI_ERRORS_ABORT)); OK(MPI_Comm_get_errhandler(a, &got)); E(got == MPI_ERRORS_ABORT, "ERRORS_ABORT set");
    OK(MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN));
    OK(MPI_Comm_call_errhandler(a, MPI_ERR_OTHER));
    /* freeing the handler while in use keeps it working */
    OK(MPI_Errhandler_free(&eh)); E(eh == MPI_ERRHANDLER_NULL, "freed handle is NULL");
    int before = handler_calls; OK(MPI_Comm_call_errhandler(b, MPI_ERR_OTHER)); E(handler_calls == before + 1, "freed handler still attached");
    /* WORLD's handler is inherited by comms made from it */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Comm w; OK(MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &w)); OK(MPI_Comm_get_errhandler(w, &got)); E(got == MPI_ERRORS_RETURN, "split inherits");
    /* errors not tied to a communicator (and on MPI_COMM_NULL) are returned under WORLD's ERRORS_RETURN */
    E(MPI_Type_commit(NULL) != MPI_SUCCESS, "objectless error returned");
    E(MPI_Barrier(MPI_COMM_NULL) != MPI_SUCCESS, "COMM_NULL error returned");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_free(&w)); OK(MPI_Comm_free(&a)); OK(MPI_Comm_free(&b));
    /* MPI-1 names */
    MPI_Errhandler old; OK(MPI_Errhandler_create(handler, &old)); OK(MPI_Errhandler_set(MPI_COMM_SELF, old));
    OK(MPI_Errhandler_get(MPI_COMM_SELF, &got)); E(got == old, "Errhandler_get"); OK(MPI_Errhandler_free(&got));
    OK(MPI_Errhandler_set(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL)); OK(MPI_Errhandler_free(&old));
}

/* ---- groups ---- */
static void groups(void) {
    MPI_Group w, g, h, u, in, d; int n, r, res;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    /* range_incl with stride: every other rank, then backwards */
    int rg[1][3] = { { 0, size - 1, 2 } };
    OK(MPI_Group_range_incl(w, 1, rg, &g)); OK(MPI_Group_size(g, &n)); E(n == (size + 1) / 2, "range_incl stride 2");
    OK(MPI_Group_rank(g, &r)); E(rank % 2 ? r == MPI_UNDEFINED : r == rank / 2, "rank in strided group");
    int back[1][3] = { { size - 1, 0, -1 } };
    OK(MPI_Group_range_incl(w, 1, back, &h)); OK(MPI_Group_rank(h, &r)); E(r == size - 1 - rank, "reversed range");
    OK(MPI_Group_compare(w, h, &res)); E(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "reversed is similar");
    /* range_excl of the evens = odds */
    OK(MPI_Group_range_excl(w, 1, rg, &d)); OK(MPI_Group_size(d, &n)); E(n == size / 2, "range_excl");
    /* union / intersection / difference orders */
    OK(MPI_Group_union(d, g, &u)); OK(MPI_Group_size(u, &n)); E(n == size, "union size");
    { int zero = 0, t; if (size > 1) { OK(MPI_Group_translate_ranks(u, 1, &zero, w, &t)); E(t == 1, "union lists the first group first"); } }
    OK(MPI_Group_intersection(w, h, &in)); OK(MPI_Group_compare(in, w, &res)); E(res == MPI_IDENT, "intersection keeps the first group's order");
    MPI_Group diff; OK(MPI_Group_difference(w, w, &diff)); OK(MPI_Group_compare(diff, MPI_GROUP_EMPTY, &res)); E(res == MPI_IDENT, "difference with itself is empty");
    OK(MPI_Group_size(MPI_GROUP_EMPTY, &n)); E(n == 0, "GROUP_EMPTY size"); OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r)); E(r == MPI_UNDEFINED, "GROUP_EMPTY rank");
    MPI_Group e2; OK(MPI_Group_incl(w, 0, NULL, &e2)); OK(MPI_Group_compare(e2, MPI_GROUP_EMPTY, &res)); E(res == MPI_IDENT, "incl of nothing");
    OK(MPI_Group_excl(w, 0, NULL, &e2)); OK(MPI_Group_compare(e2, w, &res)); E(res == MPI_IDENT, "excl of nothing");
    OK(MPI_Group_free(&e2));
    /* translate_ranks with PROC_NULL and ranks not in the target */
    int from[3] = { 0, MPI_PROC_NULL, size - 1 }, to[3];
    OK(MPI_Group_translate_ranks(w, 3, from, g, to));
    E(to[0] == 0 && to[1] == MPI_PROC_NULL && to[2] == ((size - 1) % 2 ? MPI_UNDEFINED : (size - 1) / 2), "translate_ranks");
    OK(MPI_Group_translate_ranks(w, 0, NULL, g, NULL));
    OK(MPI_Group_translate_ranks(MPI_GROUP_EMPTY, 0, NULL, w, NULL));
    /* range with a single element and an empty-stride edge */
    int one[1][3] = { { size - 1, size - 1, 5 } };
    MPI_Group s1; OK(MPI_Group_range_incl(w, 1, one, &s1)); OK(MPI_Group_size(s1, &n)); E(n == 1, "single-element range"); OK(MPI_Group_free(&s1));
    /* errors: a rank twice, out of range */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int twice[2] = { 0, 0 }; MPI_Group bad;
    if (1) { int rc = MPI_Group_incl(w, 2, twice, &bad); int cl; MPI_Error_class(rc, &cl); E(cl == MPI_ERR_RANK || cl == MPI_ERR_ARG, "duplicate rank class %d", cl); }
    int out[1] = { size }; { int rc = MPI_Group_incl(w, 1, out, &bad); int cl; MPI_Error_class(rc, &cl); E(cl == MPI_ERR_RANK, "out of range rank"); }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* comm_create with the strided group */
    MPI_Comm c; OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    if (rank % 2) E(c == MPI_COMM_NULL, "not in group"); else { OK(MPI_Comm_size(c, &n)); E(n == (size + 1) / 2, "created size"); OK(MPI_Comm_free(&c)); }
    MPI_Group fr = w; OK(MPI_Group_free(&fr)); E(fr == MPI_GROUP_NULL, "group_free sets NULL");
    OK(MPI_Group_free(&g)); OK(MPI_Group_free(&h)); OK(MPI_Group_free(&d)); OK(MPI_Group_free(&u)); OK(MPI_Group_free(&in)); OK(MPI_Group_free(&diff));
}

static void environment(int argc, char **argv) {
    int flag, prov, ver, sub; char name[MPI_MAX_PROCESSOR_NAME]; int len;
    OK(MPI_Initialized(&flag)); E(flag, "initialized");
    OK(MPI_Finalized(&flag)); E(!flag, "not finalized");
    OK(MPI_Query_thread(&prov)); E(prov == MPI_THREAD_SINGLE || prov == MPI_THREAD_FUNNELED || prov == MPI_THREAD_SERIALIZED || prov == MPI_THREAD_MULTIPLE, "query_thread");
    OK(MPI_Is_thread_main(&flag)); E(flag, "main thread");
    OK(MPI_Get_version(&ver, &sub)); E(ver == MPI_VERSION && sub == MPI_SUBVERSION, "version");
    char *lib = malloc(MPI_MAX_LIBRARY_VERSION_STRING); OK(MPI_Get_library_version(lib, &len));
    E(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len, "library version length");
    free(lib);
    OK(MPI_Get_processor_name(name, &len)); E(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len, "processor name");
    double t = MPI_Wtick(); E(t > 0 && t < 1, "wtick");
    double a = MPI_Wtime(), b = MPI_Wtime(); E(b >= a, "wtime monotone");
    E(argc >= 1 && argv && argv[0], "argv passed");
}

int main(int argc, char **argv) {
    int flag;
    OK(MPI_Initialized(&flag)); CHECK(!flag);
    OK(MPI_Finalized(&flag)); CHECK(!flag);
    int prov; OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &prov));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        if (rank == size - 1) MPI_Abort(MPI_COMM_WORLD, 7);
        MPI_Barrier(MPI_COMM_WORLD);  /* the others wait to be ended */
    }
    environment(argc, argv);
    groups();
    errhandlers();
    attributes();
    int tot;
    OK(MPI_Allreduce(&errs, &tot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag)); CHECK(flag);
    OK(MPI_Initialized(&flag)); CHECK(flag);
    if (self_exit_calls != 12 || self_exit_bad) { fprintf(stderr, "rank %d: COMM_SELF callbacks %d, bad %d\n", rank, self_exit_calls, self_exit_bad); tot++; }
    if (rank == 0) { if (tot) printf(" Found %d errors\n", tot); else printf(" No Errors\n"); }
    if (argc > 1 && strcmp(argv[1], "exit") == 0 && rank == 1) return 3;
    return 0;
}

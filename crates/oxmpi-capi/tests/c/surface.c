/* API surface third-party suites use beyond the basics: info objects
 * (MPI_Info_get, _get_valuelen, MPI_INFO_ENV, MPI_Info_create_env),
 * communicator hints (set_info/get_info, dup_with_info, idup_with_info),
 * MPI_Alloc_mem/MPI_Free_mem, version macros, Fortran status conversion with
 * MPI_F_STATUS_IGNORE, and the one-sided and file entry points, which exist
 * (so suite utility libraries link) and raise MPI_ERR_UNSUPPORTED_OPERATION. */
#include "check.h"

#if !defined(MPI_VERSION) || !defined(MPI_SUBVERSION) || MPI_VERSION < 3
#error "MPI_VERSION / MPI_SUBVERSION missing or too old"
#endif

static int has(MPI_Info info, const char *key, const char *want) {
    char v[MPI_MAX_INFO_VAL + 1];
    int flag, len;
    OK(MPI_Info_get_valuelen(info, key, &len, &flag));
    if (!flag) return 0;
    CHECK(len == (int)strlen(want));
    OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, want) == 0);
    return 1;
}

int main(int argc, char **argv) {
    int rank, size;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    { int v, sv; OK(MPI_Get_version(&v, &sv)); CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION); }

    /* info: get, valuelen, truncation, missing keys, delete, dup, nthkey */
    {
        MPI_Info info, dup; int flag, n; char v[8], key[MPI_MAX_INFO_KEY];
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "host", "myhost"));
        OK(MPI_Info_set(info, "file", "runfile.txt"));
        OK(MPI_Info_set(info, "host", "otherhost"));
        CHECK(has(info, "host", "otherhost") && has(info, "file", "runfile.txt") && !has(info, "soft", ""));
        OK(MPI_Info_get(info, "file", 3, v, &flag)); CHECK(flag && strcmp(v, "run") == 0);
        OK(MPI_Info_get(info, "nokey", 3, v, &flag)); CHECK(!flag);
        OK(MPI_Info_get_nkeys(info, &n)); CHECK(n == 2);
        OK(MPI_Info_get_nthkey(info, 0, key)); CHECK(strcmp(key, "host") == 0);
        OK(MPI_Info_dup(info, &dup));
        OK(MPI_Info_delete(info, "host"));
        CHECK(!has(info, "host", "") && has(dup, "host", "otherhost"));
        OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        int rc = MPI_Info_delete(info, "host"); int cls; MPI_Error_class(rc, &cls); CHECK(cls == MPI_ERR_INFO_NOKEY);
        OK(MPI_Info_free(&info)); CHECK(info == MPI_INFO_NULL);
        OK(MPI_Info_free(&dup));
        OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n)); CHECK(n >= 0);
        OK(MPI_Info_create_env(argc, argv, &info));
        OK(MPI_Info_get_nkeys(info, &n)); CHECK(n >= 1);
        OK(MPI_Info_free(&info));
    }
    /* communicator hints */
    {
        MPI_Info info, used; MPI_Comm d, e; MPI_Request rq;
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
        OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d));
        OK(MPI_Comm_get_info(d, &used));
        CHECK(has(used, "mpi_assert_no_any_tag", "true"));
        OK(MPI_Info_free(&used));
        OK(MPI_Comm_set_info(d, info));
        OK(MPI_Comm_idup_with_info(d, info, &e, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        int x = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, e)); CHECK(x == size);
        OK(MPI_Comm_get_info(e, &used)); CHECK(has(used, "mpi_assert_no_any_tag", "true")); OK(MPI_Info_free(&used));
        OK(MPI_Comm_get_info(MPI_COMM_WORLD, &used)); OK(MPI_Info_free(&used));
        OK(MPI_Info_free(&info));
        OK(MPI_Comm_free(&e));
        OK(MPI_Comm_free(&d));
    }
    /* MPI_Alloc_mem / MPI_Free_mem */
    {
        double *p = NULL;
        OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &p));
        CHECK(p != NULL);
        for (int i = 0; i < 1000; i++) p[i] = i;
        OK(MPI_Sendrecv_replace(p, 1000, MPI_DOUBLE, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(p[999] == 999.0);
        OK(MPI_Free_mem(p));
        void *z; OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z)); OK(MPI_Free_mem(z));
    }
    /* Fortran status conversion */
    {
        MPI_Status st; MPI_Fint f[MPI_F_STATUS_SIZE];
        int x = rank, y = -1;
        OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 5, &y, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &st));
        CHECK(y == rank);
        OK(MPI_Status_c2f(&st, f));
        CHECK(f[MPI_F_SOURCE] == 0 && f[MPI_F_TAG] == 5);
        MPI_Status back; OK(MPI_Status_f2c(f, &back));
        int cnt; OK(MPI_Get_count(&back, MPI_INT, &cnt)); CHECK(cnt == 1 && back.MPI_TAG == 5);
        CHECK(MPI_F_STATUS_IGNORE == NULL && MPI_F_STATUSES_IGNORE == NULL);
        /* the tool interface's constants exist with the standard ABI's values */
        CHECK(MPI_T_ENUM_NULL == (MPI_T_enum)0 && MPI_T_PVAR_ALL_HANDLES == (MPI_T_pvar_handle)1);
        CHECK(MPI_T_ERR_INVALID == 1006 && MPI_T_VERBOSITY_USER_BASIC == 0x09 && MPI_T_PVAR_CLASS_GENERIC == 10);
        CHECK(MPI_T_BIND_MPI_SESSION == 12 && MPI_T_SCOPE_ALL_EQ == 7 && MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 0x3F);
        CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
    }
    /* one-sided: present (tests/c/rma.c covers it); files: a missing one is MPI_ERR_NO_SUCH_FILE */
    {
        int cls; char buf[64];
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_Win win = MPI_WIN_NULL;
        OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        OK(MPI_Win_free(&win));
        int rc = MPI_Win_fence(0, MPI_WIN_NULL);
        OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_WIN);
        char msg[MPI_MAX_ERROR_STRING]; int len;
        OK(MPI_Error_string(rc, msg, &len)); CHECK(len > 0);
        int kv = MPI_KEYVAL_INVALID;
        OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &kv, NULL));
        OK(MPI_Win_free_keyval(&kv));
        MPI_File fh;
        rc = MPI_File_open(MPI_COMM_WORLD, "oxmpi-surface-no-such-file", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_NO_SUCH_FILE);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
        if (argc > 1 && strcmp(argv[1], "fatal") == 0)
            MPI_Win_fence(0, win);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

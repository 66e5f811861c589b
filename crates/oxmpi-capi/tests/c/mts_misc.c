/* Behaviours MPICH's own test suite (attr, info, io, errors) found missing; each block
 * asserts what a program checks. Run on 2 ranks; argv[1] is a directory to work in.
 *  - a keyval freed inside its own delete callback, then again through copies of the
 *    handle, while an attribute still uses it: no error (the key lives on until its
 *    last attribute goes);
 *  - MPI_Info_create_env gives the same keys and values before MPI_Init, while MPI
 *    runs and after MPI_Finalize;
 *  - a file error handler freed with MPI_Errhandler_free after being attached is
 *    still called, and a handler that clears the code it gets makes the call succeed;
 *  - a truncated receive reports its message's source and tag in the status (Wait,
 *    Waitany, Test, Testsome, Waitall), with MPI_ERR_TRUNCATE in MPI_ERROR where the
 *    call has per-request errors;
 *  - the code a copy callback returns (a user-defined one) is what MPI_Comm_dup returns;
 *  - MPI_Reduce_local with inbuf == inoutbuf is MPI_ERR_BUFFER, and so are aliased
 *    send and receive buffers of collectives. */
#include "check.h"

static int deletes = 0;
static int delete_frees_keyval(MPI_Comm comm, int keyval, void *attr, void *extra) {
    deletes++;
    OK(MPI_Comm_free_keyval(&keyval));
    return MPI_SUCCESS;
}
static int type_delete_frees_keyval(MPI_Datatype t, int keyval, void *attr, void *extra) {
    deletes++;
    OK(MPI_Type_free_keyval(&keyval));
    return MPI_SUCCESS;
}

static int handler_calls = 0, handler_code = 0;
static void file_handler(MPI_File *fh, int *code, ...) {
    handler_calls++;
    handler_code = *code;
}

static void clearing_handler(MPI_File *fh, int *code, ...) {
    handler_calls++;
    handler_code = *code;
    *code = MPI_SUCCESS;
}

static int user_code;
static int copy_fails(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    *flag = 0;
    return user_code;
}

static int errclass(int code) {
    int c;
    OK(MPI_Error_class(code, &c));
    return c;
}

static void env_value(MPI_Info info, const char *key, char *v, int *flag) {
    int len = MPI_MAX_INFO_VAL;
    OK(MPI_Info_get_string(info, key, &len, v, flag));
}

int main(int argc, char **argv) {
    MPI_Info before;
    OK(MPI_Info_create_env(argc, argv, &before));
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(argc > 1);

    /* Info_create_env: the same answers before and during MPI. */
    MPI_Info during;
    OK(MPI_Info_create_env(argc, argv, &during));
    const char *keys[] = {"command", "argv", "maxprocs", "wdir", "thread_level"};
    for (int i = 0; i < 5; i++) {
        char a[MPI_MAX_INFO_VAL], b[MPI_MAX_INFO_VAL];
        int fa, fb;
        env_value(before, keys[i], a, &fa);
        env_value(during, keys[i], b, &fb);
        CHECK(fa == fb);
        CHECK(!fa || strcmp(a, b) == 0);
    }
    {
        char v[MPI_MAX_INFO_VAL];
        int f;
        env_value(before, "maxprocs", v, &f);
        CHECK(f && atoi(v) == size);
    }
    OK(MPI_Info_free(&during));

    /* Keyvals freed from their delete callback and then again by the program. */
    {
        MPI_Comm dup;
        int key = MPI_KEYVAL_INVALID, copy;
        OK(MPI_Comm_dup(MPI_COMM_SELF, &dup));
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_frees_keyval, &key, NULL));
        copy = key;
        OK(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
        OK(MPI_Comm_set_attr(dup, key, NULL));
        OK(MPI_Comm_free(&dup)); /* the callback frees the keyval */
        CHECK(deletes == 1);
        OK(MPI_Comm_free_keyval(&key));
        CHECK(key == MPI_KEYVAL_INVALID);
        OK(MPI_Comm_free_keyval(&copy));
        /* MPI_COMM_SELF's attribute still holds the key: its callback runs (and frees
         * the keyval once more) at MPI_Finalize. */
        /* A keyval that never existed is still refused. */
        int bogus = 987654;
        CHECK(errclass(MPI_Comm_free_keyval(&bogus)) == MPI_ERR_KEYVAL);

        MPI_Datatype t;
        int tkey, tcopy;
        OK(MPI_Type_contiguous(2, MPI_INT, &t));
        OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete_frees_keyval, &tkey, NULL));
        tcopy = tkey;
        OK(MPI_Type_set_attr(t, tkey, NULL));
        OK(MPI_Type_free_keyval(&tkey));
        OK(MPI_Type_free_keyval(&tcopy));
        OK(MPI_Type_free(&t)); /* the callback frees it once more */
        CHECK(deletes == 2);
    }

    /* A file error handler freed after being attached is still called. */
    {
        char path[4096];
        snprintf(path, sizeof path, "%s/userioerr.%d", argv[1], rank);
        MPI_File fh;
        MPI_Errhandler eh;
        OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
        OK(MPI_File_create_errhandler(file_handler, &eh));
        OK(MPI_File_set_errhandler(fh, eh));
        OK(MPI_Errhandler_free(&eh));
        CHECK(eh == MPI_ERRHANDLER_NULL);
        char buf[8];
        int rc = MPI_File_read_at(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        CHECK(handler_calls == 1);
        CHECK(errclass(rc) == MPI_ERR_ACCESS && errclass(handler_code) == MPI_ERR_ACCESS);
        MPI_Errhandler got;
        OK(MPI_File_get_errhandler(fh, &got));
        CHECK(got != MPI_ERRORS_ARE_FATAL && got != MPI_ERRORS_RETURN);
        OK(MPI_Errhandler_free(&got));
        OK(MPI_File_close(&fh));
    }

    /* A file error handler that clears the code it is given makes the call succeed
     * (the default for files, MPI_FILE_NULL's handler, changed and restored). */
    {
        char path[4096];
        snprintf(path, sizeof path, "%s/no-such-file.%d", argv[1], rank);
        MPI_File fh;
        MPI_Errhandler eh;
        handler_calls = 0;
        CHECK(errclass(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh)) == MPI_ERR_NO_SUCH_FILE);
        OK(MPI_File_create_errhandler(clearing_handler, &eh));
        OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
        OK(MPI_Errhandler_free(&eh));
        CHECK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == MPI_SUCCESS);
        CHECK(handler_calls == 1 && errclass(handler_code) == MPI_ERR_NO_SUCH_FILE);
        OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
        handler_calls = 0;
    }

    /* Truncated receives still report the message. */
    if (size >= 2 && rank < 2) {
        int b[20] = {0};
        if (rank == 0) {
            MPI_Request q[2];
            MPI_Status s;
            int rc, idx, flag = 0, oc = 0, ind[2];

            s.MPI_SOURCE = s.MPI_TAG = -7;
            OK(MPI_Irecv(b, 10, MPI_INT, 1, 10, MPI_COMM_WORLD, &q[0]));
            rc = MPI_Wait(&q[0], &s);
            CHECK(errclass(rc) == MPI_ERR_TRUNCATE && s.MPI_SOURCE == 1 && s.MPI_TAG == 10);

            s.MPI_SOURCE = s.MPI_TAG = -7;
            rc = MPI_Recv(b, 10, MPI_INT, 1, 11, MPI_COMM_WORLD, &s);
            CHECK(errclass(rc) == MPI_ERR_TRUNCATE && s.MPI_SOURCE == 1 && s.MPI_TAG == 11);

            s.MPI_SOURCE = s.MPI_TAG = -7;
            OK(MPI_Irecv(b, 10, MPI_INT, 1, 12, MPI_COMM_WORLD, &q[0]));
            rc = MPI_Waitany(1, q, &idx, &s);
            CHECK(errclass(rc) == MPI_ERR_TRUNCATE && idx == 0 && s.MPI_SOURCE == 1 && s.MPI_TAG == 12);

            s.MPI_SOURCE = s.MPI_TAG = -7;
            OK(MPI_Irecv(b, 10, MPI_INT, 1, 13, MPI_COMM_WORLD, &q[0]));
            do {
                rc = MPI_Test(&q[0], &flag, &s);
            } while (rc == MPI_SUCCESS && !flag);
            CHECK(errclass(rc) == MPI_ERR_TRUNCATE && s.MPI_SOURCE == 1 && s.MPI_TAG == 13);

            /* A correct message and a truncated one, completed together. */
            MPI_Status ss[2];
            OK(MPI_Irecv(b, 10, MPI_INT, 1, 0, MPI_COMM_WORLD, &q[0]));
            OK(MPI_Irecv(b + 10, 10, MPI_INT, 1, 14, MPI_COMM_WORLD, &q[1]));
            OK(MPI_Recv(NULL, 0, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            int done = 0;
            while (done < 2) {
                ss[0].MPI_ERROR = ss[1].MPI_ERROR = -1;
                rc = MPI_Testsome(2, q, &oc, ind, ss);
                CHECK(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS);
                for (int k = 0; k < oc; k++) {
                    if (ind[k] == 0) {
                        CHECK(ss[k].MPI_TAG == 0 && ss[k].MPI_SOURCE == 1);
                        CHECK(rc == MPI_SUCCESS || ss[k].MPI_ERROR == MPI_SUCCESS);
                    } else {
                        CHECK(rc == MPI_ERR_IN_STATUS);
                        CHECK(ss[k].MPI_TAG == 14 && ss[k].MPI_SOURCE == 1 && errclass(ss[k].MPI_ERROR) == MPI_ERR_TRUNCATE);
                    }
                }
                done += oc;
            }

            OK(MPI_Irecv(b, 10, MPI_INT, 1, 0, MPI_COMM_WORLD, &q[0]));
            OK(MPI_Irecv(b + 10, 10, MPI_INT, 1, 15, MPI_COMM_WORLD, &q[1]));
            ss[0].MPI_ERROR = ss[1].MPI_ERROR = -1;
            rc = MPI_Waitall(2, q, ss);
            CHECK(rc == MPI_ERR_IN_STATUS);
            CHECK(ss[0].MPI_ERROR == MPI_SUCCESS && ss[0].MPI_TAG == 0 && ss[0].MPI_SOURCE == 1);
            CHECK(errclass(ss[1].MPI_ERROR) == MPI_ERR_TRUNCATE && ss[1].MPI_TAG == 15 && ss[1].MPI_SOURCE == 1);
        } else {
            for (int tag = 10; tag <= 13; tag++) OK(MPI_Send(b, 11, MPI_INT, 0, tag, MPI_COMM_WORLD));
            OK(MPI_Send(b, 10, MPI_INT, 0, 0, MPI_COMM_WORLD));
            OK(MPI_Send(b, 11, MPI_INT, 0, 14, MPI_COMM_WORLD));
            OK(MPI_Send(NULL, 0, MPI_INT, 0, 99, MPI_COMM_WORLD));
            OK(MPI_Send(b, 10, MPI_INT, 0, 0, MPI_COMM_WORLD));
            OK(MPI_Send(b, 11, MPI_INT, 0, 15, MPI_COMM_WORLD));
        }
    }

    /* A copy callback's own (user-defined) error code comes back from MPI_Comm_dup. */
    {
        int uclass, key, one = 1;
        OK(MPI_Add_error_class(&uclass));
        OK(MPI_Add_error_code(uclass, &user_code));
        OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &key, NULL));
        MPI_Comm base, dup = MPI_COMM_NULL;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
        OK(MPI_Comm_set_attr(base, key, &one));
        int rc = MPI_Comm_dup(base, &dup);
        CHECK(rc == user_code && errclass(rc) == uclass);
        CHECK(dup == MPI_COMM_NULL);
        OK(MPI_Comm_free(&base));
        OK(MPI_Comm_free_keyval(&key));
    }

    /* Aliased buffers in MPI_Reduce_local. */
    {
        int a[4] = {1, 2, 3, 4};
        CHECK(errclass(MPI_Reduce_local(a, a, 4, MPI_INT, MPI_SUM)) == MPI_ERR_BUFFER);
        CHECK(a[0] == 1 && a[3] == 4);
        OK(MPI_Reduce_local(a, a, 0, MPI_INT, MPI_SUM));
    }

    /* Aliased send and receive buffers in collectives: MPI_ERR_BUFFER on the ranks
     * that pass them, before any communication (so the program can go on). */
    {
        int *v = malloc(sizeof(int) * 4 * (size_t)size);
        CHECK(v != NULL);
        for (int i = 0; i < 4 * size; i++) v[i] = i;
        CHECK(errclass(MPI_Allreduce(v, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        CHECK(errclass(MPI_Allgather(v, 1, MPI_INT, v, 1, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        CHECK(errclass(MPI_Alltoall(v, 1, MPI_INT, v, 1, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        CHECK(errclass(MPI_Scan(v, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        CHECK(errclass(MPI_Reduce_scatter_block(v, v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        /* Overlapping, not identical: each rank's own slot of the result. */
        CHECK(errclass(MPI_Allgather(&v[rank], 1, MPI_INT, v, 1, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        {
            int *rc = malloc(sizeof(int) * (size_t)size), *ds = malloc(sizeof(int) * (size_t)size);
            CHECK(rc && ds);
            for (int i = 0; i < size; i++) rc[i] = 1, ds[i] = 2 * i;
            CHECK(errclass(MPI_Allgatherv(&v[2 * rank], 1, MPI_INT, v, rc, ds, MPI_INT, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
            /* In the gap between the receive blocks: legal. */
            int mine = 100 + rank;
            v[2 * rank + 1] = mine;
            OK(MPI_Allgatherv(&v[2 * rank + 1], 1, MPI_INT, v, rc, ds, MPI_INT, MPI_COMM_WORLD));
            for (int i = 0; i < size; i++) CHECK(v[2 * i] == 100 + i);
            for (int i = 0; i < 4 * size; i++) v[i] = i;
            free(rc);
            free(ds);
        }
        MPI_Request rq;
        CHECK(errclass(MPI_Iallreduce(v, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq)) == MPI_ERR_BUFFER);
        if (rank == 0) {
            CHECK(errclass(MPI_Reduce(v, v, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
            CHECK(errclass(MPI_Gather(v, 1, MPI_INT, v, 1, MPI_INT, 0, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
            CHECK(errclass(MPI_Scatter(v, 1, MPI_INT, v, 1, MPI_INT, 0, MPI_COMM_WORLD)) == MPI_ERR_BUFFER);
        }
        CHECK(v[0] == 0 && v[4 * size - 1] == 4 * size - 1);
        /* Nothing was started: the communicator is usable, MPI_IN_PLACE works. */
        OK(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(v[0] == 0 && v[1] == size);
        free(v);
    }

    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();

    MPI_Info after;
    OK(MPI_Info_create_env(argc, argv, &after));
    {
        char a[MPI_MAX_INFO_VAL], b[MPI_MAX_INFO_VAL];
        int fa, fb;
        env_value(before, "maxprocs", a, &fa);
        env_value(after, "maxprocs", b, &fb);
        if (!(fa && fb && strcmp(a, b) == 0)) {
            fprintf(stderr, "maxprocs after MPI_Finalize differs from before MPI_Init\n");
            return 1;
        }
    }
    if (MPI_Info_free(&after) != MPI_SUCCESS || MPI_Info_free(&before) != MPI_SUCCESS) return 1;
    if (rank == 0) printf("mts_misc: all checks passed on %d ranks\n", size);
    return 0;
}

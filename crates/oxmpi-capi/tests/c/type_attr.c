/* Datatype attributes: keyvals with copy and delete callbacks, counted across
 * MPI_Type_dup / MPI_Type_free, set (replace) / get / delete, the predefined
 * MPI_TYPE_NULL_COPY_FN / MPI_TYPE_DUP_FN / MPI_TYPE_NULL_DELETE_FN, a failing
 * delete callback, handles from MPI_Type_get_contents, and bad keyvals. */
#include "check.h"

static int copies = 0, deletes = 0, last_deleted = -1;
static MPI_Datatype last_copy_type = MPI_DATATYPE_NULL, last_delete_type = MPI_DATATYPE_NULL;

static int copy_fn(MPI_Datatype old, int key, void *extra, void *in, void *out, int *flag) {
    copies++; last_copy_type = old;
    CHECK(*(int *)extra == 42);
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Datatype t, int key, void *val, void *extra) {
    deletes++; last_deleted = (int)(intptr_t)val; last_delete_type = t;
    CHECK(*(int *)extra == 42);
    return MPI_SUCCESS;
}
static int no_copy_fn(MPI_Datatype old, int key, void *extra, void *in, void *out, int *flag) {
    copies++; *flag = 0;
    return MPI_SUCCESS;
}
static int failing_delete(MPI_Datatype t, int key, void *val, void *extra) { return MPI_ERR_OTHER; }
static int cls(int rc) { int c; if (rc == MPI_SUCCESS) return MPI_SUCCESS; OK(MPI_Error_class(rc, &c)); return c; }

int main(int argc, char **argv) {
    int rank, size, extra = 42, flag;
    void *v;
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    int key, knull, kdup, kskip;
    OK(MPI_Type_create_keyval(copy_fn, delete_fn, &key, &extra));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &knull, NULL));
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL));
    OK(MPI_Type_create_keyval(no_copy_fn, delete_fn, &kskip, &extra));
    CHECK(key != MPI_KEYVAL_INVALID && key != knull && knull != kdup);

    MPI_Datatype t, t2;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_get_attr(t, key, &v, &flag)); CHECK(!flag);
    OK(MPI_Type_set_attr(t, key, (void *)(intptr_t)10));
    OK(MPI_Type_set_attr(t, knull, (void *)(intptr_t)20));
    OK(MPI_Type_set_attr(t, kdup, (void *)(intptr_t)30));
    OK(MPI_Type_set_attr(t, kskip, (void *)(intptr_t)50));
    OK(MPI_Type_get_attr(t, key, &v, &flag)); CHECK(flag && (intptr_t)v == 10);
    CHECK(copies == 0 && deletes == 0);

    /* dup runs the copy callbacks (with the old handle); free runs the deletes (with the freed handle) */
    int rounds = 50;
    for (int i = 0; i < rounds; i++) {
        OK(MPI_Type_dup(t, &t2));
        CHECK(copies == 2 * (i + 1) && last_copy_type == t);
        OK(MPI_Type_get_attr(t2, key, &v, &flag)); CHECK(flag && (intptr_t)v == 11);
        OK(MPI_Type_get_attr(t2, knull, &v, &flag)); CHECK(!flag);
        OK(MPI_Type_get_attr(t2, kdup, &v, &flag)); CHECK(flag && (intptr_t)v == 30);
        OK(MPI_Type_get_attr(t2, kskip, &v, &flag)); CHECK(!flag);
        /* the dup is a working type: send it to myself */
        int a[6] = { 1, 0, 2, 0, 3, 0 }, b[6] = { 0 };
        OK(MPI_Sendrecv(a, 1, t2, 0, 0, b, 1, t2, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK(b[0] == 1 && b[2] == 2 && b[4] == 3 && b[1] == 0);
        MPI_Datatype stale = t2;
        OK(MPI_Type_free(&t2)); CHECK(t2 == MPI_DATATYPE_NULL);
        CHECK(deletes == i + 1 && last_deleted == 11 && last_delete_type == stale);
    }
    CHECK(copies == 2 * rounds && deletes == rounds);
    /* the copy of a copy */
    {
        MPI_Datatype t3;
        OK(MPI_Type_dup(t, &t2)); OK(MPI_Type_dup(t2, &t3));
        CHECK(last_copy_type == t2);
        OK(MPI_Type_get_attr(t3, key, &v, &flag)); CHECK(flag && (intptr_t)v == 12);
        OK(MPI_Type_free(&t3)); CHECK(last_deleted == 12);
        OK(MPI_Type_free(&t2)); CHECK(last_deleted == 11);
        copies = deletes = 0;
    }
    /* set replaces (deleting the old value), delete_attr deletes */
    OK(MPI_Type_set_attr(t, key, (void *)(intptr_t)12)); CHECK(deletes == 1 && last_deleted == 10 && last_delete_type == t);
    OK(MPI_Type_get_attr(t, key, &v, &flag)); CHECK(flag && (intptr_t)v == 12);
    OK(MPI_Type_delete_attr(t, key)); CHECK(deletes == 2 && last_deleted == 12);
    OK(MPI_Type_get_attr(t, key, &v, &flag)); CHECK(!flag);
    CHECK(cls(MPI_Type_delete_attr(t, key)) == MPI_ERR_KEYVAL);   /* not set */
    OK(MPI_Type_set_attr(t, key, (void *)(intptr_t)13));
    /* a freed keyval still works on the types that have it; no new attributes */
    OK(MPI_Type_free_keyval(&key)); CHECK(key == MPI_KEYVAL_INVALID);
    /* handles from MPI_Type_get_contents name the same type: freeing one runs no delete callback */
    {
        MPI_Datatype d, inner; int ni, na, nd, comb;
        OK(MPI_Type_dup(t, &d));   /* copies key (13 -> 14), kskip declines */
        CHECK(copies == 2);
        OK(MPI_Type_get_envelope(d, &ni, &na, &nd, &comb)); CHECK(comb == MPI_COMBINER_DUP && nd == 1);
        OK(MPI_Type_get_contents(d, 0, 0, 1, NULL, NULL, &inner));
        OK(MPI_Type_free(&inner)); CHECK(deletes == 2);
        OK(MPI_Type_free(&d)); CHECK(deletes == 3 && last_deleted == 14);
    }
    OK(MPI_Type_free(&t)); CHECK(deletes == 5);   /* 13 (key) and 50 (kskip) */
    OK(MPI_Type_free_keyval(&knull)); OK(MPI_Type_free_keyval(&kdup)); OK(MPI_Type_free_keyval(&kskip));

    /* attributes on a predefined datatype */
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, delete_fn, &key, &extra));
    OK(MPI_Type_set_attr(MPI_INT, key, (void *)(intptr_t)7));
    OK(MPI_Type_get_attr(MPI_INT, key, &v, &flag)); CHECK(flag && (intptr_t)v == 7);
    OK(MPI_Type_delete_attr(MPI_INT, key)); CHECK(deletes == 6 && last_deleted == 7 && last_delete_type == MPI_INT);
    OK(MPI_Type_free_keyval(&key));

    /* a failing delete callback makes MPI_Type_free fail and leaves the type */
    {
        int kf; MPI_Datatype d;
        OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, failing_delete, &kf, NULL));
        OK(MPI_Type_contiguous(2, MPI_INT, &d));
        OK(MPI_Type_set_attr(d, kf, NULL));
        CHECK(cls(MPI_Type_delete_attr(d, kf)) == MPI_ERR_OTHER);
        MPI_Datatype keep = d;
        CHECK(cls(MPI_Type_free(&d)) == MPI_ERR_OTHER);
        int sz; OK(MPI_Type_size(keep, &sz)); CHECK(sz == 2 * (int)sizeof(int));
        OK(MPI_Type_free_keyval(&kf));
    }

    /* bad keyvals */
    {
        int ck; OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
        CHECK(cls(MPI_Type_set_attr(MPI_INT, ck, NULL)) == MPI_ERR_KEYVAL);         /* a communicator keyval */
        CHECK(cls(MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &v, &flag)) == MPI_ERR_KEYVAL);
        CHECK(cls(MPI_Type_free_keyval(&ck)) == MPI_ERR_KEYVAL);
        OK(MPI_Comm_free_keyval(&ck));
        int tk; OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
        CHECK(cls(MPI_Comm_set_attr(MPI_COMM_SELF, tk, NULL)) == MPI_ERR_KEYVAL);    /* a datatype keyval */
        int stale = tk; OK(MPI_Type_free_keyval(&tk));
        CHECK(cls(MPI_Type_set_attr(MPI_INT, stale, NULL)) == MPI_ERR_KEYVAL);
        CHECK(cls(MPI_Type_free_keyval(&stale)) == MPI_ERR_KEYVAL);
        CHECK(cls(MPI_Type_set_attr(MPI_DATATYPE_NULL, stale, NULL)) == MPI_ERR_TYPE);
        CHECK(cls(MPI_Type_get_attr(MPI_INT, stale, NULL, &flag)) != MPI_SUCCESS);
    }

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

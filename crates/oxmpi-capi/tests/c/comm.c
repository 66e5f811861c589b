/* Communicators: dup/split/create/free loops, attributes with copy and delete
 * callbacks across dup and free, groups, intercommunicators (create, merge,
 * a broadcast with MPI_ROOT), comparisons, names, split_type, idup. */
#include "check.h"

static int rank, size;
static int copies = 0, deletes = 0, last_deleted = -1;
static MPI_Comm last_copy_comm = MPI_COMM_NULL;

static int copy_fn(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    copies++; last_copy_comm = old;
    CHECK(*(int *)extra == 99);
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int key, void *val, void *extra) {
    deletes++; last_deleted = (int)(intptr_t)val;
    return MPI_SUCCESS;
}
static int failing_delete(MPI_Comm c, int key, void *val, void *extra) { return MPI_ERR_OTHER; }

static void check_sorted_group(MPI_Group g, const int *want, int n) {
    int sz; OK(MPI_Group_size(g, &sz)); CHECK(sz == n);
    MPI_Group w; OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int idx[16], got[16];
    for (int i = 0; i < n; i++) idx[i] = i;
    OK(MPI_Group_translate_ranks(g, n, idx, w, got));
    for (int i = 0; i < n; i++) CHECK(got[i] == want[i]);
    OK(MPI_Group_free(&w));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_Group world; OK(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* 500 rounds of dup / split / create / free: context ids are given back */
    for (int it = 0; it < 500; it++) {
        MPI_Comm d, s, c; int x, r, sz;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        OK(MPI_Comm_split(d, rank % 2, -rank, &s));
        OK(MPI_Comm_size(s, &sz)); CHECK(sz == (size + 1 - rank % 2) / 2);
        OK(MPI_Comm_rank(s, &r)); CHECK(r == sz - 1 - rank / 2);   /* key -rank reverses */
        OK(MPI_Comm_create(d, world, &c));
        x = 1; OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c)); CHECK(x == size);
        OK(MPI_Comm_free(&c)); CHECK(c == MPI_COMM_NULL);
        OK(MPI_Comm_free(&s));
        OK(MPI_Comm_free(&d)); CHECK(d == MPI_COMM_NULL);
    }
    /* split with MPI_UNDEFINED, create with a subgroup */
    {
        MPI_Comm s, c; MPI_Group even; int range[1][3] = { { 0, size - 1, 2 } };
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &s));
        CHECK((rank == 0) == (s == MPI_COMM_NULL));
        if (s != MPI_COMM_NULL) OK(MPI_Comm_free(&s));
        OK(MPI_Group_range_incl(world, 1, range, &even));
        OK(MPI_Comm_create(MPI_COMM_WORLD, even, &c));
        CHECK((rank % 2 == 0) == (c != MPI_COMM_NULL));
        if (c != MPI_COMM_NULL) { int r; OK(MPI_Comm_rank(c, &r)); CHECK(r == rank / 2); OK(MPI_Comm_free(&c)); }
        OK(MPI_Group_free(&even)); CHECK(even == MPI_GROUP_NULL);
        OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &s));
        int sz; OK(MPI_Comm_size(s, &sz)); CHECK(sz >= 1 && sz <= size);
        OK(MPI_Comm_free(&s));
    }
    /* compare, names, idup, dup_with_info */
    {
        MPI_Comm d, e, s; int res; char name[MPI_MAX_OBJECT_NAME]; int len;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        OK(MPI_Comm_compare(d, d, &res)); CHECK(res == MPI_IDENT);
        OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &res)); CHECK(res == MPI_CONGRUENT);
        OK(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &s));
        OK(MPI_Comm_compare(MPI_COMM_WORLD, s, &res)); CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR));
        OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res)); CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL));
        OK(MPI_Comm_get_name(d, name, &len)); CHECK(len == 0);
        OK(MPI_Comm_set_name(d, "dup of world")); OK(MPI_Comm_get_name(d, name, &len)); CHECK(strcmp(name, "dup of world") == 0);
        OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len)); CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
        MPI_Request rq;
        OK(MPI_Comm_idup(d, &e, &rq)); OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        int x = rank; OK(MPI_Bcast(&x, 1, MPI_INT, 0, e)); CHECK(x == 0);
        OK(MPI_Comm_free(&e));
        MPI_Info info; OK(MPI_Info_create(&info)); OK(MPI_Info_set(info, "hint", "1"));
        OK(MPI_Comm_dup_with_info(d, info, &e)); OK(MPI_Info_free(&info));
        OK(MPI_Comm_compare(d, e, &res)); CHECK(res == MPI_CONGRUENT);
        MPI_Fint f = MPI_Comm_c2f(e); CHECK(MPI_Comm_f2c(f) == e);
        OK(MPI_Comm_free(&e)); OK(MPI_Comm_free(&s)); OK(MPI_Comm_free(&d));
        int inter; OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &inter)); CHECK(!inter);
    }
    /* attributes: copy on dup, delete on free/replace/delete, MPI-1 names too */
    {
        int extra = 99, key, key1, key2, key3, flag; void *v;
        OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra));
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key1, NULL));
        OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
        OK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key3, NULL));
        MPI_Comm d, d2;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        OK(MPI_Comm_set_attr(d, key, (void *)(intptr_t)10));
        OK(MPI_Comm_set_attr(d, key1, (void *)(intptr_t)20));
        OK(MPI_Comm_set_attr(d, key2, (void *)(intptr_t)30));
        OK(MPI_Attr_put(d, key3, (void *)(intptr_t)40));
        int rounds = 100;
        for (int i = 0; i < rounds; i++) {
            OK(MPI_Comm_dup(d, &d2));
            CHECK(last_copy_comm == d);
            OK(MPI_Comm_get_attr(d2, key, &v, &flag)); CHECK(flag && (intptr_t)v == 11);
            OK(MPI_Comm_get_attr(d2, key1, &v, &flag)); CHECK(!flag);
            OK(MPI_Comm_get_attr(d2, key2, &v, &flag)); CHECK(flag && (intptr_t)v == 30);
            OK(MPI_Attr_get(d2, key3, &v, &flag)); CHECK(flag && (intptr_t)v == 40);
            OK(MPI_Comm_free(&d2));
            CHECK(last_deleted == 11);
        }
        CHECK(copies == rounds && deletes == rounds);
        OK(MPI_Comm_set_attr(d, key, (void *)(intptr_t)12));   /* replace: deletes 10 */
        CHECK(deletes == rounds + 1 && last_deleted == 10);
        OK(MPI_Comm_delete_attr(d, key)); CHECK(deletes == rounds + 2 && last_deleted == 12);
        OK(MPI_Comm_get_attr(d, key, &v, &flag)); CHECK(!flag);
        OK(MPI_Comm_set_attr(d, key, (void *)(intptr_t)13));
        OK(MPI_Comm_free_keyval(&key)); CHECK(key == MPI_KEYVAL_INVALID);
        OK(MPI_Comm_free(&d)); CHECK(deletes == rounds + 3 && last_deleted == 13);  /* still called */
        OK(MPI_Comm_free_keyval(&key1)); OK(MPI_Comm_free_keyval(&key2)); OK(MPI_Keyval_free(&key3));
        /* a delete callback that fails makes MPI_Comm_free fail */
        int kf; OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &kf, NULL));
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d)); OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
        OK(MPI_Comm_set_attr(d, kf, NULL));
        int rc = MPI_Comm_delete_attr(d, kf), cls; OK(MPI_Error_class(rc, &cls)); CHECK(cls == MPI_ERR_OTHER);
        OK(MPI_Comm_free_keyval(&kf));
        /* predefined attributes on any communicator */
        int *tag_ub; OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag)); CHECK(flag && *tag_ub >= 32767);
        /* error handler inherited by a dup */
        MPI_Comm d3; MPI_Errhandler eh; OK(MPI_Comm_dup(d, &d3)); OK(MPI_Comm_get_errhandler(d3, &eh)); CHECK(eh == MPI_ERRORS_RETURN);
        OK(MPI_Comm_free(&d3));
        MPI_Comm dd = d; d = MPI_COMM_NULL; (void)dd; /* d keeps a failing attribute: left for MPI_Finalize */
    }
    /* groups */
    {
        MPI_Group g1, g2, u, in, df, e; int res, r;
        int all[16], rev[16];
        for (int i = 0; i < size; i++) { all[i] = i; rev[i] = size - 1 - i; }
        OK(MPI_Group_rank(world, &r)); CHECK(r == rank);
        OK(MPI_Group_incl(world, size, rev, &g1));           /* reversed world */
        OK(MPI_Group_compare(world, g1, &res)); CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR));
        OK(MPI_Group_rank(g1, &r)); CHECK(r == size - 1 - rank);
        check_sorted_group(g1, rev, size);
        /* range_incl with a negative stride: size-1 down to 0 by -2 */
        int tr[1][3] = { { size - 1, 0, -2 } }, want[16], nw = 0;
        for (int i = size - 1; i >= 0; i -= 2) want[nw++] = i;
        OK(MPI_Group_range_incl(world, 1, tr, &g2));
        check_sorted_group(g2, want, nw);
        /* union keeps g1's order then the new members of the second group */
        int firsttwo[2] = { 0, 1 };
        MPI_Group small; OK(MPI_Group_incl(world, size > 1 ? 2 : 1, firsttwo, &small));
        OK(MPI_Group_union(g2, small, &u));
        { int wu[16], nu = 0; for (int i = 0; i < nw; i++) wu[nu++] = want[i];
          for (int i = 0; i < (size > 1 ? 2 : 1); i++) { int seen = 0; for (int j = 0; j < nw; j++) seen |= want[j] == i; if (!seen) wu[nu++] = i; }
          check_sorted_group(u, wu, nu); }
        /* intersection and difference keep the first group's order */
        OK(MPI_Group_intersection(g1, g2, &in));
        { int wi[16], ni = 0; for (int i = 0; i < size; i++) for (int j = 0; j < nw; j++) if (rev[i] == want[j]) wi[ni++] = rev[i]; check_sorted_group(in, wi, ni); }
        OK(MPI_Group_difference(g1, g2, &df));
        { int wd[16], nd = 0; for (int i = 0; i < size; i++) { int seen = 0; for (int j = 0; j < nw; j++) seen |= rev[i] == want[j]; if (!seen) wd[nd++] = rev[i]; } check_sorted_group(df, wd, nd); }
        /* translate_ranks with MPI_PROC_NULL; a rank not in the target is MPI_UNDEFINED */
        int from[3] = { MPI_PROC_NULL, 0, size - 1 }, to[3];
        OK(MPI_Group_translate_ranks(g1, 3, from, g2, to));
        CHECK(to[0] == MPI_PROC_NULL);
        /* g1 rank 0 is world size-1 = g2 rank 0; g1 rank size-1 is world 0, in g2 iff (size-1) even */
        CHECK(to[1] == 0);
        CHECK(to[2] == ((size - 1) % 2 == 0 ? nw - 1 : MPI_UNDEFINED));
        /* excl, range_excl, empty results */
        OK(MPI_Group_excl(world, size, all, &e)); CHECK(e == MPI_GROUP_EMPTY);
        int sz; OK(MPI_Group_size(e, &sz)); CHECK(sz == 0);
        OK(MPI_Group_rank(e, &r)); CHECK(r == MPI_UNDEFINED);
        OK(MPI_Group_free(&e));
        int ex[1][3] = { { 0, size - 1, 1 } };
        OK(MPI_Group_range_excl(world, 1, ex, &e)); OK(MPI_Group_compare(e, MPI_GROUP_EMPTY, &res)); CHECK(res == MPI_IDENT);
        OK(MPI_Group_free(&e));
        OK(MPI_Group_free(&g1)); OK(MPI_Group_free(&g2)); OK(MPI_Group_free(&u)); OK(MPI_Group_free(&in)); OK(MPI_Group_free(&df)); OK(MPI_Group_free(&small));
        /* 500 rounds of group ops: handles are given back */
        for (int it = 0; it < 500; it++) { MPI_Group a; OK(MPI_Group_incl(world, 1, all, &a)); OK(MPI_Group_free(&a)); }
    }
    /* intercommunicators: evens and odds */
    if (size >= 2) {
        MPI_Comm half, inter, merged; int color = rank % 2, hr, rsz, flag, res;
        OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half));
        OK(MPI_Comm_rank(half, &hr));
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 77, &inter));
        OK(MPI_Comm_test_inter(inter, &flag)); CHECK(flag);
        OK(MPI_Comm_remote_size(inter, &rsz)); CHECK(rsz == (color == 0 ? size / 2 : (size + 1) / 2));
        MPI_Group rg; OK(MPI_Comm_remote_group(inter, &rg));
        { int sz; OK(MPI_Group_size(rg, &sz)); CHECK(sz == rsz); OK(MPI_Group_free(&rg)); }
        /* bcast from rank 0 of the even group to the odd group */
        int x = -1;
        if (color == 0) { x = hr == 0 ? 4242 : -1; OK(MPI_Bcast(&x, 1, MPI_INT, hr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter)); if (hr != 0) CHECK(x == -1); }
        else { OK(MPI_Bcast(&x, 1, MPI_INT, 0, inter)); CHECK(x == 4242); }
        /* allreduce: each group gets the other group's sum */
        int v = rank, s = 0, want = 0;
        OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, inter));
        for (int i = 0; i < size; i++) if (i % 2 != color) want += i;
        CHECK(s == want);
        /* gather of the odds at the even root, counts sized by the remote group */
        int got[16];
        if (color == 0) { OK(MPI_Gather(NULL, 0, MPI_INT, got, 1, MPI_INT, hr == 0 ? MPI_ROOT : MPI_PROC_NULL, inter));
                          if (hr == 0) for (int i = 0; i < rsz; i++) CHECK(got[i] == 2 * i + 1); }
        else OK(MPI_Gather(&v, 1, MPI_INT, NULL, 0, MPI_INT, 0, inter));
        OK(MPI_Intercomm_merge(inter, color, &merged));
        int mr; OK(MPI_Comm_rank(merged, &mr));
        CHECK(mr == (color == 0 ? hr : (size + 1) / 2 + hr));
        OK(MPI_Comm_compare(inter, merged, &res)); CHECK(res == MPI_UNEQUAL);
        OK(MPI_Comm_free(&merged)); OK(MPI_Comm_free(&inter)); OK(MPI_Comm_free(&half));
    }
    OK(MPI_Group_free(&world));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) printf("all checks passed on %d ranks\n", size);
    OK(MPI_Finalize());
    return 0;
}

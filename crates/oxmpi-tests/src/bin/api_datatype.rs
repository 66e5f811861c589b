//! Derived datatypes through the `oxmpi` API: `#[derive(Equivalence)]` on structs with
//! padding, nested structs and array fields (point-to-point, immediate, broadcast,
//! gather), a `UserDatatype::vector` column of a 100x150 matrix sent and gathered,
//! `View`/`MutView`, the other constructors. Runs on any size.

use oxmpi::datatype::{MutView, UserDatatype, View};
use oxmpi::request::scope;
use oxmpi::traits::*;
use oxmpi_tests::check;

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Inner {
    flag: u8,
    // 7 bytes of padding before `x`
    x: f64,
    pair: [i16; 3],
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Outer {
    id: i32,
    inner: Inner,
    tail: [Inner; 2],
    c: u8,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Tuple(u16, f32, [u8; 5]);

fn make(r: i32, k: i32) -> Outer {
    let inner = |s: i32| Inner {
        flag: (r + s) as u8,
        x: r as f64 * 1.5 + s as f64,
        pair: [r as i16, s as i16, -(s as i16)],
    };
    Outer {
        id: r * 100 + k,
        inner: inner(k),
        tail: [inner(k + 1), inner(k + 2)],
        c: 7,
    }
}

const ROWS: usize = 100;
const COLS: usize = 150;

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());

    // Datatype shape.
    let dt = Inner::equivalent_datatype();
    check!(me, dt.size() == 1 + 8 + 6, "Inner size {}", dt.size());
    check!(
        me,
        dt.extent() as usize == std::mem::size_of::<Inner>(),
        "Inner extent {}",
        dt.extent()
    );
    check!(me, !dt.is_contiguous(), "Inner has padding");
    check!(
        me,
        Outer::equivalent_datatype().extent() as usize == std::mem::size_of::<Outer>(),
        "Outer extent"
    );
    check!(
        me,
        Tuple::equivalent_datatype().size() == 2 + 4 + 5,
        "Tuple size"
    );

    // 1. Derived struct point-to-point in a ring (blocking + immediate, arrays of them).
    let next = world.process_at_rank((me + 1) % size);
    let prev = world.process_at_rank((me + size - 1) % size);
    let out: Vec<Outer> = (0..5).map(|k| make(me, k)).collect();
    let mut inp = vec![Outer::default(); 5];
    scope(|s| {
        let sreq = next.immediate_send(s, &out[..]);
        let st = prev.receive_into(&mut inp[..]);
        check!(me, st.source_rank() == prev.rank(), "status {st:?}");
        sreq.wait();
    });
    let pr = prev.rank();
    check!(
        me,
        inp == (0..5).map(|k| make(pr, k)).collect::<Vec<_>>(),
        "ring structs {inp:?}"
    );
    // single value, receive() path (value receive of a non-contiguous type) and immediate receive
    let t = Tuple(me as u16, me as f32 * 0.5, [me as u8; 5]);
    let mut got = Tuple::default();
    scope(|s| {
        let r = prev.immediate_receive_into(s, &mut got);
        next.send(&t);
        r.wait();
    });
    check!(
        me,
        got == Tuple(pr as u16, pr as f32 * 0.5, [pr as u8; 5]),
        "tuple {got:?}"
    );

    // 2. Broadcast of derived structs from every root.
    for root in 0..size {
        let mut v = if me == root {
            [make(root, 9), make(root, 10)]
        } else {
            [Outer::default(); 2]
        };
        world.process_at_rank(root).broadcast_into(&mut v[..]);
        check!(
            me,
            v == [make(root, 9), make(root, 10)],
            "bcast from {root}: {v:?}"
        );
    }

    // 3. Gather of derived structs at rank 0.
    let mine = make(me, 1);
    if me == 0 {
        let mut all = vec![Outer::default(); size as usize];
        world.this_process().gather_into_root(&mine, &mut all[..]);
        for r in 0..size {
            check!(me, all[r as usize] == make(r, 1), "gathered {r}");
        }
    } else {
        world.process_at_rank(0).gather_into(&mine);
    }

    // 4. Column of a 100x150 i32 matrix as a vector type: each rank sends its column
    // `me` to rank 0, which gathers them as contiguous rows.
    let column = UserDatatype::vector(ROWS as i32, 1, COLS as i32, &i32::equivalent_datatype());
    check!(me, column.size() == ROWS * 4, "column size");
    let matrix: Vec<i32> = (0..ROWS * COLS).map(|i| i as i32 + 1000 * me).collect();
    assert!((me as usize) < COLS, "one matrix column per rank");
    let col = View::checked(&matrix[me as usize..], 1, &column).unwrap();
    if me == 0 {
        let mut rows = vec![0i32; ROWS * size as usize];
        world.this_process().gather_into_root(&col, &mut rows[..]);
        for r in 0..size as usize {
            for i in 0..ROWS {
                let want = (i * COLS + r) as i32 + 1000 * r as i32;
                check!(
                    me,
                    rows[r * ROWS + i] == want,
                    "column of {r} row {i}: {}",
                    rows[r * ROWS + i]
                );
            }
        }
    } else {
        world.process_at_rank(0).gather_into(&col);
    }

    // 5. Column point-to-point into a column (MutView, typed receive on both sides).
    let mut target = vec![-1i32; ROWS * COLS];
    {
        let c2 = (me as usize + 3) % COLS;
        let mut mv = MutView::checked(&mut target[c2..], 1, &column).unwrap();
        scope(|s| {
            let r = prev.immediate_receive_into(s, &mut mv);
            next.send(&col);
            r.wait();
        });
        for i in 0..ROWS {
            for j in 0..COLS {
                let v = target[i * COLS + j];
                let want = if j == c2 {
                    (i * COLS + pr as usize) as i32 + 1000 * pr
                } else {
                    -1
                };
                check!(me, v == want, "column receive at ({i},{j}): {v}");
            }
        }
    }

    // 6. Other constructors: indexed, heterogeneous_*, structured, contiguous, resized, dup.
    let i32t = i32::equivalent_datatype();
    let idx = UserDatatype::indexed(&[2, 1], &[0, 5], &i32t);
    check!(
        me,
        idx.size() == 12 && idx.extent() == 24,
        "indexed {} {}",
        idx.size(),
        idx.extent()
    );
    let hidx = UserDatatype::heterogeneous_indexed(&[1, 1], &[0, 12], &i32t);
    check!(me, hidx.size() == 8 && hidx.extent() == 16, "hindexed");
    let blk = UserDatatype::indexed_blocks(2, &[0, 4], &i32t);
    check!(me, blk.size() == 16 && blk.extent() == 24, "indexed_blocks");
    let hblk = UserDatatype::heterogeneous_indexed_blocks(1, &[0, 8], &i32t);
    check!(
        me,
        hblk.size() == 8 && hblk.extent() == 12,
        "hindexed_blocks"
    );
    let hv = UserDatatype::heterogeneous_vector(3, 1, 8, &i32t);
    check!(me, hv.size() == 12 && hv.extent() == 20, "hvector");
    let st = UserDatatype::structured(&[1, 2], &[0, 8], &[f64::equivalent_datatype(), i32t]);
    check!(
        me,
        st.size() == 16 && st.extent() == 16,
        "struct {} {}",
        st.size(),
        st.extent()
    );
    let cont = UserDatatype::contiguous(4, &idx);
    check!(me, cont.size() == 48, "contiguous");
    let rs = UserDatatype::resized(&i32t, 0, 8);
    check!(me, rs.extent() == 8, "resized");
    let d = UserDatatype::dup(&column);
    check!(me, d.size() == column.size(), "dup");
    let e = UserDatatype::try_vector(-1, 1, 1, &i32t).unwrap_err();
    check!(
        me,
        e.class == oxmpi::ErrorClass::Count,
        "negative count {e}"
    );
    // indexed exchange: every other element
    let ev = UserDatatype::vector(8, 1, 2, &i32t);
    let src: Vec<i32> = (0..16).map(|i| i + me * 100).collect();
    let mut dst = [0i32; 8];
    scope(|s| {
        let r = prev.immediate_receive_into(s, &mut dst[..]);
        // One `ev` (8 ints, 2 apart) spans 15 ints, within `src`'s 16.
        next.send(&View::checked(&src[..], 1, &ev).unwrap());
        r.wait();
    });
    check!(
        me,
        dst.iter()
            .enumerate()
            .all(|(i, &v)| v == 2 * i as i32 + pr * 100),
        "strided {dst:?}"
    );

    // 2. With OXMPI_CHECK_SIGNATURES=1: derived structs are checked against the
    // receive's type: fewer elements than the buffer pass, another struct is
    // MPI_ERR_TYPE (nothing delivered), the sender completes either way.
    if std::env::var("OXMPI_CHECK_SIGNATURES").is_ok_and(|v| v == "1") {
        let two = [make(me, 1).inner, make(me, 2).inner];
        let tuple = Tuple(9, 1.5, [3; 5]);
        let mut five = [Inner::default(); 5];
        let mut other = [Inner {
            flag: 0xEE,
            ..Inner::default()
        }; 1];
        scope(|s| {
            let a = next.immediate_send_with_tag(s, &two[..], 41);
            let b = next.immediate_send_with_tag(s, &tuple, 42);
            let st = prev.try_receive_into_with_tag(&mut five[..], 41).unwrap();
            check!(
                me,
                st.count(Inner::equivalent_datatype()) == 2
                    && five[..2] == [make(pr, 1).inner, make(pr, 2).inner],
                "prefix receive {st:?}"
            );
            let e = prev
                .try_receive_into_with_tag(&mut other[..], 42)
                .unwrap_err();
            check!(
                me,
                e.class == oxmpi::ErrorClass::Type && e.message.contains("type signature mismatch"),
                "Tuple into Inner: {e}"
            );
            check!(
                me,
                other[0].flag == 0xEE,
                "data delivered despite the mismatch"
            );
            a.wait();
            b.wait();
        });
    }

    world.barrier();
    println!("api_datatype: rank {me} of {size} ok");
}

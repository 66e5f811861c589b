//! `oxmpi::ffi` with the feature `ffi`: raw C calls of the standard ABI, linked into the
//! Rust program (oxmpi's own C interface, no libmpi.so), mixed with the safe API on the
//! same engine; an `UnsafeUserOperation` receives the ABI handle of the elements' type.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use oxmpi::collective::UnsafeUserOperation;
use oxmpi::datatype::{MutView, UserDatatype, View};
use oxmpi::ffi::*;
use oxmpi::raw::{AsRaw, FromRaw};
use oxmpi::topology::SimpleCommunicator;
use oxmpi::traits::*;
use oxmpi_tests::check;

static SEEN_TYPE: AtomicUsize = AtomicUsize::new(usize::MAX);

unsafe extern "C" fn add(
    inv: *mut c_void,
    io: *mut c_void,
    len: *mut c_int,
    dt: *mut MPI_Datatype,
) {
    // SAFETY: the engine passes `*len` elements of the datatype at both pointers, and a valid datatype pointer.
    unsafe {
        SEEN_TYPE.store(*dt, Ordering::Relaxed);
        let x = std::slice::from_raw_parts(inv as *const i32, *len as usize);
        let y = std::slice::from_raw_parts_mut(io as *mut i32, *len as usize);
        for (a, b) in x.iter().zip(y) {
            *b += a;
        }
    }
}

static SEEN_PAIR_TYPE: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Sums pairs of i32 (a derived datatype of two ints).
unsafe extern "C" fn add_pairs(
    inv: *mut c_void,
    io: *mut c_void,
    len: *mut c_int,
    dt: *mut MPI_Datatype,
) {
    // SAFETY: `*len` pairs of i32 at both pointers; a valid datatype pointer.
    unsafe {
        SEEN_PAIR_TYPE.store(*dt, Ordering::Relaxed);
        let n = 2 * *len as usize;
        let x = std::slice::from_raw_parts(inv as *const i32, n);
        let y = std::slice::from_raw_parts_mut(io as *mut i32, n);
        for (a, b) in x.iter().zip(y) {
            *b += a;
        }
    }
}

fn main() {
    let universe = oxmpi::initialize().unwrap();
    let world = universe.world();
    let (me, size) = (world.rank(), world.size());

    let (mut r, mut n, mut flag) = (-1, -1, 0);
    // SAFETY: valid out-pointers; MPI is initialized (by the safe API, same engine).
    unsafe {
        check!(
            me,
            MPI_Initialized(&mut flag) == MPI_SUCCESS && flag == 1,
            "MPI_Initialized {flag}"
        );
        check!(
            me,
            MPI_Comm_rank(MPI_COMM_WORLD, &mut r) == MPI_SUCCESS,
            "MPI_Comm_rank"
        );
        check!(
            me,
            MPI_Comm_size(MPI_COMM_WORLD, &mut n) == MPI_SUCCESS,
            "MPI_Comm_size"
        );
    }
    check!(
        me,
        r == me && n == size,
        "raw rank/size {r}/{n}, safe {me}/{size}"
    );

    // A raw collective.
    let x: i32 = me + 1;
    let mut y: i32 = 0;
    // SAFETY: one i32 each way.
    let rc = unsafe {
        MPI_Allreduce(
            &x as *const i32 as *const c_void,
            &mut y as *mut i32 as *mut c_void,
            1,
            MPI_INT32_T,
            MPI_SUM,
            MPI_COMM_WORLD,
        )
    };
    check!(
        me,
        rc == MPI_SUCCESS && y == size * (size + 1) / 2,
        "raw allreduce {rc} {y}"
    );

    // Raw send, safe receive (and the other way round) around the ring.
    let next = (me + 1) % size;
    let prev = (me + size - 1) % size;
    let out = [me * 10, me * 10 + 1];
    let mut req: MPI_Request = 0;
    // SAFETY: `out` outlives the request, completed by MPI_Wait below.
    unsafe {
        check!(
            me,
            MPI_Isend(
                out.as_ptr() as *const c_void,
                2,
                MPI_INT32_T,
                next,
                5,
                MPI_COMM_WORLD,
                &mut req
            ) == MPI_SUCCESS,
            "MPI_Isend"
        );
    }
    let (got, st) = world.process_at_rank(prev).receive_vec_with_tag::<i32>(5);
    check!(
        me,
        got == [prev * 10, prev * 10 + 1] && st.source_rank() == prev,
        "safe receive of a raw send {got:?}"
    );
    let mut status = MPI_Status::default();
    // SAFETY: a live request and a status to fill.
    unsafe {
        check!(
            me,
            MPI_Wait(&mut req, &mut status) == MPI_SUCCESS,
            "MPI_Wait"
        );
    }

    // An unsafe user operation sees MPI_INT32_T's handle for i32 elements.
    // SAFETY: `add` reads and writes `*len` i32s, as the operation is used below.
    let op = unsafe { UnsafeUserOperation::commutative(add) };
    let mut z = 0;
    world.all_reduce_into(&x, &mut z, &op);
    check!(me, z == size * (size + 1) / 2, "unsafe op sum {z}");
    // Which ranks apply the function depends on the algorithm: each rank that did saw
    // the handle, and some rank did.
    let seen = SEEN_TYPE.load(Ordering::Relaxed);
    let called = (seen != usize::MAX) as i32;
    check!(
        me,
        called == 0 || seen == MPI_INT32_T,
        "user function got datatype handle {seen:#x}, want MPI_INT32_T {MPI_INT32_T:#x}"
    );
    let mut callers = 0;
    world.all_reduce_into(
        &called,
        &mut callers,
        oxmpi::collective::SystemOperation::sum(),
    );
    check!(
        me,
        size == 1 || callers >= 1,
        "no rank called the user function"
    );

    // Raw handles of the safe API's objects (oxmpi::raw).
    check!(
        me,
        world.as_raw() == MPI_COMM_WORLD,
        "world handle {:#x}",
        world.as_raw()
    );
    check!(
        me,
        i32::equivalent_datatype().as_raw() == MPI_INT32_T,
        "i32 handle"
    );
    let dup = world.duplicate();
    let h = dup.as_raw();
    check!(
        me,
        h != MPI_COMM_WORLD && h == dup.as_raw(),
        "dup handle {h:#x} stable"
    );
    // SAFETY: `h` names the live duplicate.
    let back = unsafe { SimpleCommunicator::from_raw(h) };
    check!(me, back.size() == size && back.rank() == me, "from_raw");
    // A derived datatype's handle in a raw send; the safe API receives it through a
    // view of the same type.
    let column = UserDatatype::vector(3, 1, 2, &i32::equivalent_datatype());
    let src = [me * 10, -1, me * 10 + 1, -1, me * 10 + 2];
    let mut req: MPI_Request = 0;
    // SAFETY: `src` holds one element of the vector type and outlives the request.
    unsafe {
        check!(
            me,
            MPI_Isend(
                src.as_ptr() as *const c_void,
                1,
                column.as_raw(),
                next,
                6,
                dup.as_raw(),
                &mut req
            ) == MPI_SUCCESS,
            "raw send of a vector type"
        );
    }
    let mut dst = [-7i32; 5];
    {
        // SAFETY: one `column` (3 ints, stride 2) spans 5 ints, exactly `dst`.
        let mut mv = unsafe { MutView::with_count_and_datatype(&mut dst[..], 1, &column) };
        dup.process_at_rank(prev).receive_into_with_tag(&mut mv, 6);
    }
    check!(
        me,
        dst == [prev * 10, -7, prev * 10 + 1, -7, prev * 10 + 2],
        "column via raw handle {dst:?}"
    );
    // SAFETY: the live request.
    unsafe {
        check!(
            me,
            MPI_Wait(&mut req, &mut status) == MPI_SUCCESS,
            "MPI_Wait"
        );
    }
    // A user function over a derived datatype gets that datatype's handle.
    let pair = UserDatatype::contiguous(2, &i32::equivalent_datatype());
    let pv = [me, 1];
    let mut sum = [0i32; 2];
    // SAFETY: `add_pairs` reads and writes `*len` pairs of i32, as used here.
    let op = unsafe { UnsafeUserOperation::commutative(add_pairs) };
    {
        // SAFETY: one `pair` is two i32, exactly `pv`.
        let v = unsafe { View::with_count_and_datatype(&pv[..], 1, &pair) };
        // SAFETY: one `pair` is two i32, exactly `sum`.
        let mut mv = unsafe { MutView::with_count_and_datatype(&mut sum[..], 1, &pair) };
        world.all_reduce_into(&v, &mut mv, &op);
    }
    check!(
        me,
        sum == [size * (size - 1) / 2, size],
        "pair sums {sum:?}"
    );
    let seen = SEEN_PAIR_TYPE.load(Ordering::Relaxed);
    check!(
        me,
        seen == usize::MAX || seen == pair.as_raw(),
        "user function got {seen:#x}, want the pair type's handle {:#x}",
        pair.as_raw()
    );

    world.barrier();
    println!("api_ffi: rank {me} of {size} ok");
}

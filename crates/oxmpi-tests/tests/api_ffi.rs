//! `oxmpi::ffi` (feature `ffi`): raw standard-ABI calls mixed with the safe API, on 1-3 ranks.
mod common;

#[test]
fn raw_ffi_calls_mix_with_the_safe_api() {
    for n in 1..=3 {
        let run = common::run(n, env!("CARGO_BIN_EXE_api_ffi"), &[]);
        run.assert_ok();
        let out = run.stdout();
        for r in 0..n {
            assert!(
                out.contains(&format!("api_ffi: rank {r} of {n} ok")),
                "rank {r}:\n{out}\n{}",
                run.stderr()
            );
        }
    }
}

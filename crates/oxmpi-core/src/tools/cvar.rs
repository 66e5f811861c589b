//! Control variables' values: reading oxmpi's settings, and changing those
//! that can change while the job runs (the eager limit, the collective
//! algorithm selections).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;

use super::registry::{algorithm_choices, registry, FlagRule, Setting};
use super::{engine, ToolError, ToolResult};

/// The eager limit set through MPI_T before `MPI_Init` (-1: none).
static EAGER_OVERRIDE: AtomicI64 = AtomicI64::new(-1);

/// The eager limit of a job with peers on other hosts (or before the engine exists).
pub(crate) const DEFAULT_EAGER_LIMIT: usize = 64 * 1024;

/// The eager limit of a job whose ranks all share one host: above it the receiver's
/// single copy across processes (CMA) beats the two copies through the ring.
/// Measured with `osu_bw`/`osu_latency` through the C ABI (bench/PROFILE.md, bw18,
/// best of 3, SCHED_RR): 8 KiB eager 14.6 vs single copy 10.6 GB/s (eager wins below);
/// 16 KiB eager 16.1 vs 15.1 GB/s but 2.83 vs 1.43 us (MPICH 12.1 GB/s, 1.71 us: the
/// single copy beats it on both); 32 KiB 13.2 vs 17.2 GB/s and 4.4 vs 2.1 us; 64 KiB
/// 12.0 vs 17.5 GB/s and 6.8 vs 3.1 us. 16 KiB since med27: a send that answers its
/// peer (a ping-pong) is pulled by the single copy anyway from 4 KiB
/// (`engine::SHM_PULL_MIN`), so the limit only decides windows of sends, where eager
/// 16 KiB wins (osu_bw 14.6-17.1 vs 12.8-15.2 GB/s, MPICH 10.5-11.0).
pub(crate) const SHM_EAGER_LIMIT: usize = 16 * 1024;

/// The eager limit the engine starts with: MPI_T's, else `OXMPI_EAGER_LIMIT`, else
/// `default` (the engine's choice for its paths).
pub(crate) fn initial_eager_limit(default: usize) -> usize {
    let o = EAGER_OVERRIDE.load(Ordering::Relaxed);
    if o >= 0 {
        return o as usize;
    }
    std::env::var("OXMPI_EAGER_LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether any collective algorithm was chosen through MPI_T (checked with one
/// relaxed load per collective before looking at [`ALGORITHM_OVERRIDES`]).
pub(crate) static ANY_ALGORITHM_OVERRIDE: AtomicBool = AtomicBool::new(false);
/// Per operation of [`crate::coll::FORCEABLE`]: `Some(None)` = "auto" chosen
/// through MPI_T, `Some(Some(name))` = an algorithm chosen through MPI_T.
pub(crate) static ALGORITHM_OVERRIDES: Mutex<Vec<Option<Option<&'static str>>>> =
    Mutex::new(Vec::new());

/// The algorithm MPI_T chose for collective `op`, if it chose one:
/// `Some(None)` means "auto".
/// Inlined: every collective asks, and the answer is almost always "none set"
/// (one relaxed load); the table is read out of line.
#[inline]
pub(crate) fn algorithm_override(op: &str) -> Option<Option<&'static str>> {
    if !ANY_ALGORITHM_OVERRIDE.load(Ordering::Relaxed) {
        return None;
    }
    algorithm_override_set(op)
}

#[inline(never)]
fn algorithm_override_set(op: &str) -> Option<Option<&'static str>> {
    let i = crate::coll::FORCEABLE.iter().position(|&k| k == op)?;
    ALGORITHM_OVERRIDES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(i)
        .copied()
        .flatten()
}

/// A control variable's value.
#[derive(Clone, Debug, PartialEq)]
pub enum CvarValue {
    Int(i32),
    Double(f64),
    Str(String),
}

fn env_flag(var: &str, rule: FlagRule) -> bool {
    let v = std::env::var(var);
    match rule {
        FlagRule::SetNonZero => v.is_ok_and(|v| !v.is_empty() && v != "0"),
        FlagRule::One => v.is_ok_and(|v| v == "1"),
        FlagRule::OnUnlessZero => v.map_or(true, |v| v != "0"),
        FlagRule::Set => v.is_ok(),
    }
}

/// Reads control variable `i`.
pub fn cvar_read(i: usize) -> ToolResult<CvarValue> {
    let c = registry().cvar(i)?;
    Ok(match c.setting {
        Setting::EagerLimit => {
            let v = match engine() {
                Some(e) => e.with_state(|st| st.eager_limit),
                None => initial_eager_limit(DEFAULT_EAGER_LIMIT),
            };
            CvarValue::Int(v.min(i32::MAX as usize) as i32)
        }
        Setting::Algorithm(k) => {
            let op = crate::coll::FORCEABLE[k];
            let chosen: Option<String> = match algorithm_override(op) {
                Some(o) => o.map(str::to_string),
                None => crate::coll::env_algorithm(op),
            };
            let choices = algorithm_choices(op);
            let v = chosen
                .and_then(|a| choices.iter().position(|&c| c == a))
                .map_or(0, |p| p as i32 + 1);
            CvarValue::Int(v)
        }
        Setting::EnvFlag(var, rule) => CvarValue::Int(env_flag(var, rule) as i32),
        Setting::EnvNumber(var, default) => CvarValue::Double(
            std::env::var(var)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default),
        ),
        Setting::HangAfter => CvarValue::Double(crate::diag::hang_after().as_secs_f64()),
        Setting::SharedCopy => CvarValue::Int(engine().map_or_else(
            || env_flag("OXMPI_SHARED_COPY", FlagRule::OnUnlessZero),
            |e| e.with_state(|st| st.shared_copy),
        ) as i32),
        Setting::Spin => CvarValue::Int(
            engine().map_or_else(|| env_u32("OXMPI_SPIN", 20_000), |e| e.spin) as i32,
        ),
        Setting::Yields => CvarValue::Int(
            engine().map_or_else(|| env_u32("OXMPI_YIELDS", 10), |e| e.yields) as i32,
        ),
        Setting::Transport => CvarValue::Str(
            if std::env::var("OXMPI_TRANSPORT").is_ok_and(|v| v == "tcp") {
                "tcp"
            } else {
                "auto"
            }
            .into(),
        ),
    })
}

fn env_u32(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes control variable `i`.
pub fn cvar_write(i: usize, v: CvarValue) -> ToolResult<()> {
    let c = registry().cvar(i)?;
    match (c.setting, v) {
        (Setting::EagerLimit, CvarValue::Int(n)) => {
            if n < 0 {
                return Err(ToolError::Invalid(format!(
                    "OXMPI_EAGER_LIMIT: {n} is negative"
                )));
            }
            match engine() {
                Some(e) => e.with_state(|st| st.eager_limit = n as usize),
                None => EAGER_OVERRIDE.store(n as i64, Ordering::Relaxed),
            }
            Ok(())
        }
        (Setting::Algorithm(k), CvarValue::Int(n)) => {
            let op = crate::coll::FORCEABLE[k];
            let choices = algorithm_choices(op);
            let chosen = match n {
                0 => None,
                n if n >= 1 && (n as usize) <= choices.len() => Some(choices[n as usize - 1]),
                _ => {
                    return Err(ToolError::Invalid(format!(
                        "{}: {n} is not a value of enumeration oxmpi_{op}_algorithms (0..={})",
                        c.name,
                        choices.len()
                    )))
                }
            };
            let mut o = ALGORITHM_OVERRIDES
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if o.len() < crate::coll::FORCEABLE.len() {
                o.resize(crate::coll::FORCEABLE.len(), None);
            }
            o[k] = Some(chosen);
            ANY_ALGORITHM_OVERRIDE.store(true, Ordering::Relaxed);
            Ok(())
        }
        (Setting::EagerLimit | Setting::Algorithm(_), _) => Err(ToolError::Invalid(format!(
            "{}: the value must be an int",
            c.name
        ))),
        _ => Err(ToolError::CvarSetNever),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_cvar_round_trips() {
        let r = registry();
        let i = r.cvar_index("OXMPI_SCAN_ALGORITHM").unwrap();
        cvar_write(i, CvarValue::Int(2)).unwrap();
        assert_eq!(cvar_read(i).unwrap(), CvarValue::Int(2));
        assert_eq!(algorithm_override("scan"), Some(Some("linear")));
        assert!(matches!(
            cvar_write(i, CvarValue::Int(99)),
            Err(ToolError::Invalid(_))
        ));
        cvar_write(i, CvarValue::Int(0)).unwrap();
        assert_eq!(algorithm_override("scan"), Some(None));
        let ro = r.cvar_index("OXMPI_CHECK").unwrap();
        assert_eq!(
            cvar_write(ro, CvarValue::Int(1)),
            Err(ToolError::CvarSetNever)
        );
    }
}

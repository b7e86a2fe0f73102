//! The delay experiment's switch: a known number of nanoseconds spent in every hold of one
//! named lock, just before its release (inside its critical section), or, for the control,
//! just after it (outside any lock).
//!
//! Why: a lock table names the busiest lock and its ceiling, but a busy lock is not proof
//! that it limits. Where a lock limits, throughput answers a longer hold as the ceiling
//! says (about hold / (hold + added)); where it does not, or for the same delay spent
//! outside the lock, throughput answers only as much as the extra CPU time costs. Cells
//! with and without the delay, measured as pairs, test that prediction (Coz's virtual
//! speed-up, run the other way: slowing the suspect is what a process can do for real).
//!
//! Process-wide and set once, before the runner starts ([`set`]), by name: the runner
//! resolves the name against the workload's [`super::LockSet`] ([`resolve`]). Only locks
//! taken through [`crate::OpCtx::lock`] (a guard, [`super::Held`]) are delayed; a permit
//! or lease reported with `acquired` is not. Not here: choosing the lock or the amounts,
//! or judging the response (`lab`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{LockId, LockSet};

/// Where the delay is spent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Inside the critical section, just before the release: the hold grows.
    Inside,
    /// Just after the release: the same CPU time, no lock held (the control).
    Outside,
}

/// The key a cell of the delay experiment carries among its parameters (`lab`'s pairs
/// and the tests' measured pairs turn it into [`set`] rather than a hot-path parameter),
/// its value [`Delay::text`].
pub const PARAM: &str = "lock_delay";

/// A delay asked for by lock name, before the workload's ids are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delay {
    /// The lock's name, as the hot path's lock table gives it.
    pub lock: String,
    /// Nanoseconds added per hold.
    pub ns: u64,
    /// Where they are spent.
    pub place: Place,
}

impl Delay {
    /// `NAME=NS`, or `NAME=NS:outside`: what [`Delay::parse`] reads.
    pub fn text(&self) -> String {
        match self.place {
            Place::Inside => format!("{}={}", self.lock, self.ns),
            Place::Outside => format!("{}={}:outside", self.lock, self.ns),
        }
    }

    /// Parses `NAME=NS` (inside) or `NAME=NS:outside`, e.g. `entry cache=200`.
    pub fn parse(text: &str) -> Result<Delay, String> {
        let accepted = "expected NAME=NS or NAME=NS:outside (a lock the lock table names, nanoseconds per hold from 1 to 10000000)";
        let (lock, rest) = text
            .rsplit_once('=')
            .ok_or_else(|| format!("{text:?}: {accepted}"))?;
        let (ns, place) = match rest.split_once(':') {
            None => (rest, Place::Inside),
            Some((ns, "outside")) => (ns, Place::Outside),
            Some((ns, "inside")) => (ns, Place::Inside),
            Some(_) => return Err(format!("{text:?}: {accepted}")),
        };
        match ns.trim().parse::<u64>() {
            Ok(ns) if (1..=10_000_000).contains(&ns) && !lock.trim().is_empty() => Ok(Delay {
                lock: lock.trim().to_owned(),
                ns,
                place,
            }),
            _ => Err(format!("{text:?}: {accepted}")),
        }
    }
}

/// The asked delay, kept until the runner resolves it.
static ASKED: Mutex<Option<Delay>> = Mutex::new(None);
/// Nanoseconds per hold of the resolved lock; 0: no delay (the fast path's one load).
static NS: AtomicU64 = AtomicU64::new(0);
/// The resolved lock's id.
static LOCK: AtomicU8 = AtomicU8::new(0);
/// Whether the delay is spent after the release.
static OUTSIDE: AtomicBool = AtomicBool::new(false);

/// Asks for `delay` in this process (`None`: none); the next [`resolve`] applies it.
pub fn set(delay: Option<Delay>) {
    *ASKED.lock().unwrap_or_else(|e| e.into_inner()) = delay;
    NS.store(0, Ordering::SeqCst);
}

/// The delay asked in this process, if any: what a real server's lock library is given
/// (`launcher::locks`) where the lab's own locks are not the ones to lengthen.
pub fn asked() -> Option<Delay> {
    ASKED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Applies the asked delay to `locks`, a workload's lock set: `Err` names the locks it
/// has when the asked one is not among them (a guard-taken lock is needed: a shared side
/// or a permit cannot be lengthened here). A workload without a lock set whose servers
/// run under the lock library ([`super::preload_on`]) leaves the delay to the library,
/// which names the locks it has when the asked one is not there. Called by the runner
/// before its threads start.
pub fn resolve(locks: Option<&LockSet>) -> Result<(), String> {
    let asked = ASKED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(delay) = asked else {
        NS.store(0, Ordering::SeqCst);
        return Ok(());
    };
    if locks.is_none() && super::preload_on() {
        NS.store(0, Ordering::SeqCst);
        return Ok(());
    }
    let names: Vec<&str> = locks
        .map(|l| l.locks.iter().map(|s| s.name.as_str()).collect())
        .unwrap_or_default();
    let Some(spec) = locks.and_then(|l| l.locks.iter().find(|s| s.name == delay.lock)) else {
        return Err(format!(
            "lock delay: no lock {:?} here; the lock table names {}",
            delay.lock,
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ));
    };
    LOCK.store(spec.id.0, Ordering::SeqCst);
    OUTSIDE.store(delay.place == Place::Outside, Ordering::SeqCst);
    NS.store(delay.ns, Ordering::SeqCst);
    Ok(())
}

/// The delay to spend for a hold of `id` and where, if any: one relaxed load when none.
#[inline]
pub(crate) fn of(id: LockId) -> Option<(u64, Place)> {
    let ns = NS.load(Ordering::Relaxed);
    if ns == 0 || LOCK.load(Ordering::Relaxed) != id.0 {
        return None;
    }
    let place = if OUTSIDE.load(Ordering::Relaxed) {
        Place::Outside
    } else {
        Place::Inside
    };
    Some((ns, place))
}

/// Spends `ns` nanoseconds on this CPU: a busy wait, because the point is time during
/// which the thread holds (or, outside, could have held) the lock, not time asleep.
#[cold]
pub(crate) fn spin(ns: u64) {
    let until = Instant::now() + Duration::from_nanos(ns);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delay_parses_by_name_and_place_and_bad_text_is_one_line() {
        assert_eq!(
            Delay::parse("entry cache=200").unwrap(),
            Delay {
                lock: "entry cache".into(),
                ns: 200,
                place: Place::Inside
            }
        );
        assert_eq!(Delay::parse("db=5:outside").unwrap().place, Place::Outside);
        for bad in ["db", "db=0", "db=x", "=5", "db=5:elsewhere", "db=20000000"] {
            let err = Delay::parse(bad).unwrap_err();
            assert!(err.contains("expected NAME=NS"), "{bad}: {err}");
            assert!(!err.contains('\n'));
        }
    }
}

//! A held lock's timer ([`Hold`]) and a guard that carries one ([`Held`]): what runs
//! while a lock is held (a sampled hold's clock reads) and what waits for the release
//! (recording the hold and the wait). Counting and sampling are `locks`' job.

use std::mem::ManuallyDrop;
use std::time::{Duration, Instant};

use super::{record, LockId};

/// Where a hold's timer stands.
#[derive(Debug, Clone, Copy)]
enum Timer {
    /// This hold is not sampled.
    Off,
    /// Sampled, started at this instant.
    Running(Instant),
    /// Sampled and ended: the hold lasted this long.
    Stopped(Duration),
}

/// A held lock's timer and its acquisition's wait: [`Hold::end`] (or the drop) reads the
/// clock when the hold is sampled, and the drop records the hold and the wait on the
/// calling thread. Keep it alive until the lock is released, and end it just before: then
/// the recording happens after the release.
#[derive(Debug)]
#[must_use = "the hold ends when this is dropped"]
pub struct Hold {
    id: LockId,
    timer: Timer,
    /// A contended acquisition's wait, recorded at the drop.
    waited: Option<Duration>,
}

impl Hold {
    /// A hold that is not timed and waited nothing.
    pub const NONE: Hold = Hold {
        id: LockId(0),
        timer: Timer::Off,
        waited: None,
    };

    /// A hold of `id` that got its lock now, timed when `timed`.
    #[inline]
    pub(crate) fn begin(id: LockId, timed: bool, waited: Option<Duration>) -> Hold {
        if timed {
            Hold::started_now(id, waited)
        } else {
            Hold {
                id,
                timer: Timer::Off,
                waited,
            }
        }
    }

    #[cold]
    fn started_now(id: LockId, waited: Option<Duration>) -> Hold {
        Hold::started_at(id, Some(Instant::now()), waited)
    }

    /// A hold of `id` whose lock was got at `start` (`None`: not timed).
    #[inline]
    pub(crate) fn started_at(id: LockId, start: Option<Instant>, waited: Option<Duration>) -> Hold {
        Hold {
            id,
            timer: start.map_or(Timer::Off, Timer::Running),
            waited,
        }
    }

    /// Whether this hold is being timed.
    pub fn timed(&self) -> bool {
        !matches!(self.timer, Timer::Off)
    }

    /// Ends the hold now (the lock is about to be released): one clock read when it is
    /// sampled, nothing else; the figures are recorded when this drops.
    #[inline]
    pub fn end(&mut self) {
        if let Timer::Running(start) = self.timer {
            self.timer = Timer::Stopped(start.elapsed());
        }
    }

    /// Ends the hold with a length the caller knows better than the clock (a lease held
    /// in simulated time until its answer was due), and records it at once.
    pub fn end_after(mut self, held: Duration) {
        if self.timed() {
            self.timer = Timer::Stopped(held);
        }
    }
}

impl Drop for Hold {
    #[inline]
    fn drop(&mut self) {
        self.end();
        let held = match self.timer {
            Timer::Stopped(held) => Some(held),
            _ => None,
        };
        if held.is_some() || self.waited.is_some() {
            record(self.id, held, self.waited);
        }
    }
}

/// A lock guard with its hold timer: derefs to the guard. At the drop the timer reads the
/// clock while the lock is held, then the guard is released, then the hold is recorded.
#[derive(Debug)]
pub struct Held<G> {
    pub(super) hold: Hold,
    // Released by hand in `drop`, between the timer's end and the hold's record.
    guard: ManuallyDrop<G>,
}

impl<G> Held<G> {
    /// Wraps `guard` with its timer.
    #[inline]
    pub fn new(guard: G, hold: Hold) -> Held<G> {
        Held {
            hold,
            guard: ManuallyDrop::new(guard),
        }
    }

    /// Ends and records the hold and hands back the bare guard (to wait on a condition
    /// variable, which releases the lock, or to release it by hand). The record happens
    /// with the lock still held: keep this off the fast path.
    pub fn into_inner(self) -> G {
        let mut this = ManuallyDrop::new(self);
        this.hold.end();
        drop(std::mem::replace(&mut this.hold, Hold::NONE));
        // SAFETY: `this` is never dropped, so the guard is taken out exactly once and
        // nothing touches it afterwards.
        unsafe { ManuallyDrop::take(&mut this.guard) }
    }
}

impl<G> Drop for Held<G> {
    #[inline]
    fn drop(&mut self) {
        // The delay experiment (`super::delay`): inside, the hold grows by a known amount,
        // timed with it; outside, the same time is spent after the release.
        let delay = super::delay::of(self.hold.id);
        if let Some((ns, super::delay::Place::Inside)) = delay {
            super::delay::spin(ns);
        }
        self.hold.end();
        // SAFETY: the guard is dropped only here, once, and `self` is gone after this;
        // `into_inner` never lets its `Held` reach this drop.
        unsafe { ManuallyDrop::drop(&mut self.guard) };
        if let Some((ns, super::delay::Place::Outside)) = delay {
            super::delay::spin(ns);
        }
        // `self.hold` drops after this body: the record comes after the release.
    }
}

impl<G> std::ops::Deref for Held<G> {
    type Target = G;
    #[inline]
    fn deref(&self) -> &G {
        &self.guard
    }
}

impl<G> std::ops::DerefMut for Held<G> {
    #[inline]
    fn deref_mut(&mut self) -> &mut G {
        &mut self.guard
    }
}

//! What decides a part of a seed's claim: a comparison of two sides measured as pairs
//! adjacent in time, and the rule that turns its interval into an outcome.
//!
//! A hot path declares its question's parts once, as entries of a
//! [`crate::registry::Registry`], which give [`Claim`]s for the cells a plan will run
//! ([`Planned`]); each claim names the
//! [`Comparison`] that decides it, or why none can here. `lab matrix` measures each
//! comparison as pairs (A then B, then B then A, alternated) until its interval
//! ([`interval`]) lies wholly on one side of the thresholds or inside the no-effect band,
//! or its share of the budget is spent, and keeps the pairs as [`Measured`]. The answer
//! turns them into [`Part`]s, and the verdict follows from the parts alone
//! ([`crate::findings::Verdict::of_outcomes`]).
//!
//! Not here: running pairs or spending the budget (`lab`), wording (each hot path).

mod cell;
mod claim;
pub mod interval;
mod measured;
mod rule;
#[cfg(test)]
mod tests;

pub use cell::{CellRef, Planned};
pub use claim::{Claim, Comparison, Side, PLACEBO, PLACEBO_BAND};
pub use measured::{
    reason, Interval, Measured, Part, DECIDES, PLACEBO_WEIGHT, PRECISION, SIZE_ONLY,
};
pub use rule::{Outcome, Rule};

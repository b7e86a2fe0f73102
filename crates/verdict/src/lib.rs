//! The judgement of contention-lab: what each seed asked, the parts its question splits
//! into, how a part is decided by pairs measured adjacent in time, and the verdict the
//! parts give.
//!
//! A hot path states its seed's question by implementing [`Question`] beside its
//! [`harness::HotPath`]: the question in the user's words, the parts the cells of a plan
//! can decide (entries of a [`registry::Registry`], declared as data: sides, rule,
//! thresholds, the sentence for each outcome), and the answer a run gives. `lab` measures
//! each part's comparison as pairs ([`decide`]) and asks the question for its answer
//! ([`findings`]); [`judge`] is the one rule by which repetitions are compared, and
//! [`seeds`] the `[seed]` tables a question reads its baseline from.
//!
//! Not here: measuring (the `harness` crate, which knows nothing of verdicts), running
//! pairs under a budget or writing reports (`lab`), a question's wording and parts (each
//! hot-path crate's `findings` module, next to the variants its parts name).

pub mod decide;
pub mod findings;
pub mod judge;
pub mod registry;
pub mod seeds;
pub mod testing;

use decide::{Claim, Planned};
use findings::{Answer, Run};
use harness::HotPath;

/// A hot path's seed question: what `lab` plans pairs for and asks for an answer. Each
/// hot-path crate with a seed implements it on the value that implements [`HotPath`].
pub trait Question: HotPath {
    /// The question the hot path's seed asked, in the user's words.
    fn question(&self) -> &'static str;
    /// The parts of [`Question::question`], a fixed list, each with the comparison that
    /// decides it among the cells `planned` (or why none can): `lab matrix` measures each
    /// as pairs after its rounds, and [`Question::answer`] reads them back by name. A hot
    /// path returns its [`registry::Registry`]'s claims.
    fn claims(&self, planned: &Planned<'_>) -> Vec<Claim>;
    /// What `run` answers of [`Question::question`]: the verdict chosen by its parts, what
    /// it rests on and why, from the cells of the hot path's scenario files and their
    /// `[seed]` tables. `None` when the run has none of the cells that answer it (`lab`
    /// then says which files would). Called by `lab report` only.
    fn answer(&self, run: &Run<'_>) -> Option<Answer>;
}

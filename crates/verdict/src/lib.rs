//! The judgement of contention-lab: what each seed asked, the parts its question splits
//! into, how a part is decided by pairs measured adjacent in time, and the verdict the
//! parts give.
//!
//! A hot path states its seed's question as one [`Question`] constant beside its
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

/// A hot path's seed question, as data: what `lab` plans pairs for and asks for an
/// answer. Each hot-path crate with a seed declares one constant of it in its `findings`
/// module, beside the parts it names. Why a value and not a trait on the hot path: a
/// question is its words and two functions, and the hot path it is asked of; a trait
/// made every crate write the same three forwarding methods.
#[derive(Clone, Copy)]
pub struct Question {
    /// The hot path the question is asked of; its name keys the answer in the report.
    pub hot_path: &'static dyn HotPath,
    /// The question the hot path's seed asked, in the user's words.
    pub words: &'static str,
    /// The parts of the question, a fixed list, each with the comparison that decides it
    /// among the cells planned (or why none can): `lab matrix` measures each as pairs
    /// after its rounds, and `answer` reads them back by name. A hot path returns its
    /// [`registry::Registry`]'s claims.
    pub claims: fn(&Planned<'_>) -> Vec<Claim>,
    /// What a run answers of the question: the verdict chosen by its parts, what it rests
    /// on and why, from the cells of the hot path's scenario files and their `[seed]`
    /// tables. `None` when the run has none of the cells that answer it (`lab` then says
    /// which files would). Called by `lab report` only.
    pub answer: fn(&Run<'_>) -> Option<Answer>,
}

impl Question {
    /// The name of the hot path it is asked of.
    pub fn name(&self) -> &'static str {
        self.hot_path.name()
    }
}

//! The matrix's measuring steps: the rounds (repetition r of every cell before r+1 of
//! any, in a fresh order each round, the results file rewritten after each), the extra
//! rounds for cells whose interval is still wide while the budget allows, the rounds the
//! budget left out for the pairs, with what the pairs leave, and the profiles, one extra
//! uncounted run per chosen cell, taken after the kept rounds and before anything the
//! budget may cut.

use std::time::{Duration, Instant};

use super::{profile_prefix, run_child, Matrix};
use crate::cell_child::Purpose;
use crate::{adaptive, order, progress};

/// Rounds that run whatever the budget: a cell's first repetitions give its figure and
/// its spread. The profiles follow them (a profile needs a cell that ran), before the
/// rounds the budget may stop.
const ROUNDS_KEPT: usize = 2;

/// How a round ended.
enum Round {
    /// Some repetition ran: the round is written.
    Ran,
    /// Nothing was left to run in it.
    Idle,
    /// Lab is stopping: the round in flight is not written.
    Stopped,
    /// The next cell would have run past the deadline: what ran is written, and no
    /// later round starts.
    Cut {
        /// Cells that ran before it.
        ran: usize,
    },
}

impl Matrix<'_> {
    /// Every round, then the extra rounds (none when pairs decide: they measure the
    /// differences that matter, and extra rounds would eat their time).
    pub(super) fn rounds(&mut self) -> anyhow::Result<()> {
        let max_repeats = self.planned.iter().copied().max().unwrap_or(0);
        let extra_rounds = if self.plan.pairs {
            0
        } else {
            adaptive::EXTRA_ROUNDS
        };
        for rep in 0..max_repeats + extra_rounds {
            if rep == ROUNDS_KEPT {
                self.profiles();
            }
            if rep >= max_repeats && !self.extra_round(rep - max_repeats) {
                break;
            }
            if !self.round_fits(rep, max_repeats) {
                break;
            }
            match self.round(rep, None)? {
                Round::Stopped | Round::Cut { .. } => break,
                Round::Idle => {}
                Round::Ran => {
                    self.run.reference.push(crate::reference::measure());
                    self.run.machine_speed = self
                        .retaker
                        .machine_speed()
                        .or(self.run.machine_speed.take());
                    self.run.write(self.plan, false)?;
                    if rep < max_repeats {
                        progress::round_done(&self.bar, rep + 1, max_repeats);
                    }
                }
            }
        }
        Ok(())
    }

    /// The planned repetitions the rounds left out for the pairs (`round_fits`), with
    /// what the pairs left before `deadline`: rounds as before, each in its own order,
    /// the last cut at the first cell that would run past it. Why after the pairs and
    /// cell by cell: what the pairs need is known only once they have stopped, and a
    /// round cut part-way still gives its cells a repetition each (each cell's interval
    /// is its own; the order is shuffled, so no file's cells are the ones left out).
    pub(super) fn rounds_left(&mut self, deadline: Instant) -> anyhow::Result<()> {
        let planned = self.planned.iter().copied().max().unwrap_or(0);
        let first = (0..self.cells.len())
            .filter(|&i| self.missing(i) > 0)
            .map(|i| self.run.reps[i].len())
            .min();
        let Some(first) = first else {
            return Ok(());
        };
        for rep in first..planned {
            if self.stopping() {
                break;
            }
            let wanted = (0..self.cells.len())
                .filter(|&i| self.run.reps[i].len() == rep && rep < self.planned[i])
                .count();
            let outcome = self.round(rep, Some(deadline))?;
            let ran = match outcome {
                Round::Stopped => break,
                Round::Idle => continue,
                Round::Ran => wanted,
                Round::Cut { ran } => ran,
            };
            if ran > 0 {
                self.run.reference.push(crate::reference::measure());
                self.run.write(self.plan, false)?;
            }
            progress::phase(
                &self.bar,
                &format!(
                    "round {}/{planned} after the pairs: {ran} of {wanted} cell(s){}",
                    rep + 1,
                    if matches!(outcome, Round::Cut { .. }) {
                        ", the rest past the budget"
                    } else {
                        ""
                    }
                ),
            );
            if matches!(outcome, Round::Cut { .. }) {
                break;
            }
        }
        Ok(())
    }

    /// Whether round `rep` still fits before the time the parts' pairs, the profiles and
    /// the report keep: the rounds fill what the plan leaves them and no more, since the
    /// estimate behind the plan can be wrong (a slower machine, retakes). The first
    /// [`ROUNDS_KEPT`] rounds always run: every cell needs a figure.
    fn round_fits(&self, rep: usize, planned: usize) -> bool {
        let Some(budget) = self.plan.budget else {
            return true;
        };
        if rep < ROUNDS_KEPT || self.stopping() {
            return true;
        }
        let cost: Duration = (0..self.cells.len())
            .filter(|&i| rep >= self.run.reps[i].len() && rep < self.planned[i])
            .map(|i| self.cells[i].file.run_cost(self.cells[i].threads))
            .sum();
        let kept = self.pairs_kept + self.after_rounds();
        if self.began.elapsed() + cost + kept <= budget {
            return true;
        }
        progress::phase(
            &self.bar,
            &format!(
                "rounds stopped after {rep} of {planned}: the parts' pairs, the profiles and the report keep about {} of budget={}",
                humantime::format_duration(Duration::from_secs(kept.as_secs())),
                humantime::format_duration(Duration::from_secs(budget.as_secs()))
            ),
        );
        false
    }

    /// Whether extra round `extra` runs: only for cells whose interval is still wide
    /// (`adaptive`), and only with what the budget has left, since they are not in its
    /// plan.
    fn extra_round(&mut self, extra: usize) -> bool {
        let rep = extra + self.planned.iter().copied().max().unwrap_or(0);
        let wide = adaptive::wide_cells(&self.run.reps, &self.planned, rep);
        if wide == 0 || self.stopping() {
            return false;
        }
        let cost: Duration = (0..self.cells.len())
            .filter(|&i| adaptive::wants_more(&self.run.reps[i], self.planned[i]))
            .map(|i| self.cells[i].file.run_cost(self.cells[i].threads))
            .sum();
        if let Some(budget) = self.plan.budget {
            if self.began.elapsed() + cost + self.after_rounds() + self.pairs_kept > budget {
                progress::phase(
                    &self.bar,
                    &format!(
                        "extra round {} left out: {wide} wide cell(s) would take about {}, past budget={}",
                        extra + 1,
                        humantime::format_duration(Duration::from_secs(cost.as_secs())),
                        humantime::format_duration(Duration::from_secs(budget.as_secs()))
                    ),
                );
                return false;
            }
        }
        self.extended += wide;
        self.bar.inc_length(wide as u64);
        progress::phase(&self.bar, &adaptive::round_line(extra, wide));
        true
    }

    /// Repetition `rep` of every cell that still wants it, in this round's order, each
    /// retaken while the machine was loaded (`retake`), until the first cell whose run
    /// (by the plan's cost model) would end past `deadline`.
    fn round(&mut self, rep: usize, deadline: Option<Instant>) -> anyhow::Result<Round> {
        let mut ran = Round::Idle;
        let mut count = 0;
        for i in order::round_order(self.cells.len(), self.run.order_seed, rep) {
            let cell = &self.cells[i];
            // Done already (a resumed run), not wanted, or past its planned repetitions
            // and narrow enough.
            let more = || adaptive::wants_more(&self.run.reps[i], self.planned[i]);
            if rep < self.run.reps[i].len() || !(rep < self.planned[i] || more()) {
                continue;
            }
            if self.stopping() {
                return Ok(Round::Stopped);
            }
            let cost = cell.file.run_cost(cell.threads);
            if deadline.is_some_and(|d| Instant::now() + cost > d) {
                return Ok(Round::Cut { ran: count });
            }
            self.bar.set_message(format!(
                "{}/{} t={} c={} rep {}/{}",
                cell.file.file,
                cell.variant,
                cell.threads,
                cell.cores,
                rep + 1,
                cell.file.repeats
            ));
            let measured = cell.file.warmup + cell.file.duration;
            let (exe, root, interrupted) = (&self.exe, &self.plan.root, self.interrupted);
            let overheads = &mut self.run.overheads;
            let kept = self.retaker.repetition(|| {
                let started = Instant::now();
                let record = run_child(exe, root, cell, Purpose::Round, rep, interrupted)?;
                if record.usable() {
                    overheads.push(started.elapsed().saturating_sub(measured).as_secs_f64());
                }
                Some(record)
            });
            let Some(mut record) = kept else {
                return Ok(Round::Stopped);
            };
            record.scenario_file = cell.file.file.clone();
            self.run.reps[i].push(record);
            self.bar.inc(1);
            ran = Round::Ran;
            count += 1;
        }
        Ok(ran)
    }

    /// One extra, uncounted run per chosen cell for its flamegraph, in the selection's
    /// order, then the second profiles of the cells profiled twice (`profiled::repeated`,
    /// the noise floor of `where_time_goes`) in the same order. Never cut for the budget:
    /// the plan counted them before it ran, a profile costs seconds, and the rounds and
    /// pairs after them are what absorbs an estimate gone wrong. Runs once; later calls
    /// find nothing left to take.
    pub(super) fn profiles(&mut self) {
        if !self.plan.profile || self.stopping() {
            return;
        }
        let firsts = crate::plan::profiled::order(&self.cells, &self.chosen);
        let repeats = crate::plan::profiled::order(&self.cells, &self.repeat);
        let todo: Vec<(usize, bool)> = firsts
            .into_iter()
            .map(|i| (i, false))
            .chain(repeats.into_iter().map(|i| (i, true)))
            .filter(|&(i, again)| {
                !self.run.reps[i].is_empty()
                    && if again {
                        self.wanted_again(i)
                    } else {
                        self.wanted(i)
                    }
            })
            .collect();
        if todo.is_empty() {
            return;
        }
        progress::phase(
            &self.bar,
            &format!(
                "profiling: {} extra, uncounted run(s) for the flamegraphs",
                todo.len()
            ),
        );
        for (i, again) in todo {
            let cell = &self.cells[i];
            if self.stopping() {
                break;
            }
            // A repeat needs the first profile to hang on (it may have failed).
            if again && self.run.profiles[i].is_none() {
                continue;
            }
            self.bar.set_message(format!(
                "{}/{} t={} c={} profiling{}",
                cell.file.file,
                cell.variant,
                cell.threads,
                cell.cores,
                if again { " again" } else { "" }
            ));
            let mut prefix = profile_prefix(&self.run.run_id, cell);
            if again {
                prefix.push_str(".r1");
            }
            let profile = Purpose::Profile(prefix.as_str(), self.plan.quick);
            let record = run_child(
                &self.exe,
                &self.plan.root,
                cell,
                profile,
                0,
                self.interrupted,
            );
            match (record.and_then(|r| r.0.profile), again) {
                (Some(p), false) => self.run.profiles[i] = Some(p),
                (Some(p), true) => {
                    if let Some(first) = self.run.profiles[i].as_mut() {
                        first.repeats.push(p.folded);
                    }
                }
                (None, _) => {}
            }
            self.bar.inc(1);
        }
    }
}

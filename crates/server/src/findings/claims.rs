//! Seed 002's question as comparisons of the cells a plan runs, for any server whose
//! thread setting is the axis: which cells each part compares, on which figure, and what
//! ratio counts as shown or contradicted. The sides come from the plan (`Planned`), never
//! from this machine's size, so the same code declares 2-CPU and 64-CPU comparisons.
//! [`Question`] says which file and variant, the parts' sentences and what the server's
//! own default is; the ldap hot path asks it of 389 DS, the server hot path of any file.
//!
//! Not here: measuring pairs (`lab`), reading their outcomes, the profile part's shares
//! ([`super::profile`]).

use harness::decide::{CellRef, Claim, Comparison, Planned, Rule, Side};

/// Part (a): more server threads than CPUs cost total throughput.
pub const THREADS_PAST_CPUS: &str = "threads_past_cpus";
/// Part (b): threads = CPUs against the server's own default.
pub const RECOMMENDATION: &str = "recommendation";
/// Part (c): per-thread decline while CPUs are free.
pub const PER_THREAD_WITH_CPUS_FREE: &str = "per_thread_with_cpus_free";
/// Part (d): where the server's time goes as threads grow.
pub const WHERE_TIME_GOES: &str = "where_time_goes";

/// Costing at least 5% of throughput is a cost worth the seed's claim; within 2% (or a
/// gain) is no cost. The band between stays inconclusive rather than forcing a word.
pub const COST: Rule = Rule::Below {
    shown: 0.95,
    contradicted: 0.98,
};

/// A default worth changing must give at least 5% more; under 2% more (or less) is not
/// worth a change of default, so it contradicts the recommendation.
pub const GAIN: Rule = Rule::Above {
    shown: 1.05,
    contradicted: 1.02,
};

/// Per-thread at t threads at most 0.90 of the knee's is a decline like the seed's (it
/// saw 0.66 at 4 threads against 1); at least 0.95 is near-linear scaling, no decline to speak of.
/// Wider than the other rules because even a server with no contention loses some per
/// thread to the shared clients and kernel.
pub const DECLINE: Rule = Rule::Below {
    shown: 0.90,
    contradicted: 0.95,
};

/// The question asked of one server's cells.
pub struct Question<'a> {
    /// The scenario file.
    pub file: &'a str,
    /// The variant compared.
    pub variant: &'a str,
    /// The server, in words (`389 DS`, `memcached`).
    pub server: &'a str,
    /// The four parts' sentences, in order.
    pub claims: [&'a str; 4],
    /// What threads = CPUs is compared against on `cores` CPUs: a thread count and the
    /// words for it; `None` when there is nothing to compare (the default is the CPUs).
    pub against: &'a dyn Fn(usize) -> Option<(usize, String)>,
}

impl Question<'_> {
    fn cell(&self, planned: &Planned<'_>, threads: usize, cores: usize) -> Option<CellRef> {
        planned
            .find(self.file, self.variant, threads, cores)
            .cloned()
    }

    fn threads_at(&self, planned: &Planned<'_>, cores: usize) -> Vec<usize> {
        let mut v: Vec<usize> = planned
            .of_file(self.file)
            .iter()
            .filter(|c| c.variant == self.variant && c.cores == cores)
            .map(|c| c.threads)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The most CPUs the plan runs the server on.
    pub fn widest(&self, planned: &Planned<'_>) -> Option<usize> {
        planned
            .of_file(self.file)
            .iter()
            .filter(|c| c.variant == self.variant)
            .map(|c| c.cores)
            .max()
    }

    /// The fixed list of parts for a plan on a machine of `nproc` CPUs, in order.
    pub fn claims(&self, planned: &Planned<'_>, nproc: usize) -> Vec<Claim> {
        let widest = self.widest(planned);
        let against = widest.and_then(|c| (self.against)(c));
        vec![
            self.threads_past_cpus(planned, widest, against.as_ref().map(|(t, _)| *t)),
            self.recommendation(planned, widest, against),
            self.per_thread_with_cpus_free(planned, nproc),
            Claim::cannot(
                WHERE_TIME_GOES,
                self.claims[3],
                "read from the server's own profiles of the 1-thread and the most-threads cells on the most CPUs, not measured as pairs",
            ),
        ]
    }

    fn none(&self) -> String {
        format!(
            "the plan has no {} cell (benches/{}.toml)",
            self.server, self.file
        )
    }

    fn threads_past_cpus(
        &self,
        planned: &Planned<'_>,
        widest: Option<usize>,
        skip: Option<usize>,
    ) -> Claim {
        let cannot = |why: String| Claim::cannot(THREADS_PAST_CPUS, self.claims[0], why);
        let Some(c) = widest else {
            return cannot(self.none());
        };
        let past: Vec<usize> = self
            .threads_at(planned, c)
            .into_iter()
            .filter(|&t| t > c)
            .collect();
        // The recommendation part already compares the default against the CPUs: the
        // most threads other than it, so the two parts are two comparisons, not one twice.
        let most = past
            .iter()
            .copied()
            .filter(|&t| Some(t) != skip)
            .max()
            .or_else(|| past.last().copied());
        let (Some(most), Some(at_cpus)) = (most, self.cell(planned, c, c)) else {
            return cannot(format!(
                "the plan has no {} cells at threads = CPUs ({c}) and above on {c} CPUs",
                self.server
            ));
        };
        let a = self.cell(planned, most, c).expect("a planned count");
        // One comparison, on the most CPUs: a pair of a real server starts two servers,
        // so a comparison per CPU count would double the part's cost.
        Claim::decided_by(
            THREADS_PAST_CPUS,
            self.claims[0],
            Comparison::throughput(Side::cell(a), Side::cell(at_cpus), COST),
        )
    }

    fn recommendation(
        &self,
        planned: &Planned<'_>,
        widest: Option<usize>,
        against: Option<(usize, String)>,
    ) -> Claim {
        let cannot = |why: String| Claim::cannot(RECOMMENDATION, self.claims[1], why);
        let Some(c) = widest else {
            return cannot(self.none());
        };
        let Some((other, words)) = against else {
            return cannot(format!(
                "on {c} CPUs threads = CPUs is the server's own default (or the file names none): nothing to compare"
            ));
        };
        match (self.cell(planned, c, c), self.cell(planned, other, c)) {
            (Some(a), Some(b)) => Claim::decided_by(
                RECOMMENDATION,
                format!("{}: threads = CPUs ({c}) against {words}", self.claims[1]),
                Comparison::throughput(Side::cell(a), Side::cell(b), GAIN),
            ),
            _ => cannot(format!(
                "the plan lacks {} at {c} or {other} threads on {c} CPUs (list both in the file's threads)",
                self.server
            )),
        }
    }

    fn per_thread_with_cpus_free(&self, planned: &Planned<'_>, nproc: usize) -> Claim {
        // The seed's claim is a decline past its knee ("after t4 we immediately see a per
        // thread decline"), so the part compares per-thread throughput past the knee with
        // the knee's own; a file whose [seed] names no knee is asked from 1 thread.
        let seed_knee = planned
            .seeds()
            .f64(self.file, "knee_threads")
            .filter(|k| *k >= 1.0)
            .map(|k| k as usize);
        let knee = seed_knee.unwrap_or(1);
        let from = match seed_knee {
            Some(k) => format!(
                "the seed's knee of {k} threads (knee_threads in benches/{}.toml)",
                self.file
            ),
            None => format!(
                "1 thread (benches/{}.toml's [seed] names no knee_threads)",
                self.file
            ),
        };
        // CPUs free: the server's threads fewer than its CPUs, and CPUs left over for the
        // clients (they run on the machine's other CPUs only where there are some).
        let mut cores = planned.cores(self.file);
        cores.retain(|&c| c < nproc);
        let found = cores.iter().rev().find_map(|&c| {
            let t = self
                .threads_at(planned, c)
                .into_iter()
                .filter(|&t| t > knee && t < c)
                .max()?;
            Some((self.cell(planned, t, c)?, self.cell(planned, knee, c)?, t))
        });
        match found {
            Some((a, b, t)) => Claim::decided_by(
                PER_THREAD_WITH_CPUS_FREE,
                format!("{}: per thread at {t} threads against at {from}", self.claims[2]),
                Comparison {
                    a: Side::cell(a),
                    b: Side::cell(b),
                    figure: "ops_per_sec".to_owned(),
                    // Per thread: X(t) / t over X(knee) / knee.
                    scale: knee as f64 / t as f64,
                    rule: DECLINE,
                },
            ),
            None => Claim::cannot(
                PER_THREAD_WITH_CPUS_FREE,
                self.claims[2],
                format!(
                    "this machine has {nproc} CPU(s); the part needs at least {}: the server on more CPUs than a planned thread count past {from}, that count and the knee's both planned on them, and CPUs left for the clients",
                    knee + 3
                ),
            ),
        }
    }
}

//! How `lab` sees a hot path: its name, variants and parameters, and one call that
//! measures one repetition of one cell. Each hot-path crate exports one value implementing
//! [`HotPath`]; `lab` keeps the list. This is the only thing `lab` needs from a hot path.
//!
//! A hot path's variants are one registry ([`Description::variants`]): each [`Variant`]
//! holds its name, its summary and the function that measures it, so that a variant's
//! name is written once, and `lab`'s help, list, scenario-file check and report and
//! [`HotPath::measure`] all read the same entries.

use crate::params::{ParamSpec, Params};
use crate::runner::{CellFailure, Measurement, RunSettings};

/// How a variant measures one repetition of one cell: builds the variant with these
/// parameters (already checked one by one), runs it under `settings` and verifies it.
pub type Measure = fn(&Params, RunSettings) -> Result<Measurement, CellFailure>;

/// One implementation of a hot path: an entry of its registry.
#[derive(Clone, Copy)]
pub struct Variant {
    /// Name in the user's words, e.g. `global-mutex`.
    pub name: &'static str,
    /// One line saying what it does differently.
    pub summary: &'static str,
    /// Builds it, runs one repetition and verifies it ([`HotPath::measure`] calls it).
    pub measure: Measure,
}

/// Every hot path's variants in one shape: an enum with one member per variant whose
/// `const fn entry(self) -> Variant` is the one place each variant's name, summary and
/// measuring function are written (ripgrep's one registry, one shape per entry). The macro
/// adds, from the members listed in the order reports show them, `EVERY`, `name`, `parse`
/// (a one-line error naming the accepted variants) and the registry slice the hot path's
/// [`Description`] lists, so no crate writes the lookup or the const loop again.
///
/// ```ignore
/// harness::variant_registry!(pub VARIANTS = "sqlmix" Design [SingleConn, Pool, Semaphore]);
/// ```
#[macro_export]
macro_rules! variant_registry {
    ($vis:vis $registry:ident = $hot_path:literal $ty:ident [$($member:ident),+ $(,)?]) => {
        impl $ty {
            /// Every variant, in the order reports list them.
            pub const EVERY: [$ty; [$(stringify!($member)),+].len()] = [$($ty::$member),+];

            /// Its variant's name in the user's words.
            pub const fn name(self) -> &'static str {
                self.entry().name
            }

            /// The variant called `name`; else a one-line error naming the accepted ones.
            pub fn parse(name: &str) -> ::std::result::Result<$ty, String> {
                $ty::EVERY
                    .into_iter()
                    .find(|v| v.name() == name)
                    .ok_or_else(|| {
                        let names: Vec<&str> = $ty::EVERY.iter().map(|v| v.name()).collect();
                        format!(
                            "unknown variant {name:?} of {}: accepted {}",
                            $hot_path,
                            names.join(", ")
                        )
                    })
            }
        }

        /// Every variant, in the order reports list them: one registry entry per member.
        $vis const $registry: &[$crate::Variant] = &{
            let mut all = [$ty::EVERY[0].entry(); $ty::EVERY.len()];
            let mut i = 0;
            while i < all.len() {
                all[i] = $ty::EVERY[i].entry();
                i += 1;
            }
            all
        };
    };
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The function is left out: its address says nothing to a reader.
        f.debug_struct("Variant")
            .field("name", &self.name)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

/// What `lab` lists about a hot path, as one constant: its name, the problem it
/// reproduces, the implementations it compares, its parameters and the figures worth a
/// chart. A hot path hands it out from [`HotPath::description`].
#[derive(Debug, Clone, Copy)]
pub struct Description {
    /// Name, e.g. `lookup`.
    pub name: &'static str,
    /// One line saying which problem it reproduces.
    pub summary: &'static str,
    /// The implementations it compares.
    pub variants: &'static [Variant],
    /// Its parameters with defaults.
    pub params: &'static [ParamSpec],
    /// Figures of `extra` worth a chart of their own in reports, as (key, axis label);
    /// the conformance test ([`crate::testing`]) checks that each appears in a record.
    pub charted_extras: &'static [(&'static str, &'static str)],
}

impl Description {
    /// Whether the registry is sound: no two variants of one name (the second could never
    /// be measured, and results files could not tell them apart). `Err` names the name.
    pub fn check_variants(&self) -> Result<(), String> {
        for (i, v) in self.variants.iter().enumerate() {
            if self.variants[..i].iter().any(|w| w.name == v.name) {
                return Err(format!(
                    "hot path {}: two variants are called {:?}",
                    self.name, v.name
                ));
            }
        }
        Ok(())
    }
}

/// Something a cell needs that this machine lacks (a shared library, a server binary),
/// with the packages that install it: `lab matrix` skips the scenario files that need it
/// and says so in one line, instead of failing their cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// What is missing, e.g. `libdqlite.so.0`.
    pub what: String,
    /// The Debian packages that install it (`scripts/setup.sh` installs them).
    pub packages: Vec<String>,
    /// Why it is missing, in one line (the loader's error, say).
    pub reason: String,
}

/// One side of a pair measured in one process ([`HotPath::measure_pairs`]).
#[derive(Debug, Clone, Copy)]
pub struct PairSide<'a> {
    /// Variant.
    pub variant: &'a str,
    /// Parameters, checked.
    pub params: &'a Params,
    /// Threads (the server's thread setting, for a real server).
    pub threads: usize,
}

/// A hot path as `lab` runs it.
pub trait HotPath: Sync {
    /// Its name, summary, variants, parameters and charted figures.
    fn description(&self) -> &'static Description;
    /// Name, e.g. `lookup`.
    fn name(&self) -> &'static str {
        self.description().name
    }
    /// One line saying which problem it reproduces.
    fn summary(&self) -> &'static str {
        self.description().summary
    }
    /// The implementations it compares.
    fn variants(&self) -> &'static [Variant] {
        self.description().variants
    }
    /// Its parameters with defaults.
    fn params(&self) -> &'static [ParamSpec] {
        self.description().params
    }
    /// Figures of `extra` worth a chart of their own in reports, as (key, axis label).
    fn charted_extras(&self) -> &'static [(&'static str, &'static str)] {
        self.description().charted_extras
    }
    /// Rules that involve more than one parameter; each value alone was already checked.
    fn check(&self, _params: &Params) -> Result<(), String> {
        Ok(())
    }
    /// Rules that also involve the number of threads (clients, for a client axis); `lab`
    /// checks every count of a plan before anything runs.
    fn check_threads(&self, _params: &Params, _threads: usize) -> Result<(), String> {
        Ok(())
    }
    /// What a cell with these parameters needs that this machine lacks, if anything
    /// (e.g. `backend=libdqlite` without libdqlite); `None` when it can run here.
    fn missing(&self, _params: &Params) -> Option<Missing> {
        None
    }
    /// Whether two cells with these parameters can stay resident together in one process
    /// and alternate in short turns ([`crate::slices`]): their work runs in this process's
    /// runner ([`HotPath::measure`] calls [`crate::runner::run`] once, on the calling
    /// thread), a team parked between operations leaves nothing of its own running, and
    /// no operation is paced by the clock (a fixed rate would bunch up after a parked
    /// turn). `lab` then measures their pairs interleaved; by default not.
    fn interleaves(&self, _params: &Params) -> bool {
        false
    }
    /// Whether every lock of its lock table that admits one holder is taken through
    /// [`crate::OpCtx::lock`], so that the delay experiment ([`crate::locks::delay`]) can
    /// lengthen its holds: `lab` then asks which of them limits (its `limiting_lock`
    /// part). By default not.
    fn guards_locks(&self) -> bool {
        false
    }
    /// Whether its cells start a real server that `lab matrix locks=true` runs under the
    /// lock library (`launcher::locks`), each record's `extra.locks` holding the server's
    /// locks: `lab` then asks which of them limits (its `limiting_lock` part), the delay
    /// spent by the library inside the server. By default not.
    fn preloads_locks(&self) -> bool {
        false
    }
    /// Whether [`HotPath::measure_pairs`] is implemented: `lab` then measures a part's
    /// pairs of single cells on the same CPUs in one child, a block of pairs at a time.
    fn pairs_in_one_process(&self) -> bool {
        false
    }
    /// Measures `pairs` pairs of windows of two or more cells in this process: every side
    /// started once and resident together (the idle ones asleep), then one window of each
    /// side in `sides`' order, reversed on every odd pair, each with its own warm-up
    /// (`settings.warmup`, `settings.duration`; `threads` is each side's), every window
    /// verified. Why: a real server's start (about 1.3 s for 389 DS here) would otherwise
    /// be paid by every repetition of a 0.4 s window; why more than two: a chain of three
    /// or four windows serves two or three comparisons that share cells (`lab`'s pairs). Each element holds the
    /// windows in `sides`' order. `None` where the hot path has no such mode.
    fn measure_pairs(
        &self,
        _sides: &[PairSide<'_>],
        _pairs: usize,
        _settings: RunSettings,
    ) -> Option<Result<Vec<Vec<Measurement>>, CellFailure>> {
        None
    }
    /// Builds the variant, runs one repetition and verifies it: by default, the
    /// [`Variant::measure`] of the entry called `variant`.
    fn measure(
        &self,
        variant: &str,
        params: &Params,
        settings: RunSettings,
    ) -> Result<Measurement, CellFailure> {
        let entry = self.variant(variant).map_err(CellFailure::new)?;
        (entry.measure)(params, settings)
    }

    /// The variant called `name`, or an error listing those that exist.
    fn variant(&self, name: &str) -> Result<&'static Variant, String> {
        self.variants()
            .iter()
            .find(|v| v.name == name)
            .ok_or_else(|| {
                let names: Vec<_> = self.variants().iter().map(|v| v.name).collect();
                format!(
                    "unknown variant {name:?} of {}: accepted {}",
                    self.name(),
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Debug for dyn HotPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noop::NoopHotPath;

    fn refuses(_: &Params, _: RunSettings) -> Result<Measurement, CellFailure> {
        Err(CellFailure::new("refused"))
    }

    const TWICE: Description = Description {
        name: "twice",
        summary: "one name for two entries",
        variants: &[
            Variant {
                name: "a",
                summary: "first",
                measure: refuses,
            },
            Variant {
                name: "b",
                summary: "other",
                measure: refuses,
            },
            Variant {
                name: "a",
                summary: "second",
                measure: refuses,
            },
        ],
        params: &[],
        charted_extras: &[],
    };

    #[test]
    fn two_entries_of_one_name_are_refused() {
        let err = TWICE.check_variants().unwrap_err();
        assert_eq!(err, "hot path twice: two variants are called \"a\"");
        NoopHotPath.description().check_variants().unwrap();
    }

    #[test]
    fn measure_finds_the_entry_by_name() {
        struct Twice;
        impl HotPath for Twice {
            fn description(&self) -> &'static Description {
                &TWICE
            }
        }
        let settings = crate::testing::settings(1, 10, 10);
        let params = Params::defaults(&[]);
        let err = Twice.measure("b", &params, settings).unwrap_err();
        assert_eq!(err.to_string(), "refused");
        let err = Twice.measure("c", &params, settings).unwrap_err();
        assert!(
            err.to_string().contains("unknown variant \"c\" of twice"),
            "{err}"
        );
    }
}

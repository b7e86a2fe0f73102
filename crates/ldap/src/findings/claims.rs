//! The parts of the seed's claim as one registry ([`registry_on`]): seed 002's question
//! ([`server::findings::claims::AskedOf`]) asked of 389 DS in its own words, so each
//! part's name, claim, the cells it compares, on which figure, and what ratio counts as
//! shown or contradicted are declared once and read by the claims and the answer alike.
//! The sides come from the plan (`Planned`), never from this machine's size, so the same
//! code declares 2-CPU and 64-CPU comparisons.
//!
//! Not here: measuring pairs (`lab`), reading their outcomes (`super::answer`), the
//! profile part's shares (`super::profile`).

use server::findings::claims::{AskedOf, Claims};
use verdict::decide::{Claim, Planned};
use verdict::registry::Registry;

use super::FILE;
use crate::ds389;

/// The variant every part compares.
pub const VARIANT: &str = crate::Design::Ds389.name();

pub use server::findings::claims::{
    PER_THREAD_WITH_CPUS_FREE, RECOMMENDATION, THREADS_PAST_CPUS, WHERE_TIME_GOES,
};

/// Part (a) in words.
pub const THREADS_PAST_CPUS_CLAIM: &str = "more 389 DS worker threads than CPUs cost total throughput: X at the most threads is below X at threads = CPUs";
/// Part (b) in words.
pub const RECOMMENDATION_CLAIM: &str = "the seed's recommendation, threads = CPUs, does more than 389 DS's own autotuned default (nsslapd-threadnumber: -1) and the seed's 16";
/// Part (c) in words.
pub const PER_THREAD_WITH_CPUS_FREE_CLAIM: &str = "per-thread throughput falls as threads rise past the seed's knee (knee_threads) while CPUs are free (threads below the server's CPUs, the clients on other CPUs)";
/// Part (d) in words.
pub const WHERE_TIME_GOES_CLAIM: &str = "some server functions take a growing share of the server's on-CPU time from 1 thread to the most threads (its own differential profile)";

/// The seed's 16 where its `[seed]` table does not say: "a curve which starts at 16
/// threads from 1 to 4 cores".
pub const SEED_THREADS: usize = 16;

/// The four parts, declared once, part (c) asked on a machine of `nproc` CPUs
/// ([`server::findings::claims::AskedOf`] asked of 389 DS, the parts named without a
/// file: this hot path asks it of one file).
pub fn registry_on(nproc: usize) -> Registry<'static> {
    AskedOf {
        file: FILE,
        variant: VARIANT,
        server: "389 DS",
        claims: Claims {
            threads_past_cpus: THREADS_PAST_CPUS_CLAIM,
            recommendation: RECOMMENDATION_CLAIM,
            per_thread_with_cpus_free: PER_THREAD_WITH_CPUS_FREE_CLAIM,
            where_time_goes: WHERE_TIME_GOES_CLAIM,
        },
        against: &recommendation_other,
        named_by_file: false,
    }
    .registry(nproc)
}

/// The four parts on this machine's CPUs.
pub fn registry() -> Registry<'static> {
    registry_on(crate::procstat::machine_cpus().len())
}

/// The fixed list of parts for a plan, on the CPUs of the machine it is for.
pub fn claims(planned: &Planned<'_>) -> Vec<Claim> {
    registry_on(server::findings::plan_cpus(planned)).claims(planned)
}

/// The fixed list of parts for a plan on a machine of `nproc` CPUs, in order.
pub fn claims_on(planned: &Planned<'_>, nproc: usize) -> Vec<Claim> {
    registry_on(nproc).claims(planned)
}

/// What the recommendation is compared against on `cores` CPUs, and in words: the
/// autotuned count where it differs from the CPUs, else the seed's 16 (on 16 or more CPUs
/// the autotuned count is the CPUs); `None` when both are the CPUs.
pub fn recommendation_other(planned: &Planned<'_>, cores: usize) -> Option<(usize, String)> {
    let auto = ds389::autotuned_threads(cores);
    let seed = planned
        .seeds()
        .f64(FILE, "autotune_floor")
        .map_or(SEED_THREADS, |v| v as usize);
    if auto != cores {
        let also = if auto == seed {
            format!(", which is also the seed's {seed}: one comparison serves both")
        } else {
            String::new()
        };
        Some((
            auto,
            format!("389 DS's autotuned default (nsslapd-threadnumber: -1, which it resolves to {auto} on {cores} CPUs{also})"),
        ))
    } else if seed != cores {
        Some((
            seed,
            format!("the seed's {seed} (on {cores} CPUs the autotuned default already is {cores} = the CPUs)"),
        ))
    } else {
        None
    }
}

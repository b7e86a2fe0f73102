//! Part (d), where 389 DS's time goes, asked of [`server::findings::profile`] with the
//! server's stacks rooted at its process name, `ns-slapd` (perf's comm of every ns-slapd
//! thread, which 389 DS does not rename); the lab's LDAP client (rooted at the cell frame
//! `ldap/389-ds`, tokio and helper threads at their names) is left out.

use server::findings::profile::{self as generic, Profiled};
pub use server::findings::profile::{
    growth, noise_floor, Shares, CONTRADICTED_GROWTH, MIN_SAMPLES, PROFILES_PER_SIDE, SHOWN_GROWTH,
    UNKNOWN,
};
use verdict::decide::Part;
use verdict::findings::Run;

use super::claims::{VARIANT, WHERE_TIME_GOES_CLAIM};
use super::FILE;

/// The root frame of the server's stacks.
pub const SERVER_ROOT: &str = "ns-slapd";

/// The server's shares in folded stacks.
pub fn shares(folded: &str) -> Shares {
    Shares::of_folded(folded, &[SERVER_ROOT])
}

/// The part from the profiles' shares at 1 and at `most_threads` on `cores` CPUs.
pub fn judge(one: &[Shares], most: &[Shares], most_threads: usize, cores: usize) -> Part {
    generic::judge(
        one,
        most,
        (most_threads, cores),
        &[SERVER_ROOT],
        WHERE_TIME_GOES_CLAIM,
    )
}

/// Part (d) for `run`.
pub fn where_time_goes(run: &Run<'_>) -> Part {
    generic::where_time_goes(
        run,
        &Profiled {
            file: FILE,
            variant: VARIANT,
            server: "389 DS",
            roots: &[SERVER_ROOT],
            claim: WHERE_TIME_GOES_CLAIM,
        },
    )
}

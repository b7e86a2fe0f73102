//! Which cells of a matrix get a profiling repetition, and how long its window is.
//!
//! By default, for every variant (and parameter set) of every scenario file that sweeps
//! threads, at the largest core count: threads = 1, threads = cores and the largest thread
//! count, the cells the differential flamegraphs compare; a file that says
//! `profile_at = "most"` (lookup-dispatch, which compares dispatches at one thread count)
//! at its most threads only. A file run at one thread count (a parameter sweep such as
//! sqlmix-slots) has no differential to draw and is profiled only with `profile=all`: a
//! profile costs about a second beyond its window, which over every sweep point would not
//! fit the 15-minute matrix. `profile=all` profiles every cell and `profile=false` none.
//! A file that says `profile_repeat = true` (the servers, whose finding compares the
//! profiles at 1 thread and at the most threads) gets a second profile of those two cells
//! on the most cores: two profiles of one cell are the noise floor of that comparison.
//! Part of the plan: it runs nothing, and the profiler (`profile`) takes what it says.

use std::time::Duration;

use super::{CellSpec, MatrixPlan};
use crate::scenario_file::ProfileAt;

/// The most threads a quick-mode profile follows (see [`profiled`]).
pub const QUICK_MOST_THREADS: usize = 256;

/// Which cells to profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// No cell (`profile=false`).
    None,
    /// The cells the differentials compare (the default).
    Default,
    /// Quick mode: the largest thread count only, one flamegraph per variant and no
    /// differentials, and none past [`QUICK_MOST_THREADS`], so that `just quick` stays
    /// within two minutes (a profile costs about a second beyond its window).
    Largest,
    /// Every cell (`profile=all`).
    All,
}

/// What `profile=` asked of `plan`.
pub fn which(plan: &MatrixPlan) -> Which {
    match (plan.profile, plan.profile_all) {
        (false, _) => Which::None,
        (true, false) if plan.quick => Which::Largest,
        (true, false) => Which::Default,
        (true, true) => Which::All,
    }
}

/// Whether each of `cells` gets a profiling repetition.
pub fn profiled(cells: &[CellSpec<'_>], which: Which) -> Vec<bool> {
    cells
        .iter()
        .map(|c| match which {
            Which::None => false,
            Which::All => true,
            Which::Default | Which::Largest if c.file.threads.len() < 2 => false,
            // perf copies its events into every thread the process starts: at 2000 client
            // threads a profile took 4-6 s here, a tenth of quick mode's budget for two
            // flamegraphs; the full matrix still draws them.
            Which::Largest if c.threads > QUICK_MOST_THREADS => false,
            Which::Largest => {
                let cores = c.file.cores.iter().copied().max().unwrap_or(0);
                let most = c.file.threads.iter().copied().max().unwrap_or(0);
                c.cores == cores && c.threads == most
            }
            Which::Default => {
                let cores = c.file.cores.iter().copied().max().unwrap_or(0);
                let most = c.file.threads.iter().copied().max().unwrap_or(0);
                let ends = match c.file.profile_at {
                    ProfileAt::Sweep => c.threads == 1 || c.threads == cores,
                    ProfileAt::Most => false,
                };
                c.cores == cores && (ends || c.threads == most)
            }
        })
        .collect()
}

/// Which of `cells` get a second profiling repetition: those of a `profile_repeat` file
/// at 1 thread and at its most threads on its most cores, where `which` profiles them and
/// is not quick mode (which draws no comparison).
pub fn repeated(cells: &[CellSpec<'_>], which: Which) -> Vec<bool> {
    profiled(cells, which)
        .into_iter()
        .zip(cells)
        .map(|(chosen, c)| {
            let cores = c.file.cores.iter().copied().max().unwrap_or(0);
            let most = c.file.threads.iter().copied().max().unwrap_or(0);
            chosen
                && c.file.profile_repeat
                && matches!(which, Which::Default | Which::All)
                && c.cores == cores
                && (c.threads == 1 || c.threads == most)
        })
        .collect()
}

/// The measured window of a profiling repetition. perf samples about 2,000 times per
/// busy CPU-second, so 0.6 s gives a single busy thread about 1,200 samples (fewer on a
/// machine busy with other work); the scenario's own window is kept when longer. Quick
/// mode settles for 0.3 s.
pub fn window(duration: Duration, quick: bool) -> Duration {
    let least = if quick { 300 } else { 600 };
    duration.max(Duration::from_millis(least))
}

/// The order in which the `profiled` cells take their profiles: one of each scenario file in
/// turn (round-robin, files in plan order), so that a budget that runs out leaves every
/// file some profiles rather than the last files none.
pub fn order(cells: &[CellSpec<'_>], profiled: &[bool]) -> Vec<usize> {
    order_by_file(
        &cells
            .iter()
            .map(|c| c.file.file.as_str())
            .collect::<Vec<_>>(),
        profiled,
    )
}

/// [`order`] over the cells' file names.
fn order_by_file(files: &[&str], profiled: &[bool]) -> Vec<usize> {
    let mut seen: Vec<&str> = Vec::new();
    let mut rank = vec![0usize; files.len()];
    let mut keyed: Vec<(usize, usize, usize)> = Vec::new();
    for (i, file) in files.iter().enumerate() {
        let f = seen.iter().position(|s| s == file).unwrap_or_else(|| {
            seen.push(file);
            seen.len() - 1
        });
        if profiled[i] {
            keyed.push((rank[f], f, i));
            rank[f] += 1;
        }
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Settings;

    #[test]
    fn profiles_go_round_the_files_so_a_short_budget_leaves_each_file_some() {
        let files = ["a", "a", "a", "b", "b", "c"];
        let profiled = [true, true, true, true, false, true];
        assert_eq!(order_by_file(&files, &profiled), vec![0, 3, 5, 1, 2]);
    }

    fn plan(extra: &[&str]) -> MatrixPlan {
        let mut args = vec!["scenarios=lookup", "variants=dashmap", "threads=1,2,4,12"];
        args.extend_from_slice(extra);
        plan_of(&args)
    }

    /// The plan of `lab matrix` with exactly `args`, over the repository's scenario files.
    fn plan_of(args: &[&str]) -> MatrixPlan {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        MatrixPlan::build(&Settings::parse(&args).unwrap(), &root).unwrap()
    }

    /// Each cell's thread count and whether the plan's default choice profiles it.
    fn picks(plan: &MatrixPlan) -> Vec<(usize, bool)> {
        let cells = plan.cells();
        let picked = profiled(&cells, which(plan));
        cells.iter().map(|c| c.threads).zip(picked).collect()
    }

    #[test]
    fn by_default_threads_one_cores_and_most_at_the_most_cores() {
        let p = plan(&[]);
        let cells = p.cells();
        let most_cores = cells.iter().map(|c| c.cores).max().unwrap();
        let chosen: Vec<(usize, usize)> = cells
            .iter()
            .zip(profiled(&cells, which(&p)))
            .filter(|(_, chosen)| *chosen)
            .map(|(c, _)| (c.threads, c.cores))
            .collect();
        let mut expected = vec![(1, most_cores), (12, most_cores)];
        if [2, 4].contains(&most_cores) {
            expected.insert(1, (most_cores, most_cores));
        }
        assert_eq!(chosen, expected);
        let all = plan(&["profile=all"]);
        assert!(profiled(&all.cells(), which(&all)).iter().all(|&c| c));
        let none = plan(&["profile=false"]);
        assert!(profiled(&none.cells(), which(&none)).iter().all(|&c| !c));
        // Quick mode: only the largest thread count of each variant.
        let quick = plan(&["quick=true"]);
        assert_eq!(which(&quick), Which::Largest);
        let quick_cells = quick.cells();
        let picked: Vec<_> = quick_cells
            .iter()
            .zip(profiled(&quick_cells, Which::Largest))
            .filter(|(_, p)| *p)
            .map(|(c, _)| c.threads)
            .collect();
        let most = quick_cells.iter().map(|c| c.threads).max().unwrap();
        assert!(
            !picked.is_empty() && picked.iter().all(|&t| t == most),
            "{picked:?}"
        );
        assert!(Settings::parse(&["profile=some".to_owned()]).is_err());
    }

    #[test]
    fn quick_mode_leaves_thousand_thread_cells_to_the_full_matrix() {
        let quick = picks(&plan_of(&[
            "scenarios=pool-clients",
            "clients=100,2000",
            "quick=true",
        ]));
        assert!(quick.iter().all(|(_, p)| !p), "{quick:?}");
        let full = picks(&plan_of(&["scenarios=pool-clients", "clients=100,2000"]));
        assert!(full.iter().any(|(t, p)| *p && *t == 2000), "{full:?}");
    }

    #[test]
    fn a_file_profiled_at_its_most_threads_draws_one_flamegraph_per_cell() {
        let plan = plan_of(&["scenarios=lookup-dispatch", "variants=entry-cache"]);
        let most = plan.scenarios[0].threads.iter().copied().max().unwrap();
        let picked: Vec<usize> = picks(&plan)
            .into_iter()
            .filter(|(_, p)| *p)
            .map(|(t, _)| t)
            .collect();
        // One per dispatch, all at the most threads.
        assert_eq!(picked, vec![most; plan.scenarios[0].param_sets.len()]);
    }

    #[test]
    fn a_one_point_sweep_is_not_profiled_by_default() {
        let settings = Settings::parse(&["scenarios=sqlmix-slots".to_owned()]).unwrap();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let plan = crate::plan::MatrixPlan::build(&settings, &root).unwrap();
        let cells = plan.cells();
        assert!(profiled(&cells, Which::Default).iter().all(|p| !p));
        assert!(profiled(&cells, Which::All).iter().all(|p| *p));
    }

    #[test]
    fn a_server_file_profiles_its_two_compared_cells_twice() {
        let server = plan_of(&[
            "plan=true",
            "cpus=2",
            "scenarios=server-tiny",
            "threads=1,2,4",
        ]);
        let cells = server.cells();
        let twice: Vec<(usize, usize)> = cells
            .iter()
            .zip(repeated(&cells, which(&server)))
            .filter(|(_, r)| *r)
            .map(|(c, _)| (c.threads, c.cores))
            .collect();
        assert_eq!(twice, vec![(1, 2), (4, 2)]);
        // A file that does not ask, and quick mode, profile each cell once at most.
        let once = plan(&[]);
        assert!(repeated(&once.cells(), which(&once)).iter().all(|r| !r));
        let quick = plan_of(&["plan=true", "cpus=2", "scenarios=server-tiny", "quick=true"]);
        assert!(repeated(&quick.cells(), which(&quick)).iter().all(|r| !r));
    }

    #[test]
    fn the_window_is_at_least_long_enough_for_a_thousand_samples() {
        assert_eq!(
            window(Duration::from_millis(200), false),
            Duration::from_millis(600)
        );
        assert_eq!(
            window(Duration::from_secs(2), false),
            Duration::from_secs(2)
        );
        assert_eq!(
            window(Duration::from_millis(200), true),
            Duration::from_millis(300)
        );
    }
}

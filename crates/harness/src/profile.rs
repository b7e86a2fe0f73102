//! CPU profiles of a cell: sampling with pprof-rs, folded stacks, flamegraphs and
//! differential flamegraphs rendered with inferno.
//!
//! Only worker threads are kept (their names are `worker-N`, folded to `worker` so that
//! profiles of different thread counts line up frame for frame); the controller and setup
//! on the main thread would only add noise. pprof samples with `setitimer(ITIMER_PROF)`,
//! which this kernel caps near 250 samples per CPU-second whatever frequency is asked:
//! a profile under [`THIN_SAMPLES`] samples is marked thin.
//!
//! This module does not decide when to profile or where files go: `lab` does.

use std::fmt::Write as _;
use std::io::BufReader;
use std::path::Path;

use crate::schema::ProfileRef;

/// Below this many samples a flamegraph is too thin to read.
pub const THIN_SAMPLES: u64 = 200;

/// Frequency asked of the sampler (the kernel delivers less; see the module doc).
const FREQUENCY_HZ: i32 = 997;

/// Libraries in which unwinding from a signal handler is not safe (pprof-rs README).
const BLOCKLIST: &[&str] = &["libc", "libgcc", "pthread", "vdso"];

/// A running CPU sampler for this process.
pub struct Sampler {
    guard: pprof::ProfilerGuard<'static>,
}

/// What a sampler saw: folded stacks (`frame;frame;frame count`), workers only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folded {
    /// One line per distinct stack, sorted.
    pub lines: Vec<String>,
    /// Total samples in `lines`.
    pub samples: u64,
}

impl Sampler {
    /// Starts sampling every thread of the process.
    pub fn start() -> Result<Sampler, String> {
        pprof::ProfilerGuardBuilder::default()
            .frequency(FREQUENCY_HZ)
            .blocklist(BLOCKLIST)
            .build()
            .map(|guard| Sampler { guard })
            .map_err(|e| format!("cannot start the CPU profiler: {e}"))
    }

    /// Stops sampling and folds what was seen.
    pub fn finish(self) -> Result<Folded, String> {
        let report = self
            .guard
            .report()
            .build()
            .map_err(|e| format!("cannot build the CPU profile: {e}"))?;
        let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
        for (frames, count) in &report.data {
            let Some(thread) = worker_thread(&frames.thread_name) else {
                continue;
            };
            let mut line = thread.to_owned();
            for frame in frames.frames.iter().rev() {
                for symbol in frame.iter().rev() {
                    line.push(';');
                    // Semicolons and spaces would break the folded format.
                    let _ = write!(line, "{}", symbol.to_string().replace([';', ' '], "_"));
                }
            }
            *counts.entry(line).or_default() += (*count).max(0) as u64;
        }
        let samples = counts.values().sum();
        let lines = counts
            .into_iter()
            .map(|(stack, count)| format!("{stack} {count}"))
            .collect();
        Ok(Folded { lines, samples })
    }
}

/// `worker-12` -> `worker`; `None` for threads that are not workers.
fn worker_thread(name: &str) -> Option<&'static str> {
    let rest = name.strip_prefix("worker")?;
    (rest.is_empty() || rest.starts_with('-')).then_some("worker")
}

/// Renders folded stacks as a flamegraph SVG (inferno).
pub fn render_flamegraph(lines: &[String], title: &str, subtitle: &str) -> Result<Vec<u8>, String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    options.subtitle = Some(subtitle.to_owned());
    options.count_name = "samples".to_owned();
    let mut svg = Vec::new();
    if lines.is_empty() {
        // inferno refuses empty input; a placeholder says why there is no graph.
        let note = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"60\"><text x=\"10\" y=\"35\">{}: no samples</text></svg>",
            escape(title)
        );
        return Ok(note.into_bytes());
    }
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| format!("cannot render the flamegraph: {e}"))?;
    Ok(svg)
}

/// Writes `folded` to `folded_path` and its flamegraph to `svg_path`; returns the record's
/// `profile` with the paths as given (callers pass them relative to the project root and
/// run in it).
pub fn write_profile(
    folded: &Folded,
    folded_path: &Path,
    svg_path: &Path,
    title: &str,
) -> Result<ProfileRef, String> {
    if let Some(dir) = svg_path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let thin = if folded.samples < THIN_SAMPLES {
        " (thin)"
    } else {
        ""
    };
    let subtitle = format!("{} samples{thin}; worker threads only", folded.samples);
    let svg = render_flamegraph(&folded.lines, title, &subtitle)?;
    let mut text = folded.lines.join("\n");
    text.push('\n');
    std::fs::write(folded_path, text)
        .map_err(|e| format!("cannot write {}: {e}", folded_path.display()))?;
    std::fs::write(svg_path, svg)
        .map_err(|e| format!("cannot write {}: {e}", svg_path.display()))?;
    Ok(ProfileRef {
        svg: svg_path.display().to_string(),
        folded: folded_path.display().to_string(),
        samples: folded.samples,
    })
}

/// A differential flamegraph from two folded files: the shape of `after`, red where a
/// frame takes a larger share of samples than in `before`, blue where smaller. Counts are
/// normalized, so two runs of different lengths compare.
pub fn render_differential(before: &Path, after: &Path, title: &str) -> Result<Vec<u8>, String> {
    let open = |p: &Path| {
        std::fs::File::open(p)
            .map(BufReader::new)
            .map_err(|e| format!("cannot read {}: {e}", p.display()))
    };
    let options = inferno::differential::Options {
        normalize: true,
        ..Default::default()
    };
    let mut diff = Vec::new();
    inferno::differential::from_readers(options, open(before)?, open(after)?, &mut diff).map_err(
        |e| {
            format!(
                "cannot diff {} and {}: {e}",
                before.display(),
                after.display()
            )
        },
    )?;
    let text = String::from_utf8_lossy(&diff);
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    render_flamegraph(
        &lines,
        title,
        "red: larger share of samples than in the first profile; blue: smaller",
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_threads_fold_to_one_name() {
        assert_eq!(worker_thread("worker-0"), Some("worker"));
        assert_eq!(worker_thread("worker-11"), Some("worker"));
        assert_eq!(worker_thread("worker"), Some("worker"));
        assert_eq!(worker_thread("main"), None);
        assert_eq!(worker_thread("workerbee"), None);
    }

    #[test]
    fn sampling_a_busy_worker_yields_its_frames() {
        let sampler = Sampler::start().unwrap();
        std::thread::Builder::new()
            .name("worker-0".into())
            .spawn(|| {
                let start = std::time::Instant::now();
                let mut x = 0u64;
                while start.elapsed() < std::time::Duration::from_millis(300) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            })
            .unwrap()
            .join()
            .unwrap();
        let folded = sampler.finish().unwrap();
        assert!(folded.samples > 0, "300 ms of CPU gave no sample");
        assert!(
            folded.lines.iter().all(|l| l.starts_with("worker;")),
            "{:?}",
            folded.lines
        );
        let total: u64 = folded
            .lines
            .iter()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(total, folded.samples);
    }

    #[test]
    fn writes_folded_and_svg_and_a_differential() {
        let dir = tempfile::tempdir().unwrap();
        let one = Folded {
            lines: vec![
                "worker;search;lock 10".into(),
                "worker;search;copy 90".into(),
            ],
            samples: 100,
        };
        let many = Folded {
            lines: vec![
                "worker;search;lock 160".into(),
                "worker;search;copy 40".into(),
            ],
            samples: 200,
        };
        let p1 = write_profile(
            &one,
            &dir.path().join("t1.folded"),
            &dir.path().join("t1.svg"),
            "t=1",
        )
        .unwrap();
        let p2 = write_profile(
            &many,
            &dir.path().join("t4.folded"),
            &dir.path().join("t4.svg"),
            "t=4",
        )
        .unwrap();
        assert_eq!((p1.samples, p2.samples), (100, 200));
        let svg = std::fs::read_to_string(&p1.svg).unwrap();
        assert!(svg.contains("<svg") && svg.contains("copy") && svg.contains("(thin)"));
        assert_eq!(
            std::fs::read_to_string(&p1.folded).unwrap().lines().count(),
            2
        );
        let diff = render_differential(Path::new(&p1.folded), Path::new(&p2.folded), "t=1 vs t=4")
            .unwrap();
        let diff = String::from_utf8(diff).unwrap();
        assert!(diff.contains("lock") && diff.contains("<svg"));
        assert!(
            render_differential(Path::new("/nonexistent"), Path::new(&p2.folded), "x").is_err()
        );
    }
}

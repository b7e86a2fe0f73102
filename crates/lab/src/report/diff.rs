//! Flamegraph drawings a report needs: differentials between threads=1 and the most
//! threads profiled, and cell flamegraphs redrawn from their folded stacks. Both are
//! queued on [`Outputs`], never written here.

use std::path::Path;

use harness::RunRecord;

use super::group::{slugify, DiffRef, Group};
use super::output::Outputs;
use super::Source;

/// The differential flamegraph between threads=1 and the most threads profiled, when
/// both profiles exist on disk.
pub(super) fn differential(
    root: &Path,
    source: &Source,
    g: &Group<'_>,
    variant: &str,
    cores: usize,
    outputs: &mut Outputs,
) -> Option<DiffRef> {
    let profiled: Vec<&RunRecord> = g
        .threads
        .iter()
        .filter_map(|&t| g.cell(variant, t, cores))
        .filter(|c| {
            c.profile
                .as_ref()
                .is_some_and(|p| root.join(&p.folded).is_file())
        })
        .collect();
    let (Some(first), Some(last)) = (profiled.first(), profiled.last()) else {
        return None;
    };
    if first.threads != 1 || last.threads == 1 {
        return None;
    }
    let (a, b) = (
        first.profile.as_ref().expect("filtered"),
        last.profile.as_ref().expect("filtered"),
    );
    let stem = format!(
        "profiles/{}/diff/{}-{}-c{cores}-t1-vs-t{}",
        source.results.run_id,
        g.slug,
        slugify(variant),
        last.threads
    );
    let title = format!(
        "{} / {variant}, {cores} core(s): threads=1 vs threads={}",
        g.title_name(),
        last.threads
    );
    let rel = format!("{stem}.svg");
    let samples = (a.samples, b.samples);
    let queue = |outputs: &mut Outputs,
                 rel: &str,
                 x: &str,
                 y: &str,
                 what: &str,
                 counts,
                 unit: &'static str| {
        let (x, y, title) = (root.join(x), root.join(y), format!("{title}, {what}"));
        outputs.add(root.join(rel), move || {
            crate::flame::render_differential(&x, &y, &title, counts, unit)
                .map_err(anyhow::Error::msg)
        });
    };
    queue(
        outputs, &rel, &a.folded, &b.folded, "on-CPU", samples, "samples",
    );
    let off_cpu = match (&a.off_cpu, &b.off_cpu) {
        (Some(x), Some(y))
            if root.join(&x.folded).is_file()
                && root.join(&y.folded).is_file()
                && x.measured_seconds.is_some() =>
        {
            let off_rel = format!("{stem}.offcpu.svg");
            let counts = (x.samples, y.samples);
            queue(
                outputs,
                &off_rel,
                &x.folded,
                &y.folded,
                "off-CPU",
                counts,
                "wait stacks",
            );
            Some((off_rel, counts))
        }
        _ => None,
    };
    Some(DiffRef {
        variant: variant.to_owned(),
        cores,
        from_threads: 1,
        to_threads: last.threads,
        svg: rel,
        samples,
        off_cpu,
    })
}

/// Redraws a cell flamegraph whose SVG is missing but whose folded stacks are there
/// (folded stacks are the source of truth; SVGs can be deleted to save space).
pub(super) fn restore_flamegraphs(
    root: &Path,
    sources: &[Source],
    outputs: &mut Outputs,
) -> anyhow::Result<()> {
    for cell in sources.iter().flat_map(|s| &s.results.cells) {
        let Some(p) = &cell.profile else { continue };
        let (svg, folded) = (root.join(&p.svg), root.join(&p.folded));
        if svg.is_file() || !folded.is_file() {
            continue;
        }
        let lines: Vec<String> = std::fs::read_to_string(&folded)?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
        let title = format!(
            "{} / {}  threads={} cores={}",
            cell.hot_path, cell.variant, cell.threads, cell.cores
        );
        let subtitle = crate::flame::cpu_subtitle(
            p.samples,
            &format!(
                "{} at {} Hz (redrawn from the folded stacks)",
                p.sampler, p.rate_hz
            ),
        );
        outputs.add(svg, move || {
            crate::flame::render_flamegraph(&lines, &title, &subtitle, "samples")
                .map_err(anyhow::Error::msg)
        });
    }
    Ok(())
}

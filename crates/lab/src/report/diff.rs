//! Flamegraph drawings a report needs: differentials between threads=1 and the most
//! threads profiled, and cell flamegraphs redrawn from their folded stacks. Both are
//! returned as [`Placed`] drawings, never drawn or written here.

use std::path::Path;

use harness::CellRecord;

use super::drawing::{Drawing, Place, Placed};
use super::group::{slugify, DiffRef, Group};
use super::Source;

/// The differential flamegraph between threads=1 and the most threads profiled, when
/// both profiles exist on disk, with its drawings (on-CPU, and off-CPU where both have
/// one).
pub(super) fn differential(
    root: &Path,
    source: &Source,
    g: &Group<'_>,
    variant: &str,
    cores: usize,
) -> Option<(DiffRef, Vec<Placed>)> {
    let (first, last) = ends(root, g, variant, cores)?;
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
    let plan = |rel: &str, x: &str, y: &str, what: &str, counts, unit: &'static str| Placed {
        place: Place::Root(rel.to_owned()),
        drawing: Drawing::Differential {
            folded: (x.into(), y.into()),
            title: format!("{title}, {what}"),
            counts,
            unit,
        },
    };
    let mut drawings = vec![plan(
        &rel, &a.folded, &b.folded, "on-CPU", samples, "samples",
    )];
    let off_cpu = match (&a.off_cpu, &b.off_cpu) {
        (Some(x), Some(y))
            if root.join(&x.folded).is_file()
                && root.join(&y.folded).is_file()
                && x.measured_seconds.is_some() =>
        {
            let off_rel = format!("{stem}.offcpu.svg");
            let counts = (x.samples, y.samples);
            drawings.push(plan(
                &off_rel,
                &x.folded,
                &y.folded,
                "off-CPU",
                counts,
                "wait stacks",
            ));
            Some((off_rel, counts))
        }
        _ => None,
    };
    let diff = DiffRef {
        variant: variant.to_owned(),
        cores,
        from_threads: 1,
        to_threads: last.threads,
        svg: rel,
        samples,
        off_cpu,
    };
    Some((diff, drawings))
}

/// The first and last profiled cells of `variant` at `cores` whose folded stacks are on
/// disk, when they are threads = 1 and more threads.
fn ends<'g>(
    root: &Path,
    g: &'g Group<'_>,
    variant: &str,
    cores: usize,
) -> Option<(&'g CellRecord, &'g CellRecord)> {
    let profiled: Vec<&CellRecord> = g
        .threads
        .iter()
        .filter_map(|&t| g.cell(variant, t, cores))
        .filter(|c| {
            c.profile
                .as_ref()
                .is_some_and(|p| root.join(&p.folded).is_file())
        })
        .collect();
    let (first, last) = (*profiled.first()?, *profiled.last()?);
    (first.threads == 1 && last.threads != 1).then_some((first, last))
}

/// Redraws a cell flamegraph whose SVG is missing but whose folded stacks are there
/// (folded stacks are the source of truth; SVGs can be deleted to save space).
pub(super) fn restore_flamegraphs(root: &Path, source: &Source) -> Vec<Placed> {
    let mut out = Vec::new();
    for cell in &source.results.cells {
        let Some(p) = &cell.profile else { continue };
        if root.join(&p.svg).is_file() || !root.join(&p.folded).is_file() {
            continue;
        }
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
        out.push(Placed {
            place: Place::Root(p.svg.clone()),
            drawing: Drawing::Flamegraph {
                folded: p.folded.clone().into(),
                title: (title, subtitle),
            },
        });
    }
    out
}

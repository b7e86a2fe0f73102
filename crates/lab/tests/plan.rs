//! `lab matrix plan=true`: the plan in the lines scripts read, nothing run, no results
//! file written; `cpus=` only with it.

mod common;

use common::{copy_benches, lab};

/// One scenario file's plan line: file, cores, axis word, counts, cells, runs.
type FileLine = (String, Vec<usize>, String, Vec<usize>, usize, usize);

/// The parts of one plan line, `<file>: cores <list>; <axis> <list>; <n> cells, <n> runs,
/// about <duration>[; trimmed ...]`, or `None` when it does not have that shape.
fn parse_file_line(line: &str) -> Option<FileLine> {
    let (file, rest) = line.split_once(": ")?;
    let parts: Vec<&str> = rest.split("; ").collect();
    let cores = list(parts.first()?.strip_prefix("cores ")?)?;
    let axis = parts.get(1)?;
    let (word, counts) = ["fixed at threads ", "threads ", "clients "]
        .iter()
        .find_map(|w| axis.strip_prefix(w).map(|c| (w.trim().to_owned(), c)))?;
    let (cells, runs) = totals(parts.get(2)?)?;
    if parts.len() > 3 && !parts[3].starts_with("trimmed ") {
        return None;
    }
    Some((file.to_owned(), cores, word, list(counts)?, cells, runs))
}

/// `<n> cells, <n> runs, about <duration>` -> cells, runs (the duration must parse).
fn totals(text: &str) -> Option<(usize, usize)> {
    let words: Vec<&str> = text.split(' ').collect();
    match words.as_slice() {
        [cells, "cells,", runs, "runs,", "about", duration] => {
            humantime::parse_duration(duration).ok()?;
            Some((cells.parse().ok()?, runs.parse().ok()?))
        }
        _ => None,
    }
}

fn list(text: &str) -> Option<Vec<usize>> {
    text.split(',').map(|n| n.parse().ok()).collect()
}

#[test]
fn plan_true_prints_the_plan_and_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    copy_benches(dir.path());
    for extra in [
        &[][..],
        &["cpus=64"],
        &["cpus=16", "quick=true"],
        &["repeats=3", "budget=none"],
    ] {
        let mut args = vec!["matrix", "plan=true"];
        args.extend_from_slice(extra);
        let out = lab(dir.path(), &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{extra:?}: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        let (last, files) = lines.split_last().expect("a plan");
        assert!(files.len() >= 10, "{stdout}");
        let mut sum = (0, 0);
        for line in files {
            let (file, cores, _, counts, cells, runs) =
                parse_file_line(line).unwrap_or_else(|| panic!("{extra:?}: {line:?}"));
            assert!(
                file.ends_with(".toml") && !cores.is_empty() && !counts.is_empty(),
                "{line}"
            );
            sum = (sum.0 + cells, sum.1 + runs);
        }
        let total = last.strip_prefix("plan: ").and_then(totals);
        assert_eq!(total, Some(sum), "{extra:?}: {last:?}");
        assert!(stderr.contains("costs: "), "{stderr}");
    }
    assert!(
        !dir.path().join("reports").exists(),
        "plan=true wrote something"
    );
    assert!(!dir.path().join("profiles").exists());
}

#[test]
fn cpus_without_plan_true_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    copy_benches(dir.path());
    let out = lab(dir.path(), &["matrix", "cpus=64"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cpus=64: only with plan=true"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!dir.path().join("reports").exists());
}

#[test]
fn every_part_of_the_default_plan_is_named_in_the_readme_as_the_report_names_it() {
    // One name for a part in code, README and report: the plan lists every hot path's
    // parts by the names findings.json carries, and the README's table must use them.
    let dir = tempfile::tempdir().unwrap();
    copy_benches(dir.path());
    let out = lab(dir.path(), &["matrix", "plan=true", "cpus=64"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let names: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_once(": "))
        // A part's name has no spaces; the budget's line ("the budget may not give ...")
        // is no part.
        .filter(|(name, _)| !name.contains(' '))
        .filter(|(_, rest)| rest.starts_with("not asked") || rest.contains(" pairs"))
        .map(|(name, _)| name)
        .collect();
    assert!(names.len() >= 20, "{stderr}");
    for named in names {
        // The plan names a part after its hot path (`lookup/short_of_linear`), as the
        // report's table of parts sits under its hot path's finding.
        let (_, name) = named.split_once('/').expect("hot path/part");
        // A server file's parts carry its file's name (`my-memcached/recommendation`),
        // which the README writes once and then as `/recommendation`.
        let suffix = name.rsplit_once('/').map(|(_, s)| s);
        let named = readme.contains(&format!("`{name}`"))
            || suffix.is_some_and(|s| readme.contains(&format!("`/{s}`")));
        assert!(named, "part `{name}` is not named in README.md");
    }
}

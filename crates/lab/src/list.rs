//! `lab list`: the hot paths with their variants and parameters, then the scenario files.
//!
//! It only prints; the catalog and the scenario files own what is listed.

use std::path::Path;

use crate::scenario_file;

/// Prints the hot paths, their variants and parameters, and the scenario files.
pub fn print_list(root: &Path) -> anyhow::Result<()> {
    for hot_path in crate::catalog::hot_paths() {
        println!("{}: {}", hot_path.name(), hot_path.summary());
        println!("  variants:");
        for v in hot_path.variants() {
            println!("    {:<20} {}", v.name, v.summary);
        }
        if !hot_path.params().is_empty() {
            println!("  parameters (default; accepted):");
            for p in hot_path.params() {
                println!(
                    "    {:<14} {:<8} {}; {}",
                    p.name,
                    p.default,
                    p.help,
                    p.accepted()
                );
            }
        }
        println!();
    }
    println!("scenario files ({}):", root.join("benches").display());
    let (files, broken) =
        scenario_file::load_folder(&root.join("benches")).map_err(anyhow::Error::msg)?;
    // A broken file does not hide the others: it is named, with its error, on stderr.
    for b in &broken {
        eprintln!("warning: does not read: {}", b.error);
    }
    for f in files {
        println!(
            "  {:<20} hot path {:<8} {:<28} {}{}",
            f.name,
            f.hot_path.name(),
            f.axis_words(&f.normal.threads.to_string()),
            if f.in_default {
                ""
            } else {
                "(not in the default matrix) "
            },
            f.description
        );
    }
    Ok(())
}

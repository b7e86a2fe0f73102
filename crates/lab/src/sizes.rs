//! Sizes relative to the machine: the entries of a scenario file's `threads` and `cores`
//! lists.
//!
//! An entry is a count (`12`), a multiple of the CPUs the matrix plans for (`"nproc"`,
//! `"2nproc"`, `"6nproc"`, the words sqlmix's `slots` already takes), or, for cores,
//! `"powers of two"` (1, 2, 4, ... up to the CPUs). A list resolves against one CPU count
//! to sorted counts without repeats, so `[1, 2, 4, 6, 12, "nproc", "2nproc", "6nproc"]` is
//! 1,2,4,6,12 on 2 CPUs and 1,2,4,6,12,64,128,384 on 64. Reading the file is
//! `scenario_file`'s job and choosing which list applies is `plan`'s; this module only
//! parses entries and resolves them.

use std::fmt;

/// One entry of a `threads` or `cores` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// That many.
    Count(usize),
    /// That many times the CPUs (`"nproc"` is 1, `"2nproc"` 2).
    Nproc(usize),
    /// 1, 2, 4, ... up to the CPUs (cores only).
    PowersOfTwo,
}

/// The text of the `"powers of two"` entry.
pub const POWERS_OF_TWO: &str = "powers of two";

impl Size {
    /// Parses one entry of a list; `cores` says whether `"powers of two"` is accepted.
    pub fn parse(value: &toml::Value, cores: bool) -> Result<Size, String> {
        let accepted = if cores {
            "expected an integer of at least 1, \"nproc\", \"<k>nproc\" (e.g. \"2nproc\") or \"powers of two\""
        } else {
            "expected an integer of at least 1, \"nproc\" or \"<k>nproc\" (e.g. \"2nproc\")"
        };
        let bad = |shown: String| format!("{shown} is not accepted: {accepted}");
        match value {
            toml::Value::Integer(n) => usize::try_from(*n)
                .ok()
                .filter(|&n| n >= 1)
                .map(Size::Count)
                .ok_or_else(|| bad(n.to_string())),
            toml::Value::String(text) => {
                let t = text.trim();
                if cores && t == POWERS_OF_TWO {
                    return Ok(Size::PowersOfTwo);
                }
                let factor = t.strip_suffix("nproc").map(str::trim);
                match factor {
                    Some("") => Ok(Size::Nproc(1)),
                    Some(k) => k
                        .parse::<usize>()
                        .ok()
                        .filter(|&k| (1..=1024).contains(&k))
                        .map(Size::Nproc)
                        .ok_or_else(|| bad(format!("{text:?}"))),
                    None => Err(bad(format!("{text:?}"))),
                }
            }
            other => Err(bad(other.to_string())),
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Count(n) => write!(f, "{n}"),
            Size::Nproc(1) => write!(f, "nproc"),
            Size::Nproc(k) => write!(f, "{k}nproc"),
            Size::PowersOfTwo => write!(f, "{POWERS_OF_TWO}"),
        }
    }
}

/// A `threads` or `cores` list as the file wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sizes(pub Vec<Size>);

impl Sizes {
    /// Parses a list (at least one entry), every count at most `max`.
    pub fn parse(values: &[toml::Value], cores: bool, max: usize) -> Result<Sizes, String> {
        if values.is_empty() {
            return Err("empty list".into());
        }
        let sizes = values
            .iter()
            .map(|v| Size::parse(v, cores))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(n) = sizes.iter().find_map(|s| match s {
            Size::Count(n) if *n > max => Some(*n),
            _ => None,
        }) {
            return Err(format!(
                "{n} is not accepted: expected integers in 1..={max}"
            ));
        }
        Ok(Sizes(sizes))
    }

    /// Plain counts, as a file of fixed sizes gives them.
    #[cfg(test)]
    pub fn counts(counts: &[usize]) -> Sizes {
        Sizes(counts.iter().map(|&n| Size::Count(n)).collect())
    }

    /// Whether any entry depends on the CPUs.
    pub fn relative(&self) -> bool {
        self.0.iter().any(|s| !matches!(s, Size::Count(_)))
    }

    /// The counts on a machine of `nproc` CPUs, ascending and without repeats: multiples
    /// above `max` are cut to `max`; with `cut_above_nproc` (cores) counts above `nproc`
    /// are left out, as a machine cannot give more cores than it has.
    pub fn resolve(&self, nproc: usize, max: usize, cut_above_nproc: bool) -> Vec<usize> {
        let nproc = nproc.max(1);
        let mut out: Vec<usize> = Vec::new();
        for size in &self.0 {
            match *size {
                Size::Count(n) => out.push(n),
                Size::Nproc(k) => out.push(k.saturating_mul(nproc).min(max)),
                Size::PowersOfTwo => out.extend(
                    std::iter::successors(Some(1usize), |c| c.checked_mul(2))
                        .take_while(|&c| c <= nproc),
                ),
            }
        }
        if cut_above_nproc {
            out.retain(|&c| c <= nproc);
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(Size::to_string).collect();
        write!(f, "{}", parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(text: &str, cores: bool) -> Result<Sizes, String> {
        let table: toml::Table = toml::from_str(&format!("v = {text}")).unwrap();
        let values = table["v"].as_array().unwrap().clone();
        Sizes::parse(&values, cores, 4096)
    }

    #[test]
    fn relative_lists_resolve_per_machine() {
        let threads = sizes(r#"[1, 2, 4, 6, 12, "nproc", "2nproc", "6nproc"]"#, false).unwrap();
        assert!(threads.relative());
        assert_eq!(threads.resolve(2, 4096, false), [1, 2, 4, 6, 12]);
        assert_eq!(
            threads.resolve(16, 4096, false),
            [1, 2, 4, 6, 12, 16, 32, 96]
        );
        assert_eq!(
            threads.resolve(64, 4096, false),
            [1, 2, 4, 6, 12, 64, 128, 384]
        );
        assert_eq!(threads.resolve(1024, 4096, false).last(), Some(&4096));
        assert_eq!(threads.to_string(), "1,2,4,6,12,nproc,2nproc,6nproc");

        let cores = sizes(r#"["powers of two", "nproc"]"#, true).unwrap();
        assert_eq!(cores.resolve(1, usize::MAX, true), [1]);
        assert_eq!(cores.resolve(2, usize::MAX, true), [1, 2]);
        assert_eq!(cores.resolve(6, usize::MAX, true), [1, 2, 4, 6]);
        assert_eq!(
            cores.resolve(64, usize::MAX, true),
            [1, 2, 4, 8, 16, 32, 64]
        );
        let fixed = sizes("[2, 8]", true).unwrap();
        assert!(!fixed.relative());
        assert_eq!(fixed.resolve(4, usize::MAX, true), [2]);
    }

    #[test]
    fn bad_entries_name_what_is_accepted() {
        for (text, cores, expected) in [
            (
                "[0]",
                false,
                "0 is not accepted: expected an integer of at least 1",
            ),
            (
                r#"["powers of two"]"#,
                false,
                "\"powers of two\" is not accepted",
            ),
            (r#"["xnproc"]"#, true, "\"xnproc\" is not accepted"),
            (r#"["0nproc"]"#, false, "\"0nproc\" is not accepted"),
            (
                "[5000]",
                false,
                "5000 is not accepted: expected integers in 1..=4096",
            ),
            ("[]", false, "empty list"),
            ("[1.5]", false, "1.5 is not accepted"),
        ] {
            let err = sizes(text, cores).unwrap_err();
            assert!(err.contains(expected), "{text}: {err}");
            assert_eq!(err.lines().count(), 1);
        }
    }
}

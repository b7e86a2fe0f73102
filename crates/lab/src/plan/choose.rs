//! The one rule by which a scenario file's plan gets each value: the setting the user
//! typed wins, else the file's own value, and the file's settings line records which
//! ("set here duration=1s; as the file has them: warmup 60ms").
//!
//! Every value of [`super::ScenarioPlan`] that a setting may change goes through
//! [`Provenance::choose`] or [`Provenance::take`]; what a budget trims later is recorded
//! by `budget`, not here.

use crate::scenario_file::ScenarioFile;

/// Which of the user's settings reached one scenario file, for its settings line.
#[derive(Debug, Default)]
pub(super) struct Provenance {
    applied: Vec<String>,
    kept: Vec<String>,
}

impl Provenance {
    /// `typed` (shown as given) when the user set it, else the file's own value (shown as
    /// given); records which in the settings line.
    pub(super) fn take<T>(
        &mut self,
        typed: Option<(String, T)>,
        own: impl FnOnce() -> (String, T),
    ) -> T {
        match typed {
            Some((shown, value)) => {
                self.applied.push(shown);
                value
            }
            None => {
                let (shown, value) = own();
                self.kept.push(shown);
                value
            }
        }
    }

    /// [`Provenance::take`] for a value shown the usual way: `name=text` when typed,
    /// `name text` when the file's.
    pub(super) fn choose<T>(
        &mut self,
        name: &str,
        typed: Option<T>,
        own: T,
        text: impl Fn(&T) -> String,
    ) -> T {
        let typed = typed.map(|v| (format!("{name}={}", text(&v)), v));
        self.take(typed, || (format!("{name} {}", text(&own)), own))
    }

    /// Records a setting that applied without a file value beside it (a parameter the
    /// file does not sweep).
    pub(super) fn applied(&mut self, shown: String) {
        self.applied.push(shown);
    }

    /// Records a file value no setting could change.
    pub(super) fn kept(&mut self, shown: String) {
        self.kept.push(shown);
    }

    /// The settings line: `lookup.toml (threads axis): set here ...; as the file has them:
    /// ...`.
    pub(super) fn line(&self, file: &ScenarioFile) -> String {
        let list = |items: &[String]| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        format!(
            "{}.toml ({} axis): set here {}; as the file has them: {}",
            file.name,
            file.axis.name(),
            list(&self.applied),
            list(&self.kept)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_wins_and_the_line_says_which() {
        let file = crate::scenario_file::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/lookup.toml"),
        )
        .unwrap();
        let mut how = Provenance::default();
        let text = |n: &usize| n.to_string();
        assert_eq!(how.choose("repeats", Some(3), 8, text), 3);
        assert_eq!(how.choose("warmup", None, 60, text), 60);
        let own = how.take(None, || ("cores 1,2 (the default)".to_owned(), vec![1, 2]));
        assert_eq!(own, [1, 2]);
        how.applied("users=300".into());
        assert_eq!(
            how.line(&file),
            "lookup.toml (threads axis): set here repeats=3, users=300; as the file has them: warmup 60, cores 1,2 (the default)"
        );
        assert!(Provenance::default()
            .line(&file)
            .contains("set here none; as the file has them: none"));
    }
}

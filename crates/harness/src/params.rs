//! Typed scenario parameters: what a hot path accepts, with defaults, validation and one-
//! line errors that name the parameter and what is accepted.
//!
//! Values are kept as JSON values because that is how they appear in the result schema
//! (`params`). This module does not know where values come from (TOML, command line).

use std::collections::BTreeMap;

use serde_json::Value;

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
    /// An integer in `min..=max`, or one of a few words with a meaning of their own
    /// (e.g. `unlimited`, `nproc`).
    IntOr {
        /// Smallest accepted integer.
        min: i64,
        /// Largest accepted integer.
        max: i64,
        /// Words also accepted.
        words: &'static [&'static str],
    },
    /// Free text, such as a folder.
    Text,
}

/// One parameter of a hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// Name as written on the command line and in scenario files, e.g. `write_pct`.
    pub name: &'static str,
    /// Accepted values.
    pub kind: ParamKind,
    /// Default, written as a user would write it.
    pub default: &'static str,
    /// One line saying what it changes.
    pub help: &'static str,
}

impl ParamSpec {
    /// What the parameter accepts, in words, e.g. `an integer in 0..=100`.
    pub fn accepted(&self) -> String {
        match self.kind {
            ParamKind::Int { min, max } => format!("an integer in {min}..={max}"),
            ParamKind::Choice(words) => format!("one of {}", words.join(", ")),
            ParamKind::Bool => "true or false".to_owned(),
            ParamKind::IntOr { min, max, words } => {
                format!("an integer in {min}..={max} or one of {}", words.join(", "))
            }
            ParamKind::Text => "any text".to_owned(),
        }
    }

    /// Parses one value written as text.
    pub fn parse(&self, text: &str) -> Result<Value, String> {
        let text = text.trim();
        let bad = || format!("{}={text:?}: expected {}", self.name, self.accepted());
        match self.kind {
            ParamKind::Int { min, max } => {
                let n: i64 = text.parse().map_err(|_| bad())?;
                if n < min || n > max {
                    return Err(bad());
                }
                Ok(Value::from(n))
            }
            ParamKind::Choice(words) => words
                .iter()
                .find(|w| **w == text)
                .map(|w| Value::from(*w))
                .ok_or_else(bad),
            ParamKind::Bool => match text {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(bad()),
            },
            ParamKind::IntOr { min, max, words } => {
                if let Some(w) = words.iter().find(|w| **w == text) {
                    return Ok(Value::from(*w));
                }
                match text.parse::<i64>() {
                    Ok(n) if n >= min && n <= max => Ok(Value::from(n)),
                    _ => Err(bad()),
                }
            }
            ParamKind::Text => Ok(Value::from(text)),
        }
    }

    /// Parses a comma-separated list of values (a sweep), e.g. `write_pct=0,10,50`.
    pub fn parse_list(&self, text: &str) -> Result<Vec<Value>, String> {
        if text.trim().is_empty() {
            return Err(format!("{}=: expected {}", self.name, self.accepted()));
        }
        text.split(',').map(|part| self.parse(part)).collect()
    }
}

/// Concrete parameter values for one cell, checked against the hot path's specs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(BTreeMap<String, Value>);

impl Params {
    /// Every parameter at its default.
    pub fn defaults(specs: &[ParamSpec]) -> Params {
        Params(
            specs
                .iter()
                .map(|s| {
                    let value = s.parse(s.default).expect("a spec's default is valid");
                    (s.name.to_owned(), value)
                })
                .collect(),
        )
    }

    /// Sets `name` from text, refusing unknown names and bad values.
    pub fn set(&mut self, specs: &[ParamSpec], name: &str, text: &str) -> Result<(), String> {
        let spec = find_spec(specs, name)?;
        self.0.insert(spec.name.to_owned(), spec.parse(text)?);
        Ok(())
    }

    /// Sets `name` to an already parsed value.
    pub fn insert(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }

    /// Builds params from a schema `params` object (as found in a results file), checking
    /// each against the specs.
    pub fn from_map(specs: &[ParamSpec], map: &BTreeMap<String, Value>) -> Result<Params, String> {
        let mut params = Params::defaults(specs);
        for (name, value) in map {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            params.set(specs, name, &text)?;
        }
        Ok(params)
    }

    /// An integer parameter. Panics if the hot path asks for a name it did not declare.
    pub fn int(&self, name: &str) -> i64 {
        self.0
            .get(name)
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("integer parameter {name} is not declared"))
    }

    /// An integer parameter as a count (declared with a non-negative minimum).
    pub fn count(&self, name: &str) -> usize {
        usize::try_from(self.int(name)).unwrap_or(0)
    }

    /// A choice parameter.
    pub fn word(&self, name: &str) -> &str {
        self.0
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("choice parameter {name} is not declared"))
    }

    /// A parameter's value as given (for kinds that take more than one shape).
    pub fn value(&self, name: &str) -> &Value {
        self.0
            .get(name)
            .unwrap_or_else(|| panic!("parameter {name} is not declared"))
    }

    /// A text parameter.
    pub fn text(&self, name: &str) -> &str {
        self.word(name)
    }

    /// A text parameter naming a file or folder; empty text means none, which is how a
    /// scenario file or command line leaves such a parameter unset.
    pub fn path(&self, name: &str) -> Option<&std::path::Path> {
        let text = self.text(name);
        (!text.is_empty()).then(|| std::path::Path::new(text))
    }

    /// A choice parameter as the `'static` word of `choices` it equals, for settings that
    /// outlive the parameters (a database's pragma). `choices` is the list the parameter
    /// was declared with, so a value that is not among them is a bug in the hot path and
    /// panics like an undeclared name.
    pub fn choice(&self, name: &str, choices: &'static [&'static str]) -> &'static str {
        let word = self.word(name);
        choices
            .iter()
            .find(|c| **c == word)
            .copied()
            .unwrap_or_else(|| panic!("choice parameter {name}={word:?} is not one of {choices:?}"))
    }

    /// A boolean parameter.
    pub fn flag(&self, name: &str) -> bool {
        self.0
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or_else(|| panic!("boolean parameter {name} is not declared"))
    }

    /// The values as the schema's `params` object.
    pub fn to_map(&self) -> BTreeMap<String, Value> {
        self.0.clone()
    }

    /// `name=value` pairs, as a user would type them on the command line.
    pub fn to_args(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect()
    }
}

/// The spec called `name`, or an error naming what is accepted ([`accepted_among`]).
pub fn find_spec<'a>(specs: &'a [ParamSpec], name: &str) -> Result<&'a ParamSpec, String> {
    specs.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<_> = specs.iter().map(|s| s.name).collect();
        format!(
            "unknown parameter {name:?}: {}",
            accepted_among(name, &names, LISTED)
        )
    })
}

/// Where every hot path's parameters are listed, for a refusal too short to name them.
pub const LISTED: &str = "`lab list` shows them";

/// What a refusal of the unknown `name` says is accepted among `names`: the one name it
/// is a slip of (`did you mean ...`), else every name while they fit a short line, else
/// how many there are and where they are listed (`listed`, e.g. [`LISTED`]). A hot path
/// with twenty parameters would otherwise bury the reason of a one-line refusal under
/// their list.
pub fn accepted_among(name: &str, names: &[&str], listed: &str) -> String {
    /// The longest list written out in a refusal, in characters.
    const SHORT_LIST: usize = 90;
    if let Some(near) = slip_of(name, names) {
        return format!("did you mean {near}?");
    }
    let all = names.join(", ");
    match names.len() {
        0 => "accepted none".to_owned(),
        _ if all.len() <= SHORT_LIST => format!("accepted {all}"),
        n => format!("accepted: {n} names, {listed}"),
    }
}

/// The one name of `names` that `typed` reads as a slip of: `typed` is it without its
/// table prefix (`command` for `server_command`), or it is the nearest by letters added,
/// dropped or changed, one off (two for names of eight letters or more), and no other is
/// as near.
fn slip_of<'a>(typed: &str, names: &[&'a str]) -> Option<&'a str> {
    let unprefixed: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.split_once('_').is_some_and(|(_, rest)| rest == typed))
        .collect();
    if let [one] = unprefixed.as_slice() {
        return Some(one);
    }
    let scored: Vec<(usize, &str)> = names.iter().map(|n| (edits(typed, n), *n)).collect();
    let best = scored.iter().map(|(d, _)| *d).min()?;
    let mut at_best = scored.iter().filter(|(d, _)| *d == best);
    let (_, name) = at_best.next()?;
    let most = if name.chars().count() >= 8 { 2 } else { 1 };
    (best <= most && at_best.next().is_none()).then_some(*name)
}

/// Letters added, dropped or changed between `a` and `b` (Levenshtein distance).
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            name: "write_pct",
            kind: ParamKind::Int { min: 0, max: 100 },
            default: "0",
            help: "share of modify operations",
        },
        ParamSpec {
            name: "keys",
            kind: ParamKind::Choice(&["uniform", "zipf"]),
            default: "uniform",
            help: "key distribution",
        },
        ParamSpec {
            name: "durable",
            kind: ParamKind::Bool,
            default: "true",
            help: "sync on commit",
        },
    ];

    #[test]
    fn defaults_and_overrides() {
        let mut p = Params::defaults(SPECS);
        assert_eq!(
            (p.int("write_pct"), p.word("keys"), p.flag("durable")),
            (0, "uniform", true)
        );
        p.set(SPECS, "write_pct", "25").unwrap();
        p.set(SPECS, "keys", "zipf").unwrap();
        assert_eq!((p.count("write_pct"), p.word("keys")), (25, "zipf"));
        assert_eq!(
            p.to_args(),
            vec!["durable=true", "keys=zipf", "write_pct=25"]
        );
        assert_eq!(Params::from_map(SPECS, &p.to_map()).unwrap(), p);
    }

    #[test]
    fn paths_and_static_choices() {
        let specs = &[
            SPECS[1],
            ParamSpec {
                name: "data_dir",
                kind: ParamKind::Text,
                default: "",
                help: "a folder",
            },
        ];
        let mut p = Params::defaults(specs);
        assert_eq!(p.path("data_dir"), None, "empty text is no folder");
        p.set(specs, "data_dir", "/tmp/x").unwrap();
        assert_eq!(p.path("data_dir"), Some(std::path::Path::new("/tmp/x")));
        const KEYS: &[&str] = &["uniform", "zipf"];
        p.set(specs, "keys", "zipf").unwrap();
        assert_eq!(p.choice("keys", KEYS), "zipf");
    }

    #[test]
    fn bad_values_name_the_parameter_and_what_is_accepted() {
        let mut p = Params::defaults(SPECS);
        let err = p.set(SPECS, "write_pct", "150").unwrap_err();
        assert_eq!(err, "write_pct=\"150\": expected an integer in 0..=100");
        let err = p.set(SPECS, "keys", "normal").unwrap_err();
        assert!(err.contains("one of uniform, zipf"), "{err}");
        let err = p.set(SPECS, "colour", "red").unwrap_err();
        assert!(
            err.contains("unknown parameter \"colour\"") && err.contains("write_pct"),
            "{err}"
        );
        let err = p.set(SPECS, "write_pc", "1").unwrap_err();
        assert!(err.ends_with(": did you mean write_pct?"), "{err}");
        assert!(p.set(SPECS, "durable", "yes").is_err());
    }

    #[test]
    fn an_unknown_name_gets_its_slip_or_a_short_line() {
        let many: Vec<String> = (0..20).map(|i| format!("server_setting_{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            accepted_among("server_settng_3", &many, LISTED),
            "did you mean server_setting_3?"
        );
        assert_eq!(
            accepted_among("command", &["server_command", "server_config"], LISTED),
            "did you mean server_command?"
        );
        let short = accepted_among("x", &["keys", "write_pct"], LISTED);
        assert_eq!(short, "accepted keys, write_pct");
        let line = accepted_among("colour", &many, LISTED);
        assert_eq!(line, "accepted: 20 names, `lab list` shows them");
        assert_eq!(accepted_among("x", &[], LISTED), "accepted none");
    }

    #[test]
    fn numbers_or_words() {
        let spec = ParamSpec {
            name: "slots",
            kind: ParamKind::IntOr {
                min: 1,
                max: 64,
                words: &["nproc", "unlimited"],
            },
            default: "nproc",
            help: "semaphore slots",
        };
        assert_eq!(spec.parse("8").unwrap(), Value::from(8));
        assert_eq!(spec.parse("unlimited").unwrap(), Value::from("unlimited"));
        let err = spec.parse("0").unwrap_err();
        assert_eq!(
            err,
            "slots=\"0\": expected an integer in 1..=64 or one of nproc, unlimited"
        );
        assert!(spec.parse("lots").is_err());
    }

    #[test]
    fn lists_are_sweeps() {
        let spec = &SPECS[0];
        assert_eq!(
            spec.parse_list("0,10,50").unwrap(),
            vec![Value::from(0), Value::from(10), Value::from(50)]
        );
        assert!(spec.parse_list("0,,50").is_err());
        assert!(spec.parse_list("").is_err());
    }
}

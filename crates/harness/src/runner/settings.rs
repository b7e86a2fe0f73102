//! What a repetition is asked to do ([`RunSettings`]) and how it says it could not
//! ([`CellFailure`], with the text of a panic that caused it).
//!
//! Not here: running it ([`super::run`]).

use std::any::Any;

/// How one repetition runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSettings {
    /// Worker threads.
    pub threads: usize,
    /// Time run before counting starts.
    pub warmup: std::time::Duration,
    /// The measured window.
    pub duration: std::time::Duration,
}

/// Why a repetition produced no figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellFailure {
    /// One line saying what went wrong, e.g. `worker thread 3 panicked: index out of bounds`.
    pub reason: String,
}

impl CellFailure {
    /// A failure with the given reason.
    pub fn new(reason: impl Into<String>) -> Self {
        CellFailure {
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for CellFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for CellFailure {}

/// The text of a panic payload (`&str` or `String`), or a placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

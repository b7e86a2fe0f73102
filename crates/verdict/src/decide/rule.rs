//! The rule that turns a ratio's interval into an outcome ([`Rule`], [`Outcome`]).
//!
//! Not here: the interval itself ([`super::interval`]) or the sides compared
//! ([`super::claim`]).

use serde::{Deserialize, Serialize};

/// What a ratio must do for its part to count as shown or contradicted. Between the
/// thresholds an interval decides nothing: a true ratio there stays inconclusive however
/// many pairs are taken, which is the honest answer for an effect of that size.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Rule {
    /// Shown when the interval lies wholly above `shown`; contradicted when wholly below
    /// `contradicted` (no effect, or the other way). `contradicted <= shown`.
    Above {
        /// The smallest ratio that counts as the effect.
        shown: f64,
        /// The largest ratio that counts as its absence.
        contradicted: f64,
    },
    /// Shown when the interval lies wholly below `shown`; contradicted when wholly above
    /// `contradicted`. `shown <= contradicted`.
    Below {
        /// The largest ratio that counts as the effect.
        shown: f64,
        /// The smallest ratio that counts as its absence.
        contradicted: f64,
    },
    /// A claim of no effect: shown when the interval lies inside the band, contradicted
    /// when it lies wholly outside it.
    Within {
        /// The band's lower end.
        low: f64,
        /// The band's upper end.
        high: f64,
    },
}

impl Rule {
    /// The thresholds, ascending, as `findings.json` lists them.
    pub fn thresholds(&self) -> Vec<f64> {
        let (a, b) = match *self {
            Rule::Above {
                shown,
                contradicted,
            } => (contradicted, shown),
            Rule::Below {
                shown,
                contradicted,
            } => (shown, contradicted),
            Rule::Within { low, high } => (low, high),
        };
        vec![a.min(b), a.max(b)]
    }

    /// The outcome of an interval `[low, high]`.
    pub fn outcome(&self, low: f64, high: f64) -> Outcome {
        let (shown, contradicted) = match *self {
            Rule::Above {
                shown,
                contradicted,
            } => (low > shown, high < contradicted),
            Rule::Below {
                shown,
                contradicted,
            } => (high < shown, low > contradicted),
            Rule::Within { low: a, high: b } => (a <= low && high <= b, high < a || low > b),
        };
        match (shown, contradicted) {
            (true, _) => Outcome::Shown,
            (_, true) => Outcome::Contradicted,
            _ => Outcome::Inconclusive,
        }
    }

    /// The rule in words, e.g. "shown above 1.05, contradicted below 1.00".
    pub fn text(&self) -> String {
        match *self {
            Rule::Above {
                shown,
                contradicted,
            } => format!("shown above {shown:.2}, contradicted below {contradicted:.2}"),
            Rule::Below {
                shown,
                contradicted,
            } => format!("shown below {shown:.2}, contradicted above {contradicted:.2}"),
            Rule::Within { low, high } => {
                format!("shown inside {low:.2}-{high:.2}, contradicted wholly outside")
            }
        }
    }
}

/// How a part came out. The JSON words are read by scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Its interval lies where the claim says.
    Shown,
    /// Its interval lies where the claim's absence (or the opposite) says.
    Contradicted,
    /// Its interval spans a threshold, or it could not be measured.
    Inconclusive,
}

impl Outcome {
    /// The word as `findings.json` has it.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Shown => "shown",
            Outcome::Contradicted => "contradicted",
            Outcome::Inconclusive => "inconclusive",
        }
    }
}

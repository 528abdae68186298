//! Scenario errors: every message names the key, the value and what was expected.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// Dotted key path, e.g. `link[0].rate`; empty for whole-file errors.
    pub key: String,
    /// 1-based line in the scenario file, when known.
    pub line: Option<usize>,
    pub message: String,
}

impl ScenarioError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { key: key.into(), line: None, message: message.into() }
    }
    pub fn at_line(mut self, line: Option<usize>) -> Self {
        if self.line.is_none() {
            self.line = line;
        }
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.line, self.key.is_empty()) {
            (Some(l), false) => write!(f, "line {l}: {}: {}", self.key, self.message),
            (Some(l), true) => write!(f, "line {l}: {}", self.message),
            (None, false) => write!(f, "{}: {}", self.key, self.message),
            (None, true) => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for ScenarioError {}

/// `s` as a message quotes it: its first 60 characters, then `…` and the length when longer
/// (a megabyte key must not become a megabyte message).
pub fn quote_short(s: &str) -> String {
    let n = s.chars().count();
    if n <= 60 {
        format!("{s:?}")
    } else {
        let head: String = s.chars().take(60).collect();
        format!("{head:?}… ({n} characters)")
    }
}

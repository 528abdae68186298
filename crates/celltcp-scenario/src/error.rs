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
    /// An error for `key`. The message is made one line (a parser's multi-line message, e.g.
    /// toml's "invalid table header\nduplicate key", becomes "…; …"): callers print it as one.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        let message: String = message.into();
        let message = if message.contains(['\n', '\r']) {
            message.split(['\n', '\r']).map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
        } else {
            message
        };
        ScenarioError { key: key.into(), line: None, message }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_line_message_becomes_one_line() {
        let e = ScenarioError::new("", "invalid table header\nduplicate key `rlc` in table `lte`\n");
        assert_eq!(e.message, "invalid table header; duplicate key `rlc` in table `lte`");
        assert_eq!(e.to_string().lines().count(), 1);
    }
}

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

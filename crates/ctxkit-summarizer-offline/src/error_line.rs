//! The line of a text or of a failed run's output that says most about a failure.

use crate::text::{clip, identifiers, one_line};

/// What a text is known to be, for choosing its error line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Any text (a user's paste): a line must itself say that something failed.
    Text,
    /// The output of a run that failed: a diagnostic (a place in a file or a code, then what is
    /// wrong) says what failed even without a failure word (`a.py:1:8: F401 [*] `os` imported but
    /// unused`).
    FailedRun,
}

/// How much a line of output says about a failure: 0 for none. Lines naming an error with a
/// message (`Error: …`, `error[E0308]: …`, `E   ImportError: …`) score highest, then lines with
/// failure words; a diagnostic (`diagnostic::is_diagnostic`) or a code adds to them; a tally of failures
/// (`Found 1 error.`, `1 failed, 2 passed`) scores 1, chosen only when nothing else says more;
/// stack frames and decoration score lowest.
fn error_score(line: &str, reading: Reading) -> u32 {
    let trimmed = line.trim();
    let lower = trimmed.to_lowercase();
    if trimmed.len() < 8 || trimmed.starts_with("at ") || trimmed.starts_with('❯') {
        return 0;
    }
    let mut score = 0;
    for (word, weight) in [
        ("error", 4),
        ("exception", 4),
        ("panic", 4),
        ("fatal", 3),
        ("fail", 2),
        ("cannot", 2),
        ("not found", 2),
        ("denied", 2),
        ("undefined", 1),
        ("race", 1),
        ("violat", 2),
        ("expected", 1),
    ] {
        if lower.contains(word) {
            score += weight;
        }
    }
    let diagnostic = crate::diagnostic::is_diagnostic(trimmed);
    if score == 0 && !(diagnostic && reading == Reading::FailedRun) {
        return 0;
    }
    let located = crate::diagnostic::names_location(trimmed);
    // A count of zero (`0 Error(s)`, `failures: 0`) reports no failure; a column 0 does not count.
    let zero = !located
        && lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| word == "0")
        && !lower.contains("error:")
        && !lower.contains("error ");
    if zero {
        return 0;
    }
    if crate::diagnostic::is_failure_tally(trimmed) {
        return 1;
    }
    if trimmed.contains(": ") {
        score += 2;
    }
    if diagnostic {
        score += 2;
    }
    if crate::diagnostic::labels_code(trimmed) {
        score += 2;
    }
    score + identifiers(trimmed).len().min(3) as u32
}

/// The line of `text` that says most about a failure, if any does; `text` may not report one (a
/// user's paste), so the line must say that something failed.
pub fn best_error_line(text: &str) -> Option<String> {
    best_line(text, Reading::Text)
}

/// The line of a failed run's `output` that says most about the failure, if any does.
pub fn failed_output_line(output: &str) -> Option<String> {
    best_line(output, Reading::FailedRun)
}

fn best_line(output: &str, reading: Reading) -> Option<String> {
    let mut best: Option<(u32, &str)> = None;
    for line in output.lines() {
        let score = error_score(line, reading);
        if score > 0 && best.is_none_or(|(top, _)| score > top) {
            best = Some((score, line));
        }
    }
    best.map(|(_, line)| clip(&one_line(line), 240))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_line_names_the_error_not_the_banner_or_a_zero_count() {
        let output = "Build FAILED.\n    0 Error(s)\nsrc/a.cs(57,28): error CS0618: 'SHA1Managed' is obsolete\n   at Foo.Bar()";
        assert_eq!(
            best_error_line(output).unwrap(),
            "src/a.cs(57,28): error CS0618: 'SHA1Managed' is obsolete"
        );
        assert_eq!(best_error_line("all good\n3 passed"), None);
        // A failed run's diagnostic names a place and a code; its tally says only how many.
        let ruff = "a.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.";
        assert_eq!(
            failed_output_line(ruff).unwrap(),
            "a.py:1:8: F401 [*] `os` imported but unused"
        );
        // In a paste (no run known to have failed), a place alone is not an error.
        assert_eq!(best_error_line("src/a.rs:12: let value = 1;"), None);
        assert_eq!(
            failed_output_line("checking...\nFound 2 errors.").unwrap(),
            "Found 2 errors."
        );
    }
}

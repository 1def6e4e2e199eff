//! Which kind of line a failing output's line is, so the error line a summary quotes says what
//! went wrong rather than how much did (QA r104: `ruff check .` was quoted as `Found 1 error.`,
//! not as `tallyho/duration.py:1:8: F401 [*] `os` imported but unused`). A diagnostic names where
//! (a place in a file) or what (a code such as `E0308`, `F401`, `TS2322`); a tally counts
//! failures (`Found 1 error.`, `1 failed, 2 passed in 0.02s`, `due to 1 previous error`) and says
//! only that something failed.

use crate::failure::is_positive;

/// Whether `line` names a place in a file: `src/a.rs:3`, `a.py:1:8:`, `--> src/main.rs:3:5`,
/// `a.cs(57,28)`, `File "a.py", line 3`, or a test by its file (`tests/test_a.py::test_zero`).
pub fn names_location(line: &str) -> bool {
    if python_frame(line) {
        return true;
    }
    line.split_whitespace().any(|token| {
        let token = token.trim_matches(|character: char| "'\"`,;[]<>".contains(character));
        colon_location(token) || parenthesis_location(token)
    })
}

/// `File "calc.py", line 3`: a Python traceback's frame.
fn python_frame(line: &str) -> bool {
    line.trim_start().starts_with("File \"")
        && line.split_once("\", line ").is_some_and(|(_, rest)| {
            rest.chars()
                .next()
                .is_some_and(|digit| digit.is_ascii_digit())
        })
}

/// `path:line`, `path:line:column` or `path::test`, where `path` looks like a file.
fn colon_location(token: &str) -> bool {
    token.match_indices(':').any(|(index, _)| {
        let rest = &token[index + 1..];
        let number = rest
            .chars()
            .next()
            .is_some_and(|digit| digit.is_ascii_digit());
        let test = rest.starts_with(':')
            && rest[1..]
                .chars()
                .next()
                .is_some_and(|start| start.is_alphabetic() || start == '_');
        (number || test) && looks_like_file(&token[..index])
    })
}

/// `path(line,column)` or `path(line)`: MSBuild's and TypeScript's form.
fn parenthesis_location(token: &str) -> bool {
    let Some((path, rest)) = token.split_once('(') else {
        return false;
    };
    let inside = rest.split(')').next().unwrap_or_default();
    !inside.is_empty()
        && inside
            .chars()
            .all(|character| character.is_ascii_digit() || character == ',')
        && inside.starts_with(|digit: char| digit.is_ascii_digit())
        && looks_like_file(path)
}

/// A file's path: a last component with an extension that starts with a letter (`a.py`, not
/// `127.0.0.1`), and no URL scheme (`http://host`).
fn looks_like_file(path: &str) -> bool {
    if path.is_empty() || path.contains("://") {
        return false;
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && extension.len() <= 8
            && extension.starts_with(|start: char| start.is_ascii_alphabetic())
            && extension
                .chars()
                .all(|character| character.is_ascii_alphanumeric())
    })
}

/// Whether `line` is a diagnostic: it opens with a place in a file or a code and goes on with a
/// message of two words or more (`a.py:1:8: F401 [*] `os` imported but unused`, `cache_test.go:58:
/// evicted "b", want "a"`, `src/a.ts(3,5): error TS2322: …`, `F401 [*] `os` imported but unused`).
/// A trace's frame (`File "a.py", line 3, in read`, `--> src/main.rs:3:5`, `… @ src/main.rs:38`)
/// and a bare place (`tests/test_model.py:14: RuntimeError`) say where, not what went wrong.
pub fn is_diagnostic(line: &str) -> bool {
    let trimmed = line.trim_start();
    let (first, message) = trimmed
        .split_once(char::is_whitespace)
        .unwrap_or((trimmed, ""));
    let place = first.trim_end_matches(':');
    let opens = colon_location(place) || parenthesis_location(place) || is_code(place);
    let words = message
        .split_whitespace()
        .filter(|word| word.chars().any(char::is_alphabetic))
        .count();
    opens && words >= 2
}

/// A diagnostic code: one to three capitals then three to five digits (`F401`, `E0308`,
/// `TS2322`, `PLR0913`).
fn is_code(word: &str) -> bool {
    let letters = word.chars().take_while(char::is_ascii_uppercase).count();
    let digits = word.len() - letters;
    (1..=3).contains(&letters)
        && (3..=5).contains(&digits)
        && word[letters..]
            .chars()
            .all(|character| character.is_ascii_digit())
}

/// Whether `line` labels its message with a diagnostic code (`error[E0308]:`, `error TS2322:`,
/// `a.py:1:8: F401 …`, `W0611:`), not a code merely mentioned (`rustc --explain E0308`).
pub fn labels_code(line: &str) -> bool {
    line.match_indices(|character: char| character.is_ascii_uppercase())
        .any(|(start, _)| {
            let before = &line[..start];
            let boundary = !before
                .chars()
                .next_back()
                .is_some_and(|character| character.is_ascii_alphanumeric());
            let word: &str = line[start..]
                .split(|character: char| !character.is_ascii_alphanumeric())
                .next()
                .unwrap_or_default();
            let after = line[start + word.len()..].chars().next();
            let label =
                before.ends_with('[') || before.ends_with(": ") || matches!(after, Some(':' | ']'));
            boundary && label && is_code(word)
        })
}

/// Words after a count that make it a tally of failures (`1 failed`, `2 errors`).
const TALLIED: &[&str] = &[
    "failed", "failing", "failures", "failure", "errors", "error",
];

/// Whether `line` is a tally of failures and names no place or code: `Found 1 error.`,
/// `1 failed, 2 passed in 0.02s`, `error: could not compile `calc` due to 1 previous error`,
/// `Failures: 1`, `FAILED (failures=1)`, `make: *** [all] Error 2`.
pub fn is_failure_tally(line: &str) -> bool {
    if names_location(line) || labels_code(line) {
        return false;
    }
    let words: Vec<&str> = line
        .split(|character: char| !(character.is_alphanumeric() || character == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    let tallied = |word: &str| TALLIED.contains(&word.to_lowercase().as_str());
    // `1 failed`, `1 previous error`; `Failures: 1`, `failures=1`, `Error 2`.
    let count_then_word = words
        .windows(3)
        .any(|three| is_positive(three[0]) && (tallied(three[1]) || tallied(three[2])))
        || words
            .windows(2)
            .any(|pair| is_positive(pair[0]) && tallied(pair[1]));
    let word_then_count = words
        .windows(2)
        .any(|pair| tallied(pair[0]) && is_positive(pair[1]));
    count_then_word || word_then_count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_in_files_are_locations_and_times_addresses_and_urls_are_not() {
        for line in [
            "tallyho/duration.py:1:8: F401 [*] `os` imported but unused",
            " --> src/main.rs:3:5",
            "src/a.cs(57,28): error CS0618: 'SHA1Managed' is obsolete",
            "  File \"calc.py\", line 3, in divide",
            "FAILED tests/test_cli.py::test_version_flag - AssertionError",
            "main.c:12: undefined reference to `frob'",
            "C:\\work\\calc\\calc.py:3: SyntaxError",
        ] {
            assert!(names_location(line), "not a location: {line}");
        }
        for line in [
            "Found 1 error.",
            "started at 12:30:45",
            "connect ECONNREFUSED 127.0.0.1:5432",
            "GET http://example.com:8080/x failed",
            "1 failed, 1 passed in 0.02s",
            "ratio 3:1 expected",
        ] {
            assert!(!names_location(line), "a location: {line}");
        }
    }

    #[test]
    fn a_code_counts_as_a_label_not_as_a_mention() {
        for line in [
            "error[E0308]: mismatched types",
            "src/a.ts(3,5): error TS2322: Type 'string' is not assignable",
            "a.py:1:8: F401 [*] `os` imported but unused",
            "W0611: Unused import os (unused-import)",
        ] {
            assert!(labels_code(line), "no code: {line}");
        }
        for line in [
            "For more information about this error, try `rustc --explain E0308`.",
            "checksum SHA256 mismatch for calc.tar.gz",
            "error: linking with `cc` failed",
        ] {
            assert!(!labels_code(line), "a code: {line}");
        }
    }

    #[test]
    fn a_diagnostic_opens_with_a_place_or_a_code_and_says_what_went_wrong() {
        for line in [
            "tallyho/duration.py:1:8: F401 [*] `os` imported but unused",
            "    cache_test.go:58: evicted \"b\", want \"a\"",
            "src/a.ts(3,5): error TS2322: Type 'string' is not assignable",
            "F401 [*] `os` imported but unused",
        ] {
            assert!(is_diagnostic(line), "not a diagnostic: {line}");
        }
        for line in [
            "  File \"/app/pipeline/io/reader.py\", line 33, in read_day",
            " --> src/main.rs:3:5",
            "└─ envnode_fw::____embassy_main_task::{async_fn#0} @ src/main.rs:38",
            "tests/test_model.py:14: RuntimeError",
            "Found 1 error.",
        ] {
            assert!(!is_diagnostic(line), "a diagnostic: {line}");
        }
    }

    #[test]
    fn counts_of_failures_are_tallies_and_diagnostics_are_not() {
        for line in [
            "Found 1 error.",
            "=========== 1 failed, 3 passed in 0.10s ===========",
            "error: could not compile `calc` (lib) due to 1 previous error",
            "Tests:       1 failed, 4 passed, 5 total",
            "FAILED (failures=1)",
            "make: *** [all] Error 2",
            "  3 failing",
        ] {
            assert!(is_failure_tally(line), "not a tally: {line}");
        }
        for line in [
            "tallyho/duration.py:1:8: F401 [*] `os` imported but unused",
            "error[E0308]: mismatched types",
            "E       ZeroDivisionError: division by zero",
            "FAILED test_calc.py::test_zero - AssertionError: expected 2 errors",
        ] {
            assert!(!is_failure_tally(line), "a tally: {line}");
        }
    }
}

//! The change a `write` or an `edit` made, as the chat shows it and Pi 1.6 stores an edit's in
//! its result's details (`{diff, firstChangedLine}`): changed lines marked `-` (old line number)
//! and `+` (new line number), up to four unchanged lines around each change, ` …` for lines left
//! out. A change only to line endings stays visible: where the changed lines mix CRLF and LF
//! endings, a CRLF one ends in `␍`, and a changed last line without a newline is followed by
//! git's `\ No newline at end of file`.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};

/// Unchanged lines shown around a change.
const CONTEXT_LINES: usize = 4;
/// The most lines a diff keeps; a longer one ends with how many were left out.
const MAX_DIFF_LINES: usize = 200;
/// A diff taking longer than this falls back to a coarser one (whole blocks replaced).
const DIFF_TIMEOUT: Duration = Duration::from_millis(250);

/// `{diff, firstChangedLine}` for the change from `before` to `after`; `None` when they are equal.
pub(super) fn details(before: &str, after: &str) -> Option<Value> {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(before, after);
    let width = before
        .lines()
        .count()
        .max(after.lines().count())
        .to_string()
        .len();
    let marks_endings = changed_endings_differ(&diff);
    let mut lines: Vec<String> = Vec::new();
    let mut first_changed = None;
    for (index, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
        if index > 0 {
            lines.push(format!(" {:width$} …", ""));
        }
        for op in group {
            if op.tag() != similar::DiffTag::Equal && first_changed.is_none() {
                first_changed = Some(op.new_range().start + 1);
            }
            for change in diff.iter_changes(op) {
                let (mark, number) = match change.tag() {
                    ChangeTag::Delete => ('-', change.old_index()),
                    ChangeTag::Insert => ('+', change.new_index()),
                    ChangeTag::Equal => (' ', change.old_index()),
                };
                let number = number.map_or(0, |index| index + 1);
                let value = change.value();
                let text = value.trim_end_matches(['\n', '\r']);
                let mut line = String::with_capacity(text.len() + width + 5);
                let _ = write!(line, "{mark}{number:>width$} {text}");
                let changed = change.tag() != ChangeTag::Equal;
                if changed && marks_endings && value.ends_with("\r\n") {
                    line.push('␍');
                }
                lines.push(line);
                if changed && !value.ends_with('\n') {
                    lines.push(NO_NEWLINE_AT_END.to_owned());
                }
            }
        }
    }
    let first_changed = first_changed?;
    if lines.len() > MAX_DIFF_LINES {
        let left_out = lines.len() - MAX_DIFF_LINES;
        lines.truncate(MAX_DIFF_LINES);
        lines.push(format!(" {:width$} … ({left_out} more lines)", ""));
    }
    Some(json!({"diff": lines.join("\n"), "firstChangedLine": first_changed}))
}

/// What follows a changed last line that has no newline, as git writes it.
const NO_NEWLINE_AT_END: &str = "\\ No newline at end of file";

/// Whether the changed lines end in both CRLF and LF, so that which one a line has is part of
/// what changed and has to be drawn.
fn changed_endings_differ<'text>(diff: &TextDiff<'text, 'text, '_, str>) -> bool {
    let (mut crlf, mut lf) = (false, false);
    for change in diff.iter_all_changes() {
        if change.tag() == ChangeTag::Equal {
            continue;
        }
        let value = change.value();
        if value.ends_with("\r\n") {
            crlf = true;
        } else if value.ends_with('\n') {
            lf = true;
        }
    }
    crlf && lf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_are_numbered_with_context_and_gaps_marked() {
        let before: String = (1..=20).map(|n| format!("line {n}\r\n")).collect();
        let after = before
            .replace("line 3\r\n", "line three\r\n")
            .replace("line 17\r\n", "");
        let details = details(&before, &after).unwrap();
        assert_eq!(details["firstChangedLine"], 3);
        let expected = [
            "  1 line 1",
            "  2 line 2",
            "- 3 line 3",
            "+ 3 line three",
            "  4 line 4",
            "  5 line 5",
            "  6 line 6",
            "  7 line 7",
            "    …",
            " 13 line 13",
            " 14 line 14",
            " 15 line 15",
            " 16 line 16",
            "-17 line 17",
            " 18 line 18",
            " 19 line 19",
            " 20 line 20",
        ];
        assert_eq!(details["diff"], expected.join("\n"));
    }

    #[test]
    fn a_change_only_to_line_endings_is_drawn() {
        let crlf_to_lf = details("a\r\nb\r\n", "a\nb\r\n").unwrap();
        assert_eq!(crlf_to_lf["diff"], "-1 a␍\n+1 a\n 2 b");
        let newline_dropped = details("a\nb\n", "a\nb").unwrap();
        assert_eq!(
            newline_dropped["diff"],
            " 1 a\n-2 b\n+2 b\n\\ No newline at end of file"
        );
        assert_eq!(newline_dropped["firstChangedLine"], 2);
        // A file that is CRLF throughout draws no marks.
        let text_only = details("a\r\n", "b\r\n").unwrap();
        assert_eq!(text_only["diff"], "-1 a\n+1 b");
    }

    #[test]
    fn no_change_has_no_diff_and_a_long_one_is_cut() {
        assert_eq!(details("a\n", "a\n"), None);
        let after: String = (0..300).map(|n| format!("{n}\n")).collect();
        let details = details("", &after).unwrap();
        let diff = details["diff"].as_str().unwrap();
        assert_eq!(diff.lines().count(), MAX_DIFF_LINES + 1);
        assert!(diff.ends_with("… (100 more lines)"), "{diff}");
        assert_eq!(details["firstChangedLine"], 1);
    }
}

//! A tool's result as the chat shows it: its first lines (a file read in its language's colours),
//! a new file's first lines (as Pi 1.6 shows a `write`), or the diff of a write or an edit.

use ctxkit_agent::ToolOutcome;

use super::{Role, Ui};
use crate::commands::chat::code_blocks;
use crate::render::one_line;

/// Lines of a tool result shown in the terminal (the model gets the bounded whole).
const RESULT_PREVIEW_LINES: usize = 6;
/// Lines of an edit's diff shown in the terminal.
const DIFF_PREVIEW_LINES: usize = 24;
/// The most characters of one line of a failed tool's result shown (a refusal with a long path).
const ERROR_LINE_CHARS: usize = 400;
/// Lines of a new file's content shown (Pi 1.6's collapsed `write`).
const WRITTEN_PREVIEW_LINES: usize = 10;

/// What a call says about how its result is shown.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ResultShape {
    /// Lines of text.
    #[default]
    Plain,
    /// A file `read`: code in this language.
    Code(String),
    /// A `write`: the content it was given, and the language of its file when one is known.
    Written {
        content: String,
        language: Option<String>,
    },
}

impl Ui {
    /// The first lines of a tool result; an error's long line loses its middle, not the reason
    /// at its end. A file read ([`ResultShape::Code`]) is drawn in its language's colours when
    /// colours are on; a write that made a new file shows the file's first lines, one that
    /// changed a file the change.
    pub fn tool_result(&self, outcome: &ToolOutcome, shape: &ResultShape) {
        let language = match shape {
            ResultShape::Written { content, language } if made_new_file(outcome) => {
                self.written(&outcome.text, content, language.as_deref());
                return;
            }
            ResultShape::Code(language) => Some(language.as_str()),
            ResultShape::Plain | ResultShape::Written { .. } => None,
        };
        if let Some(diff) = change_diff(outcome) {
            self.diff(&outcome.text, diff);
            return;
        }
        // A cut output ends with the tool's note of what was kept: shown first, so the lines
        // after it are not read as the output's start (a tester saw `output line 2189` first),
        // and not counted among the lines left out.
        let (body, cut_note) = cut_note(outcome);
        let lines: Vec<&str> = body.lines().collect();
        let shorten = |line: &str| {
            if outcome.is_error {
                crate::render::one_line_keeping_end(line, ERROR_LINE_CHARS)
            } else {
                indented_line(line, 200)
            }
        };
        if outcome.is_error {
            // A failure says why at its end (`Command exited with code 3`, a cancellation, the
            // compiler's last error): its first and last lines.
            let shown: Vec<String> = ends_of(&lines, RESULT_PREVIEW_LINES)
                .into_iter()
                .map(|line| {
                    line.map_or_else(
                        |more| format!("  … ({more} more lines)"),
                        |line| format!("  {}", shorten(line)),
                    )
                })
                .collect();
            self.error(&shown.join("\n"));
            return;
        }
        let shown: Vec<String> = cut_note
            .map(|note| format!("  {}", indented_line(note, 200)))
            .into_iter()
            .chain(
                lines
                    .iter()
                    .take(RESULT_PREVIEW_LINES)
                    .map(|line| format!("  {}", shorten(line))),
            )
            .collect();
        let more = (lines.len() > RESULT_PREVIEW_LINES)
            .then(|| format!("  … ({} more lines)", lines.len() - RESULT_PREVIEW_LINES));
        let mut painted = match language.filter(|_| self.color) {
            Some(language) => self.paint_code(&shown, language),
            None => vec![self.paint(Role::ToolOutput, &shown.join("\n"))],
        };
        painted.extend(more.map(|more| self.paint(Role::ToolOutput, &more)));
        self.styled_line(&painted.join("\n"));
    }

    /// Preview lines (each after its two-space indent) in `language`'s colours.
    fn paint_code(&self, shown: &[String], language: &str) -> Vec<String> {
        let code: Vec<String> = shown
            .iter()
            .map(|line| crate::render::terminal_safe(line.get(2..).unwrap_or("")).into_owned())
            .collect();
        let code = code.join("\n");
        let Some(lines) = ctxkit_highlight::highlight(&code, language) else {
            return vec![self.paint(Role::ToolOutput, &shown.join("\n"))];
        };
        let palette = self.markdown.palette();
        lines
            .iter()
            .map(|pieces| {
                format!(
                    "  {}",
                    code_blocks::paint(pieces, &palette, Role::ToolOutput)
                )
            })
            .collect()
    }

    /// A new file's first lines under the write's own line, in its language's colours, then how
    /// many more it has (Pi 1.6 shows a write's content collapsed to ten lines).
    fn written(&self, summary: &str, content: &str, language: Option<&str>) {
        let lines: Vec<&str> = content.lines().collect();
        let total = lines
            .iter()
            .rposition(|line| !line.trim().is_empty())
            .map_or(0, |last| last + 1);
        let shown: Vec<String> = lines[..total]
            .iter()
            .take(WRITTEN_PREVIEW_LINES)
            .map(|line| format!("  {}", indented_line(line, 200)))
            .collect();
        let mut painted = vec![self.paint(Role::Info, &format!("  {}", one_line(summary, 200)))];
        if !shown.is_empty() {
            painted.extend(match language.filter(|_| self.color) {
                Some(language) => self.paint_code(&shown, language),
                None => vec![self.paint(Role::ToolOutput, &shown.join("\n"))],
            });
        }
        if total > WRITTEN_PREVIEW_LINES {
            let more = total - WRITTEN_PREVIEW_LINES;
            painted.push(self.paint(
                Role::DiffContext,
                &format!("  … ({more} more lines, {total} total)"),
            ));
        }
        self.styled_line(&painted.join("\n"));
    }

    /// A write's or an edit's result: its line, then the change, removed lines red, added green.
    fn diff(&self, summary: &str, diff: &str) {
        let lines: Vec<&str> = diff.lines().collect();
        let mut shown = vec![self.paint(Role::Info, &format!("  {}", one_line(summary, 200)))];
        for line in lines.iter().take(DIFF_PREVIEW_LINES) {
            let colour = match line.as_bytes().first() {
                Some(b'-') => Role::DiffRemoved,
                Some(b'+') => Role::DiffAdded,
                _ => Role::DiffContext,
            };
            shown.push(self.paint(colour, &format!("  {}", diff_line(line))));
        }
        if lines.len() > DIFF_PREVIEW_LINES {
            shown.push(self.paint(
                Role::DiffContext,
                &format!("  … ({} more lines)", lines.len() - DIFF_PREVIEW_LINES),
            ));
        }
        self.styled_line(&shown.join("\n"));
    }
}

/// How a call's result is shown: a `read`'s file in its language (by its path), a `write`'s
/// content as written. Claude Code's `file_path` names the file of an imported call.
pub fn result_shape(call: &ctxkit_protocol::ToolCall) -> ResultShape {
    let argument = |key: &str| call.arguments.get(key).and_then(serde_json::Value::as_str);
    let language = || {
        argument("path")
            .or_else(|| argument("file_path"))
            .and_then(ctxkit_highlight::language_of_path)
    };
    match call.name.as_str() {
        "read" => language().map_or(ResultShape::Plain, ResultShape::Code),
        "write" => argument("content").map_or(ResultShape::Plain, |content| ResultShape::Written {
            content: content.to_owned(),
            language: language(),
        }),
        _ => ResultShape::Plain,
    }
}

/// Whether a write that worked made a new file (or filled an empty one): its diff adds every
/// line. A result without a diff (a write Pi made, whose result keeps none, or one that left
/// the file as it was) shows its content, as Pi shows every write's.
fn made_new_file(outcome: &ToolOutcome) -> bool {
    if outcome.is_error {
        return false;
    }
    let Some(diff) = change_diff(outcome) else {
        return true;
    };
    let mut lines = diff.lines().peekable();
    while let Some(line) = lines.next() {
        let last_note = lines.peek().is_none() && line.trim_start().starts_with("… (");
        // git's `\ No newline at end of file` after the last line.
        let ending_note = line.starts_with('\\');
        if !line.starts_with('+') && !last_note && !ending_note {
            return false;
        }
    }
    true
}

/// The diff a `write` or `edit` that worked stores in its details (an edit's as Pi 1.6 stores it).
fn change_diff(outcome: &ToolOutcome) -> Option<&str> {
    if outcome.is_error {
        return None;
    }
    outcome.details.as_ref()?.get("diff")?.as_str()
}

/// A diff line (`-12 text`): its mark and line number as they are, its text as
/// [`indented_line`] shows it.
fn diff_line(line: &str) -> String {
    let Some(after_mark) = line.get(1..) else {
        return one_line(line, 200);
    };
    let number_start = after_mark.len() - after_mark.trim_start().len();
    let text_start = after_mark[number_start..]
        .find(' ')
        .map_or(after_mark.len(), |offset| number_start + offset + 1);
    format!(
        "{}{}",
        &line[..1 + text_start],
        indented_line(&after_mark[text_start..], 200)
    )
}

/// The most columns of indentation a result line keeps in its preview.
const MAX_PREVIEW_INDENT: usize = 24;

/// A result line on one line of at most `limit` characters, its indentation kept (a tab as four
/// columns, at most [`MAX_PREVIEW_INDENT`]) and its spacing too ([`spaced`]): code read or
/// listed keeps its shape, and a table or `ls -l` its columns (a tester saw `col1    col2` shown as
/// `col1 col2`). A `grep` match (`path:12: code`) keeps the indentation of its code after the place.
fn indented_line(line: &str, limit: usize) -> String {
    if let Some((place, code)) = grep_place(line) {
        let code = indented_line(code, limit.saturating_sub(place.chars().count()));
        return format!("{place}{code}");
    }
    let rest = line.trim_start();
    let indent: usize = line[..line.len() - rest.len()]
        .chars()
        .map(|character| if character == '\t' { 4 } else { 1 })
        .sum();
    let indent = indent.min(MAX_PREVIEW_INDENT);
    format!(
        "{}{}",
        " ".repeat(indent),
        spaced(rest, indent, limit.saturating_sub(indent))
    )
}

/// `text`, starting at column `column`, on one line as it is spaced: a tab to the next multiple of
/// four columns, any other whitespace (a carriage return, a form feed) one space, the spaces at
/// its end dropped; at most `limit` characters, a longer text cut to `limit - 1` and `…`.
fn spaced(text: &str, column: usize, limit: usize) -> String {
    let mut line = String::new();
    let mut count = 0;
    for character in text.trim_end().chars() {
        let width = match character {
            '\t' => 4 - (column + count) % 4,
            _ => 1,
        };
        if count + width > limit {
            while count + 1 > limit && line.pop().is_some() {
                count -= 1;
            }
            line.push('…');
            return line;
        }
        if character.is_whitespace() {
            line.extend(std::iter::repeat_n(' ', width));
        } else {
            line.push(character);
        }
        count += width;
    }
    line
}

/// The place of a `grep` match line (`path:12: `, the space included) and the line's code.
fn grep_place(line: &str) -> Option<(&str, &str)> {
    let first = line.find(':')?;
    if line[..first].contains(char::is_whitespace) {
        return None;
    }
    let after = &line[first + 1..];
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let code = after.get(digits..)?.strip_prefix(": ")?;
    (digits > 0).then(|| line.split_at(line.len() - code.len()))
}

/// At most `limit` of `lines`: all of them, or the first half and the last half with the number
/// left out between them (`Err`).
fn ends_of<'a>(lines: &[&'a str], limit: usize) -> Vec<Result<&'a str, usize>> {
    if lines.len() <= limit {
        return lines.iter().copied().map(Ok).collect();
    }
    let tail = limit / 2;
    let head = limit - tail;
    let mut shown: Vec<Result<&str, usize>> = lines[..head].iter().copied().map(Ok).collect();
    shown.push(Err(lines.len() - limit));
    shown.extend(lines[lines.len() - tail..].iter().copied().map(Ok));
    shown
}

/// The text of a result the tool cut, and the note it ends with (`[Output truncated: showing the
/// last 812 of 3000 lines …]`); the whole text and no note otherwise.
fn cut_note(outcome: &ToolOutcome) -> (&str, Option<&str>) {
    let truncated = outcome
        .details
        .as_ref()
        .and_then(|details| details.get("truncated"))
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    let note = outcome.text.rsplit_once("\n\n").filter(|(_, note)| {
        let read_note = ctxkit_agent::tools::limit::READ_NOTICE_STARTS
            .iter()
            .any(|start| note.starts_with(start));
        (truncated && note.starts_with(ctxkit_agent::tools::limit::CUT_NOTICE_START))
            || (read_note && note.ends_with(']') && !note.contains('\n'))
    });
    match note {
        Some((body, note)) => (body, Some(note)),
        None => (&outcome.text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::chat::markdown::Markdown;

    fn shown(colour: bool, outcome: &ToolOutcome, call: serde_json::Value) -> String {
        let ui = Ui {
            markdown: Markdown::styled(colour),
            color: colour,
            ..Ui::new().deferring()
        };
        let call: ctxkit_protocol::ToolCall = serde_json::from_value(call).unwrap();
        ui.tool_result(outcome, &result_shape(&call));
        let queue = ui.deferred.as_ref().unwrap().lock().unwrap();
        queue.join("\n")
    }

    /// QA (2026-12-05): a failed command's preview showed its first six lines, and the reason
    /// at its end (`Command exited with code 3`, a cancellation) was among the lines left out.
    #[test]
    fn a_failure_shows_its_first_and_last_lines() {
        let mut text: String = (1..=20).map(|n| format!("{n}\n")).collect();
        text.push_str("error: build failed\n\nCommand exited with code 3");
        let call = serde_json::json!({"type": "toolCall", "id": "b1", "name": "bash",
            "arguments": {"command": "make"}});
        let lines = shown(false, &ToolOutcome::error(text), call);
        assert_eq!(
            lines,
            "  1\n  2\n  3\n  … (17 more lines)\n  error: build failed\n  \n  Command exited with code 3",
            "{lines}"
        );
    }

    /// QA: a cut `bash` output showed `output line 2189` first and "(808 more lines)", the note
    /// counted among them, and nothing said the first 2,188 lines were cut.
    #[test]
    fn a_cut_output_says_what_was_kept_first_and_counts_only_its_lines() {
        let kept: String = (2189..=3000)
            .map(|n| format!("output line {n}\n"))
            .collect();
        let note = "[Output truncated: showing the last 812 of 3000 lines (x of y bytes; limits \
                    2000 lines, 50 KB). Full output: /tmp/o/call_1.txt]";
        let outcome = ToolOutcome {
            details: Some(
                serde_json::json!({"truncated": true, "fullOutputPath": "/tmp/o/call_1.txt"}),
            ),
            ..ToolOutcome::ok(format!("{}\n\n{note}", kept.trim_end()))
        };
        let call = serde_json::json!({"type": "toolCall", "id": "call_1", "name": "bash",
            "arguments": {"command": "seq"}});
        let lines = shown(false, &outcome, call);
        assert!(
            lines.starts_with("  [Output truncated: showing the last 812 of 3000 lines"),
            "{lines}"
        );
        assert!(lines.contains("\n  output line 2189\n"), "{lines}");
        assert!(lines.ends_with("… (806 more lines)"), "{lines}");
    }

    /// QA: a cut `read` showed its first lines and "… (371 more lines)", so the 375 lines read
    /// looked like the whole file; the tool's note of the 125 lines after them was not shown.
    #[test]
    fn a_cut_read_says_which_lines_it_shows_first() {
        for path in ["notes.txt", "src/main.rs"] {
            let kept: String = (1..=375).map(|n| format!("line {n}\n")).collect();
            let note = "[Showing lines 1-375 of 500. Use offset=376 to continue.]";
            let outcome = ToolOutcome::ok(format!("{kept}\n{note}"));
            let call = serde_json::json!({"type": "toolCall", "id": "r1", "name": "read",
                "arguments": {"path": path}});
            let lines = shown(false, &outcome, call);
            assert!(lines.starts_with(&format!("  {note}")), "{path}: {lines}");
            assert_eq!(lines.matches("Showing lines").count(), 1, "{lines}");
        }
    }

    fn write_call(path: &str, content: &str) -> serde_json::Value {
        serde_json::json!({"type": "toolCall", "id": "w1", "name": "write",
            "arguments": {"path": path, "content": content}})
    }

    fn written(diff: &str) -> ToolOutcome {
        ToolOutcome {
            details: Some(serde_json::json!({"diff": diff, "firstChangedLine": 1})),
            ..ToolOutcome::ok("Successfully wrote 80 bytes to src/lib.rs")
        }
    }

    #[test]
    fn a_new_file_shows_its_first_ten_lines_coloured_and_how_many_more() {
        let content: String = (1..=12).map(|n| format!("fn f{n}() {{}}\n")).collect();
        let diff: String = (1..=12)
            .map(|n| format!("+{n:>2} fn f{n}() {{}}"))
            .collect::<Vec<_>>()
            .join("\n");
        let lines = shown(true, &written(&diff), write_call("src/lib.rs", &content));
        assert!(lines.contains("Successfully wrote 80 bytes"), "{lines}");
        assert!(lines.contains("\u{1b}[34mfn"), "{lines:?}");
        assert!(lines.contains("f10"), "{lines}");
        assert!(!lines.contains("f11"), "{lines}");
        assert!(lines.contains("… (2 more lines, 12 total)"), "{lines}");
        assert!(!lines.contains("+ 1"), "not the diff: {lines}");
    }

    #[test]
    fn a_changed_file_shows_the_change_not_the_content() {
        let diff = " 1 fn a() {}\n-2 fn b() {}\n+2 fn c() {}";
        let lines = shown(
            false,
            &written(diff),
            write_call("src/lib.rs", "fn a() {}\nfn c() {}\n"),
        );
        assert!(lines.contains("-2 fn b() {}"), "{lines}");
        assert!(lines.contains("+2 fn c() {}"), "{lines}");
    }

    #[test]
    fn a_long_new_file_whose_diff_was_cut_is_still_new() {
        let diff = "+1 a\n+2 b\n  … (300 more lines)";
        let lines = shown(false, &written(diff), write_call("notes.txt", "a\nb\n"));
        assert_eq!(
            lines, "  Successfully wrote 80 bytes to src/lib.rs\n  a\n  b",
            "{lines}"
        );
    }

    #[test]
    fn a_new_file_without_a_last_newline_is_still_new() {
        let diff = "+1 a\n+2 b\n\\ No newline at end of file";
        let lines = shown(false, &written(diff), write_call("notes.txt", "a\nb"));
        assert_eq!(
            lines, "  Successfully wrote 80 bytes to src/lib.rs\n  a\n  b",
            "{lines}"
        );
    }

    /// A write whose result has no diff (Pi's keep none) shows its content, as Pi shows
    /// every write; a failed write shows its error, never the content it did not write.
    #[test]
    fn a_write_without_a_diff_shows_its_content_and_a_failed_one_its_error() {
        let call = write_call("a.py", "print('hi')\n\n\n");
        let lines = shown(false, &ToolOutcome::ok("Wrote a.py"), call.clone());
        assert_eq!(lines, "  Wrote a.py\n  print('hi')");
        let failed = ToolOutcome {
            is_error: true,
            ..ToolOutcome::ok("Permission denied: a.py")
        };
        let lines = shown(false, &failed, call);
        assert!(lines.contains("Permission denied"), "{lines}");
        assert!(!lines.contains("print"), "{lines}");
    }

    #[test]
    fn written_content_never_carries_the_models_escapes() {
        let osc = "\u{1b}]52;c;aGk=\u{7}";
        for colour in [false, true] {
            let call = write_call("x.rs", &format!("// {osc}\nfn main() {{}}\n"));
            let lines = shown(colour, &ToolOutcome::ok("Wrote x.rs"), call);
            assert!(!lines.contains("\u{1b}]"), "{lines:?}");
            assert!(lines.contains("\\u001b]52;c;aGk="), "{lines:?}");
        }
    }

    #[test]
    fn a_result_line_keeps_its_indentation_and_its_spacing() {
        assert_eq!(indented_line("    return  1;", 200), "    return  1;");
        assert_eq!(indented_line("col1    col2   ", 200), "col1    col2");
        assert_eq!(indented_line("a\tb\r", 200), "a   b");
        assert_eq!(indented_line("ab  cdef", 5), "ab  …");
        assert_eq!(indented_line("\t\tx", 200), "        x");
        assert_eq!(
            indented_line(&format!("{}deep", " ".repeat(80)), 200).len(),
            28
        );
        assert_eq!(indented_line("  abcdef", 5), "  ab…");
        // QA (2026-12-05): a grep match lost its code's indentation.
        assert_eq!(
            indented_line("src/a.rs:12:         let  x = 1;", 200),
            "src/a.rs:12:         let  x = 1;"
        );
        assert_eq!(indented_line("note: 12: x", 200), "note: 12: x");
    }

    #[test]
    fn a_diff_line_keeps_its_mark_number_and_indentation() {
        assert_eq!(diff_line("- 3     return  1;"), "- 3     return  1;");
        assert_eq!(diff_line("+12 \tx"), "+12     x");
        assert_eq!(diff_line("    …"), "    …");
        assert_eq!(diff_line("-"), "-");
    }
}

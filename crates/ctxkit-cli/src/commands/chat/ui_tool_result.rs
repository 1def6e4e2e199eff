//! A tool's result as the chat shows it: its first lines (a file read in its language's colours),
//! or the diff of a write or an edit.

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

impl Ui {
    /// The first lines of a tool result; an error's long line loses its middle, not the reason
    /// at its end. A result in `language` (a file `read`, [`result_language`]) is drawn in its
    /// colours when colours are on.
    pub fn tool_result(&self, outcome: &ToolOutcome, language: Option<&str>) {
        if let Some(diff) = change_diff(outcome) {
            self.diff(&outcome.text, diff);
            return;
        }
        let lines: Vec<&str> = outcome.text.lines().collect();
        let shorten = |line: &str| {
            if outcome.is_error {
                crate::render::one_line_keeping_end(line, ERROR_LINE_CHARS)
            } else {
                indented_line(line, 200)
            }
        };
        let mut shown: Vec<String> = lines
            .iter()
            .take(RESULT_PREVIEW_LINES)
            .map(|line| format!("  {}", shorten(line)))
            .collect();
        let more = (lines.len() > RESULT_PREVIEW_LINES)
            .then(|| format!("  … ({} more lines)", lines.len() - RESULT_PREVIEW_LINES));
        if outcome.is_error {
            shown.extend(more);
            self.error(&shown.join("\n"));
            return;
        }
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

/// The language a call's result is drawn in: a `read`'s file's, by its path.
pub fn result_language(call: &ctxkit_protocol::ToolCall) -> Option<String> {
    if call.name != "read" {
        return None;
    }
    let path = call.arguments.get("path")?.as_str()?;
    ctxkit_highlight::language_of_path(path)
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

/// A result line as [`one_line`] shows it, its indentation kept (a tab as four columns, at most
/// [`MAX_PREVIEW_INDENT`]): code read or listed keeps its shape.
fn indented_line(line: &str, limit: usize) -> String {
    let rest = line.trim_start();
    let indent: usize = line[..line.len() - rest.len()]
        .chars()
        .map(|character| if character == '\t' { 4 } else { 1 })
        .sum();
    let indent = indent.min(MAX_PREVIEW_INDENT);
    format!(
        "{}{}",
        " ".repeat(indent),
        one_line(rest, limit.saturating_sub(indent))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_line_keeps_its_indentation_and_loses_its_runs_of_space() {
        assert_eq!(indented_line("    return  1;", 200), "    return 1;");
        assert_eq!(indented_line("\t\tx", 200), "        x");
        assert_eq!(
            indented_line(&format!("{}deep", " ".repeat(80)), 200).len(),
            28
        );
        assert_eq!(indented_line("  abcdef", 5), "  ab…");
    }

    #[test]
    fn a_diff_line_keeps_its_mark_number_and_indentation() {
        assert_eq!(diff_line("- 3     return  1;"), "- 3     return 1;");
        assert_eq!(diff_line("+12 \tx"), "+12     x");
        assert_eq!(diff_line("    …"), "    …");
        assert_eq!(diff_line("-"), "-");
    }
}

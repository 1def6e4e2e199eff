//! The reply as it streams in: text and reasoning printed as they arrive, each text block replaced
//! by its markdown rendering when it ends.

use std::io::Write;

use ctxkit_llm::ChatDelta;

use super::{Role, Ui};
use crate::commands::chat::markdown::{rows, terminal_height, terminal_width};

/// What has been shown of the reply streaming in.
#[derive(Debug, Default)]
pub(super) struct Stream {
    /// Something was shown for this model call (the reply's text is then not printed again).
    pub(super) shown: bool,
    /// The kind of the block being shown (`true` for thinking), `None` between blocks.
    thinking: Option<bool>,
    /// The cursor is not at the start of a line.
    mid_line: bool,
    /// The text block shown so far, rendered as markdown when it ends.
    raw: String,
}

/// Where the finished paragraphs of `raw` end: after its last blank line outside a code fence,
/// when text comes before it.
/// Whether `text`, streamed after `raw`, makes a blank line: only then can a paragraph have
/// finished, so a long block without one is not copied and searched at every piece.
fn ends_a_paragraph(raw: &str, text: &str) -> bool {
    text.contains("\n\n") || (raw.ends_with('\n') && text.starts_with('\n'))
}

fn finished_paragraphs(raw: &str) -> Option<usize> {
    let end = raw.rfind("\n\n")? + 2;
    let done = &raw[..end];
    let fences = done
        .lines()
        .filter(|line| {
            let line = line.trim_start();
            line.starts_with("```") || line.starts_with("~~~")
        })
        .count();
    (fences % 2 == 0 && !done.trim().is_empty()).then_some(end)
}

/// What `text`, streamed after `raw` (the text block shown since its last rendered paragraph),
/// finishes.
#[derive(Debug, PartialEq, Eq)]
enum Paragraphs {
    /// No paragraph: `text` is shown as it streams.
    Unfinished,
    /// `finished` is rendered in place of what streamed of it; `rest` streams on after it.
    Render { finished: String, rest: String },
    /// What streamed is taller than the screen and cannot be replaced: it stays as it streamed,
    /// and only `rest`, after the finished paragraphs, is measured and rendered from now on.
    KeepAsStreamed { rest: String },
}

/// The paragraphs `text` finishes after `raw`; `fits` says whether what streamed can still be
/// replaced (it is not taller than the screen).
fn next_paragraphs(raw: &str, text: &str, fits: impl Fn(&str) -> bool) -> Paragraphs {
    if !ends_a_paragraph(raw, text) {
        return Paragraphs::Unfinished;
    }
    let mut finished = format!("{raw}{text}");
    let Some(split) = finished_paragraphs(&finished) else {
        return Paragraphs::Unfinished;
    };
    let rest = finished.split_off(split);
    if fits(raw) {
        Paragraphs::Render { finished, rest }
    } else {
        Paragraphs::KeepAsStreamed { rest }
    }
}

impl Ui {
    /// A model call starts: nothing of its reply is shown yet.
    pub fn start_reply(&self) {
        if let Ok(mut stream) = self.stream.lock() {
            *stream = Stream::default();
        }
    }

    /// Shows part of the reply as it streams in: the spinner line goes at the first piece (Esc
    /// still interrupts), reasoning is dimmed (or one line under `hideThinkingBlock`), blocks are
    /// separated by a line break.
    pub fn delta(&self, delta: &ChatDelta) {
        if self.is_quiet() {
            return;
        }
        let Ok(mut stream) = self.stream.lock() else {
            return;
        };
        let (thinking, text) = match delta {
            ChatDelta::Text(text) => (false, text.as_str()),
            ChatDelta::Thinking(text) => (true, text.as_str()),
            ChatDelta::BlockEnd => {
                self.end_block(&mut stream);
                return;
            }
            // A retry arrives as its own event (`AgentEvent::ProviderRetry`), on the spinner line.
            ChatDelta::ToolCall { .. } | ChatDelta::Retrying(_) => return,
        };
        if !stream.shown {
            self.clear_spinner();
            stream.shown = true;
        }
        if stream.thinking.is_some_and(|kind| kind != thinking) {
            self.end_block(&mut stream);
        }
        // `hideThinkingBlock`: a reasoning block is one line, written at its first piece.
        let hidden = thinking && self.thinking_hidden();
        if hidden && stream.thinking == Some(true) {
            return;
        }
        let text = if hidden {
            super::HIDDEN_THINKING
        } else if stream.thinking.is_none() {
            text.trim_start_matches('\n')
        } else {
            text
        };
        // The model's text is shown, never obeyed by the terminal.
        let text = &*crate::render::terminal_safe(text);
        if text.is_empty() {
            return;
        }
        stream.thinking = Some(thinking);
        if !thinking && self.markdown.renders() && self.show_finished_paragraphs(&mut stream, text)
        {
            return;
        }
        let shown = if thinking && self.color {
            text.lines()
                .map(|line| self.paint(Role::Thinking, line))
                .collect::<Vec<_>>()
                .join("\n")
                + if text.ends_with('\n') { "\n" } else { "" }
        } else {
            text.to_owned()
        };
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "{shown}");
        let _ = stdout.flush();
        stream.mid_line = !text.ends_with('\n');
        if !thinking {
            stream.raw.push_str(text);
        }
    }

    /// Shows `text`, the next piece of a text block, with the block's paragraphs that it
    /// finishes (up to the last blank line outside a code fence) rendered: what streamed of them
    /// is replaced, so a reply taller than the screen is formatted too (a whole block is rendered
    /// in place only while it fits). What streamed of them taller than the screen stays as it
    /// streamed, and the paragraphs after it are formatted in turn. `false` when no paragraph is
    /// finished: nothing was shown.
    fn show_finished_paragraphs(&self, stream: &mut Stream, text: &str) -> bool {
        let width = terminal_width();
        let height = terminal_height();
        let fits = |shown: &str| shown.is_empty() || rows(shown, width) < height;
        let (finished, rest) = match next_paragraphs(&stream.raw, text, fits) {
            Paragraphs::Unfinished => return false,
            Paragraphs::Render { finished, rest } => (finished, rest),
            Paragraphs::KeepAsStreamed { rest } => {
                let mut stdout = std::io::stdout().lock();
                let _ = write!(stdout, "{text}");
                let _ = stdout.flush();
                stream.mid_line = !text.ends_with('\n');
                stream.raw = rest;
                return true;
            }
        };
        let used = if stream.raw.is_empty() {
            0
        } else {
            rows(&stream.raw, width)
        };
        let mut stdout = std::io::stdout().lock();
        if used > 1 {
            let _ = write!(stdout, "\x1b[{}A", used - 1);
        }
        let _ = write!(
            stdout,
            "\r\x1b[J{}\n\n{rest}",
            self.markdown.render(&finished, width)
        );
        let _ = stdout.flush();
        stream.mid_line = !rest.is_empty() && !rest.ends_with('\n');
        stream.raw = rest;
        true
    }

    /// Ends the line the stream left open.
    /// The reply broke off after it began and is sent again: the part shown ends here, said to
    /// be dropped, and the reply sent again starts anew below it (print mode shows no part).
    pub fn restart_reply(&self) {
        if !self.is_quiet() {
            self.finish_stream();
            self.notice("The reply broke off; what it showed above is dropped, and the request is sent again");
        }
        self.start_reply();
    }

    pub fn finish_stream(&self) {
        if self.is_quiet() {
            return;
        }
        if let Ok(mut stream) = self.stream.lock() {
            self.end_block(&mut stream);
        }
    }

    pub(super) fn end_block(&self, stream: &mut Stream) {
        let raw = std::mem::take(&mut stream.raw);
        if stream.thinking == Some(false) && self.markdown.renders() && !raw.trim().is_empty() {
            // The text as it streamed is replaced by its rendering: back to the block's first
            // row, clear below, print. A block taller than the screen stays as it streamed.
            let width = terminal_width();
            let used = rows(&raw, width);
            if used < terminal_height() {
                let mut stdout = std::io::stdout().lock();
                if used > 1 {
                    let _ = write!(stdout, "\x1b[{}A", used - 1);
                }
                let _ = writeln!(stdout, "\r\x1b[J{}", self.markdown.render(&raw, width));
                let _ = stdout.flush();
                stream.mid_line = false;
                stream.thinking = None;
                return;
            }
        }
        if stream.mid_line {
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout);
            let _ = stdout.flush();
            stream.mid_line = false;
        }
        stream.thinking = None;
    }
}

#[cfg(test)]
mod tests {
    use super::{Paragraphs, ends_a_paragraph, finished_paragraphs, next_paragraphs};

    /// QA: after a code block taller than the terminal, every later paragraph stayed raw (the
    /// tall text was kept and measured with each of them).
    #[test]
    fn paragraphs_after_one_taller_than_the_screen_are_rendered() {
        let fits = |shown: &str| shown.lines().count() < 24;
        let code: String = (0..30).map(|line| format!("x_{line} = {line}\n")).collect();
        let raw = format!("```python\n{code}```\n");
        assert_eq!(
            next_paragraphs(&raw, "\nThen table:", fits),
            Paragraphs::KeepAsStreamed {
                rest: "Then table:".to_owned()
            }
        );
        assert_eq!(
            next_paragraphs("Then table:", "\n\n| A | B |", fits),
            Paragraphs::Render {
                finished: "Then table:\n\n".to_owned(),
                rest: "| A | B |".to_owned()
            }
        );
        assert_eq!(
            next_paragraphs("Then", " table", fits),
            Paragraphs::Unfinished
        );
    }

    #[test]
    fn only_a_piece_that_makes_a_blank_line_can_finish_a_paragraph() {
        assert!(ends_a_paragraph("one", "\n\ntwo"));
        assert!(ends_a_paragraph("one\n", "\ntwo"));
        assert!(!ends_a_paragraph("one\n", "two\n"));
        assert!(!ends_a_paragraph("one\n\ntwo", " three"));
    }

    #[test]
    fn paragraphs_are_finished_at_a_blank_line_outside_a_code_fence() {
        assert_eq!(finished_paragraphs("one **a**"), None);
        assert_eq!(finished_paragraphs("one\n\ntwo"), Some(5));
        assert_eq!(finished_paragraphs("one\n\ntwo\n\nthr"), Some(10));
        assert_eq!(finished_paragraphs("\n\n"), None);
        // A blank line inside a fenced block does not end it.
        assert_eq!(
            finished_paragraphs("intro\n```rust\nfn a() {}\n\nfn b"),
            None
        );
        assert_eq!(
            finished_paragraphs("```\ncode\n\nmore\n```\n\nafter"),
            Some(20)
        );
    }
}

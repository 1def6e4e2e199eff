//! Bounded tool output: at most [`MAX_LINES`] lines and [`MAX_BYTES`] bytes reach the model. When
//! a result is cut, the full text is saved to a file (`saved_output`) and the model is told where
//! it is.

use std::path::Path;

/// The most lines of one tool result the model sees.
pub const MAX_LINES: usize = 2000;
/// The most bytes of one tool result the model sees.
pub const MAX_BYTES: usize = 50 * 1024;

/// Which end of a long output to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// The beginning (files, listings, search results).
    Head,
    /// The end (command output, where errors and results are).
    Tail,
}

/// What was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub total_lines: usize,
    pub total_bytes: usize,
    pub shown_lines: usize,
    pub shown_bytes: usize,
    pub keep: Keep,
    /// The byte limit the output was cut to.
    pub limit_bytes: usize,
    /// The line at the far end of what is shown is itself cut (a line longer than the room).
    pub edge_cut: bool,
}

/// An output within the limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    pub text: String,
    /// `None` when nothing was cut.
    pub cut: Option<Cut>,
}

/// `text` within [`MAX_LINES`] and [`MAX_BYTES`], keeping whole lines from `keep`'s end (a single
/// line longer than the byte limit is cut at a character boundary).
pub fn bound(text: &str, keep: Keep) -> Bounded {
    bound_with(text, keep, MAX_LINES, MAX_BYTES, Lines::Whole)
}

/// `text` within [`MAX_LINES`] and `max_bytes` (see [`output_bytes_for_window`]).
pub fn bound_within(text: &str, keep: Keep, max_bytes: usize) -> Bounded {
    bound_with(text, keep, MAX_LINES, max_bytes, Lines::Whole)
}

/// `text`'s head within [`MAX_LINES`] and `max_bytes`, the line that does not fit cut to the room
/// left. For text read back (`recall`), which has no offset to read on from: kept whole, a long
/// line after a short one (a pasted JSON response after its message's header) showed nothing.
pub fn bound_head_cutting_lines(text: &str, max_bytes: usize) -> Bounded {
    bound_with(text, Keep::Head, MAX_LINES, max_bytes, Lines::CutTheLast)
}

/// Whether `text` is within [`MAX_LINES`] and `max_bytes` as it is.
pub fn fits(text: &str, max_bytes: usize) -> bool {
    text.len() <= max_bytes && line_count(text) <= MAX_LINES
}

/// `text`'s head as [`bound_head_cutting_lines`] keeps it, followed by the note `note` writes for
/// what it shows, the note counted in `max_bytes`: the whole answer stays within the bound. Always
/// ends with the note; call it for a text that does not [`fit`](fits).
pub fn cut_head_with_note(
    text: &str,
    max_bytes: usize,
    note: impl FnMut(&Cut) -> String,
) -> Bounded {
    cut_with_note(text, Keep::Head, Lines::CutTheLast, max_bytes, note)
}

/// `text`'s whole lines from `keep`'s end followed by `note`'s note for them, all within
/// `max_bytes` (see [`cut_head_with_note`]).
pub(crate) fn cut_whole_lines_with_note(
    text: &str,
    keep: Keep,
    max_bytes: usize,
    note: impl FnMut(&Cut) -> String,
) -> Bounded {
    cut_with_note(text, keep, Lines::Whole, max_bytes, note)
}

/// The text is cut to leave room for the note; the note's length depends on what is shown (its
/// numbers), so the room is narrowed until both fit. The room only shrinks, so this ends; a note
/// longer than `max_bytes` alone is kept whole after an empty text.
fn cut_with_note(
    text: &str,
    keep: Keep,
    lines_kept: Lines,
    max_bytes: usize,
    mut note: impl FnMut(&Cut) -> String,
) -> Bounded {
    let mut reserve = 0;
    loop {
        let room = max_bytes.saturating_sub(reserve);
        let bounded = bound_with(text, keep, MAX_LINES, room, lines_kept);
        let mut cut = bounded.cut.unwrap_or_else(|| {
            let lines = line_count(text);
            Cut {
                total_lines: lines,
                total_bytes: text.len(),
                shown_lines: lines,
                shown_bytes: text.len(),
                keep,
                limit_bytes: max_bytes,
                edge_cut: false,
            }
        });
        cut.limit_bytes = max_bytes;
        let written = note(&cut);
        if bounded.text.len() + written.len() <= max_bytes || room == 0 {
            return Bounded {
                text: bounded.text + &written,
                cut: Some(cut),
            };
        }
        reserve = (reserve + 1).max(written.len());
    }
}

/// Whether the line that does not fit is left out or cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    /// Only whole lines, as Pi's tools keep them (a line over the whole limit alone is cut).
    Whole,
    /// The line that does not fit is cut to the room left.
    CutTheLast,
}

/// The least a tool's output is cut to, whatever the window.
const MIN_OUTPUT_BYTES: usize = 4 * 1024;

/// The bytes one tool output may keep for a model of `context_window` tokens: [`MAX_BYTES`] (Pi's
/// 50 KB), but no more than about a quarter of a small window (a byte per token of the window is
/// about a quarter of it in tokens), and at least 4 KB. QA: an 8,000-token model was sent a 50 KB
/// (13,000-token) `bash` output that no compaction could fit, and the request was refused.
/// 0 (an unknown window) keeps [`MAX_BYTES`].
pub fn output_bytes_for_window(context_window: u64) -> usize {
    if context_window == 0 {
        return MAX_BYTES;
    }
    usize::try_from(context_window)
        .unwrap_or(usize::MAX)
        .clamp(MIN_OUTPUT_BYTES, MAX_BYTES)
}

fn bound_with(
    text: &str,
    keep: Keep,
    max_lines: usize,
    max_bytes: usize,
    lines_kept: Lines,
) -> Bounded {
    // Counted, not collected: a flood of short lines (`yes`: 30 million in 60 MB) made a list of
    // 480 MB here (QA 2026-12-07: 600 MB for any flood).
    let total_lines = line_count(text);
    if total_lines <= max_lines && text.len() <= max_bytes {
        return Bounded {
            text: text.to_owned(),
            cut: None,
        };
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut bytes = 0;
    let mut edge_cut = false;
    let ordered: Box<dyn Iterator<Item = &str>> = match keep {
        Keep::Head => Box::new(text.split('\n')),
        Keep::Tail => Box::new(text.rsplit('\n')),
    };
    for line in ordered {
        let cost = line.len() + usize::from(!kept.is_empty());
        if kept.len() == max_lines || bytes + cost > max_bytes {
            if kept.is_empty() {
                kept.push(cut_line(line, max_bytes, keep));
                edge_cut = true;
            } else if lines_kept == Lines::CutTheLast && kept.len() < max_lines {
                let room = max_bytes.saturating_sub(bytes + 1);
                let part = cut_line(line, room, keep);
                if !part.is_empty() {
                    kept.push(part);
                    edge_cut = true;
                }
            }
            break;
        }
        bytes += cost;
        kept.push(line);
    }
    if keep == Keep::Tail {
        kept.reverse();
    }
    let shown = kept.join("\n");
    Bounded {
        cut: Some(Cut {
            total_lines,
            total_bytes: text.len(),
            shown_lines: kept.len(),
            shown_bytes: shown.len(),
            keep,
            limit_bytes: max_bytes,
            edge_cut,
        }),
        text: shown,
    }
}

/// The lines of `text` as `split('\n')` gives them (an empty text is one line).
fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}

/// At most `max_bytes` of one line, on a character boundary.
fn cut_line(line: &str, max_bytes: usize, keep: Keep) -> &str {
    match keep {
        Keep::Head => {
            let mut end = max_bytes.min(line.len());
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            &line[..end]
        }
        Keep::Tail => {
            let mut start = line.len().saturating_sub(max_bytes);
            while !line.is_char_boundary(start) {
                start += 1;
            }
            &line[start..]
        }
    }
}

/// How the note a cut output ends with starts (after a blank line), saved or not: a reader that
/// shows the output tells the note from it by this.
pub const CUT_NOTICE_START: &str = "[Output truncated";

/// How `read`'s note of the lines after those shown starts (`[Showing lines 1-2000 of 3000. Use
/// offset=2001 to continue.]`), and its note of a line longer than the limit (`[Line 7 is longer
/// …]`): the end of a read the tool cut, which a user interface shows as the tool's note.
pub const READ_NOTICE_STARTS: [&str; 2] = ["[Showing lines ", "[Line "];

/// The note telling the model what it sees of a cut output and where the rest is.
pub fn cut_notice(cut: &Cut, full_output: &Path) -> String {
    let which = match cut.keep {
        Keep::Head => "first",
        Keep::Tail => "last",
    };
    // Every line shown means the one at the far end was cut rather than left out (text read back).
    let lines = if cut.shown_lines == cut.total_lines {
        let far_end = match cut.keep {
            Keep::Head => "last",
            Keep::Tail => "first",
        };
        format!("all {} lines, the {far_end} one cut", cut.total_lines)
    } else if cut.edge_cut {
        // A flood's one long line is not "the last line" whole (QA 2026-12-07).
        let far_end = match cut.keep {
            Keep::Head => "last",
            Keep::Tail => "first",
        };
        format!(
            "the {which} {} of {} lines, the {far_end} of them cut",
            cut.shown_lines, cut.total_lines
        )
    } else {
        format!(
            "the {which} {} of {} lines",
            cut.shown_lines, cut.total_lines
        )
    };
    format!(
        "{CUT_NOTICE_START}: showing {lines} ({} of {} bytes; limits {MAX_LINES} lines, {} KB). Full output: {}]",
        cut.shown_bytes,
        cut.total_bytes,
        (cut.limit_bytes + 512) / 1024,
        full_output.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA 2026-12-07: two short lines and a 60 MB one were shown as "the last 1 of 3 lines", the
    /// model taking the kept 50 KB for the whole last line.
    #[test]
    fn a_shown_line_that_is_itself_cut_is_said_to_be() {
        let text = format!("a\nb\n{}", "x".repeat(200_000));
        let bounded = bound_within(&text, Keep::Tail, MAX_BYTES);
        let cut = bounded.cut.unwrap();
        assert!(cut.edge_cut);
        let notice = cut_notice(&cut, Path::new("/tmp/full.txt"));
        assert!(
            notice.contains("showing the last 1 of 3 lines, the first of them cut"),
            "{notice}"
        );
        let whole = bound_within(&"line\n".repeat(5000), Keep::Tail, MAX_BYTES);
        assert!(!whole.cut.unwrap().edge_cut);
    }

    #[test]
    fn a_small_window_cuts_outputs_to_about_a_quarter_of_it() {
        assert_eq!(output_bytes_for_window(0), MAX_BYTES);
        assert_eq!(output_bytes_for_window(1_000_000), MAX_BYTES);
        assert_eq!(output_bytes_for_window(32_000), 32_000);
        assert_eq!(output_bytes_for_window(8_000), 8_000);
        assert_eq!(output_bytes_for_window(1_000), 4 * 1024);
        let output: String = (0..3000)
            .map(|line| format!("output line {line} with padding\n"))
            .collect();
        let bounded = bound_within(&output, Keep::Tail, output_bytes_for_window(8_000));
        let cut = bounded.cut.unwrap();
        assert!(bounded.text.len() <= 8_000, "{cut:?}");
        assert_eq!(cut.limit_bytes, 8_000);
        assert!(
            bounded
                .text
                .trim_end()
                .ends_with("output line 2999 with padding")
        );
    }

    #[test]
    fn short_outputs_are_untouched() {
        let bounded = bound("a\nb\n", Keep::Head);
        assert_eq!(bounded.text, "a\nb\n");
        assert_eq!(bounded.cut, None);
    }

    #[test]
    fn line_limits_keep_the_head_or_the_tail() {
        let text: String = (1..=10).map(|n| format!("line {n}\n")).collect();
        let head = bound_with(&text, Keep::Head, 3, 1000, Lines::Whole);
        assert_eq!(head.text, "line 1\nline 2\nline 3");
        let cut = head.cut.unwrap();
        assert_eq!((cut.total_lines, cut.shown_lines), (11, 3));
        let tail = bound_with(text.trim_end(), Keep::Tail, 3, 1000, Lines::Whole);
        assert_eq!(tail.text, "line 8\nline 9\nline 10");
    }

    #[test]
    fn byte_limits_keep_whole_lines_and_cut_a_single_long_line_on_a_boundary() {
        let bounded = bound_with("aaaa\nbbbb\ncccc", Keep::Head, 100, 9, Lines::Whole);
        assert_eq!(bounded.text, "aaaa\nbbbb");
        let wide = "ééééé"; // 10 bytes
        let head = bound_with(wide, Keep::Head, 100, 5, Lines::Whole);
        assert_eq!(head.text, "éé");
        let tail = bound_with(wide, Keep::Tail, 100, 5, Lines::Whole);
        assert_eq!(tail.text, "éé");
    }

    /// QA r99: a summarized message of one 86 KB line, read back after its header, showed the
    /// header alone. Read back, the line that does not fit is cut to the room left.
    #[test]
    fn text_read_back_cuts_the_line_that_does_not_fit() {
        let text = format!("[entry 1] user:\n{}\nlast", "z".repeat(100));
        let whole = bound_within(&text, Keep::Head, 40);
        assert_eq!(whole.text, "[entry 1] user:");
        let read_back = bound_head_cutting_lines(&text, 40);
        assert_eq!(
            read_back.text,
            format!("[entry 1] user:\n{}", "z".repeat(24))
        );
        assert_eq!(read_back.text.len(), 40);
        let cut = read_back.cut.unwrap();
        assert_eq!((cut.shown_lines, cut.total_lines), (2, 3));
        let fits = bound_head_cutting_lines("short\ntext", 40);
        assert_eq!((fits.text.as_str(), fits.cut), ("short\ntext", None));
    }

    #[test]
    fn the_real_limits_are_2000_lines_and_50_kb() {
        let many: String = "x\n".repeat(3000);
        let bounded = bound(&many, Keep::Head);
        assert_eq!(bounded.cut.unwrap().shown_lines, MAX_LINES);
        let wide = "y".repeat(100) + "\n";
        let big = wide.repeat(1000);
        let bounded = bound(big.trim_end(), Keep::Tail);
        assert!(bounded.text.len() <= MAX_BYTES);
        assert!(bounded.text.ends_with(&"y".repeat(100)));
    }
}

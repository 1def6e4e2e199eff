//! `recall`'s answer within its byte budget, note included, for the agent's `recall` tool and
//! serve's `recall` method alike. A tool result the tool had already cut when it was stored (bash's
//! last 50 KB and a note naming the file with the full output) is kept with that note whole: cut
//! through it, the answer lost the one path to the full output and pointed at a copy of the cut
//! text instead (QA r101 D2). Its text is cut from the end the tool kept, and a last line says
//! which lines of the full output are shown and how to `read` the others by offset.

use super::limit::{self, Bounded, CUT_NOTICE_START, Cut, Keep};

/// The most bytes after a stored cut note that still count as its trailer (the note and a status
/// line such as `Command exited with code 2`): text longer than this after it is the output's own.
const MAX_TRAILER_BYTES: usize = 2048;

/// `text` within `max_bytes` and [`limit::MAX_LINES`]: whole when it fits; a stored cut result
/// with its note whole (see the module); else its head followed by the note `note` writes for the
/// cut (which starts with its own separator), the note within `max_bytes` too.
pub fn bound_recalled(text: &str, max_bytes: usize, note: impl FnMut(&Cut) -> String) -> Bounded {
    if limit::fits(text, max_bytes) {
        return Bounded {
            text: text.to_owned(),
            cut: None,
        };
    }
    if let Some(read) = ReadPart::find(text) {
        return read.cut_within(max_bytes);
    }
    match StoredCut::find(text) {
        Some(stored) => stored.cut_within(max_bytes),
        None => limit::cut_head_with_note(text, max_bytes, note),
    }
}

/// A `read` result that ends with the tool's note of the lines after those shown (`[Showing lines
/// 1-699 of 1200. Use offset=700 to continue.]`). Cut through it, a recall lost the note and the
/// last line shown came back broken (QA: "the last of them cut", no offset to go on from); cut
/// again, it shows fewer whole lines and the note says the new last one.
#[derive(Debug, PartialEq, Eq)]
struct ReadPart<'a> {
    body: &'a str,
    first_line: usize,
    file_lines: usize,
}

impl<'a> ReadPart<'a> {
    fn find(text: &'a str) -> Option<Self> {
        let separator = format!("\n\n{}", limit::READ_NOTICE_STARTS[0]);
        let at = text.rfind(&separator)?;
        let note = text[at + separator.len()..].strip_suffix(" to continue.]")?;
        // `1-699 of 1200. Use offset=700`
        let (range, rest) = note.split_once(" of ")?;
        let (first, _last) = range.split_once('-')?;
        let (total, _offset) = rest.split_once(". Use offset=")?;
        Some(Self {
            body: &text[..at],
            first_line: first.parse().ok()?,
            file_lines: total.parse().ok()?,
        })
    }

    fn cut_within(&self, max_bytes: usize) -> Bounded {
        limit::cut_whole_lines_with_note(self.body, Keep::Head, max_bytes, |cut| {
            let last = self.first_line + cut.shown_lines.max(1) - 1;
            format!(
                "\n\n{}{}-{last} of {}. Use offset={} to continue.]",
                limit::READ_NOTICE_STARTS[0],
                self.first_line,
                self.file_lines,
                last + 1
            )
        })
    }
}

/// A tool result stored cut: its text, and the note (with what follows it) the tool ended it with.
#[derive(Debug, PartialEq, Eq)]
struct StoredCut<'a> {
    body: &'a str,
    trailer: &'a str,
    /// The end of the full output the stored text is.
    keep: Keep,
    /// The full output's lines, as the note counts them (`None` when it does not say).
    full_lines: Option<usize>,
}

impl<'a> StoredCut<'a> {
    /// The stored cut in `text`: its last paragraph starting with [`CUT_NOTICE_START`], when it
    /// and what follows are short enough to be the tool's note.
    fn find(text: &'a str) -> Option<Self> {
        let separator = format!("\n\n{CUT_NOTICE_START}");
        let at = text.rfind(&separator)?;
        let trailer = &text[at + 2..];
        if trailer.len() > MAX_TRAILER_BYTES {
            return None;
        }
        let (keep, full_lines) = match shown_part(trailer) {
            Some((keep, total)) => (keep, Some(total)),
            // The note of an output that could not be saved does not say which end it kept.
            None => (Keep::Head, None),
        };
        Some(Self {
            body: &text[..at],
            trailer,
            keep,
            full_lines,
        })
    }

    /// The stored text cut from the end it kept, then the note whole, then what recall shows.
    fn cut_within(&self, max_bytes: usize) -> Bounded {
        let room = max_bytes.saturating_sub(self.trailer.len() + 2);
        let bounded = limit::cut_whole_lines_with_note(self.body, self.keep, room, |cut| {
            format!("\n\n{}\n\n{}", self.trailer, self.recall_line(cut))
        });
        // The body is cut within the room before the trailer; the cut counts all the answer.
        let cut = bounded.cut.map(|cut| Cut {
            limit_bytes: max_bytes,
            ..cut
        });
        Bounded {
            text: bounded.text,
            cut,
        }
    }

    /// What this answer shows of the full output, and how to read the rest.
    fn recall_line(&self, cut: &Cut) -> String {
        let shown = cut.shown_lines;
        let intro = "[recall: this result was cut when it was stored (the note above names the file \
                     with the full output) and again here to fit recall's limit";
        let Some(total) = self.full_lines.filter(|&total| total >= shown) else {
            let which = match self.keep {
                Keep::Head => "first",
                Keep::Tail => "last",
            };
            return format!(
                "{intro}: showing its {which} {shown} of {} lines]",
                cut.total_lines
            );
        };
        match self.keep {
            Keep::Tail => {
                let before = total - shown;
                format!(
                    "{intro}: showing lines {}-{total} of the full output's {total}. `read` that \
                     file with offset=1 and limit={before} for the lines before them]",
                    before + 1
                )
            }
            Keep::Head => format!(
                "{intro}: showing lines 1-{shown} of the full output's {total}. `read` that file \
                 with offset={} for the lines after them]",
                shown + 1
            ),
        }
    }
}

/// Which end of the full output a cut note says is shown, and the full output's lines:
/// `[Output truncated: showing the last 428 of 1200 lines …` (or `showing all 3 lines, …`).
fn shown_part(note: &str) -> Option<(Keep, usize)> {
    let rest = note
        .strip_prefix(CUT_NOTICE_START)?
        .strip_prefix(": showing ")?;
    if let Some(all) = rest.strip_prefix("all ") {
        let total = all.split(' ').next()?.parse().ok()?;
        let keep = if all.contains("the last one cut") {
            Keep::Head
        } else {
            Keep::Tail
        };
        return Some((keep, total));
    }
    let mut words = rest.split(' ');
    let keep = match (words.next()?, words.next()?) {
        ("the", "first") => Keep::Head,
        ("the", "last") => Keep::Tail,
        _ => return None,
    };
    let _shown = words.next()?;
    if words.next()? != "of" {
        return None;
    }
    let total = words.next()?.parse().ok()?;
    Some((keep, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA: a cut `read` of an 88 KB file, recalled, came back with its last line broken and
    /// without the note saying where to go on.
    #[test]
    fn a_read_result_recalled_keeps_whole_lines_and_says_where_to_go_on() {
        let body: Vec<String> = (1..=699)
            .map(|line| format!("line {line} of the file, padded to be long enough to count"))
            .collect();
        let stored = format!(
            "{}\n\n[Showing lines 1-699 of 1200. Use offset=700 to continue.]",
            body.join("\n")
        );
        let max_bytes = stored.len() - 300;
        let answer = bound_recalled(&stored, max_bytes, |_| String::new());
        assert!(answer.text.len() <= max_bytes);
        let shown = answer
            .text
            .lines()
            .filter(|line| line.starts_with("line "))
            .count();
        assert!(shown < 699 && shown > 600, "{shown}");
        let last = answer
            .text
            .lines()
            .rfind(|line| line.starts_with("line "))
            .unwrap();
        assert_eq!(
            last,
            format!("line {shown} of the file, padded to be long enough to count")
        );
        assert!(
            answer.text.ends_with(&format!(
                "\n\n[Showing lines 1-{shown} of 1200. Use offset={} to continue.]",
                shown + 1
            )),
            "{}",
            &answer.text[answer.text.len() - 200..]
        );
        // A read from an offset keeps its first line number.
        let stored = format!(
            "{}\n\n[Showing lines 700-1398 of 2000. Use offset=1399 to continue.]",
            body.join("\n")
        );
        let answer = bound_recalled(&stored, stored.len() - 300, |_| String::new());
        assert!(
            answer.text.ends_with(&format!(
                "[Showing lines 700-{} of 2000. Use offset={} to continue.]",
                699 + shown,
                700 + shown
            )),
            "{}",
            &answer.text[answer.text.len() - 200..]
        );
    }

    /// bash's stored result: the last lines of a long output, its note, and a status line.
    fn stored_bash_result(lines: usize, kept: usize) -> String {
        let body: Vec<String> = (lines - kept + 1..=lines)
            .map(|line| format!("line {line} of the build log, padded to be long enough"))
            .collect();
        format!(
            "{}\n\n[Output truncated: showing the last {kept} of {lines} lines (x of y bytes; \
             limits 2000 lines, 50 KB). Full output: /s/tool-output/abc/call_1.txt]\n\nCommand \
             exited with code 2",
            body.join("\n")
        )
    }

    /// QA r101 D2: recall cut the stored note naming the full output and pointed at a copy of the
    /// cut text. The note stays whole, the answer within the budget, and it says what to read.
    #[test]
    fn a_stored_cut_result_keeps_its_note_and_points_into_the_full_output() {
        let stored = stored_bash_result(1200, 428);
        let max_bytes = stored.len() - 500;
        let mut asked_for_a_copy = false;
        let answer = bound_recalled(&stored, max_bytes, |_| {
            asked_for_a_copy = true;
            String::new()
        });
        assert!(!asked_for_a_copy, "a copy of a cut text is never offered");
        assert!(answer.text.len() <= max_bytes, "{}", answer.text.len());
        assert!(answer.cut.is_some());
        let trailer = &stored[stored.find("\n\n[Output truncated").unwrap()..];
        assert!(answer.text.contains(trailer), "{}", answer.text);
        // The end bash kept is kept: the last line of the output is there, the first gone.
        assert!(answer.text.contains("line 1200 of the build log"));
        assert!(!answer.text.contains("line 773 of the build log"));
        let shown = answer
            .text
            .lines()
            .filter(|l| l.starts_with("line "))
            .count();
        let first = 1200 - shown + 1;
        assert!(answer.text.starts_with(&format!("line {first} of")));
        assert!(
            answer.text.ends_with(&format!(
                "showing lines {first}-1200 of the full output's 1200. `read` that file with \
                 offset=1 and limit={} for the lines before them]",
                first - 1
            )),
            "{}",
            answer.text
        );
    }

    #[test]
    fn a_stored_cut_result_that_fits_is_given_whole() {
        let stored = stored_bash_result(1200, 20);
        let answer = bound_recalled(&stored, stored.len(), |_| String::new());
        assert_eq!((answer.text, answer.cut), (stored, None));
    }

    /// Any other long text ends with the caller's note, within the budget with it.
    #[test]
    fn the_note_of_any_other_cut_answer_counts_in_the_budget() {
        let text = "a line of text read back\n".repeat(400);
        for max_bytes in [1024, 2000, 5000] {
            let answer = bound_recalled(&text, max_bytes, |cut| {
                format!(
                    "\n\n[recall: showing {} of {} lines]",
                    cut.shown_lines, cut.total_lines
                )
            });
            assert!(
                answer.text.len() <= max_bytes,
                "{max_bytes}: {}",
                answer.text.len()
            );
            assert!(answer.text.ends_with(" of 401 lines]"), "{}", answer.text);
        }
    }

    #[test]
    fn a_cut_note_says_which_end_it_shows() {
        assert_eq!(
            shown_part("[Output truncated: showing the last 428 of 1200 lines (5 of 9 bytes"),
            Some((Keep::Tail, 1200))
        );
        assert_eq!(
            shown_part("[Output truncated: showing the first 2 of 30 lines (5 of 9 bytes"),
            Some((Keep::Head, 30))
        );
        assert_eq!(
            shown_part("[Output truncated: showing all 3 lines, the last one cut (5 of 9"),
            Some((Keep::Head, 3))
        );
        assert_eq!(
            shown_part("[Output truncated to 4 of 9 lines; the full output could not be saved"),
            None
        );
    }
}

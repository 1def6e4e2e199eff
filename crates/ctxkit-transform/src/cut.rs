//! Cutting one tool result's text down to a head, a tail and a marker. Every slice falls on a UTF-8
//! character boundary: line cuts split only after `\n`, character cuts count whole characters.

use crate::TransformSettings;
use crate::digest::{VisibleNames, digest_caps, digest_unseen};
use crate::marker::{Reference, chars_marker, lines_marker};

/// The text that replaces a cut text, with both lengths in characters (Unicode scalar values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    pub text: String,
    pub original_chars: usize,
    pub chars: usize,
}

/// Characters and `\n` bytes of `text`, in one pass the compiler vectorizes: byte counters per
/// 128-byte chunk (they cannot overflow), and a byte starts a character unless it is a continuation
/// byte `0b10xx_xxxx` (as `i8`, below −64).
pub(crate) fn chars_and_newlines(text: &str) -> (usize, usize) {
    let mut chars = 0;
    let mut newlines = 0;
    for chunk in text.as_bytes().chunks(128) {
        let mut chunk_chars: u8 = 0;
        let mut chunk_newlines: u8 = 0;
        for &byte in chunk {
            chunk_chars += u8::from(byte.cast_signed() >= -64);
            chunk_newlines += u8::from(byte == b'\n');
        }
        chars += usize::from(chunk_chars);
        newlines += usize::from(chunk_newlines);
    }
    (chars, newlines)
}

fn char_count(text: &str) -> usize {
    chars_and_newlines(text).0
}

/// Byte positions `(head_end, tail_start)` of a cut keeping the first `head_lines` and the last
/// `tail_lines` lines, or `None` when the text has fewer than `head_lines + tail_lines + 1` lines.
/// Lines end at `\n`; a final `\n` does not start another line. Both positions follow a `\n` (or are
/// the ends of the text), so the omitted part is whole lines.
fn line_bounds(text: &str, head_lines: usize, tail_lines: usize) -> Option<(usize, usize)> {
    let mut head_end = 0;
    for _ in 0..head_lines {
        head_end += text[head_end..].find('\n')? + 1;
    }
    let mut tail_start = text.len();
    let mut search_end = text.strip_suffix('\n').map_or(text.len(), str::len);
    for _ in 0..tail_lines {
        let newline = text[..search_end].rfind('\n')?;
        tail_start = newline + 1;
        search_end = newline;
    }
    (head_end < tail_start).then_some((head_end, tail_start))
}

/// Cuts `text` (a tool result of call `id`) when it is longer than `pruneMinChars` characters:
/// - by lines: the first `headLines` and last `tailLines` lines around a marker stating the omitted
///   lines and characters, when the text has enough lines and the kept lines are at most
///   `pruneMinChars` characters;
/// - otherwise by characters: the first `headChars` and last `tailChars` characters around a marker
///   stating the omitted characters.
///
/// Returns `None` when the text is short enough, or when the cut would not make it shorter.
#[cfg(test)]
pub(crate) fn cut_text(text: &str, id: &str, settings: &TransformSettings) -> Option<Cut> {
    cut_text_seeing(
        text,
        Reference::ToolResult(id),
        settings,
        &VisibleNames::default(),
    )
}

/// [`cut_text`] of the text `reference` names (a result, or one argument of a call), whose digest
/// leaves out the names the model can already read before it (`visible`) and in the kept head and
/// tail.
pub(crate) fn cut_text_seeing(
    text: &str,
    reference: Reference<'_>,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Option<Cut> {
    let min_chars = settings.prune_min_chars;
    // Bytes bound characters from above: short texts are rejected without counting.
    if text.len() <= min_chars {
        return None;
    }
    let total_chars = match line_bounds(text, settings.head_lines, settings.tail_lines) {
        Some((head_end, tail_start)) => {
            let (head, middle, tail) = (
                &text[..head_end],
                &text[head_end..tail_start],
                &text[tail_start..],
            );
            let (middle_chars, middle_newlines) = chars_and_newlines(middle);
            let kept_chars = char_count(head) + char_count(tail);
            let total_chars = kept_chars + middle_chars;
            if total_chars <= min_chars {
                return None;
            }
            if kept_chars <= min_chars {
                let lines = middle_newlines + usize::from(!middle.ends_with('\n'));
                let kept = [head, tail].concat();
                let names = digest(middle, &kept, settings, visible);
                let marker = lines_marker(lines, middle_chars, &names, reference);
                let mut cut = String::with_capacity(head.len() + marker.len() + tail.len() + 1);
                cut.push_str(head);
                cut.push_str(&marker);
                if !tail.is_empty() {
                    cut.push('\n');
                    cut.push_str(tail);
                }
                return finish(cut, total_chars);
            }
            total_chars
        }
        None => {
            let total_chars = char_count(text);
            if total_chars <= min_chars {
                return None;
            }
            total_chars
        }
    };
    cut_by_chars(text, total_chars, reference, settings, visible)
}

fn cut_by_chars(
    text: &str,
    total_chars: usize,
    reference: Reference<'_>,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Option<Cut> {
    let (head_chars, tail_chars) = (settings.head_chars, settings.tail_chars);
    if total_chars <= head_chars.saturating_add(tail_chars) {
        return None;
    }
    let head_end = text
        .char_indices()
        .nth(head_chars)
        .map_or(text.len(), |(position, _)| position);
    let tail_start = match tail_chars.checked_sub(1) {
        None => text.len(),
        Some(last) => text
            .char_indices()
            .rev()
            .nth(last)
            .map_or(0, |(position, _)| position),
    };
    let (head, tail) = (&text[..head_end], &text[tail_start..]);
    let kept = [head, "\n", tail].concat();
    let names = digest(
        text.get(head_end..tail_start).unwrap_or(""),
        &kept,
        settings,
        visible,
    );
    let marker = chars_marker(total_chars - head_chars - tail_chars, &names, reference);
    let mut cut = String::with_capacity(head.len() + marker.len() + tail.len() + 2);
    cut.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        cut.push('\n');
    }
    cut.push_str(&marker);
    if !tail.is_empty() {
        cut.push('\n');
        cut.push_str(tail);
    }
    finish(cut, total_chars)
}

/// The digest of the omitted text under the `pruneDigest*` caps (empty when they are 0), without
/// the names of the kept text or of `visible`.
fn digest<'a>(
    omitted: &'a str,
    kept: &str,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Vec<&'a str> {
    let (names, chars) = digest_caps(
        omitted.len(),
        settings.prune_digest_names,
        settings.prune_digest_chars,
    );
    digest_unseen(omitted, kept, names, chars, visible)
}

/// Keeps a cut only when it is shorter than the original.
fn finish(text: String, original_chars: usize) -> Option<Cut> {
    let chars = char_count(&text);
    (chars < original_chars).then_some(Cut {
        text,
        original_chars,
        chars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pruned_reference;

    fn numbered_lines(count: usize, width: usize) -> String {
        (0..count)
            .map(|index| format!("{index:0width$}\n"))
            .collect()
    }

    #[test]
    fn counts_characters_and_newlines() {
        assert_eq!(chars_and_newlines(""), (0, 0));
        assert_eq!(chars_and_newlines("a\nß\n😀"), (5, 2));
        let long = "é\n".repeat(1000);
        assert_eq!(chars_and_newlines(&long), (2000, 1000));
    }

    #[test]
    fn line_bounds_need_one_omitted_line() {
        assert_eq!(line_bounds("a\nb\nc\nd\ne\n", 3, 2), None);
        assert_eq!(line_bounds("a\nb\nc\nd\ne", 3, 2), None);
        assert_eq!(line_bounds("a\nb\nc\nX\nd\ne", 3, 2), Some((6, 8)));
        assert_eq!(line_bounds("a\nb\nc\nX\nd\ne\n", 3, 2), Some((6, 8)));
        assert_eq!(line_bounds("abc", 0, 0), Some((0, 3)));
        assert_eq!(line_bounds("", 0, 0), None);
    }

    #[test]
    fn cuts_by_lines_with_exact_counts() {
        // 100 lines of 9 digits + newline: 1000 chars.
        let text = numbered_lines(100, 9);
        let cut = cut_text(&text, "call_7", &TransformSettings::default()).unwrap();
        let expected = format!(
            "{}{}{}\n{}",
            "000000000\n000000001\n000000002\n",
            "[... 95 lines (950 chars) omitted; full output: ",
            "ctxkit://tool-result/call_7]",
            "000000098\n000000099\n"
        );
        assert_eq!(cut.text, expected);
        assert_eq!(cut.original_chars, 1000);
        assert_eq!(cut.chars, cut.text.chars().count());
        assert_eq!(pruned_reference(&cut.text), Some("call_7"));
    }

    #[test]
    fn text_without_final_newline_counts_its_last_line() {
        let text = numbered_lines(100, 9);
        let text = text.trim_end_matches('\n');
        let cut = cut_text(text, "c", &TransformSettings::default()).unwrap();
        assert!(
            cut.text.contains("[... 95 lines (950 chars) omitted"),
            "{}",
            cut.text
        );
        assert!(cut.text.ends_with("000000098\n000000099"));
    }

    #[test]
    fn short_texts_are_kept() {
        let settings = TransformSettings::default();
        assert_eq!(cut_text(&"x".repeat(500), "c", &settings), None);
        // 500 characters but more bytes: still not longer than the minimum.
        assert_eq!(cut_text(&"é".repeat(500), "c", &settings), None);
        assert_eq!(cut_text(&"é\n".repeat(250), "c", &settings), None);
    }

    #[test]
    fn few_long_lines_are_cut_by_characters() {
        let settings = TransformSettings::default();
        let text = "y".repeat(1000);
        let cut = cut_text(&text, "c", &settings).unwrap();
        assert_eq!(
            cut.text,
            format!(
                "{}\n[... 700 chars omitted; full output: ctxkit://tool-result/c]\n{}",
                "y".repeat(200),
                "y".repeat(100)
            )
        );
        // Enough lines, but the kept lines alone exceed the minimum: characters again.
        let text = format!("{}\n{}", "z".repeat(2000), numbered_lines(10, 3));
        let cut = cut_text(&text, "c", &settings).unwrap();
        assert!(cut.text.contains("chars omitted"), "{}", cut.text);
        assert!(!cut.text.contains("lines ("), "{}", cut.text);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let settings = TransformSettings {
            head_chars: 3,
            tail_chars: 2,
            ..TransformSettings::default()
        };
        let text = "😀ß€".repeat(400);
        let cut = cut_text(&text, "c", &settings).unwrap();
        assert!(
            cut.text.starts_with("😀ß€\n[... 1195 chars omitted"),
            "{}",
            cut.text
        );
        assert!(cut.text.ends_with("]\nß€"), "{}", cut.text);
        for head_chars in 0..8 {
            for tail_chars in 0..8 {
                let settings = TransformSettings {
                    head_chars,
                    tail_chars,
                    prune_min_chars: 10,
                    ..TransformSettings::default()
                };
                let text = "a😀ß€\u{301}".repeat(20);
                let cut = cut_text(&text, "c", &settings).unwrap();
                let head: String = text.chars().take(head_chars).collect();
                assert!(cut.text.starts_with(&head));
                let omitted = 100 - head_chars - tail_chars;
                assert!(
                    cut.text.contains(&format!("[... {omitted} chars")),
                    "{}",
                    cut.text
                );
            }
        }
    }

    #[test]
    fn multibyte_lines_count_characters() {
        let text = "äöü😀\n".repeat(200);
        let cut = cut_text(&text, "c", &TransformSettings::default()).unwrap();
        assert!(
            cut.text.contains("[... 195 lines (975 chars) omitted"),
            "{}",
            cut.text
        );
        assert_eq!(cut.original_chars, 1000);
    }

    #[test]
    fn cuts_that_save_nothing_are_refused() {
        let settings = TransformSettings {
            prune_min_chars: 10,
            head_chars: 8,
            tail_chars: 8,
            ..TransformSettings::default()
        };
        assert_eq!(cut_text(&"q".repeat(40), "c", &settings), None);
    }

    #[test]
    fn the_digest_names_what_the_omitted_lines_held() {
        let mut text = numbered_lines(100, 9);
        text.insert_str(
            100,
            "12:00:00.000 ERROR BILLING-E0042 in src/billing/ledger.rs\n",
        );
        let settings = TransformSettings {
            prune_digest_names: 12,
            ..TransformSettings::default()
        };
        let cut = cut_text(&text, "c", &settings).unwrap();
        assert!(
            cut.text.contains(
                "omitted; mentions: BILLING-E0042, src/billing/ledger.rs; full output: \
                 ctxkit://tool-result/c]"
            ),
            "{}",
            cut.text
        );
        assert_eq!(pruned_reference(&cut.text), Some("c"));
        assert_eq!(cut_text(&text, "c", &settings), Some(cut.clone()));
        // Names in the kept head are not repeated in the digest; off by default.
        let plain = cut_text(&text, "c", &TransformSettings::default()).unwrap();
        assert!(!plain.text.contains("mentions"), "{}", plain.text);
        let head_named = format!("see a_b_c\n{text}");
        let cut = cut_text(&head_named, "c", &settings).unwrap();
        assert!(!cut.text.contains("mentions: a_b_c"), "{}", cut.text);
        // A cut by characters gets the digest of its omitted characters.
        let long = format!("{}req-7f3a-0042 {}", "y ".repeat(300), "y ".repeat(300));
        let cut = cut_text(&long, "c", &settings).unwrap();
        assert!(
            cut.text
                .contains("chars omitted; mentions: req-7f3a-0042; full output"),
            "{}",
            cut.text
        );
    }

    #[test]
    fn zero_head_and_tail_leave_only_the_marker() {
        let settings = TransformSettings {
            head_lines: 0,
            tail_lines: 0,
            ..TransformSettings::default()
        };
        let cut = cut_text(&numbered_lines(100, 9), "c", &settings).unwrap();
        assert_eq!(
            cut.text,
            "[... 100 lines (1000 chars) omitted; full output: ctxkit://tool-result/c]"
        );
    }
}

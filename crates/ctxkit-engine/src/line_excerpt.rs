//! A long line as `recall` shows it for a query: the parts around the query's words. A pasted
//! JSON response or a minified file is one line of tens of kilobytes; shown whole, the words' line
//! alone outgrew the tool's output limit and the answer showed nothing of it (QA r99).

/// A line longer than this many bytes is shown in parts.
pub(crate) const LONG_LINE_BYTES: usize = 1_000;
/// The bytes shown on each side of a word found in a long line, and of a long line around one.
const AROUND_BYTES: usize = 240;
/// The most parts of one long line shown, and the most bytes of them all: a word found every few
/// bytes of a long line would otherwise show all of it.
const MOST_PARTS: usize = 8;
const MOST_BYTES: usize = MOST_PARTS * 2 * AROUND_BYTES;

/// `line` as shown: whole when short; else, when it holds one of `words` (lower case), the parts
/// around them joined by ` … `; else its head.
pub(crate) fn shown_line<'a>(line: &'a str, words: &[String]) -> std::borrow::Cow<'a, str> {
    if line.len() <= LONG_LINE_BYTES {
        return line.into();
    }
    let parts = merged(line, found_spans(line, words));
    if parts.is_empty() {
        let end = floor_boundary(line, AROUND_BYTES);
        return format!("{} … [{} more bytes]", &line[..end], line.len() - end).into();
    }
    let mut shown = String::new();
    if parts.first().is_some_and(|(start, _)| *start > 0) {
        shown.push_str("… ");
    }
    let texts: Vec<&str> = parts
        .iter()
        .map(|&(start, end)| &line[start..end])
        .collect();
    shown.push_str(&texts.join(" … "));
    if parts.last().is_some_and(|(_, end)| *end < line.len()) {
        shown.push_str(" …");
    }
    shown.into()
}

/// The byte spans of `line` around each place one of `words` is found (case aside), at most
/// [`MOST_PARTS`] of them, widened by [`AROUND_BYTES`] to character boundaries.
fn found_spans(line: &str, words: &[String]) -> Vec<(usize, usize)> {
    let (lowered, origin) = lowered_with_origin(line);
    let mut spans = Vec::new();
    for word in words.iter().filter(|word| !word.is_empty()) {
        for at in crate::words::query_word_places(&lowered, word) {
            let start = origin.get(at).copied().unwrap_or(0);
            let end = origin.get(at + word.len()).copied().unwrap_or(line.len());
            spans.push((
                floor_boundary(line, start.saturating_sub(AROUND_BYTES)),
                ceil_boundary(line, end + AROUND_BYTES),
            ));
        }
    }
    spans.sort_unstable();
    spans
}

/// Overlapping spans as one, the first [`MOST_PARTS`] kept, within [`MOST_BYTES`] in all.
fn merged(line: &str, spans: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut total = 0;
    for (start, end) in spans {
        let from = match parts.last() {
            Some(&(_, last_end)) if start <= last_end => last_end,
            _ if parts.len() == MOST_PARTS => break,
            _ => start,
        };
        let room = MOST_BYTES.saturating_sub(total);
        let end = floor_boundary(line, end.min(from + room));
        if end <= from {
            if room == 0 {
                break;
            }
            continue;
        }
        total += end - from;
        match parts.last_mut() {
            Some(last) if from == last.1 => last.1 = end,
            _ => parts.push((from, end)),
        }
    }
    parts
}

/// `line` in lower case, and for each of its bytes (and its end) the byte of `line` it comes
/// from: lower case may change a character's length, so offsets are mapped back through this.
fn lowered_with_origin(line: &str) -> (String, Vec<usize>) {
    let mut lowered = String::with_capacity(line.len());
    let mut origin = Vec::with_capacity(line.len() + 1);
    for (at, character) in line.char_indices() {
        for lower in character.to_lowercase() {
            origin.extend(std::iter::repeat_n(at, lower.len_utf8()));
            lowered.push(lower);
        }
    }
    origin.push(line.len());
    (lowered, origin)
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_lowercase).collect()
    }

    #[test]
    fn a_short_line_is_whole() {
        assert_eq!(
            shown_line("the PORT is 8431", &words("port")),
            "the PORT is 8431"
        );
    }

    #[test]
    fn a_long_line_shows_the_parts_around_its_words() {
        let line = format!(
            "{}\"note\": \"the Deploy key id is 7731\"{}",
            "a".repeat(5_000),
            "b".repeat(5_000)
        );
        let shown = shown_line(&line, &words("deploy"));
        assert!(shown.starts_with("… a"), "{shown}");
        assert!(shown.contains("the Deploy key id is 7731"), "{shown}");
        assert!(shown.ends_with("b …"), "{shown}");
        assert!(shown.len() < 600, "{}", shown.len());
    }

    #[test]
    fn parts_are_merged_bounded_in_number_and_cut_on_characters() {
        let line = "é key ".repeat(2_000);
        let shown = shown_line(&line, &words("KEY"));
        assert!(
            shown.len() < MOST_PARTS * (2 * AROUND_BYTES + 20),
            "{}",
            shown.len()
        );
        let far = format!("key{}key{}key", "é".repeat(1_000), "é".repeat(1_000));
        assert_eq!(shown_line(&far, &words("key")).matches(" … ").count(), 2);
    }

    #[test]
    fn a_long_line_without_the_words_shows_its_head() {
        let line = "x".repeat(3_000);
        let shown = shown_line(&line, &words("y"));
        assert_eq!(shown, format!("{} … [2760 more bytes]", "x".repeat(240)));
    }

    #[test]
    fn lower_case_that_changes_length_maps_back() {
        // `İ` (2 bytes) lowers to `i̇` (3 bytes): the offsets after it move.
        let line = format!(
            "{}{} needle{}",
            "İ".repeat(600),
            "z".repeat(10),
            "z".repeat(600)
        );
        let shown = shown_line(&line, &words("needle"));
        // (A word of letters is found at the start of a word: the space starts it.)
        assert!(shown.contains("zz needlezz"), "{shown}");
    }
}

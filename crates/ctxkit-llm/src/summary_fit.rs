//! A summary request sized to its model: when the serialized span would leave the reply less
//! room than its floor (`ctxkit_overflow::output_floor`), the oldest part of the span is left out
//! (with a line saying so) until the request fits. The span sits between the markers the
//! compaction prompts use (`<conversation>` … `</conversation>`, `# Conversation` …
//! `# Instructions`); a text without them is left as it is.

/// The span markers: (opening, closing).
const MARKERS: &[(&str, &str)] = &[
    ("<conversation>\n", "\n</conversation>"),
    ("# Conversation\n", "\n\n# Instructions"),
];

/// `text` with the oldest part of its span left out so that it is at most `max_chars`
/// characters (UTF-16 units, as the estimate counts); `None` when it already fits or has no span
/// to cut.
pub(crate) fn fit_span(text: &str, max_chars: usize) -> Option<String> {
    let length = text.encode_utf16().count();
    if length <= max_chars {
        return None;
    }
    let (start, end) = MARKERS.iter().find_map(|(open, close)| {
        let start = text.find(open)? + open.len();
        let end = start + text[start..].find(close)?;
        Some((start, end))
    })?;
    let span = &text[start..end];
    let excess = length - max_chars;
    let note_room = 120;
    let span_length = span.encode_utf16().count();
    if excess + note_room >= span_length {
        return None;
    }
    // Drop whole characters from the front until `excess + note_room` UTF-16 units are gone,
    // then start at the next line.
    let mut dropped = 0;
    let mut cut = 0;
    for (index, character) in span.char_indices() {
        if dropped >= excess + note_room {
            cut = index;
            break;
        }
        dropped += character.len_utf16();
    }
    let cut = span[cut..]
        .find('\n')
        .map_or(cut, |newline| cut + newline + 1);
    let omitted = span[..cut].encode_utf16().count();
    Some(format!(
        "{}[The first {omitted} characters of the conversation were left out to fit the summary model's context window.]\n{}{}",
        &text[..start],
        &span[cut..],
        &text[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_part_of_the_span_goes_and_the_instructions_stay() {
        let span: String = (0..200)
            .map(|line| format!("[User]: line {line}\n"))
            .collect();
        let text = format!("<conversation>\n{span}\n</conversation>\n\nSummarize it.");
        let fitted = fit_span(&text, 1_000).unwrap();
        assert!(fitted.encode_utf16().count() <= 1_000, "{}", fitted.len());
        assert!(fitted.starts_with("<conversation>\n[The first "));
        assert!(fitted.contains("line 199\n"));
        assert!(!fitted.contains("line 0\n"));
        assert!(fitted.ends_with("</conversation>\n\nSummarize it."));
        assert_eq!(fit_span(&text, 100_000), None);
        assert_eq!(fit_span("no markers at all", 3), None);
    }
}

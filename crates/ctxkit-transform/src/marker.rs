//! The text that stands in for what a layer cut, and the reference in it the agent can use to fetch
//! the full text back (the engine resolves the id against the stored session).

/// The scheme and path before a tool call id in every marker of a cut tool result; `recall` takes
/// it and returns the result as stored.
pub const TOOL_RESULT_REFERENCE_PREFIX: &str = "ctxkit://tool-result/";

/// The words before the reference; `pruned_reference` looks for them to avoid reading ordinary text
/// that happens to mention the scheme.
const REFERENCE_LEAD: &str = "full output: ";

/// The scheme and path before a tool call id in the marker of a cut tool-call argument; `recall`
/// takes it and returns the call's arguments as stored.
pub const TOOL_CALL_REFERENCE_PREFIX: &str = "ctxkit://tool-call/";

/// The words before a tool call's reference.
const CALL_REFERENCE_LEAD: &str = "full call: ";

/// What a marker points back to: the whole text of a tool result, or the whole arguments of a tool
/// call, both by the call's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reference<'a> {
    ToolResult(&'a str),
    ToolCall(&'a str),
}

impl Reference<'_> {
    fn id_len(self) -> usize {
        match self {
            Self::ToolResult(id) | Self::ToolCall(id) => id.len(),
        }
    }
}

/// Whether `id` can be written into a marker and read back unchanged by [`pruned_reference`]: not
/// empty, no whitespace, control characters or `]`. Results with other ids are never cut, so every
/// cut stays recoverable.
pub(crate) fn is_referenceable(id: &str) -> bool {
    !id.is_empty()
        && !id.chars().any(|character| {
            character == ']' || character.is_whitespace() || character.is_control()
        })
}

/// Appends `count word` or `count words` (plain digits, no grouping).
fn push_count(out: &mut String, count: usize, word: &str) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    let mut rest = count;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[start..].iter().map(|&digit| char::from(digit)));
    out.push(' ');
    out.push_str(word);
    if count != 1 {
        out.push('s');
    }
}

fn names_len(names: &[&str]) -> usize {
    names.iter().map(|name| name.len() + 2).sum::<usize>() + 12
}

/// The words before a digest's names.
const MENTIONS_LEAD: &str = "; mentions: ";

/// Appends the digest part `; mentions: a, b, c` when there are names.
fn push_digest(out: &mut String, names: &[&str]) {
    if let Some((first, rest)) = names.split_first() {
        out.push_str(MENTIONS_LEAD);
        out.push_str(first);
        for name in rest {
            out.push_str(", ");
            out.push_str(name);
        }
    }
}

/// Appends the reference part: `; full output: ctxkit://tool-result/<id>]` for a result,
/// `; full call: ctxkit://tool-call/<id>]` for a call's argument.
fn push_reference(out: &mut String, reference: Reference<'_>) {
    let (lead, prefix, id) = match reference {
        Reference::ToolResult(id) => (REFERENCE_LEAD, TOOL_RESULT_REFERENCE_PREFIX, id),
        Reference::ToolCall(id) => (CALL_REFERENCE_LEAD, TOOL_CALL_REFERENCE_PREFIX, id),
    };
    out.push_str("; ");
    out.push_str(lead);
    out.push_str(prefix);
    out.push_str(id);
    out.push(']');
}

/// The marker of a cut by lines: `[... 812 lines (40213 chars) omitted; full output:
/// ctxkit://tool-result/<id>]`, with `; mentions: a, b` before `; full output` when `names` (the
/// digest of the omitted text) is not empty; a call's argument ends with `; full call:
/// ctxkit://tool-call/<id>]` instead.
pub(crate) fn lines_marker(
    lines: usize,
    chars: usize,
    names: &[&str],
    reference: Reference<'_>,
) -> String {
    let mut marker = String::with_capacity(80 + reference.id_len() + names_len(names));
    marker.push_str("[... ");
    push_count(&mut marker, lines, "line");
    marker.push_str(" (");
    push_count(&mut marker, chars, "char");
    marker.push_str(") omitted");
    push_digest(&mut marker, names);
    push_reference(&mut marker, reference);
    marker
}

/// The marker of a cut by characters: `[... 40213 chars omitted; full output:
/// ctxkit://tool-result/<id>]`, with the digest and the reference as in [`lines_marker`].
pub(crate) fn chars_marker(chars: usize, names: &[&str], reference: Reference<'_>) -> String {
    let mut marker = String::with_capacity(72 + reference.id_len() + names_len(names));
    marker.push_str("[... ");
    push_count(&mut marker, chars, "char");
    marker.push_str(" omitted");
    push_digest(&mut marker, names);
    push_reference(&mut marker, reference);
    marker
}

/// The marker that replaces an image: `[image omitted (image/png); full output:
/// ctxkit://tool-result/<id>]`.
/// A MIME type that is not a plain token is written as `image`.
pub(crate) fn image_marker(mime_type: &str, id: &str) -> String {
    let plain = !mime_type.is_empty()
        && mime_type
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "/+-.".contains(character));
    let kind = if plain { mime_type } else { "image" };
    let mut marker = String::with_capacity(72 + kind.len() + id.len());
    marker.push_str("[image omitted (");
    marker.push_str(kind);
    marker.push(')');
    push_reference(&mut marker, Reference::ToolResult(id));
    marker
}

/// The tool call id in the first prune marker of `text` (as written by the prune layer), or `None`
/// when `text` holds no marker. The engine resolves the id against the stored session to return the
/// full tool result.
pub fn pruned_reference(text: &str) -> Option<&str> {
    let mut rest = text;
    loop {
        let lead = rest.find(REFERENCE_LEAD)?;
        let after = &rest[lead + REFERENCE_LEAD.len()..];
        if let Some(reference) = after.strip_prefix(TOOL_RESULT_REFERENCE_PREFIX)
            && let Some(end) = reference.find(']')
        {
            let id = &reference[..end];
            if is_referenceable(id) {
                return Some(id);
            }
        }
        rest = after;
    }
}

/// The names the digest of the first prune marker of `text` lists (`; mentions: a, b`), in order;
/// empty when `text` holds no marker or its marker lists none. The engine carries them into the
/// compaction that summarizes the cut result, so the model keeps reading them.
pub fn pruned_mentions(text: &str) -> Vec<&str> {
    let Some(id) = pruned_reference(text) else {
        return Vec::new();
    };
    let reference = format!("; {REFERENCE_LEAD}{TOOL_RESULT_REFERENCE_PREFIX}{id}]");
    let Some(end) = text.find(&reference) else {
        return Vec::new();
    };
    let before = &text[..end];
    let Some(start) = before.rfind(MENTIONS_LEAD) else {
        return Vec::new();
    };
    let listed = &before[start + MENTIONS_LEAD.len()..];
    // A marker's digest is one run of names joined by ", ": anything else is not a digest.
    if listed.contains(['[', ']', '\n']) {
        return Vec::new();
    }
    listed.split(", ").filter(|name| !name.is_empty()).collect()
}

/// The names the model reads in a tool result's text as the view shows it: the whole text's when
/// it holds no prune marker; for a cut result those of the kept head and tail, then the digest's
/// (`pruned_mentions`). Once each, in order; the digest's rule of a name.
pub fn shown_names(text: &str) -> Vec<&str> {
    if pruned_reference(text).is_none() {
        return crate::digest::names_in(text);
    }
    pruned_names(text)
}

/// The names the model reads in a cut tool result's text as the view shows it: those of the kept
/// head and tail, then the digest's (`pruned_mentions`), once each; empty when `text` holds no
/// marker.
pub fn pruned_names(text: &str) -> Vec<&str> {
    let Some(id) = pruned_reference(text) else {
        return Vec::new();
    };
    let reference = format!("; {REFERENCE_LEAD}{TOOL_RESULT_REFERENCE_PREFIX}{id}]");
    let Some(reference_at) = text.find(&reference) else {
        return Vec::new();
    };
    let end = reference_at + reference.len();
    let start = ["[... ", "[image omitted"]
        .iter()
        .filter_map(|lead| text[..reference_at].rfind(lead))
        .max()
        .unwrap_or(reference_at);
    let mut names = crate::digest::names_in(&text[..start]);
    names.extend(crate::digest::names_in(&text[end..]));
    names.extend(pruned_mentions(text));
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(*name));
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_read_back_their_digest() {
        let marker = lines_marker(
            812,
            40_213,
            &["src/a.rs", "E0308"],
            Reference::ToolResult("c1"),
        );
        assert_eq!(pruned_mentions(&marker), ["src/a.rs", "E0308"]);
        assert_eq!(
            pruned_mentions(&format!("head\n{marker}\ntail")),
            ["src/a.rs", "E0308"]
        );
        assert_eq!(
            pruned_mentions(&chars_marker(7, &["x_y"], Reference::ToolResult("c1"))),
            ["x_y"]
        );
        assert!(pruned_mentions(&lines_marker(3, 30, &[], Reference::ToolResult("c1"))).is_empty());
        assert!(pruned_mentions(&image_marker("image/png", "c1")).is_empty());
        assert!(pruned_mentions("no marker; mentions: a, b").is_empty());
        // Text that only looks like a digest before an earlier line's marker is not read as one.
        let text = "see; mentions: x\n[... 5 chars omitted; full output: ctxkit://tool-result/c1]";
        assert!(pruned_mentions(text).is_empty());
    }

    #[test]
    fn a_cut_result_gives_the_names_of_its_head_tail_and_digest() {
        let marker = lines_marker(
            812,
            40_213,
            &["src/a.rs", "E0308"],
            Reference::ToolResult("c1"),
        );
        let text = format!("open src/b.rs\n{marker}\nexit E0308 in parse_header");
        assert_eq!(
            pruned_names(&text),
            ["src/b.rs", "E0308", "parse_header", "src/a.rs"]
        );
        assert!(pruned_names("src/b.rs and no marker").is_empty());
        assert_eq!(shown_names(&text), pruned_names(&text));
        assert_eq!(
            shown_names("src/b.rs and parse_header, src/b.rs"),
            ["src/b.rs", "parse_header"]
        );
    }

    #[test]
    fn markers_read_back_their_id() {
        let id = "toolu_01ABC|fc_9";
        for marker in [
            lines_marker(812, 40_213, &[], Reference::ToolResult(id)),
            lines_marker(
                812,
                40_213,
                &["src/a.rs", "E0308"],
                Reference::ToolResult(id),
            ),
            chars_marker(5, &[], Reference::ToolResult(id)),
            chars_marker(5, &["x_y"], Reference::ToolResult(id)),
            image_marker("image/png", id),
        ] {
            assert_eq!(pruned_reference(&marker), Some(id), "{marker}");
            assert_eq!(pruned_reference(&format!("head\n{marker}\ntail")), Some(id));
        }
        assert_eq!(
            lines_marker(812, 40_213, &[], Reference::ToolResult("c1")),
            "[... 812 lines (40213 chars) omitted; full output: ctxkit://tool-result/c1]"
        );
        assert_eq!(
            lines_marker(
                812,
                40_213,
                &["src/a.rs", "E0308"],
                Reference::ToolResult("c1")
            ),
            "[... 812 lines (40213 chars) omitted; mentions: src/a.rs, E0308; \
             full output: ctxkit://tool-result/c1]"
        );
        assert_eq!(
            chars_marker(7, &["x_y"], Reference::ToolResult("c1")),
            "[... 7 chars omitted; mentions: x_y; full output: ctxkit://tool-result/c1]"
        );
        assert_eq!(
            lines_marker(1, 1, &[], Reference::ToolResult("c1")),
            "[... 1 line (1 char) omitted; full output: ctxkit://tool-result/c1]"
        );
        assert_eq!(
            chars_marker(7, &[], Reference::ToolResult("c1")),
            "[... 7 chars omitted; full output: ctxkit://tool-result/c1]"
        );
        assert_eq!(
            image_marker("bad]\ntype", "c1"),
            "[image omitted (image); full output: ctxkit://tool-result/c1]"
        );
    }

    #[test]
    fn counts_are_plain_digits() {
        for count in [0, 9, 10, 1234, usize::MAX] {
            let mut out = String::new();
            push_count(&mut out, count, "line");
            let plural = if count == 1 { "" } else { "s" };
            assert_eq!(out, format!("{count} line{plural}"));
        }
    }

    #[test]
    fn markers_are_ascii() {
        assert!(lines_marker(3, 4, &["a_b"], Reference::ToolResult("c")).is_ascii());
        assert!(chars_marker(3, &["a_b"], Reference::ToolResult("c")).is_ascii());
        assert!(image_marker("image/png", "c").is_ascii());
    }

    #[test]
    fn text_without_a_marker_has_no_reference() {
        assert_eq!(pruned_reference(""), None);
        assert_eq!(pruned_reference("see ctxkit://tool-result/x]"), None);
        assert_eq!(
            pruned_reference("full output: ctxkit://tool-result/]"),
            None
        );
        assert_eq!(
            pruned_reference("full output: ctxkit://tool-result/abc"),
            None
        );
        assert_eq!(pruned_reference("full output: elsewhere"), None);
        // A broken first mention does not hide a later marker.
        let text = format!(
            "full output: nothing\n{}",
            chars_marker(3, &[], Reference::ToolResult("c2"))
        );
        assert_eq!(pruned_reference(&text), Some("c2"));
        // Multibyte text around a marker.
        let text = format!("ß€😀{}ß", chars_marker(3, &[], Reference::ToolResult("c3")));
        assert_eq!(pruned_reference(&text), Some("c3"));
    }

    #[test]
    fn ids_that_cannot_round_trip_are_not_referenceable() {
        assert!(is_referenceable("call_1|fc_2"));
        assert!(!is_referenceable(""));
        assert!(!is_referenceable("a b"));
        assert!(!is_referenceable("a]b"));
        assert!(!is_referenceable("a\nb"));
    }
}

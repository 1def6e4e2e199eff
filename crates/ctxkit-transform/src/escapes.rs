//! Escapes written out in a text: a tool that prints raw JSON shows a string's line breaks as `\n`
//! and its dashes as `\u2013`, and a name run after one is not the escape's letters plus a word
//! (`nWe`, `u2013`, the names the digest listed from such output).

/// `token` without the letters of a backslash escape it starts with, where `line` holds it after
/// a backslash: `u` and four hex digits (`\u2013`), or one of `n r t b f` before an upper-case
/// letter (`\nWe`). Any run of backslashes counts: JSON printed inside a JSON string writes a line
/// break as `\\n`. A letter before a lower-case one stays: `C:\Users\me\node_modules` is a
/// Windows path as often as a line break.
pub(crate) fn after_backslash_escape<'a>(line: &str, token: &'a str) -> &'a str {
    let start = token.as_ptr() as usize - line.as_ptr() as usize;
    let before = line.as_bytes().get(..start).unwrap_or_default();
    if before.last() != Some(&b'\\') {
        return token;
    }
    let bytes = token.as_bytes();
    let unicode = bytes.first() == Some(&b'u')
        && bytes
            .get(1..5)
            .is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit));
    if unicode {
        return token.get(5..).unwrap_or_default();
    }
    match bytes {
        [escape, next, ..] if b"nrtbf".contains(escape) && next.is_ascii_uppercase() => {
            token.get(1..).unwrap_or(token)
        }
        _ => token,
    }
}

#[cfg(test)]
mod tests {
    use crate::digest::names_in;

    /// A real Codex session's web fetch printed JSON: its digest and the summary's line of names
    /// listed `nWe`, `nFinally`, `nGPT-4.1` and `u2013` beside the names it held.
    #[test]
    fn escaped_line_breaks_and_characters_are_not_part_of_names() {
        let text = r#"{"text":"See orchestrating_agents.\n\nWe call run_demo_loop \u2013 then\nFinally\nGPT-4.1 and \u00e9t\u00e9"}"#;
        let names = names_in(text);
        assert_eq!(
            names,
            ["orchestrating_agents", "run_demo_loop", "GPT-4.1"],
            "{names:?}"
        );
    }

    /// The same session's fetched pages were JSON inside JSON: `system:\\r\\nOrchestrating`. A
    /// Windows path keeps its folders' first letters.
    #[test]
    fn escapes_written_twice_count_and_windows_paths_keep_their_letters() {
        assert_eq!(
            names_in(r"C:\Users\me\node_modules\tree_sitter"),
            ["node_modules", "tree_sitter"]
        );
        assert_eq!(
            names_in(r"system:\\r\\nOrchestrating_agents \\u2013abc"),
            ["Orchestrating_agents"]
        );
    }
}

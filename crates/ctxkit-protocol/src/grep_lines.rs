//! The line number grep and ripgrep print after a file's name on a context line (`-C`, `-A`,
//! `-B`): `src/a.rs-12-` and the line's text joined on (`agent.sh-1-#!/bin/sh`). Whoever reads
//! names out of tool output (the offline summarizer, the pruning digest) takes the file as the
//! name, not one name per line of it (a tester's summary listed `retry.rs-1` to `retry.rs-59`
//! and never the file).

/// `word` cut before a context line's `-<number>` that follows a file's name (the number then ends
/// the word or is followed by `-`); `word` itself otherwise. A match line's `a.rs:40:` is a place
/// and left to the caller; a name with a number of its own (`LED-482`, `v1.2.3-10`,
/// `docs/2024-05-01.md`) is kept.
pub fn without_grep_line_number(word: &str) -> &str {
    let mut from = 0;
    while let Some(found) = word[from..].find('-') {
        let at = from + found;
        let rest = &word[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let after = &rest[digits..];
        if digits > 0
            && (after.is_empty() || after.starts_with('-'))
            && has_file_extension(&word[..at])
        {
            return &word[..at];
        }
        from = at + 1;
    }
    word
}

/// Whether `name` ends in a file's extension (`retry.rs`, `AGENTS.md`): one to six letters and
/// digits, a lower-case letter among them, after its last dot, with a name before the dot.
pub fn has_file_extension(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && !stem.ends_with('/')
            && (1..=6).contains(&extension.len())
            && extension.bytes().all(|byte| byte.is_ascii_alphanumeric())
            && extension.bytes().any(|byte| byte.is_ascii_lowercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_lines_number_is_cut_and_other_numbers_are_kept() {
        for (word, name) in [
            ("src/net/retry.rs-12-", "src/net/retry.rs"),
            ("src/net/retry.rs-12", "src/net/retry.rs"),
            ("agent.sh-1-#!/bin/sh", "agent.sh"),
            ("agent.sh-18-set", "agent.sh"),
            ("AGENT-PROTOCOL.md-10", "AGENT-PROTOCOL.md"),
            ("LED-482", "LED-482"),
            ("v1.2.3-10", "v1.2.3-10"),
            ("docs/2024-05-01.md", "docs/2024-05-01.md"),
            ("src/a.rs:40:", "src/a.rs:40:"),
            ("file.tar-3x", "file.tar-3x"),
        ] {
            assert_eq!(without_grep_line_number(word), name, "{word}");
        }
    }
}

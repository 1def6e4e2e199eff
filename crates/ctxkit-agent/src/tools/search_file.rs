//! One file searched by `grep`: a chunk of whole lines at a time (`lines`), so a file of any size
//! is searched to its end with bounded memory (QA r105: only the first 16 MiB were, and a match
//! past them was "No matches found"), in its text as `read` shows it (secrets redacted). Matches
//! are `path:line: text`; with `context`, the lines around them are `path-line- text`, as Pi
//! 1.6.0 shows ripgrep's context lines.

use std::collections::VecDeque;

use super::ToolContext;
use super::lines::{LineRead, LineReader, is_stopped};

/// The bytes of whole lines searched at a time.
const CHUNK_BYTES: usize = 1024 * 1024;
/// The most bytes of one line searched; the rest of a longer line is passed over (and said).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Longer lines shown are cut.
const LINE_CHARS: usize = 500;
/// The most context lines shown on each side of a match: what is held stays bounded.
pub(super) const MAX_CONTEXT_LINES: u64 = 100;

/// What a search found so far, across files.
pub(super) struct Matches {
    /// The lines to show: matches and their context.
    pub(super) lines: Vec<String>,
    limit: usize,
    context_lines: usize,
    matches: usize,
    /// Lines longer than [`MAX_LINE_BYTES`], searched in their start only.
    pub(super) long_lines: usize,
    /// Files whose search ended at a long line holding a NUL past its start (binary from there).
    pub(super) binary_tails: usize,
}

impl Matches {
    pub(super) fn new(limit: usize, context_lines: usize) -> Self {
        Self {
            lines: Vec::new(),
            limit,
            context_lines,
            matches: 0,
            long_lines: 0,
            binary_tails: 0,
        }
    }
}

/// How the search of one file ended.
pub(super) enum Searched {
    /// To its end.
    Whole,
    /// Not searched: a NUL among its first bytes makes it binary.
    Binary,
    /// A match past the limit was found in it (the limit cut results off).
    LimitReached,
    /// Searched to its end but for a part that spells out a key ctxkit keeps from the model,
    /// withheld whole (`ctxkit_secrets::is_withheld`): not searched there.
    PartWithheld,
    Cancelled,
}

/// The context of one file's search: lines held to be shown before a match, and how far the
/// last match's trailing context goes.
struct Scan<'a> {
    name: &'a str,
    before: VecDeque<(usize, String)>,
    trailing_until: usize,
    /// A match was found past the limit, inside the last match's trailing context.
    past_limit: bool,
}

impl Scan<'_> {
    /// Takes line `number`; `Some` when the search ends with it.
    fn line(
        &mut self,
        found: &mut Matches,
        number: usize,
        line: &str,
        is_match: bool,
    ) -> Option<Searched> {
        let context = found.context_lines;
        if found.matches >= found.limit {
            // Only another match proves that the limit cut results off; the last match's
            // trailing context is shown first (a match in it as context, as Pi shows it).
            if number > self.trailing_until {
                return is_match.then_some(Searched::LimitReached);
            }
            found.lines.push(self.shown(number, line, false));
            self.past_limit |= is_match;
            return (self.past_limit && number == self.trailing_until)
                .then_some(Searched::LimitReached);
        }
        if is_match {
            for (held, text) in self.before.drain(..) {
                found.lines.push(format!("{}-{held}- {text}", self.name));
            }
            found.lines.push(self.shown(number, line, true));
            found.matches += 1;
            self.trailing_until = number + context;
        } else if number <= self.trailing_until {
            found.lines.push(self.shown(number, line, false));
        } else if context > 0 {
            self.before.push_back((number, cut(line)));
            if self.before.len() > context {
                self.before.pop_front();
            }
        }
        None
    }

    fn shown(&self, number: usize, line: &str, is_match: bool) -> String {
        let name = self.name;
        if is_match {
            format!("{name}:{number}: {}", cut(line))
        } else {
            format!("{name}-{number}- {}", cut(line))
        }
    }
}

/// Searches `file` (named `name`) for `regex` (see the module comment).
pub(super) fn search_file(
    file: ctxkit_jail::OpenedFile,
    regex: &regex::Regex,
    name: &str,
    context: &ToolContext,
    found: &mut Matches,
) -> std::io::Result<Searched> {
    let mut reader = LineReader::new(file)
        .stopping_on(&context.cancel)
        .ending_at_nul_in_long_lines();
    // A NUL at the start makes the file binary, looked for before any line is read: a sparse
    // disk image is one line of zeros as long as the file (QA 2026-12-07: `grep` read 200 GB of
    // one, and Esc did not stop it).
    match reader.starts_binary() {
        Ok(true) => return Ok(Searched::Binary),
        Ok(false) => {}
        Err(error) if is_stopped(&error) => return Ok(Searched::Cancelled),
        Err(error) => return Err(error),
    }
    let mut scan = Scan {
        name,
        before: VecDeque::new(),
        trailing_until: 0,
        past_limit: false,
    };
    let mut chunk = Vec::new();
    let mut lines_before: usize = 0;
    let mut withheld = false;
    loop {
        chunk.clear();
        let (lines_in_chunk, ended) = match next_chunk(&mut reader, &mut chunk, found) {
            Ok(read) => read,
            Err(error) if is_stopped(&error) => return Ok(Searched::Cancelled),
            Err(error) => return Err(error),
        };
        if context.cancel.is_cancelled() {
            return Ok(Searched::Cancelled);
        }
        // Matched as `read` shows it, secrets redacted: a pattern run against the key itself
        // answers "found" or "not" for each guess, and a tester's model spelled out a
        // configured key from a project's `.env` in 400 calls of position-only patterns.
        let text = context.workspace.redact(&String::from_utf8_lossy(&chunk));
        // "No matches found" would read as searched (QA: a whole file withheld answered so).
        withheld |= ctxkit_secrets::is_withheld(&text);
        for (index, line) in text.lines().enumerate() {
            let number = lines_before + index + 1;
            if let Some(end) = scan.line(found, number, line, regex.is_match(line)) {
                return Ok(end);
            }
        }
        lines_before += lines_in_chunk;
        if ended && scan.past_limit {
            return Ok(Searched::LimitReached);
        }
        if ended && withheld {
            return Ok(Searched::PartWithheld);
        }
        if ended {
            return Ok(Searched::Whole);
        }
    }
}

/// Reads whole lines into `chunk`, each ended by `\n`, until it holds [`CHUNK_BYTES`]; how many
/// and whether the file ended.
fn next_chunk<R: std::io::Read>(
    reader: &mut LineReader<R>,
    chunk: &mut Vec<u8>,
    found: &mut Matches,
) -> std::io::Result<(usize, bool)> {
    let mut lines = 0;
    while chunk.len() < CHUNK_BYTES {
        match reader.next_line(chunk, MAX_LINE_BYTES)? {
            LineRead::End => return Ok((lines, true)),
            LineRead::Cut => found.long_lines += 1,
            LineRead::Binary => {
                found.long_lines += 1;
                found.binary_tails += 1;
                return Ok((lines, true));
            }
            LineRead::Whole => {}
        }
        chunk.push(b'\n');
        lines += 1;
    }
    Ok((lines, false))
}

/// What a search says when lines longer than [`MAX_LINE_BYTES`] were searched in their start only,
/// and files whose search ended at such a line turned binary.
pub(super) fn long_lines_notice(found: &Matches) -> String {
    let mebibytes = MAX_LINE_BYTES / (1024 * 1024);
    let mut notice = match found.long_lines {
        0 => String::new(),
        count => format!(
            "\n\n[{count} line(s) longer than {mebibytes} MiB were searched in their first \
             {mebibytes} MiB only]"
        ),
    };
    if found.binary_tails > 0 {
        notice.push_str(&format!(
            "\n[{} file(s) turned binary within such a line (a NUL byte): searched up to it only]",
            found.binary_tails
        ));
    }
    notice
}

fn cut(line: &str) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let mut cut: String = line.chars().take(LINE_CHARS).collect();
    cut.push_str("… [line cut]");
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::run_tool;
    use super::super::test_support::context;

    /// QA r105: `context` was accepted and dropped; Pi 1.6.0 shows the lines around each match
    /// as ripgrep's context lines, `path-line- text`, a match inside another's context as a match.
    #[test]
    fn context_lines_are_shown_as_pi_shows_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("ctx.txt"),
            "line1\nneedle ctx\nline3\nline4\nneedle2\nline6\nline7\nline8\n",
        )
        .unwrap();
        let context = context(dir.path());
        let grep = |arguments: serde_json::Value| run_tool("grep", &arguments, "c", &context).text;
        assert_eq!(
            grep(json!({"pattern": "needle", "path": "ctx.txt", "context": 1})),
            "ctx.txt-1- line1\nctx.txt:2: needle ctx\nctx.txt-3- line3\nctx.txt-4- line4\n\
             ctx.txt:5: needle2\nctx.txt-6- line6"
        );
        assert_eq!(
            grep(json!({"pattern": "needle", "path": "ctx.txt"})),
            "ctx.txt:2: needle ctx\nctx.txt:5: needle2"
        );
        // At the limit, the last match's trailing context is shown, a match in it as context.
        assert_eq!(
            grep(json!({"pattern": "needle|line3", "path": "ctx.txt", "context": 1, "limit": 1})),
            "ctx.txt-1- line1\nctx.txt:2: needle ctx\nctx.txt-3- line3\n\n\
             [1 matches limit reached. Use limit=2 for more, or refine the pattern.]"
        );
    }
}

//! The digest of a cut: a short, bounded list of the names the omitted text mentioned (file paths,
//! symbols, error codes, ids and versions, URLs), so the model knows what a pruned result held and
//! can decide to fetch it back. Deterministic: the same omitted text gives the same bytes, so a
//! marker with a digest is as cache-stable as one without.
//!
//! A *name* is a run of letters and digits of any script, `_` and `. / : - # @` (Unicode's
//! identifier characters, XID_Continue, and those five: `parse_订单`, `größe_berechnen`,
//! `config/設定.toml`; where an ASCII letter or digit meets Chinese, Japanese or Thai prose with no
//! space between, the name ends there) (with `.`, `:`, `-`, `/` trimmed
//! from both ends, a trailing `:<line>` number dropped, and the letters of a backslash escape
//! before it left out: `\nWe`, `\u2013`, see [`crate::escapes`]) that has at least one letter
//! and is one of:
//! - a URL (`http://`, `https://`);
//! - a path: contains `/` with a letter after it, or ends in a common source or config file
//!   extension (`main.rs`, `Cargo.toml`);
//! - a symbol: contains `_` or `::`, or has a lower-case letter followed by an upper-case one
//!   (`parse_header`, `io::Error`, `readHeader`);
//! - an id, code or version: letters and digits together (`E0308`, `req-3f9a`, `v1.2.3`, a hash).
//!
//! Plain words (`error`, `Result`, `WARN`) are not names, nor are dates and times
//! (`2026-11-26T10:30:00Z`, which every log line carries) and measurements (`38ms`, `1.5GiB`).
//! Names are ranked: first those on a line that reports a failure (`error`, `fail`, `panic`,
//! `exception`, `fatal`, `warn`, `denied`, any case); then the names the omitted text repeats
//! most (a file's own functions and types over its one-off imports, a file grep matched on many
//! lines over one matched once; docs/simulator.md, twenty-ninth round); then paths, URLs and
//! symbols (`_`, `::` or camel case), a name that is both first; ties go to the earlier name.
//! (Letters and digits together earn nothing: in real listings dated and numbered names,
//! `2026-03-30.md`, `127.md`, crowded out the file names and symbols later replies named;
//! docs/simulator.md, sixth round.) The best are taken while they fit both caps and written in the
//! order they first appear.
//!
//! The caps grow with what was omitted ([`digest_caps`]): `pruneDigestChars` characters and
//! `pruneDigestNames` names for up to 4,000 omitted characters, then 4% of the omitted characters
//! (names in proportion) up to [`DIGEST_MAX_CHARS`]. A 40 kB listing of hundreds of names keeps
//! about 40 of them instead of 8; a short result's marker stays as short as before.
//!
//! A name the model can already read is not listed again: one in the cut result's kept head or
//! tail, or one in a message before the result as the view shows it ([`VisibleNames`]: text,
//! tool calls and their arguments, cut results as cut; never thinking, which the thinking layer
//! drops). Every message before a cut result is itself fixed once the result is cut (the prune
//! boundary only moves forward, and results before it are cut already), so the marker's bytes
//! stay the same from one request to the next and the cached prefix is kept.

use std::collections::HashSet;

use crate::ranking::ranked_names;

/// Extensions (lower case; a name's is compared in lower case) that make a dotted name a file name
/// without a `/`: source, config, data and log files.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cfg", "cjs", "conf", "cpp", "cs", "css", "csv", "dart", "ex", "exs", "go",
    "gradle", "h", "hpp", "hs", "html", "ini", "java", "js", "json", "jsonl", "jsx", "kt", "kts",
    "lock", "log", "lua", "md", "mjs", "php", "proto", "py", "rb", "rs", "scss", "sh", "sql",
    "svelte", "swift", "tf", "toml", "ts", "tsx", "txt", "vue", "xml", "yaml", "yml", "zig",
];

/// Words that mark a line as reporting a failure (matched case-insensitively inside the line).
const FAILURE_WORDS: &[&str] = &[
    "error",
    "fail",
    "panic",
    "exception",
    "fatal",
    "warn",
    "denied",
];

/// The first letters of [`FAILURE_WORDS`].
const FAILURE_INITIALS: &[u8] = b"efpwd";

/// The digest's share of the omitted characters, per mille, once that is more than
/// `pruneDigestChars`.
const DIGEST_SHARE_PER_MILLE: usize = 40;

/// The most characters a digest grows to with the omitted text (a `pruneDigestChars` set higher
/// still holds).
pub(crate) const DIGEST_MAX_CHARS: usize = 1_000;

/// The caps of the digest of `omitted_chars` omitted characters under the `pruneDigestNames`
/// (`names`) and `pruneDigestChars` (`chars`) settings: `(names, chars)`, the settings' own when
/// 4% of the omitted text is no more than `chars`, else 4% of it up to [`DIGEST_MAX_CHARS`] with
/// the names in proportion. Either setting 0 (no digest) stays 0.
pub(crate) fn digest_caps(omitted_chars: usize, names: usize, chars: usize) -> (usize, usize) {
    if names == 0 || chars == 0 {
        return (names, chars);
    }
    let share = omitted_chars.saturating_mul(DIGEST_SHARE_PER_MILLE) / 1000;
    let grown = share.clamp(chars, DIGEST_MAX_CHARS.max(chars));
    (names.saturating_mul(grown) / chars, grown)
}

/// Names shorter than this are not listed.
const MIN_NAME_CHARS: usize = 3;
/// Names longer than this (blobs, base64, minified code) are not listed.
const MAX_NAME_CHARS: usize = 120;

/// Whether `character` may be part of a name: a character of a Unicode identifier
/// (XID_Continue: letters and digits of any script, combining marks, `_`) or one of `./:-#@`.
fn is_name_character(character: char) -> bool {
    match u8::try_from(character) {
        Ok(byte) if byte.is_ascii() => is_ascii_name_byte(byte),
        Ok(_) | Err(_) => unicode_ident::is_xid_continue(character),
    }
}

/// [`is_name_character`] of an ASCII character, by its byte.
fn is_ascii_name_byte(byte: u8) -> bool {
    matches!(byte, b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' | b'/' | b':' | b'-' | b'#' | b'@')
}

/// Whether a name ends between `before` and `after`, two name characters side by side: an ASCII
/// letter or digit against a letter of a script written without spaces (`文件config`,
/// `設定.toml不存在`), where Chinese or Japanese prose meets a name with no space between. A
/// name joins the two scripts with `_`, `.` or `/` (`parse_订单`, `config/設定.toml`).
fn ends_name_between(before: char, after: char) -> bool {
    use ctxkit_protocol::is_written_without_spaces as unspaced;
    // Scripts written without spaces are all outside ASCII: two ASCII characters never end a name.
    if before.is_ascii() && after.is_ascii() {
        return false;
    }
    (before.is_ascii_alphanumeric() && unspaced(after))
        || (unspaced(before) && after.is_ascii_alphanumeric())
}

/// Drops a grep context line's number and what follows it (`src/a.rs-12-text`, see
/// [`ctxkit_protocol::without_grep_line_number`]), `.`, `:`, `-`, `/` from both ends, and then a
/// trailing `:<digits>` (a line number, as in `src/a.rs:12:` or `a.rs:12:3`).
pub(crate) fn trim_name(mut token: &str) -> &str {
    loop {
        let trimmed = ctxkit_protocol::without_grep_line_number(token)
            .trim_matches(|character| ".:-/".contains(character));
        let trimmed = match trimmed.rfind(':') {
            Some(colon)
                if colon + 1 < trimmed.len()
                    && trimmed[colon + 1..]
                        .bytes()
                        .all(|byte| byte.is_ascii_digit()) =>
            {
                &trimmed[..colon]
            }
            Some(_) | None => trimmed,
        };
        if trimmed.len() == token.len() {
            return trimmed;
        }
        token = trimmed;
    }
}

/// What makes a token a name, or `None` for a plain word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) path_or_url: bool,
    pub(crate) symbol: bool,
}

pub(crate) fn shape(name: &str) -> Option<Shape> {
    let bytes = name.as_bytes();
    if bytes.len() < MIN_NAME_CHARS || bytes.len() > MAX_NAME_CHARS * 4 {
        return None;
    }
    let ascii = name.is_ascii();
    let characters = if ascii {
        bytes.len()
    } else {
        name.chars().count()
    };
    if !(MIN_NAME_CHARS..=MAX_NAME_CHARS).contains(&characters) {
        return None;
    }
    // One pass over the characters; most tokens are plain words and leave here.
    let (mut has_letter, mut has_digit, mut marked, mut camel) = (false, false, false, false);
    let (mut previous_lower, mut unspaced) = (false, false);
    if ascii {
        // Most names: their bytes are their characters, classed as the loop below classes them.
        for &byte in bytes {
            has_letter |= byte.is_ascii_alphabetic();
            has_digit |= byte.is_ascii_digit();
            marked |= matches!(byte, b'_' | b'/' | b':' | b'.');
            camel |= previous_lower && byte.is_ascii_uppercase();
            previous_lower = byte.is_ascii_lowercase();
        }
    } else {
        for character in name.chars() {
            has_letter |= character.is_alphabetic();
            has_digit |= character.is_ascii_digit();
            marked |= matches!(character, '_' | '/' | ':' | '.');
            camel |= previous_lower && character.is_uppercase();
            previous_lower = character.is_lowercase();
            unspaced |= ctxkit_protocol::is_written_without_spaces(character);
        }
    }
    // Letters and digits alone make no name in prose written without spaces (`共有3个文件`).
    let has_digit = has_digit && !unspaced;
    if !has_letter || !(has_digit || marked || camel) || is_time_or_measure(name) {
        return None;
    }
    let url = name.starts_with("http://") || name.starts_with("https://");
    let slash_path = name
        .split_once('/')
        .is_some_and(|(_, after)| after.chars().any(char::is_alphabetic));
    let file_name = name.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && FILE_EXTENSIONS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(extension))
    });
    let path_or_url = url || slash_path || file_name;
    let symbol = camel || name.contains('_') || name.contains("::");
    (path_or_url || symbol || has_digit).then_some(Shape {
        path_or_url,
        symbol,
    })
}

/// Units a number may carry and still be a measurement, not a name (lower case).
const UNITS: &[&str] = &[
    "ns", "us", "ms", "s", "m", "h", "b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "px",
    "k", "x", "µs", "μs",
];

/// Whether `name` is a date or time (digits and `-:.+` with only `T` and `Z` for letters) or a
/// number with a unit (`38ms`, `1.5GiB`, `3x`).
fn is_time_or_measure(name: &str) -> bool {
    let time = name
        .bytes()
        .all(|byte| byte.is_ascii_digit() || b"-:.+TZ".contains(&byte))
        && name.bytes().filter(u8::is_ascii_digit).count() >= 4;
    let digits_end = name
        .bytes()
        .position(|byte| !(byte.is_ascii_digit() || byte == b'.'))
        .unwrap_or(name.len());
    let measure = digits_end > 0
        && name[..digits_end].bytes().any(|byte| byte.is_ascii_digit())
        && UNITS.contains(&name[digits_end..].to_ascii_lowercase().as_str());
    time || measure
}

/// Whether `line` holds one of [`FAILURE_WORDS`], any case, without allocating: each word is
/// compared only where the line has its first letter.
pub(crate) fn reports_failure(line: &str) -> bool {
    let bytes = line.as_bytes();
    (0..bytes.len()).any(|at| {
        let first = bytes[at].to_ascii_lowercase();
        FAILURE_INITIALS.contains(&first)
            && FAILURE_WORDS.iter().any(|word| {
                let word = word.as_bytes();
                word.first() == Some(&first)
                    && bytes
                        .get(at..at + word.len())
                        .is_some_and(|window| window.eq_ignore_ascii_case(word))
            })
    })
}

/// The tokens of `line`: maximal runs of name characters ([`is_name_character`]), also ended where
/// a name meets prose of a script written without spaces ([`ends_name_between`]). Whole
/// characters: a name in any script is never cut inside a word.
pub(crate) fn tokens(line: &str) -> impl Iterator<Item = &str> {
    NameRuns { rest: line }
        .map(move |token| {
            let token = crate::escapes::after_backslash_escape(line, token);
            after_escape_parameters(line, token)
        })
        .filter(|token| token.len() >= MIN_NAME_CHARS)
}

/// The runs of name characters of a text, in order (see [`tokens`]).
struct NameRuns<'a> {
    rest: &'a str,
}

impl<'a> Iterator for NameRuns<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.rest.find(is_name_character)?;
        let text = &self.rest[start..];
        let bytes = text.as_bytes();
        let mut end = 0;
        let mut previous: Option<char> = None;
        while let Some(&byte) = bytes.get(end) {
            // Most text is ASCII: its bytes are read as they are, without decoding characters.
            let character = match byte {
                0..=0x7F => char::from(byte),
                _ => match text.get(end..).and_then(|rest| rest.chars().next()) {
                    Some(character) => character,
                    None => break,
                },
            };
            let ends = !is_name_character(character)
                || previous.is_some_and(|before| ends_name_between(before, character));
            if ends {
                break;
            }
            previous = Some(character);
            end += character.len_utf8();
        }
        self.rest = &text[end..];
        Some(&text[..end])
    }
}

/// `token` without the parameters and final letter of a terminal escape it starts with: after
/// `ESC [`, the `33m` of `\x1b[33mWarning` is the escape's, and `Warning` the output's.
fn after_escape_parameters<'a>(line: &str, token: &'a str) -> &'a str {
    let start = token.as_ptr() as usize - line.as_ptr() as usize;
    let before = line.as_bytes().get(..start).unwrap_or_default();
    let earlier_parameters = before
        .iter()
        .rev()
        .take_while(|byte| byte.is_ascii_digit() || **byte == b';')
        .count();
    let opening = before.get(..before.len() - earlier_parameters);
    if !opening.is_some_and(|opening| opening.ends_with(b"\x1b[")) {
        return token;
    }
    let parameters = token
        .bytes()
        .take_while(|byte| byte.is_ascii_digit() || *byte == b';')
        .count();
    match token.as_bytes().get(parameters) {
        Some(final_byte) if final_byte.is_ascii_alphabetic() => &token[parameters + 1..],
        Some(_) | None => token,
    }
}
/// Names the model can already read in the view before a cut result (see the module), kept as
/// 64-bit hashes of a fixed seed: a view notes every name of every message before its last cut
/// result, and a copy of each was most of the transform's allocations. Two names sharing a hash
/// (about one chance in 10^19 per pair) would only leave one out of a digest.
#[derive(Debug, Default)]
pub(crate) struct VisibleNames {
    hashes: HashSet<u64, foldhash::fast::FixedState>,
    /// The set's fingerprint: the sum of its members' mixed hashes, the same for the same set
    /// whatever the order the names came in (a cut a view made is kept for the next view that sees
    /// the same names before it).
    fingerprint: u64,
}

impl VisibleNames {
    /// Adds the names of `text`.
    pub(crate) fn note(&mut self, text: &str) {
        for line in text.split('\n') {
            for token in tokens(line) {
                let name = trim_name(token);
                if shape(name).is_some() {
                    self.insert(name_hash(name));
                }
            }
        }
    }

    /// Adds the names of every string in a JSON value (a tool call's arguments).
    pub(crate) fn note_json(&mut self, value: &serde_json::Value) {
        for name in names_in_json(value) {
            self.insert(name_hash(name));
        }
    }

    /// Adds names already hashed (by another set's [`Self::into_hashes`]).
    pub(crate) fn extend(&mut self, hashes: &[u64]) {
        for hash in hashes {
            self.insert(*hash);
        }
    }

    fn insert(&mut self, hash: u64) {
        if self.hashes.insert(hash) {
            // Mixed (a multiply and a shift) so that sums of related hashes do not cancel.
            let mixed = hash.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            self.fingerprint = self.fingerprint.wrapping_add(mixed ^ (mixed >> 31));
        }
    }

    /// The names' hashes, in no order.
    pub(crate) fn into_hashes(self) -> Box<[u64]> {
        self.hashes.into_iter().collect()
    }

    /// Equal for equal sets (and, but for one chance in about 10^19, only for them).
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    fn contains(&self, name: &str) -> bool {
        !self.hashes.is_empty() && self.hashes.contains(&name_hash(name))
    }
}

/// A name's hash, the same in every process (a fixed seed).
fn name_hash(name: &str) -> u64 {
    use std::hash::BuildHasher as _;
    foldhash::fast::FixedState::with_seed(0).hash_one(name)
}

/// Every name of every string of a JSON value (a tool call's arguments), in the order of
/// [`names_in`] per string; a name in several strings comes once per string.
pub fn names_in_json(value: &serde_json::Value) -> Vec<&str> {
    let mut names = Vec::new();
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            serde_json::Value::String(text) => names.extend(names_in(text)),
            serde_json::Value::Array(items) => pending.extend(items.iter().rev()),
            serde_json::Value::Object(fields) => pending.extend(fields.values().rev()),
            serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {
            }
        }
    }
    names
}

/// Every name of `text` (the module's rule, unranked and uncapped), once each, in order of first
/// appearance.
pub fn names_in(text: &str) -> Vec<&str> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut names = Vec::new();
    for line in text.split('\n') {
        for token in tokens(line) {
            let name = trim_name(token);
            if shape(name).is_some() && seen.insert(name) {
                names.push(name);
            }
        }
    }
    names
}

/// The names of `text` ranked and capped as the module describes, in order of first appearance;
/// empty when either cap is 0 or nothing fits.
#[cfg(test)]
pub(crate) fn digest_names(text: &str, max_names: usize, max_chars: usize) -> Vec<&str> {
    digest_unseen(text, "", max_names, max_chars, &VisibleNames::default())
}

/// The names of `omitted` ranked and capped as the module describes, in order of first
/// appearance, leaving out the names of `kept` (the cut's head and tail) and of `visible`; empty
/// when either cap is 0 or nothing fits.
pub(crate) fn digest_unseen<'a>(
    omitted: &'a str,
    kept: &str,
    max_names: usize,
    max_chars: usize,
    visible: &VisibleNames,
) -> Vec<&'a str> {
    if max_names == 0 || max_chars == 0 {
        return Vec::new();
    }
    // Leaving out a visible name keeps the others' order: the ranking is made without them.
    let ranked = ranked_names(omitted, kept);
    let mut chosen: Vec<(usize, &'a str)> = Vec::new();
    let mut chars = 0;
    for candidate in ranked.iter() {
        if chosen.len() == max_names {
            break;
        }
        let Some(name) = omitted.get(candidate.start..candidate.end) else {
            continue;
        };
        if visible.contains(name) {
            continue;
        }
        // Counted in characters (a name may be in any script). ", " separates them.
        let cost = name.chars().count() + if chosen.is_empty() { 0 } else { 2 };
        if chars + cost > max_chars {
            continue;
        }
        chars += cost;
        chosen.push((candidate.first, name));
    }
    chosen.sort_by_key(|(first, _)| *first);
    chosen.into_iter().map(|(_, name)| name).collect()
}

#[cfg(test)]
#[path = "digest_tests.rs"]
mod tests;

//! Identifiers in the text of a real session: the names a model has to keep to go on working
//! (file paths, symbols, error codes, hashes and ids), found by one general rule that knows nothing
//! of any session's wording.
//!
//! A *token* is a maximal run of ASCII letters, digits and `_ . / : -`; `.`, `:`, `-` and `/` are
//! trimmed from both ends and a trailing `:<line>` number is dropped (`src/a.rs:12:3` →
//! `src/a.rs`). A token is, in this order:
//! - a **path** when it holds a `/` and a letter and either began at a root (`/`, `./`, `../`), has
//!   two or more `/`, or ends in a file extension (`src/lib.rs`, `/etc/hosts`, `crates/bench/`,
//!   `https://example.com/x`); `and/or` is not;
//! - a **file name** when it has no `/` and ends in a known source, config or data extension
//!   (`Cargo.toml`, `main.rs`, `session.jsonl`);
//! - a **hash or id** when it is hexadecimal digits, optionally in dash-separated groups, with 7 or
//!   more digits, at least one of them `0-9` and one `a-f`, in one case (`9f2e358`, a UUID);
//! - otherwise it is split at `.`, `:` and `-` (`self.index.path_to` → `path_to`,
//!   `io::ErrorKind` → `ErrorKind`, `BILLING-E0042` → `E0042`) and each part of 4 or more characters
//!   is an **error code** (upper-case letters then 3 or more digits, `E0308`, `TS2345`; or an
//!   upper-case snake name whose first word is `E`, `ERR` or `ERROR`, `ERR_MODULE_NOT_FOUND`), a
//!   hash or id as above, or a **symbol**: it starts with a letter or `_`, and holds a `_` between
//!   other characters (`parse_header`, `MAX_SIZE`) or a lower-case letter followed by an upper-case one
//!   (`readHeader`, `SessionEntry`).
//!
//! Plain words (`error`, `Result`, `README`), numbers, versions (`v1.2.3`) and letter-digit
//! mixtures that are none of the above (`utf8`, `sha256`) are not identifiers.

use super::trace::IdentifierKind;

/// Identifiers shorter than this are not counted.
pub(crate) const MIN_IDENTIFIER_CHARS: usize = 4;
/// Longer tokens (base64, minified code) are not identifiers.
const MAX_IDENTIFIER_CHARS: usize = 200;
/// Hex digits a hash or id needs.
const MIN_HEX_DIGITS: usize = 7;

/// Extensions that make a dotted name a file name without a `/`.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cc", "cfg", "cjs", "conf", "cpp", "cs", "css", "csv", "dart", "ex", "exs", "go",
    "gradle", "h", "hpp", "hs", "html", "ini", "java", "js", "json", "jsonl", "jsx", "kt", "kts",
    "lock", "log", "lua", "md", "mjs", "php", "proto", "py", "rb", "rs", "scss", "sh", "sql",
    "svelte", "swift", "tf", "toml", "ts", "tsx", "txt", "vue", "xml", "yaml", "yml", "zig",
];

fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"_./:-".contains(&byte)
}

/// A byte that continues a word: an identifier found inside a longer word is not that identifier.
pub(crate) fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Drops `.`, `:`, `-`, `/` from both ends and then trailing `:<digits>` (line and column).
fn trim_token(mut token: &str) -> &str {
    loop {
        let trimmed = token.trim_matches(|character| ".:-/".contains(character));
        let trimmed = match trimmed.rsplit_once(':') {
            Some((before, digits))
                if !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()) =>
            {
                before
            }
            Some(_) | None => trimmed,
        };
        if trimmed.len() == token.len() {
            return trimmed;
        }
        token = trimmed;
    }
}

fn has_extension(name: &str, known_only: bool) -> bool {
    name.rsplit_once('.').is_some_and(|(stem, extension)| {
        let stem_name = stem.rsplit('/').next().unwrap_or(stem);
        stem_name.bytes().any(|byte| byte.is_ascii_alphanumeric())
            && if known_only {
                FILE_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
            } else {
                (1..=6).contains(&extension.len())
                    && extension.bytes().all(|byte| byte.is_ascii_alphanumeric())
                    && extension.bytes().any(|byte| byte.is_ascii_alphabetic())
            }
    })
}

fn is_path(raw: &str, token: &str) -> bool {
    let rooted = raw.starts_with('/') || raw.starts_with("./") || raw.starts_with("../");
    token.contains('/')
        && token.bytes().any(|byte| byte.is_ascii_alphabetic())
        && (rooted || raw.matches('/').count() >= 2 || has_extension(token, false))
}

/// Hex digits in dash-separated groups, 7+ digits, a digit and a letter, one case.
fn is_hex_id(token: &str) -> bool {
    if token.starts_with('-') || token.ends_with('-') || token.contains("--") {
        return false;
    }
    let digits = token.bytes().filter(|byte| *byte != b'-');
    let (mut count, mut decimal, mut lower, mut upper) = (0, false, false, false);
    for byte in digits {
        if !byte.is_ascii_hexdigit() {
            return false;
        }
        count += 1;
        decimal |= byte.is_ascii_digit();
        lower |= byte.is_ascii_lowercase();
        upper |= byte.is_ascii_uppercase();
    }
    count >= MIN_HEX_DIGITS && decimal && (lower != upper)
}

fn is_error_code(part: &str) -> bool {
    let letters = part
        .bytes()
        .take_while(|byte| byte.is_ascii_uppercase())
        .count();
    let digits = &part[letters..];
    let letters_then_digits = (1..=5).contains(&letters)
        && digits.len() >= 3
        && digits.bytes().all(|byte| byte.is_ascii_digit());
    let upper_snake = part
        .bytes()
        .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit() || byte == b'_')
        && part.split_once('_').is_some_and(|(first, rest)| {
            matches!(first, "E" | "ERR" | "ERROR") && !rest.is_empty()
        });
    letters_then_digits || upper_snake
}

fn is_symbol(part: &str) -> bool {
    let bytes = part.as_bytes();
    let starts_well = bytes
        .first()
        .is_some_and(|first| first.is_ascii_alphabetic() || *first == b'_');
    let letters = bytes
        .iter()
        .filter(|byte| byte.is_ascii_alphabetic())
        .count();
    let camel = bytes
        .windows(2)
        .any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
    starts_well && letters >= 2 && (part.trim_matches('_').contains('_') || camel)
}

/// The kind of a part that holds no `.`, `:`, `-` or `/`.
fn classify_part(part: &str) -> Option<IdentifierKind> {
    if part.len() < MIN_IDENTIFIER_CHARS {
        None
    } else if is_error_code(part) {
        Some(IdentifierKind::ErrorCode)
    } else if is_hex_id(part) {
        Some(IdentifierKind::HashOrId)
    } else if is_symbol(part) {
        Some(IdentifierKind::Symbol)
    } else {
        None
    }
}

/// Calls `found` with each identifier of one raw token, in order.
fn token_identifiers<'a>(raw: &'a str, found: &mut impl FnMut(&'a str, IdentifierKind)) {
    let token = trim_token(raw);
    if token.len() < MIN_IDENTIFIER_CHARS || token.len() > MAX_IDENTIFIER_CHARS {
        return;
    }
    if is_path(raw, token) || !token.contains('/') && has_extension(token, true) {
        found(token, IdentifierKind::FilePath);
    } else if is_hex_id(token) {
        found(token, IdentifierKind::HashOrId);
    } else {
        for part in token.split(['.', ':', '-', '/']) {
            if let Some(kind) = classify_part(part) {
                found(part, kind);
            }
        }
    }
}

/// Calls `found` with every identifier of `text`, in order of appearance (repeats included).
pub(crate) fn for_each_identifier<'a>(
    text: &'a str,
    mut found: impl FnMut(&'a str, IdentifierKind),
) {
    let tokens = text
        .split(|character: char| !character.is_ascii() || !is_token_byte(character as u8))
        .filter(|token| token.len() >= MIN_IDENTIFIER_CHARS);
    for raw in tokens {
        token_identifiers(raw, &mut found);
    }
}

/// Every identifier of `text` with its kind, in order of appearance (repeats included).
#[cfg(test)]
pub(crate) fn identifiers(text: &str) -> Vec<(&str, IdentifierKind)> {
    let mut all = Vec::new();
    for_each_identifier(text, |identifier, kind| all.push((identifier, kind)));
    all
}

/// Whether the byte at `at` of a JSON text is the letter of an escape (`\n`, `\t`, `\u001b`), so it
/// does not continue a word.
fn escaped_letter(text: &[u8], at: usize) -> bool {
    let odd_backslashes = |end: usize| {
        text[..end]
            .iter()
            .rev()
            .take_while(|byte| **byte == b'\\')
            .count()
            % 2
            == 1
    };
    let simple = matches!(text[at], b'n' | b't' | b'r' | b'b' | b'f') && odd_backslashes(at);
    let unicode = at >= 5
        && text[at - 4] == b'u'
        && text[at - 3..=at].iter().all(u8::is_ascii_hexdigit)
        && odd_backslashes(at - 4);
    simple || unicode
}

/// Whether `text[start..end]` (JSON) is a whole identifier: not inside a longer word.
pub(crate) fn stands_alone(text: &[u8], start: usize, end: usize) -> bool {
    let before = start == 0 || !is_word_byte(text[start - 1]) || escaped_letter(text, start - 1);
    let after = end >= text.len() || !is_word_byte(text[end]);
    before && after
}

#[cfg(test)]
mod tests {
    use super::*;
    use IdentifierKind::{ErrorCode, FilePath, HashOrId, Symbol};

    fn names(text: &str) -> Vec<&str> {
        identifiers(text)
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }

    #[test]
    fn paths_and_file_names() {
        let found = identifiers(
            "see src/lib.rs:12:3, /etc/hosts and ./run.sh; crates/ctxkit-bench/ and Cargo.toml. \
             Read and/or write https://example.com/docs/x here.",
        );
        assert_eq!(
            found,
            vec![
                ("src/lib.rs", FilePath),
                ("etc/hosts", FilePath),
                ("run.sh", FilePath),
                ("crates/ctxkit-bench", FilePath),
                ("Cargo.toml", FilePath),
                ("https://example.com/docs/x", FilePath),
            ]
        );
    }

    #[test]
    fn symbols_codes_and_hashes() {
        let found = identifiers(
            "error[E0308]: mismatched types in parse_header; readHeader calls SessionEntry::open; \
             ERR_MODULE_NOT_FOUND at commit 9f2e358 (id 237a4e0d-b47a-4ee9-8d62-2fbeedc23723), \
             see self.index.path_to and BILLING-E0042; TS2345 too.",
        );
        assert_eq!(
            found,
            vec![
                ("E0308", ErrorCode),
                ("parse_header", Symbol),
                ("readHeader", Symbol),
                ("SessionEntry", Symbol),
                ("ERR_MODULE_NOT_FOUND", ErrorCode),
                ("9f2e358", HashOrId),
                ("237a4e0d-b47a-4ee9-8d62-2fbeedc23723", HashOrId),
                ("path_to", Symbol),
                ("E0042", ErrorCode),
                ("TS2345", ErrorCode),
            ]
        );
    }

    #[test]
    fn plain_words_numbers_and_versions_are_not_identifiers() {
        let text = "The Result was an error in README: 12345 tests, v1.2.3, utf8 and sha256, \
                    deadbeef, 2026-11-28T10:30:00Z, 1234567, and/or input/output, foo_ and __";
        assert_eq!(names(text), Vec::<&str>::new());
    }

    #[test]
    fn short_and_huge_tokens_are_skipped() {
        assert_eq!(names("a_b y.z E12 abc"), Vec::<&str>::new());
        let blob = format!("a_{}", "x".repeat(300));
        assert_eq!(names(&blob), Vec::<&str>::new());
        assert_eq!(names("non-ascii é_parse_header_ü"), vec!["_parse_header_"]);
    }

    #[test]
    fn an_identifier_inside_a_longer_word_does_not_stand_alone() {
        let text = br#"{"text":"call parse_header_v2 or\nparse_header(x)"}"#;
        let hits: Vec<usize> = text
            .windows(12)
            .enumerate()
            .filter(|(_, window)| *window == b"parse_header")
            .map(|(at, _)| at)
            .collect();
        assert_eq!(hits.len(), 2);
        assert!(!stands_alone(text, hits[0], hits[0] + 12));
        assert!(
            stands_alone(text, hits[1], hits[1] + 12),
            "after a \\n escape"
        );
        let unicode = br#""\u001bparse_header""#;
        assert!(stands_alone(unicode, 7, 19));
        let literal = br#""\\nparse_header""#;
        assert!(!stands_alone(literal, 4, 16), "a literal backslash and n");
    }
}

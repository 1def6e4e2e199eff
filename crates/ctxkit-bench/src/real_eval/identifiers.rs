//! The identifiers a real summary kept, by one general rule that knows nothing of any session: the
//! strings a continuing agent would have to copy exactly. This is the evaluation's own rule,
//! independent of the offline summarizer's ranking, so the summarizer is not scored by its own
//! notion of what matters.
//!
//! A backticked span of 3–80 characters on one line counts whole (a command, a call, a path). A
//! word (split at white space and `,;()[]{}"'<>|=`, trimmed of `.:!?*` and quotes at its ends)
//! counts when it is a URL (`://`); a path (a `/` or `\` and a letter, with two separators or a
//! dotted last part); a file or member name (`stem.ext`, the extension 1–8 letters or digits with a
//! lower-case letter); a symbol in camelCase, PascalCase with an inner capital, snake_case or
//! SCREAMING_CASE, a call (`name()`, `a::b`); a code of letters and digits (`E0308`, `TS2345`,
//! `LED-482`); a hexadecimal hash or id of 7 or more digits with a digit and a letter; or a number
//! of 3 or more digits (sizes, ports, counts, versions such as `1.6.0`).

const MIN_CHARS: usize = 3;
const MAX_CHARS: usize = 120;
const MAX_BACKTICKED: usize = 80;

/// The distinct identifiers of `text`, lowercased, in first-seen order.
pub fn identifiers(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut push = |candidate: &str| {
        let lower = candidate.to_lowercase();
        if !found.contains(&lower) {
            found.push(lower);
        }
    };
    for (index, part) in text.split('`').enumerate() {
        let inside = index % 2 == 1;
        if inside {
            let length = part.chars().count();
            if (MIN_CHARS..=MAX_BACKTICKED).contains(&length) && !part.contains('\n') {
                push(part.trim());
            }
            continue;
        }
        for word in part.split(is_separator) {
            let word = word
                .trim_start_matches(['*', '.', ':', '!', '?', '…', '-', '('])
                .trim_end_matches(['.', ':', '!', '?', '*', '…']);
            // A call keeps its `()`; other parentheses end the word (`f(x)` → `f`).
            let word = match word.find('(') {
                Some(open) if !word.ends_with("()") => &word[..open],
                Some(_) => word,
                None => word.trim_end_matches(')'),
            };
            if is_identifier(word) {
                push(word);
            }
        }
    }
    found
}

fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ',' | ';' | '[' | ']' | '{' | '}' | '"' | '\'' | '<' | '>' | '|' | '='
        )
}

/// Whether one trimmed word names something verbatim (see the module's rule).
pub fn is_identifier(word: &str) -> bool {
    let length = word.chars().count();
    if !(MIN_CHARS..=MAX_CHARS).contains(&length) || !word.chars().any(char::is_alphanumeric) {
        return false;
    }
    if word.contains("://") {
        return true;
    }
    let has_letter = word.chars().any(|c| c.is_ascii_alphabetic());
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    let digits = word.chars().filter(char::is_ascii_digit).count();
    if word.contains('/') || word.contains('\\') {
        let parts = word.split(['/', '\\']).filter(|part| !part.is_empty());
        let last = parts.clone().next_back().unwrap_or_default();
        return has_letter && (parts.count() >= 3 || last.contains('.'));
    }
    if is_dotted_name(word) || is_symbol(word) {
        return true;
    }
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    let code = (letters >= 2 || digits >= 3)
        && has_digit
        && (word.chars().any(|c| c.is_ascii_uppercase()) || word.contains('-'))
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    let hash =
        length >= 7 && has_digit && has_letter && word.chars().all(|c| c.is_ascii_hexdigit());
    let number = digits >= 3
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '_' | '%'));
    code || hash || number
}

/// `stem.ext` with a short alphanumeric extension holding a lower-case letter (`main.rs`,
/// `self.index`, `package.json`).
fn is_dotted_name(word: &str) -> bool {
    let Some((stem, extension)) = word.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && stem.chars().any(|c| c.is_ascii_alphabetic())
        && (1..=8).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && extension.chars().any(|c| c.is_ascii_lowercase())
        && stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
}

/// camelCase, PascalCase with an inner capital, snake_case, SCREAMING_CASE, calls and paths of
/// modules.
fn is_symbol(word: &str) -> bool {
    if word.ends_with("()") || word.contains("::") {
        return true;
    }
    let has_letter = word.chars().any(|c| c.is_ascii_alphabetic());
    let word_chars = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !word_chars {
        return false;
    }
    let inner_upper = word.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase());
    let snake = has_letter && word.trim_matches('_').contains('_');
    inner_upper || snake
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_kind_and_no_prose() {
        let text = "Fixed `cargo test -p ctxkit-bench` in crates/ctxkit-bench/src/lib.rs: \
                    parseHeader() failed with E0308 at commit 9f2e358a; see \
                    https://example.com/x and MAX_SIZE, port 8080, version 1.6.0, main.rs. \
                    The user and/or the tests said it works.";
        let found = identifiers(text);
        for expected in [
            "cargo test -p ctxkit-bench",
            "crates/ctxkit-bench/src/lib.rs",
            "parseheader()",
            "e0308",
            "9f2e358a",
            "https://example.com/x",
            "max_size",
            "8080",
            "1.6.0",
            "main.rs",
        ] {
            assert!(
                found.contains(&expected.to_owned()),
                "{expected} in {found:?}"
            );
        }
        for prose in ["fixed", "and/or", "user", "tests", "works", "the"] {
            assert!(!found.contains(&prose.to_owned()), "{prose} in {found:?}");
        }
    }
}

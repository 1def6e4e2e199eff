//! A prompt template's arguments: how `/name args` splits its arguments (shell-like quoting, as Pi
//! 1.6.0) and how they fill the template's placeholders (`$1`, `$@`, `$ARGUMENTS`, `${N:-default}`,
//! `${@:-default}`, `${ARGUMENTS:-default}`, `${@:N}`, `${@:N:L}`) in one left-to-right pass.

/// Whether JavaScript's `\s` matches `character`: Pi splits arguments and the command name on it,
/// which differs from Rust's `char::is_whitespace` (U+FEFF is one, U+0085 is not).
fn is_separator(character: char) -> bool {
    matches!(
        character,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Splits `/name rest` into the name (up to the first separator) and the text of its arguments
/// (after the separators that follow the name); `None` when the text is not `/` and a name.
pub(crate) fn split_command(input: &str) -> Option<(&str, &str)> {
    let rest = input.strip_prefix('/')?;
    let name_end = rest.find(is_separator).unwrap_or(rest.len());
    if name_end == 0 {
        return None;
    }
    let (name, after) = rest.split_at(name_end);
    Some((name, after.trim_start_matches(is_separator)))
}

/// Splits template arguments as Pi 1.6.0 does. Separators (JavaScript's whitespace) end an
/// argument. A `"` or `'` opens a quote only at the start of an argument (so `doesn't` is one
/// argument, apostrophe kept); inside it, a backslash before that same quote character keeps the
/// quote as text, other backslashes stay as typed; the closing quote may abut more text (`"a b"c`
/// is `a bc`). A quoted empty string is an argument. A quote never closed is text: the argument
/// starts with the quote character and what follows is read again as unquoted text.
pub fn parse_command_args(text: &str) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    let mut args = Vec::new();
    let mut current = String::new();
    let mut has_token = false;
    let mut quote: Option<(char, usize)> = None;
    let mut index = 0;
    while index < characters.len() {
        let character = characters[index];
        match quote {
            Some((open, _)) => {
                if character == '\\' && characters.get(index + 1) == Some(&open) {
                    current.push(open);
                    index += 1;
                } else if character == open {
                    quote = None;
                } else {
                    current.push(character);
                }
            }
            None if (character == '"' || character == '\'') && !has_token => {
                quote = Some((character, index));
                has_token = true;
            }
            None if is_separator(character) => {
                if has_token {
                    args.push(std::mem::take(&mut current));
                    has_token = false;
                }
            }
            None => {
                current.push(character);
                has_token = true;
            }
        }
        if let Some((open, start)) = quote
            && index + 1 >= characters.len()
        {
            // Never closed: the quote is text, and what followed it is read again unquoted.
            quote = None;
            current = open.to_string();
            index = start;
        }
        index += 1;
    }
    if has_token {
        args.push(current);
    }
    args
}

fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|character: char| !character.is_ascii_digit())
        .unwrap_or(text.len());
    &text[..end]
}

/// A number as digits; one too large for `usize` is `usize::MAX` (past every argument).
fn saturating_number(digits: &str) -> usize {
    digits.parse().unwrap_or(usize::MAX)
}

/// The argument at a 1-based position (`$0` and positions past the end are none).
fn positional(args: &[String], position: usize) -> Option<&str> {
    args.get(position.checked_sub(1)?).map(String::as_str)
}

/// One placeholder at the start of a text beginning with `$`.
enum Placeholder<'a> {
    /// `${N:-default}`, `${@:-default}`, `${ARGUMENTS:-default}`: the value, else the default.
    Default { target: &'a str, default: &'a str },
    /// `${@:N}` and `${@:N:L}`.
    Slice { start: usize, length: Option<usize> },
    /// `$N`.
    Position(usize),
    /// `$@` and `$ARGUMENTS`.
    All,
}

/// `${target:-default}` where target is digits, `@` or `ARGUMENTS`; the default runs to the first `}`.
fn parse_default(text: &str) -> Option<(Placeholder<'_>, usize)> {
    let rest = text.strip_prefix("${")?;
    let target = if rest.starts_with("ARGUMENTS") {
        "ARGUMENTS"
    } else if rest.starts_with('@') {
        "@"
    } else {
        leading_digits(rest)
    };
    if target.is_empty() {
        return None;
    }
    let after = rest[target.len()..].strip_prefix(":-")?;
    let end = after.find('}')?;
    let consumed = text.len() - after.len() + end + 1;
    let default = &after[..end];
    Some((Placeholder::Default { target, default }, consumed))
}

/// `${@:N}` or `${@:N:L}`.
fn parse_slice(text: &str) -> Option<(Placeholder<'_>, usize)> {
    let rest = text.strip_prefix("${@:")?;
    let start_digits = leading_digits(rest);
    if start_digits.is_empty() {
        return None;
    }
    let start = saturating_number(start_digits);
    let after = &rest[start_digits.len()..];
    let (length, after) = match after.strip_prefix(':') {
        Some(with_length) => {
            let length_digits = leading_digits(with_length);
            if length_digits.is_empty() {
                return None;
            }
            (
                Some(saturating_number(length_digits)),
                &with_length[length_digits.len()..],
            )
        }
        None => (None, after),
    };
    let after = after.strip_prefix('}')?;
    Some((
        Placeholder::Slice { start, length },
        text.len() - after.len(),
    ))
}

/// `$N`, `$ARGUMENTS` or `$@`.
fn parse_simple(text: &str) -> Option<(Placeholder<'_>, usize)> {
    let rest = text.strip_prefix('$')?;
    if rest.starts_with("ARGUMENTS") {
        return Some((Placeholder::All, 1 + "ARGUMENTS".len()));
    }
    if rest.starts_with('@') {
        return Some((Placeholder::All, 2));
    }
    let digits = leading_digits(rest);
    if digits.is_empty() {
        return None;
    }
    Some((
        Placeholder::Position(saturating_number(digits)),
        1 + digits.len(),
    ))
}

/// What a placeholder stands for.
fn fill(placeholder: &Placeholder<'_>, args: &[String], all: &str) -> String {
    match placeholder {
        Placeholder::Default { target, default } => {
            let value = match *target {
                "@" | "ARGUMENTS" => Some(all),
                digits => positional(args, saturating_number(digits)),
            };
            match value {
                Some(text) if !text.is_empty() => text.to_owned(),
                Some(_) | None => (*default).to_owned(),
            }
        }
        Placeholder::Slice { start, length } => {
            let from = start.saturating_sub(1);
            let selected: Vec<&str> = args
                .iter()
                .skip(from)
                .take(length.unwrap_or(usize::MAX))
                .map(String::as_str)
                .collect();
            selected.join(" ")
        }
        Placeholder::Position(position) => positional(args, *position).unwrap_or("").to_owned(),
        Placeholder::All => all.to_owned(),
    }
}

/// Substitutes placeholders as Pi 1.6.0 does, in one pass: `$<n>` (1-based; `$0` and past the end
/// are empty), `$ARGUMENTS` and `$@` (all arguments joined by spaces), `${N:-default}` (argument N,
/// or the default when it is missing or empty), `${@:-default}` and `${ARGUMENTS:-default}` (all
/// arguments, or the default when they join to nothing), `${@:N}` and `${@:N:L}` (from argument N,
/// `L` of them; `0` counts as 1). Inserted arguments and defaults are never scanned again; any other
/// `$` is text.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let all = args.join(" ");
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    while let Some(index) = rest.find('$') {
        out.push_str(&rest[..index]);
        let tail = &rest[index..];
        let found = parse_default(tail)
            .or_else(|| parse_slice(tail))
            .or_else(|| parse_simple(tail));
        match found {
            Some((placeholder, consumed)) => {
                out.push_str(&fill(&placeholder, args, &all));
                rest = &tail[consumed..];
            }
            None => {
                out.push('$');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

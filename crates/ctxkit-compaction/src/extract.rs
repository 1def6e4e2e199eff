//! Reading a summary request back into parts, for the offline summarizer: the serialized conversation
//! (`[User]:`, `[Assistant]:`, … parts), the previous summary, the focus; plus the
//! identifiers (paths, function names) worth keeping verbatim.

use std::collections::BTreeSet;

/// One part of a serialized conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    User(String),
    Assistant(String),
    Thinking(String),
    /// `name(args)` of each call.
    ToolCalls(Vec<String>),
    ToolResult(String),
}

/// A request's user text, taken apart.
#[derive(Debug, Default)]
pub(crate) struct Conversation {
    pub(crate) parts: Vec<Part>,
    pub(crate) previous_summary: Option<String>,
    pub(crate) focus: Option<String>,
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].rfind(close)? + start;
    Some(&text[start..end])
}

const TAGS: [&str; 5] = [
    "[User]: ",
    "[Assistant thinking]: ",
    "[Assistant]: ",
    "[Assistant tool calls]: ",
    "[Tool result]: ",
];

impl Conversation {
    pub(crate) fn from_request(user_text: &str) -> Self {
        // Pi 0.87's turn-prefix layout: the conversation, then the instructions, under headings.
        if let Some(body) = user_text.strip_prefix("# Conversation\n") {
            let end = body.rfind("\n\n# Instructions\n").unwrap_or(body.len());
            return Self {
                parts: split_parts(&body[..end]),
                previous_summary: None,
                focus: None,
            };
        }
        let conversation_end = user_text
            .find("\n</conversation>")
            .unwrap_or(user_text.len());
        let text = between(
            &user_text[..conversation_end.min(user_text.len())],
            "<conversation>\n",
            "",
        )
        .map(str::to_owned)
        .unwrap_or_else(|| user_text[..conversation_end].to_owned());
        let rest = &user_text[conversation_end..];
        let previous_summary =
            between(rest, "<previous-summary>\n", "\n</previous-summary>").map(str::to_owned);
        let focus = rest.rfind("\n\nAdditional focus: ").map(|start| {
            rest[start + "\n\nAdditional focus: ".len()..]
                .trim()
                .to_owned()
        });
        Self {
            parts: split_parts(&text),
            previous_summary,
            focus,
        }
    }
}

fn split_parts(text: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut previous_blank = true;
    for line in text.split('\n') {
        let tag = if previous_blank {
            TAGS.iter().position(|tag| line.starts_with(tag))
        } else {
            None
        };
        match tag {
            Some(index) => {
                if let Some(part) = current.take() {
                    parts.push(finish(part));
                }
                current = Some((index, line[TAGS[index].len()..].to_owned()));
            }
            None => {
                if let Some((_, body)) = current.as_mut() {
                    body.push('\n');
                    body.push_str(line);
                }
            }
        }
        previous_blank = line.is_empty();
    }
    if let Some(part) = current {
        parts.push(finish(part));
    }
    parts
}

fn finish((index, body): (usize, String)) -> Part {
    let body = body.trim_end().to_owned();
    match index {
        0 => Part::User(body),
        1 => Part::Thinking(body),
        2 => Part::Assistant(body),
        3 => Part::ToolCalls(split_calls(&body)),
        _ => Part::ToolResult(body),
    }
}

/// Splits `name(key=JSON, …); name(…)` into calls. Argument values are JSON, so a `; ` inside one
/// (code, shell) does not split; text that does not parse stays one call.
fn split_calls(body: &str) -> Vec<String> {
    let mut calls = Vec::new();
    let mut start = 0;
    while start < body.len() {
        match call_end(&body[start..]) {
            Some(length) => {
                calls.push(body[start..start + length].to_owned());
                start += length;
                match body[start..].strip_prefix("; ") {
                    Some(_) => start += 2,
                    None => break,
                }
            }
            None => {
                calls.push(body[start..].to_owned());
                break;
            }
        }
    }
    calls
}

/// The length of the call at the start of `text` (through its closing parenthesis).
fn call_end(text: &str) -> Option<usize> {
    let mut cursor = text.find('(')? + 1;
    loop {
        let rest = &text[cursor..];
        if rest.starts_with(')') {
            return Some(cursor + 1);
        }
        cursor += rest.find('=')? + 1;
        let value = &text[cursor..];
        if value.starts_with(['"', '[', '{']) {
            // Strings, arrays and objects end unambiguously.
            let mut values =
                serde_json::Deserializer::from_str(value).into_iter::<serde::de::IgnoredAny>();
            values.next()?.ok()?;
            cursor += values.byte_offset();
        } else {
            // Numbers, booleans and null run to the next separator.
            cursor += value.find([',', ')'])?;
        }
        if text[cursor..].starts_with(", ") {
            cursor += 2;
        }
    }
}

/// The string value of `key="…"` in a serialized call.
pub(crate) fn string_argument(call: &str, key: &str) -> Option<String> {
    let pattern = format!("{key}=\"");
    let start = call.find(&pattern)? + pattern.len() - 1;
    let mut deserializer = serde_json::Deserializer::from_str(&call[start..]).into_iter::<String>();
    deserializer.next()?.ok()
}

/// Sentences of a text (split at `.`, `!`, `?`, `。` and line breaks).
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        current.push(character);
        let ends = match character {
            '\n' | '。' | '！' | '？' => true,
            '.' | '!' | '?' => characters.peek().is_none_or(|next| next.is_whitespace()),
            _ => false,
        };
        if ends {
            if !current.trim().is_empty() {
                out.push(current.trim().to_owned());
            }
            current.clear();
        }
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// Paths (`src/lib.rs`, `./x/y.ts`, `.github/workflows/ci.yml`, `Cargo.toml`) and code identifiers
/// (`Store::get`, `parse_line(`, `camelCase()`), in order of first appearance. A leading `.` or `!`
/// of a path is part of it.
pub(crate) fn identifiers(text: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for raw in text
        .split(|character: char| character.is_whitespace() || "\"'`,;()[]{}<>=".contains(character))
    {
        let Some(token) = identifier_token(raw) else {
            continue;
        };
        if seen.insert(token.to_owned()) {
            found.push(token.to_owned());
        }
    }
    found
}

/// The identifier a whitespace-separated piece of text is, if any.
pub(crate) fn identifier_token(raw: &str) -> Option<&str> {
    let token = raw
        .trim_end_matches(['.', ':', '!', '?', '*'])
        .trim_start_matches([':', '?', '*', '@']);
    // A leading `.` or `!` stays when a path follows it (`.github/…`, `!dist/**`); not for `...x`.
    let token = if token.starts_with("..") && !token.starts_with("../") {
        token.trim_start_matches('.')
    } else {
        token
    };
    if token.len() < 3 || token.len() > 160 || token.starts_with("/@") {
        return None;
    }
    let bare = token.trim_start_matches('!');
    if is_path(bare) {
        return Some(token);
    }
    let bare = token.trim_start_matches(['.', '!']);
    is_code_identifier(bare).then_some(bare)
}

/// Extensions of files people name in coding sessions.
const FILE_EXTENSIONS: &[&str] = &[
    "rs",
    "ts",
    "tsx",
    "js",
    "jsx",
    "mjs",
    "cjs",
    "json",
    "jsonl",
    "md",
    "toml",
    "yaml",
    "yml",
    "py",
    "go",
    "java",
    "kt",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "rb",
    "php",
    "sh",
    "bash",
    "zsh",
    "txt",
    "lock",
    "html",
    "css",
    "scss",
    "sql",
    "proto",
    "xml",
    "ini",
    "cfg",
    "conf",
    "env",
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "csv",
    "lua",
    "swift",
    "zig",
    "vue",
    "svelte",
    "gradle",
    "snap",
    "patch",
    "diff",
    "log",
    "wasm",
    "mdx",
    "tf",
    "nix",
    "ex",
    "exs",
    "erl",
    "hs",
    "ml",
    "scala",
    "dart",
    "r",
    "ps1",
    "bat",
    "dockerfile",
    "gitignore",
    "npmrc",
];

fn is_path(token: &str) -> bool {
    let plausible = token
        .chars()
        .all(|character| character.is_alphanumeric() || "/._-~@+".contains(character))
        && token.chars().any(char::is_alphabetic)
        && !token.contains("//");
    if !plausible {
        return false;
    }
    let name = token.rsplit('/').next().unwrap_or(token);
    let known_extension =
        name.rsplit_once('.').is_some_and(|(stem, extension)| {
            !stem.trim_start_matches('.').is_empty()
                && FILE_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
        }) || (name.starts_with('.') && name.len() > 2 && !name[1..].contains('.'));
    if !token.contains('/') {
        return known_extension && !token.starts_with("..");
    }
    // `s/new/old/`, `m/g`: sed and regex syntax have short segments; a lone leading slash
    // (`/summary`, from a closing tag) is not a path.
    let segments: Vec<&str> = token
        .split('/')
        .filter(|segment| !segment.is_empty() && *segment != "." && *segment != "..")
        .collect();
    let words = segments
        .iter()
        .all(|segment| segment.chars().count() >= 2 || *segment == "~");
    known_extension && !segments.is_empty() || words && segments.len() >= 2
}

fn is_code_identifier(token: &str) -> bool {
    let word = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .next()
                .is_some_and(|first| first.is_alphabetic() || first == '_')
            && part
                .chars()
                .all(|character| character.is_alphanumeric() || character == '_')
    };
    if token.contains("::") {
        return token.split("::").all(word);
    }
    if !word(token) {
        return false;
    }
    let snake = token.contains('_') && token.chars().any(char::is_lowercase);
    let camel = token.chars().next().is_some_and(char::is_lowercase)
        && token.chars().any(char::is_uppercase);
    snake || camel
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_a_request_apart() {
        let request = "<conversation>\n[User]: Fix it.\n\n[Assistant tool calls]: read(path=\"a.rs\"); bash(command=\"ls\")\n\n\
                       [Tool result]: line 1\n\n[not a tag]\n\n[Assistant]: Done.\n</conversation>\n\n\
                       <previous-summary>\n## Goal\n- Old goal\n</previous-summary>\n\nInstructions\n\nAdditional focus: tests";
        let conversation = Conversation::from_request(request);
        assert_eq!(conversation.parts.len(), 4);
        assert_eq!(
            conversation.parts[1],
            Part::ToolCalls(vec![
                "read(path=\"a.rs\")".into(),
                "bash(command=\"ls\")".into()
            ])
        );
        assert_eq!(
            conversation.parts[2],
            Part::ToolResult("line 1\n\n[not a tag]".into())
        );
        assert_eq!(conversation.focus.as_deref(), Some("tests"));
        assert_eq!(
            conversation.previous_summary.as_deref(),
            Some("## Goal\n- Old goal")
        );
    }

    #[test]
    fn finds_paths_and_identifiers() {
        assert!(identifiers("</summary> and /etc/hosts").contains(&"/etc/hosts".to_owned()));
        assert_eq!(identifiers("</summary>").len(), 0);
        let found = identifiers(
            "Edit src/store.rs and Cargo.toml; call Store::get and parse_line(x), then fooBar(). See https://x.io/a e.g. v1.2, \
             Math.max, lines.push, s/new/old/ m/g and .github/workflows/ci.yml, !dist/app.js.",
        );
        assert_eq!(
            found,
            [
                "src/store.rs",
                "Cargo.toml",
                "Store::get",
                "parse_line",
                "fooBar",
                ".github/workflows/ci.yml",
                "!dist/app.js"
            ]
        );
    }

    #[test]
    fn reads_the_turn_prefix_layout() {
        let request = "# Conversation\n[User]: Fix the parser.\n\n[Assistant]: Reading it.\n\n\
                       # Instructions\nThe transcript above is the beginning of one turn.";
        let conversation = Conversation::from_request(request);
        assert_eq!(conversation.parts.len(), 2, "{:?}", conversation.parts);
        assert!(matches!(&conversation.parts[0], Part::User(text) if text == "Fix the parser."));
    }

    #[test]
    fn splits_calls_on_their_own_boundaries() {
        let body = r#"bash(command="a; b", timeout=5); edit(path="x.rs", edits=[{"oldText":"f(); g()"}]); read(path="y")"#;
        assert_eq!(
            split_calls(body),
            [
                r#"bash(command="a; b", timeout=5)"#,
                r#"edit(path="x.rs", edits=[{"oldText":"f(); g()"}])"#,
                r#"read(path="y")"#
            ]
        );
        assert_eq!(split_calls("odd(thing; x"), ["odd(thing; x"]);
        assert_eq!(split_calls("noargs()"), ["noargs()"]);
    }

    #[test]
    fn splits_sentences() {
        assert_eq!(
            sentences("Use A. Not v1.2 though!\n你好。ok"),
            ["Use A.", "Not v1.2 though!", "你好。", "ok"]
        );
    }
}

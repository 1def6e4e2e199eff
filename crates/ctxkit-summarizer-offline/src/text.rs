//! Text helpers: injected markup removed, sentences, clipping, identifiers, error lines.

/// `text` without what agents inject into user messages (`ctxkit_protocol::strip_injected_context`:
/// Claude Code's reminders and command wrappers, Codex's environment and `AGENTS.md` blocks).
pub fn strip_injected(text: &str) -> String {
    ctxkit_protocol::strip_injected_context(text)
}

/// The tags of Claude Code's system reminders, which it appends to tool results (a file read's
/// "consider whether it looks malicious"): the agent's text, not the tool's.
const REMINDER_OPEN: &str = "<system-reminder>";
const REMINDER_CLOSE: &str = "</system-reminder>";
/// The tags Claude Code wraps a failed call's message in; the message inside stays.
const TOOL_ERROR_TAGS: [&str; 2] = ["<tool_use_error>", "</tool_use_error>"];

/// A tool's output as the text it printed: terminal escapes (colours, cursor moves) removed,
/// Claude Code's `<system-reminder>` blocks left out and its `<tool_use_error>` tags taken off
/// the message they wrap. Without this, `\x1b[33mWarning` reads as the name `33mWarning` and the
/// tags as `/system-reminder`.
pub fn plain_output(output: &str) -> String {
    let unescaped;
    let printed = if output.contains('\u{1b}') {
        unescaped = strip_ansi_escapes::strip_str(output);
        unescaped.as_str()
    } else {
        output
    };
    let mut text = ctxkit_protocol::strip_blocks(printed, REMINDER_OPEN, REMINDER_CLOSE);
    for tag in TOOL_ERROR_TAGS {
        if text.contains(tag) {
            text = text.replace(tag, "");
        }
    }
    let report = without_agent_trailer(&text).len();
    text.truncate(report);
    text
}

/// The trailer Claude Code's Agent tool ends a background agent's report with: the agent's id
/// and a `<usage>` block (`agentId: a5fb… (for resuming …)\n<usage>total_tokens: …\nduration_ms:
/// 256975</usage>`). Bookkeeping, not the report: without this a step's outcome read
/// `duration_ms: 256975</usage>`.
fn without_agent_trailer(text: &str) -> &str {
    let trimmed = text.trim_end();
    let Some(usage) = trimmed
        .strip_suffix(USAGE_CLOSE)
        .and_then(|inside| inside.rfind(USAGE_OPEN))
    else {
        return text;
    };
    let before = trimmed[..usage].trim_end();
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    if before[line_start..].starts_with("agentId: ") {
        before[..line_start].trim_end()
    } else {
        before
    }
}

const USAGE_OPEN: &str = "<usage>";
const USAGE_CLOSE: &str = "</usage>";

/// `text` on one line, whitespace collapsed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max_chars` characters of `text`, an ellipsis marking a cut.
pub fn clip(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max_chars.saturating_sub(1)).collect();
    format!("{}…", cut.trim_end())
}

/// The sentences of prose: split at line ends and after `.`, `?`, `!` (and their CJK forms)
/// followed by a space; empty ones dropped.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut current = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            current.push(c);
            let ends = matches!(c, '。' | '？' | '！')
                || (matches!(c, '.' | '?' | '!') && chars.peek().is_some_and(|next| *next == ' '));
            if ends {
                push_sentence(&mut out, &current);
                current.clear();
            }
        }
        push_sentence(&mut out, &current);
    }
    out
}

fn push_sentence(out: &mut Vec<String>, sentence: &str) {
    let trimmed = sentence.trim().trim_start_matches(['-', '*', ' ']).trim();
    if !trimmed.is_empty() {
        out.push(trimmed.to_owned());
    }
}

/// Prose without fenced code blocks; the blocks are returned apart.
pub fn split_fences(text: &str) -> (String, Vec<String>) {
    let mut prose = String::new();
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            match block.take() {
                Some(done) => blocks.push(done),
                None => block = Some(String::new()),
            }
            continue;
        }
        match block.as_mut() {
            Some(open) => {
                open.push_str(line);
                open.push('\n');
            }
            None => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    blocks.extend(block);
    (prose, blocks)
}

const EXTENSIONS_MAX: usize = 6;

/// Whether a word (punctuation trimmed) names something a continuing engineer would look up
/// verbatim: a path, a file name, a camelCase/snake_case/SCREAMING_CASE symbol, a code such as
/// `TS2550` or `LED-482`, a version, a commit hash.
pub fn is_identifier(word: &str) -> bool {
    let chars = word.chars().count();
    if !(3..=120).contains(&chars) || !word.chars().any(|c| c.is_alphanumeric()) {
        return false;
    }
    if word.contains("://") {
        return true;
    }
    let has_letter = word.chars().any(|c| c.is_ascii_alphabetic());
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    let separators = word.contains('/') || word.contains('\\');
    if separators && has_letter && !word.contains(' ') {
        // `a/b` of two short words (and/or, I/O) is prose.
        let parts: Vec<&str> = word
            .split(['/', '\\'])
            .filter(|part| !part.is_empty())
            .collect();
        return parts.len() >= 3 || word.contains('.') || parts.iter().any(|part| part.len() > 6);
    }
    // An ellipsis (`downloading...`, `yourself.....we`) joins words of prose, not a name's parts.
    if word.contains("...") {
        return false;
    }
    if let Some((stem, extension)) = word.rsplit_once('.') {
        let file_like = !stem.is_empty()
            && (1..=EXTENSIONS_MAX).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
            && extension.chars().any(|c| c.is_ascii_lowercase());
        if file_like || (stem.contains('.') && has_letter) {
            return true;
        }
    }
    let inner_upper = word.chars().skip(1).any(|c| c.is_ascii_uppercase())
        && word.chars().any(|c| c.is_ascii_lowercase());
    let snake = word.contains('_') && has_letter;
    let letters = word.chars().filter(char::is_ascii_alphabetic).count();
    let code = letters >= 2
        && has_digit
        && (word.chars().any(|c| c.is_ascii_uppercase()) || word.contains('-'))
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    let hash = chars >= 7 && word.chars().all(|c| c.is_ascii_hexdigit()) && has_digit && has_letter;
    inner_upper || snake || code || hash || word.contains("::") || word.ends_with("()")
}

/// A word without the line number a numbered listing puts before a line (`160→Purpose`, as Claude
/// Code's file reads and `cat -n` print them): the number is the listing's, not a name.
fn without_line_number(word: &str) -> &str {
    match word.split_once('→') {
        Some((number, rest))
            if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) =>
        {
            rest
        }
        _ => word,
    }
}

/// Whether `c` ends a word: white space, the ASCII punctuation that brackets or lists names, and
/// the full-width punctuation of Chinese and Japanese prose (`，`, `。`, `、`, `（`, `：`, `「`, …),
/// which never belongs to a name and is written with no space around it
/// (`flash_attn。让我确认` is the name `flash_attn`, then prose).
fn ends_word(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            ',' | ';' | '(' | ')' | '[' | ']' | '{' | '}' | '"' | '\'' | '<' | '>' | '=' | '|'
        )
        // CJK symbols and punctuation (`、。「」『』【】《》〈〉`), and the full-width forms of
        // ASCII punctuation (`，：；！？（）［］｛｝＂＇`).
        || matches!(c, '\u{3001}'..='\u{3003}' | '\u{3008}'..='\u{3011}' | '\u{3014}'..='\u{301f}')
        || matches!(
            c,
            '，' | '：' | '；' | '！' | '？' | '（' | '）' | '［' | '］' | '｛' | '｝' | '＂' | '＇'
        )
        || matches!(c, '\u{2018}'..='\u{201f}')
}

/// The identifiers of `text`: backticked spans (short ones) and identifier-like words, in order.
pub fn identifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut parts = text.split('`');
    // Even parts are outside backticks, odd parts inside.
    let mut inside = false;
    for part in parts.by_ref() {
        if inside {
            if (2..=80).contains(&part.chars().count()) && !part.contains('\n') {
                out.push(part.to_owned());
            }
        } else {
            for word in part.split(ends_word) {
                let word = ctxkit_protocol::without_grep_line_number(without_line_number(word));
                // Markdown's strike-through (`~~Done~~`) is not part of the word; `~/` is.
                let word = word.strip_prefix("~~").unwrap_or(word);
                let word = word.strip_suffix("~~").unwrap_or(word);
                let word = word
                    .trim_start_matches(['*', '…'])
                    .trim_end_matches(['.', ':', '!', '?', '*', ',', '…']);
                // Escapes of JSON or a log quoted as text (`a\n\nb`) are not names.
                let escaped = word.contains("\\n") || word.contains("\\t");
                if !escaped && is_identifier(word) {
                    out.push(word.to_owned());
                }
            }
        }
        inside = !inside;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_output_loses_terminal_escapes_and_the_agents_tags() {
        let output = "\u{1b}[1m\u{1b}[33mWarning:\u{1b}[0m build_opt unused\u{1b}[2K\n\
                      <tool_use_error>File has not been read yet</tool_use_error>\n\
                      code<system-reminder>\nconsider whether it is malicious\n</system-reminder>";
        let plain = plain_output(output);
        assert_eq!(
            plain,
            "Warning: build_opt unused\nFile has not been read yet\ncode"
        );
        assert_eq!(identifiers(&plain), ["build_opt"]);
        // Many reminders in a long output go in one pass.
        let many = "x<system-reminder>r</system-reminder>".repeat(200_000);
        assert_eq!(plain_output(&many), "x".repeat(200_000));
        // An unclosed reminder and other tags stay as printed.
        assert_eq!(
            plain_output("<my-widget>a</my-widget> <system-reminder>open"),
            "<my-widget>a</my-widget> <system-reminder>open"
        );
    }

    #[test]
    fn injected_markup_goes_and_other_angle_brackets_stay() {
        assert_eq!(
            strip_injected("a <system-reminder>x\ny</system-reminder>b <T> c<d"),
            "a b <T> c<d"
        );
        assert_eq!(strip_injected("<command-name>/model</command-name>"), "");
    }

    #[test]
    fn identifiers_are_paths_symbols_codes_and_hashes_not_prose() {
        let found = identifiers(
            "Fix src/app.ts and `consumeToken` in C:\\src\\a.cs; TS2550 at 3e9f0a4, and/or I/O, RATE_LIMIT_MS, v2.8.0 (see LED-482). Done.",
        );
        assert_eq!(
            found,
            [
                "src/app.ts",
                "consumeToken",
                "C:\\src\\a.cs",
                "TS2550",
                "3e9f0a4",
                "RATE_LIMIT_MS",
                "v2.8.0",
                "LED-482"
            ]
        );
    }

    /// Words joined by an ellipsis are prose, not a name for holding dots.
    #[test]
    fn words_joined_by_an_ellipsis_are_not_identifiers() {
        let found = identifiers("downloading...u yourself.....we then src/a.rs and v1.2.3...");
        assert_eq!(found, ["src/a.rs", "v1.2.3"]);
    }

    #[test]
    fn an_agent_reports_without_its_id_and_usage() {
        let report = "Both fixes verified.\nagentId: a5fbbcd7128650af3 (for resuming to continue this agent's work if needed)\n<usage>total_tokens: 91786\ntool_uses: 40\nduration_ms: 256975</usage>";
        assert_eq!(plain_output(report), "Both fixes verified.");
        // A `<usage>` block the tool printed mid-output stays.
        let printed = "<usage>run --help</usage>\nok";
        assert_eq!(plain_output(printed), printed);
    }

    /// Chinese and Japanese prose puts its full-width punctuation right against a name: the name
    /// ends there (these words came from a real transcript's summary, whole, punctuation included).
    #[test]
    fn full_width_punctuation_ends_a_name() {
        let found = identifiers(
            "见 flash_attn。让我确认 步（mxfp_quant.py、ffn.py、run_single.sh） torch.float8_e4m3fn） 全部通过**，TestCase 「read_config」",
        );
        assert_eq!(
            found,
            [
                "flash_attn",
                "mxfp_quant.py",
                "ffn.py",
                "run_single.sh",
                "torch.float8_e4m3fn",
                "TestCase",
                "read_config"
            ]
        );
    }

    #[test]
    fn sentences_split_at_ends_and_lines() {
        assert_eq!(
            sentences("Do it. Don't add deps!\n- keep it\n直してください。はい"),
            [
                "Do it.",
                "Don't add deps!",
                "keep it",
                "直してください。",
                "はい"
            ]
        );
    }

    #[test]
    fn clip_marks_the_cut_on_a_char_boundary() {
        assert_eq!(clip("日本語のテキスト", 4), "日本語…");
        assert_eq!(clip("short", 10), "short");
    }

    /// QA: a `grep -n -C20` result gave one "name" per context line (`src/net/retry.rs-12-`,
    /// `agent.sh-1-#`) and the file itself never; struck-through Markdown gave `~~Reference`.
    /// A match line's place (`retry.rs:40`) stays a name, as a compiler's does.
    #[test]
    fn grep_line_numbers_and_strike_through_are_not_part_of_a_name() {
        let output = "src/net/retry.rs-12-    // code\nsrc/net/retry.rs:40:    let budget = 1;\n\
                      agent.sh-1-#!/bin/sh\nAGENT-PROTOCOL.md-10\n13. ~~Reference captures~~ ~~Done~~";
        assert_eq!(
            identifiers(output),
            [
                "src/net/retry.rs",
                "src/net/retry.rs:40",
                "agent.sh",
                "AGENT-PROTOCOL.md"
            ]
        );
        // A version, a code and a path with a number in it are left as they are.
        assert_eq!(
            identifiers("v1.2.3-10 LED-482 docs/2024-05-01.md src/a.rs:28:15 ~/notes.md"),
            [
                "v1.2.3-10",
                "LED-482",
                "docs/2024-05-01.md",
                "src/a.rs:28:15",
                "~/notes.md"
            ]
        );
    }

    #[test]
    fn a_numbered_listings_line_numbers_are_not_names() {
        let read =
            "   160→Purpose of `track_annotated.yaml`\n   162→Two options: range_str.split\n";
        let names = identifiers(read);
        assert!(
            names.contains(&"track_annotated.yaml".to_owned()),
            "{names:?}"
        );
        assert!(names.contains(&"range_str.split".to_owned()), "{names:?}");
        assert!(!names.iter().any(|name| name.contains('→')), "{names:?}");
        // An arrow inside a name that no number leads stays.
        assert_eq!(without_line_number("a→b"), "a→b");
    }
}

//! Reading the user's words for the offline summary: what agents inject (command caveats, system
//! reminders, `<command-name>` wrappers) is removed, pasted logs and filler are not requests, abuse
//! is cut out, standing instructions are recognised, and the session's language is detected.

use crate::extract::sentences;
use crate::tokens::utf16_len;

/// Tags whose whole content agents inject into user messages.
const INJECTED_BLOCKS: &[&str] = &[
    "local-command-caveat",
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
];

/// The user's own words of a message: injected blocks removed, whitespace kept.
pub(crate) fn strip_injected(text: &str) -> String {
    let mut out = text.to_owned();
    for tag in INJECTED_BLOCKS {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        while let Some(start) = out.find(&open) {
            let end = out[start..]
                .find(&close)
                .map_or(out.len(), |end| start + end + close.len());
            out.replace_range(start..end, "");
        }
        // A closing tag whose opening was cut off earlier.
        while let Some(end) = out.find(&close) {
            out.replace_range(..end + close.len(), "");
        }
    }
    out.trim().to_owned()
}

/// Words of no content on their own ("ok", "continue", "wow").
const FILLER: &[&str] = &[
    "ok",
    "okay",
    "k",
    "yes",
    "yep",
    "yeah",
    "no",
    "nope",
    "sure",
    "continue",
    "go",
    "go on",
    "go ahead",
    "proceed",
    "thanks",
    "thank you",
    "thx",
    "wow",
    "nice",
    "cool",
    "great",
    "perfect",
    "yo",
    "hi",
    "hello",
    "hmm",
    "sleep",
    "done",
    "good",
    "lgtm",
    "可以",
    "好",
    "好的",
    "继续",
    "谢谢",
    "是",
    "对",
    "嗯",
    "行",
];

/// Words of abuse, matched at the start of a word (case-insensitive).
const ABUSE: &[&str] = &["fuck", "shit", "wtf", "omfg", "damn", "crap", "bullshit"];
/// Insults: they mark a sentence aimed at the assistant, but are not cut out of other sentences
/// ("make this less dumb" keeps its meaning).
const INSULTS: &[&str] = &["stupid", "idiot", "dumb", "moron"];

fn word_starts_with_any(word: &str, list: &[&str]) -> bool {
    let lower = word
        .trim_matches(|character: char| !character.is_alphanumeric())
        .to_lowercase();
    list.iter().any(|abuse| lower.starts_with(abuse))
}

fn is_abusive_word(word: &str) -> bool {
    word_starts_with_any(word, ABUSE)
}

/// A sentence without its abusive words; `None` when nothing of substance is left or the sentence
/// is aimed at the assistant ("are you stupid?").
fn without_abuse(sentence: &str) -> Option<String> {
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let abusive = words.iter().filter(|word| is_abusive_word(word)).count();
    let lower = sentence.to_lowercase();
    let insulting =
        lower.contains("you") && words.iter().any(|word| word_starts_with_any(word, INSULTS));
    if insulting && words.len() < 10 {
        return None;
    }
    if abusive == 0 {
        return Some(sentence.to_owned());
    }
    let kept: Vec<&str> = words
        .into_iter()
        .filter(|word| !is_abusive_word(word))
        .collect();
    let aimed = lower.contains("you ") && !lower.contains('`') && kept.len() < 10;
    (kept.len() >= 4 && !aimed).then(|| kept.join(" "))
}

/// Whether a line reads as pasted output (a stack frame, a log line, a prompt) rather than prose.
fn is_log_line(line: &str) -> bool {
    let trimmed = line.trim();
    let lower = trimmed.to_lowercase();
    trimmed.starts_with("at ")
        || trimmed.starts_with("File \"")
        || trimmed.starts_with(['$', '>', '❯', '➜', '│', '|', '+', '{', '}', '[', '#', '/'])
        || lower.starts_with("error")
        || lower.starts_with("warning")
        || lower.starts_with("traceback")
        || lower.contains("errno")
        || lower.contains("enoent")
        || trimmed.contains("{\"")
        || trimmed.contains("\"}")
        || trimmed.contains("\":\"")
        || trimmed.contains("    at ")
        || (trimmed.starts_with(|character: char| character.is_ascii_digit())
            && trimmed.contains(':')
            && trimmed.chars().filter(char::is_ascii_digit).count() > 4)
}

/// The prose lines of a message: fenced blocks, pasted log lines and the indented lines that
/// continue them (a wrapped error) are left out.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut kept = Vec::new();
    let mut in_fence = false;
    let mut in_paste = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if line.trim().is_empty() {
            in_paste = false;
            continue;
        }
        if in_fence {
            continue;
        }
        if is_log_line(line) {
            in_paste = true;
            continue;
        }
        if in_paste && line.starts_with(char::is_whitespace) {
            continue;
        }
        in_paste = false;
        kept.push(line);
    }
    kept
}

/// Whether a user message is a request at all: not filler, not a pasted path, screenshot or log.
pub(crate) fn is_request(text: &str) -> bool {
    let trimmed = text
        .trim()
        .trim_end_matches(['.', '!', '?', '。', '！', '？']);
    let lower = trimmed.to_lowercase();
    if lower.is_empty() || FILLER.contains(&lower.as_str()) || trimmed.starts_with('/') {
        return false;
    }
    // "continue with …", "go on with …": the work goes on, no new goal.
    let first_word = lower.split([' ', ',']).next().unwrap_or_default();
    if matches!(first_word, "continue" | "proceed" | "resume") || lower.starts_with("go on") {
        return false;
    }
    let single_token = !trimmed.contains(char::is_whitespace)
        || (trimmed.starts_with('\'') && trimmed.ends_with('\''));
    if single_token && (trimmed.contains('/') || trimmed.starts_with('\'')) {
        return false;
    }
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let log_lines = lines.iter().filter(|line| is_log_line(line)).count();
    lines.is_empty() || log_lines * 2 < lines.len()
}

/// The request a user message makes, cleaned for the Goal: prose sentences only (no pasted lines,
/// no abuse), at most `limit` UTF-16 units. `None` when nothing is left.
pub(crate) fn clean_request(text: &str, limit: usize) -> Option<String> {
    let own = strip_injected(text);
    if !is_request(&own) {
        return None;
    }
    let mut kept = Vec::new();
    for line in prose_lines(&own) {
        for sentence in sentences(line) {
            if let Some(clean) = without_abuse(&sentence) {
                kept.push(clean);
            }
        }
    }
    let joined = without_lead_in(kept.join(" ").trim_start_matches(['-', '*', ' ']));
    let joined = joined.as_str();
    let words = joined.split_whitespace().count();
    let han = han_count(joined);
    let names_something = !crate::extract::identifiers(joined).is_empty();
    (words >= 4 || han >= 4 || (words >= 2 && names_something)).then(|| clip(joined, limit))
}

/// Words that mark a standing instruction anywhere in a sentence.
const CONSTRAINT_MARKS: &[&str] = &[
    "never",
    "always",
    "don't",
    "do not",
    "dont",
    "must",
    "should not",
    "shouldn't",
    "no unit tests",
    "不要",
    "必须",
    "总是",
    "始终",
    "禁止",
    "避免",
    "请勿",
    "只用",
    "别",
];
/// Words that mark a standing instruction when a sentence starts with them.
const CONSTRAINT_OPENINGS: &[&str] = &[
    "keep ",
    "prefer ",
    "avoid ",
    "only ",
    "make sure ",
    "use ",
    "stick to ",
    "no ",
];

/// Standing instructions in a user message (or a context file's text): imperative sentences with a
/// constraint word; questions and pasted lines are not instructions.
pub(crate) fn constraints_in(text: &str) -> Vec<String> {
    let own = strip_injected(text);
    let mut found = Vec::new();
    for line in prose_lines(&own) {
        // The sentence before, and whether it was taken as a constraint.
        let mut before: Option<(String, bool)> = None;
        for sentence in sentences(line) {
            let mut sentence = without_hold(&without_lead_in(&sentence));
            // A short sentence that refers back ("Don't use it.") is one rule with the sentence
            // it points at: kept whole, not as a fragment.
            if refers_back(&sentence)
                && has_constraint_word(&sentence.to_lowercase())
                && let Some((earlier, taken)) = before.take()
            {
                if taken {
                    found.pop();
                }
                sentence = format!("{earlier} {sentence}");
            }
            before = Some((sentence.clone(), false));
            let lower = sentence.to_lowercase();
            let words = sentence.split_whitespace().count();
            let han = han_count(&sentence);
            if (words < 3 && han < 4)
                || sentence.ends_with(['?', '？', ':', '：'])
                || lower.starts_with("let me")
                || lower.starts_with("i think")
                || lower.contains("i don't")
                || lower.contains("i do not")
                || !has_constraint_word(&lower)
            {
                continue;
            }
            if describes_behaviour(&lower) {
                continue;
            }
            if let Some(clean) = without_abuse(&sentence) {
                found.push(clip(clean.trim_start_matches(['-', '*', ' ']), 220));
                before = Some((sentence, true));
            }
        }
    }
    found
}

/// Whether a lowercased sentence holds a constraint word or opens like a rule.
fn has_constraint_word(lower: &str) -> bool {
    CONSTRAINT_MARKS.iter().any(|mark| lower.contains(mark))
        || CONSTRAINT_OPENINGS
            .iter()
            .any(|opening| lower.starts_with(opening))
}

/// Whether a sentence is too short to stand alone (four words at most) and points back at the one
/// before it with a pronoun ("Don't use it.", "Never do that again.", "Avoid those.").
fn refers_back(sentence: &str) -> bool {
    let words: Vec<String> = sentence
        .split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    words.len() <= 4
        && words.iter().any(|word| {
            matches!(
                word.as_str(),
                "it" | "that" | "this" | "them" | "those" | "these"
            )
        })
}

/// Whether a sentence only reports how things behave now (`distances are always km`, `expired
/// keys are never deleted though`): its only constraint word is "always" or "never" right after a
/// form of "to be" or "to get", with no imperative, modal or preference beside it. That is the
/// fault a request asks to change, not a rule to follow.
fn describes_behaviour(lower: &str) -> bool {
    let words: Vec<&str> = lower
        .split(|character: char| !(character.is_alphanumeric() || character == '\''))
        .filter(|word| !word.is_empty())
        .collect();
    let other_mark = CONSTRAINT_MARKS
        .iter()
        .filter(|mark| !matches!(**mark, "always" | "never"))
        .any(|mark| lower.contains(mark))
        || CONSTRAINT_OPENINGS
            .iter()
            .any(|opening| lower.starts_with(opening));
    let mut adverbs = words
        .iter()
        .enumerate()
        .filter(|(_, word)| matches!(**word, "always" | "never"))
        .peekable();
    adverbs.peek().is_some()
        && !other_mark
        && adverbs.all(|(index, _)| {
            index > 0
                && matches!(
                    words[index - 1],
                    "is" | "are" | "was" | "were" | "isn't" | "aren't" | "get" | "gets" | "got"
                )
        })
}

/// A sentence without a leading "ok,", "hm,", "so," or "well,".
fn without_lead_in(sentence: &str) -> String {
    let mut rest = sentence.trim();
    while let Some(after) = [
        "ok,", "okay,", "hm,", "hmm,", "so,", "well,", "alright,", "yes,", "no,",
    ]
    .iter()
    .find_map(|word| strip_prefix_ignoring_case(rest, word))
    {
        rest = after.trim_start();
    }
    rest.to_owned()
}

/// A sentence without the "no wait —" or "wait," that holds back the request before it: a
/// correction's lead-in is not a rule ("no …" would read as one).
fn without_hold(sentence: &str) -> String {
    let rest = sentence.trim();
    [
        "no wait —",
        "no wait -",
        "no wait,",
        "no wait.",
        "wait,",
        "wait —",
        "wait -",
    ]
    .iter()
    .find_map(|hold| strip_prefix_ignoring_case(rest, hold))
    .unwrap_or(rest)
    .trim_start()
    .to_owned()
}

/// `text` after an ASCII `prefix` matched without regard to case.
pub(crate) fn strip_prefix_ignoring_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
}

/// A key for deduplication: lowercase letters and digits only.
pub(crate) fn dedup_key(text: &str) -> String {
    text.chars()
        .filter(|character| character.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// At most `limit` UTF-16 units of `text` on one line, with `…` when cut.
pub(crate) fn clip(text: &str, limit: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if utf16_len(&flat) <= limit {
        return flat;
    }
    let mut out = String::new();
    for character in flat.chars() {
        if utf16_len(&out) + character.len_utf16() >= limit {
            break;
        }
        out.push(character);
    }
    out.push('…');
    out
}

/// How many Han characters `text` holds.
fn han_count(text: &str) -> usize {
    text.chars().filter(|character| is_han(*character)).count()
}

pub(crate) fn is_han(character: char) -> bool {
    matches!(character, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}')
}

/// The language the summary's own phrases are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    English,
    Chinese,
}

impl Language {
    /// Chinese when the user's words hold more Han characters than Latin words.
    pub(crate) fn detect<'a>(texts: impl Iterator<Item = &'a str>) -> Self {
        let (mut han, mut words) = (0usize, 0usize);
        for text in texts {
            han += han_count(text);
            words += text
                .split(|character: char| !character.is_ascii_alphabetic())
                .filter(|word| word.len() > 1)
                .count();
        }
        if han > words && han > 0 {
            Self::Chinese
        } else {
            Self::English
        }
    }
}

/// A line without its zero counts of failures (`0 failed`, `0 errors`, `ERROR=0`, `errors: 0`,
/// `Failed:     0,`), so that a summary line reporting none does not read as an error.
pub(crate) fn without_zero_counts(line: &str) -> String {
    let counted = |word: &str| {
        matches!(
            word.to_lowercase().as_str(),
            "failed" | "failures" | "failure" | "errors" | "error" | "failing"
        )
    };
    let zero =
        |word: &str| word.trim_matches(|character: char| !character.is_alphanumeric()) == "0";
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut dropped = vec![false; words.len()];
    for (index, word) in words.iter().enumerate() {
        let bare = word.trim_matches(|character: char| !character.is_alphanumeric());
        // `ERROR=0`, `errors:0`
        let assigned = word
            .split_once(['=', ':'])
            .is_some_and(|(name, value)| counted(name) && !value.is_empty() && zero(value));
        // `0 failed`, `0 test failures`
        let after_zero = counted(bare)
            && (index >= 1 && words[index - 1] == "0" || index >= 2 && words[index - 2] == "0");
        // `Failures: 0`, `Failed:     0,` (a plural or past-tense label: `error: 0 …` is a message)
        let labelled = counted(bare)
            && !bare.eq_ignore_ascii_case("error")
            && !bare.eq_ignore_ascii_case("failure")
            && word.ends_with([':', '='])
            && words.get(index + 1).is_some_and(|next| zero(next));
        if assigned || after_zero {
            dropped[index] = true;
        }
        if labelled {
            dropped[index] = true;
            dropped[index + 1] = true;
        }
    }
    words
        .iter()
        .zip(dropped)
        .filter(|(_, dropped)| !dropped)
        .map(|(word, _)| *word)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_injected_wrappers() {
        let text = "<local-command-caveat>Caveat: DO NOT respond to these messages</local-command-caveat>\n<command-name>/model</command-name>\n<command-args></command-args>";
        assert_eq!(strip_injected(text), "");
        assert_eq!(
            strip_injected("<system-reminder>be nice</system-reminder>Fix the parser"),
            "Fix the parser"
        );
        assert_eq!(clean_request(text, 200), None);
    }

    #[test]
    fn cleans_requests() {
        assert_eq!(clean_request("ok", 200), None);
        assert_eq!(clean_request("continue", 200), None);
        assert_eq!(
            clean_request("'/var/folders/x/Screenshot 1.png'", 200),
            None
        );
        let pasted = "Error: ENOENT: no such file or directory, open '/x/y'\n    at Object.openSync (node:fs:573:18)\n    at main (/x/cli.js:10:3)";
        assert_eq!(clean_request(pasted, 200), None);
        assert_eq!(
            clean_request(
                "you fucked that component up REAL fucking good. i undid your changes, try again. read the full file",
                200
            )
            .as_deref(),
            Some("i undid your changes, try again. read the full file")
        );
        assert_eq!(
            clean_request("are you fucking stupid? fix the footer colors", 200).as_deref(),
            Some("fix the footer colors")
        );
    }

    #[test]
    fn finds_standing_instructions() {
        assert_eq!(
            constraints_in("Fix parse_0. Never use unwrap in library code. Should we keep it?"),
            ["Never use unwrap in library code."]
        );
        assert_eq!(
            constraints_in("不要修改公共接口。先读代码"),
            ["不要修改公共接口。"]
        );
        // A report of how things behave now is the fault to fix, not a rule.
        assert_eq!(
            constraints_in(
                "good. old sessions are never purged though. add a purge job. Tokens must always be hashed."
            ),
            ["Tokens must always be hashed."]
        );
        assert_eq!(
            constraints_in("next: totals are always rounded. Always run the linter first."),
            ["Always run the linter first."]
        );
    }

    #[test]
    fn a_rule_that_refers_back_is_kept_with_its_sentence() {
        assert_eq!(
            constraints_in(
                "no wait — left-pad is unmaintained and leaks memory, ops flagged it. Don't use it."
            ),
            ["left-pad is unmaintained and leaks memory, ops flagged it. Don't use it."]
        );
        assert_eq!(
            constraints_in("Never force-push to main. Keep commits small and signed."),
            [
                "Never force-push to main.",
                "Keep commits small and signed."
            ]
        );
        // A correction's lead-in is not a rule of its own.
        assert!(constraints_in("no wait — the parser is slow on long lines.").is_empty());
    }

    #[test]
    fn detects_chinese() {
        assert_eq!(
            Language::detect(["请修复 `parse_0` 里的错误，然后运行测试"].into_iter()),
            Language::Chinese
        );
        assert_eq!(
            Language::detect(["please fix parse_0"].into_iter()),
            Language::English
        );
    }
}

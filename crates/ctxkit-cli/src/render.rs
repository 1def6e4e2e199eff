//! Human-readable rendering of entries and messages for terminal output.

mod columns;

pub use columns::{fit_two_columns, wrap_at_words};

use ctxkit_protocol::{AgentMessage, ContentBlock, EntryKind, MessageContent};
use ctxkit_session::StoredEntry;

/// The one spinner every command shows on stderr while it waits (a compaction, a summary, a model
/// call): `message` after the spinner, ticking every 100 ms. Callers show it only when stderr is
/// a terminal.
pub fn spinner(message: impl Into<std::borrow::Cow<'static, str>>) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    bar
}

/// `text` made safe to print on a terminal: every control character but newline and tab (escape
/// sequences such as an OSC 52 clipboard write, clear-screen or a window title start with one),
/// DEL, the C1 controls and the bidirectional overrides that reorder what a line shows are written
/// as `\uXXXX`, so they are shown, not obeyed; a carriage return right before a newline is left
/// out (the line ends alike). Inside a JSON string that is the same character,
/// so JSON output stays the same data. The one function every print of session, import, model or
/// tool text goes through (stdout and stderr through `redact`, the chat through its `Ui`).
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    // Most text (a `serve` view is hundreds of kilobytes a turn) is passed on after one byte scan.
    let may_be_unsafe = |byte: &u8| may_start_unsafe(*byte);
    if !text.as_bytes().iter().any(may_be_unsafe) || !text.chars().any(is_unsafe_for_terminal) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 16);
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        if character == '\r' && characters.peek() == Some(&'\n') {
            // A line's end written the Windows way (a file a tool read, a Codex rollout): the
            // newline ends the line alike, and a `\u000d` on every line would only be noise.
            continue;
        }
        if is_unsafe_for_terminal(character) {
            safe.push_str(&format!("\\u{:04x}", u32::from(character)));
        } else {
            safe.push(character);
        }
    }
    std::borrow::Cow::Owned(safe)
}

/// Whether `byte` may start the UTF-8 encoding of a character [`is_unsafe_for_terminal`] refuses
/// (a unit test checks every character against it).
fn may_start_unsafe(byte: u8) -> bool {
    matches!(byte, 0x00..=0x08 | 0x0b..=0x1f | 0x7f | 0xc2 | 0xd8 | 0xe2)
}

/// Whether a terminal would act on `character` instead of showing it: the one list
/// (`ctxkit_protocol::UNSAFE_TO_SHOW`) the session's page shows visibly too.
pub(crate) fn is_unsafe_for_terminal(character: char) -> bool {
    ctxkit_protocol::is_unsafe_to_show(character)
}

/// At most `limit` characters of `text` on one line, with `…` when cut.
pub fn one_line(text: &str, limit: usize) -> String {
    one_line_of(text.chars(), limit)
}

/// [`one_line`] of a text given by its characters, of which it reads at most those of the first
/// `limit + 1` characters of the line (and the whitespace between them): a tree row of a 1 MB tool
/// output reads its first 70 characters, not the megabyte.
fn one_line_of(characters: impl Iterator<Item = char>, limit: usize) -> String {
    let mut line = String::new();
    let mut count = 0;
    let mut space_pending = false;
    for character in characters {
        if character.is_whitespace() {
            space_pending = !line.is_empty();
            continue;
        }
        let needed = 1 + usize::from(space_pending);
        if count + needed > limit {
            // The line would be longer than `limit`: cut it to `limit - 1` characters and `…`.
            // Either the line is full (drop its last character) or it is one short and only the
            // space before this character would have fitted (keep it as it is).
            if count == limit {
                line.pop();
            }
            line.push('…');
            return line;
        }
        if space_pending {
            line.push(' ');
        }
        line.push(character);
        count += needed;
        space_pending = false;
    }
    line
}

/// At most `limit` characters of `text` on one line; a longer text loses its middle (`…`) so that
/// its end, where an error says why (after a long path), is kept whole.
pub fn one_line_keeping_end(text: &str, limit: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let count = flat.chars().count();
    if count <= limit {
        return flat;
    }
    let head = limit / 4;
    let tail = limit.saturating_sub(head + 1);
    let mut cut: String = flat.chars().take(head).collect();
    cut.push('…');
    cut.extend(flat.chars().skip(count - tail));
    cut
}

/// An error and its causes on one line, `: `-separated, leaving out a cause whose text the line
/// already holds (`cannot append to `…`: File too large` wraps the I/O error it names).
pub fn error_chain(error: &anyhow::Error) -> String {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(&format!(": {cause}"));
        }
    }
    message
}

/// The readable text of message content: text blocks, `[image]`, `[thinking]`, tool calls by name.
pub fn content_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => blocks_text(blocks),
    }
}

fn blocks_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .map(|block| match block {
            ContentBlock::Text(text) => text.text.clone(),
            ContentBlock::Image(image) => format!("[image {}]", image.mime_type),
            ContentBlock::Thinking(thinking) => format!("[thinking] {}", thinking.thinking),
            ContentBlock::ToolCall(call) => {
                format!("[tool call {}({})]", call.name, call.arguments)
            }
            ContentBlock::Unknown(object) => {
                format!(
                    "[{}]",
                    object
                        .get("type")
                        .and_then(|kind| kind.as_str())
                        .unwrap_or("unknown block")
                )
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The full readable text of a message.
pub fn message_text(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => content_text(&user.content),
        AgentMessage::Assistant(assistant) => {
            let text = blocks_text(&assistant.content);
            match &assistant.error_message {
                Some(error) => format!("{text}\n[error] {error}"),
                None => text,
            }
        }
        AgentMessage::ToolResult(result) => content_text(&result.content),
        AgentMessage::BashExecution(bash) => ctxkit_session::bash_execution_text(bash),
        AgentMessage::Custom(custom) => content_text(&custom.content),
        AgentMessage::BranchSummary(summary) => summary.summary.clone(),
        AgentMessage::CompactionSummary(summary) => summary.summary.clone(),
        AgentMessage::Unknown(object) if message.role() == "system" => system_text(object),
        AgentMessage::Unknown(object) => serde_json::Value::Object(object.clone()).to_string(),
    }
}

/// `1 record`, `2 records`, `1 entry`, `3 entries`, `2 strategies`.
pub fn counted(count: impl std::fmt::Display, noun: &str) -> String {
    let count = count.to_string();
    let consonant_y = noun
        .strip_suffix('y')
        .filter(|stem| !stem.ends_with(['a', 'e', 'o', 'u']));
    match (count.as_str(), consonant_y) {
        ("1", _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{count} {stem}ies"),
        (_, None) => format!("{count} {noun}s"),
    }
}

/// A label for a message's role, with the tool name for tool results.
pub fn role_label(message: &AgentMessage) -> String {
    match message.as_tool_result() {
        Some(result) => {
            let error = if result.is_error { " error" } else { "" };
            format!("toolResult {}{error}", result.tool_name)
        }
        None => message.role().to_owned(),
    }
}

/// What a compaction keeps of the messages before it: from its first kept entry, or nothing when
/// that is the compaction itself (an imported Claude Code or Codex compaction, whose context
/// restarts from the summary).
pub fn kept_from(compaction_id: &str, first_kept_entry_id: &str) -> String {
    if first_kept_entry_id.is_empty() {
        // An old (v1) compaction whose kept index named no entry.
        "names no entry to keep from".to_owned()
    } else if compaction_id == first_kept_entry_id {
        "keeps nothing before it".to_owned()
    } else {
        format!("keeps from {first_kept_entry_id}")
    }
}

/// What a tree line says about an entry: its kind and a short text.
pub fn entry_summary(entry: &StoredEntry) -> (String, String) {
    let Ok(parsed) = entry.parse() else {
        return (
            entry.type_name().to_owned(),
            "(unreadable entry)".to_owned(),
        );
    };
    match parsed.kind {
        EntryKind::Message(message) => (role_label(&message), message_text(&message)),
        EntryKind::ThinkingLevelChange(change) => ("thinking".to_owned(), change.thinking_level),
        EntryKind::ModelChange(change) => (
            "model".to_owned(),
            format!("{}/{}", change.provider, change.model_id),
        ),
        EntryKind::Compaction(compaction) => (
            "compaction".to_owned(),
            format!(
                "{} tokens before; {}: {}",
                compaction.tokens_before,
                kept_from(entry.id(), &compaction.first_kept_entry_id),
                compaction.summary
            ),
        ),
        EntryKind::BranchSummary(summary) => ("branch summary".to_owned(), summary.summary),
        EntryKind::Custom(custom) => ("custom".to_owned(), custom.custom_type),
        EntryKind::CustomMessage(message) => (
            format!("custom message {}", message.custom_type),
            content_text(&message.content),
        ),
        EntryKind::Label(label) => (
            "label".to_owned(),
            match label.label {
                Some(text) if !text.is_empty() => format!("{} = {text}", label.target_id),
                Some(_) | None => format!("{} cleared", label.target_id),
            },
        ),
        EntryKind::SessionInfo(info) => ("name".to_owned(), info.name.unwrap_or_default()),
        EntryKind::ContextEdit(edit) => (
            "context edit".to_owned(),
            match edit.replacement {
                Some(replacement) => {
                    format!(
                        "{} → {}",
                        edit.target_id,
                        content_text(&replacement.content)
                    )
                }
                None => format!("{} left out", edit.target_id),
            },
        ),
        EntryKind::Usage(usage) => (
            "usage".to_owned(),
            format!("{} {}/{}", usage.kind, usage.provider, usage.model),
        ),
        EntryKind::Unknown { type_name, .. } => (type_name, String::new()),
    }
}

/// A system message (Pi 0.87) in one line: its content, then the sections and tools it changes.
fn system_text(object: &ctxkit_protocol::JsonObject) -> String {
    use serde_json::Value;
    let mut parts = Vec::new();
    match object.get("content") {
        Some(Value::String(text)) if !text.is_empty() => parts.push(text.clone()),
        Some(Value::Array(blocks)) => parts.extend(
            blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .map(str::to_owned),
        ),
        Some(_) | None => {}
    }
    if let Some(Value::Object(sections)) = object.get("sections") {
        let names: Vec<String> = sections
            .iter()
            .map(|(name, value)| {
                if value.is_null() {
                    format!("-{name}")
                } else {
                    name.clone()
                }
            })
            .collect();
        parts.push(format!("[sections {}]", names.join(" ")));
    }
    let tool_names = |key: &str, sign: &str| -> Vec<String> {
        object
            .get(key)
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|tool| tool.get("name").and_then(Value::as_str))
                    .map(|name| format!("{sign}{name}"))
                    .collect()
            })
            .unwrap_or_default()
    };
    let tools: Vec<String> = tool_names("toolsAdded", "+")
        .into_iter()
        .chain(tool_names("toolsRemoved", "-"))
        .collect();
    if !tools.is_empty() {
        parts.push(format!("[tools {}]", tools.join(" ")));
    }
    parts.join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod terminal_tests {
    use super::{is_unsafe_for_terminal, may_start_unsafe, terminal_safe};

    #[test]
    fn every_unsafe_character_starts_with_a_byte_the_fast_scan_stops_at() {
        let mut buffer = [0u8; 4];
        let missed: Vec<char> = (0..=u32::from(char::MAX))
            .filter_map(char::from_u32)
            .filter(|&character| is_unsafe_for_terminal(character))
            .filter(|character| !may_start_unsafe(character.encode_utf8(&mut buffer).as_bytes()[0]))
            .collect();
        assert!(missed.is_empty(), "{missed:?}");
    }

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        let hostile = "title\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{1b}[2J\u{1b}]0;owned\u{7}\r\u{9b}31m\u{202e}txt.exe";
        let safe = terminal_safe(hostile);
        assert!(
            !safe
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{safe:?}"
        );
        assert_eq!(
            safe,
            "title\\u001b]52;c;ZWNobyBwd25lZA==\\u0007\\u001b[2J\\u001b]0;owned\\u0007\\u000d\\u009b31m\\u202etxt.exe"
        );
        assert_eq!(terminal_safe("plain\n\ttext é ✓"), "plain\n\ttext é ✓");
    }

    /// A file with Windows line ends reads as lines; a carriage return anywhere else (one that
    /// would move the cursor back over what was printed) is still shown.
    #[test]
    fn a_windows_line_end_is_a_line_end_a_lone_carriage_return_is_shown() {
        assert_eq!(terminal_safe("one\r\ntwo\r\n"), "one\ntwo\n");
        assert_eq!(
            terminal_safe("safe\rrm -rf ~\r\r\n"),
            "safe\\u000drm -rf ~\\u000d\n"
        );
    }

    #[test]
    fn json_stays_the_same_data() {
        let value = serde_json::json!({"title": "a\u{9b}b\u{202e}c\u{7f}"});
        let printed = value.to_string();
        let safe = terminal_safe(&printed);
        assert_ne!(safe, printed);
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}

#[cfg(test)]
mod counted_tests {
    use super::{counted, kept_from};

    #[test]
    fn what_a_compaction_keeps_reads_for_every_first_kept_id() {
        assert_eq!(kept_from("c1", "e5"), "keeps from e5");
        assert_eq!(kept_from("c1", "c1"), "keeps nothing before it");
        assert_eq!(kept_from("c1", ""), "names no entry to keep from");
    }

    #[test]
    fn counts_read_in_the_singular_for_one() {
        assert_eq!(counted(1, "record"), "1 record");
        assert_eq!(counted(0, "issue"), "0 issues");
        assert_eq!(counted(1, "entry"), "1 entry");
        assert_eq!(counted(16, "entry"), "16 entries");
        assert_eq!(counted(2, "new entry"), "2 new entries");
        assert_eq!(counted(2, "strategy"), "2 strategies");
        assert_eq!(counted(3, "day"), "3 days");
        assert_eq!(counted(2, "branch summary"), "2 branch summaries");
    }
}

#[cfg(test)]
mod error_chain_tests {
    use super::error_chain;

    #[test]
    fn a_cause_the_message_already_names_is_said_once() {
        let io = std::io::Error::from_raw_os_error(27);
        let text = io.to_string();
        let wrapped = anyhow::Error::new(io).context(format!("cannot append to `s.jsonl`: {text}"));
        assert_eq!(
            error_chain(&wrapped),
            format!("cannot append to `s.jsonl`: {text}")
        );
        let other = anyhow::anyhow!("disk gone").context("cannot save");
        assert_eq!(error_chain(&other), "cannot save: disk gone");
    }
}

#[cfg(test)]
mod keeping_end_tests {
    use super::{one_line, one_line_keeping_end};

    /// The line as it was made before [`one_line`] stopped reading: every word joined, then cut.
    fn joined_then_cut(text: &str, limit: usize) -> String {
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat.chars().count() <= limit {
            return flat;
        }
        let mut cut: String = flat.chars().take(limit.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }

    #[test]
    fn one_line_is_every_word_joined_then_cut() {
        let texts = [
            "",
            " ",
            "a",
            "ab",
            "abc",
            "a b",
            "ab c",
            "a bc",
            "  a  b  ",
            "a\n\tb c\u{3000}d ",
            "héllo wörld ✓ 日本語 テキスト",
            "one two three four five",
            "x y z ",
            " xy  z",
        ];
        for text in texts {
            for limit in 0..12 {
                assert_eq!(
                    one_line(text, limit),
                    joined_then_cut(text, limit),
                    "{text:?} at {limit}"
                );
            }
        }
    }

    #[test]
    fn one_line_reads_only_the_start_of_a_long_text() {
        let text = "word ".repeat(200_000);
        let mut read = 0;
        let counted = text.chars().inspect(|_| read += 1);
        let line = super::one_line_of(counted, 70);
        assert_eq!(line, joined_then_cut(&text, 70));
        // Before, the whole megabyte was split and joined to show 70 characters of it.
        assert!(read <= 80, "read {read} characters");
    }

    #[test]
    fn a_long_refusal_keeps_its_call_and_its_whole_reason() {
        let line = format!(
            "`edit .git/{}.txt` refused: `/p/.git/{}.txt` is guarded (git config and hooks) and \
             the user did not approve the write",
            "a".repeat(300),
            "a".repeat(300)
        );
        let shown = one_line_keeping_end(&line, 400);
        assert_eq!(shown.chars().count(), 400);
        assert!(shown.starts_with("`edit .git/aaa"), "{shown}");
        assert!(
            shown.ends_with(
                "is guarded (git config and hooks) and the user did not approve the write"
            ),
            "{shown}"
        );
        assert_eq!(one_line_keeping_end("short  one", 400), "short one");
    }
}

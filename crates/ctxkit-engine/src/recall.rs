//! What the model's view shortened, read back from the session, which keeps it whole: the
//! originals behind the summaries (`recall` with [`SUMMARIZED_REFERENCE`], whole or the parts that
//! hold the words the model asks for, so what a summary left out is not lost to it), a pruned tool
//! result, and a tool call whose long arguments were cut (`transforms.pruneToolCalls`), both by the
//! id in their marker.
//!
//! Recall reads the current branch, each message as its context shows it: a message a
//! `context_edit` replaced reads as its replacement, one it omitted is not read (a key the user
//! pasted and edited out, a result holding injected text, never comes back). Another branch is read
//! only where a branch summary on the current branch stands for it (`summarized.rs`): the branch it
//! left behind, as that branch's context showed it; an abandoned branch nothing summarized stays
//! unread.

use ctxkit_protocol::{AgentMessage, ContentBlock, ToolCall};
use std::collections::HashMap;

use ctxkit_session::{
    ContextMessage, ContextMessageKind, EditEffect, EntryIndex, Session, SessionError, edits_among,
};
use serde_json::Value;

use crate::engine::Engine;
use crate::error::Result;
use crate::messages::content_text;

/// The reference the summaries' pointer names (see `summary_pointer`).
pub const SUMMARIZED_REFERENCE: &str = "ctxkit://summarized";

/// Lines kept before and after a line that holds a word of the query.
const CONTEXT_LINES: usize = 2;

/// The line the model's view adds to each compaction summary (never stored): where its originals
/// are and how to read them.
pub(crate) fn summary_pointer() -> String {
    format!(
        "\n\n(The original messages behind this summary stay in the session: call `recall` with \
         reference `{SUMMARIZED_REFERENCE}` and a `query` of the words to find.)"
    )
}

/// Where recall found a message: on the current branch, or on a branch a branch summary on it
/// left behind (which that summary stands for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    CurrentBranch,
    LeftBehind,
}

impl Engine {
    /// The full text of a tool result pruned from the model's view, by the id in its marker: on
    /// the current branch, or on a branch a branch summary on it left behind.
    pub async fn fetch_pruned(&self, tool_call_id: &str) -> Result<Option<String>> {
        Ok(self.find_pruned(tool_call_id).await?.map(|(text, _)| text))
    }

    /// A tool call whose long arguments the model's view cut (`transforms.pruneToolCalls`), by the
    /// id in its marker: its name and id, then each argument, a string as written (the file, the
    /// patch) and anything else as JSON. `None` when no call on the branches recall reads (the
    /// current one and those its branch summaries left behind) has that id.
    pub async fn fetch_tool_call(&self, tool_call_id: &str) -> Result<Option<String>> {
        Ok(self
            .find_tool_call(tool_call_id)
            .await?
            .map(|(text, _)| text))
    }

    /// [`fetch_pruned`](Self::fetch_pruned)'s text and where it was found.
    pub(crate) async fn find_pruned(&self, tool_call_id: &str) -> Result<Option<(String, Place)>> {
        let state = self.lock().await;
        newest_message(&state.session, "toolResult", |message| {
            let result = message.as_tool_result()?;
            (result.tool_call_id == tool_call_id).then(|| content_text(&result.content))
        })
    }

    /// [`fetch_tool_call`](Self::fetch_tool_call)'s text and where it was found.
    pub(crate) async fn find_tool_call(
        &self,
        tool_call_id: &str,
    ) -> Result<Option<(String, Place)>> {
        let state = self.lock().await;
        newest_message(&state.session, "assistant", |message| {
            let reply = message.as_assistant()?;
            let call = reply
                .content
                .iter()
                .filter_map(ContentBlock::as_tool_call)
                .find(|call| call.id == tool_call_id)?;
            Some(call_text(call))
        })
    }
}

/// A branch of a session and the context edits on it: what recall may read.
pub(crate) struct Branch<'a> {
    pub(crate) session: &'a Session,
    pub(crate) path: Vec<EntryIndex>,
    edits: HashMap<Box<str>, EditEffect>,
}

impl<'a> Branch<'a> {
    /// The current branch: root to leaf.
    pub(crate) fn of(session: &'a Session) -> Self {
        Self::along(session, session.leaf_path().into_owned())
    }

    /// The branch from the root to the last entry of `path`, which is that entry's path.
    pub(crate) fn along(session: &'a Session, path: Vec<EntryIndex>) -> Self {
        let edits = edits_among(session.index(), &path);
        Self {
            session,
            path,
            edits,
        }
    }

    /// [`Self::message`] for a search: a damaged line of one message does not hide the others
    /// (`None`, as for an entry with no message); a line that can no longer be read (the file
    /// changed under the engine) is an error.
    pub(crate) fn readable_message(&self, position: EntryIndex) -> Result<Option<AgentMessage>> {
        match self.message(position) {
            Some(Ok(message)) => Ok(Some(message)),
            Some(Err(SessionError::InvalidEntry { .. })) | None => Ok(None),
            Some(Err(error)) => Err(error.into()),
        }
    }

    /// The message of the `message` entry at `position` (one of `path`'s) as the branch's context
    /// shows it (its last edit applied); `None` when it is not a message or was edited out.
    pub(crate) fn message(
        &self,
        position: EntryIndex,
    ) -> Option<ctxkit_session::Result<AgentMessage>> {
        let entry = self.session.index().get(position)?;
        match self.edits.get(entry.id()) {
            None => entry.parse_message(),
            Some(EditEffect::Omit) => None,
            Some(_) if entry.type_name() != "message" => None,
            Some(&EditEffect::Replace(edit)) => {
                let message = ContextMessage {
                    edit: Some(edit),
                    ..ContextMessage::new(position, ContextMessageKind::Stored)
                };
                Some(self.session.message(&message))
            }
        }
    }
}

/// What `read` finds in the newest message of `role` on the current branch that it finds anything
/// in (see [`Branch`]), else on the branches its branch summaries left behind
/// ([`newest_left_behind`](crate::summarized::newest_left_behind)), and where.
fn newest_message<T>(
    session: &Session,
    role: &str,
    read: impl Fn(&AgentMessage) -> Option<T>,
) -> Result<Option<(T, Place)>> {
    if let Some(found) = newest_on_current_branch(session, role, &read)? {
        return Ok(Some((found, Place::CurrentBranch)));
    }
    Ok(crate::summarized::newest_left_behind(session, role, read)?
        .map(|found| (found, Place::LeftBehind)))
}

/// What `read` finds in the newest message of `role` on the current branch. A damaged line of
/// another message does not hide the one asked for; a line that can no longer be read (the file
/// changed under the engine) is an error, not "not found".
fn newest_on_current_branch<T>(
    session: &Session,
    role: &str,
    read: impl Fn(&AgentMessage) -> Option<T>,
) -> Result<Option<T>> {
    let branch = Branch::of(session);
    for &position in branch.path.iter().rev() {
        let Some(entry) = session.index().get(position) else {
            continue;
        };
        if entry.role() != Some(role) {
            continue;
        }
        let Some(message) = branch.readable_message(position)? else {
            continue;
        };
        if let Some(found) = read(&message) {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// A tool call as `recall` shows it: `name (call id)`, then `key: value` per argument; a string of
/// several lines after `key:` on lines of its own, as written.
fn call_text(call: &ToolCall) -> String {
    let mut text = format!("{} (call {})\n", call.name, call.id);
    let Value::Object(arguments) = &call.arguments else {
        text.push_str(&call.arguments.to_string());
        text.push('\n');
        return text;
    };
    for (key, value) in arguments {
        text.push_str(key);
        match value.as_str() {
            Some(string) if string.contains('\n') => {
                text.push_str(":\n");
                text.push_str(string);
                if !string.ends_with('\n') {
                    text.push('\n');
                }
            }
            Some(string) => {
                text.push_str(": ");
                text.push_str(string);
                text.push('\n');
            }
            None => {
                text.push_str(": ");
                text.push_str(&value.to_string());
                text.push('\n');
            }
        }
    }
    text
}

/// The query's words, lowercased; words of one character are left out.
pub(crate) fn query_words(query: &str) -> Vec<String> {
    query
        .split(|character: char| character.is_whitespace() || character == ',')
        .map(|word| word.trim_matches(|c: char| "\"'`()[]{}".contains(c)))
        .filter(|word| word.chars().count() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// A message's role and its whole text (tool results uncut, tool calls with their arguments);
/// `None` for messages with nothing to read.
pub(crate) fn message_text(message: &AgentMessage) -> Option<(&'static str, String)> {
    let (role, text) = match message {
        AgentMessage::User(user) => ("user", content_text(&user.content)),
        AgentMessage::ToolResult(result) => ("tool result", content_text(&result.content)),
        AgentMessage::BashExecution(bash) => {
            ("bash", format!("$ {}\n{}", bash.command, bash.output))
        }
        AgentMessage::Assistant(reply) => ("assistant", assistant_text(&reply.content)),
        AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => return None,
    };
    (!text.trim().is_empty()).then_some((role, text))
}

fn assistant_text(content: &[ContentBlock]) -> String {
    let mut lines = Vec::new();
    for block in content {
        match block {
            ContentBlock::Text(text) => lines.push(text.text.clone()),
            ContentBlock::ToolCall(call) => {
                lines.push(format!("→ {} {}", call.name, call.arguments));
            }
            ContentBlock::Image(_) | ContentBlock::Thinking(_) | ContentBlock::Unknown(_) => {}
        }
    }
    lines.join("\n")
}

/// The lines of `text` that hold one of `words` (as [`crate::words::query_word_places`] finds
/// them: an identifier whole, a word of letters at a word's start), with [`CONTEXT_LINES`] around each, gaps marked
/// `…`; `None` when no line does. A long line shows only the parts around the words (its head,
/// when it is a line around): see [`crate::line_excerpt`].
pub(crate) fn matching_lines(text: &str, words: &[String]) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let holds_a_word = |line: &str| {
        let line = line.to_lowercase();
        words
            .iter()
            .any(|word| !crate::words::query_word_places(&line, word).is_empty())
    };
    let hits: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| holds_a_word(line))
        .map(|(number, _)| number)
        .collect();
    if hits.is_empty() {
        return None;
    }
    let mut shown: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    let mut next = 0;
    for &hit in &hits {
        let start = hit.saturating_sub(CONTEXT_LINES).max(next);
        let end = (hit + CONTEXT_LINES + 1).min(lines.len());
        if start > next || (next == 0 && start > 0) {
            shown.push("…".into());
        }
        for (number, line) in lines.iter().enumerate().take(end).skip(start) {
            // A line around a hit is a hit itself when it is one of them (read once, above).
            let found = if hits.binary_search(&number).is_ok() {
                words
            } else {
                &[]
            };
            shown.push(crate::line_excerpt::shown_line(line, found));
        }
        next = next.max(end);
    }
    if next < lines.len() {
        shown.push("…".into());
    }
    Some(shown.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_keeps_the_lines_around_its_words() {
        let text = (0..20)
            .map(|line| format!("line {line}"))
            .collect::<Vec<_>>()
            .join("\n")
            .replace("line 10", "the PORT is 8431");
        let shown = matching_lines(&text, &query_words("port")).unwrap();
        assert_eq!(
            shown,
            "…\nline 8\nline 9\nthe PORT is 8431\nline 11\nline 12\n…"
        );
        assert_eq!(matching_lines(&text, &query_words("nothing-here")), None);
    }

    /// QA r101 S1: `SECRET_1_2` also returned SECRET_1_20 … 29, and `port` matches `report`.
    #[test]
    fn an_identifier_matches_whole_and_a_word_its_forms() {
        let text = [
            "SECRET_1_2 = a",
            "SECRET_1_20 = b",
            "the report",
            "ports open",
        ]
        .map(|line| format!("{line}\n-\n-\n-\n-\n-"))
        .join("\n");
        let shown = |query: &str| matching_lines(&text, &query_words(query));
        assert_eq!(shown("SECRET_1_2").unwrap(), "SECRET_1_2 = a\n-\n-\n…");
        assert_eq!(shown("port").unwrap(), "…\n-\n-\nports open\n-\n-\n…");
        assert_eq!(
            shown("secret_1_2 secret_1_20")
                .unwrap()
                .matches("SECRET")
                .count(),
            2
        );
        assert_eq!(shown("secret").unwrap().matches("SECRET").count(), 2);
        assert_eq!(shown("SECRET_1"), None);
    }

    #[test]
    fn a_call_reads_back_with_its_strings_as_written() {
        let call = ToolCall {
            id: "w1".to_owned(),
            name: "write".to_owned(),
            arguments: serde_json::json!({"path": "src/a.rs", "content": "fn a() {}\nfn b() {}",
                "lines": [1, 2]}),
            extra: Default::default(),
        };
        assert_eq!(
            call_text(&call),
            "write (call w1)\npath: src/a.rs\ncontent:\nfn a() {}\nfn b() {}\nlines: [1,2]\n"
        );
    }

    #[test]
    fn query_words_drop_quotes_and_single_letters() {
        assert_eq!(query_words("`PORT`, a \"Redis\""), vec!["port", "redis"]);
    }
}

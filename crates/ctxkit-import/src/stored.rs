//! The compact form of an entry while a session is converted: its JSON line, written once, with
//! the slot of its `parentId` left open (parents are resolved after the whole source is read) and
//! the little the later passes read from it (an assistant's tool calls, whether it is a message).
//! Entries a later pass changes (tool results, compactions) stay structured until the end. A
//! million one-word entries held structured take about 2 KB each; as lines, about 300 bytes.

use ctxkit_protocol::{AgentMessage, ContentBlock, EntryKind, SessionEntry};
use serde_json::Value;

use crate::builder::Planned;

/// The parent written into an entry to find where its `parentId` value sits in the line: control
/// characters no id has (ids are hex digits or the source's own ids, never with `\u0001`).
const PARENT_SLOT: &str = "\u{1}ctxkit-parent-slot\u{1}";

/// An entry of a session being converted.
#[derive(Debug)]
pub(crate) struct Stored {
    /// The source line (or record) it came from.
    pub(crate) line: usize,
    pub(crate) id: String,
    pub(crate) parent_id: Option<String>,
    body: Body,
}

#[derive(Debug)]
enum Body {
    /// An entry a later pass may change: its timestamp and kind.
    Open {
        timestamp: String,
        kind: Box<EntryKind>,
    },
    Line(Line),
}

/// An entry no later pass changes, as its JSON line.
#[derive(Debug)]
struct Line {
    /// The line without its `parentId` value, which goes at `parent_at`.
    text: Box<str>,
    parent_at: usize,
    /// An assistant message's tool calls: (id, name).
    calls: Box<[(String, String)]>,
    /// An assistant message.
    assistant: bool,
    /// A message, custom message or compaction: something of the conversation.
    conversation: bool,
}

impl From<Planned> for Stored {
    fn from(planned: Planned) -> Self {
        let Planned { line, entry } = planned;
        let SessionEntry {
            id,
            parent_id,
            timestamp,
            mut kind,
        } = entry;
        // Every importer's replies pass here, each with its final usage (a response's count is
        // put on its last reply before the replies are planned).
        if let EntryKind::Message(message) = &mut kind
            && let AgentMessage::Assistant(reply) = message.as_mut()
        {
            reply.complete_usage();
        }
        let body = if stays_open(&kind) {
            Body::Open {
                timestamp,
                kind: Box::new(kind),
            }
        } else {
            freeze(&id, timestamp, kind)
        };
        Self {
            line,
            id,
            parent_id,
            body,
        }
    }
}

/// Tool results (named after their call, or turned into user messages, once every call is known)
/// and compactions (given their summary and kept entry later).
fn stays_open(kind: &EntryKind) -> bool {
    match kind {
        EntryKind::Message(message) => matches!(message.as_ref(), AgentMessage::ToolResult(_)),
        EntryKind::Compaction(_) => true,
        EntryKind::ThinkingLevelChange(_)
        | EntryKind::ModelChange(_)
        | EntryKind::BranchSummary(_)
        | EntryKind::Custom(_)
        | EntryKind::CustomMessage(_)
        | EntryKind::Label(_)
        | EntryKind::SessionInfo(_)
        | EntryKind::ContextEdit(_)
        | EntryKind::Usage(_)
        | EntryKind::Unknown { .. } => false,
    }
}

/// The entry as its line with the parent's slot open; structured still when the slot cannot be
/// found once (the entry's own data holds the marker) or it does not serialize.
fn freeze(id: &str, timestamp: String, kind: EntryKind) -> Body {
    let calls = tool_calls_of(&kind);
    let conversation = is_conversation(&kind);
    let assistant = is_assistant(&kind);
    let entry = SessionEntry {
        id: id.to_owned(),
        parent_id: Some(PARENT_SLOT.to_owned()),
        timestamp,
        kind,
    };
    let slot = serde_json::to_string(PARENT_SLOT).unwrap_or_default();
    let text = match serde_json::to_string(&entry) {
        Ok(text) if !slot.is_empty() && text.matches(slot.as_str()).count() == 1 => text,
        Ok(_) | Err(_) => {
            return Body::Open {
                timestamp: entry.timestamp,
                kind: Box::new(entry.kind),
            };
        }
    };
    let parent_at = text.find(slot.as_str()).unwrap_or_default();
    let mut line = String::with_capacity(text.len() - slot.len());
    line.push_str(&text[..parent_at]);
    line.push_str(&text[parent_at + slot.len()..]);
    Body::Line(Line {
        text: line.into_boxed_str(),
        parent_at,
        calls: calls.into_boxed_slice(),
        assistant,
        conversation,
    })
}

fn is_assistant(kind: &EntryKind) -> bool {
    matches!(kind, EntryKind::Message(message) if matches!(message.as_ref(), AgentMessage::Assistant(_)))
}

fn tool_calls_of(kind: &EntryKind) -> Vec<(String, String)> {
    let EntryKind::Message(message) = kind else {
        return Vec::new();
    };
    let AgentMessage::Assistant(assistant) = message.as_ref() else {
        return Vec::new();
    };
    assistant
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::ToolCall(call) => Some((call.id.clone(), call.name.clone())),
            ContentBlock::Text(_) | ContentBlock::Thinking(_) | ContentBlock::Image(_) => None,
            ContentBlock::Unknown(_) => None,
        })
        .collect()
}

fn is_conversation(kind: &EntryKind) -> bool {
    match kind {
        EntryKind::Message(_) | EntryKind::CustomMessage(_) | EntryKind::Compaction(_) => true,
        EntryKind::ThinkingLevelChange(_)
        | EntryKind::ModelChange(_)
        | EntryKind::BranchSummary(_)
        | EntryKind::Custom(_)
        | EntryKind::Label(_)
        | EntryKind::SessionInfo(_)
        | EntryKind::ContextEdit(_)
        | EntryKind::Usage(_)
        | EntryKind::Unknown { .. } => false,
    }
}

impl Stored {
    /// The kind of an entry kept structured (tool results, compactions, entries thawed).
    pub(crate) fn kind(&self) -> Option<&EntryKind> {
        match &self.body {
            Body::Open { kind, .. } => Some(kind),
            Body::Line(_) => None,
        }
    }

    /// The kind to change, structured again from its line when it was written as one.
    pub(crate) fn kind_mut(&mut self) -> Option<&mut EntryKind> {
        if let Body::Line(line) = &self.body {
            let entry: SessionEntry = serde_json::from_str(&line.joined(None).ok()?).ok()?;
            self.body = Body::Open {
                timestamp: entry.timestamp,
                kind: Box::new(entry.kind),
            };
        }
        match &mut self.body {
            Body::Open { kind, .. } => Some(kind),
            Body::Line(_) => None,
        }
    }

    /// The kind, structured again from its line when it was written as one.
    pub(crate) fn into_kind(mut self) -> Option<EntryKind> {
        self.kind_mut()?;
        match self.body {
            Body::Open { kind, .. } => Some(*kind),
            Body::Line(_) => None,
        }
    }

    /// An assistant message's tool calls, (id, name), in order.
    pub(crate) fn tool_calls(&self) -> Vec<(String, String)> {
        match &self.body {
            Body::Open { kind, .. } => tool_calls_of(kind),
            Body::Line(line) => line.calls.to_vec(),
        }
    }

    /// An assistant message.
    pub(crate) fn is_assistant(&self) -> bool {
        match &self.body {
            Body::Open { kind, .. } => is_assistant(kind),
            Body::Line(line) => line.assistant,
        }
    }

    /// A message, custom message or compaction.
    pub(crate) fn is_conversation(&self) -> bool {
        match &self.body {
            Body::Open { kind, .. } => is_conversation(kind),
            Body::Line(line) => line.conversation,
        }
    }

    /// The entry's timestamp.
    pub(crate) fn timestamp(&self) -> String {
        match &self.body {
            Body::Open { timestamp, .. } => timestamp.clone(),
            Body::Line(line) => line
                .joined(None)
                .ok()
                .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                .and_then(|value| value.get("timestamp")?.as_str().map(str::to_owned))
                .unwrap_or_default(),
        }
    }

    /// The entry's JSON line (without its newline).
    pub(crate) fn into_line(self) -> Result<String, serde_json::Error> {
        match self.body {
            Body::Open { timestamp, kind } => serde_json::to_string(&SessionEntry {
                id: self.id,
                parent_id: self.parent_id,
                timestamp,
                kind: *kind,
            }),
            Body::Line(line) => line.joined(self.parent_id.as_deref()),
        }
    }
}

impl Line {
    /// The line with `parent` (or `null`) in its slot.
    fn joined(&self, parent: Option<&str>) -> Result<String, serde_json::Error> {
        let value = match parent {
            Some(parent) => serde_json::to_string(parent)?,
            None => "null".to_owned(),
        };
        let mut text = String::with_capacity(self.text.len() + value.len());
        text.push_str(&self.text[..self.parent_at]);
        text.push_str(&value);
        text.push_str(&self.text[self.parent_at..]);
        Ok(text)
    }
}

/// Each entry's parent as a position in `planned` (`None`: a root, or a parent not in it).
pub(crate) fn parent_positions(planned: &[Stored]) -> Vec<Option<usize>> {
    let positions: std::collections::HashMap<&str, usize> = planned
        .iter()
        .enumerate()
        .map(|(position, stored)| (stored.id.as_str(), position))
        .collect();
    planned
        .iter()
        .map(|stored| positions.get(stored.parent_id.as_deref()?).copied())
        .collect()
}

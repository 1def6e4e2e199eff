//! The parallel tool calls of one Codex response as one assistant message. Codex records each call
//! of a response as its own `function_call` line, all of them before any output, and may write a
//! `developer` message (such as "Approved command prefix saved") between a call and its output.
//! Pi, and every provider, expects the calls of a response in one assistant message followed
//! directly by their results: an assistant message per call leaves every call but the last without
//! a result where it stands, so a reader of the file answers them "No result provided".
//!
//! So a run of consecutive calls (nothing of the conversation between them: no reasoning, text,
//! output or user message; bookkeeping records may fall between) becomes one assistant message
//! holding them in order, with the id its first call's line gives it, and the usage of the last; its
//! outputs follow it in file order; injected messages written while a call of the run still waits
//! for its output go after the outputs, in order. Facts and sources: `docs/import-formats.md`.

use ctxkit_protocol::{AgentMessage, ContentBlock, EntryKind};

/// An entry whose parent is not decided yet: the converter hangs it under the chain's tip when
/// this module lets it go.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) line: usize,
    pub(super) id: String,
    pub(super) timestamp: String,
    pub(super) kind: EntryKind,
}

/// The run of calls being read, if any.
#[derive(Debug, Default)]
pub(super) struct Batches {
    open: Option<Batch>,
}

#[derive(Debug)]
struct Batch {
    /// The assistant message holding the run's calls.
    message: Pending,
    /// The calls of the run no output answered yet.
    unanswered: Vec<String>,
    /// Whether an output came: a call after it starts a new run.
    answering: bool,
    /// The outputs and bookkeeping entries after the message, in file order.
    held: Vec<Pending>,
    /// Injected messages written while a call waited for its output.
    deferred: Vec<Pending>,
}

impl Batch {
    fn into_entries(self) -> Vec<Pending> {
        let mut entries = Vec::with_capacity(1 + self.held.len() + self.deferred.len());
        entries.push(self.message);
        entries.extend(self.held);
        entries.extend(self.deferred);
        entries
    }
}

/// What an entry is to a run of calls.
enum Role<'kind> {
    /// An assistant message holding only tool calls: their ids.
    Calls(Vec<String>),
    /// A tool result answering the call with this id.
    Output(&'kind str),
    /// Text Codex injected (a `developer` or `system` message).
    Injected,
    /// An entry of the conversation that ends the run.
    Conversation,
    /// An entry no model is shown.
    Bookkeeping,
}

fn role(kind: &EntryKind) -> Role<'_> {
    match kind {
        EntryKind::Message(message) => match message.as_ref() {
            AgentMessage::Assistant(reply) => {
                let calls: Vec<String> = reply
                    .content
                    .iter()
                    .map(|block| match block {
                        ContentBlock::ToolCall(call) => Some(call.id.clone()),
                        ContentBlock::Text(_)
                        | ContentBlock::Image(_)
                        | ContentBlock::Thinking(_)
                        | ContentBlock::Unknown(_) => None,
                    })
                    .collect::<Option<_>>()
                    .unwrap_or_default();
                if calls.is_empty() {
                    Role::Conversation
                } else {
                    Role::Calls(calls)
                }
            }
            AgentMessage::ToolResult(result) => Role::Output(&result.tool_call_id),
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => Role::Conversation,
        },
        EntryKind::CustomMessage(_) => Role::Injected,
        EntryKind::ThinkingLevelChange(_)
        | EntryKind::ModelChange(_)
        | EntryKind::Compaction(_)
        | EntryKind::BranchSummary(_)
        | EntryKind::ContextEdit(_) => Role::Conversation,
        EntryKind::Custom(_)
        | EntryKind::Label(_)
        | EntryKind::SessionInfo(_)
        | EntryKind::Usage(_)
        | EntryKind::Unknown { .. } => Role::Bookkeeping,
    }
}

impl Batches {
    /// Puts the calls of `kind` into the open run's message when `kind` holds only calls and the
    /// run takes more (no output came yet), with its usage; `true` when it did, and `kind` makes
    /// no entry of its own.
    pub(super) fn absorb(&mut self, kind: &mut EntryKind) -> bool {
        let Some(batch) = self.open.as_mut().filter(|batch| !batch.answering) else {
            return false;
        };
        let Role::Calls(ids) = role(kind) else {
            return false;
        };
        let (EntryKind::Message(message), EntryKind::Message(run)) =
            (kind, &mut batch.message.kind)
        else {
            return false;
        };
        let (AgentMessage::Assistant(reply), AgentMessage::Assistant(run)) =
            (message.as_mut(), run.as_mut())
        else {
            return false;
        };
        run.content.append(&mut reply.content);
        if reply.usage.is_some() {
            run.usage = reply.usage.take();
        }
        batch.unanswered.extend(ids);
        true
    }

    /// Takes the next entry; gives the entries to chain now, in order.
    pub(super) fn place(&mut self, entry: Pending) -> Vec<Pending> {
        match role(&entry.kind) {
            Role::Calls(ids) => {
                let released = self.release();
                self.open = Some(Batch {
                    message: entry,
                    unanswered: ids,
                    answering: false,
                    held: Vec::new(),
                    deferred: Vec::new(),
                });
                released
            }
            Role::Output(call_id) => {
                let Some(batch) = self.open.as_mut() else {
                    return vec![entry];
                };
                let Some(position) = batch.unanswered.iter().position(|id| id == call_id) else {
                    let mut released = self.release();
                    released.push(entry);
                    return released;
                };
                batch.unanswered.remove(position);
                batch.answering = true;
                batch.held.push(entry);
                if batch.unanswered.is_empty() {
                    self.release()
                } else {
                    Vec::new()
                }
            }
            Role::Injected => match self.open.as_mut() {
                Some(batch) => {
                    batch.deferred.push(entry);
                    Vec::new()
                }
                None => vec![entry],
            },
            Role::Bookkeeping => match self.open.as_mut() {
                Some(batch) => {
                    batch.held.push(entry);
                    Vec::new()
                }
                None => vec![entry],
            },
            Role::Conversation => {
                let mut released = self.release();
                released.push(entry);
                released
            }
        }
    }

    /// Lets the open run go (at the end of the rollout, before a rollback): its entries in order.
    pub(super) fn release(&mut self) -> Vec<Pending> {
        self.open
            .take()
            .map(Batch::into_entries)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use ctxkit_protocol::{
        AssistantMessage, CustomEntry, CustomMessageEntry, JsonObject, MessageContent, ToolCall,
        ToolResultMessage,
    };
    use serde_json::Value;

    use super::*;

    fn call(id: &str) -> EntryKind {
        EntryKind::Message(Box::new(AgentMessage::Assistant(AssistantMessage {
            content: vec![ContentBlock::ToolCall(ToolCall {
                id: id.to_owned(),
                name: "shell".to_owned(),
                arguments: Value::Object(JsonObject::new()),
                extra: JsonObject::new(),
            })],
            api: None,
            provider: None,
            model: None,
            usage: None,
            stop_reason: Some("toolUse".to_owned()),
            error_message: None,
            timestamp: None,
            extra: JsonObject::new(),
        })))
    }

    fn output(id: &str) -> EntryKind {
        EntryKind::Message(Box::new(AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: id.to_owned(),
            tool_name: String::new(),
            content: MessageContent::Blocks(Vec::new()),
            details: None,
            is_error: false,
            timestamp: None,
            extra: JsonObject::new(),
        })))
    }

    fn injected() -> EntryKind {
        EntryKind::CustomMessage(CustomMessageEntry {
            custom_type: "import.codex.developer".to_owned(),
            content: MessageContent::Blocks(Vec::new()),
            display: false,
            details: None,
            extra: JsonObject::new(),
        })
    }

    fn bookkeeping() -> EntryKind {
        EntryKind::Custom(CustomEntry {
            custom_type: "import.codex.event_msg".to_owned(),
            data: None,
            extra: JsonObject::new(),
        })
    }

    /// Feeds `kinds` as lines 1, 2, …; gives the ids chained, in order, and the calls each holds.
    fn chain(kinds: Vec<EntryKind>) -> Vec<(String, Vec<String>)> {
        let mut batches = Batches::default();
        let mut chained = Vec::new();
        for (line, mut kind) in kinds.into_iter().enumerate() {
            if batches.absorb(&mut kind) {
                continue;
            }
            let entry = Pending {
                line,
                id: format!("line{line}"),
                timestamp: String::new(),
                kind,
            };
            chained.extend(batches.place(entry));
        }
        chained.extend(batches.release());
        chained
            .into_iter()
            .map(|entry| {
                let calls = match role(&entry.kind) {
                    Role::Calls(ids) => ids,
                    Role::Output(_) | Role::Injected | Role::Conversation | Role::Bookkeeping => {
                        Vec::new()
                    }
                };
                (entry.id, calls)
            })
            .collect()
    }

    #[test]
    fn consecutive_calls_become_one_message_before_their_outputs() {
        let chained = chain(vec![
            call("a"),
            call("b"),
            bookkeeping(),
            call("c"),
            output("a"),
            output("b"),
            output("c"),
            call("d"),
            output("d"),
        ]);
        let ids: Vec<&str> = chained.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "line0", "line2", "line4", "line5", "line6", "line7", "line8"
            ]
        );
        assert_eq!(chained[0].1, ["a", "b", "c"]);
        assert_eq!(chained[5].1, ["d"]);
    }

    #[test]
    fn injected_text_between_a_call_and_its_output_follows_the_outputs() {
        let chained = chain(vec![
            call("a"),
            call("b"),
            output("a"),
            injected(),
            output("b"),
            call("c"),
        ]);
        let ids: Vec<&str> = chained.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["line0", "line2", "line4", "line3", "line5"]);
    }

    #[test]
    fn a_call_left_without_an_output_lets_the_run_go_at_the_next_message() {
        let chained = chain(vec![call("a"), injected(), output("x")]);
        let ids: Vec<&str> = chained.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["line0", "line1", "line2"]);
    }
}

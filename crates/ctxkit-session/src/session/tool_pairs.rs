//! Keeping tool calls and their results together in edited contexts. A provider rejects a tool
//! result whose call is not in an earlier reply; Pi 1.6.0 never repairs that shape when it builds a
//! request, so an edit that takes calls out of a reply must take their results out too.

use std::collections::HashSet;

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent, OpenToolCalls};

use super::Session;
use crate::context::ContextMessage;
use crate::error::Result;

/// A tool result in the context at the leaf whose call no earlier reply in that context holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanedToolResult {
    /// The id of the tool result's entry.
    pub entry_id: String,
    /// The file line of that entry.
    pub line: usize,
    /// The call id the result answers.
    pub tool_call_id: String,
}

/// What [`Session::append_context_edit_with_results`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextEditWritten {
    /// The id of the target's edit.
    pub edit: String,
    /// The ids of the tool results left out with it (each by an edit of its own), in context order.
    pub results_left_out: Vec<String>,
}

impl Session {
    /// Appends a context edit of `target_id` as [`Session::append_context_edit`] does and, when the
    /// target is a reply in the context whose tool calls the edit takes out (all of them for a hide,
    /// those missing from the replacement otherwise), a hide edit of each tool result answering one
    /// of those calls, up to the next reply. This is what Pi 1.6.0 writes when it leaves a reply out
    /// (one hide edit per message, the reply's first), so the file stays continuable in Pi.
    pub fn append_context_edit_with_results(
        &mut self,
        target_id: &str,
        replacement: Option<MessageContent>,
    ) -> Result<ContextEditWritten> {
        let kept_calls: HashSet<String> = replacement
            .as_ref()
            .map(|content| call_ids(&content.blocks()).cloned().collect())
            .unwrap_or_default();
        if replacement.is_some() {
            self.refuse_result_without_call(target_id)?;
        }
        let results = self.results_of_dropped_calls(target_id, &kept_calls)?;
        // All of them or none: an edit of the reply alone leaves its results unpaired.
        let edit = self.append_batch(|session| {
            let edit = session.append_context_edit(target_id, replacement)?;
            for result in &results {
                session.append_context_edit(result, None)?;
            }
            Ok(edit)
        })?;
        Ok(ContextEditWritten {
            edit,
            results_left_out: results,
        })
    }

    /// Refuses to give `target_id` content again when it is a tool result that would answer no
    /// open call where it stands: the messages of the context at the leaf before it (by the
    /// [`OpenToolCalls`] rule the views follow) leave no call of its id open (QA 2026-12-07:
    /// replacing a result an earlier edit of its reply had left out brought it back alone, and Pi
    /// sent it so; a call of the same id in another reply did not make it answer one).
    fn refuse_result_without_call(&self, target_id: &str) -> Result<()> {
        let Some(entry) = self.entry(target_id) else {
            return Ok(());
        };
        if entry.role() != Some("toolResult") {
            return Ok(());
        }
        let Some(Ok(AgentMessage::ToolResult(result))) = entry.parse_message() else {
            return Ok(());
        };
        let path = self.branch_path(None);
        let Some(at) = path.iter().position(|entry| entry.id() == target_id) else {
            return Ok(());
        };
        let before: HashSet<&str> = path[..at].iter().map(|entry| entry.id()).collect();
        let context = self.build_context();
        let mut messages = Vec::new();
        for message in &context.messages {
            let placed_before = self
                .index
                .get(message.entry)
                .is_some_and(|entry| before.contains(entry.id()));
            if placed_before {
                messages.push(self.message_if_paired(message)?);
            }
        }
        let mut open = OpenToolCalls::default();
        for message in &messages {
            match message {
                Some(AgentMessage::Assistant(reply)) => {
                    open.assistant(reply);
                }
                Some(AgentMessage::ToolResult(answer)) => {
                    open.answer(&answer.tool_call_id);
                }
                Some(_) | None => {
                    open.close();
                }
            }
        }
        if open.answer(&result.tool_call_id) {
            return Ok(());
        }
        Err(crate::SessionError::ResultWithoutCall {
            id: target_id.to_owned(),
            call_id: result.tool_call_id,
        })
    }

    /// The entry ids of the tool results (after `target_id` in the context at the leaf, before the
    /// next reply) that answer a call of the reply `target_id` other than `kept_calls`.
    fn results_of_dropped_calls(
        &self,
        target_id: &str,
        kept_calls: &HashSet<String>,
    ) -> Result<Vec<String>> {
        let context = self.build_context();
        let Some(start) = context
            .messages
            .iter()
            .position(|message| self.index.get(message.entry).map(|e| e.id()) == Some(target_id))
        else {
            return Ok(Vec::new());
        };
        let AgentMessage::Assistant(reply) = self.message(&context.messages[start])? else {
            return Ok(Vec::new());
        };
        let dropped: HashSet<&str> = call_ids(&reply.content)
            .filter(|id| !kept_calls.contains(*id))
            .map(|id| id.as_str())
            .collect();
        let mut results = Vec::new();
        for message in &context.messages[start + 1..] {
            match self.role_of(message) {
                Some("assistant") => break,
                Some("toolResult") => {}
                _ => continue,
            }
            if let AgentMessage::ToolResult(result) = self.message(message)?
                && dropped.contains(result.tool_call_id.as_str())
                && let Some(entry) = self.index.get(message.entry)
            {
                results.push(entry.id().to_owned());
            }
        }
        Ok(results)
    }

    /// The tool results in the context at the leaf whose call is in no earlier reply of it (in the
    /// order of the context): the shape 0.87.1's recovery and earlier context edits left. Pi 1.6.0
    /// keeps them in the context and sends them; providers reject such a request.
    pub fn orphaned_tool_results(&self) -> Result<Vec<OrphanedToolResult>> {
        let context = self.build_context();
        let mut calls: HashSet<String> = HashSet::new();
        let mut orphans = Vec::new();
        for message in &context.messages {
            // Only replies and tool results are read whole: a check of a long session stays quick.
            match self.message_if_paired(message)? {
                Some(AgentMessage::Assistant(reply)) => {
                    calls.extend(call_ids(&reply.content).cloned());
                }
                Some(AgentMessage::ToolResult(result)) if !calls.contains(&result.tool_call_id) => {
                    if let Some(entry) = self.index.get(message.entry) {
                        orphans.push(OrphanedToolResult {
                            entry_id: entry.id().to_owned(),
                            line: entry.line(),
                            tool_call_id: result.tool_call_id,
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(orphans)
    }

    /// Whether a tool result answering `tool_call_id`, appended at the leaf, would answer an open
    /// call ([`OpenToolCalls`]): one of the latest message in the context at the leaf that is a
    /// complete reply, with only tool results after it, none of them answering that call. A result
    /// that does not (its call in no reply, in an older one, answered already, or of a failed or
    /// aborted reply, which Pi 1.6.0 leaves out of a request) is one Pi 1.6.0 would send unpaired,
    /// and providers refuse such a request.
    pub fn answers_open_call(&self, tool_call_id: &str) -> Result<bool> {
        let context = self.leaf_context();
        let messages = &context.messages;
        let results_after = messages
            .iter()
            .rev()
            .take_while(|message| self.role_of(message) == Some("toolResult"))
            .count();
        let Some(reply_at) = messages.len().checked_sub(results_after + 1) else {
            return Ok(false);
        };
        let Some(message) = messages
            .get(reply_at)
            .filter(|m| self.role_of(m) == Some("assistant"))
        else {
            return Ok(false);
        };
        let AgentMessage::Assistant(reply) = self.message(message)? else {
            return Ok(false);
        };
        if reply.is_aborted_or_error() {
            return Ok(false);
        }
        let answered = messages[reply_at + 1..]
            .iter()
            .map(|message| self.message(message))
            .collect::<Result<Vec<_>>>()?;
        let mut open = OpenToolCalls::default();
        open.assistant(&reply);
        for result in &answered {
            if let AgentMessage::ToolResult(result) = result {
                open.answer(&result.tool_call_id);
            }
        }
        Ok(open.answer(tool_call_id))
    }

    /// The typed message of a reply or tool result; `None` for other messages (not read).
    fn message_if_paired(&self, message: &ContextMessage) -> Result<Option<AgentMessage>> {
        match self.role_of(message) {
            Some("assistant" | "toolResult") => self.message(message).map(Some),
            _ => Ok(None),
        }
    }

    /// The role of a stored message (from the entry's head; edits never change a role).
    fn role_of(&self, message: &ContextMessage) -> Option<&str> {
        if message.kind != crate::ContextMessageKind::Stored {
            return None;
        }
        self.index.get(message.entry).and_then(|entry| entry.role())
    }
}

fn call_ids(blocks: &[ContentBlock]) -> impl Iterator<Item = &String> {
    blocks
        .iter()
        .filter_map(ContentBlock::as_tool_call)
        .map(|call| &call.id)
}

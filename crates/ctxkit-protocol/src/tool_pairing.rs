//! Which tool results a provider accepts, as one rule: the model's view (`ctxkit-transform`'s
//! orphan repair, what serve's `view.get` hands a client) and the request ctxkit builds itself
//! (`ctxkit-llm`'s converter) both follow it, so a client that sends its view sends what ctxkit
//! sends. A tool result answers a call of the assistant message it follows (only other tool
//! results between them), once: a second result of a call, and a result after a user message or an
//! assistant message without that call, are not sent (OpenAI refuses a `tool` message that answers
//! no open call with a 400).
//!
//! Before that rule is applied, [`paired_order`] puts each result whose call is in an earlier reply
//! of the same turn right after that reply's own results: sessions imported from Codex before
//! 2026-12-06 hold a response's parallel calls as one reply per call, all before their outputs.

use std::collections::{HashMap, HashSet};

use crate::{AgentMessage, AssistantMessage, ContentBlock};

/// The text of the error result that answers a call left without one (the turn was interrupted, or
/// the conversation went on from the reply that made the call), as Pi 1.6.0's request conversion
/// writes it: the model's view and ctxkit's requests both answer such a call with it.
pub const NO_TOOL_RESULT: &str = "No result provided";

/// A call with no result yet: its id and its tool's name.
pub type OpenCall<'a> = (&'a str, &'a str);

/// The calls of the latest assistant message still waiting for their result.
#[derive(Debug, Default)]
pub struct OpenToolCalls<'a> {
    open: Vec<OpenCall<'a>>,
}

impl<'a> OpenToolCalls<'a> {
    /// An assistant message comes: the calls still open close without a result (returned, in
    /// order), and this message's calls open.
    pub fn assistant(&mut self, reply: &'a AssistantMessage) -> Vec<OpenCall<'a>> {
        let closed = self.close();
        self.open.extend(
            reply
                .content
                .iter()
                .filter_map(ContentBlock::as_tool_call)
                .map(|call| (call.id.as_str(), call.name.as_str())),
        );
        closed
    }

    /// Any other message than an assistant message or a tool result comes: the calls still open
    /// close without a result (returned, in order).
    pub fn close(&mut self) -> Vec<OpenCall<'a>> {
        std::mem::take(&mut self.open)
    }

    /// A tool result comes: whether it answers an open call, which is then answered. `false`: the
    /// result is not sent (its call was answered already, or is not open).
    pub fn answer(&mut self, tool_call_id: &str) -> bool {
        let Some(position) = self.open.iter().position(|(id, _)| *id == tool_call_id) else {
            return false;
        };
        self.open.remove(position);
        true
    }

    /// Whether no call is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}

/// The order in which `items` (each read as a message by `message`) pair every tool result with
/// its call, or `None` when they do already. A result whose call is in an earlier assistant message
/// of the same turn, not the one whose results directly precede it, moves to right after that
/// message's own results; nothing else moves, and no message is changed. A turn ends at a user
/// message, a shell run, a summary or an unknown message; a custom message (text an agent injected)
/// stands in the turn, and a result moved past it goes before it.
///
/// The shape it repairs: an assistant message per parallel call, then the calls' results
/// (`assistant(a)`, `assistant(b)`, `result(a)`, `result(b)`), as imports from Codex before
/// 2026-12-06 wrote them; read as it stands, the call `a` closes unanswered at `assistant(b)` and
/// `result(a)` answers nothing. Moved, each reply is followed by its results, which every provider
/// accepts (Anthropic's `tool_result` right after its `tool_use`, Chat Completions' `tool` messages
/// after their `tool_calls`, Responses' outputs after their calls, Gemini's responses after the
/// turn that called). A second result of a call, and a result of no call in the turn, stay where
/// they are ([`OpenToolCalls`] leaves them out). The order depends only on the turn itself, so
/// messages appended later never change it.
pub fn paired_order<T>(items: &[T], message: impl Fn(&T) -> &AgentMessage) -> Option<Vec<usize>> {
    let moved = displaced_results(items, &message);
    if moved.is_empty() {
        return None;
    }
    let mut kept = (0..items.len()).filter(|position| !moved.contains_key(position));
    let mut by_reply: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut results: Vec<(usize, usize)> = moved.iter().map(|(&at, &reply)| (at, reply)).collect();
    results.sort_unstable();
    for (result, reply) in results {
        by_reply.entry(reply).or_default().push(result);
    }
    let mut order = Vec::with_capacity(items.len());
    // The reply whose own results are being placed.
    let mut reply: Option<usize> = None;
    let mut next = kept.next();
    while let Some(position) = next {
        order.push(position);
        match message(&items[position]) {
            AgentMessage::Assistant(_) => reply = Some(position),
            AgentMessage::ToolResult(_) => {}
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => reply = None,
        }
        next = kept.next();
        let results_end = next.is_none_or(|following| {
            !matches!(message(&items[following]), AgentMessage::ToolResult(_))
        });
        if results_end && let Some(results) = reply.and_then(|at| by_reply.remove(&at)) {
            order.extend(results);
        }
    }
    Some(order)
}

/// The results [`paired_order`] moves: each result's position and the position of the reply whose
/// call it answers.
fn displaced_results<T>(
    items: &[T],
    message: impl Fn(&T) -> &AgentMessage,
) -> HashMap<usize, usize> {
    let mut moved = HashMap::new();
    // The turn's calls (the position of the latest reply making each) and those answered.
    let mut calls: HashMap<&str, usize> = HashMap::new();
    let mut answered: HashSet<&str> = HashSet::new();
    // The reply whose results directly follow (only tool results since it).
    let mut reply: Option<usize> = None;
    for (position, item) in items.iter().enumerate() {
        match message(item) {
            AgentMessage::Assistant(assistant) => {
                for call in assistant
                    .content
                    .iter()
                    .filter_map(ContentBlock::as_tool_call)
                {
                    calls.insert(call.id.as_str(), position);
                    answered.remove(call.id.as_str());
                }
                reply = Some(position);
            }
            AgentMessage::ToolResult(result) => {
                let id = result.tool_call_id.as_str();
                let Some(&caller) = calls.get(id) else {
                    continue;
                };
                if !answered.insert(id) {
                    continue;
                }
                if reply != Some(caller) {
                    moved.insert(position, caller);
                }
            }
            AgentMessage::Custom(_) => reply = None,
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {
                calls.clear();
                answered.clear();
                reply = None;
            }
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calling(ids: &[&str]) -> AssistantMessage {
        let content: Vec<serde_json::Value> = ids
            .iter()
            .map(|id| serde_json::json!({"type": "toolCall", "id": id, "name": "read", "arguments": {}}))
            .collect();
        serde_json::from_value(serde_json::json!({"role": "assistant", "content": content}))
            .unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn a_call_is_answered_once_and_only_while_open() {
        let first = calling(&["a", "b"]);
        let plain = calling(&[]);
        let mut open = OpenToolCalls::default();
        assert!(open.assistant(&first).is_empty());
        assert!(open.answer("b"));
        assert!(!open.answer("b"), "a second result of `b`");
        assert_eq!(open.assistant(&plain), vec![("a", "read")]);
        assert!(!open.answer("a"), "a result after a plain reply");
        assert!(open.is_empty());
    }

    /// Messages by role letter: `a:x,y` a reply calling `x` and `y`, `r:x` the result of `x`, `u` a
    /// user message, `c` a custom message.
    fn messages(shape: &[&str]) -> Vec<AgentMessage> {
        shape
            .iter()
            .map(|item| {
                let (role, ids) = item.split_once(':').unwrap_or((item, ""));
                let value = match role {
                    "a" => {
                        let ids: Vec<&str> = ids.split(',').filter(|id| !id.is_empty()).collect();
                        serde_json::to_value(calling(&ids))
                            .unwrap_or_else(|error| panic!("{error}"))
                    }
                    "r" => serde_json::json!({"role": "toolResult", "toolCallId": ids,
                        "toolName": "read", "content": [], "isError": false}),
                    "c" => {
                        serde_json::json!({"role": "custom", "customType": "import.codex.developer",
                        "content": "approved", "display": false})
                    }
                    _ => serde_json::json!({"role": "user", "content": "next"}),
                };
                serde_json::from_value(value).unwrap_or_else(|error| panic!("{error}"))
            })
            .collect()
    }

    fn order(shape: &[&str]) -> Option<Vec<usize>> {
        paired_order(&messages(shape), |message| message)
    }

    /// The shape imports from Codex wrote before 2026-12-06: a reply per parallel call, then the
    /// outputs. Each output goes right after the reply making its call.
    #[test]
    fn results_of_an_earlier_reply_of_the_turn_go_after_it() {
        let shape = ["u", "a:a", "a:b", "a:c", "r:a", "r:b", "r:c", "u"];
        assert_eq!(order(&shape), Some(vec![0, 1, 4, 2, 5, 3, 6, 7]));
        // Outputs in another order, and a reply with a result of its own already after it.
        let shape = ["a:a,x", "r:x", "a:b", "r:b", "r:a"];
        assert_eq!(order(&shape), Some(vec![0, 1, 4, 2, 3]));
        // A developer message Codex wrote between a call and its output: the output goes first.
        let shape = ["a:a", "c", "r:a", "u"];
        assert_eq!(order(&shape), Some(vec![0, 2, 1, 3]));
    }

    #[test]
    fn paired_and_unpairable_results_stay_where_they_are() {
        // Already paired.
        assert_eq!(order(&["u", "a:a,b", "r:b", "r:a", "a:c", "r:c"]), None);
        // Across a user message a result answers nothing; a second result is left to be dropped;
        // a result of no call is left too.
        assert_eq!(order(&["a:a", "u", "r:a"]), None);
        assert_eq!(order(&["a:a", "r:a", "a:b", "r:a"]), None);
        assert_eq!(order(&["a:a", "a:b", "r:ghost", "r:b"]), None);
        // Moved, the view is one the pairing rule answers whole.
        let shape = ["a:a", "a:b", "r:a", "r:ghost", "r:b", "r:a"];
        let all = messages(&shape);
        let order = paired_order(&all, |message| message).unwrap_or_default();
        assert_eq!(order, [0, 2, 1, 3, 4, 5]);
        let mut open = OpenToolCalls::default();
        let mut unanswered = Vec::new();
        let mut sent = 0;
        for message in order.iter().map(|&at| &all[at]) {
            match message {
                AgentMessage::Assistant(reply) => unanswered.extend(open.assistant(reply)),
                AgentMessage::ToolResult(result) => {
                    sent += usize::from(open.answer(&result.tool_call_id))
                }
                AgentMessage::User(_)
                | AgentMessage::BashExecution(_)
                | AgentMessage::Custom(_)
                | AgentMessage::BranchSummary(_)
                | AgentMessage::CompactionSummary(_)
                | AgentMessage::Unknown(_) => unanswered.extend(open.close()),
            }
        }
        assert_eq!((sent, unanswered.len(), open.is_empty()), (2, 0, true));
    }
}

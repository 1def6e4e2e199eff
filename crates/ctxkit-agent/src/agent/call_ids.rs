//! Tool call ids made unique within a session. Some OpenAI-compatible servers number a reply's
//! calls from `call_0` in every reply, so one id named many results: the marker of each pruned
//! result pointed at `ctxkit://tool-result/call_0`, and `recall` returned the latest of them, never
//! the one the marker cut (a chat sweep's finding). A reply over Chat Completions whose call reuses
//! an id of the session gets `<id>-2` (or the next free number) before it is stored; the stored
//! reply and its results then agree, and the server, which keeps no state between requests, is
//! sent the new ids with the history. Other APIs keep their ids: the Responses API's server-side
//! threads know their calls by the ids they gave.

use std::collections::HashSet;

use ctxkit_engine::Engine;
use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock};

/// The API whose replies get unique ids.
const CHAT_COMPLETIONS: &str = "openai-completions";

/// The tool call ids of the session open, read once when first needed.
#[derive(Debug, Default)]
pub(super) struct CallIds {
    seen: Option<HashSet<String>>,
}

impl CallIds {
    /// Forgets the ids: another session is open.
    pub(super) fn reset(&mut self) {
        self.seen = None;
    }

    /// Gives each tool call of `reply` an id no earlier call of the session has (Chat Completions
    /// replies only), and remembers the ids.
    pub(super) async fn make_unique(&mut self, engine: &Engine, reply: &mut AssistantMessage) {
        if reply.api.as_deref() != Some(CHAT_COMPLETIONS) {
            return;
        }
        if !reply
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolCall(_)))
        {
            return;
        }
        let seen = match &mut self.seen {
            Some(seen) => seen,
            None => self
                .seen
                .insert(engine.with_session(session_call_ids).await),
        };
        for block in &mut reply.content {
            if let ContentBlock::ToolCall(call) = block {
                if seen.contains(&call.id) {
                    call.id = unused(&call.id, seen);
                }
                seen.insert(call.id.clone());
            }
        }
    }
}

/// `id-2`, `id-3`, … the first that `seen` does not hold.
fn unused(id: &str, seen: &HashSet<String>) -> String {
    (2..)
        .map(|number| format!("{id}-{number}"))
        .find(|candidate| !seen.contains(candidate))
        .unwrap_or_else(|| id.to_owned())
}

/// Every tool call id of the session's replies (every branch).
fn session_call_ids(session: &ctxkit_session::Session) -> HashSet<String> {
    let mut ids = HashSet::new();
    for entry in session.entries() {
        if entry.role() != Some("assistant") {
            continue;
        }
        let Some(Ok(AgentMessage::Assistant(reply))) = entry.parse_message() else {
            continue;
        };
        for block in reply.content {
            if let ContentBlock::ToolCall(call) = block {
                ids.insert(call.id);
            }
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_id_gets_the_first_free_number() {
        let seen: HashSet<String> = ["call_0", "call_0-2"].map(str::to_owned).into();
        assert_eq!(unused("call_0", &seen), "call_0-3");
        assert_eq!(unused("call_1", &seen), "call_1-2");
    }
}

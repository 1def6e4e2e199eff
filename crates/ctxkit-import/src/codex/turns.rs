//! Codex's undo (`thread_rolled_back`): the user can roll a thread back by whole turns, and Codex
//! drops those turns from the history it sends its model while the rollout keeps every line. The
//! import keeps the undone turns as a side branch: what follows a rollback hangs under the entry
//! before the first undone turn, so the leaf's context is what Codex continued from.
//!
//! A turn starts at a user message that is not context Codex injected (environment, instructions,
//! skills, a shell command the user ran, an aborted-turn notice, hook output), or at a message from
//! another agent (see `docs/import-formats.md`).

use ctxkit_protocol::{AgentMessage, EntryKind, JsonObject, value_as_u64};

use super::legacy::{Line, classify};
use crate::source::str_field;

/// Prefixes of the user messages Codex writes itself; such a message starts no turn.
const INJECTED_PREFIXES: &[&str] = &[
    "<environment_context>",
    "<user_instructions>",
    "# agents.md instructions",
    "<skill>",
    "<skills_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<hook_prompt",
];

/// Where each turn still in the history started: the parent its first entry had.
#[derive(Debug, Default)]
pub(super) struct Turns {
    starts: Vec<Option<String>>,
}

impl Turns {
    /// Notes the entry `kind` about to hang under `parent`: a turn's start is remembered; a
    /// compaction forgets the turns before it (Codex rolls back within the history it kept).
    pub(super) fn observe(&mut self, kind: &EntryKind, parent: Option<&String>) {
        if kind.as_compaction().is_some() {
            self.starts.clear();
        } else if starts_a_turn(kind) {
            self.starts.push(parent.cloned());
        }
    }

    /// Rolls back the last `count` turns (all there are when fewer): the entry the next one hangs
    /// under, or `None` when there is nothing to roll back.
    pub(super) fn roll_back(&mut self, count: usize) -> Option<Option<String>> {
        if count == 0 || self.starts.is_empty() {
            return None;
        }
        let kept = self.starts.len().saturating_sub(count);
        let parent = self.starts.get(kept).cloned();
        self.starts.truncate(kept);
        parent
    }
}

/// The number of turns a `thread_rolled_back` event undoes.
pub(super) fn rolled_back_turns(record: &JsonObject) -> Option<usize> {
    let Line::Event(payload) = classify(record) else {
        return None;
    };
    if str_field(payload, "type") != Some("thread_rolled_back") {
        return None;
    }
    let turns = payload.get("num_turns").and_then(value_as_u64)?;
    Some(usize::try_from(turns).unwrap_or(usize::MAX))
}

/// Whether an entry starts a turn: a user message that is not injected context.
fn starts_a_turn(kind: &EntryKind) -> bool {
    let EntryKind::Message(message) = kind else {
        return false;
    };
    let AgentMessage::User(user) = message.as_ref() else {
        return false;
    };
    !user.content.blocks().iter().any(|block| {
        block.as_text().is_some_and(|text| {
            let text = text.trim_start();
            INJECTED_PREFIXES.iter().any(|prefix| {
                text.get(..prefix.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
            })
        })
    })
}

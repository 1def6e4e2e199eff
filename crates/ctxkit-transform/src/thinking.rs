//! Layer (b): old reasoning is dropped. Thinking blocks are removed from every assistant message
//! before `limit` that answers an earlier user message; the replies of the turn in progress (every
//! message after the last user message) keep theirs, whatever the provider. That one rule covers
//! each provider's: Anthropic requires the signed thinking of the current tool-use turn to be
//! replayed, and DeepSeek (thinking mode), Kimi and MiMo refuse a request whose tool-call replies
//! since the last user message come without their `reasoning_content`. Older thinking is not
//! needed (a provider that wants the field on every reply gets it empty: `ctxkit-llm`).
//!
//! An assistant keeps everything else (text, tool calls, unknown blocks). One left with no content at
//! all (it held only thinking) is dropped: it has no tool calls, so no tool result can be orphaned by
//! that, and an empty assistant message (or an empty text block) is rejected by providers.

use ctxkit_protocol::{AgentMessage, ContentBlock};

use crate::view::{Slot, assistant_with_content, block_chars};

/// What the thinking layer did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ThinkingOutcome {
    pub blocks_dropped: usize,
    pub assistants_dropped: usize,
}

fn is_thinking(block: &ContentBlock) -> bool {
    block.as_thinking().is_some()
}

fn thinking_blocks(message: &AgentMessage) -> usize {
    message.as_assistant().map_or(0, |assistant| {
        assistant
            .content
            .iter()
            .filter(|block| is_thinking(block))
            .count()
    })
}

/// Where the turn in progress starts: the position after the last user message (0 when there is
/// none: the whole view is one turn). Its replies keep their thinking.
pub(crate) fn turn_in_progress_start(slots: &[Slot<'_>]) -> usize {
    slots
        .iter()
        .rposition(|slot| matches!(slot.message.as_ref(), AgentMessage::User(_)))
        .map_or(0, |position| position + 1)
}

/// Removes thinking from the assistants at positions before `limit` that answer an earlier user
/// message, sparing the turn in progress ([`turn_in_progress_start`]).
pub(crate) fn drop_old_thinking(slots: &mut Vec<Slot<'_>>, limit: usize) -> ThinkingOutcome {
    let mut outcome = ThinkingOutcome::default();
    let limit = limit.min(turn_in_progress_start(slots));
    let mut emptied = Vec::new();
    for (position, slot) in slots.iter_mut().enumerate().take(limit) {
        let AgentMessage::Assistant(assistant) = slot.message.as_ref() else {
            continue;
        };
        let dropped = thinking_blocks(&slot.message);
        if dropped == 0 {
            continue;
        }
        outcome.blocks_dropped += dropped;
        let content: Vec<ContentBlock> = assistant
            .content
            .iter()
            .filter(|block| !is_thinking(block))
            .cloned()
            .collect();
        if content.is_empty() {
            emptied.push(position);
        } else {
            let removed_chars = assistant
                .content
                .iter()
                .filter(|block| is_thinking(block))
                .map(block_chars)
                .sum();
            let changed = assistant_with_content(assistant, content);
            slot.replace_assistant(changed, removed_chars);
        }
    }
    outcome.assistants_dropped = emptied.len();
    if !emptied.is_empty() {
        let mut position = 0;
        slots.retain(|_| {
            let kept = emptied.binary_search(&position).is_err();
            position += 1;
            kept
        });
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    fn drop(messages: &[AgentMessage], limit: usize) -> (Vec<AgentMessage>, ThinkingOutcome) {
        let mut view = slots(messages);
        let outcome = drop_old_thinking(&mut view, limit);
        (unslot(view), outcome)
    }

    #[test]
    fn the_turn_in_progress_keeps_every_replys_thinking() {
        // A tool loop of six calls since the last user message: no reply loses its reasoning
        // (DeepSeek refuses a tool-call reply without it; Anthropic the current turn's).
        let mut messages = vec![user("task")];
        for call_number in 1..=6 {
            let id = format!("c{call_number}");
            messages.push(assistant(vec![
                thinking(&format!("step {call_number}")),
                call(&id),
            ]));
            messages.push(tool_result(&id, "result"));
        }
        let (view, outcome) = drop(&messages, messages.len());
        assert_eq!(view, messages);
        assert_eq!(outcome, ThinkingOutcome::default());
    }

    #[test]
    fn earlier_turns_lose_their_thinking() {
        let messages = vec![
            user("first task"),
            assistant(vec![thinking("first"), text("a"), call("c1")]),
            tool_result("c1", "r1"),
            assistant(vec![thinking("second"), thinking("more"), call("c2")]),
            tool_result("c2", "r2"),
            assistant(vec![thinking("latest"), text("b"), call("c3")]),
            tool_result("c3", "r3"),
            assistant(vec![text("done")]),
            user("second task"),
            assistant(vec![thinking("now"), call("c4")]),
            tool_result("c4", "r4"),
        ];
        let (view, outcome) = drop(&messages, messages.len());
        assert_eq!(
            view,
            vec![
                user("first task"),
                assistant(vec![text("a"), call("c1")]),
                tool_result("c1", "r1"),
                assistant(vec![call("c2")]),
                tool_result("c2", "r2"),
                assistant(vec![text("b"), call("c3")]),
                tool_result("c3", "r3"),
                assistant(vec![text("done")]),
                user("second task"),
                assistant(vec![thinking("now"), call("c4")]),
                tool_result("c4", "r4"),
            ]
        );
        assert_eq!(
            outcome,
            ThinkingOutcome {
                blocks_dropped: 4,
                assistants_dropped: 0
            }
        );
    }

    #[test]
    fn assistants_left_empty_are_dropped() {
        let messages = vec![
            user("task"),
            assistant(vec![thinking("aborted halfway")]),
            user("again"),
            assistant(vec![thinking("latest"), text("ok")]),
        ];
        let (view, outcome) = drop(&messages, messages.len());
        assert_eq!(
            view,
            vec![
                user("task"),
                user("again"),
                assistant(vec![thinking("latest"), text("ok")]),
            ]
        );
        assert_eq!(outcome.assistants_dropped, 1);
        assert_eq!(outcome.blocks_dropped, 1);
        // A reply of the turn in progress survives even when it holds only thinking.
        let messages = vec![user("task"), assistant(vec![thinking("only")])];
        assert_eq!(drop(&messages, 2).0, messages);
    }

    #[test]
    fn limit_spares_later_assistants() {
        let messages = vec![
            user("task"),
            assistant(vec![thinking("one"), call("c1")]),
            tool_result("c1", "r1"),
            assistant(vec![thinking("two"), text("done")]),
            user("next"),
            assistant(vec![thinking("three"), call("c3")]),
        ];
        let (view, outcome) = drop(&messages, 3);
        assert_eq!(outcome.blocks_dropped, 1);
        assert_eq!(view[1], assistant(vec![call("c1")]));
        assert_eq!(view[2..], messages[2..]);
        assert_eq!(drop(&messages, 0).0, messages);
        // Past the turn in progress's start, the limit changes nothing.
        assert_eq!(drop(&messages, messages.len()).1.blocks_dropped, 2);
    }
}

//! Layer (b): old reasoning is dropped. Thinking blocks are removed from every assistant message
//! before `limit` except the most recent assistant that has thinking (providers such as Anthropic
//! require the current turn's signed thinking to be replayed; older thinking is not needed).
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

/// Removes thinking from the assistants at positions before `limit`, sparing the latest assistant
/// that has thinking.
pub(crate) fn drop_old_thinking(slots: &mut Vec<Slot<'_>>, limit: usize) -> ThinkingOutcome {
    let mut outcome = ThinkingOutcome::default();
    let latest = slots
        .iter()
        .rposition(|slot| thinking_blocks(&slot.message) > 0);
    let mut emptied = Vec::new();
    for (position, slot) in slots.iter_mut().enumerate().take(limit) {
        if Some(position) == latest {
            continue;
        }
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
    fn keeps_thinking_only_on_the_latest_thinking_assistant() {
        let messages = vec![
            user("task"),
            assistant(vec![thinking("first"), text("a"), call("c1")]),
            tool_result("c1", "r1"),
            assistant(vec![thinking("second"), thinking("more"), call("c2")]),
            tool_result("c2", "r2"),
            assistant(vec![thinking("latest"), text("b"), call("c3")]),
            tool_result("c3", "r3"),
            assistant(vec![text("no thinking here")]),
        ];
        let (view, outcome) = drop(&messages, messages.len());
        assert_eq!(
            view,
            vec![
                user("task"),
                assistant(vec![text("a"), call("c1")]),
                tool_result("c1", "r1"),
                assistant(vec![call("c2")]),
                tool_result("c2", "r2"),
                assistant(vec![thinking("latest"), text("b"), call("c3")]),
                tool_result("c3", "r3"),
                assistant(vec![text("no thinking here")]),
            ]
        );
        assert_eq!(
            outcome,
            ThinkingOutcome {
                blocks_dropped: 3,
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
        // The latest thinking assistant survives even when it holds only thinking.
        let messages = vec![user("task"), assistant(vec![thinking("only")])];
        assert_eq!(drop(&messages, 2).0, messages);
    }

    #[test]
    fn limit_spares_later_assistants() {
        let messages = vec![
            user("task"),
            assistant(vec![thinking("one"), call("c1")]),
            tool_result("c1", "r1"),
            assistant(vec![thinking("two"), call("c2")]),
            tool_result("c2", "r2"),
            assistant(vec![thinking("three"), call("c3")]),
        ];
        let (view, outcome) = drop(&messages, 3);
        assert_eq!(outcome.blocks_dropped, 1);
        assert_eq!(view[1], assistant(vec![call("c1")]));
        assert_eq!(view[3..], messages[3..]);
        assert_eq!(drop(&messages, 0).0, messages);
    }
}

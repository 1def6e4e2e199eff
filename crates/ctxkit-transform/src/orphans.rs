//! Orphan repair: providers reject a tool result without its call and a tool call without its result,
//! so after every layer the view is made consistent again.
//!
//! Rules, in order:
//! 1. A tool result is kept only if it answers a call still open (`ctxkit_protocol::OpenToolCalls`,
//!    the rule ctxkit's own requests follow): a call of the assistant message it follows, with only
//!    tool results between them, not answered yet. A second result of a call (a client's retry
//!    appended it again), and a result after a user message or a plain reply, are dropped.
//! 2. A tool call is kept only if a kept tool result with its id is in the view; otherwise the block
//!    is removed, and the assistant message is dropped if that leaves it with no content (an
//!    assistant that was empty to begin with is left alone).
//! 3. Pending calls: the calls of the last assistant message are never removed when every message
//!    after it is a tool result (or there is none) — the turn is still running and its results are
//!    not produced yet.

use ctxkit_protocol::{AgentMessage, ContentBlock, OpenToolCalls};

use crate::view::{IdSet, Slot, assistant_with_content, block_chars};

/// What to do with one message.
#[derive(Debug)]
enum Repair {
    /// Drop the whole message (an orphan tool result).
    Drop,
    /// Remove these content blocks (orphan tool calls), by position; drop the message if none remain.
    Strip(Vec<usize>),
}

/// The repairs of a view, by message position, in order.
#[derive(Debug, Default)]
struct RepairPlan {
    repairs: Vec<(usize, Repair)>,
    orphans: usize,
}

/// The position of the assistant whose calls are pending: the last assistant, when only tool
/// results follow it.
fn pending_assistant<T>(items: &[T], message: impl Fn(&T) -> &AgentMessage) -> Option<usize> {
    let position = items
        .iter()
        .rposition(|item| !matches!(message(item), AgentMessage::ToolResult(_)))?;
    matches!(message(&items[position]), AgentMessage::Assistant(_)).then_some(position)
}

/// The common shape, checked without hashing: every assistant's calls are answered by the tool
/// results directly after it (any order), and only the final assistant may have calls still open
/// (pending). `true` means the full plan would find nothing; `false` only means "look closer".
fn is_well_formed<T>(items: &[T], message: impl Fn(&T) -> &AgentMessage) -> bool {
    let mut open: Vec<&str> = Vec::new();
    for item in items {
        match message(item) {
            AgentMessage::Assistant(assistant) => {
                if !open.is_empty() {
                    return false;
                }
                open.extend(
                    assistant
                        .content
                        .iter()
                        .filter_map(|block| Some(block.as_tool_call()?.id.as_str())),
                );
            }
            AgentMessage::ToolResult(result) => {
                let Some(index) = open.iter().position(|id| *id == result.tool_call_id) else {
                    return false;
                };
                open.swap_remove(index);
            }
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {
                if !open.is_empty() {
                    return false;
                }
            }
        }
    }
    true
}

fn plan<T>(items: &[T], message: impl Fn(&T) -> &AgentMessage) -> RepairPlan {
    if is_well_formed(items, &message) {
        return RepairPlan::default();
    }
    let mut calls_seen = IdSet::default();
    let mut open = OpenToolCalls::default();
    let mut answered = IdSet::default();
    let mut plan = RepairPlan::default();
    for (position, item) in items.iter().enumerate() {
        match message(item) {
            AgentMessage::Assistant(assistant) => {
                calls_seen.extend(
                    assistant
                        .content
                        .iter()
                        .filter_map(|block| Some(block.as_tool_call()?.id.as_str())),
                );
                open.assistant(assistant);
            }
            AgentMessage::ToolResult(result) => {
                if open.answer(&result.tool_call_id) {
                    answered.insert(result.tool_call_id.as_str());
                } else {
                    plan.repairs.push((position, Repair::Drop));
                    plan.orphans += 1;
                }
            }
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {
                open.close();
            }
        }
    }
    if calls_seen.len() == answered.len() {
        // Every distinct call id has a result (answered ⊆ calls_seen): no call is an orphan.
        return plan;
    }
    let pending = pending_assistant(items, &message);
    let mut strips = Vec::new();
    for (position, item) in items.iter().enumerate() {
        let AgentMessage::Assistant(assistant) = message(item) else {
            continue;
        };
        if Some(position) == pending {
            continue;
        }
        let orphan_blocks: Vec<usize> = assistant
            .content
            .iter()
            .enumerate()
            .filter_map(|(index, block)| {
                let call = block.as_tool_call()?;
                (!answered.contains(call.id.as_str())).then_some(index)
            })
            .collect();
        if !orphan_blocks.is_empty() {
            plan.orphans += orphan_blocks.len();
            strips.push((position, Repair::Strip(orphan_blocks)));
        }
    }
    plan.repairs.extend(strips);
    plan.repairs.sort_by_key(|(position, _)| *position);
    plan
}

/// Content without the blocks at `removed` (ascending positions).
fn without_blocks(content: &[ContentBlock], removed: &[usize]) -> Vec<ContentBlock> {
    content
        .iter()
        .enumerate()
        .filter(|(index, _)| removed.binary_search(index).is_err())
        .map(|(_, block)| block.clone())
        .collect()
}

/// Repairs the working view; returns the number of orphans (results dropped plus calls removed).
pub(crate) fn repair_slots(slots: &mut Vec<Slot<'_>>) -> usize {
    let plan = plan(slots, |slot| &slot.message);
    if plan.repairs.is_empty() {
        return 0;
    }
    let mut keep = vec![true; slots.len()];
    for (position, repair) in plan.repairs {
        match repair {
            Repair::Drop => keep[position] = false,
            Repair::Strip(removed) => {
                let slot = &mut slots[position];
                let AgentMessage::Assistant(assistant) = slot.message.as_ref() else {
                    continue;
                };
                let content = without_blocks(&assistant.content, &removed);
                if content.is_empty() {
                    keep[position] = false;
                } else {
                    let removed_chars = removed
                        .iter()
                        .filter_map(|&index| assistant.content.get(index))
                        .map(block_chars)
                        .sum();
                    let changed = assistant_with_content(assistant, content);
                    slot.replace_assistant(changed, removed_chars);
                }
            }
        }
    }
    let mut flags = keep.into_iter();
    slots.retain(|_| flags.next().unwrap_or(true));
    plan.orphans
}

/// Makes the tool calls and tool results of `messages` consistent, as providers require: a tool
/// result that answers no open call (rule 1 above: its call's assistant message right before it,
/// that call not answered yet) is dropped; a tool call with
/// no result in the list is removed from its assistant message, which is dropped if that leaves it
/// empty. The calls of the last assistant message are pending, and kept, when only tool results (or
/// nothing) follow it. Returns the repaired list and the number of orphans (results dropped plus
/// calls removed).
pub fn repair_orphans(mut messages: Vec<AgentMessage>) -> (Vec<AgentMessage>, usize) {
    let plan = plan(&messages, |message| message);
    if plan.repairs.is_empty() {
        return (messages, 0);
    }
    let mut keep = vec![true; messages.len()];
    for (position, repair) in plan.repairs {
        match repair {
            Repair::Drop => keep[position] = false,
            Repair::Strip(removed) => {
                if let AgentMessage::Assistant(assistant) = &mut messages[position] {
                    let mut index = 0;
                    assistant.content.retain(|_| {
                        let kept = removed.binary_search(&index).is_err();
                        index += 1;
                        kept
                    });
                    if assistant.content.is_empty() {
                        keep[position] = false;
                    }
                }
            }
        }
    }
    let mut flags = keep.into_iter();
    messages.retain(|_| flags.next().unwrap_or(true));
    (messages, plan.orphans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// Repairs through both entry points and checks they agree.
    fn repair(messages: Vec<AgentMessage>) -> (Vec<AgentMessage>, usize) {
        let mut view = slots(&messages);
        let orphans = repair_slots(&mut view);
        let through_slots = unslot(view);
        let (repaired, public_orphans) = repair_orphans(messages.clone());
        assert_eq!(repaired, through_slots);
        assert_eq!(orphans, public_orphans);
        (repaired, orphans)
    }

    #[test]
    fn consistent_views_are_unchanged() {
        let messages = vec![
            user("task"),
            assistant(vec![text("looking"), call("a"), call("b")]),
            tool_result("a", "A"),
            tool_result("b", "B"),
            assistant(vec![text("done")]),
            assistant(vec![]),
        ];
        assert_eq!(repair(messages.clone()), (messages, 0));
    }

    #[test]
    fn results_without_a_call_are_dropped() {
        let messages = vec![
            user("task"),
            tool_result("ghost", "no call"),
            assistant(vec![call("a")]),
            tool_result("a", "A"),
            tool_result("b", "result before its call"),
            assistant(vec![call("b")]),
            tool_result("b", "B"),
            user("next"),
        ];
        let (repaired, orphans) = repair(messages.clone());
        assert_eq!(orphans, 2);
        let expected: Vec<_> = [0, 2, 3, 5, 6, 7]
            .iter()
            .map(|&i| messages[i].clone())
            .collect();
        assert_eq!(repaired, expected);
    }

    /// What a client's retry leaves: the same result appended twice, and once more after a plain
    /// reply. Each call is answered once, right after its assistant message, as ctxkit's own
    /// requests send it (OpenAI refuses the others with a 400).
    #[test]
    fn repeated_and_misplaced_results_are_dropped() {
        let messages = vec![
            user("task"),
            assistant(vec![call("a")]),
            tool_result("a", "A"),
            tool_result("a", "A again"),
            assistant(vec![text("done")]),
            tool_result("a", "A once more"),
        ];
        let (repaired, orphans) = repair(messages.clone());
        assert_eq!(orphans, 2);
        assert_eq!(
            repaired,
            messages[..3]
                .iter()
                .chain(&messages[4..5])
                .cloned()
                .collect::<Vec<_>>()
        );
        // A result after a user message answers nothing: its call is left unanswered and removed.
        let messages = vec![
            user("task"),
            assistant(vec![text("t"), call("a")]),
            user("interrupt"),
            tool_result("a", "late"),
        ];
        let (repaired, orphans) = repair(messages);
        assert_eq!(orphans, 2);
        assert_eq!(
            repaired,
            vec![user("task"), assistant(vec![text("t")]), user("interrupt")]
        );
    }

    #[test]
    fn calls_without_a_result_are_removed() {
        let messages = vec![
            user("task"),
            assistant(vec![text("two calls"), call("a"), call("lost")]),
            tool_result("a", "A"),
            assistant(vec![call("gone")]),
            user("next"),
        ];
        let (repaired, orphans) = repair(messages.clone());
        assert_eq!(orphans, 2);
        assert_eq!(
            repaired,
            vec![
                user("task"),
                assistant(vec![text("two calls"), call("a")]),
                tool_result("a", "A"),
                user("next"),
            ]
        );
    }

    #[test]
    fn pending_calls_of_the_final_assistant_are_kept() {
        // The last message is an assistant whose calls have no results yet.
        let messages = vec![user("task"), assistant(vec![call("a"), call("b")])];
        assert_eq!(repair(messages.clone()), (messages, 0));
        // Some results already arrived: the others are still pending.
        let messages = vec![
            user("task"),
            assistant(vec![call("a"), call("b")]),
            tool_result("a", "A"),
        ];
        assert_eq!(repair(messages.clone()), (messages, 0));
        // An earlier assistant's unanswered call is not pending.
        let messages = vec![
            user("task"),
            assistant(vec![text("t"), call("x")]),
            user("interrupt"),
            assistant(vec![call("a")]),
        ];
        let (repaired, orphans) = repair(messages);
        assert_eq!(orphans, 1);
        assert_eq!(
            repaired,
            vec![
                user("task"),
                assistant(vec![text("t")]),
                user("interrupt"),
                assistant(vec![call("a")]),
            ]
        );
        // A final assistant followed by a user message is not pending either.
        let messages = vec![user("task"), assistant(vec![call("a")]), user("next")];
        assert_eq!(repair(messages), (vec![user("task"), user("next")], 1));
    }

    #[test]
    fn the_fast_check_never_hides_an_orphan() {
        let views = [
            vec![
                user("u"),
                assistant(vec![call("a"), call("b")]),
                tool_result("b", "B"),
                tool_result("a", "A"),
            ],
            vec![
                user("u"),
                assistant(vec![call("a")]),
                tool_result("a", "A"),
                tool_result("a", "again"),
            ],
            vec![
                user("u"),
                assistant(vec![call("a")]),
                user("x"),
                tool_result("a", "A"),
            ],
            vec![
                assistant(vec![call("a")]),
                assistant(vec![call("b")]),
                tool_result("b", "B"),
            ],
            vec![
                assistant(vec![call("a")]),
                tool_result("a", "A"),
                assistant(vec![call("b")]),
            ],
        ];
        for view in views {
            let fast = is_well_formed(&view, |message| message);
            let (_, orphans) = repair_orphans(view.clone());
            if fast {
                assert_eq!(orphans, 0, "{view:?}");
            }
        }
        let well_formed = vec![
            user("u"),
            assistant(vec![call("a"), call("b")]),
            tool_result("b", "B"),
            tool_result("a", "A"),
        ];
        assert!(is_well_formed(&well_formed, |message| message));
    }

    #[test]
    fn empty_views_are_fine() {
        assert_eq!(repair(Vec::new()), (Vec::new(), 0));
        assert_eq!(repair(vec![tool_result("a", "A")]), (Vec::new(), 1));
    }
}

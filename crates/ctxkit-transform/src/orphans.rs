//! Orphan repair: providers reject a tool result without its call and a tool call without its result,
//! so after every layer the view is made consistent again, the way Pi 1.6.0's request conversion
//! (pi-ai `transformMessages`) makes it.
//!
//! Rules, in order:
//! 0. A tool result whose call is in an earlier assistant message of the same turn (no user
//!    message between; `ctxkit_protocol::paired_order`) moves to right after that message's own
//!    results: sessions imported from Codex before 2026-12-06 hold a response's parallel calls as
//!    an assistant message per call, then their outputs. Only the order changes, never a message.
//! 1. A tool result is kept only if it answers a call still open (`ctxkit_protocol::OpenToolCalls`,
//!    the rule ctxkit's own requests follow): a call of the assistant message it follows, with only
//!    tool results between them, not answered yet. A second result of a call (a client's retry
//!    appended it again), and a result after a user message or a plain reply, are dropped.
//! 2. A call that closes without a result — another message than a tool result comes before its
//!    result: the session went on from the reply that made it (`/tree`, `ctxkit branch --to`, a
//!    fork), or the turn was killed before its tool ran — stays in its reply, and is answered by a
//!    synthetic error result ([`NO_TOOL_RESULT`], the call's id and tool name, the reply's
//!    timestamp) placed right after the reply's own results. The model is told it called the tool
//!    and got nothing back (a signed reply is sent whole). A failed reply's (error or aborted)
//!    unanswered calls are not answered, since no request sends that reply: they are removed from
//!    it, and a failed reply left with no content is dropped.
//! 3. Pending calls: the calls of the last assistant message stay open, unanswered, when every
//!    message after it is a tool result (or there is none) — the turn is still running and its
//!    results are not produced yet.

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, NO_TOOL_RESULT,
    OpenCall, OpenToolCalls, TextContent, ToolResultMessage, paired_order,
};

use crate::view::{Slot, assistant_with_content, block_chars};

/// What to do at one position of the view.
#[derive(Debug)]
enum Repair {
    /// Drop the whole message (an orphan tool result).
    Drop,
    /// Remove these content blocks (a failed reply's unanswered calls), by position; drop the
    /// message if none remain.
    Strip(Vec<usize>),
    /// Put these synthetic results before the message (they answer the calls of the reply at
    /// `reply` that this message closed).
    Answer {
        reply: usize,
        results: Vec<AgentMessage>,
    },
}

/// The repairs of a view, by message position, in order (at one position, the results answering
/// an earlier reply come first).
#[derive(Debug, Default)]
struct RepairPlan {
    repairs: Vec<(usize, Repair)>,
    orphans: usize,
}

impl RepairPlan {
    /// The calls of `reply` (at `reply_at`) that the message at `closed_at` closed unanswered.
    fn unanswered(
        &mut self,
        reply: &AssistantMessage,
        reply_at: usize,
        closed_at: usize,
        closed: &[OpenCall<'_>],
    ) {
        self.orphans += closed.len();
        if reply.is_aborted_or_error() {
            self.repairs
                .push((reply_at, Repair::Strip(call_positions(reply, closed))));
            return;
        }
        let results = closed
            .iter()
            .map(|(id, name)| error_answer(id, name, reply.timestamp))
            .collect();
        self.repairs.push((
            closed_at,
            Repair::Answer {
                reply: reply_at,
                results,
            },
        ));
    }
}

/// The content positions of `closed`, calls of `reply` in the order it makes them.
fn call_positions(reply: &AssistantMessage, closed: &[OpenCall<'_>]) -> Vec<usize> {
    let mut remaining = closed.iter().peekable();
    let mut positions = Vec::new();
    for (index, block) in reply.content.iter().enumerate() {
        let Some(call) = block.as_tool_call() else {
            continue;
        };
        if remaining.next_if(|(id, _)| *id == call.id).is_some() {
            positions.push(index);
        }
    }
    positions
}

/// The synthetic error result that answers a call closed without one: Pi 1.6.0's (its text, the
/// call's id and tool name), stamped with the reply's time so every view of it is the same.
fn error_answer(tool_call_id: &str, tool_name: &str, timestamp: Option<i64>) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: tool_call_id.to_owned(),
        tool_name: tool_name.to_owned(),
        content: MessageContent::Blocks(vec![ContentBlock::Text(TextContent {
            text: NO_TOOL_RESULT.to_owned(),
            extra: JsonObject::new(),
        })]),
        details: None,
        is_error: true,
        timestamp,
        extra: JsonObject::new(),
    })
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
    let mut open = OpenToolCalls::default();
    // The assistant message whose calls are open, and where it is.
    let mut reply: Option<(usize, &AssistantMessage)> = None;
    let mut plan = RepairPlan::default();
    for (position, item) in items.iter().enumerate() {
        let closed = match message(item) {
            AgentMessage::Assistant(assistant) => open.assistant(assistant),
            AgentMessage::ToolResult(result) => {
                if !open.answer(&result.tool_call_id) {
                    plan.repairs.push((position, Repair::Drop));
                    plan.orphans += 1;
                }
                continue;
            }
            AgentMessage::User(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => open.close(),
        };
        if let Some((reply_at, reply)) = reply.filter(|_| !closed.is_empty()) {
            plan.unanswered(reply, reply_at, position, &closed);
        }
        if let AgentMessage::Assistant(assistant) = message(item) {
            reply = Some((position, assistant));
        }
    }
    // A failed reply's calls are removed where the reply is, before the positions after it.
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

/// The repaired view: `items` with the plan's repairs done. `answer` makes a synthetic result's
/// item (given the position of the reply it answers), `strip` removes blocks from an item and says
/// whether anything is left of it.
fn apply<T>(
    items: Vec<T>,
    repairs: Vec<(usize, Repair)>,
    answer: impl Fn(usize, AgentMessage) -> T,
    mut strip: impl FnMut(&mut T, &[usize]) -> bool,
) -> Vec<T> {
    let added = repairs
        .iter()
        .map(|(_, repair)| match repair {
            Repair::Answer { results, .. } => results.len(),
            Repair::Drop | Repair::Strip(_) => 0,
        })
        .sum::<usize>();
    let mut repaired = Vec::with_capacity(items.len() + added);
    let mut repairs = repairs.into_iter().peekable();
    for (position, mut item) in items.into_iter().enumerate() {
        let mut keep = true;
        while let Some((_, repair)) = repairs.next_if(|(at, _)| *at == position) {
            match repair {
                Repair::Drop => keep = false,
                Repair::Strip(removed) => keep &= strip(&mut item, &removed),
                Repair::Answer { reply, results } => {
                    repaired.extend(results.into_iter().map(|result| answer(reply, result)))
                }
            }
        }
        if keep {
            repaired.push(item);
        }
    }
    repaired
}

/// Moves each tool result whose call is in an earlier reply of its turn to right after that
/// reply's own results (rule 0); `items` is left alone when every result is where it pairs.
fn pair_results<T>(items: &mut Vec<T>, message: impl Fn(&T) -> &AgentMessage) {
    if is_well_formed(items, &message) {
        return;
    }
    let Some(order) = paired_order(items, &message) else {
        return;
    };
    let mut taken: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    *items = order
        .into_iter()
        .filter_map(|position| taken.get_mut(position).and_then(Option::take))
        .collect();
}

/// Repairs the working view; returns the number of orphans (results dropped plus calls answered
/// or, in a failed reply, removed). A synthetic result has the origin of the reply it answers; a
/// moved result keeps its own.
pub(crate) fn repair_slots(slots: &mut Vec<Slot<'_>>) -> usize {
    pair_results(slots, |slot| &slot.message);
    let plan = plan(slots, |slot| &slot.message);
    if plan.repairs.is_empty() {
        return 0;
    }
    let origins: Vec<usize> = slots.iter().map(|slot| slot.origin).collect();
    let answer = |reply: usize, result| Slot::synthetic(result, origins[reply]);
    *slots = apply(std::mem::take(slots), plan.repairs, answer, strip_slot);
    plan.orphans
}

/// Removes the blocks at `removed` from the slot's assistant message; `false` when none remain.
fn strip_slot(slot: &mut Slot<'_>, removed: &[usize]) -> bool {
    let AgentMessage::Assistant(assistant) = slot.message.as_ref() else {
        return true;
    };
    let content = without_blocks(&assistant.content, removed);
    if content.is_empty() {
        return false;
    }
    let removed_chars = removed
        .iter()
        .filter_map(|&index| assistant.content.get(index))
        .map(block_chars)
        .sum();
    let changed = assistant_with_content(assistant, content);
    slot.replace_assistant(changed, removed_chars);
    true
}

/// Makes the tool calls and tool results of `messages` consistent, as providers require and as Pi
/// 1.6.0 sends them: a tool result whose call is in an earlier reply of its turn goes right after
/// that reply's own results (not Pi's: it answers the call `No result provided` and sends the
/// result after another reply, which Anthropic refuses); a tool result that answers no open call (rule 1 above: its call's assistant
/// message right before it, that call not answered yet) is dropped; a call that closes without a
/// result is answered by a synthetic error result ([`NO_TOOL_RESULT`]) after its reply's results
/// (a failed reply's such call is removed instead, and the reply dropped if that empties it). The
/// calls of the last assistant message are pending, and left open, when only tool results (or
/// nothing) follow it. Returns the repaired list and the number of orphans (results dropped plus
/// calls answered or removed).
pub fn repair_orphans(mut messages: Vec<AgentMessage>) -> (Vec<AgentMessage>, usize) {
    pair_results(&mut messages, |message| message);
    let plan = plan(&messages, |message| message);
    if plan.repairs.is_empty() {
        return (messages, 0);
    }
    let strip = |message: &mut AgentMessage, removed: &[usize]| {
        let AgentMessage::Assistant(assistant) = message else {
            return true;
        };
        let mut index = 0;
        assistant.content.retain(|_| {
            let kept = removed.binary_search(&index).is_err();
            index += 1;
            kept
        });
        !assistant.content.is_empty()
    };
    let repaired = apply(messages, plan.repairs, |_, result| result, strip);
    (repaired, plan.orphans)
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
        // A result after a user message answers nothing: its call is left unanswered, and
        // answered with an error result before the user message, as Pi 1.6.0 sends it.
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
            vec![
                user("task"),
                assistant(vec![text("t"), call("a")]),
                no_result("a"),
                user("interrupt"),
            ]
        );
    }

    /// A call that closes without its result (the session went on from the reply that made it,
    /// or the turn was killed before the tool ran) stays in its reply, answered by an error result
    /// after the reply's own results: Pi 1.6.0's request, not a reply with its call cut out.
    #[test]
    fn calls_without_a_result_are_answered() {
        let messages = vec![
            user("task"),
            assistant(vec![
                thinking("plan"),
                text("two calls"),
                call("a"),
                call("lost"),
            ]),
            tool_result("a", "A"),
            assistant(vec![call("gone")]),
            user("next"),
        ];
        let (repaired, orphans) = repair(messages.clone());
        assert_eq!(orphans, 2);
        assert_eq!(
            repaired,
            vec![
                messages[0].clone(),
                messages[1].clone(),
                messages[2].clone(),
                no_result("lost"),
                messages[3].clone(),
                no_result("gone"),
                messages[4].clone(),
            ]
        );
        let AgentMessage::ToolResult(answer) = &repaired[3] else {
            panic!("expected a tool result")
        };
        assert!(answer.is_error);
        assert_eq!(answer.content.joined_text(""), NO_TOOL_RESULT);
        // Repaired once, the view is consistent: a second repair finds nothing.
        assert_eq!(repair(repaired.clone()), (repaired, 0));
    }

    /// Pi sends no failed reply (error or aborted), so it answers none of their calls: a failed
    /// reply's unanswered calls are removed, as before, and the reply dropped if that empties it.
    #[test]
    fn calls_of_a_failed_reply_are_removed_not_answered() {
        let messages = vec![
            user("task"),
            failed_assistant(vec![text("partial"), call("a"), call("b")]),
            tool_result("b", "B"),
            failed_assistant(vec![call("c")]),
            user("next"),
        ];
        let (repaired, orphans) = repair(messages);
        assert_eq!(orphans, 2);
        assert_eq!(
            repaired,
            vec![
                user("task"),
                failed_assistant(vec![text("partial"), call("b")]),
                tool_result("b", "B"),
                user("next"),
            ]
        );
        // A reply whose calls a failed reply closes is answered before the failed reply.
        let messages = vec![
            user("task"),
            assistant(vec![call("a")]),
            failed_assistant(vec![text("cut off"), call("b")]),
            user("next"),
        ];
        let (repaired, orphans) = repair(messages);
        assert_eq!(orphans, 2);
        assert_eq!(
            repaired,
            vec![
                user("task"),
                assistant(vec![call("a")]),
                no_result("a"),
                failed_assistant(vec![text("cut off")]),
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
                assistant(vec![text("t"), call("x")]),
                no_result("x"),
                user("interrupt"),
                assistant(vec![call("a")]),
            ]
        );
        // A final assistant followed by a user message is not pending either.
        let messages = vec![user("task"), assistant(vec![call("a")]), user("next")];
        assert_eq!(
            repair(messages.clone()),
            (
                vec![
                    messages[0].clone(),
                    messages[1].clone(),
                    no_result("a"),
                    messages[2].clone()
                ],
                1
            )
        );
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

    /// The messages of a session file's entries, in file order (the fixtures are one chain).
    fn fixture_messages(jsonl: &str) -> Vec<AgentMessage> {
        jsonl
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
            .filter_map(|entry| match entry["type"].as_str() {
                Some("message") => Some(serde_json::from_value(entry["message"].clone()).unwrap()),
                Some("custom_message") => Some(
                    serde_json::from_value(serde_json::json!({
                        "role": "custom", "customType": entry["customType"],
                        "content": entry["content"], "display": entry["display"]}))
                    .unwrap(),
                ),
                _ => None,
            })
            .collect()
    }

    /// A session imported from Codex before 2026-12-06: each parallel call of a response is its own
    /// reply, the outputs come after the last, and a developer message stands between two of them.
    /// Every output is sent right after the reply making its call; none is answered
    /// `No result provided`, none is dropped, and the order is the only change.
    #[test]
    fn an_old_codex_import_s_parallel_calls_keep_their_outputs() {
        let messages = fixture_messages(include_str!(
            "../tests/fixtures/codex-one-reply-per-call.jsonl"
        ));
        let (repaired, orphans) = repair(messages.clone());
        assert_eq!(orphans, 0);
        let shape: Vec<String> = repaired
            .iter()
            .map(|message| match message {
                AgentMessage::Assistant(reply) => {
                    let calls: Vec<&str> = reply
                        .content
                        .iter()
                        .filter_map(|block| Some(block.as_tool_call()?.id.as_str()))
                        .collect();
                    format!("assistant {}", calls.join(","))
                }
                AgentMessage::ToolResult(result) => format!("result {}", result.tool_call_id),
                AgentMessage::User(_)
                | AgentMessage::BashExecution(_)
                | AgentMessage::Custom(_)
                | AgentMessage::BranchSummary(_)
                | AgentMessage::CompactionSummary(_)
                | AgentMessage::Unknown(_) => message.role().to_owned(),
            })
            .collect();
        assert_eq!(
            shape,
            [
                "user",
                "assistant ",
                "assistant ",
                "assistant call_one",
                "result call_one",
                "assistant call_two",
                "result call_two",
                "assistant call_three",
                "result call_three",
                "custom",
                "assistant call_four",
                "result call_four",
                "assistant ",
            ]
        );
        assert!(
            !repaired
                .iter()
                .any(|message| output_text(message) == NO_TOOL_RESULT)
        );
        let mut sorted = repaired.clone();
        let mut original = messages;
        let key = |message: &AgentMessage| serde_json::to_string(message).unwrap();
        sorted.sort_by_key(key);
        original.sort_by_key(key);
        assert_eq!(sorted, original);
        // Repaired once, the view is consistent, and what follows never moves it.
        assert_eq!(repair(repaired.clone()), (repaired.clone(), 0));
        let mut longer = repaired.clone();
        longer.extend([
            user("next"),
            assistant(vec![call("z")]),
            tool_result("z", "Z"),
        ]);
        assert_eq!(repair(longer.clone()).0[..repaired.len()], repaired[..]);
    }

    #[test]
    fn empty_views_are_fine() {
        assert_eq!(repair(Vec::new()), (Vec::new(), 0));
        assert_eq!(repair(vec![tool_result("a", "A")]), (Vec::new(), 1));
    }
}

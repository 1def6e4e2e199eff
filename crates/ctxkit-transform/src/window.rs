//! Layer (c), the sliding window: when the estimated view is still above `windowThresholdPercent` of
//! the context window after the other layers, the oldest messages are dropped until it is not.
//!
//! - Never dropped: the first message, the first user message (the task), and the last
//!   `keepLastMessages` messages. The kept tail is widened backwards so it never starts with a tool
//!   result: a turn's results stay with the assistant message that called them.
//! - Dropped oldest first, from the second message on. Dropping an assistant message also drops the
//!   tool results that directly follow it and answer its calls (they would be orphans anyway).
//! - Stops as soon as the estimate is at or below the threshold, or when nothing more may be dropped.
//! - A context window of 0 (unknown) never triggers the window.

use ctxkit_protocol::AgentMessage;

use crate::TransformSettings;
use crate::view::{IdSet, Slot, total_tokens};

/// The estimate above which the window acts: `percent`% of `context_window`, or `None` when the
/// window is unknown (0).
pub(crate) fn threshold_tokens(context_window: u64, percent: u64) -> Option<u64> {
    if context_window == 0 {
        return None;
    }
    let threshold = u128::from(context_window) * u128::from(percent) / 100;
    Some(u64::try_from(threshold).unwrap_or(u64::MAX))
}

/// Drops the oldest droppable messages while the view is above the threshold; returns how many.
pub(crate) fn slide_window(
    slots: &mut Vec<Slot<'_>>,
    settings: &TransformSettings,
    context_window: u64,
) -> usize {
    let Some(threshold) = threshold_tokens(context_window, settings.window_threshold_percent)
    else {
        return 0;
    };
    let mut total = total_tokens(slots);
    if total <= threshold {
        return 0;
    }
    let first_user = slots
        .iter()
        .position(|slot| matches!(slot.message.as_ref(), AgentMessage::User(_)));
    let mut tail_start = slots.len().saturating_sub(settings.keep_last_messages);
    while tail_start > 0
        && matches!(
            slots.get(tail_start).map(|slot| slot.message.as_ref()),
            Some(AgentMessage::ToolResult(_))
        )
    {
        tail_start -= 1;
    }
    let mut dropped = vec![false; slots.len()];
    let mut count = 0;
    let mut position = 1;
    while position < tail_start && total > threshold {
        if dropped[position] || Some(position) == first_user {
            position += 1;
            continue;
        }
        dropped[position] = true;
        count += 1;
        total = total.saturating_sub(slots[position].tokens);
        if let AgentMessage::Assistant(assistant) = slots[position].message.as_ref() {
            let calls: IdSet<'_> = assistant
                .content
                .iter()
                .filter_map(|block| Some(block.as_tool_call()?.id.as_str()))
                .collect();
            let mut next = position + 1;
            while let Some(AgentMessage::ToolResult(result)) =
                slots.get(next).map(|slot| slot.message.as_ref())
            {
                if next < tail_start && calls.contains(result.tool_call_id.as_str()) {
                    dropped[next] = true;
                    count += 1;
                    total = total.saturating_sub(slots[next].tokens);
                }
                next += 1;
            }
        }
        position += 1;
    }
    if count > 0 {
        let mut flags = dropped.into_iter();
        slots.retain(|_| !flags.next().unwrap_or(false));
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;

    /// `user`, then `turns` × (assistant with one call, its result, a user message); 100 chars each.
    fn conversation(turns: usize) -> Vec<AgentMessage> {
        let mut messages = vec![user(&"u".repeat(100))];
        for turn in 0..turns {
            let id = format!("c{turn}");
            messages.push(assistant(vec![text(&"a".repeat(60)), call(&id)]));
            messages.push(tool_result(&id, &"r".repeat(100)));
            messages.push(user(&"u".repeat(100)));
        }
        messages
    }

    fn slide(
        messages: &[AgentMessage],
        settings: &TransformSettings,
        context_window: u64,
    ) -> (Vec<AgentMessage>, usize) {
        let mut view = slots(messages);
        let dropped = slide_window(&mut view, settings, context_window);
        (unslot(view), dropped)
    }

    #[test]
    fn unknown_windows_and_small_views_are_left_alone() {
        let messages = conversation(30);
        let settings = TransformSettings::default();
        assert_eq!(slide(&messages, &settings, 0), (messages.clone(), 0));
        let total = total_tokens(&slots(&messages));
        // Exactly at the threshold is not above it.
        let window = total * 100 / 75 + 1;
        assert!(threshold_tokens(window, 75).unwrap() >= total);
        assert_eq!(slide(&messages, &settings, window), (messages, 0));
        assert_eq!(threshold_tokens(u64::MAX, 1000), Some(u64::MAX));
    }

    #[test]
    fn drops_from_the_second_message_and_keeps_first_user_and_last_messages() {
        let mut messages = conversation(30);
        messages.push(assistant(vec![text("answer")]));
        let settings = TransformSettings::default();
        // A tiny window: everything droppable goes. The last 20 start with a user message.
        let (view, dropped) = slide(&messages, &settings, 100);
        assert_eq!(view.len(), 21);
        assert_eq!(dropped, messages.len() - 21);
        assert_eq!(view[0], messages[0]);
        assert_eq!(view[1..], messages[messages.len() - 20..]);
    }

    #[test]
    fn stops_once_under_the_threshold_dropping_whole_turns() {
        let messages = conversation(30);
        let settings = TransformSettings::default();
        let total = total_tokens(&slots(&messages));
        // Room for all but about 100 tokens.
        let window = (total - 100) * 100 / 75;
        let (view, dropped) = slide(&messages, &settings, window);
        let threshold = threshold_tokens(window, 75).unwrap();
        let kept = total_tokens(&slots(&view));
        assert!(kept <= threshold, "{kept} > {threshold}");
        assert_eq!(view.len() + dropped, messages.len());
        // The oldest messages after the first went, in order, and the rest is untouched.
        assert_eq!(view[0], messages[0]);
        assert_eq!(view[1..], messages[1 + dropped..]);
        // Dropping stopped at a message boundary right after the threshold was met: one message fewer
        // would still be above it.
        let (_, orphans) = crate::repair_orphans(view.clone());
        assert_eq!(orphans, 0, "an assistant's results go with it");
        assert!(kept + view_tokens(&messages[dropped..=dropped]) > threshold);
    }

    fn view_tokens(messages: &[AgentMessage]) -> u64 {
        total_tokens(&slots(messages))
    }

    #[test]
    fn keeping_no_last_messages_leaves_only_the_first() {
        let messages = conversation(5);
        let settings = TransformSettings {
            keep_last_messages: 0,
            ..TransformSettings::default()
        };
        let (view, dropped) = slide(&messages, &settings, 10);
        assert_eq!(view, messages[..1]);
        assert_eq!(dropped, messages.len() - 1);
    }

    #[test]
    fn the_kept_tail_never_starts_with_a_tool_result() {
        let mut messages = vec![user("task")];
        for turn in 0..10 {
            messages.push(assistant(vec![
                call(&format!("a{turn}")),
                call(&format!("b{turn}")),
            ]));
            messages.push(tool_result(&format!("a{turn}"), &"x".repeat(400)));
            messages.push(tool_result(&format!("b{turn}"), &"y".repeat(400)));
        }
        let settings = TransformSettings {
            keep_last_messages: 4,
            ..TransformSettings::default()
        };
        let (view, _) = slide(&messages, &settings, 10);
        // The last 4 messages start with a result: the tail widens to the assistant before it.
        assert_eq!(view[0], messages[0]);
        assert_eq!(view[1..], messages[messages.len() - 6..]);
        assert_eq!(crate::repair_orphans(view).1, 0);
    }

    #[test]
    fn a_leading_summary_and_the_first_user_message_are_kept() {
        let summary: AgentMessage = serde_json::from_value(serde_json::json!({
            "role": "compactionSummary", "summary": "s".repeat(400), "tokensBefore": 10}))
        .unwrap();
        let mut messages = vec![summary, user("the task")];
        messages.extend(conversation(10).into_iter().skip(1));
        let settings = TransformSettings {
            keep_last_messages: 3,
            ..TransformSettings::default()
        };
        let (view, _) = slide(&messages, &settings, 10);
        assert_eq!(view[..2], messages[..2]);
        assert_eq!(view[2..], messages[messages.len() - 3..]);
    }
}

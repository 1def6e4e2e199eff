//! Pinned text after a compaction, placed right after its summary. The engine appends the pins a
//! compaction cut away (a `ctxkit.pinned` custom message marked `afterCompaction`) once the
//! compaction is written, which is at the end of the branch: after the prompt that overflowed, or
//! after the tool results of the call that crossed the threshold. Sent there, the pins were the
//! request's last message and the model answered them instead of the prompt. The stored order
//! stays as the reference writes it; the view moves such a message to just after the summary, so
//! the rules come before the history they govern and the prompt stays last.

use ctxkit_protocol::{AFTER_COMPACTION_KEY, AgentMessage, PINNED_MESSAGE_TYPE};

use crate::view::Slot;

/// Moves each pinned message appended after a compaction to just after the view's compaction
/// summary (keeping their order); returns how many moved. A view without a summary is left alone.
pub(crate) fn place_pins_after_summary(slots: &mut Vec<Slot<'_>>) -> usize {
    let Some(summary) = slots
        .iter()
        .position(|slot| matches!(*slot.message, AgentMessage::CompactionSummary(_)))
    else {
        return 0;
    };
    let mut insert_at = summary + 1;
    let mut moved = 0;
    for position in summary + 1..slots.len() {
        if !is_pinned_after_compaction(&slots[position].message) {
            continue;
        }
        if position != insert_at {
            let slot = slots.remove(position);
            slots.insert(insert_at, slot);
            moved += 1;
        }
        insert_at += 1;
    }
    moved
}

fn is_pinned_after_compaction(message: &AgentMessage) -> bool {
    let AgentMessage::Custom(custom) = message else {
        return false;
    };
    custom.custom_type == PINNED_MESSAGE_TYPE
        && custom
            .details
            .as_ref()
            .is_some_and(|details| details.get(AFTER_COMPACTION_KEY).is_some())
}

#[cfg(test)]
mod tests {
    use ctxkit_protocol::{CompactionSummaryMessage, CustomMessage, JsonObject, MessageContent};
    use serde_json::json;

    use super::*;
    use crate::test_support::{slots, user};

    fn summary() -> AgentMessage {
        AgentMessage::CompactionSummary(CompactionSummaryMessage {
            summary: "## Goal".to_owned(),
            tokens_before: 50_000,
            timestamp: None,
            extra: JsonObject::new(),
        })
    }

    fn pinned(details: serde_json::Value) -> AgentMessage {
        AgentMessage::Custom(CustomMessage {
            custom_type: PINNED_MESSAGE_TYPE.to_owned(),
            content: MessageContent::Text("<pinned>use tabs</pinned>".to_owned()),
            display: false,
            details: Some(details),
            timestamp: None,
            extra: JsonObject::new(),
        })
    }

    /// A view of `messages`, each slot knowing its input position.
    fn numbered(messages: &[AgentMessage]) -> Vec<Slot<'_>> {
        let mut view = slots(messages);
        for (position, slot) in view.iter_mut().enumerate() {
            slot.origin = position;
        }
        view
    }

    fn order(slots: &[Slot<'_>]) -> Vec<usize> {
        slots.iter().map(|slot| slot.origin).collect()
    }

    #[test]
    fn a_pin_appended_after_a_compaction_is_sent_after_its_summary_and_the_prompt_last() {
        let messages = vec![
            summary(),
            user("kept"),
            user("what now"),
            pinned(json!({"pins": ["p1"], "afterCompaction": "c1"})),
        ];
        let mut view = numbered(&messages);
        assert_eq!(place_pins_after_summary(&mut view), 1);
        assert_eq!(order(&view), [0, 3, 1, 2]);
    }

    #[test]
    fn a_pin_made_by_the_user_stays_where_it_was_pinned() {
        let messages = vec![
            summary(),
            user("kept"),
            pinned(json!({"pins": ["p1"]})),
            user("what now"),
        ];
        let mut view = numbered(&messages);
        assert_eq!(place_pins_after_summary(&mut view), 0);
        assert_eq!(order(&view), [0, 1, 2, 3]);
    }

    #[test]
    fn without_a_summary_nothing_moves_and_several_pins_keep_their_order() {
        let lone = vec![user("a"), pinned(json!({"afterCompaction": "c1"}))];
        let mut view = numbered(&lone);
        assert_eq!(place_pins_after_summary(&mut view), 0);
        assert_eq!(order(&view), [0, 1]);

        let messages = vec![
            summary(),
            pinned(json!({"afterCompaction": "c0"})),
            user("kept"),
            pinned(json!({"afterCompaction": "c1"})),
            user("prompt"),
            pinned(json!({"afterCompaction": "c2"})),
        ];
        let mut view = numbered(&messages);
        assert_eq!(place_pins_after_summary(&mut view), 2);
        assert_eq!(order(&view), [0, 1, 3, 5, 2, 4]);
    }
}

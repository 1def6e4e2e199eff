//! Which messages of a compacted context were already in the context before its compaction.

use crate::context::{ContextMessageKind, SessionContext};

impl SessionContext {
    /// How many of the first messages were already in the context before its latest compaction:
    /// the compaction's own (its `systemMessage` and summary) and the messages it kept, which come
    /// before its entry. 0 without a compaction. Entries are numbered in the order they were
    /// written, so every message after these is newer than the compaction. A request whose reply
    /// is among them was sent before the compaction, with another prefix (the prune layer's fold
    /// leaves such requests out).
    pub fn carried(&self) -> usize {
        let Some(compaction) = self
            .messages
            .iter()
            .find(|message| message.kind == ContextMessageKind::CompactionSummary)
            .map(|message| message.entry)
        else {
            return 0;
        };
        self.messages
            .iter()
            .take_while(|message| message.entry <= compaction)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use crate::context::{ContextMessage, ContextMessageKind, SessionContext};

    fn context(messages: &[(usize, ContextMessageKind)]) -> SessionContext {
        SessionContext {
            messages: messages
                .iter()
                .map(|&(entry, kind)| ContextMessage::new(entry, kind))
                .collect(),
            thinking_level: "off".to_owned(),
            model: None,
        }
    }

    #[test]
    fn the_summary_and_the_kept_messages_are_carried_and_the_newer_ones_not() {
        use ContextMessageKind::{CompactionSummary, CompactionSystem, Stored};
        assert_eq!(context(&[(0, Stored), (1, Stored)]).carried(), 0);
        let compacted = context(&[
            (9, CompactionSystem),
            (9, CompactionSummary),
            (5, Stored),
            (6, Stored),
            (10, Stored),
            (11, Stored),
        ]);
        assert_eq!(compacted.carried(), 4);
        assert_eq!(context(&[(9, CompactionSummary)]).carried(), 1);
    }
}

//! The bounded window of a span that a summary request carries as structure (`SummarySpan`): the
//! whole span when it is of a size a model could read, else its beginning (where the goal is) and
//! its most recent messages, with the count left out between them. A model's input is bounded by
//! its window; the structured side of a request is bounded too, so summarizing a span of a million
//! messages (the offline summarizer reads structure) costs what a long real span costs.

use ctxkit_protocol::AgentMessage;
use ctxkit_tokens::estimate_tokens;

use crate::prepare::SourcedMessage;

/// Most messages the structured span carries: far above a real compaction's span (a few thousand
/// messages fill a million-token window).
pub const SPAN_WINDOW_MESSAGES: usize = 50_000;
/// Most estimated tokens (chars/4) the structured span carries: twice the largest context window
/// a model offers today.
pub const SPAN_WINDOW_TOKENS: u64 = 2_000_000;
/// What a cut window keeps of the span's beginning: at most this many messages…
const HEAD_MESSAGES: usize = 200;
/// …and at most this many estimated tokens.
const HEAD_TOKENS: u64 = 50_000;

/// The window of `messages` the structured span carries, and how many messages it leaves out
/// (between its head and its tail; 0 when the span fits whole).
pub(crate) fn span_window(messages: &[SourcedMessage]) -> (Vec<AgentMessage>, usize) {
    let sizes: Vec<u64> = messages
        .iter()
        .map(|message| estimate_tokens(&message.message))
        .collect();
    let total = sizes
        .iter()
        .fold(0u64, |sum, size| sum.saturating_add(*size));
    if messages.len() <= SPAN_WINDOW_MESSAGES && total <= SPAN_WINDOW_TOKENS {
        return (whole(messages), 0);
    }
    // The head: the first messages up to its bounds (the first one always).
    let mut head = 0;
    let mut head_tokens = 0u64;
    while head < sizes.len().min(HEAD_MESSAGES) {
        let next = head_tokens.saturating_add(sizes[head]);
        if head > 0 && next > HEAD_TOKENS {
            break;
        }
        head_tokens = next;
        head += 1;
    }
    // The tail: the latest messages in what the head leaves of the bounds (the last one always).
    let mut tail_start = sizes.len();
    let mut tail_tokens = 0u64;
    while tail_start > head && sizes.len() - tail_start < SPAN_WINDOW_MESSAGES - head {
        let next = tail_tokens.saturating_add(sizes[tail_start - 1]);
        if tail_start < sizes.len() && head_tokens.saturating_add(next) > SPAN_WINDOW_TOKENS {
            break;
        }
        tail_tokens = next;
        tail_start -= 1;
    }
    let kept = messages[..head]
        .iter()
        .chain(&messages[tail_start..])
        .map(|message| message.message.clone())
        .collect();
    (kept, tail_start - head)
}

fn whole(messages: &[SourcedMessage]) -> Vec<AgentMessage> {
    messages
        .iter()
        .map(|message| message.message.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_session::{ContextMessage, ContextMessageKind};
    use serde_json::json;

    fn user(text: &str) -> SourcedMessage {
        SourcedMessage {
            source: ContextMessage::new(0, ContextMessageKind::Stored),
            message: serde_json::from_value(json!({"role": "user", "content": text})).unwrap(),
        }
    }

    fn text_of(message: &AgentMessage) -> String {
        match message {
            AgentMessage::User(user) => user.content.joined_text(""),
            AgentMessage::Assistant(_)
            | AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => String::new(),
        }
    }

    #[test]
    fn a_span_within_the_bounds_is_carried_whole() {
        let span: Vec<SourcedMessage> = (0..1_000).map(|n| user(&format!("m{n}"))).collect();
        let (kept, omitted) = span_window(&span);
        assert_eq!(omitted, 0);
        assert_eq!(kept.len(), 1_000);
    }

    #[test]
    fn a_span_of_too_many_messages_keeps_its_beginning_and_its_end() {
        let count = SPAN_WINDOW_MESSAGES * 3;
        let span: Vec<SourcedMessage> = (0..count).map(|n| user(&format!("m{n}"))).collect();
        let (kept, omitted) = span_window(&span);
        assert_eq!(kept.len(), SPAN_WINDOW_MESSAGES);
        assert_eq!(kept.len() + omitted, count);
        assert_eq!(text_of(&kept[0]), "m0");
        assert_eq!(
            text_of(&kept[HEAD_MESSAGES - 1]),
            format!("m{}", HEAD_MESSAGES - 1)
        );
        assert_eq!(
            text_of(&kept[HEAD_MESSAGES]),
            format!("m{}", HEAD_MESSAGES + omitted)
        );
        assert_eq!(text_of(kept.last().unwrap()), format!("m{}", count - 1));
    }

    #[test]
    fn a_span_of_too_many_tokens_keeps_the_latest_that_fit() {
        // 10 messages of ~500k estimated tokens each: the first, then the latest that fit.
        let big = "x".repeat(1_990_000);
        let span: Vec<SourcedMessage> = (0..10).map(|n| user(&format!("{n}{big}"))).collect();
        let (kept, omitted) = span_window(&span);
        assert_eq!(kept.len(), 4, "the first and the latest three");
        assert_eq!(omitted, 6);
        assert!(text_of(&kept[0]).starts_with('0'));
        assert!(text_of(&kept[1]).starts_with('7'));
        let total: u64 = kept.iter().map(estimate_tokens).sum();
        assert!(total <= SPAN_WINDOW_TOKENS, "{total}");
    }

    #[test]
    fn a_history_request_carries_the_window_and_the_whole_conversation_as_text() {
        let count = SPAN_WINDOW_MESSAGES + 10_000;
        let preparation = crate::Preparation {
            first_kept_entry_id: "kept".to_owned(),
            messages_to_summarize: (0..count).map(|n| user(&format!("m{n}"))).collect(),
            turn_prefix_messages: Vec::new(),
            is_split_turn: false,
            tokens_before: 0,
            previous_summary: None,
            file_operations: crate::FileOperations::default(),
            settings: crate::CompactionSettings::default(),
        };
        let summarizer = never_called::Named;
        let request = crate::history_request(
            &preparation,
            &crate::Prompts::default(),
            &summarizer,
            &crate::CompactOptions::default(),
        );
        assert_eq!(request.source.messages.len(), SPAN_WINDOW_MESSAGES);
        assert_eq!(request.source.omitted_messages, 10_000);
        // A model reads the span as text: all of it, as Pi sends it.
        assert!(request.user_text.contains("[User]: m0\n\n[User]: m1\n"));
        assert!(
            request
                .user_text
                .contains(&format!("[User]: m{}\n", count / 2))
        );
        assert!(
            request
                .user_text
                .contains(&format!("[User]: m{}\n</conversation>", count - 1))
        );
    }

    /// A summarizer that is never called: the request is only built.
    mod never_called {
        use ctxkit_summarizer::{Summarizer, SummarizerError, SummaryRequest, SummaryResponse};
        use futures::future::BoxFuture;
        use tokio_util::sync::CancellationToken;

        pub struct Named;

        impl Summarizer for Named {
            fn name(&self) -> String {
                "test".to_owned()
            }
            fn supports_reasoning(&self) -> bool {
                false
            }
            fn summarize(
                &self,
                _request: SummaryRequest,
                _cancel: CancellationToken,
            ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
                unreachable!("only the request is built")
            }
        }
    }
}

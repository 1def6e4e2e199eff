//! The bounded window of a span that a summary request carries as structure (`SummarySpan`): the
//! whole span when it is of a size a model could read, else its beginning (where the goal is) and
//! its most recent messages, with the count left out between them. A model's input is bounded by
//! its window; the structured side of a request is bounded too, so summarizing a span of a million
//! messages (the offline summarizer reads structure) costs what a long real span costs. Planning
//! applies the same rule per entry (`span`), so a plan holds only the window of such a span.

use rayon::prelude::*;

use ctxkit_protocol::AgentMessage;
use ctxkit_session::{ProjectedEntry, Session};
use ctxkit_tokens::estimate_tokens;

use crate::error::CompactionError;
use crate::file_ops::FileOperations;
use crate::prepare::SourcedMessage;

/// Most messages the structured span carries: far above a real compaction's span (a few thousand
/// messages fill a million-token window).
pub const SPAN_WINDOW_MESSAGES: usize = 50_000;
/// Most estimated tokens (chars/4) the structured span carries: twice the largest context window
/// a model offers today (a first message longer than `HEAD_TOKENS` counts as `HEAD_TOKENS`, see
/// `window_bounds`).
pub const SPAN_WINDOW_TOKENS: u64 = 2_000_000;
/// What a cut window keeps of the span's beginning: at most this many messages…
const HEAD_MESSAGES: usize = 200;
/// …and at most this many estimated tokens.
const HEAD_TOKENS: u64 = 50_000;

/// Messages left out of the middle of a span too long to be carried whole (see [`Preparation`]):
/// the span's list holds its head then its tail, and `messages` of the span were between them.
///
/// [`Preparation`]: crate::Preparation
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanGap {
    /// Where in the list the left-out messages were: the head is `..at`, the tail `at..`.
    pub at: usize,
    /// How many messages were left out.
    pub messages: usize,
}

/// What the window rule weighs of one part of a span (a message, or an entry's messages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SpanUnit {
    pub messages: usize,
    pub tokens: u64,
}

/// Where the window of a span of `units` cuts it: its head is `..head`, its tail `tail..`; `None`
/// when the span fits whole. The head is the first units up to its bounds (the first one always),
/// the tail the latest in what the head leaves of the bounds (the last one always). A head over
/// its bounds (one first message longer than they are) weighs as its bounds: the model's fit cuts
/// that message's oldest part from the request's text (`ctxkit-llm`'s `summary_fit`), so the
/// span's later messages are not left out for it, where weighing it whole left out everything
/// between it and the last message.
pub(crate) fn window_bounds(units: &[SpanUnit]) -> Option<(usize, usize)> {
    let (messages, tokens) = units
        .iter()
        .fold((0usize, 0u64), |(messages, tokens), unit| {
            (
                messages.saturating_add(unit.messages),
                tokens.saturating_add(unit.tokens),
            )
        });
    if messages <= SPAN_WINDOW_MESSAGES && tokens <= SPAN_WINDOW_TOKENS {
        return None;
    }
    let mut head = 0;
    let (mut head_messages, mut head_tokens) = (0usize, 0u64);
    while let Some(unit) = units.get(head) {
        let next = (
            head_messages + unit.messages,
            head_tokens.saturating_add(unit.tokens),
        );
        if head > 0 && (next.0 > HEAD_MESSAGES || next.1 > HEAD_TOKENS) {
            break;
        }
        (head_messages, head_tokens) = next;
        head += 1;
    }
    let head_tokens = head_tokens.min(HEAD_TOKENS);
    let mut tail = units.len();
    let (mut tail_messages, mut tail_tokens) = (0usize, 0u64);
    while tail > head {
        let unit = units[tail - 1];
        let next = (
            tail_messages + unit.messages,
            tail_tokens.saturating_add(unit.tokens),
        );
        if tail < units.len()
            && (next.0 > SPAN_WINDOW_MESSAGES - head_messages
                || head_tokens.saturating_add(next.1) > SPAN_WINDOW_TOKENS)
        {
            break;
        }
        (tail_messages, tail_tokens) = next;
        tail -= 1;
    }
    // Nothing left between head and tail: the span is carried whole after all.
    (tail > head).then_some((head, tail))
}

/// The window of `messages` the structured span carries, and how many messages it leaves out
/// (between its head and its tail; 0 when the span fits whole).
pub(crate) fn span_window(messages: &[SourcedMessage]) -> (Vec<AgentMessage>, usize) {
    let units: Vec<SpanUnit> = messages
        .iter()
        .map(|message| SpanUnit {
            messages: 1,
            tokens: estimate_tokens(&message.message),
        })
        .collect();
    let Some((head, tail)) = window_bounds(&units) else {
        return (whole(messages), 0);
    };
    let kept = messages[..head]
        .iter()
        .chain(&messages[tail..])
        .map(|message| message.message.clone())
        .collect();
    (kept, tail - head)
}

fn whole(messages: &[SourcedMessage]) -> Vec<AgentMessage> {
    messages
        .iter()
        .map(|message| message.message.clone())
        .collect()
}

pub(crate) fn is_compaction_entry(session: &Session, entry: &ProjectedEntry) -> bool {
    session
        .index()
        .get(entry.entry)
        .is_some_and(|stored| stored.type_name() == "compaction")
}

/// Entries parsed on all cores at a time when taking a span: a bounded step, so the span's list is
/// the only one of its length.
const SPAN_CHUNK: usize = 4096;

/// The messages of the projected entries in `range` (parsed again, on all cores), without
/// compactions' and system messages: the span a summary covers.
fn span_messages(
    session: &Session,
    projected: &[ProjectedEntry],
    range: std::ops::Range<usize>,
) -> Result<Vec<SourcedMessage>, CompactionError> {
    let entries = projected.get(range).unwrap_or_default();
    let mut taken = Vec::with_capacity(entries.iter().map(|entry| entry.messages.len()).sum());
    for chunk in entries.chunks(SPAN_CHUNK) {
        let parsed = chunk
            .par_iter()
            .with_min_len(16)
            .map(|entry| {
                let is_compaction = session
                    .index()
                    .get(entry.entry)
                    .is_some_and(|stored| stored.type_name() == "compaction");
                let mut messages = Vec::new();
                for source in entry.messages.iter().filter(|_| !is_compaction) {
                    let message = session.message(source)?;
                    if message.role() != "system" {
                        messages.push(SourcedMessage {
                            source: *source,
                            message,
                        });
                    }
                }
                Ok(messages)
            })
            .collect::<Result<Vec<_>, CompactionError>>()?;
        taken.extend(parsed.into_iter().flatten());
    }
    Ok(taken)
}

/// The file operations of the messages of the projected entries in `range` (parsed again, on all
/// cores, a bounded step at a time, and let go): the part of a span left out of its window.
fn span_file_operations(
    session: &Session,
    projected: &[ProjectedEntry],
    range: std::ops::Range<usize>,
    file_operations: &mut FileOperations,
) -> Result<(), CompactionError> {
    let entries = projected.get(range).unwrap_or_default();
    for chunk in entries.chunks(SPAN_CHUNK) {
        let parsed = span_messages(session, chunk, 0..chunk.len())?;
        for message in &parsed {
            file_operations.add_from_message(&message.message);
        }
    }
    Ok(())
}

/// The span of the projected entries in `range`: whole when it fits a summary request, else its
/// window (see `window_bounds`) and the gap between its head and tail; the file operations of the
/// whole span are added to `file_operations`.
pub(crate) fn span(
    session: &Session,
    projected: &[ProjectedEntry],
    units: &[SpanUnit],
    range: std::ops::Range<usize>,
    file_operations: &mut FileOperations,
) -> Result<(Vec<SourcedMessage>, Option<SpanGap>), CompactionError> {
    let Some((head, tail)) = units.get(range.clone()).and_then(window_bounds) else {
        let messages = span_messages(session, projected, range)?;
        for message in &messages {
            file_operations.add_from_message(&message.message);
        }
        return Ok((messages, None));
    };
    let (head, tail) = (range.start + head, range.start + tail);
    let mut messages = span_messages(session, projected, range.start..head)?;
    span_file_operations(session, projected, head..tail, file_operations)?;
    let gap = SpanGap {
        at: messages.len(),
        messages: units[head..tail].iter().map(|unit| unit.messages).sum(),
    };
    messages.extend(span_messages(session, projected, tail..range.end)?);
    for message in &messages {
        file_operations.add_from_message(&message.message);
    }
    Ok((messages, Some(gap)))
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
    fn entries_of_several_messages_are_weighed_by_their_messages() {
        let pair = SpanUnit {
            messages: 2,
            tokens: 4,
        };
        let mut units = vec![pair; 30_000];
        // Entries that project nothing (compactions) weigh nothing.
        units[10] = SpanUnit::default();
        let (head, tail) = window_bounds(&units).unwrap();
        assert_eq!(head, 101, "200 messages and the empty entry");
        assert_eq!(units.len() - tail, (SPAN_WINDOW_MESSAGES - 200) / 2);
        assert_eq!(window_bounds(&units[..1_000]), None);
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
    fn a_first_message_longer_than_the_bounds_leaves_the_later_small_ones_in() {
        // One message over the whole bound, then a reply, a read call and its result: the model's
        // fit cuts the big message's oldest part; the small later ones stay whole.
        let huge = SpanUnit {
            messages: 1,
            tokens: SPAN_WINDOW_TOKENS + 250_000,
        };
        let small = SpanUnit {
            messages: 1,
            tokens: 10,
        };
        assert_eq!(window_bounds(&[huge, small, small, small]), None);
        let span: Vec<SourcedMessage> = std::iter::once("y".repeat(9_000_000))
            .chain(["a reply", "a read call", "its result"].map(str::to_owned))
            .map(|text| user(&text))
            .collect();
        let (kept, omitted) = span_window(&span);
        assert_eq!(omitted, 0);
        assert_eq!(text_of(&kept[1]), "a reply");
        assert_eq!(text_of(&kept[3]), "its result");
        // With more after it than the bound carries, the latest of those are kept up to the bound
        // less the head's share.
        let mut units = vec![huge];
        units.extend(vec![small; SPAN_WINDOW_MESSAGES + 10]);
        let (head, tail) = window_bounds(&units).unwrap();
        assert_eq!(head, 1);
        assert_eq!(units.len() - tail, SPAN_WINDOW_MESSAGES - 1);
    }

    #[test]
    fn a_history_request_carries_the_window_and_the_whole_conversation_as_text() {
        let count = SPAN_WINDOW_MESSAGES + 10_000;
        let preparation = crate::Preparation {
            first_kept_entry_id: "kept".to_owned(),
            messages_to_summarize: (0..count).map(|n| user(&format!("m{n}"))).collect(),
            turn_prefix_messages: Vec::new(),
            history_gap: None,
            turn_prefix_gap: None,
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

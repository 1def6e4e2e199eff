//! The replay's clock: the wall clock for a generated trace, the source's own times for a real
//! session.

use std::time::{SystemTime, UNIX_EPOCH};

use ctxkit_protocol::AgentMessage;

use crate::trace::Trace;

/// Epoch milliseconds now. The engine's stale-usage guard compares message timestamps with the
/// wall-clock timestamps of compaction entries, so messages are stamped with the wall clock too.
pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// `message` stamped `at` (epoch ms).
pub(super) fn stamped_at(message: &AgentMessage, at: i64) -> AgentMessage {
    let mut message = message.clone();
    let now = Some(at);
    match &mut message {
        AgentMessage::User(message) => message.timestamp = now,
        AgentMessage::Assistant(message) => message.timestamp = now,
        AgentMessage::ToolResult(message) => message.timestamp = now,
        AgentMessage::BashExecution(message) => message.timestamp = now,
        AgentMessage::Custom(message) => message.timestamp = now,
        AgentMessage::BranchSummary(message) => message.timestamp = now,
        AgentMessage::CompactionSummary(message) => message.timestamp = now,
        AgentMessage::Unknown(fields) => {
            fields.insert("timestamp".to_owned(), serde_json::json!(at));
        }
    }
    message
}

/// The clock messages are stamped with: the wall clock for a generated trace (its calls are
/// seconds apart), the source's own times for a real session (so idle gaps are what the user's
/// were: the engine sees them in the messages, and the provider's cache expires over them).
#[derive(Debug, Clone, Copy)]
pub(super) enum Clock {
    Wall,
    /// The latest source time seen (times never go back).
    Source(i64),
}

impl Clock {
    pub(super) fn of(trace: &Trace) -> Self {
        let first = trace
            .tasks
            .iter()
            .flat_map(|task| {
                task.prompt
                    .iter()
                    .map(AgentMessage::timestamp)
                    .chain(task.calls.iter().map(|call| call.reply.timestamp))
            })
            .flatten()
            .next();
        match first {
            Some(first) if trace.real => Self::Source(first),
            Some(_) | None => Self::Wall,
        }
    }

    /// Now, after `message` (whose own time, if any, moves a source clock forward).
    pub(super) fn advance(&mut self, message: Option<i64>) -> i64 {
        match self {
            Self::Wall => now_ms(),
            Self::Source(clock) => {
                if let Some(at) = message {
                    *clock = (*clock).max(at);
                }
                *clock
            }
        }
    }

    /// The request time and the cache lifetime, for the cache rule; `None` with the wall clock.
    pub(super) fn request_time(self, lifetime_ms: i64) -> Option<(i64, i64)> {
        match self {
            Self::Wall => None,
            Self::Source(clock) => Some((clock, lifetime_ms)),
        }
    }
}

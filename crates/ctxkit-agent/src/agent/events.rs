//! What the agent loop tells its caller: the events of a run as they happen, and how a prompt
//! ended.

use ctxkit_engine::CheckReport;
use ctxkit_llm::{ChatDelta, RetryNotice};
use ctxkit_protocol::{AssistantMessage, ToolCall};
use futures::future::BoxFuture;

use super::AfterCancelledCompaction;
use super::no_room::NoOutputRoom;
use crate::tool::ToolOutcome;

/// What the loop is doing, for a UI or a protocol client.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentEvent {
    /// An engine check ran (before the prompt, after a tool batch, after a run): its compaction
    /// events have been emitted on the engine's bus.
    Checked(CheckReport),
    /// A model request is about to be sent.
    ModelCall,
    /// Part of the reply as it streams in (the whole reply follows as [`AgentEvent::Reply`]).
    Delta(ChatDelta),
    /// The model's reply, as stored; `overflow` when it is a context-overflow error.
    Reply {
        reply: AssistantMessage,
        overflow: bool,
    },
    ToolStart {
        call: ToolCall,
    },
    /// The output a running call has written so far (`bash`: its last lines, redacted as its
    /// result will be), each report replacing the one before; [`AgentEvent::ToolEnd`] follows.
    ToolOutput {
        call_id: String,
        output: String,
    },
    ToolEnd {
        call: ToolCall,
        outcome: ToolOutcome,
    },
    /// The engine compacted after an overflow; the turn runs again without a new user message.
    Retry,
    /// The model request failed before its reply started (a 429, a 5xx, a network error, a
    /// timeout) and is sent again after `notice.delay`.
    ProviderRetry(RetryNotice),
    /// A message the user typed while the agent worked is sent with the next model call (it is
    /// stored as a user message right after this event); `follow_up` when it waited for the model
    /// to stop (`Steering::take_follow_ups`).
    Steered {
        text: String,
        follow_up: bool,
    },
    /// The user cancelled an automatic compaction (before the prompt, between two model calls):
    /// what the run does now (its engine events, the cancel among them, came first).
    CompactionCancelled(AfterCancelledCompaction),
    /// The next request would leave its reply less than its output floor and no compaction made
    /// room (it failed, there was nothing to compact, compaction is off): the run stops without
    /// sending it (its engine events, a failed compaction's among them, came first).
    NoOutputRoom(NoOutputRoom),
}

/// Receives the loop's events in order; the loop waits for each.
pub trait AgentObserver: Send + Sync {
    fn event<'a>(&'a self, event: AgentEvent) -> BoxFuture<'a, ()>;
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct IgnoreEvents;

impl AgentObserver for IgnoreEvents {
    fn event<'a>(&'a self, _event: AgentEvent) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// How a prompt (or a continued run) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptOutcome {
    /// The model ended its turn.
    Answered,
    /// The user interrupted the model or a tool.
    Interrupted,
    /// The compaction before the prompt was cancelled or made no room, and the prompt could not go
    /// out without it (the user stopped the run too, or it does not fit the window), so it was not
    /// stored: its text is given back.
    NotSent(String),
    /// The turn ended without an answer; the one-line reason (a provider error, an overflow that
    /// compaction could not fix). Everything up to here is stored.
    Failed(String),
}

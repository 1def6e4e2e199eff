//! A request whose reply would get less output room than its floor, after the compaction that
//! should have made room did not (the summary failed and `compaction.fallback` is `error`, there
//! was nothing left to compact, compaction is off): the run stops and says why instead of sending
//! it. Before, it went out with the room that was left, down to `max_tokens: 1`, and the reply was
//! cut to a token (QA r100: a summarizer answering HTTP 500 ended every run that way).

use ctxkit_engine::{CheckReport, Decision, EngineError, SkipReason};
use ctxkit_protocol::AgentMessage;

use std::sync::atomic::Ordering;

use super::model_call::ViewKind;
use super::{Agent, AgentEvent, AgentObserver};

/// Why no compaction made output room for a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoRoomCause {
    /// The compaction failed and wrote nothing; its error (the summarizer's, say).
    CompactionFailed(String),
    /// Everything since the last compaction is kept: there is nothing to summarize.
    NothingToCompact,
    /// Compaction is off (`compaction.enabled: false`).
    CompactionOff,
    /// A compaction was written, and what it keeps (`compaction.keepRecentTokens`, the turn in
    /// progress) still leaves the reply less than its floor.
    CompactedTooLittle,
    /// The prompt alone (with the system prompt and tools) leaves the reply too little room:
    /// no compaction could help, so none was made.
    PromptTooLarge,
}

impl NoRoomCause {
    /// Why the report of a room check that wrote no compaction (and was not cancelled) made none.
    pub(super) fn of(report: &CheckReport) -> Self {
        if let Some(error) = report.compaction.as_ref().and_then(|end| end.error.clone()) {
            return Self::CompactionFailed(error);
        }
        match report.decision {
            Decision::Skip(SkipReason::Disabled) => Self::CompactionOff,
            Decision::Skip(_)
            | Decision::RecoveryExhausted
            | Decision::Overflow
            | Decision::Threshold { .. } => Self::NothingToCompact,
        }
    }
}

/// A request that was not sent: about `tokens` estimated tokens, which leave its reply less than
/// `floor` output tokens in the model's `window`, and why no compaction made room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoOutputRoom {
    pub tokens: u64,
    pub window: u64,
    pub floor: u64,
    pub cause: NoRoomCause,
}

impl NoOutputRoom {
    /// The one-line reason the run stops with.
    pub fn reason(&self) -> String {
        let Self {
            tokens,
            window,
            floor,
            cause,
        } = self;
        let fits = format!(
            "The context (about {tokens} tokens) no longer fits the model's {window}-token \
             context window with room for a {floor}-token reply"
        );
        match cause {
            NoRoomCause::CompactionFailed(error) => format!(
                "{fits}, and the compaction that would make room failed, so nothing was sent: \
                 {error}"
            ),
            NoRoomCause::NothingToCompact => {
                format!("{fits}, and there is nothing left to compact, so nothing was sent")
            }
            NoRoomCause::CompactionOff => {
                format!("{fits}, and compaction is off (`compaction.enabled`), so nothing was sent")
            }
            NoRoomCause::CompactedTooLittle => format!(
                "{fits} even after compacting (what compaction keeps, \
                 `compaction.keepRecentTokens`, is too large for this window), so nothing was sent"
            ),
            NoRoomCause::PromptTooLarge => format!(
                "The message alone (about {tokens} tokens with the system prompt and tools) leaves \
                 no room for a reply in the model's {window}-token context window, whatever is \
                 compacted, so nothing was sent and nothing compacted"
            ),
        }
    }
}

impl Agent {
    /// The stop of a prompt too large to go out whatever is compacted: the request of `request`'s
    /// system prompt and tools with `prompt` alone leaves its reply less than the least the last
    /// resort sends with (`ctxkit_overflow::output_minimum`). `None` when it would fit. Checked
    /// before compacting for a prompt (QA: a 48 KB paste in a 16k window was compacted, paid for
    /// and written, then refused anyway).
    pub(super) fn prompt_alone_too_large(
        &self,
        mut request: ctxkit_llm::ChatRequest,
        prompt: &AgentMessage,
    ) -> Option<NoOutputRoom> {
        request.messages = vec![prompt.clone()];
        // The engine's projection is of the whole view; this request is measured as it is.
        request.projected_input_tokens = None;
        let room = self.model.output_room(&request)?;
        (room.room < ctxkit_overflow::output_minimum(room.floor)).then(|| NoOutputRoom {
            tokens: ctxkit_llm::request_input_tokens(&request),
            window: self.model.info().context_window,
            floor: room.floor,
            cause: NoRoomCause::PromptTooLarge,
        })
    }

    /// After a room check that made no room for `cause`: the next request (with `pending`, the
    /// prompt not stored yet) measured again; `None` when it goes out: its reply now gets its
    /// floor, or, the last resort, the request built from the shortened view (every long tool
    /// output cut to its marker, the turn in progress' too, `recall` returning each) gets at
    /// least `ctxkit_overflow::output_minimum` of it, and is sent with what room it has, as Pi
    /// does. What compaction keeps is the turn in progress, so without this a turn of large
    /// results left every later request refused (QA long workday: six reads in one turn). Else
    /// the run stops and `observer` is told why.
    pub(super) async fn without_room(
        &self,
        cause: NoRoomCause,
        pending: &[AgentMessage],
        observer: &dyn AgentObserver,
    ) -> Result<Option<NoOutputRoom>, EngineError> {
        let request = self.build_request_with(pending).await?;
        let Some(room) = self.model.output_room(&request) else {
            return Ok(None);
        };
        if room.room >= room.floor {
            return Ok(None);
        }
        let tokens = ctxkit_llm::request_input_tokens(&request);
        drop(request);
        let shortened = self.build_request_of(ViewKind::Shortened, pending).await?;
        let shortened_room = self.model.output_room(&shortened);
        if shortened_room
            .is_none_or(|room| room.room >= ctxkit_overflow::output_minimum(room.floor))
        {
            tracing::info!(
                tokens,
                shortened = ctxkit_llm::request_input_tokens(&shortened),
                "the request goes out with the turn's long tool output cut to markers"
            );
            self.shorten_next_view.store(true, Ordering::Relaxed);
            return Ok(None);
        }
        let stop = NoOutputRoom {
            tokens,
            window: self.model.info().context_window,
            floor: room.floor,
            cause,
        };
        observer.event(AgentEvent::NoOutputRoom(stop.clone())).await;
        Ok(Some(stop))
    }
}

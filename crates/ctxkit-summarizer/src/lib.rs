//! The summarizer interface for ctxkit, model-agnostic: one request (system prompt, one user message, a token
//! limit, an optional reasoning level) in, text and usage out. Providers, the offline summarizer and
//! test fakes implement it.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

use ctxkit_protocol::Usage;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// Which summary a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPurpose {
    /// The history before the cut (or its update).
    History,
    /// The beginning of a split turn.
    TurnPrefix,
    /// An abandoned branch.
    Branch,
}

/// One summary request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryRequest {
    pub purpose: SummaryPurpose,
    pub system_prompt: String,
    /// The single user message.
    pub user_text: String,
    pub max_tokens: u64,
    /// The reasoning level, when the summarizer supports one and it is not `off`.
    pub reasoning: Option<String>,
}

/// A summarizer's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryResponse {
    /// The text blocks of the answer joined by `\n`.
    pub text: String,
    /// Usage as reported, when the summarizer talks to a model.
    pub usage: Option<Usage>,
}

/// A failed summary request; the message is shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SummarizerError {
    pub message: String,
}

/// Something that writes summaries.
pub trait Summarizer: Send + Sync {
    /// A name recorded with each compaction (`offline`, `anthropic/claude-…`).
    fn name(&self) -> String;

    /// Whether requests may carry a reasoning level.
    fn supports_reasoning(&self) -> bool;

    /// Answers one request. Implementations should stop promptly once `cancel` fires; the runner
    /// drops the future then in any case.
    fn summarize(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>>;
}

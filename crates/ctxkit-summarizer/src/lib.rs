//! The summarizer interface for ctxkit, model-agnostic: one request (system prompt, one user message, a token
//! limit, an optional reasoning level) in, text and usage out; or, for a model that can, the same
//! request continuing a conversation (a cache-prefix request). Providers, the offline summarizer and
//! test fakes implement it.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

use ctxkit_protocol::{AgentMessage, Usage};
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

/// A tool the model may call, as a conversation request declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A JSON Schema of its arguments (an object schema).
    pub parameters: serde_json::Value,
}

/// The conversation a cache-prefix summary request continues (`compaction.cachePrefix`): the agent's
/// last model request as it was sent, followed by what the session gained since (the reply, tool
/// results). A summarizer for the same model sends it unchanged, so the provider reads it from its
/// prompt cache, and appends the summary instruction as one more user message.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationPrefix {
    /// The provider of the model that answered the request.
    pub provider: String,
    /// That model's id.
    pub model: String,
    pub system_prompt: String,
    /// The request's messages, then the messages appended to the session after it.
    pub messages: Vec<AgentMessage>,
    /// How many of `messages` the request itself sent.
    pub request_messages: usize,
    pub tools: Vec<ToolDefinition>,
    /// The request's reasoning level (`minimal` … `xhigh`), `None` for none.
    pub reasoning: Option<String>,
    /// What the request told the provider's prompt cache; a summary continuing it tells the same,
    /// so it reads the same cache entry.
    pub cache: CacheHints,
}

/// What a conversation request tells the provider's prompt cache beside its bytes. A request
/// built outside a session (a test, a one-off) leaves both unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheHints {
    /// The key that keeps a session's requests on one cache (OpenAI's `prompt_cache_key`, Pi
    /// 1.6.0's): the session's id. `None`: no key is sent.
    pub key: Option<String>,
    /// The tool call id of the last tool result of the request's messages the prune layer cut (the
    /// view knows it; a result's text is never read for it): the end of the part of the
    /// conversation that stays the same from request to request, where Anthropic Messages puts a
    /// cache breakpoint. `None` while nothing is cut.
    pub stable_prefix_end: Option<String>,
}

/// What a summary request covers, as structure: the span's messages, the earlier summary and the
/// files the span read and changed. A summarizer that reads structure rather than text (the offline
/// one) uses it; a model summarizer sends `user_text`, which holds the same span serialized.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummarySpan {
    /// The messages to summarize, as the session holds them: all of them, or for a span longer
    /// than a model could read, its beginning and its latest messages (the compaction's window,
    /// `ctxkit_compaction::SPAN_WINDOW_MESSAGES`).
    pub messages: Vec<AgentMessage>,
    /// How many of the span's messages `messages` leaves out, between its beginning and its
    /// latest messages (0: the whole span).
    pub omitted_messages: usize,
    /// The earlier summary an update starts from.
    pub previous_summary: Option<String>,
    /// Files the span (and the earlier summary's lists) read and did not change.
    pub read_files: Vec<String>,
    /// Files the span (and the earlier summary's lists) changed.
    pub modified_files: Vec<String>,
    /// What the user asked the summary to focus on (`/compact <focus>`, `--focus`), if anything.
    pub focus: Option<String>,
    /// The room the compaction leaves for its summary (0.8 × `reserveTokens` for the history, 0.5 ×
    /// for a turn prefix: the limits Pi 0.87 sent), for summarizers that size their text themselves
    /// (the offline one) when the request carries no `max_tokens`. Never sent to a model.
    pub room_tokens: Option<u64>,
    /// The summary is added after an earlier one the compaction keeps as written
    /// (`compaction.appendSummaryTokens`): what that one says need not be said again, so a
    /// summarizer may leave out the sections the span adds nothing to.
    pub continues_summary: bool,
}

/// One summary request.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub purpose: SummaryPurpose,
    /// The system prompt of a fresh request (a request continuing a conversation sends the
    /// conversation's).
    pub system_prompt: String,
    /// The single user message: the serialized span and the instructions, or, continuing a
    /// conversation, the instructions alone.
    pub user_text: String,
    /// The output limit; `None` (every compaction and branch summary since Pi 1.6) lets the provider
    /// layer fit the model's own output limit into its context window.
    pub max_tokens: Option<u64>,
    /// The reasoning level, when the summarizer supports one and it is not `off`.
    pub reasoning: Option<String>,
    /// The span as structure (empty when the caller has only text).
    pub source: SummarySpan,
}

/// A summarizer's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryResponse {
    /// The text blocks of the answer joined by `\n`.
    pub text: String,
    /// Usage as reported, when the summarizer talks to a model.
    pub usage: Option<Usage>,
}

/// What a provider's on-demand compaction returned (Anthropic, beta `compact-2026-09-04`): the
/// readable summary and the block as received, which later requests to the same model send back in
/// place of the summarized messages.
#[derive(Debug, Clone, PartialEq)]
pub struct OnDemandCompaction {
    /// The block's readable summary.
    pub summary: String,
    /// The block exactly as the provider sent it (signed).
    pub block: serde_json::Value,
    /// The provider, API and model that wrote it (the only ones the block is sent back to).
    pub provider: String,
    pub api: String,
    pub model: String,
    pub usage: Option<Usage>,
}

/// A failed summary request; the message is shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SummarizerError {
    pub message: String,
    /// Whether another form of the request might succeed where this one failed.
    pub kind: FailureKind,
}

/// What a failed summary request says about asking again in another form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The failure may belong to this request (a refusal, an unreadable or unusable answer): a
    /// fresh summary prompt in place of a continued conversation may succeed.
    Request,
    /// The provider failed whatever it was sent (a 5xx, a 429, a network failure or a timeout,
    /// after the retries the client makes): another form of the request would go through the
    /// same retries and fail the same way (round 97: `/compact` retried twice over, 29 s).
    Provider,
}

impl SummarizerError {
    /// A failure that may belong to the request ([`FailureKind::Request`]).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: FailureKind::Request,
        }
    }

    /// A failure of the provider whatever it is sent ([`FailureKind::Provider`]).
    pub fn of_provider(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: FailureKind::Provider,
        }
    }
}

/// Something that writes summaries.
pub trait Summarizer: Send + Sync {
    /// A name recorded with each compaction (`offline`, `anthropic/claude-…`).
    fn name(&self) -> String;

    /// Whether requests may carry a reasoning level.
    fn supports_reasoning(&self) -> bool;

    /// Whether this summarizer can continue `prefix` (send it unchanged with the instruction
    /// appended): only a model summarizer for the prefix's own provider and model can. By default
    /// none can, and requests are fresh prompts.
    fn can_continue(&self, prefix: &ConversationPrefix) -> bool {
        let _ = prefix;
        false
    }

    /// The most characters (UTF-16 units) the user text of a fresh request with `system_prompt`
    /// may hold for the model to read all of it and keep room for its reply; `None` (the default)
    /// when the summarizer reads any length, as the offline one does, or does not know its model's
    /// window. A compaction whose span is longer summarizes it in chunks of this size, in order.
    fn max_request_chars(&self, system_prompt: &str) -> Option<usize> {
        let _ = system_prompt;
        None
    }

    /// Answers one request. Implementations should stop promptly once `cancel` fires; the runner
    /// drops the future then in any case.
    fn summarize(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>>;

    /// Answers one request by continuing `prefix`: the conversation sent again unchanged, then
    /// `request.user_text` as one more user message (`request.system_prompt` is not sent). Called
    /// only with a prefix [`Summarizer::can_continue`] accepted; the default, for summarizers that
    /// accept none, answers the request alone.
    fn summarize_continuing(
        &self,
        request: SummaryRequest,
        prefix: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        let _ = prefix;
        self.summarize(request, cancel)
    }

    /// Whether this summarizer can ask the provider to compact `prefix` itself (on-demand
    /// compaction): only the conversation's own model on a provider that offers it. None by
    /// default.
    fn can_compact_on_demand(&self, prefix: &ConversationPrefix) -> bool {
        let _ = prefix;
        false
    }

    /// Sends `span` (the conversation's system prompt, tools and reasoning, with the messages to
    /// summarize as its messages) as an on-demand compaction request. Called only with a prefix
    /// [`Summarizer::can_compact_on_demand`] accepted; the default refuses.
    fn compact_on_demand(
        &self,
        span: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<OnDemandCompaction, SummarizerError>> {
        let _ = (span, cancel);
        let message = format!("{} cannot compact on demand", self.name());
        Box::pin(async move { Err(SummarizerError::new(message)) })
    }
}

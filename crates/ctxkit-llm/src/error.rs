//! Errors of model requests and provider configuration. Messages keep the provider's own error
//! text and never contain an API key.

use std::time::Duration;

use crate::overflow;

/// A failed model request or an unusable configuration.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The provider answered with a non-success HTTP status. Returned by every provider after
    /// retries are exhausted (429, 5xx) or at once (other 4xx). `body` is the provider's raw error
    /// text; check [`LlmError::is_context_overflow`] before reporting it, and compact on overflow.
    #[error("Provider `{provider}` returned HTTP {status}: {}", one_line(body))]
    Http {
        provider: String,
        status: u16,
        body: String,
        /// The delay the provider asked for (`Retry-After`, `retry-after-ms`).
        retry_after: Option<Duration>,
    },
    /// The request could not be sent or its answer not read (connection refused, reset, DNS).
    /// Retried; returned when retries are exhausted. Check the base URL and the network.
    #[error("Request to provider `{provider}` failed: {message}")]
    Network { provider: String, message: String },
    /// No answer within the configured request timeout. Retried like a network error.
    #[error("Request to provider `{provider}` timed out after {}s", timeout.as_secs_f64())]
    Timeout { provider: String, timeout: Duration },
    /// The provider asked to wait longer than the configured maximum retry delay.
    #[error(
        "Provider `{provider}` asked to retry after {}s, more than the allowed {}s: {}",
        retry_after.as_secs(), max_delay.as_secs(), one_line(body)
    )]
    RetryDelayTooLong {
        provider: String,
        retry_after: Duration,
        max_delay: Duration,
        body: String,
    },
    /// The cancellation token fired. Nothing to report to the user as a failure.
    #[error("Request to provider `{provider}` was cancelled")]
    Cancelled { provider: String },
    /// A success status with a body that is not the provider's documented format.
    #[error(
        "Provider `{provider}` sent an unreadable answer: {message}: {}",
        one_line(body)
    )]
    InvalidResponse {
        provider: String,
        message: String,
        body: String,
    },
    /// A summary request answered with something that is not a whole summary: cut at the token cap
    /// (`length`), or a tool call (Pi 0.87 fails both). Nothing is written; retry with a larger
    /// output limit or another model.
    #[error("Provider `{provider}` gave no usable summary: {reason}")]
    UnusableSummary {
        provider: String,
        reason: &'static str,
    },
    /// A successful reply shows the prompt did not fit (silent truncation, or a `length` stop with
    /// no output that filled the window). The caller should compact or use a larger model.
    #[error(
        "Provider `{provider}` silently overflowed the context window: {used} input tokens for a window of {window}"
    )]
    SilentOverflow {
        provider: String,
        used: u64,
        window: u64,
    },
    /// No API key was configured for a provider that needs one.
    #[error("No API key for provider `{provider}`; set `{env_var}` or the `llm.apiKey` setting")]
    MissingApiKey { provider: String, env_var: String },
    /// The provider name is neither built in nor declared (a model of it in `llm.models`, or the
    /// `defaultProvider`), or a declared one has no API kind or base URL.
    #[error(
        "Unknown provider `{provider}`: not built in (`ctxkit models` lists them) and no model of it in `llm.models`; to use your own endpoint, add the model to `llm.models` and set `llm.baseUrl` and `llm.api`"
    )]
    UnknownProvider { provider: String },
    /// A model reference without a model id (`anthropic/`).
    #[error("Invalid model `{spec}`; expected `provider/model-id`")]
    InvalidModel { spec: String },
    /// A configured header name or value is not valid HTTP. The value is never shown.
    #[error("Invalid HTTP header `{name}`")]
    InvalidHeader { name: String },
    /// The HTTP client could not be built (TLS initialisation).
    #[error("Could not create the HTTP client: {message}")]
    Client { message: String },
    /// Conversations with tools (`ModelClient::chat`) are not implemented over this wire format;
    /// configure a provider that speaks OpenAI Chat Completions (`llm.api: openai-completions`).
    #[error(
        "Provider `{provider}` speaks `{api}`, which `ctxkit chat` does not support yet; use an OpenAI-compatible Chat Completions provider"
    )]
    UnsupportedApi { provider: String, api: &'static str },
}

impl LlmError {
    /// `true` when this error says the prompt did not fit the model's context window.
    ///
    /// An empty 400/413 body counts from Cerebras only, as the reference's `400 status code (no body)`.
    pub fn is_context_overflow(&self) -> bool {
        match self {
            Self::Http {
                provider,
                status,
                body,
                ..
            } => {
                let provider = Some(provider.as_str());
                if body.trim().is_empty() {
                    overflow::is_overflow_error_text_from(
                        &format!("{status} status code (no body)"),
                        provider,
                    )
                } else {
                    overflow::is_overflow_error_text_from(body, provider)
                }
            }
            Self::SilentOverflow { .. } => true,
            Self::Network { .. }
            | Self::Timeout { .. }
            | Self::RetryDelayTooLong { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::UnusableSummary { .. }
            | Self::MissingApiKey { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::UnsupportedApi { .. } => false,
        }
    }

    /// `true` when the same request may succeed later: 429, 5xx, network errors and timeouts,
    /// but never a context overflow.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http { status, .. } => {
                (*status == 429 || *status >= 500) && !self.is_context_overflow()
            }
            Self::Network { .. } | Self::Timeout { .. } => true,
            Self::RetryDelayTooLong { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::UnusableSummary { .. }
            | Self::SilentOverflow { .. }
            | Self::MissingApiKey { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::UnsupportedApi { .. } => false,
        }
    }
}

/// Error bodies are often pretty-printed JSON; messages are one line.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.is_empty() {
        "(no body)".to_owned()
    } else {
        joined
    }
}

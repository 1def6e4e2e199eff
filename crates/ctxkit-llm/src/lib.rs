//! Model providers for ctxkit: Anthropic Messages, OpenAI Chat Completions (and every compatible
//! server), OpenAI Responses and Google Gemini over one HTTP client, with retries, time limits, cancellation,
//! context-overflow detection, and configuration from options and a caller-supplied environment.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod betas;
mod cache_warming;
mod chat;
mod chat_compat;
mod chat_stream;
mod client;
mod config;
mod continuation;
mod echoes;
mod endpoint;
mod error;
mod failure;
mod http;
mod learned;
mod models;
mod on_demand;
mod output_limit;
mod retry;
mod stream;
mod stream_read;
mod summary_fit;
mod threads;
mod wire;

pub use betas::take_notices;
pub use cache_warming::{
    IDLE_CONTINUATION_PROBABILITY, MAX_IDLE_AGE, MAX_STREAMING_AGE, MINIMUM_EXPECTED_SAVINGS,
    WarmingDecision, WarmingPhase, evaluate_cache_warming, warming_delay,
};
pub use chat::{ChatRequest, OutputRoom, request_input_tokens};
pub use chat_compat::{ChatCompat, ThinkingFormat};
pub use client::ModelClient;
pub use config::{
    DEFAULT_MAX_REPLY_BYTES, DEFAULT_TIMEOUT, EnvSettings, ForeignRoute, LlmOptions, ModelCost,
    ModelRole, ModelSpec, OwnEndpoint, ProviderConfig, ThinkingBudgets, UnreadableRoutes,
    model_limits, resolve_model,
};
pub use error::{LlmError, Retried, host_of};
pub use failure::{ReplyFailure, credentials_hint, reply_failure};
pub use http::{
    DEFAULT_CONNECT_SECONDS, DEFAULT_FIRST_BYTE_SECONDS, DEFAULT_IDLE_SECONDS, HttpClient, Proxies,
    TimeoutPhase, Timeouts,
};
pub use models::{
    Api, DEFAULT_MODELS, MaxTokensField, ModelLimits, ModelTable, PROVIDERS, ProviderInfo,
    find_provider,
};
pub use output_limit::{CHARS_PER_TOKEN, estimate_request_tokens, fit_output_limit};
pub use retry::{RetryNotice, RetryPolicy};
pub use stream::{ChatDelta, DeltaSink};
pub use threads::{MessageThreads, THREAD_LIFETIME};
pub use wire::anthropic_cache::CacheRetention;
pub use wire::anthropic_context::AnthropicContextEditing;
pub use wire::provider_compaction::{AnthropicCompaction, OpenAiCompaction};
pub use wire::{Completion, CompletionRequest, ReasoningLevel};

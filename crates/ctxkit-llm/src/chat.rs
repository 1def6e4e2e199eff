//! Conversations with tools: [`ModelClient::chat`] sends a system prompt, the model's view (Pi's
//! messages) and tool definitions, and answers with one Pi-format assistant message. Provider
//! failures become replies too ([`ModelClient::failed_reply`]), so an agent loop can store them and
//! the engine can recognise an overflow from the provider's own error text.

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AgentMessage, AssistantMessage, JsonObject, Usage};
use ctxkit_summarizer::ToolDefinition;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::ModelClient;
use crate::error::LlmError;
use crate::models::Api;
use crate::wire::{self, ReasoningLevel};

/// The output room of a request against its floor ([`ModelClient::output_room`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputRoom {
    /// The output limit the request would carry.
    pub room: u64,
    /// The least it may carry: the model's output limit, within an eighth of the window.
    pub floor: u64,
}

/// One model call of a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub system_prompt: String,
    /// The model's view: user, assistant and tool-result messages in order (other roles are sent as
    /// user text; failed replies are left out).
    pub messages: Vec<AgentMessage>,
    pub tools: Vec<ToolDefinition>,
    /// Output tokens for the reply; `None` leaves the provider's default.
    pub max_tokens: Option<u64>,
    pub reasoning: Option<ReasoningLevel>,
    /// This request's prompt-cache lifetime instead of the model's (`llm.anthropic.cacheRetention`):
    /// the engine asks for the hour when the session's pauses pay for it
    /// (`transforms.longCacheWhenItPays`). `None`: the model's. Only Anthropic Messages reads it,
    /// and a model set to cache nothing (`none`) stays uncached.
    pub cache_retention: Option<crate::CacheRetention>,
    /// What the request tells the prompt cache: its key (the session's id; OpenAI's
    /// `prompt_cache_key`) and the end of the conversation's stable prefix (Anthropic's fourth
    /// breakpoint). Default: neither.
    pub cache: ctxkit_summarizer::CacheHints,
    /// The caller's projection of the input the provider will count for this request (an agent's
    /// engine: the last request's count plus the estimated change of its view since, so what the
    /// context transforms cut since is not counted). The output limit is fitted to it in place of
    /// the provider layer's own estimate (the last reply's usage plus every message after it);
    /// `None`: that estimate.
    pub projected_input_tokens: Option<u64>,
}

impl ModelClient {
    /// Sends one conversation request (with retries, stopping when `cancel` fires) and returns the
    /// reply with `provider`, `model`, `api`, `usage`, `stopReason` and the time it arrived.
    pub async fn chat(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, LlmError> {
        let reply = match self.chat_once(request, cancel).await {
            Err(error) => match self.refitted(request, &error) {
                Some(refitted) => self.chat_once(&refitted, cancel).await,
                None => Err(error),
            },
            reply => reply,
        };
        let reply = self.learn_from(reply)?;
        if !self.paused_after_compaction(&reply) {
            return Ok(reply);
        }
        let next = self
            .chat_once(&continuation(request, &reply), cancel)
            .await?;
        Ok(after_pause(reply, next))
    }

    async fn chat_once(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<AssistantMessage, LlmError> {
        let wire = self.chat_wire(request);
        let headers = self.headers(&wire.url, &wire.headers)?;
        let body = wire.body.to_string();
        let text = match self.post_reply(&wire.url, &headers, &body, cancel).await {
            Ok(text) => text,
            // A refused beta is remembered for the endpoint; the request goes once more without it.
            Err(error) if self.remember_refused_betas(&error, &wire.url, &headers) => {
                let headers = self.headers(&wire.url, &wire.headers)?;
                self.post_reply(&wire.url, &headers, &body, cancel).await?
            }
            Err(error) => return Err(error),
        };
        let mut reply = self.parse_chat(&text)?;
        self.stamp_reply(&mut reply, request);
        Ok(reply)
    }

    /// Whether `reply` is Anthropic's pause after a compaction (`pause_after_compaction`): the
    /// compaction block and nothing else. The client then asks for the answer itself.
    pub(crate) fn paused_after_compaction(&self, reply: &AssistantMessage) -> bool {
        self.config()
            .anthropic_compaction
            .as_ref()
            .is_some_and(|compaction| compaction.pause_after_compaction)
            && reply.provider_compaction().is_some()
            && reply.content.is_empty()
            && !reply.is_aborted_or_error()
    }

    pub(crate) fn chat_wire(&self, request: &ChatRequest) -> wire::WireRequest {
        let config = self.config();
        let mut fitted = self.fitted(request);
        // A model the table knows not to reason is sent no reasoning level.
        if config
            .model_info
            .as_ref()
            .is_some_and(|model| !model.reasoning)
        {
            let reasoned = fitted.get_or_insert_with(|| request.clone());
            reasoned.reasoning = None;
        }
        let request = fitted.as_ref().unwrap_or(request);
        match config.api {
            Api::OpenAiChat => wire::openai_chat_tools::build(config, request),
            Api::AnthropicMessages => wire::anthropic_tools::build(config, request),
            Api::OpenAiResponses => wire::openai_responses_tools::build(config, request),
            Api::Gemini => wire::gemini_tools::build(config, request),
        }
    }

    /// `request` with its output limit fitted into the model's window (Pi 1.6): the request's own
    /// limit, else the model's, at most what the window leaves after the estimated input and a
    /// margin. `None` when the model table does not know the model (nothing to fit).
    fn fitted(&self, request: &ChatRequest) -> Option<ChatRequest> {
        let max_tokens = self.fitted_max_tokens(request)?;
        Some(ChatRequest {
            max_tokens: Some(max_tokens),
            ..request.clone()
        })
    }

    /// `request` again with the output room a refusal over the reply's room leaves
    /// (`ctxkit_overflow::refitted_output`): the provider stated its exact count of the input
    /// (`12021 + 4096 > 16000`), and that input fits with a smaller reply, at least the request's
    /// floor. Pi 1.6 fits its output limit with a 4,096-token margin and so sent this request with
    /// room to spare; ctxkit's margin is a sixteenth of the window, and the estimate of Chinese text
    /// at four characters a token is a quarter of the provider's count (QA r107). `None`: the
    /// error is no such refusal, or only a compaction makes room.
    pub(crate) fn refitted(&self, request: &ChatRequest, error: &LlmError) -> Option<ChatRequest> {
        let LlmError::Http { body, .. } = error else {
            return None;
        };
        let stated = ctxkit_overflow::stated_room(body)?;
        let model = self.config().model_info.as_ref()?;
        let fitted = self.fitted_max_tokens(request)?;
        let own = request.max_tokens.unwrap_or(model.max_output);
        let floor = ctxkit_overflow::output_floor(stated.limit, own);
        // What the wire adds to the request's own limit (a thinking budget) stays added.
        let added = stated.output.saturating_sub(fitted);
        let room = ctxkit_overflow::refitted_output(stated, floor.saturating_add(added))?;
        let max_tokens = room - added;
        tracing::info!(
            counted = stated.input,
            limit = stated.limit,
            max_tokens,
            "the provider refused the reply's room: sending again with the room its count leaves"
        );
        Some(ChatRequest {
            max_tokens: Some(max_tokens),
            ..request.clone()
        })
    }

    /// The output limit [`Self::fitted`] gives `request`, without copying the request (its
    /// messages may be a session's million).
    fn fitted_max_tokens(&self, request: &ChatRequest) -> Option<u64> {
        let model = self.config().model_info.as_ref()?;
        let requested = match (request.max_tokens, model.max_output) {
            (Some(tokens), 0) => tokens,
            (Some(tokens), own) => tokens.min(own),
            (None, 0) => return None,
            (None, own) => own,
        };
        let input = request_input_tokens(request);
        let window = self.planning_window().unwrap_or(model.context_window);
        Some(crate::output_limit::fit_output_limit(
            requested, window, input,
        ))
    }

    /// The output room `request` would go out with and the floor it must not fall below
    /// (`ctxkit_overflow::output_floor`); `None` when the model's window is unknown. An agent
    /// compacts before sending a request whose room is under the floor.
    pub fn output_room(&self, request: &ChatRequest) -> Option<OutputRoom> {
        let model = self.config().model_info.as_ref()?;
        let window = self.planning_window()?;
        if window == 0 {
            return None;
        }
        let room = self.fitted_max_tokens(request)?;
        let own = match (request.max_tokens, model.max_output) {
            (Some(tokens), 0) => tokens,
            (Some(tokens), own) => tokens.min(own),
            (None, own) => own,
        };
        Some(OutputRoom {
            room,
            floor: ctxkit_overflow::output_floor(window, own),
        })
    }

    /// A whole (not streamed) conversation response, without provider, model or timestamp.
    pub(crate) fn parse_chat(&self, text: &str) -> Result<AssistantMessage, LlmError> {
        let config = self.config();
        let invalid = |message: &str| LlmError::InvalidResponse {
            provider: config.provider.clone(),
            message: message.to_owned(),
            body: self.redacted(text),
        };
        let value: Value = serde_json::from_str(text).map_err(|_| invalid("not JSON"))?;
        let parsed = match config.api {
            Api::OpenAiChat => wire::openai_chat_tools::parse(&value),
            Api::AnthropicMessages => wire::anthropic_tools::parse(&value),
            Api::OpenAiResponses => wire::openai_responses_tools::parse(&value),
            Api::Gemini => wire::gemini_tools::parse(&value),
        };
        parsed.map_err(invalid)
    }

    /// The reply an agent loop stores for a failed call: `stopReason` `aborted` when cancelled,
    /// else `error`, with the provider's raw error text (`<status> <body>`) in `errorMessage` so
    /// overflow detection reads the provider's own wording; a retried one adds a line saying how
    /// often and over how long (`(ctxkit: tried 4 times over 14.2 s)`), which
    /// [`crate::reply_failure`] shows as the error's own message does.
    pub fn failed_reply(&self, error: &LlmError) -> AssistantMessage {
        let (stop_reason, error_message) = match error {
            LlmError::Cancelled { .. } => (StopReason::Aborted, "Request was aborted".to_owned()),
            LlmError::Http {
                status,
                body,
                retried,
                ..
            } => {
                let text = if body.trim().is_empty() {
                    format!("{status} status code (no body)")
                } else {
                    format!("{status} {body}")
                };
                // The attempts on a line of their own after the provider's text, which overflow
                // detection reads (a retried error is never an overflow).
                let text = match retried.stored_line() {
                    Some(line) => format!("{text}\n{line}"),
                    None => text,
                };
                (StopReason::Error, text)
            }
            LlmError::Network { .. }
            | LlmError::StreamFailed { .. }
            | LlmError::Redirected { .. }
            | LlmError::Timeout { .. }
            | LlmError::RetryDelayTooLong { .. }
            | LlmError::InvalidResponse { .. }
            | LlmError::ReplyFailed { .. }
            | LlmError::UnusableSummary { .. }
            | LlmError::SilentOverflow { .. }
            | LlmError::MissingApiKey { .. }
            | LlmError::EndpointOfAnotherProvider { .. }
            | LlmError::UnownedEndpoint { .. }
            | LlmError::TwoEndpoints { .. }
            | LlmError::RoutedElsewhere { .. }
            | LlmError::PiRoutesUnknown { .. }
            | LlmError::UnknownProvider { .. }
            | LlmError::InvalidModel { .. }
            | LlmError::InvalidHeader { .. }
            | LlmError::Client { .. }
            | LlmError::BetaRefused { .. } => (StopReason::Error, error.to_string()),
        };
        let mut reply = AssistantMessage {
            content: Vec::new(),
            api: None,
            provider: None,
            model: None,
            usage: Some(Usage::default()),
            stop_reason: Some(stop_reason.as_str().to_owned()),
            error_message: Some(error_message),
            timestamp: None,
            extra: JsonObject::new(),
        };
        self.stamp(&mut reply);
        reply
    }

    /// [`Self::stamp`]s the reply to `request`, its cache writes attributed to the lifetime the
    /// request wrote with when the API did not say (Anthropic).
    pub(crate) fn stamp_reply(&self, reply: &mut AssistantMessage, request: &ChatRequest) {
        let config = self.config();
        if config.api == Api::AnthropicMessages
            && let Some(usage) = reply.usage.as_mut()
        {
            let retention =
                crate::CacheRetention::for_request(config.cache_retention, request.cache_retention);
            crate::wire::anthropic_cache::attribute_cache_writes(usage, retention);
        }
        self.stamp(reply);
    }

    /// Marks `reply` as this model's and takes out of it the credentials this client sent (every
    /// reply a client returns passes here).
    pub(crate) fn stamp(&self, reply: &mut AssistantMessage) {
        self.reply_secrets().redact_reply(reply);
        self.redact_error_message(reply);
        let config = self.config();
        reply.api = Some(config.api.as_str().to_owned());
        reply.provider = Some(config.provider.clone());
        reply.model = Some(config.model.clone());
        reply.timestamp = Some(chrono::Utc::now().timestamp_millis());
        // Pi's footer and statistics read `usage.cost.total` unguarded: always write a cost.
        if let Some(usage) = reply.usage.as_mut()
            && usage.cost.is_none()
        {
            usage.cost = Some(ctxkit_models::usage_cost(usage, config.prices.as_ref()));
        }
    }
}

/// The request that continues after a pause: the same conversation with the paused reply (the
/// compaction block alone) as its last message, which the API continues from.
pub(crate) fn continuation(request: &ChatRequest, paused: &AssistantMessage) -> ChatRequest {
    let mut next = request.clone();
    next.messages.push(AgentMessage::Assistant(paused.clone()));
    // The provider compacted the conversation: the projection describes the request before it.
    next.projected_input_tokens = None;
    next
}

/// The input tokens a request's output limit is fitted to: the provider layer's estimate
/// ([`crate::output_limit::estimate_request_tokens`], Pi's rule: the last reply's usage plus every
/// message after it), or the caller's projection when it gave a lower one (the context transforms
/// cut what that usage counted). Never above Pi's rule: a projection in a provider's count that
/// runs over ctxkit's estimate (an over-count learnt) does not shrink the room Pi's rule leaves.
pub fn request_input_tokens(request: &ChatRequest) -> u64 {
    let estimate = crate::output_limit::estimate_request_tokens(
        &request.system_prompt,
        &request.tools,
        &request.messages,
    );
    request
        .projected_input_tokens
        .map_or(estimate, |projected| projected.min(estimate))
}

/// One reply for both calls: the continuation's content, usage (its input is the context now) and
/// stop reason, the paused call's compaction block, output tokens and cost added, and the paused
/// call's tokens as the compaction's `usage.iterations` entry when the API reported none.
pub(crate) fn after_pause(
    paused: AssistantMessage,
    mut next: AssistantMessage,
) -> AssistantMessage {
    if next.is_aborted_or_error() {
        // The failed continuation is what the loop must see (overflow recovery, retries); its
        // retry sends the same conversation, and the provider compacts it again.
        return next;
    }
    if let Some(block) = paused.provider_compaction() {
        next.set_provider_compaction(block.clone());
    }
    if let (Some(usage), Some(first)) = (next.usage.as_mut(), paused.usage.as_ref()) {
        // The paused call was the compaction's: recorded as its iteration when the API gave none.
        if !usage.extra.contains_key("iterations") {
            usage.extra.insert(
                "iterations".to_owned(),
                serde_json::json!([{"type": "compaction", "input_tokens": first.input,
                    "output_tokens": first.output}]),
            );
        }
        usage.output += first.output;
        usage.total_tokens += first.output;
        if let (Some(cost), Some(first_cost)) = (usage.cost.as_mut(), first.cost.as_ref()) {
            cost.add(first_cost);
        }
    }
    next
}

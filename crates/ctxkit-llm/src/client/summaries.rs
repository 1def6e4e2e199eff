//! The model client as the compaction crate's [`Summarizer`]: the windows a summary is fitted
//! into, the summary request itself, and on-demand compaction.

use ctxkit_overflow::{StopReason, is_reply_overflow};
use ctxkit_protocol::AssistantMessage;
use ctxkit_summarizer::{
    ConversationPrefix, OnDemandCompaction, Summarizer, SummarizerError, SummaryRequest,
    SummaryResponse,
};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::{ModelClient, UNKNOWN_MODEL_SUMMARY_TOKENS};
use crate::error::LlmError;
use crate::wire::{CompletionRequest, ReasoningLevel};

impl ModelClient {
    /// The window output limits are fitted into: the model's, or the limit the provider stated in
    /// an overflow error when lower (learned for the process); `None` when the model is unknown.
    pub fn planning_window(&self) -> Option<u64> {
        let configured = self.context_window()?;
        Some(crate::learned::window(
            &self.config.base_url,
            &self.config.model,
            configured,
        ))
    }

    /// Learns the real limit from an overflow `result` states (an HTTP error or an error reply).
    pub(crate) fn learn_from(
        &self,
        result: Result<AssistantMessage, LlmError>,
    ) -> Result<AssistantMessage, LlmError> {
        let text = match &result {
            Ok(reply) => reply.error_message.clone(),
            Err(LlmError::Http { body, .. }) => Some(body.clone()),
            Err(_) => None,
        };
        if let Some(text) = text {
            crate::learned::learn(
                &self.config.base_url,
                &self.config.model,
                self.context_window().unwrap_or(0),
                &text,
            );
        }
        result
    }

    /// The context window of the model, when the model table knows it.
    pub fn context_window(&self) -> Option<u64> {
        self.config
            .model_info
            .as_ref()
            .map(|model| model.context_window)
    }

    /// The output limit of a summary request (Pi 1.6): the request's own, else the model's output
    /// limit, fitted into the window after the estimated input (the conversation when continuing
    /// one). Without a known model, [`UNKNOWN_MODEL_SUMMARY_TOKENS`].
    fn summary_output_limit(
        &self,
        request: &SummaryRequest,
        prefix: Option<&ConversationPrefix>,
    ) -> u64 {
        let Some(model) = self.config.model_info.as_ref() else {
            return request.max_tokens.unwrap_or(UNKNOWN_MODEL_SUMMARY_TOKENS);
        };
        let own_limit = if model.max_output > 0 {
            model.max_output
        } else {
            UNKNOWN_MODEL_SUMMARY_TOKENS
        };
        let requested = request
            .max_tokens
            .map_or(own_limit, |tokens| tokens.min(own_limit));
        let user = ctxkit_protocol::AgentMessage::User(ctxkit_protocol::UserMessage {
            content: ctxkit_protocol::MessageContent::Text(request.user_text.clone()),
            timestamp: None,
            extra: ctxkit_protocol::JsonObject::new(),
        });
        let input = match prefix.filter(|prefix| self.continues(prefix)) {
            Some(prefix) => {
                let mut messages = prefix.messages.clone();
                messages.push(user);
                crate::output_limit::estimate_request_tokens(
                    &prefix.system_prompt,
                    &prefix.tools,
                    &messages,
                )
            }
            None => crate::output_limit::estimate_request_tokens(
                &request.system_prompt,
                &[],
                std::slice::from_ref(&user),
            ),
        };
        let window = self.planning_window().unwrap_or(model.context_window);
        crate::output_limit::fit_output_limit(requested, window, input)
    }

    /// The most characters (UTF-16 units) of user text a fresh summary request with
    /// `system_prompt` may hold while its reply keeps the output floor in the summary model's
    /// window; `None` when the model or its window is unknown.
    fn fresh_request_chars(&self, system_prompt: &str) -> Option<usize> {
        let model = self.config.model_info.as_ref()?;
        let window = self.planning_window().filter(|window| *window > 0)?;
        let own_limit = if model.max_output > 0 {
            model.max_output
        } else {
            UNKNOWN_MODEL_SUMMARY_TOKENS
        };
        let system = crate::output_limit::estimate_request_tokens(system_prompt, &[], &[]);
        let room = ctxkit_overflow::output_room(window, own_limit) + system;
        let allowed_tokens = window.saturating_sub(room);
        Some((allowed_tokens as f64 * crate::output_limit::CHARS_PER_TOKEN) as usize)
    }

    /// `request` with its span shortened (oldest first) so that its reply keeps the output floor
    /// in the summary model's window (`crate::summary_fit`); a request continuing the conversation
    /// is left as it is. The last resort: the compaction sends a span longer than this in chunks
    /// that fit (`Summarizer::max_request_chars`), so only a single message longer than the window
    /// is cut here.
    fn fit_summary_input(&self, request: &mut SummaryRequest, continuing: bool) {
        if continuing {
            return;
        }
        let Some(max_chars) = self.fresh_request_chars(&request.system_prompt) else {
            return;
        };
        if let Some(fitted) = crate::summary_fit::fit_span(&request.user_text, max_chars) {
            tracing::info!(
                max_chars,
                "the summary's span was shortened to fit the summary model's window"
            );
            request.user_text = fitted;
        }
    }

    async fn summarize_inner(
        &self,
        mut request: SummaryRequest,
        prefix: Option<ConversationPrefix>,
        cancel: CancellationToken,
    ) -> Result<SummaryResponse, LlmError> {
        let continuing = prefix.as_ref().is_some_and(|prefix| self.continues(prefix));
        self.fit_summary_input(&mut request, continuing);
        let reasoning = request
            .reasoning
            .as_deref()
            .and_then(ReasoningLevel::parse)
            .filter(|_| self.supports_reasoning());
        let max_tokens = self.summary_output_limit(&request, prefix.as_ref());
        let completion = match prefix.as_ref().filter(|prefix| self.continues(prefix)) {
            // A cache-prefix request: the conversation as it was sent, then the instruction.
            Some(prefix) => {
                self.complete_continuing(prefix, &request.user_text, max_tokens, &cancel)
                    .await?
            }
            None => {
                let request = CompletionRequest {
                    system_prompt: request.system_prompt,
                    user_text: request.user_text,
                    max_tokens,
                    reasoning,
                };
                self.complete_streaming(&request, &cancel).await?
            }
        };
        let window = self.context_window();
        if is_reply_overflow(
            completion.stop_reason,
            None,
            Some(&completion.usage),
            window,
            Some(&self.config.provider),
        ) {
            return Err(LlmError::SilentOverflow {
                provider: self.config.provider.clone(),
                used: completion
                    .usage
                    .input
                    .saturating_add(completion.usage.cache_read),
                window: window.unwrap_or(0),
            });
        }
        match completion.stop_reason {
            StopReason::Error | StopReason::Aborted => Err(LlmError::InvalidResponse {
                provider: self.config.provider.clone(),
                message: format!(
                    "the answer ended with `{}`",
                    completion.stop_reason.as_str()
                ),
                body: completion.text,
            }),
            // Pi 0.87: a summary cut at the token cap is incomplete, and a summarizer must not
            // call tools; both are failures, so nothing is written.
            StopReason::Length => Err(LlmError::UnusableSummary {
                provider: self.config.provider.clone(),
                reason: "generation hit the token cap and the summary is incomplete",
            }),
            StopReason::ToolUse => Err(LlmError::UnusableSummary {
                provider: self.config.provider.clone(),
                reason: "the summarizer tried to call a tool",
            }),
            StopReason::Stop => {
                // Priced as a chat reply is, so a session's spend counts its summaries.
                let mut usage = completion.usage;
                // A cache-prefix summary writes with the conversation's configured lifetime.
                if self.config.api == crate::models::Api::AnthropicMessages {
                    crate::wire::anthropic_cache::attribute_cache_writes(
                        &mut usage,
                        self.config.cache_retention,
                    );
                }
                if usage.cost.is_none() {
                    usage.cost = Some(ctxkit_models::usage_cost(
                        &usage,
                        self.config.prices.as_ref(),
                    ));
                }
                Ok(SummaryResponse {
                    text: completion.text,
                    usage: Some(usage),
                })
            }
        }
    }
}

impl Summarizer for ModelClient {
    fn name(&self) -> String {
        self.config.display_name()
    }

    fn supports_reasoning(&self) -> bool {
        self.config.reasons()
    }

    fn can_continue(&self, prefix: &ConversationPrefix) -> bool {
        self.continues(prefix)
    }

    fn max_request_chars(&self, system_prompt: &str) -> Option<usize> {
        self.fresh_request_chars(system_prompt)
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        Box::pin(async move {
            self.summarize_inner(request, None, cancel)
                .await
                .map_err(summarizer_error)
        })
    }

    fn summarize_continuing(
        &self,
        request: SummaryRequest,
        prefix: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        Box::pin(async move {
            self.summarize_inner(request, Some(prefix), cancel)
                .await
                .map_err(summarizer_error)
        })
    }

    fn can_compact_on_demand(&self, prefix: &ConversationPrefix) -> bool {
        self.compacts_on_demand(prefix)
    }

    fn compact_on_demand(
        &self,
        span: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<OnDemandCompaction, SummarizerError>> {
        Box::pin(async move {
            self.compact_span(span, &cancel)
                .await
                .map_err(summarizer_error)
        })
    }
}

/// A provider error as the compaction crate sees it: its message, and whether the provider failed
/// whatever it was sent (an error the client retries, returned once its retries ran out).
fn summarizer_error(error: LlmError) -> SummarizerError {
    if error.is_retryable() {
        SummarizerError::of_provider(error.to_string())
    } else {
        SummarizerError::new(error.to_string())
    }
}

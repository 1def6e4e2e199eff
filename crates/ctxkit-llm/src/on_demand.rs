//! On-demand compaction through a [`ModelClient`]: the conversation's own Anthropic model is asked
//! to compact the span ctxkit's planner chose (`compaction.provider: "on-demand"`). Anthropic
//! Messages only; every other model writes summaries as before.

use ctxkit_summarizer::{ConversationPrefix, OnDemandCompaction};
use tokio_util::sync::CancellationToken;

use crate::chat::ChatRequest;
use crate::client::ModelClient;
use crate::error::LlmError;
use crate::models::Api;
use crate::wire::{ReasoningLevel, anthropic_compaction};

impl ModelClient {
    /// Whether this client can compact `span`: it is the conversation's model, on Anthropic
    /// Messages.
    pub(crate) fn compacts_on_demand(&self, span: &ConversationPrefix) -> bool {
        self.continues(span) && self.config().api == Api::AnthropicMessages
    }

    /// Sends the compaction request of `span` (no retries beyond the client's own for transient
    /// failures; stops when `cancel` fires) and reads the block it returns.
    pub(crate) async fn compact_span(
        &self,
        span: ConversationPrefix,
        cancel: &CancellationToken,
    ) -> Result<OnDemandCompaction, LlmError> {
        let config = self.config();
        let request = ChatRequest {
            system_prompt: span.system_prompt,
            messages: span.messages,
            tools: span.tools,
            max_tokens: None,
            reasoning: span.reasoning.as_deref().and_then(ReasoningLevel::parse),
            cache_retention: None,
            cache: span.cache,
            projected_input_tokens: None,
        };
        let wire = anthropic_compaction::build(config, &request);
        let beta = anthropic_compaction::ON_DEMAND_BETA;
        let refused = || LlmError::BetaRefused {
            provider: config.provider.clone(),
            beta: beta.to_owned(),
            setting: crate::betas::feature_setting(beta),
        };
        // An endpoint that refused the beta is not asked again: the request cannot work without it.
        if crate::betas::is_refused(&wire.url, beta) {
            return Err(refused());
        }
        let headers = self.headers(&wire.url, &wire.headers)?;
        let text = match self
            .post(&wire.url, &headers, &wire.body.to_string(), cancel)
            .await
        {
            Ok(text) => text,
            Err(error) if self.remember_refused_betas(&error, &wire.url, &headers) => {
                return Err(if crate::betas::is_refused(&wire.url, beta) {
                    refused()
                } else {
                    error
                });
            }
            Err(error) => return Err(error),
        };
        let reply =
            anthropic_compaction::parse(&text).map_err(|message| LlmError::InvalidResponse {
                provider: config.provider.clone(),
                message,
                body: self.redacted(&text),
            })?;
        Ok(OnDemandCompaction {
            summary: reply.summary,
            block: reply.block,
            provider: config.provider.clone(),
            api: config.api.as_str().to_owned(),
            model: config.model.clone(),
            usage: Some(reply.usage),
        })
    }
}

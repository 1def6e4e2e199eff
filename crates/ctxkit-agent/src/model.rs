//! The model an agent talks to: [`ChatModel`]. The HTTP client implements it; tests and embedders
//! can script one ([`crate::testing::ScriptedModel`]).

use ctxkit_engine::ModelInfo;
use ctxkit_llm::{ChatRequest, DeltaSink, ModelClient, OutputRoom};
use ctxkit_protocol::AssistantMessage;
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::warming::PromptCache;

/// A conversation model with tools. A call never fails: a provider error comes back as a reply
/// with `stopReason` `error` (and the provider's own error text, so the engine can tell an
/// overflow), a cancelled call as one with `stopReason` `aborted`.
pub trait ChatModel: Send + Sync {
    /// Provider, id and context window (0 when unknown).
    fn info(&self) -> ModelInfo;

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, AssistantMessage>;

    /// Like [`ChatModel::chat`], showing text and thinking through `sink` as they arrive; a
    /// cancelled call keeps what arrived (`aborted`). By default the reply is fetched whole.
    fn chat_streaming<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
        sink: &'a mut DeltaSink<'_>,
    ) -> BoxFuture<'a, AssistantMessage> {
        let _ = sink;
        self.chat(request, cancel)
    }

    /// The model's configured window (`contextWindow`) when [`ChatModel::info`] gives a lower one,
    /// the limit the provider stated in an overflow error; `None` (the default) when the model
    /// does not say. The engine plans with the stated limit and reports both.
    fn configured_window(&self) -> Option<u64> {
        None
    }

    /// The output room `request` would go out with and its floor; `None` (the default) when the
    /// model does not say. The agent compacts first when the room is under the floor.
    fn output_room(&self, request: &ChatRequest) -> Option<OutputRoom> {
        let _ = request;
        None
    }

    /// The prompt cache `request` writes (its lifetime, the model's prices), for cache warming;
    /// `None` (the default) when the model has no prompt caching or a refresh would not read the
    /// same entry: nothing is warmed then.
    fn prompt_cache(&self, request: &ChatRequest) -> Option<PromptCache> {
        let _ = request;
        None
    }

    /// Sends `request` again to refresh its prompt cache entry (one output token, no retries,
    /// outside any message thread); `None` when it could not be sent.
    fn refresh_cache<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<AssistantMessage>> {
        let _ = (request, cancel);
        Box::pin(async { None })
    }
}

impl ChatModel for ModelClient {
    fn info(&self) -> ModelInfo {
        let config = self.config();
        ModelInfo {
            provider: config.provider.clone(),
            id: config.model.clone(),
            // The provider's real limit once it stated one below the configured window.
            context_window: self.planning_window().unwrap_or(0),
            // The user's prices for the model, else its family's in the table (a gateway's GPT-5
            // caches as OpenAI's does).
            cache: config
                .prices
                .as_ref()
                .and_then(ctxkit_models::ModelPrices::cache_terms)
                .or_else(|| ctxkit_models::model_cache_terms(&config.provider, &config.model)),
        }
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, AssistantMessage> {
        Box::pin(async move {
            match ModelClient::chat(self, request, cancel).await {
                Ok(reply) => reply,
                Err(error) => self.failed_reply(&error),
            }
        })
    }

    fn chat_streaming<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
        sink: &'a mut DeltaSink<'_>,
    ) -> BoxFuture<'a, AssistantMessage> {
        Box::pin(async move {
            match ModelClient::chat_streaming(self, request, cancel, sink).await {
                Ok(reply) => reply,
                Err(error) => self.failed_reply(&error),
            }
        })
    }

    fn output_room(&self, request: &ChatRequest) -> Option<OutputRoom> {
        ModelClient::output_room(self, request)
    }

    fn configured_window(&self) -> Option<u64> {
        self.context_window()
    }

    fn prompt_cache(&self, request: &ChatRequest) -> Option<PromptCache> {
        if !self.cache_refresh_replayable(request) {
            return None;
        }
        let config = self.config();
        Some(PromptCache {
            lifetime: self.prompt_cache_lifetime()?,
            prices: config.prices.clone(),
        })
    }

    fn refresh_cache<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<AssistantMessage>> {
        Box::pin(async move {
            match ModelClient::refresh_cache(self, request, cancel).await {
                Ok(reply) => Some(reply),
                Err(error) => {
                    tracing::info!(%error, "cache warming: the refresh request failed");
                    None
                }
            }
        })
    }
}

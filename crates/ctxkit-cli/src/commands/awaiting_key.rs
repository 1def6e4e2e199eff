//! `ctxkit serve`'s summarizer when the configured model has no key at start. The server starts,
//! as Pi's RPC mode does; each summary looks for the key again (the keys `ctxkit login` saves are
//! read anew), and a summary asked for before one is found fails naming the key to set.

use std::sync::OnceLock;

use ctxkit_llm::ModelClient;
use ctxkit_summarizer::{
    ConversationPrefix, OnDemandCompaction, Summarizer, SummarizerError, SummaryRequest,
    SummaryResponse,
};
use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// A model summarizer whose client is made at its first use with a key.
pub(crate) struct AwaitingKey {
    options: ctxkit_llm::LlmOptions,
    /// What the summarizer is called until its client is made (the provider whose key is missing).
    provisional_name: String,
    client: OnceLock<ModelClient>,
}

impl AwaitingKey {
    pub(crate) fn new(options: ctxkit_llm::LlmOptions, provider: &str) -> Self {
        Self {
            options,
            provisional_name: format!("{provider} (no key yet)"),
            client: OnceLock::new(),
        }
    }

    /// The model's client, made now if the key has been set since the last look.
    fn client(&self) -> Result<&ModelClient, SummarizerError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let made = super::summary_setup::compaction_client(&self.options)
            .map_err(|error| SummarizerError::of_provider(format!("{error:#}")))?;
        Ok(self.client.get_or_init(|| made))
    }
}

impl Summarizer for AwaitingKey {
    fn name(&self) -> String {
        match self.client() {
            Ok(client) => client.name(),
            Err(_) => self.provisional_name.clone(),
        }
    }

    fn supports_reasoning(&self) -> bool {
        self.client()
            .is_ok_and(|client| client.supports_reasoning())
    }

    fn can_continue(&self, prefix: &ConversationPrefix) -> bool {
        self.client()
            .is_ok_and(|client| client.can_continue(prefix))
    }

    fn max_request_chars(&self, system_prompt: &str) -> Option<usize> {
        self.client()
            .ok()
            .and_then(|client| client.max_request_chars(system_prompt))
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        match self.client() {
            Ok(client) => client.summarize(request, cancel),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }

    fn summarize_continuing(
        &self,
        request: SummaryRequest,
        prefix: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        match self.client() {
            Ok(client) => client.summarize_continuing(request, prefix, cancel),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }

    fn can_compact_on_demand(&self, prefix: &ConversationPrefix) -> bool {
        self.client()
            .is_ok_and(|client| client.can_compact_on_demand(prefix))
    }

    fn compact_on_demand(
        &self,
        span: ConversationPrefix,
        cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<OnDemandCompaction, SummarizerError>> {
        match self.client() {
            Ok(client) => client.compact_on_demand(span, cancel),
            Err(error) => Box::pin(async move { Err(error) }),
        }
    }
}

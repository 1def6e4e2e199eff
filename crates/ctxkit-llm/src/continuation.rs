//! Cache-prefix summary requests (`compaction.cachePrefix`): the conversation's last model request
//! sent again as it was (system prompt, tools, messages, reasoning), with what the session gained
//! since and then the summary instruction appended as one more user message, so the provider reads
//! the request from its prompt cache. The tools stay declared, since removing them would change
//! the cached prefix; the instruction tells the model not to call them, and OpenAI's and Gemini's
//! requests also switch tool calls off (`tool_choice`, `toolConfig`; neither provider documents
//! them as part of the cached prefix). Anthropic's request does not: its caching documentation
//! lists a changed `tool_choice` as invalidating cached messages, so there a reply that calls a tool
//! anyway fails as an unusable summary.

use ctxkit_protocol::{AgentMessage, ContentBlock, JsonObject, MessageContent, UserMessage};
use ctxkit_summarizer::ConversationPrefix;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::chat::ChatRequest;
use crate::client::ModelClient;
use crate::error::LlmError;
use crate::models::Api;
use crate::wire::{Completion, ReasoningLevel};

impl ModelClient {
    /// Whether `prefix` was answered by this client's provider and model.
    pub(crate) fn continues(&self, prefix: &ConversationPrefix) -> bool {
        let config = self.config();
        prefix.provider == config.provider && prefix.model == config.model
    }

    /// The conversation request of a cache-prefix summary: `prefix` unchanged, then
    /// `instruction` as a user message.
    pub(crate) fn continuation_request(
        prefix: &ConversationPrefix,
        instruction: &str,
        max_tokens: u64,
    ) -> ChatRequest {
        let mut messages = prefix.messages.clone();
        messages.push(AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(vec![ContentBlock::text(instruction.to_owned())]),
            timestamp: None,
            extra: JsonObject::new(),
        }));
        ChatRequest {
            system_prompt: prefix.system_prompt.clone(),
            messages,
            tools: prefix.tools.clone(),
            max_tokens: Some(max_tokens),
            reasoning: prefix.reasoning.as_deref().and_then(ReasoningLevel::parse),
            cache_retention: None,
            // The same key and breakpoints as the request it continues: the same cache entry.
            cache: prefix.cache.clone(),
            projected_input_tokens: None,
        }
    }

    /// Sends a cache-prefix summary request (with retries, stopping when `cancel` fires).
    pub(crate) async fn complete_continuing(
        &self,
        prefix: &ConversationPrefix,
        instruction: &str,
        max_tokens: u64,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let request = Self::continuation_request(prefix, instruction, max_tokens);
        let mut wire = match self.config().api {
            // The continued request's last cache breakpoint stays where it was.
            Api::AnthropicMessages => crate::wire::anthropic_tools::build_continuing(
                self.config(),
                &request,
                prefix.request_messages,
            ),
            Api::OpenAiChat | Api::OpenAiResponses | Api::Gemini => self.chat_wire(&request),
        };
        if !request.tools.is_empty() {
            forbid_tool_calls(self.config().api, &mut wire.body);
        }
        let headers = self.headers(&wire.url, &wire.headers)?;
        let text = self
            .post(&wire.url, &headers, &wire.body.to_string(), cancel)
            .await?;
        Ok(Completion::from_reply(&self.parse_chat(&text)?))
    }
}

/// Switches tool calls off where the API has an option for it that leaves the cached prefix alone.
fn forbid_tool_calls(api: Api, body: &mut Value) {
    match api {
        Api::OpenAiChat | Api::OpenAiResponses => body["tool_choice"] = json!("none"),
        Api::Gemini => body["toolConfig"] = json!({"functionCallingConfig": {"mode": "NONE"}}),
        // A changed `tool_choice` invalidates Anthropic's cached messages: the instruction alone.
        Api::AnthropicMessages => {}
    }
}

//! A scripted [`ChatModel`] for tests of agent loops (this crate's and embedders'): it answers
//! each request with what a closure returns and keeps every request it was sent.

use std::sync::{Arc, Mutex};

use ctxkit_engine::ModelInfo;
use ctxkit_llm::{ChatDelta, ChatRequest, DeltaSink};
use ctxkit_protocol::{AssistantMessage, ContentBlock, JsonObject, ToolCall, Usage};
use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::model::ChatModel;

type Responder = dyn Fn(&ChatRequest, usize) -> AssistantMessage + Send + Sync;

/// A model that answers from a script. The responder gets the request and its index (0-based).
#[derive(Clone)]
pub struct ScriptedModel {
    info: ModelInfo,
    responder: Arc<Responder>,
    requests: Arc<Mutex<Vec<ChatRequest>>>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ScriptedModel")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl ScriptedModel {
    pub fn new(
        info: ModelInfo,
        responder: impl Fn(&ChatRequest, usize) -> AssistantMessage + Send + Sync + 'static,
    ) -> Self {
        Self {
            info,
            responder: Arc::new(responder),
            requests: Arc::default(),
        }
    }

    /// A model that answers the requests with `answers` in order, a text each (the last one again
    /// when they run out), reporting the request's size as usage.
    pub fn answering(info: ModelInfo, answers: &[&str]) -> Self {
        // Only builds replies; never asked.
        let builder = Self::new(info.clone(), |_, _| empty_reply());
        let answers: Vec<String> = answers.iter().map(|answer| (*answer).to_owned()).collect();
        Self::new(info, move |request, index| {
            let text = answers
                .get(index)
                .or_else(|| answers.last())
                .map_or("", String::as_str);
            builder.text(text, (request_chars(request) / 4) as u64)
        })
    }

    /// Every request sent so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .map(|requests| requests.clone())
            .unwrap_or_default()
    }

    /// A reply from this model: `content`, `stop_reason`, usage counting `input_tokens`.
    pub fn reply(
        &self,
        content: Vec<ContentBlock>,
        stop_reason: &str,
        input_tokens: u64,
    ) -> AssistantMessage {
        AssistantMessage {
            content,
            api: Some("openai-completions".to_owned()),
            provider: Some(self.info.provider.clone()),
            model: Some(self.info.id.clone()),
            usage: Some(Usage {
                input: input_tokens,
                output: 10,
                total_tokens: input_tokens + 10,
                ..Usage::default()
            }),
            stop_reason: Some(stop_reason.to_owned()),
            error_message: None,
            timestamp: Some(chrono::Utc::now().timestamp_millis()),
            extra: JsonObject::new(),
        }
    }

    /// A text answer that ends the turn.
    pub fn text(&self, text: &str, input_tokens: u64) -> AssistantMessage {
        self.reply(vec![ContentBlock::text(text)], "stop", input_tokens)
    }

    /// A reply calling tools: `(id, name, arguments)` each.
    pub fn calls(&self, calls: &[(&str, &str, Value)], input_tokens: u64) -> AssistantMessage {
        let content = calls
            .iter()
            .map(|(id, name, arguments)| {
                ContentBlock::ToolCall(ToolCall {
                    id: (*id).to_owned(),
                    name: (*name).to_owned(),
                    arguments: arguments.clone(),
                    extra: JsonObject::new(),
                })
            })
            .collect();
        self.reply(content, "toolUse", input_tokens)
    }

    /// The error reply of a provider that rejected the request as too long (OpenAI's wording).
    pub fn overflow(&self) -> AssistantMessage {
        let mut reply = self.reply(Vec::new(), "error", 0);
        reply.usage = Some(Usage::default());
        reply.error_message = Some(
            "400 {\"error\":{\"message\":\"This model's maximum context length is exceeded. \
             Please reduce the length of the messages.\",\"code\":\"context_length_exceeded\"}}"
                .to_owned(),
        );
        reply
    }
}

impl ChatModel for ScriptedModel {
    fn info(&self) -> ModelInfo {
        self.info.clone()
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, AssistantMessage> {
        Box::pin(async move {
            let index = match self.requests.lock() {
                Ok(mut requests) => {
                    requests.push(request.clone());
                    requests.len() - 1
                }
                Err(_) => 0,
            };
            if cancel.is_cancelled() {
                let mut reply = self.reply(Vec::new(), "aborted", 0);
                reply.error_message = Some("Request was aborted".to_owned());
                return reply;
            }
            (self.responder)(request, index)
        })
    }

    /// Streams the scripted reply: its thinking and text arrive as deltas, a word at a time.
    fn chat_streaming<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
        sink: &'a mut DeltaSink<'_>,
    ) -> BoxFuture<'a, AssistantMessage> {
        Box::pin(async move {
            let reply = self.chat(request, cancel).await;
            for block in &reply.content {
                let (text, thinking) = match block {
                    ContentBlock::Text(text) => (&text.text, false),
                    ContentBlock::Thinking(thinking) => (&thinking.thinking, true),
                    ContentBlock::ToolCall(call) => {
                        sink(ChatDelta::ToolCall {
                            name: call.name.clone(),
                        });
                        continue;
                    }
                    ContentBlock::Image(_) | ContentBlock::Unknown(_) => continue,
                };
                for word in text.split_inclusive(' ') {
                    sink(if thinking {
                        ChatDelta::Thinking(word.to_owned())
                    } else {
                        ChatDelta::Text(word.to_owned())
                    });
                }
                sink(ChatDelta::BlockEnd);
            }
            reply
        })
    }
}

/// A reply with nothing in it (for responders that are never asked).
pub fn empty_reply() -> AssistantMessage {
    AssistantMessage {
        content: Vec::new(),
        api: None,
        provider: None,
        model: None,
        usage: None,
        stop_reason: Some("stop".to_owned()),
        error_message: None,
        timestamp: None,
        extra: JsonObject::new(),
    }
}

/// The characters of a request as a provider would count them: the system prompt, every message
/// as JSON and the tool definitions.
pub fn request_chars(request: &ChatRequest) -> usize {
    let messages: usize = request
        .messages
        .iter()
        .map(|message| {
            // A tool result's `details` and a reply's `usage` stay in the session; no provider
            // is sent them.
            let mut value = serde_json::to_value(message).unwrap_or_default();
            if let Some(object) = value.as_object_mut() {
                object.remove("details");
                object.remove("usage");
            }
            value.to_string().len()
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|tool| tool.description.len() + tool.parameters.to_string().len())
        .sum();
    request.system_prompt.len() + messages + tools
}

//! Streaming replies: server-sent events read as they arrive, text and thinking shown through a
//! callback ([`ChatDelta`]), the reply assembled block by block ([`Assembly`]) so that a cancelled
//! or broken stream still keeps what arrived. One reader per wire format.

pub(crate) mod anthropic;
mod cut_arguments;
pub(crate) mod gemini;
pub(crate) mod openai_chat;
pub(crate) mod openai_responses;
pub(crate) mod sse;
pub(crate) mod think_tags;

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AssistantMessage, ContentBlock, JsonObject, Usage};
use serde_json::Value;

use crate::models::Api;
use crate::retry::RetryNotice;
use crate::wire::conversation;

/// What a stream shows as it arrives.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatDelta {
    /// Reply text.
    Text(String),
    /// Reasoning text.
    Thinking(String),
    /// A tool call started (its arguments follow in pieces).
    ToolCall { name: String },
    /// A text or thinking block is complete (a UI can render it now).
    BlockEnd,
    /// The request failed and is sent again after a wait (a 429, a 5xx, a network error or a
    /// timeout before the reply started; a passing error after it began, `restarted`): a UI says
    /// so while it waits.
    Retrying(RetryNotice),
}

/// Provider indexes (Anthropic's content blocks, Responses' output items) → positions in the reply
/// being assembled.
#[derive(Debug, Default)]
pub(crate) struct Positions(Vec<(u64, usize)>);

impl Positions {
    pub(crate) fn insert(&mut self, index: u64, position: usize) {
        self.0.push((index, position));
    }

    /// The position of the index an event names under `key`.
    pub(crate) fn of(&self, data: &serde_json::Value, key: &str) -> Option<usize> {
        let index = data.get(key).and_then(serde_json::Value::as_u64)?;
        self.0
            .iter()
            .find(|(at, _)| *at == index)
            .map(|(_, position)| *position)
    }
}

/// The callback a streaming call reports deltas to.
pub type DeltaSink<'a> = dyn FnMut(ChatDelta) + Send + 'a;

/// An error that ends a stream: the provider's own wording (for overflow detection), and whether
/// the provider says the same request may succeed later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StreamError {
    pub message: String,
    /// A provider error event that reads as load or a passing failure (`overloaded_error`,
    /// `server_error`, a rate limit): before any of the reply arrived it is retried as a 5xx is.
    pub transient: bool,
}

impl StreamError {
    /// An error that trying again would not mend (a refusal, a cut stream, a blocked prompt).
    pub(crate) fn lasting(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            transient: false,
        }
    }

    /// A provider's error object inside the stream (`{"type": …, "code": …, "message": …}`).
    pub(crate) fn provider(error: &Value) -> Self {
        Self {
            message: error_text(error),
            transient: is_transient(error),
        }
    }
}

/// Words of a provider error that say it passes: load, server failures, rate limits, and the
/// providers' own advice to retry (Pi 1.6's pi-ai classifies errors by much the same words).
const TRANSIENT_WORDS: [&str; 16] = [
    "overloaded",
    "rate_limit",
    "rate limit",
    "too many requests",
    "server_error",
    "server error",
    "api_error",
    "internal error",
    "internal_error",
    "unavailable",
    "at capacity",
    "resource_exhausted",
    "timeout",
    "timed out",
    "retry your request",
    "try your request again",
];

/// Words of an exhausted quota or budget: a 429's wording that waiting does not mend.
const LASTING_WORDS: [&str; 4] = [
    "insufficient_quota",
    "quota exceeded",
    "billing",
    "out of budget",
];

/// HTTP statuses an error object may carry as its `code` that are retried as statuses are.
const TRANSIENT_CODES: [u64; 6] = [429, 500, 502, 503, 504, 529];

/// Whether a provider's error object inside a stream says the request may succeed later: its
/// `type`, `code`, `status` and `message` read as load or a passing failure, and not as an
/// exhausted quota or a prompt too long for the window.
pub(crate) fn is_transient(error: &Value) -> bool {
    if let Some(text) = error.as_str() {
        return is_transient_text(text);
    }
    let numeric = ["code", "status"]
        .iter()
        .filter_map(|key| error.get(key).and_then(Value::as_u64))
        .any(|code| TRANSIENT_CODES.contains(&code));
    let text = ["type", "code", "status", "message"]
        .iter()
        .filter_map(|key| error.get(key).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    if numeric {
        return !is_lasting_text(&text);
    }
    is_transient_text(&text)
}

fn is_transient_text(text: &str) -> bool {
    let lower = text.to_lowercase();
    TRANSIENT_WORDS.iter().any(|word| lower.contains(word)) && !is_lasting_text(text)
}

fn is_lasting_text(text: &str) -> bool {
    let lower = text.to_lowercase();
    LASTING_WORDS.iter().any(|word| lower.contains(word))
        || ctxkit_overflow::is_overflow_error_text(text)
}

/// How far a reply has come: two readings differ when an event carried something of the reply
/// (content, a piece of a call's arguments, a signature, usage, a stop reason), and are equal
/// across keep-alives (Anthropic's `ping`, SSE comments, empty deltas), which the idle limit does
/// not count as progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Extent {
    changes: u64,
    blocks: usize,
    signatures: usize,
    usage: [u64; 4],
    ended: bool,
    compaction: usize,
}

/// The reply under construction.
#[derive(Debug, Default)]
pub(crate) struct Assembly {
    /// Pieces of the reply added so far (blocks started, text and arguments appended, items set).
    changes: u64,
    pub content: Vec<ContentBlock>,
    /// Raw argument text per tool-call position, parsed when the reply is finished.
    arguments: Vec<(usize, String)>,
    pub usage: Usage,
    pub stop: Option<StopReason>,
    pub error: Option<String>,
    /// What the provider cleared from the request on its side (Anthropic's context editing).
    pub provider_edits: Vec<ctxkit_protocol::ProviderContextEdit>,
    /// The provider's compaction block or item, raw, once it is complete.
    pub provider_compaction: Option<serde_json::Value>,
    /// The provider's id of the reply (Anthropic's `msg_…`, Chat Completions' `chatcmpl-…`,
    /// Responses' `resp_…`, Gemini's `responseId`), stored as Pi does (`responseId`).
    pub response_id: Option<String>,
    /// The provider's own word for why the reply ended (`end_turn`, `tool_calls`, `STOP`),
    /// stored as Pi does (`rawStopReason`) beside the `stopReason` it maps to.
    pub raw_stop_reason: Option<String>,
}

impl Assembly {
    /// How far the reply has come (see [`Extent`]).
    pub(crate) fn extent(&self) -> Extent {
        let signatures = self
            .content
            .iter()
            .map(|block| match block {
                ContentBlock::Thinking(thinking) => {
                    thinking.thinking_signature.as_ref().map_or(0, String::len)
                }
                ContentBlock::Text(_)
                | ContentBlock::ToolCall(_)
                | ContentBlock::Image(_)
                | ContentBlock::Unknown(_) => 0,
            })
            .sum();
        let compaction = self.provider_compaction.as_ref().map_or(0, |block| {
            block
                .get("content")
                .and_then(Value::as_str)
                .map_or(1, |text| text.len() + 1)
        });
        Extent {
            changes: self.changes,
            blocks: self.content.len(),
            signatures,
            usage: [
                self.usage.input,
                self.usage.output,
                self.usage.cache_read,
                self.usage.cache_write,
            ],
            ended: self.stop.is_some() || self.error.is_some(),
            compaction,
        }
    }

    /// Whether any of the reply arrived: a block with text or reasoning (or a signature), a tool
    /// call, anything else; blocks started empty are not.
    pub(crate) fn has_content(&self) -> bool {
        self.content.iter().any(|block| match block {
            ContentBlock::Text(text) => !text.text.is_empty(),
            ContentBlock::Thinking(thinking) => {
                !thinking.thinking.is_empty() || thinking.thinking_signature.is_some()
            }
            ContentBlock::ToolCall(_) | ContentBlock::Image(_) | ContentBlock::Unknown(_) => true,
        })
    }

    /// Starts a text block; returns its position.
    pub(crate) fn start_text(&mut self, extra: JsonObject) -> usize {
        self.changes += 1;
        self.content
            .push(conversation::text_block(String::new(), extra));
        self.content.len() - 1
    }

    pub(crate) fn start_thinking(&mut self, signature: Option<String>, extra: JsonObject) -> usize {
        self.changes += 1;
        self.content.push(conversation::thinking_block(
            String::new(),
            signature,
            extra,
        ));
        self.content.len() - 1
    }

    pub(crate) fn start_call(
        &mut self,
        id: String,
        name: String,
        extra: JsonObject,
        sink: &mut DeltaSink<'_>,
    ) -> usize {
        self.changes += 1;
        sink(ChatDelta::ToolCall { name: name.clone() });
        self.content.push(conversation::tool_call_block(
            id,
            name,
            Ok(Value::Object(JsonObject::new())),
            extra,
        ));
        self.content.len() - 1
    }

    /// Appends text to the text or thinking block at `position`, and shows it.
    pub(crate) fn append(&mut self, position: usize, delta: &str, sink: &mut DeltaSink<'_>) {
        if delta.is_empty() {
            return;
        }
        self.changes += 1;
        match self.content.get_mut(position) {
            Some(ContentBlock::Text(block)) => {
                block.text.push_str(delta);
                sink(ChatDelta::Text(delta.to_owned()));
            }
            Some(ContentBlock::Thinking(block)) => {
                block.thinking.push_str(delta);
                sink(ChatDelta::Thinking(delta.to_owned()));
            }
            Some(ContentBlock::ToolCall(_) | ContentBlock::Image(_) | ContentBlock::Unknown(_))
            | None => {}
        }
    }

    pub(crate) fn append_arguments(&mut self, position: usize, delta: &str) {
        if delta.is_empty() {
            return;
        }
        self.changes += 1;
        match self.arguments.iter_mut().find(|(at, _)| *at == position) {
            Some((_, text)) => text.push_str(delta),
            None => self.arguments.push((position, delta.to_owned())),
        }
    }

    /// Replaces a block (a finished item that arrived whole).
    pub(crate) fn set(&mut self, position: usize, block: ContentBlock) {
        if let Some(slot) = self.content.get_mut(position) {
            self.changes += 1;
            *slot = block;
            self.arguments.retain(|(at, _)| *at != position);
        }
    }

    /// The finished reply (without provider, model, timestamp): arguments parsed, empty text
    /// blocks dropped, `toolUse` when calls arrived without another stop reason.
    pub(crate) fn finish(mut self) -> AssistantMessage {
        // The output limit cuts a call as an error does (QA 2026-12-07: its text was stored as
        // a string).
        let cut = matches!(
            self.stop,
            Some(StopReason::Error | StopReason::Aborted | StopReason::Length)
        );
        for (position, text) in std::mem::take(&mut self.arguments) {
            if let Some(ContentBlock::ToolCall(call)) = self.content.get_mut(position) {
                if cut {
                    // Cut short: read as far as it goes, an object all the same (QA r103).
                    let (arguments, error) = cut_arguments::cut_arguments(&text);
                    call.arguments = arguments;
                    if let Some(error) = error {
                        call.extra.insert(
                            ctxkit_protocol::ToolCall::ARGUMENTS_ERROR_KEY.to_owned(),
                            Value::String(error),
                        );
                    }
                } else {
                    let arguments = crate::wire::arguments::read_arguments(&text);
                    crate::wire::arguments::set_arguments(call, arguments);
                }
            }
        }
        let has_calls = self
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolCall(_)));
        self.content.retain(|block| match block {
            ContentBlock::Text(text) => !text.text.is_empty() || !text.extra.is_empty(),
            ContentBlock::Thinking(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Image(_)
            | ContentBlock::Unknown(_) => true,
        });
        let stop = match self.stop {
            Some(StopReason::Stop) | None if has_calls => StopReason::ToolUse,
            Some(stop) => stop,
            None => StopReason::Stop,
        };
        self.usage.total_tokens = self.usage.part_tokens();
        let mut reply = conversation::reply(self.content, self.usage, stop, self.error);
        // Pi 1.6.0's provider details, kept on the reply as it keeps them.
        for (key, value) in [
            ("responseId", self.response_id),
            ("rawStopReason", self.raw_stop_reason),
        ] {
            if let Some(value) = value {
                reply.extra.insert(key.to_owned(), Value::String(value));
            }
        }
        reply.set_provider_context_edits(&self.provider_edits);
        if let Some(block) = self.provider_compaction {
            reply.set_provider_compaction(block);
        }
        reply
    }

    /// What arrived before the stream was cut: `aborted` (cancelled) or `error` with `message`.
    pub(crate) fn cut(mut self, stop: StopReason, message: String) -> AssistantMessage {
        self.stop = Some(stop);
        self.error = Some(message);
        self.finish()
    }
}

/// One format's reader: events in, the reply assembled.
#[derive(Debug)]
pub(crate) struct Reader {
    format: Format,
    /// An event of the format arrived (a stream in another format, or a web page, has none).
    spoke: bool,
}

#[derive(Debug)]
enum Format {
    Anthropic(anthropic::State),
    OpenAiChat(openai_chat::State),
    OpenAiResponses(openai_responses::State),
    Gemini(gemini::State),
}

impl Reader {
    pub(crate) fn new(api: Api) -> Self {
        let format = match api {
            Api::AnthropicMessages => Format::Anthropic(anthropic::State::default()),
            Api::OpenAiChat => Format::OpenAiChat(openai_chat::State::default()),
            Api::OpenAiResponses => Format::OpenAiResponses(openai_responses::State::default()),
            Api::Gemini => Format::Gemini(gemini::State::default()),
        };
        Self {
            format,
            spoke: false,
        }
    }

    /// Whether an event of the reader's format arrived: a stream that ends without content
    /// after one was cut short, not in another format.
    pub(crate) fn spoke(&self) -> bool {
        self.spoke
    }

    /// Reads one event. `Ok(true)` when the stream says it is complete.
    pub(crate) fn event(
        &mut self,
        assembly: &mut Assembly,
        event: &sse::Event,
        sink: &mut DeltaSink<'_>,
    ) -> Result<bool, StreamError> {
        let text = event.data.trim();
        if text.is_empty() {
            // An empty `data:` line: a keep-alive some servers send, nothing of the reply.
            return Ok(false);
        }
        if text == "[DONE]" {
            // Chat Completions' last line; no other format ends with it.
            return Ok(match &mut self.format {
                Format::OpenAiChat(state) => {
                    self.spoke = true;
                    state.done()
                }
                Format::Anthropic(_) | Format::OpenAiResponses(_) | Format::Gemini(_) => false,
            });
        }
        let data = match serde_json::from_str::<Value>(text) {
            Ok(data) => data,
            Err(error) => return unparsable(event, &error),
        };
        self.spoke |= self.is_own(&data);
        match &mut self.format {
            Format::Anthropic(state) => state.event(assembly, &data, sink),
            Format::OpenAiChat(state) => state.event(assembly, &data, sink),
            Format::OpenAiResponses(state) => state.event(assembly, &data, sink),
            Format::Gemini(state) => state.event(assembly, &data, sink),
        }
    }

    /// Whether `data` is an event of the reader's format, by the fields each format's events have.
    fn is_own(&self, data: &Value) -> bool {
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
        match self.format {
            Format::Anthropic(_) => {
                kind.starts_with("message_") || kind.starts_with("content_block_") || kind == "ping"
            }
            Format::OpenAiResponses(_) => kind.starts_with("response."),
            Format::OpenAiChat(_) => data.get("choices").is_some(),
            Format::Gemini(_) => {
                data.get("candidates").is_some() || data.get("usageMetadata").is_some()
            }
        }
    }
}

impl Reader {
    /// Writes what the format keeps until the stream ends (Chat Completions' `reasoning_details`
    /// signature) into `assembly`: after the last event, whatever ended the stream.
    pub(crate) fn settle(&mut self, assembly: &mut Assembly) {
        match &mut self.format {
            Format::OpenAiChat(state) => state.settle(assembly),
            Format::Anthropic(_) | Format::OpenAiResponses(_) | Format::Gemini(_) => {}
        }
    }

    /// What the stream lacked of its format's documented end, `None` when it arrived: Anthropic's
    /// `message_stop` after a stop reason, Chat Completions' `finish_reason` or `[DONE]` (servers
    /// that speak it send either or both), Responses' `response.completed` or
    /// `response.incomplete`, Gemini's `finishReason`. A stream that ends cleanly without it was
    /// cut short (a proxy, a crashed server) and its reply is incomplete.
    pub(crate) fn missing_end(&self, assembly: &Assembly) -> Option<&'static str> {
        match &self.format {
            Format::Anthropic(state) => state.missing_end(assembly),
            Format::OpenAiChat(state) => state.missing_end(assembly),
            Format::OpenAiResponses(state) => state.missing_end(),
            Format::Gemini(state) => state.missing_end(assembly),
        }
    }
}

/// An event whose data is not JSON. A ping is a keep-alive whatever it carries (Anthropic's SDK
/// skips it unread) and an `error` event's text is the provider's message; any other event was
/// part of the reply, so skipping it would keep a reply with a piece missing (a word, a fragment
/// of a call's arguments) as complete: the stream ends there, cut short, as Pi's SDKs end it.
fn unparsable(event: &sse::Event, error: &serde_json::Error) -> Result<bool, StreamError> {
    match event.name.as_deref() {
        Some("ping") => Ok(false),
        Some("error") => {
            let text = event.data.trim();
            Err(StreamError {
                message: text.to_owned(),
                transient: is_transient_text(text),
            })
        }
        Some(_) | None => Err(StreamError::lasting(format!(
            "The stream sent an event that is not valid JSON ({error}), so the reply is cut short: `{}`",
            excerpt(event.data.trim())
        ))),
    }
}

/// The start of an event's data, on one line, for an error message.
fn excerpt(data: &str) -> String {
    const LONGEST: usize = 120;
    let line = data.replace(['\n', '\r'], " ");
    match line.char_indices().nth(LONGEST) {
        Some((end, _)) => format!("{}…", line.get(..end).unwrap_or_default()),
        None => line,
    }
}

/// Keeps the provider's id of the reply (Chat Completions' chunk `id`, Responses' `response.id`,
/// Gemini's `responseId`) as Pi 1.6.0 records it, from the first event that names it.
pub(crate) fn note_response_id(assembly: &mut Assembly, id: Option<&Value>) {
    if assembly.response_id.is_none()
        && let Some(id) = id.and_then(Value::as_str).filter(|id| !id.is_empty())
    {
        assembly.response_id = Some(id.to_owned());
    }
}

/// The error of a reply whose stream ended before its end: `missing` names what did not arrive.
pub(crate) fn cut_short(missing: &str) -> String {
    format!("The stream ended without {missing}: the reply is cut short")
}

/// The error text of an `{"error": {"message": …}}` object (or the object itself as text).
pub(crate) fn error_text(error: &Value) -> String {
    // Its `message`, or its nested `error`'s (an `error` event wrapping the error object, as
    // Anthropic's do and some Responses servers send theirs: it was shown as raw JSON).
    error
        .get("message")
        .or_else(|| error.pointer("/error/message"))
        .and_then(Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;

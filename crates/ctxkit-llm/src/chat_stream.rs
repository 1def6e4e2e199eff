//! Streamed conversations: [`ModelClient::chat_streaming`] sends the same request as
//! [`ModelClient::chat`] with streaming on, shows text and thinking through a callback as they
//! arrive, and assembles the reply. A cancelled stream keeps what arrived as an `aborted` reply; a
//! provider error inside the stream (an overflow among them) or a broken connection ends it as an
//! `error` reply with the provider's wording and what arrived.

use ctxkit_protocol::{AssistantMessage, ContentBlock};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::chat::ChatRequest;
use crate::client::ModelClient;
use crate::error::LlmError;
use crate::models::Api;
use crate::overflow::StopReason;
use crate::stream::{Assembly, ChatDelta, DeltaSink, Reader, StreamError, sse};

/// What an aborted reply says, as Pi writes it.
const ABORTED: &str = "Request was aborted";

impl ModelClient {
    /// Sends one conversation request with streaming on. Errors before the reply starts (HTTP
    /// statuses, retries exhausted, cancellation while waiting) are `Err`, as with `chat`; once it
    /// has started, the reply always comes back, cut short if need be.
    pub async fn chat_streaming(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        sink: &mut DeltaSink<'_>,
    ) -> Result<AssistantMessage, LlmError> {
        let config = self.config();
        let mut wire = self.chat_wire(request);
        match config.api {
            Api::OpenAiChat => {
                wire.body["stream"] = json!(true);
                wire.body["stream_options"] = json!({"include_usage": true});
            }
            Api::AnthropicMessages | Api::OpenAiResponses => wire.body["stream"] = json!(true),
            Api::Gemini => {
                wire.url = wire
                    .url
                    .replace(":generateContent", ":streamGenerateContent?alt=sse");
            }
        }
        let headers = self.headers(&wire.headers)?;
        let mut response = self
            .open_stream(&wire.url, &headers, &wire.body.to_string(), cancel)
            .await?;
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.contains("application/json"));
        if is_json {
            // A server that ignores `stream` answers whole: read it as `chat` would.
            let text = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LlmError::Cancelled { provider: config.provider.clone() }),
                text = response.text() => text.map_err(|error| self.transport_error(&error))?,
            };
            let mut reply = self.parse_chat(&text)?;
            show_whole(&reply, sink);
            self.stamp(&mut reply);
            return Ok(reply);
        }
        let mut assembly = Assembly::default();
        let mut reader = Reader::new(config.api);
        let mut parser = sse::Parser::default();
        let outcome = loop {
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => break Err((StopReason::Aborted, ABORTED.to_owned())),
                chunk = tokio::time::timeout(config.timeout, response.chunk()) => chunk,
            };
            let ended = matches!(chunk, Ok(Ok(None)));
            let events = match chunk {
                Err(_) => {
                    let seconds = config.timeout.as_secs();
                    break Err((
                        StopReason::Error,
                        format!("The stream stalled: nothing arrived for {seconds} s"),
                    ));
                }
                Ok(Err(error)) => {
                    let message = self.transport_error(&error).to_string();
                    break Err((StopReason::Error, self.redacted(&message)));
                }
                Ok(Ok(None)) => parser.finish().into_iter().collect(),
                Ok(Ok(Some(bytes))) => parser.feed(&bytes),
            };
            match read_events(&mut reader, &mut assembly, &events, sink) {
                Ok(true) => break Ok(()),
                Ok(false) if ended => break Ok(()),
                Ok(false) => {}
                Err(StreamError(message)) => break Err((StopReason::Error, message)),
            }
        };
        let nothing = assembly.content.is_empty() && assembly.stop.is_none();
        let mut reply = match outcome {
            // A stream in another format (or none) would read as an empty answer: say so.
            Ok(()) if nothing => assembly.cut(
                StopReason::Error,
                format!(
                    "The server's stream held no {} events; if it speaks another format, set it with `ctxkit config set llm.api …` (openai-completions, openai-responses, anthropic-messages, google-generative-ai)",
                    config.api.as_str()
                ),
            ),
            Ok(()) => assembly.finish(),
            Err((stop, message)) => assembly.cut(stop, message),
        };
        self.stamp(&mut reply);
        Ok(reply)
    }
}

fn read_events(
    reader: &mut Reader,
    assembly: &mut Assembly,
    events: &[sse::Event],
    sink: &mut DeltaSink<'_>,
) -> Result<bool, StreamError> {
    for event in events {
        if reader.event(assembly, event, sink)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Shows a reply that arrived whole as if it had streamed.
fn show_whole(reply: &AssistantMessage, sink: &mut DeltaSink<'_>) {
    for block in &reply.content {
        match block {
            ContentBlock::Text(text) => {
                sink(ChatDelta::Text(text.text.clone()));
                sink(ChatDelta::BlockEnd);
            }
            ContentBlock::Thinking(thinking) => {
                sink(ChatDelta::Thinking(thinking.thinking.clone()));
                sink(ChatDelta::BlockEnd);
            }
            ContentBlock::ToolCall(call) => sink(ChatDelta::ToolCall {
                name: call.name.clone(),
            }),
            ContentBlock::Image(_) | ContentBlock::Unknown(_) => {}
        }
    }
}

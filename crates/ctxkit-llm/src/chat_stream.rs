//! Streamed conversations: [`ModelClient::chat_streaming`] sends the same request as
//! [`ModelClient::chat`] with streaming on, shows text and thinking through a callback as they
//! arrive, and assembles the reply. A cancelled stream keeps what arrived as an `aborted` reply; a
//! provider error inside the stream (an overflow among them), a broken connection, a stream that
//! ends without its format's end (`Reader::missing_end`), an event that is not valid JSON or a
//! stream quiet for longer than the idle limit ends it as an `error` reply with the provider's wording (or the limit's) and what
//! arrived; the agent runs no tool call of an `error` reply. Retries before the stream starts show
//! as [`ChatDelta::Retrying`].

use ctxkit_overflow::StopReason;
use ctxkit_protocol::{AssistantMessage, ContentBlock};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::chat::ChatRequest;
use crate::client::{ModelClient, Opened};
use crate::echoes::ShownDeltas;
use crate::error::LlmError;
use crate::models::Api;
use crate::retry::{RetryNotice, RetryPolicy};
use crate::stream::{ChatDelta, DeltaSink};
use crate::stream_read::{Progress, Started, Stop};
use crate::wire::{self, Completion, CompletionRequest, WireRequest};

/// `reply` as cancelled by the user: what arrived kept, as any interrupted reply (a cancel while
/// a broken reply waited to be sent again ended the turn as that error: the verifier).
fn aborted(mut reply: AssistantMessage) -> AssistantMessage {
    if reply.is_aborted_or_error() {
        reply.stop_reason = Some(StopReason::Aborted.as_str().to_owned());
        reply.error_message = Some(crate::stream_read::ABORTED.to_owned());
    }
    reply
}

/// A streamed reply, and what broke its stream off after it began when another attempt may mend
/// it (`None`: it ended, or failed in a way a new attempt would not change).
struct Streamed {
    reply: AssistantMessage,
    broke_off: Option<LlmError>,
}

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
        let reply = match self.streamed_with_restarts(request, cancel, sink).await {
            Err(error) => match self.refitted(request, &error) {
                Some(refitted) => self.streamed_with_restarts(&refitted, cancel, sink).await,
                None => Err(error),
            },
            reply => reply,
        };
        let reply = self.learn_from(reply)?;
        if !self.paused_after_compaction(&reply) {
            return Ok(reply);
        }
        let next = self
            .streamed_with_restarts(&crate::chat::continuation(request, &reply), cancel, sink)
            .await?;
        Ok(crate::chat::after_pause(reply, next))
    }

    /// [`Self::chat_streaming_once`], sent again whole when its stream broke off after the reply
    /// began in a way another attempt may mend (an `overloaded_error` event, a connection dropped
    /// in the middle of the body), up to `retry.maxRetries` times with the backoff, as Pi 1.6.0 retries such a
    /// reply (QA 2026-12-07: ctxkit stopped at the first). Each restart is a
    /// [`ChatDelta::Retrying`] whose notice is `restarted`: what was shown of the broken reply is
    /// dropped, and the reply that comes back is the last attempt's.
    async fn streamed_with_restarts(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        sink: &mut DeltaSink<'_>,
    ) -> Result<AssistantMessage, LlmError> {
        let policy = self.config().retry;
        // One budget for every retry of the request: those before a stream began and the
        // restarts (the verifier, 2026-12-07: each restart got a fresh budget, 16 requests where
        // Pi makes 4).
        let mut used = 0;
        loop {
            let attempt_policy = RetryPolicy {
                max_retries: policy.max_retries.saturating_sub(used),
                ..policy
            };
            let mut retried_before_stream = 0;
            let mut counting = |delta: ChatDelta| {
                if matches!(delta, ChatDelta::Retrying(_)) {
                    retried_before_stream += 1;
                }
                sink(delta);
            };
            let Streamed { reply, broke_off } = self
                .chat_streaming_once(request, cancel, &mut counting, &attempt_policy)
                .await?;
            used += retried_before_stream;
            if cancel.is_cancelled() {
                return Ok(aborted(reply));
            }
            let Some(error) =
                broke_off.filter(|_| policy.restart_broken_replies && used < policy.max_retries)
            else {
                return Ok(reply);
            };
            used += 1;
            let delay = policy.backoff(used);
            let notice = RetryNotice {
                provider: self.config().provider.clone(),
                attempt: used,
                max_retries: policy.max_retries,
                delay,
                status: error.status(),
                reason: error.brief(),
                restarted: true,
                dropped_usage: reply.usage.clone().map(Box::new),
            };
            tracing::warn!(
                provider = %notice.provider,
                attempt = used,
                error = %notice.reason,
                "the reply's stream broke off after it began; sending the request again"
            );
            sink(ChatDelta::Retrying(notice));
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Ok(aborted(reply)),
                () = tokio::time::sleep(delay) => {}
            }
        }
    }

    async fn chat_streaming_once(
        &self,
        request: &ChatRequest,
        cancel: &CancellationToken,
        sink: &mut DeltaSink<'_>,
        policy: &RetryPolicy,
    ) -> Result<Streamed, LlmError> {
        let config = self.config();
        let mut wire = self.chat_wire(request);
        streaming(config, &mut wire);
        // An endpoint that refused the threads beta gets no thread (nor the header).
        let thread = self
            .thread_binding()
            .filter(|_| !crate::betas::is_refused(&wire.url, wire::anthropic_threads::BETA));
        let beta = thread.map(|_| add_thread_beta(config, &mut wire));
        let mut plan = thread.map(|binding| binding.plan(&wire.url, beta.as_deref(), &wire.body));
        let headers = self.request_headers(&wire, plan.as_ref())?;
        let body = plan
            .as_ref()
            .map_or_else(|| wire.body.clone(), |plan| plan.body(&wire.body));
        let mut announce = |notice| sink(ChatDelta::Retrying(notice));
        let first = self
            .open_stream(
                &wire.url,
                &headers,
                &body.to_string(),
                cancel,
                (policy, &mut announce),
            )
            .await;
        let response = match first {
            Ok(response) => response,
            Err(error) => {
                let Some(resend) = self.resend_plan(&error, &wire, &headers, thread, plan.as_ref())
                else {
                    return Err(error);
                };
                let body = resend
                    .as_ref()
                    .map_or_else(|| wire.body.clone(), |plan| plan.body(&wire.body));
                let headers = self.request_headers(&wire, resend.as_ref())?;
                plan = resend;
                self.open_stream(
                    &wire.url,
                    &headers,
                    &body.to_string(),
                    cancel,
                    (policy, &mut announce),
                )
                .await?
            }
        };
        let response = match Self::whole(response) {
            Whole::Text(text) => {
                // A server that ignores `stream` answers whole: read it as `chat` would.
                let mut reply = self.parse_chat(&text)?;
                self.stamp_reply(&mut reply, request);
                show_whole(&reply, sink);
                return Ok(Streamed {
                    reply,
                    broke_off: None,
                });
            }
            Whole::Stream(response) => response,
        };
        let (mut reply, response_id, broke_off) = self.read_stream(response, cancel, sink).await;
        if let (Some(binding), Some(plan), Some(response_id)) = (thread, &plan, response_id)
            && !reply.is_aborted_or_error()
        {
            let mut with_reply = wire.body.clone();
            with_reply["messages"] = serde_json::Value::Array(
                wire::anthropic_tools::messages_with_reply(config, request, &reply),
            );
            binding.record(
                plan,
                &wire.url,
                beta.as_deref(),
                &wire.body,
                &with_reply,
                &response_id,
            );
        }
        self.stamp_reply(&mut reply, request);
        Ok(Streamed { reply, broke_off })
    }

    /// A summary (single-turn) request, streamed: the wait for the response is under the
    /// first-byte limit and the stream under the idle limit, so a long summary is not cut. A cancelled or failed stream is an error
    /// (a partial summary is of no use).
    pub(crate) async fn complete_streaming(
        &self,
        request: &CompletionRequest,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let config = self.config();
        let mut wire = wire::build(config, request);
        streaming(config, &mut wire);
        let headers = self.headers(&wire.url, &wire.headers)?;
        // Nobody watches a summary's retries but the log.
        let mut unobserved = |_| {};
        let response = self
            .open_stream(
                &wire.url,
                &headers,
                &wire.body.to_string(),
                cancel,
                (&config.retry, &mut unobserved),
            )
            .await?;
        // A summary is the provider's answer, redacted as whole completions are (`post`).
        let response = match Self::whole(response) {
            Whole::Text(text) => return wire::parse(config, &self.redacted(&text)),
            Whole::Stream(response) => response,
        };
        let (mut reply, _, _) = self.read_stream(response, cancel, &mut |_| {}).await;
        crate::echoes::redact_strings(&mut reply, &|text| self.redacted(text));
        self.redact_error_message(&mut reply);
        let completion = Completion::from_reply(&reply);
        match completion.stop_reason {
            StopReason::Aborted => {
                return Err(LlmError::Cancelled {
                    provider: config.provider.clone(),
                });
            }
            StopReason::Error => {
                // The reason as the reply says it (`Prompt blocked: SAFETY`, a cut stream), the
                // words a whole answer's failure uses too (`wire::parse`).
                // Said once (QA 2026-12-07: "sent an unreadable answer: Overloaded: Overloaded").
                return Err(LlmError::ReplyFailed {
                    provider: config.provider.clone(),
                    message: reply.error_message.unwrap_or_default(),
                });
            }
            StopReason::Stop | StopReason::Length | StopReason::ToolUse => {}
        }
        Ok(completion)
    }

    /// A JSON answer (a server that ignores `stream`) read whole, or the stream to read.
    fn whole(opened: Opened) -> Whole {
        match opened {
            Opened::Whole(text) => Whole::Text(text),
            Opened::Stream(started) => Whole::Stream(started),
        }
    }

    /// Reads a stream to its end (or until cancelled, stalled, broken or failed), showing deltas;
    /// the reply and the provider's id of it. What is shown passes the reply's redaction, a
    /// credential in pieces included; the reply is redacted whole when it is stamped.
    async fn read_stream(
        &self,
        started: Box<Started>,
        cancel: &CancellationToken,
        sink: &mut DeltaSink<'_>,
    ) -> (AssistantMessage, Option<String>, Option<LlmError>) {
        let mut shown = ShownDeltas::new(self.reply_secrets());
        let read = self
            .read_events_shown(*started, cancel, &mut |delta| shown.show(delta, sink))
            .await;
        shown.finish(sink);
        read
    }

    /// The reply read to its end, its response id, and the failure another attempt may mend when
    /// the stream broke off (a transient provider error event, a dropped connection, a stream
    /// that ended without its format's end; not the idle limit, which keeps what arrived).
    async fn read_events_shown(
        &self,
        started: Started,
        cancel: &CancellationToken,
        sink: &mut DeltaSink<'_>,
    ) -> (AssistantMessage, Option<String>, Option<LlmError>) {
        let config = self.config();
        let Started {
            mut response,
            mut progress,
            held,
            stopped,
        } = started;
        for delta in held {
            sink(delta);
        }
        let stopped = match stopped {
            Some(stopped) => stopped,
            None => loop {
                if let Some(stopped) = self
                    .next_events(&mut response, &mut progress, cancel, sink)
                    .await
                {
                    break stopped;
                }
            },
        };
        let Progress {
            mut reader,
            mut assembly,
            content_type,
            ..
        } = progress;
        reader.settle(&mut assembly);
        let nothing = assembly.content.is_empty() && assembly.stop.is_none() && !reader.spoke();
        let response_id = assembly.response_id.clone();
        let mut broke_off = None;
        let reply = match stopped {
            // A stream in another format (or none) would read as an empty answer: say so.
            Stop::Ended if nothing => assembly.cut(
                StopReason::Error,
                no_events(config.api.as_str(), &content_type),
            ),
            Stop::Ended => match reader.missing_end(&assembly) {
                None => assembly.finish(),
                Some(missing) => {
                    tracing::warn!(
                        provider = %config.provider,
                        blocks = assembly.content.len(),
                        "the stream ended without {missing}; the reply is kept as an error"
                    );
                    // Cut before its end: another attempt may get it whole, as Pi 1.6.0 retries
                    // a stream that "ended without" its end (the verifier, 2026-12-07).
                    let message = crate::stream::cut_short(missing);
                    broke_off = Some(LlmError::Network {
                        provider: config.provider.clone(),
                        message: message.clone(),
                        retried: crate::error::Retried::NONE,
                    });
                    assembly.cut(StopReason::Error, message)
                }
            },
            Stop::Cut {
                stop,
                message,
                retry,
            } => {
                // A reply that went quiet keeps what arrived (the idle limit's own rule).
                broke_off = retry.filter(|error| {
                    stop == StopReason::Error && !matches!(error, LlmError::Timeout { .. })
                });
                assembly.cut(stop, message)
            }
        };
        (reply, response_id, broke_off)
    }
}

impl ModelClient {
    /// The headers of a conversation request sent with `plan`: a request going out whole, outside
    /// any thread, leaves the threads beta out.
    fn request_headers(
        &self,
        wire: &WireRequest,
        plan: Option<&crate::threads::ThreadPlan>,
    ) -> Result<reqwest::header::HeaderMap, LlmError> {
        let whole = plan.is_none_or(crate::threads::ThreadPlan::is_full);
        if !whole {
            return self.headers(&wire.url, &wire.headers);
        }
        let mut headers = wire.headers.clone();
        let thread_beta =
            std::collections::BTreeSet::from([wire::anthropic_threads::BETA.to_owned()]);
        crate::betas::strip(&mut headers, &thread_beta);
        let mut built = self.headers(&wire.url, &headers)?;
        // The configured header may name the beta too: the request goes without it.
        if let Some(value) = built
            .get("anthropic-beta")
            .and_then(|value| value.to_str().ok())
            .filter(|value| value.contains(wire::anthropic_threads::BETA))
            .map(str::to_owned)
        {
            let mut listed = vec![("anthropic-beta".to_owned(), value)];
            crate::betas::strip(&mut listed, &thread_beta);
            match crate::betas::header_value(&listed)
                .and_then(|kept| reqwest::header::HeaderValue::from_str(kept).ok())
            {
                Some(kept) => {
                    built.insert("anthropic-beta", kept);
                }
                None => {
                    built.remove("anthropic-beta");
                }
            }
        }
        Ok(built)
    }

    /// After a refused first attempt: `Some(plan)` to send once more with (`Some(None)`: whole,
    /// outside any thread), `None` when the refusal is the request's own. A refused beta is
    /// remembered for the endpoint (and said once); the resend leaves it out.
    fn resend_plan(
        &self,
        error: &LlmError,
        wire: &WireRequest,
        headers: &reqwest::header::HeaderMap,
        thread: Option<&crate::threads::ThreadBinding>,
        plan: Option<&crate::threads::ThreadPlan>,
    ) -> Option<Option<crate::threads::ThreadPlan>> {
        let LlmError::Http { status, body, .. } = error else {
            return None;
        };
        let sent = headers
            .get("anthropic-beta")
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let refused = crate::betas::refused_in(*status, body, sent);
        if !refused.is_empty() {
            crate::betas::remember(&wire.url, &refused);
            if let Some(binding) = thread {
                binding.turn_off();
            }
            return Some(None);
        }
        let binding = thread?;
        binding.after_rejection(plan?, *status, body).map(Some)
    }
}

/// Adds the threads beta to the request's `anthropic-beta` header (its own, else the configured
/// one); the header's value.
pub(crate) fn add_thread_beta(
    config: &crate::config::ProviderConfig,
    wire: &mut WireRequest,
) -> String {
    let is_beta = |name: &str| name.eq_ignore_ascii_case("anthropic-beta");
    let own = wire.headers.iter().position(|(name, _)| is_beta(name));
    let configured = match own {
        Some(index) => wire.headers.get(index).map(|(_, value)| value.clone()),
        None => config
            .headers
            .iter()
            .find(|(name, _)| is_beta(name))
            .map(|(_, value)| value.clone()),
    };
    let value = wire::anthropic_threads::beta_header(configured.as_deref());
    if let Some(index) = own {
        wire.headers.remove(index);
    }
    wire.headers
        .push(("anthropic-beta".to_owned(), value.clone()));
    value
}

/// A response that came whole, or a stream.
#[derive(Debug)]
enum Whole {
    Text(String),
    Stream(Box<Started>),
}

/// Turns a request into its streaming form: `stream` on (with usage in the last Chat Completions
/// chunk, unless the model's `supportsUsageInStreaming` is false), or Gemini's server-sent-events
/// endpoint.
fn streaming(config: &crate::config::ProviderConfig, wire: &mut WireRequest) {
    match config.api {
        Api::OpenAiChat => {
            wire.body["stream"] = json!(true);
            if crate::chat_compat::asks_usage_in_stream(config) {
                wire.body["stream_options"] = json!({"include_usage": true});
            }
        }
        Api::AnthropicMessages | Api::OpenAiResponses => wire.body["stream"] = json!(true),
        Api::Gemini => {
            wire.url = wire
                .url
                .replace(":generateContent", ":streamGenerateContent?alt=sse");
        }
    }
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

/// Why a stream gave no reply: a web page (a wrong `llm.baseUrl` answered by a site or a proxy's
/// login page) is named as one; otherwise the format may be another.
fn no_events(api: &str, content_type: &str) -> String {
    if content_type.starts_with("text/html") {
        return "The server answered with a web page (text/html), not a model's stream: check \
                `llm.baseUrl` (an OpenAI-compatible server's usually ends in `/v1`)"
            .to_owned();
    }
    format!(
        "The server's stream held no {api} events; if it speaks another format, set it with `ctxkit config set llm.api …` (openai-completions, openai-responses, anthropic-messages, google-generative-ai)"
    )
}

//! Reading a streamed answer chunk by chunk ([`Progress`]), and its start inside the retry loop
//! ([`ModelClient::start_stream`]): a stream that fails before any of its reply arrived (a
//! transient provider error event such as Anthropic's `overloaded_error` or Responses'
//! `server_error`, a dropped connection, a stream of the right format cut before its content)
//! is an error the retry loop tries again, as a 529 or a refused connection is. Once content has
//! arrived the stream is handed on and never sent again: what was shown stays shown.

use ctxkit_overflow::StopReason;

use crate::client::ModelClient;
use crate::error::{LlmError, Retried};
use crate::http::TimeoutPhase;
use crate::stream::{Assembly, ChatDelta, DeltaSink, Extent, Reader, StreamError, sse};

/// What an aborted reply says, as Pi writes it.
pub(crate) const ABORTED: &str = "Request was aborted";

/// A stream read so far: the format's reader, the reply assembled, the bytes not yet parsed.
#[derive(Debug)]
pub(crate) struct Progress {
    pub reader: Reader,
    pub assembly: Assembly,
    parser: sse::Parser,
    received: u64,
    /// When the reply last came further ([`Extent`]): the idle limit counts from here, so a
    /// stream that sends keep-alives alone (Anthropic's `ping`, OpenRouter's `: OPENROUTER
    /// PROCESSING` comments, empty deltas) is cut as a silent one is (QA r103: it hung for ever).
    quiet_since: tokio::time::Instant,
    extent: Extent,
    /// The response's content type, for what a stream of no events was.
    pub content_type: String,
}

/// Why reading a stream stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The format's end arrived, or the body ended.
    Ended,
    /// Cancelled, quiet past the idle limit, broken, too large, or a provider error: the reply
    /// stops with `stop` and `message`. `retry` is the error to try the request again with when
    /// nothing of the reply had arrived (`None`: trying again would not mend it).
    Cut {
        stop: StopReason,
        message: String,
        retry: Option<LlmError>,
    },
}

/// A stream whose reply began (or that stopped without one, for a reason no retry mends).
#[derive(Debug)]
pub(crate) struct Started {
    pub response: reqwest::Response,
    pub progress: Progress,
    /// What the first events showed, to pass on to the caller's sink.
    pub held: Vec<ChatDelta>,
    /// Set when the stream already stopped.
    pub stopped: Option<Stop>,
}

impl ModelClient {
    /// Reads `response` until its reply begins: `Err` (retryable) when it failed before any of
    /// the reply arrived in a way another attempt may mend, otherwise the stream to read on.
    pub(crate) async fn start_stream(
        &self,
        mut response: reqwest::Response,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Started, LlmError> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let mut progress = Progress {
            reader: Reader::new(self.config().api),
            assembly: Assembly::default(),
            parser: sse::Parser::default(),
            received: 0,
            quiet_since: tokio::time::Instant::now(),
            extent: Extent::default(),
            content_type,
        };
        let mut held = Vec::new();
        loop {
            let stopped = self
                .next_events(&mut response, &mut progress, cancel, &mut |delta| {
                    held.push(delta);
                })
                .await;
            // A block started empty (Anthropic's `content_block_start` with `"text": ""`) is
            // nothing of the reply yet: an overload or a dropped connection after it is retried.
            let began = !held.is_empty() || progress.assembly.has_content();
            let stopped = match stopped {
                None if began => None,
                None => continue,
                Some(stop) if began => Some(stop),
                Some(Stop::Cut {
                    retry: Some(error), ..
                }) => return Err(error),
                Some(Stop::Ended) if self.cut_before_content(&progress) => {
                    return Err(LlmError::Network {
                        provider: self.config().provider.clone(),
                        message: "the stream ended before its reply began".to_owned(),
                        retried: Retried::NONE,
                    });
                }
                Some(stop) => Some(stop),
            };
            return Ok(Started {
                response,
                progress,
                held,
                stopped,
            });
        }
    }

    /// A body that ended empty, or after events of its format but before its reply and its end:
    /// cut (a body of something else, a web page or JSON, is not).
    fn cut_before_content(&self, progress: &Progress) -> bool {
        (progress.reader.spoke() || progress.received == 0)
            && progress.assembly.stop.is_none()
            && progress.reader.missing_end(&progress.assembly).is_some()
    }

    /// Reads the next chunk of `response` and its events into `progress`, showing deltas; why
    /// reading stopped, `None` to read on.
    pub(crate) async fn next_events(
        &self,
        response: &mut reqwest::Response,
        progress: &mut Progress,
        cancel: &tokio_util::sync::CancellationToken,
        sink: &mut DeltaSink<'_>,
    ) -> Option<Stop> {
        let config = self.config();
        let chunk = tokio::select! {
            biased;
            () = cancel.cancelled() => return Some(Stop::Cut {
                stop: StopReason::Aborted,
                message: ABORTED.to_owned(),
                retry: None,
            }),
            chunk = tokio::time::timeout_at(
                progress.quiet_since + config.timeouts.idle,
                response.chunk(),
            ) => chunk,
        };
        let ended = matches!(chunk, Ok(Ok(None)));
        let events = match chunk {
            Err(_) => {
                let error = self.timeout(TimeoutPhase::Idle);
                tracing::warn!(
                    provider = %config.provider,
                    idle_ms = u64::try_from(config.timeouts.idle.as_millis()).unwrap_or(u64::MAX),
                    blocks = progress.assembly.content.len(),
                    "the stream went quiet; the reply is kept as far as it came"
                );
                return Some(Stop::Cut {
                    stop: StopReason::Error,
                    message: error.to_string(),
                    retry: Some(error),
                });
            }
            Ok(Err(error)) => {
                let error = self.transport_error(&error);
                return Some(Stop::Cut {
                    stop: StopReason::Error,
                    message: self.redacted(&error.to_string()),
                    retry: Some(error),
                });
            }
            Ok(Ok(None)) => progress.parser.finish().into_iter().collect(),
            Ok(Ok(Some(bytes))) => {
                // A provider that streams without end is cut at the reply limit.
                progress.received = progress.received.saturating_add(bytes.len() as u64);
                if progress.received > config.max_reply_bytes {
                    let message = crate::client::reply_too_large(config.max_reply_bytes);
                    tracing::warn!(provider = %config.provider, "{message}");
                    return Some(Stop::Cut {
                        stop: StopReason::Error,
                        message,
                        retry: None,
                    });
                }
                progress.parser.feed(&bytes)
            }
        };
        let stop = read_events(progress, &events, sink, |message| LlmError::StreamFailed {
            provider: config.provider.clone(),
            message: self.redacted(message),
            retried: Retried::NONE,
        });
        let extent = progress.assembly.extent();
        if extent != progress.extent {
            progress.extent = extent;
            progress.quiet_since = tokio::time::Instant::now();
        }
        stop.or_else(|| ended.then_some(Stop::Ended))
    }
}

/// Reads `events` into `progress`: why the stream stopped, `None` to read on. `failed` is the
/// error a passing provider error is retried with.
fn read_events(
    progress: &mut Progress,
    events: &[sse::Event],
    sink: &mut DeltaSink<'_>,
    failed: impl Fn(&str) -> LlmError,
) -> Option<Stop> {
    for event in events {
        match progress.reader.event(&mut progress.assembly, event, sink) {
            Ok(true) => return Some(Stop::Ended),
            Ok(false) => {}
            Err(StreamError { message, transient }) => {
                let retry = transient.then(|| failed(&message));
                return Some(Stop::Cut {
                    stop: StopReason::Error,
                    message,
                    retry,
                });
            }
        }
    }
    None
}

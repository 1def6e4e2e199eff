//! The HTTP side: one [`ModelClient`] per resolved model sends requests with retries, time limits
//! and cancellation through the process's [`HttpClient`], and implements the compaction crate's
//! `Summarizer` (`summaries.rs`).

mod summaries;

use ctxkit_secrets::{ApiKey, redact};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use crate::config::ProviderConfig;
use crate::echoes::{Headers, SentSecrets};
use crate::error::LlmError;
use crate::http::{HttpClient, TimeoutPhase, error_chain};
use crate::retry::{RetryObserver, RetryPolicy, retry_after, with_retries};
use crate::wire::{self, Completion, CompletionRequest};

/// The output limit of a summary for a model the model table does not know (its own limit is
/// unknown, so nothing can be fitted): a size every current model can produce.
pub const UNKNOWN_MODEL_SUMMARY_TOKENS: u64 = 8_192;

/// Calls one model. Cheap to share behind an `Arc`; it sends through an [`HttpClient`], whose
/// connection pool its clones (and other clients given the same one) share.
#[derive(Debug, Clone)]
pub struct ModelClient {
    config: ProviderConfig,
    /// The configured extra headers, checked once, marked sensitive.
    custom_headers: HeaderMap,
    http: HttpClient,
    /// The conversation whose message thread conversation requests continue, when bound.
    thread: Option<crate::threads::ThreadBinding>,
    /// What this client sends that a reply must not hold.
    reply_secrets: SentSecrets,
    /// What this client sends that an error must not hold: every header's value too.
    error_secrets: SentSecrets,
}

impl ModelClient {
    /// Checks the configured headers and builds an HTTP client of its own (rustls) with the
    /// configured connect limit. A process with several clients (the conversation's, the
    /// summaries') gives them one with [`ModelClient::with_http`] instead.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        let http = HttpClient::new(config.timeouts.connect)?;
        Self::with_http(config, http)
    }

    /// Checks the configured headers; requests go through `http` (shared, with its pool).
    pub fn with_http(config: ProviderConfig, http: HttpClient) -> Result<Self, LlmError> {
        let mut custom_headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let (name, value) = header(name, value)?;
            custom_headers.insert(name, value);
        }
        let secrets = |which| {
            SentSecrets::new(
                config.api_key.as_ref().map(ApiKey::expose_secret),
                &config.headers,
                which,
                &config.base_url,
            )
        };
        let reply_secrets = secrets(Headers::Credentials);
        let error_secrets = secrets(Headers::All);
        Ok(Self {
            config,
            custom_headers,
            http,
            thread: None,
            reply_secrets,
            error_secrets,
        })
    }

    /// This client bound to the conversation `session` of `threads`: its streamed conversation
    /// requests continue that conversation's Anthropic message thread when
    /// [`ProviderConfig::message_threads`] is on (otherwise the binding changes nothing). Bind one
    /// client per session: the thread state is the session's own.
    pub fn with_message_threads(
        mut self,
        threads: &crate::threads::MessageThreads,
        session: &str,
    ) -> Self {
        self.thread = Some(crate::threads::ThreadBinding {
            threads: threads.clone(),
            session: session.to_owned(),
        });
        self
    }

    /// Leaves this client's requests out of the conversation's thread and sends each once.
    pub(crate) fn without_threads_or_retries(&mut self) {
        self.thread = None;
        self.config.retry.max_retries = 0;
    }

    /// The conversation binding, when threads are on for this model.
    pub(crate) fn thread_binding(&self) -> Option<&crate::threads::ThreadBinding> {
        self.thread.as_ref().filter(|_| self.config.message_threads)
    }

    /// The resolved configuration.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Sends one request, retrying transient failures; stops as soon as `cancel` fires (the
    /// request in flight is dropped, which closes its connection).
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        cancel: &CancellationToken,
    ) -> Result<Completion, LlmError> {
        let wire = wire::build(&self.config, request);
        let headers = self.headers(&wire.url, &wire.headers)?;
        let text = self
            .post(&wire.url, &headers, &wire.body.to_string(), cancel)
            .await?;
        wire::parse(&self.config, &text)
    }

    /// The request headers: the configured ones, then `provider_headers` (the key header), then
    /// the JSON content type.
    /// Betas the endpoint of `url` refused earlier in the process are left out
    /// (`crate::betas`).
    pub(crate) fn headers(
        &self,
        url: &str,
        provider_headers: &[(String, String)],
    ) -> Result<HeaderMap, LlmError> {
        let mut headers = self.custom_headers.clone();
        for (name, value) in provider_headers {
            let (name, value) = header(name, value)?;
            headers.insert(name, value);
        }
        let beta = headers
            .get("anthropic-beta")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let Some(beta) = beta {
            let mut listed = vec![("anthropic-beta".to_owned(), beta)];
            crate::betas::strip_refused(url, &mut listed);
            match crate::betas::header_value(&listed) {
                Some(kept) => {
                    let (name, value) = header("anthropic-beta", kept)?;
                    headers.insert(name, value);
                }
                None => {
                    headers.remove("anthropic-beta");
                }
            }
        }
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(headers)
    }

    /// POSTs `body` with retries; the answer's text on a success status, redacted of every
    /// secret and credential shape (a summary, a completion). Stops as soon as `cancel` fires.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &str,
        cancel: &CancellationToken,
    ) -> Result<String, LlmError> {
        self.post_answer(url, headers, body, cancel, Answer::Completion)
            .await
    }

    /// [`Self::post`] for a conversation reply: its text as it came, for
    /// [`Self::parse_chat`], whose errors are redacted, and [`Self::stamp`], which takes the
    /// credentials this client sent out of the reply and leaves the model's own code alone.
    pub(crate) async fn post_reply(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &str,
        cancel: &CancellationToken,
    ) -> Result<String, LlmError> {
        self.post_answer(url, headers, body, cancel, Answer::Reply)
            .await
    }

    async fn post_answer(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &str,
        cancel: &CancellationToken,
        answer: Answer,
    ) -> Result<String, LlmError> {
        // Whole requests are summaries' (cache-prefix) and embedders': only the log hears of retries.
        let mut unobserved = |_| {};
        let attempts = with_retries(
            &self.config.retry,
            &self.config.provider,
            cancel,
            &mut unobserved,
            || self.send_once(url, headers, body, answer),
        );
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LlmError::Cancelled { provider: self.config.provider.clone() }),
            result = attempts => result,
        }
    }

    async fn send_once(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &str,
        answer: Answer,
    ) -> Result<String, LlmError> {
        let response = self
            .http
            .inner()
            .post(url)
            .headers(headers.clone())
            .timeout(self.config.timeout)
            .body(body.to_owned())
            .send()
            .await
            .map_err(|error| self.transport_error(&error))?;
        let status = response.status();
        let headers = response.headers().clone();
        let text = self.read_bounded(response).await?;
        // Every answer but a conversation reply passes here before anything reads it: a refusal
        // or a completion echoing the key never reaches an error, a log or a session. A reply is
        // redacted once parsed (`stamp`), its errors by `parse_chat`.
        if !status.is_success() {
            return Err(self.answer_error(status, &headers, &text));
        }
        if let Some(error) = self.error_in_success(&text) {
            return Err(error);
        }
        Ok(match answer {
            Answer::Completion => self.redacted(&text),
            Answer::Reply => text,
        })
    }

    /// Sends a streaming request (with retries until the reply starts, each announced to
    /// `observer`, stopping when `cancel` fires): a whole JSON answer still to be read, or the
    /// stream with its first events read ([`ModelClient::start_stream`]: a stream that fails
    /// before its reply began is retried too). The wait for the response headers is bounded by
    /// the first-byte limit; the body is read under the idle limit.
    pub(crate) async fn open_stream(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &str,
        cancel: &CancellationToken,
        (policy, observer): (&RetryPolicy, &mut RetryObserver<'_>),
    ) -> Result<Opened, LlmError> {
        let first_byte = self.config.timeouts.first_byte;
        let attempts = with_retries(policy, &self.config.provider, cancel, observer, || async {
            let send = self
                .http
                .inner()
                .post(url)
                .headers(headers.clone())
                .body(body.to_owned())
                .send();
            let response = tokio::time::timeout(first_byte, send)
                .await
                .map_err(|_| self.timeout(TimeoutPhase::FirstByte))?
                .map_err(|error| self.transport_error(&error))?;
            let status = response.status();
            if !status.is_success() {
                let headers = response.headers().clone();
                let text = self.read_bounded(response).await.unwrap_or_default();
                return Err(self.answer_error(status, &headers, &text));
            }
            let is_json = response
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .is_some_and(|value| value.contains("application/json"));
            if is_json {
                let text = self.read_bounded(response).await?;
                if let Some(error) = self.error_in_success(&text) {
                    return Err(error);
                }
                return Ok(Opened::Whole(text));
            }
            self.start_stream(response, cancel)
                .await
                .map(|started| Opened::Stream(Box::new(started)))
        });
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LlmError::Cancelled { provider: self.config.provider.clone() }),
            result = attempts => result,
        }
    }

    /// A success answer whose body is a provider's passing error (`{"error": {"code": 502, …}}`
    /// from a gateway, an `overloaded_error`, a rate limit) and no reply of the format: the
    /// error to retry it with, as a 5xx is (QA r103: it failed at once as an unreadable answer;
    /// Pi 1.6.0 retries it). An error that retrying would not mend is left to the reader, which
    /// quotes it.
    fn error_in_success(&self, text: &str) -> Option<LlmError> {
        // A reply is read once, by its format's reader: a body naming no error is not parsed here.
        if !text.contains("\"error\"") {
            return None;
        }
        let value = serde_json::from_str::<serde_json::Value>(text).ok()?;
        let error = value.get("error").filter(|error| !error.is_null())?;
        let reply_fields = ["choices", "content", "output", "candidates"];
        if reply_fields.iter().any(|field| value.get(field).is_some())
            || !crate::stream::is_transient(error)
        {
            return None;
        }
        Some(LlmError::StreamFailed {
            provider: self.config.provider.clone(),
            message: self.redacted(&crate::stream::error_text(error)),
            retried: crate::error::Retried::NONE,
        })
    }

    /// The error of an answer that is not a success: a redirect (never followed, `HttpClient`)
    /// names the address it pointed to; any other status carries its body. Both redacted.
    fn answer_error(
        &self,
        status: reqwest::StatusCode,
        headers: &HeaderMap,
        text: &str,
    ) -> LlmError {
        if status.is_redirection() {
            let location = headers
                .get(reqwest::header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .unwrap_or_default();
            return LlmError::Redirected {
                provider: self.config.provider.clone(),
                status: status.as_u16(),
                location: self.redacted(&location),
            };
        }
        self.http_error(status.as_u16(), text, retry_after(headers))
    }

    /// An HTTP error with the key and header values redacted from the body, and the delay the
    /// response asked for (its headers', else its body's).
    fn http_error(
        &self,
        status: u16,
        text: &str,
        retry_after: Option<std::time::Duration>,
    ) -> LlmError {
        LlmError::Http {
            provider: self.config.provider.clone(),
            status,
            body: self.redacted(text),
            retry_after: retry_after.or_else(|| crate::retry::retry_delay_in_body(text)),
            retried: crate::error::Retried::NONE,
        }
    }

    /// A whole answer's body as text, refused once it passes `llm.maxReplyBytes` (a server that
    /// never ends its body cannot grow the process without bound).
    pub(crate) async fn read_bounded(
        &self,
        mut response: reqwest::Response,
    ) -> Result<String, LlmError> {
        let limit = self.config.max_reply_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| self.transport_error(&error))?
        {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(LlmError::InvalidResponse {
                    provider: self.config.provider.clone(),
                    message: reply_too_large(limit),
                    body: String::new(),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// `text` with every credential this client sends (the key, every header's value and a
    /// `Bearer` value's token, the base URL's user information, plain or as a `Basic` value) and
    /// every credential shape redacted: for the provider's own words, errors above all.
    pub(crate) fn redacted(&self, text: &str) -> String {
        redact(text, self.error_secrets.iter())
    }

    /// `reply`'s error message (the provider's words) redacted as [`Self::redacted`] does.
    pub(crate) fn redact_error_message(&self, reply: &mut ctxkit_protocol::AssistantMessage) {
        if let Some(message) = reply.error_message.as_mut() {
            *message = self.redacted(message);
        }
    }

    /// What a reply must not hold.
    pub(crate) fn reply_secrets(&self) -> &SentSecrets {
        &self.reply_secrets
    }

    /// A failure of the HTTP stack: a timeout (connecting, or a whole answer over
    /// `retry.provider.timeoutMs`) or a network error, with secrets redacted.
    pub(crate) fn transport_error(&self, error: &reqwest::Error) -> LlmError {
        if error.is_builder() {
            // A request that cannot be built (a base URL without a scheme) never will be: not
            // retried as a network error.
            return LlmError::Client {
                message: format!(
                    "a request to provider `{}` could not be built from its base URL `{}` (an `http://` or `https://` URL): {}",
                    self.config.provider,
                    self.redacted(&self.config.base_url),
                    self.redacted(&error_chain(error))
                ),
            };
        }
        if error.is_timeout() && error.is_connect() {
            self.timeout(TimeoutPhase::Connect)
        } else if error.is_timeout() {
            self.timeout(TimeoutPhase::Request)
        } else {
            LlmError::Network {
                provider: self.config.provider.clone(),
                message: self.redacted(&error_chain(error)),
                retried: crate::error::Retried::NONE,
            }
        }
    }

    /// The error of a limit that ran out.
    pub(crate) fn timeout(&self, phase: TimeoutPhase) -> LlmError {
        let timeouts = &self.config.timeouts;
        let timeout = match phase {
            TimeoutPhase::Connect => self.http.connect_timeout(),
            TimeoutPhase::FirstByte => timeouts.first_byte,
            TimeoutPhase::Idle => timeouts.idle,
            TimeoutPhase::Request => self.config.timeout,
        };
        LlmError::Timeout {
            provider: self.config.provider.clone(),
            phase,
            timeout,
            retried: crate::error::Retried::NONE,
        }
    }
}

/// A header with its value marked sensitive (hidden from `Debug` by the HTTP stack).
fn header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), LlmError> {
    let invalid = || LlmError::InvalidHeader {
        name: name.to_owned(),
    };
    let header_name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
    let mut header_value = HeaderValue::from_str(value).map_err(|_| invalid())?;
    header_value.set_sensitive(true);
    Ok((header_name, header_value))
}

/// What an answer cut at `llm.maxReplyBytes` says.
pub(crate) fn reply_too_large(limit: u64) -> String {
    format!("the answer passed the limit of {limit} bytes (`llm.maxReplyBytes`) and was cut there")
}

/// A streaming request's answer: whole (a server that ignores `stream` answers JSON), or a
/// stream whose reply began.
#[derive(Debug)]
pub(crate) enum Opened {
    /// The answer's body, read.
    Whole(String),
    Stream(Box<crate::stream_read::Started>),
}

/// What an answer to a request is, for what is taken out of it before it is read.
#[derive(Debug, Clone, Copy)]
enum Answer {
    /// A conversation reply: the model's writing, redacted once parsed.
    Reply,
    /// Anything else (a summary, a refusal): redacted whole.
    Completion,
}

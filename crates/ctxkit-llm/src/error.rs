//! Errors of model requests and provider configuration. Messages keep the provider's own error
//! text and never contain an API key.

use std::time::Duration;

use crate::http::TimeoutPhase;

/// The setting that caps the wait a provider may ask for before a retry.
const MAX_RETRY_DELAY_SETTING: &str = "retry.provider.maxRetryDelayMs";

/// A failed model request or an unusable configuration.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The provider answered with a non-success HTTP status. Returned by every provider after
    /// retries are exhausted (429, 5xx) or at once (other 4xx). `body` is the provider's raw error
    /// text; check [`LlmError::is_context_overflow`] before reporting it, and compact on overflow.
    /// `retried` says how many attempts were made, and over how long, when it was retried.
    #[error(
        "Provider `{provider}` returned HTTP {status}: {}{retried}",
        http_message(body)
    )]
    Http {
        provider: String,
        status: u16,
        body: String,
        /// The delay the provider asked for (`Retry-After`, `retry-after-ms`).
        retry_after: Option<Duration>,
        retried: Retried,
    },
    /// The provider answered with a redirect (3xx). Model requests never follow one: the key
    /// headers and the conversation would go to the host it names. `location` is that address,
    /// credentials redacted (empty when the answer named none). Not retried; check the base URL.
    #[error(
        "Provider `{provider}` answered HTTP {status}, a redirect to `{}`, which ctxkit does not follow: the key and the conversation go to the configured address only",
        shown_location(location)
    )]
    Redirected {
        provider: String,
        status: u16,
        location: String,
    },
    /// The request could not be sent or its answer not read (connection refused, reset, DNS).
    /// Retried; returned when retries are exhausted (`retried` says how many attempts were made,
    /// over how long). Check the base URL and the network.
    #[error("Request to provider `{provider}` failed: {message}{retried}")]
    Network {
        provider: String,
        message: String,
        retried: Retried,
    },
    /// The provider's stream reported a passing failure (Anthropic's `overloaded_error` or
    /// `api_error`, Responses' `server_error`, a rate limit) before any of the reply arrived,
    /// after a success status, or a success answer whose whole body is such an error object (a
    /// gateway's `{"error": {"code": 502, …}}`). Retried as a 5xx is; returned when retries are exhausted
    /// (`retried`). `message` is the provider's own, redacted. An error event that retrying would
    /// not mend ends the reply as an `error` reply instead.
    #[error("Provider `{provider}` failed before its reply began: {message}{retried}")]
    StreamFailed {
        provider: String,
        message: String,
        retried: Retried,
    },
    /// A time limit ran out (`phase` says which, and names its setting). Connect, first-byte and
    /// whole-request timeouts are retried like a 5xx and returned when retries are exhausted
    /// (`retried`); a streamed answer that goes quiet ends as an error reply keeping what arrived.
    #[error("{}{retried}", timeout_message(provider, *phase, *timeout))]
    Timeout {
        provider: String,
        phase: TimeoutPhase,
        timeout: Duration,
        retried: Retried,
    },
    /// The provider answered `status` asking to wait longer than the configured maximum retry
    /// delay: returned at once. The message gives the provider's own message, as [`Self::Http`]'s
    /// does, and names the setting that allows a longer wait.
    #[error(
        "Provider `{provider}` returned HTTP {status}: {}; it asked to retry after {} s, more than the {} s `{MAX_RETRY_DELAY_SETTING}` allows (raise it, or 0 for no cap, to wait that long)",
        http_message(body), seconds(*retry_after), seconds(*max_delay)
    )]
    RetryDelayTooLong {
        provider: String,
        status: u16,
        retry_after: Duration,
        max_delay: Duration,
        body: String,
    },
    /// The cancellation token fired. Nothing to report to the user as a failure.
    #[error("Request to provider `{provider}` was cancelled")]
    Cancelled { provider: String },
    /// A success status with a body that is not the provider's documented format.
    #[error(
        "Provider `{provider}` sent an unreadable answer: {message}: {}",
        one_line(body)
    )]
    InvalidResponse {
        provider: String,
        message: String,
        body: String,
    },
    /// A streamed reply that ended in an error: the provider's `error` event (`Overloaded`), a
    /// stream cut short, a blocked prompt. `message` is the reason as the reply says it.
    #[error("Provider `{provider}`'s reply failed: {message}")]
    ReplyFailed { provider: String, message: String },
    /// A summary request answered with something that is not a whole summary: cut at the token cap
    /// (`length`), or a tool call (Pi 0.87 fails both). Nothing is written; retry with a larger
    /// output limit or another model.
    #[error("Provider `{provider}` gave no usable summary: {reason}")]
    UnusableSummary {
        provider: String,
        reason: &'static str,
    },
    /// A successful reply shows the prompt did not fit (silent truncation, or a `length` stop with
    /// no output that filled the window). The caller should compact or use a larger model.
    #[error(
        "Provider `{provider}` silently overflowed the context window: {used} input tokens for a window of {window}"
    )]
    SilentOverflow {
        provider: String,
        used: u64,
        window: u64,
    },
    /// No API key was configured for a provider that needs one. `llm.apiKey` counts for the
    /// provider the settings name only (`defaultModel`), so the message says so.
    #[error(
        "No API key for provider `{provider}`; run `ctxkit login {provider}` or set `{env_var}` (or `llm.apiKey`, with `defaultModel` a model of `{provider}`)"
    )]
    MissingApiKey { provider: String, env_var: String },
    /// A provider of one's own that is not the one the endpoint settings belong to: `llm.baseUrl`,
    /// `llm.api`, `llm.apiKey` and `llm.headers` are `owner`'s (the provider of `defaultModel`, else
    /// `defaultProvider`, else `compaction.model`), and are never sent to another provider. Make
    /// `provider` the default to use it.
    #[error(
        "Provider `{provider}` has no endpoint: `llm.baseUrl`, `llm.api`, `llm.apiKey` and `llm.headers` belong to `{owner}`, the provider the settings name"
    )]
    EndpointOfAnotherProvider { provider: String, owner: String },
    /// `llm.baseUrl`, `llm.apiKey` or `llm.headers` is set but the settings name no provider they
    /// are for (no `defaultModel`, `defaultProvider`, `compaction.model`, nor one provider of one's
    /// own in `llm.models`), and a built-in provider is asked for: its key is not sent to a host set
    /// for no one, nor the host skipped without a word. Name the provider, or unset them.
    #[error(
        "Provider `{provider}` does not use `llm.baseUrl`, `llm.apiKey` or `llm.headers`: they belong to no provider until `defaultModel` or `defaultProvider` names one"
    )]
    UnownedEndpoint { provider: String },
    /// The settings' endpoint (`llm.baseUrl`, `llm.apiKey`, `llm.headers`) is `provider`'s, and an
    /// `llm.providers` entry names `provider` too: two places say where its requests go and with
    /// which key. Refused rather than one silently winning; keep one.
    #[error(
        "Both `llm.baseUrl`/`llm.apiKey`/`llm.headers` (the settings' provider's endpoint) and `llm.providers.{provider}` say where `{provider}` requests go; nothing was sent"
    )]
    TwoEndpoints { provider: String },
    /// A provider whose host ctxkit was not told (no `llm.baseUrl` for it, no `OPENAI_BASE_URL`)
    /// would be sent to its public host, `default_url`, while the user's Pi sends it elsewhere
    /// (`route_url`, set in `file`, a Pi `models.json`, which ctxkit does not read). Refused before
    /// any request: its key never goes where the user's setup says it does not. An explicit
    /// `llm.baseUrl` wins (`owns_settings`: whether the settings' endpoint is this provider's, so
    /// `llm.baseUrl` alone applies to it).
    #[error(
        "Not sending `{provider}` requests to {}: {} routes `{provider}` through {} (Pi's models.json, which ctxkit does not read); nothing was sent",
        host_of(default_url), file.display(), host_of(route_url)
    )]
    RoutedElsewhere {
        provider: String,
        default_url: String,
        route_url: String,
        file: std::path::PathBuf,
        owns_settings: bool,
    },
    /// As [`LlmError::RoutedElsewhere`], but the Pi `models.json` at `file` exists and cannot be
    /// read as Pi reads it (`reason`, with the line and column): where it sends `provider` is
    /// unknown, so its public host `default_url` is refused rather than taken on a typo. Fix the
    /// file, or say where the provider goes with `llm.baseUrl`.
    #[error(
        "Not sending `{provider}` requests to {}: `{}` does not parse ({reason}), so where the user's Pi sends `{provider}` is unknown; nothing was sent",
        host_of(default_url), file.display()
    )]
    PiRoutesUnknown {
        provider: String,
        default_url: String,
        file: std::path::PathBuf,
        reason: String,
    },
    /// The provider name is neither built in nor declared (a model of it in `llm.models`, or the
    /// `defaultProvider`), or a declared one has no API kind or base URL.
    #[error(
        "Unknown provider `{provider}`: not built in (`ctxkit models` lists them) and no model of it in `llm.models`; to use your own endpoint, add the model to `llm.models` and set `llm.baseUrl` and `llm.api`"
    )]
    UnknownProvider { provider: String },
    /// A model reference without a model id (`anthropic/`).
    #[error("Invalid model `{spec}`; expected `provider/model-id`")]
    InvalidModel { spec: String },
    /// A configured header name or value is not valid HTTP. The value is never shown.
    #[error("Invalid HTTP header `{name}`")]
    InvalidHeader { name: String },
    /// The HTTP client could not be built (TLS initialisation), or a request could not be (a base
    /// URL without a scheme): not retried; fix the setting the message names.
    #[error("Could not create the HTTP client: {message}")]
    Client { message: String },
    /// The endpoint refused a beta the request needs (400 `Unexpected value(s) … for the
    /// `anthropic-beta` header`), now or earlier in this process: the request is not sent again.
    /// The caller falls back (on-demand compaction: the offline summary); `setting` turns the
    /// feature off.
    #[error(
        "The endpoint of provider `{provider}` does not take the `{beta}` beta; turn the feature off with {setting}"
    )]
    BetaRefused {
        provider: String,
        beta: String,
        setting: &'static str,
    },
}

impl LlmError {
    /// `true` when this error says the prompt did not fit the model's context window.
    ///
    /// An empty 400 body counts from Cerebras only, as the reference's `400 status code (no body)`;
    /// any 413 counts (Pi 1.6).
    pub fn is_context_overflow(&self) -> bool {
        match self {
            Self::Http {
                provider,
                status,
                body,
                ..
            } => {
                let provider = Some(provider.as_str());
                if body.trim().is_empty() {
                    ctxkit_overflow::is_overflow_error_text_from(
                        &format!("{status} status code (no body)"),
                        provider,
                    )
                } else {
                    // The status leads the text, as in Pi's error texts: a 413 counts from any
                    // provider (Pi 1.6), a 413 inside the body does not.
                    ctxkit_overflow::is_overflow_error_text_from(
                        &format!("{status} {body}"),
                        provider,
                    )
                }
            }
            Self::SilentOverflow { .. } => true,
            Self::Network { .. }
            | Self::StreamFailed { .. }
            | Self::Timeout { .. }
            | Self::RetryDelayTooLong { .. }
            | Self::Redirected { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::ReplyFailed { .. }
            | Self::UnusableSummary { .. }
            | Self::MissingApiKey { .. }
            | Self::EndpointOfAnotherProvider { .. }
            | Self::UnownedEndpoint { .. }
            | Self::TwoEndpoints { .. }
            | Self::RoutedElsewhere { .. }
            | Self::PiRoutesUnknown { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::BetaRefused { .. } => false,
        }
    }

    /// `true` when the same request may succeed later: 429, 5xx, network errors and timeouts,
    /// but never a context overflow.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Http { status, .. } => {
                (*status == 429 || *status >= 500) && !self.is_context_overflow()
            }
            Self::Network { .. } | Self::StreamFailed { .. } | Self::Timeout { .. } => true,
            Self::RetryDelayTooLong { .. }
            | Self::Redirected { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::ReplyFailed { .. }
            | Self::UnusableSummary { .. }
            | Self::SilentOverflow { .. }
            | Self::MissingApiKey { .. }
            | Self::EndpointOfAnotherProvider { .. }
            | Self::UnownedEndpoint { .. }
            | Self::TwoEndpoints { .. }
            | Self::RoutedElsewhere { .. }
            | Self::PiRoutesUnknown { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::BetaRefused { .. } => false,
        }
    }
}

impl LlmError {
    /// The HTTP status, for an HTTP error.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. }
            | Self::Redirected { status, .. }
            | Self::RetryDelayTooLong { status, .. } => Some(*status),
            Self::Network { .. }
            | Self::StreamFailed { .. }
            | Self::Timeout { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::ReplyFailed { .. }
            | Self::UnusableSummary { .. }
            | Self::SilentOverflow { .. }
            | Self::MissingApiKey { .. }
            | Self::EndpointOfAnotherProvider { .. }
            | Self::UnownedEndpoint { .. }
            | Self::TwoEndpoints { .. }
            | Self::RoutedElsewhere { .. }
            | Self::PiRoutesUnknown { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::BetaRefused { .. } => None,
        }
    }

    /// A few words on what went wrong, for a retry line: `429 Rate limit reached`, `connection
    /// refused`, `no response for 300 s`. The provider's own message when its body has one.
    pub fn brief(&self) -> String {
        match self {
            Self::Http { status, body, .. } => match provider_message(body) {
                Some(message) => format!("{status} {message}"),
                None => {
                    let reason = reqwest::StatusCode::from_u16(*status)
                        .ok()
                        .and_then(|code| code.canonical_reason())
                        .unwrap_or("error");
                    format!("{status} {}", reason.to_lowercase())
                }
            },
            Self::Redirected {
                status, location, ..
            } => shorten(
                &format!(
                    "{status} redirect to {}, not followed",
                    shown_location(location)
                ),
                80,
            ),
            Self::Network { message, .. } => {
                let last = message.rsplit(": ").next().unwrap_or(message);
                shorten(&last.to_lowercase(), 80)
            }
            Self::StreamFailed { message, .. } => shorten(&one_line(message), 80),
            Self::Timeout { phase, timeout, .. } => {
                let seconds = seconds(*timeout);
                match phase {
                    TimeoutPhase::Connect => format!("no connection within {seconds} s"),
                    TimeoutPhase::FirstByte => format!("no response for {seconds} s"),
                    TimeoutPhase::Idle => format!("nothing of the reply sent for {seconds} s"),
                    TimeoutPhase::Request => format!("no whole answer within {seconds} s"),
                }
            }
            Self::RetryDelayTooLong { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::ReplyFailed { .. }
            | Self::UnusableSummary { .. }
            | Self::SilentOverflow { .. }
            | Self::MissingApiKey { .. }
            | Self::EndpointOfAnotherProvider { .. }
            | Self::UnownedEndpoint { .. }
            | Self::TwoEndpoints { .. }
            | Self::RoutedElsewhere { .. }
            | Self::PiRoutesUnknown { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::BetaRefused { .. } => shorten(&self.to_string(), 80),
        }
    }

    /// This error, saying how often and over how long it was retried (the errors that are
    /// retried: HTTP errors, network errors and timeouts; others are returned as they are).
    pub(crate) fn after_retries(mut self, done: Retried) -> Self {
        match &mut self {
            Self::Http { retried, .. }
            | Self::Network { retried, .. }
            | Self::StreamFailed { retried, .. }
            | Self::Timeout { retried, .. } => *retried = done,
            Self::RetryDelayTooLong { .. }
            | Self::Redirected { .. }
            | Self::Cancelled { .. }
            | Self::InvalidResponse { .. }
            | Self::ReplyFailed { .. }
            | Self::UnusableSummary { .. }
            | Self::SilentOverflow { .. }
            | Self::MissingApiKey { .. }
            | Self::EndpointOfAnotherProvider { .. }
            | Self::UnownedEndpoint { .. }
            | Self::TwoEndpoints { .. }
            | Self::RoutedElsewhere { .. }
            | Self::PiRoutesUnknown { .. }
            | Self::UnknownProvider { .. }
            | Self::InvalidModel { .. }
            | Self::InvalidHeader { .. }
            | Self::Client { .. }
            | Self::BetaRefused { .. } => {}
        }
        self
    }
}

/// `60` for whole seconds, `0.25` otherwise.
pub(crate) fn seconds(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        duration.as_secs().to_string()
    } else {
        format!("{}", duration.as_secs_f64())
    }
}

fn timeout_message(provider: &str, phase: TimeoutPhase, timeout: Duration) -> String {
    let seconds = seconds(timeout);
    let setting = phase.setting();
    match phase {
        TimeoutPhase::Connect => {
            format!("Could not connect to provider `{provider}` within {seconds} s (`{setting}`)")
        }
        TimeoutPhase::FirstByte => {
            format!("Provider `{provider}` sent no response for {seconds} s (`{setting}`)")
        }
        TimeoutPhase::Idle => {
            format!("Provider `{provider}` sent nothing of its reply for {seconds} s (`{setting}`)")
        }
        TimeoutPhase::Request => {
            format!("Request to provider `{provider}` timed out after {seconds} s (`{setting}`)")
        }
    }
}

/// How a failed request was retried before its error was returned: `retries` after the first
/// attempt, the first sent `over` before the last failed. Shown after the error's own message
/// (`; tried 4 times over 14.2 s`), nothing when it was not retried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retried {
    /// Retries after the first attempt (0: sent once).
    pub retries: u32,
    /// From the first attempt's start to the last one's failure.
    pub over: Duration,
}

/// Opens the line [`Retried::stored_line`] writes.
const STORED_LINE_START: &str = "(ctxkit: tried ";

impl Retried {
    /// Not retried.
    pub const NONE: Self = Self {
        retries: 0,
        over: Duration::ZERO,
    };

    /// `4 times over 14.2 s`: every attempt, the first included.
    fn attempts(&self) -> String {
        let over = seconds(crate::retry::round_to_tenths(self.over));
        format!("{} times over {over} s", self.retries.saturating_add(1))
    }

    /// The line a failed reply stores under a retried HTTP error's `<status> <body>`
    /// (`ModelClient::failed_reply`), so the reply says it as the error did; `None` when the
    /// request was sent once.
    pub(crate) fn stored_line(&self) -> Option<String> {
        (self.retries > 0).then(|| format!("{STORED_LINE_START}{})", self.attempts()))
    }

    /// `text` without the line [`Self::stored_line`] wrote at its end, and what that line says.
    pub(crate) fn split_stored_line(text: &str) -> (&str, Self) {
        let parsed = text.rsplit_once('\n').and_then(|(before, line)| {
            let rest = line.strip_prefix(STORED_LINE_START)?.strip_suffix(" s)")?;
            let (count, over) = rest.split_once(" times over ")?;
            let attempts = count.parse::<u32>().ok().filter(|count| *count > 1)?;
            let over = over
                .parse::<f64>()
                .ok()
                .filter(|over| over.is_finite() && *over >= 0.0)?;
            let retried = Self {
                retries: attempts - 1,
                over: Duration::from_secs_f64(over.min(86_400.0)),
            };
            Some((before, retried))
        });
        parsed.unwrap_or((text, Self::NONE))
    }
}

impl std::fmt::Display for Retried {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.retries == 0 {
            return Ok(());
        }
        write!(formatter, "; tried {}", self.attempts())
    }
}

/// The provider's own message: the `message` of a JSON error body (`{"error": {"message": …}}`
/// and the like) or a plain-text body, on one line and shortened. `None` for an empty body or
/// JSON without a message.
fn provider_message(body: &str) -> Option<String> {
    const POINTERS: [&str; 5] = [
        "/error/message",
        "/message",
        "/error",
        "/0/error/message",
        "/detail",
    ];
    let message = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(value) => POINTERS
            .iter()
            .find_map(|pointer| value.pointer(pointer).and_then(serde_json::Value::as_str))?
            .to_owned(),
        Err(_) => body.to_owned(),
    };
    if message.trim().is_empty() {
        return None;
    }
    Some(shorten(&one_line(&message), 80))
}

/// What an HTTP error says, for a person: the provider's own message when the body is JSON that
/// holds one (not the raw JSON), else the body on one line.
fn http_message(body: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            [
                "/error/message",
                "/message",
                "/0/error/message",
                "/detail",
                "/error",
            ]
            .iter()
            .find_map(|pointer| value.pointer(pointer)?.as_str().map(str::to_owned))
        })
        .filter(|message| !message.trim().is_empty());
    match message {
        Some(message) => shorten(&one_line(&message), 400),
        None => one_line(body),
    }
}

/// A redirect's `Location` as a message shows it: one line, at most 200 characters.
fn shown_location(location: &str) -> String {
    if location.trim().is_empty() {
        return "(no address)".to_owned();
    }
    shorten(&one_line(location), 200)
}

/// `text` cut to `limit` characters, with `…` when cut.
fn shorten(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Error bodies are often pretty-printed JSON; messages are one line.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.is_empty() {
        "(no body)".to_owned()
    } else {
        joined
    }
}

/// The host (and port) of `url`, credentials left out: what a refusal names.
pub fn host_of(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = after_scheme
        .split(['/', '?', '#'])
        .next()
        .unwrap_or(after_scheme);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    host.to_ascii_lowercase()
}

//! The HTTP transport shared by every model client of a process ([`HttpClient`]: one connection
//! pool, so a summary request reuses the conversation's idle keep-alive connection instead of
//! opening a second one), and the time limits of a request ([`Timeouts`]): connecting, waiting for
//! the response headers, and silence between two pieces of a streamed answer.

use std::sync::Arc;
use std::time::Duration;

use crate::error::LlmError;

/// How long a request may wait at each stage (`llm.timeouts.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Opening the TCP (and TLS) connection (`llm.timeouts.connectSeconds`, 10 s).
    pub connect: Duration,
    /// From sending a streamed request to its response headers (`llm.timeouts.firstByteSeconds`,
    /// 300 s: a provider may read a long prompt before it answers).
    pub first_byte: Duration,
    /// Silence between two pieces of a streamed answer, keep-alives not counted as pieces
    /// (`llm.timeouts.idleSeconds`, 300 s: a
    /// reasoning model may think for minutes without sending anything).
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(DEFAULT_CONNECT_SECONDS),
            first_byte: Duration::from_secs(DEFAULT_FIRST_BYTE_SECONDS),
            idle: Duration::from_secs(DEFAULT_IDLE_SECONDS),
        }
    }
}

/// `llm.timeouts.connectSeconds`' default.
pub const DEFAULT_CONNECT_SECONDS: u64 = 10;
/// `llm.timeouts.firstByteSeconds`' default.
pub const DEFAULT_FIRST_BYTE_SECONDS: u64 = 300;
/// `llm.timeouts.idleSeconds`' default.
pub const DEFAULT_IDLE_SECONDS: u64 = 300;

/// Which limit a request ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// The connection could not be opened in time.
    Connect,
    /// A streamed request's response headers did not arrive in time.
    FirstByte,
    /// A streamed answer went quiet for longer than allowed.
    Idle,
    /// A whole (not streamed) answer took longer than `retry.provider.timeoutMs`.
    Request,
}

impl TimeoutPhase {
    /// The setting that sets this limit.
    pub fn setting(self) -> &'static str {
        match self {
            Self::Connect => "llm.timeouts.connectSeconds",
            Self::FirstByte => "llm.timeouts.firstByteSeconds",
            Self::Idle => "llm.timeouts.idleSeconds",
            Self::Request => "retry.provider.timeoutMs",
        }
    }
}

/// Proxies given as configuration (`httpProxy`), beside those of the environment that reqwest
/// reads itself: the caller decides which apply (Pi 1.6 applies `httpProxy` only where
/// `HTTP_PROXY`/`HTTPS_PROXY` are unset) and passes `NO_PROXY` along.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proxies {
    /// The proxy of `http://` requests.
    pub http: Option<String>,
    /// The proxy of `https://` requests.
    pub https: Option<String>,
    /// Hosts reached directly (`NO_PROXY`'s syntax).
    pub no_proxy: Option<String>,
}

impl Proxies {
    fn add_to(&self, builder: reqwest::ClientBuilder) -> Result<reqwest::ClientBuilder, LlmError> {
        let no_proxy = || {
            self.no_proxy
                .as_deref()
                .and_then(reqwest::NoProxy::from_string)
        };
        let invalid = |error: reqwest::Error| LlmError::Client {
            message: format!(
                "a proxy (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` or the `httpProxy` setting) is not a proxy URL: {}",
                error_chain(&error)
            ),
        };
        let mut builder = builder;
        if let Some(url) = &self.http {
            let proxy = reqwest::Proxy::http(url).map_err(invalid)?;
            builder = builder.proxy(proxy.no_proxy(no_proxy()));
        }
        if let Some(url) = &self.https {
            let proxy = reqwest::Proxy::https(url).map_err(invalid)?;
            builder = builder.proxy(proxy.no_proxy(no_proxy()));
        }
        Ok(builder)
    }
}

/// The HTTP client (rustls, one connection pool) that model clients send through. Cheap to clone:
/// clones share the pool. A process builds one and hands it to every [`crate::ModelClient`]
/// ([`crate::ModelClient::with_http`]); only the connect limit is fixed here, the others are per
/// request.
#[derive(Debug, Clone)]
pub struct HttpClient {
    inner: Arc<reqwest::Client>,
    connect: Duration,
}

impl HttpClient {
    /// Builds the client with `connect` as the limit for opening a connection. At most one idle
    /// connection is kept per host: the pool races a new connection against the return of the
    /// one a request just finished with, and a second idle connection to a server that serves one
    /// connection at a time would be one it never reads from.
    ///
    /// Redirects are never followed: reqwest keeps every header but `Authorization` and `Cookie`
    /// across origins, so `x-api-key`, `x-goog-api-key`, `llm.headers` and the whole conversation
    /// would go to whatever host a `Location` names. A 3xx answer is an error that names it
    /// ([`LlmError::Redirected`]; `docs/decisions.md`).
    pub fn new(connect: Duration) -> Result<Self, LlmError> {
        Self::with_proxies(connect, &Proxies::default())
    }

    /// [`HttpClient::new`], sending through `proxies` too.
    pub fn with_proxies(connect: Duration, proxies: &Proxies) -> Result<Self, LlmError> {
        let builder = reqwest::Client::builder()
            .connect_timeout(connect)
            .pool_max_idle_per_host(1)
            .redirect(reqwest::redirect::Policy::none());
        let inner = proxies
            .add_to(builder)?
            .build()
            .map_err(|error| LlmError::Client {
                message: error_chain(&error),
            })?;
        Ok(Self {
            inner: Arc::new(inner),
            connect,
        })
    }

    /// The limit for opening a connection.
    pub fn connect_timeout(&self) -> Duration {
        self.connect
    }

    pub(crate) fn inner(&self) -> &reqwest::Client {
        &self.inner
    }
}

/// An error and its sources on one line.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

//! `ctxkit serve --listen HOST:PORT`: the stdio protocol over WebSocket at `/rpc` (one connection
//! is one client), `GET /health` for a load balancer, a bearer token (`server.token`,
//! `CTXKIT_SERVER_TOKEN`) required on any address but loopback, and a graceful stop: once told to
//! stop, no connection is accepted, every client is told why (`server_stopping`), its requests
//! already read are answered (their entries committed) and those still running after the stop's
//! grace are cancelled, its session is closed (its lease released), then the connections are
//! closed (1001, with the reason; see [`crate::drain`]). Connections are accepted within
//! `ctxkit_http::ConnectionLimits` (`server.maxConnections`, a header-read and a handshake
//! timeout), so sockets that never finish a request cannot hold the server.
//!
//! A browser page may open a WebSocket to any address, loopback included, and cannot be told
//! apart from a local program by its address; it always sends `Origin`. A request with an
//! `Origin` is refused unless it carries the token, so a web page cannot drive a local agent; the
//! one `Origin` taken without it is the server's own address and port, which no page has
//! ([`crate::access`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use ctxkit_http::{Acceptor, ConnectionLimits, Slot};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use sha2::{Digest as _, Sha256};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::ServerConfig;
use crate::budget::{Budgeted, DEFAULT_MAX_BUFFERED_BYTES, Held, MemoryBudget, Patience};
use crate::drain::{Phase, Shutdown};

/// How long a drain (SIGTERM) lets the clients' running requests go on before they are cancelled.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How long the clients' cancelled requests may take to end and their sessions to be written and
/// released, once the grace is over, before the server stops anyway (a cancelled request is
/// abandoned after [`crate::ABANDON_AFTER`]).
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// How long `GET /health` waits for the database to answer before it reports it unavailable.
const HEALTH_STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// Why the listener did not start.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// A non-loopback address without a token. Returned by [`Listener::bind`]; set `server.token`
    /// or `CTXKIT_SERVER_TOKEN`, or listen on 127.0.0.1.
    #[error(
        "refusing to listen on {address} without a token: any machine that reaches it could run \
         the agent; set `CTXKIT_SERVER_TOKEN` (or setting `server.token`), or listen on 127.0.0.1"
    )]
    TokenRequired { address: SocketAddr },
    /// The address could not be bound (in use, not this machine's).
    #[error("cannot listen on {address}: {source}")]
    Bind {
        address: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// Connections open at once by default (`server.maxConnections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// A bound `serve --listen`.
pub struct Listener {
    listener: TcpListener,
    address: SocketAddr,
    state: Arc<State>,
    limits: ConnectionLimits,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Listener")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

struct State {
    config: Arc<ServerConfig>,
    /// SHA-256 of the token: compared digest to digest, so the comparison's time says nothing.
    token: Option<[u8; 32]>,
    phase: watch::Sender<Phase>,
    clients: AtomicUsize,
    /// The bytes all clients together may hold in requests.
    /// The bytes all clients' messages being received may hold.
    read_budget: MemoryBudget,
    /// The bytes all clients' requests waiting to run may hold.
    queue_budget: MemoryBudget,
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl Listener {
    /// Whether clients must present a token (without one, only the user who started the server
    /// and root may connect, over loopback).
    pub fn has_token(&self) -> bool {
        self.state.token.is_some()
    }

    /// Binds `address`; refuses a non-loopback one without `token`.
    pub async fn bind(
        address: SocketAddr,
        token: Option<String>,
        config: ServerConfig,
    ) -> Result<Self, ListenError> {
        let token = token.filter(|token| !token.is_empty());
        if token.is_none() && !address.ip().is_loopback() {
            return Err(ListenError::TokenRequired { address });
        }
        let listener = TcpListener::bind(address)
            .await
            .map_err(|source| ListenError::Bind { address, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| ListenError::Bind { address, source })?;
        let budget = budget_of(DEFAULT_MAX_BUFFERED_BYTES, &config);
        let queue_budget = budget_of(DEFAULT_MAX_BUFFERED_BYTES, &config);
        Ok(Self {
            listener,
            address: bound,
            state: Arc::new(State {
                config: Arc::new(config),
                token: token.as_deref().map(digest),
                phase: watch::Sender::new(Phase::Serving),
                clients: AtomicUsize::new(0),
                read_budget: budget,
                queue_budget,
            }),
            limits: ConnectionLimits::new(DEFAULT_MAX_CONNECTIONS),
        })
    }

    /// Accepts connections within `limits` (`server.maxConnections`; the default timeouts are
    /// `ctxkit_http`'s) instead of [`DEFAULT_MAX_CONNECTIONS`] and the default timeouts.
    pub fn set_limits(&mut self, limits: ConnectionLimits) {
        self.limits = limits;
    }

    /// Lets all clients together hold `bytes` in messages being received, and `bytes` in requests
    /// waiting to run (`server.maxBufferedBytes`), instead of [`DEFAULT_MAX_BUFFERED_BYTES`];
    /// never less than one message at its limit.
    pub fn set_memory_budget(&mut self, bytes: usize) {
        let (read_budget, queue_budget) = (
            budget_of(bytes, &self.state.config),
            budget_of(bytes, &self.state.config),
        );
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.read_budget = read_budget;
            state.queue_budget = queue_budget;
        }
    }

    /// Where it listens (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// Serves until `shutdown` completes, then drains: no new connection, the requests read are
    /// answered (those still running after [`SHUTDOWN_GRACE`] cancelled), the connections closed.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let drain = async {
            shutdown.await;
            Shutdown::drain("shutdown", SHUTDOWN_GRACE)
        };
        let _stopped = self.run_until(drain, std::future::pending()).await;
    }

    /// Serves until `stop` completes, then stops as it says: no new connection, each client told
    /// (`server_stopping`), the requests read answered, those still running after its grace (or
    /// when `hurry` completes first: a second signal) cancelled as a client's end cancels them,
    /// each session closed (written, its lease released) within [`CANCEL_GRACE`] more, the
    /// connections closed (1001). Says how many clients were still connected when it stopped
    /// waiting for them.
    pub async fn run_until(
        self,
        stop: impl Future<Output = Shutdown>,
        hurry: impl Future<Output = ()>,
    ) -> Stopped {
        let mut connections = tokio::task::JoinSet::new();
        let (state, limits) = (self.state, self.limits);
        let acceptor = Acceptor::new(self.listener, limits);
        tokio::pin!(stop);
        let shutdown = loop {
            let accepted = tokio::select! {
                accepted = acceptor.accept() => accepted,
                shutdown = &mut stop => break shutdown,
            };
            serve(&state, limits, accepted, &mut connections);
        };
        let shutdown = Arc::new(shutdown);
        let grace = shutdown.grace;
        state
            .phase
            .send_replace(Phase::Draining(Arc::clone(&shutdown)));
        // Still accepted while the clients drain, and answered 503 `draining` (`route`): a
        // balancer's health check sees a drain, not a refused connection.
        let drained = async {
            tokio::select! {
                _ = tokio::time::timeout(grace, clients_gone(&state)) => {}
                () = hurry => {}
            }
        };
        accept_until(&state, limits, &acceptor, &mut connections, drained).await;
        state.phase.send_replace(Phase::Cancelling(shutdown));
        let cancelled = async {
            let _ = tokio::time::timeout(CANCEL_GRACE, clients_gone(&state)).await;
        };
        accept_until(&state, limits, &acceptor, &mut connections, cancelled).await;
        // Counted before the connections are cut: a client still here has a request unanswered
        // or a session not yet closed (a database that does not answer holds both).
        let cut_off = state.clients.load(Ordering::SeqCst);
        drop(acceptor);
        connections.abort_all();
        Stopped { cut_off }
    }
}

/// How a listening server's stop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    /// Clients still connected when the server stopped waiting (the grace and [`CANCEL_GRACE`]
    /// over): their connections were cut with a request unanswered or a session not closed.
    pub cut_off: usize,
}

/// Serves the connections that come until `until` completes.
async fn accept_until(
    state: &Arc<State>,
    limits: ConnectionLimits,
    acceptor: &Acceptor,
    connections: &mut tokio::task::JoinSet<()>,
    until: impl Future<Output = ()>,
) {
    tokio::pin!(until);
    loop {
        tokio::select! {
            () = &mut until => return,
            accepted = acceptor.accept() => serve(state, limits, accepted, connections),
        }
    }
}

/// Serves one accepted connection on its own task.
fn serve(
    state: &Arc<State>,
    limits: ConnectionLimits,
    accepted: ctxkit_http::Accepted,
    connections: &mut tokio::task::JoinSet<()>,
) {
    let state = Arc::clone(state);
    let builder = limits.http1();
    // Without a token, only the user who started the server (or root) may use it.
    let this_user = state.token.is_none()
        && accepted
            .stream
            .local_addr()
            .is_ok_and(|local| ctxkit_http::opened_by_this_user(local, accepted.peer));
    let connection = Connection {
        slot: accepted.slot,
        upgrade_timeout: limits.upgrade_timeout,
        this_user,
        local: accepted.stream.local_addr().ok(),
    };
    connections.spawn(async move {
        let service = service_fn(move |request| {
            let (state, connection) = (Arc::clone(&state), connection.clone());
            async move { Ok::<_, Infallible>(route(&state, request, connection).await) }
        });
        let _ = builder
            .serve_connection(TokioIo::new(accepted.stream), service)
            .with_upgrades()
            .await;
    });
    // Finished connections are reaped as others come.
    while connections.try_join_next().is_some() {}
}

/// When no WebSocket client is left.
async fn clients_gone(state: &State) {
    while state.clients.load(Ordering::SeqCst) > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, body: serde_json::Value) -> Reply {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// What a request knows of its connection.
#[derive(Clone)]
struct Connection {
    /// Its place under the cap, which a WebSocket keeps for as long as it lasts.
    slot: Slot,
    upgrade_timeout: Duration,
    /// Opened by the user who started the server, or root (`/proc/net/tcp`): what a server
    /// without a token asks of a client, since every local account reaches loopback.
    this_user: bool,
    /// The address the connection reached: the one `Origin` a server without a token takes.
    local: Option<SocketAddr>,
}

async fn route(state: &Arc<State>, request: Request<Incoming>, connection: Connection) -> Reply {
    let draining = *state.phase.borrow() != Phase::Serving;
    match (request.method().as_str(), request.uri().path()) {
        ("GET", "/health") if draining => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "draining"}),
        ),
        ("GET", "/health") => health(state).await,
        ("GET", "/rpc") if draining => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "the server is shutting down; connect to another instance"}),
        ),
        ("GET", "/rpc") => upgrade(state, request, connection),
        _ => reply(
            StatusCode::NOT_FOUND,
            json!({"error": "not found: the protocol is at /rpc (WebSocket), health at /health"}),
        ),
    }
}

/// `GET /health`: ok with the number of clients; with a database store, ok only while the
/// database answers within [`HEALTH_STORE_TIMEOUT`] (503 `store_unavailable` otherwise: every
/// request that writes would fail). Says nothing of why: it needs no token.
async fn health(state: &State) -> Reply {
    let clients = state.clients.load(Ordering::SeqCst);
    let Some(binding) = &state.config.store else {
        return reply(
            StatusCode::OK,
            json!({"status": "ok", "clients": clients, "store": "files"}),
        );
    };
    let answered = tokio::time::timeout(HEALTH_STORE_TIMEOUT, binding.store.check()).await;
    let (status, word) = match answered {
        Ok(Ok(())) => (StatusCode::OK, "ok"),
        Ok(Err(_)) | Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "store_unavailable"),
    };
    reply(
        status,
        json!({"status": word, "clients": clients, "store": "database"}),
    )
}

/// Whether the request may use the server: the token when one is set; without one (loopback
/// only), a request from a program of the user who started the server (or root) that is no web
/// page's: without an `Origin`, or with the server's own address as its one `Origin`.
fn authorized(state: &State, request: &Request<Incoming>, connection: &Connection) -> bool {
    // One credential: a request with two `Authorization` headers is refused whichever comes
    // first (QA 2026-12-07: only the first was read), as two `Origin`s are.
    let mut credentials = request.headers().get_all(header::AUTHORIZATION).iter();
    let first = credentials.next();
    let one_credential = credentials.next().is_none();
    let presented = first
        .and_then(|value| value.to_str().ok())
        .and_then(crate::access::bearer_token)
        .map(digest);
    match (state.token, presented) {
        (Some(expected), Some(presented)) => one_credential && expected == presented,
        (Some(_), None) => false,
        (None, _) => {
            connection.this_user && !crate::access::from_a_web_page(request, connection.local)
        }
    }
}

fn header_has(request: &Request<Incoming>, name: header::HeaderName, word: &str) -> bool {
    request
        .headers()
        .get_all(name)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|item| item.trim().eq_ignore_ascii_case(word))
}

fn upgrade(state: &Arc<State>, mut request: Request<Incoming>, connection: Connection) -> Reply {
    if !authorized(state, &request, &connection) {
        let credentials = request
            .headers()
            .get_all(header::AUTHORIZATION)
            .iter()
            .count();
        let presented = credentials > 0;
        let own_origin = connection.local.map_or_else(
            || "`http://ADDRESS:PORT`".to_owned(),
            |local| format!("`http://{local}`"),
        );
        let why = match (state.token.is_some(), connection.this_user) {
            (true, _) if credentials > 1 => {
                format!("a request carries one `Authorization` header; this one has {credentials}")
            }
            (true, _) if presented => "the bearer token is wrong: it is not this server's token \
                 (`CTXKIT_SERVER_TOKEN`, setting `server.token`)"
                .to_owned(),
            (true, _) => "a bearer token is required (`Authorization: Bearer …`)".to_owned(),
            (false, false) => "this server has no token and takes connections only from the user \
                 who started it; start it with a token (`CTXKIT_SERVER_TOKEN`, setting \
                 `server.token`) to share it"
                .to_owned(),
            // A client that connected to `localhost` sends `Origin: http://localhost:PORT`, a
            // name, which any page's DNS could make: it is told the address to connect to.
            (false, true) => format!(
                "a request with an `Origin` other than this server's own address, {own_origin}, \
                 (a web page, or a client that connected by a name such as `localhost`: connect \
                 to the address instead) may use this server only with its token; this one has \
                 none (`CTXKIT_SERVER_TOKEN`, setting `server.token`)"
            ),
        };
        let mut refused = reply(StatusCode::UNAUTHORIZED, json!({"error": why}));
        // Asked for only when there is one to present.
        if state.token.is_some() {
            refused
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        return refused;
    }
    let key = request.headers().get(header::SEC_WEBSOCKET_KEY).cloned();
    let is_websocket = header_has(&request, header::CONNECTION, "upgrade")
        && header_has(&request, header::UPGRADE, "websocket")
        && request
            .headers()
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_some_and(|version| version == "13");
    let Some(key) = key.filter(|_| is_websocket) else {
        return reply(
            StatusCode::UPGRADE_REQUIRED,
            json!({"error": "/rpc speaks JSON-RPC over WebSocket (version 13)"}),
        );
    };
    let accept = derive_accept_key(key.as_bytes());
    let upgrading = hyper::upgrade::on(&mut request);
    let state = Arc::clone(state);
    state.clients.fetch_add(1, Ordering::SeqCst);
    tokio::spawn(async move {
        // The connection counts against the cap for as long as the WebSocket lasts.
        let Connection {
            slot: _slot,
            upgrade_timeout,
            this_user: _,
            local: _,
        } = connection;
        // A client that does not take the `101` in time is let go.
        if let Ok(Ok(upgraded)) = tokio::time::timeout(upgrade_timeout, upgrading).await {
            let held = Held::default();
            let socket = WebSocketStream::from_raw_socket(
                Budgeted::new(
                    TokioIo::new(upgraded),
                    &state.read_budget,
                    held.clone(),
                    max_message_bytes(state.config.max_request_bytes),
                    Patience::default(),
                ),
                Role::Server,
                Some(socket_config(&state.config)),
            )
            .await;
            crate::socket::serve_socket(
                socket,
                Arc::clone(&state.config),
                state.phase.subscribe(),
                state.queue_budget.clone(),
                held,
            )
            .await;
        }
        state.clients.fetch_sub(1, Ordering::SeqCst);
    });
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

/// What a message may exceed `server.maxRequestBytes` by, doubled, before it closes the connection
/// (so a small limit still answers a request a little too long with its error, as on stdio).
const MESSAGE_SLACK_BYTES: usize = 64 * 1024;

/// The longest message read: 2 × (`server.maxRequestBytes` + 64 KiB), as `docs/protocol.md` says;
/// a message up to it that is longer than a request line may be is answered with the request
/// line's error; a longer one closes the connection (1009).
fn max_message_bytes(max_request_bytes: usize) -> usize {
    max_request_bytes
        .saturating_add(MESSAGE_SLACK_BYTES)
        .saturating_mul(2)
}

/// The budget of `bytes`, at least a message at its limit (or it could never be received).
fn budget_of(bytes: usize, config: &ServerConfig) -> MemoryBudget {
    MemoryBudget::new(bytes, max_message_bytes(config.max_request_bytes))
}

fn socket_config(config: &ServerConfig) -> WebSocketConfig {
    let limit = max_message_bytes(config.max_request_bytes);
    WebSocketConfig::default()
        .max_message_size(Some(limit))
        .max_frame_size(Some(limit))
}

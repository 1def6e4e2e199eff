//! The stdio server: JSON-RPC 2.0, one JSON document per line, so agents in any language can use
//! the engine, and run the agent loop (`agent.run`). Requests run one after another, in order;
//! cancellations (`compact.cancel`, `branch_summary.cancel`, `agent.cancel`) are answered at once.
//! Responses and the `event` notifications share one writer, a line at a time. The protocol is
//! documented in `docs/protocol.md`.
//!
//! A JSON-RPC exchange: a session is created, a user message appended, and the model's view asked
//! for (an embedder reads requests from its client; here they are lines of text):
//!
//! ```
//! use std::sync::Arc;
//!
//! use ctxkit_agent::OfflineSummarizer;
//! use ctxkit_compaction::Prompts;
//! use ctxkit_engine::EngineSettings;
//! use ctxkit_server::{DEFAULT_MAX_QUEUED_BYTES, DEFAULT_MAX_REQUEST_BYTES, ServerConfig, serve};
//! use serde_json::Value;
//! use tokio::io::AsyncReadExt;
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let sessions = tempfile::tempdir()?;
//! let config = ServerConfig {
//!     settings: EngineSettings::default(),
//!     summarizer: Arc::new(OfflineSummarizer::default()),
//!     prompts: Prompts::default(),
//!     model: None,
//!     sessions_root: sessions.path().to_owned(),
//!     agent: None,
//!     max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
//!     max_queued_bytes: DEFAULT_MAX_QUEUED_BYTES,
//!     foreign_hint: None,
//!     store: None,
//! };
//! let requests = [
//!     r#"{"jsonrpc":"2.0","id":1,"method":"session.create","params":{"cwd":"/home/me/project"}}"#,
//!     r#"{"jsonrpc":"2.0","id":2,"method":"message.append","params":{"message":{"role":"user","content":"fix the parser","timestamp":1763900000000}}}"#,
//!     r#"{"jsonrpc":"2.0","id":3,"method":"view.get"}"#,
//! ]
//! .join("\n");
//! let (writer, mut reader) = tokio::io::duplex(64 * 1024);
//! let mut output = String::new();
//! // The server answers each line in order and ends at the end of its input.
//! let (served, read) = tokio::join!(
//!     serve(config, requests.as_bytes(), writer),
//!     reader.read_to_string(&mut output),
//! );
//! served?;
//! read?;
//! let responses: Vec<Value> = output.lines().map(serde_json::from_str).collect::<Result<_, _>>()?;
//! let answer = |id: u64| responses.iter().find(|response| response["id"] == id).cloned();
//! let created = answer(1).ok_or("session.create is answered")?;
//! assert_eq!(created["result"]["cwd"], "/home/me/project");
//! let appended = answer(2).ok_or("message.append is answered")?;
//! assert!(appended["result"]["entry_id"].is_string(), "{appended}");
//! let view = answer(3).ok_or("view.get is answered")?;
//! assert_eq!(view["result"]["messages"][0]["content"], "fix the parser", "{view}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod access;
mod activity;
mod agent_run;
mod budget;
mod drain;
mod envelope;
mod errors;
mod input;
mod listen;
mod methods;
mod mirror;
mod outgoing;
mod pages;
mod params;
mod projects;
mod queue;
mod recall;
mod session_methods;
mod socket;
mod steer;
mod stop;

pub use agent_run::{AgentConfig, ModelSource, SystemPrompt};
pub use budget::DEFAULT_MAX_BUFFERED_BYTES;
pub use drain::Shutdown;
pub use input::{DEFAULT_MAX_QUEUED_BYTES, DEFAULT_MAX_REQUEST_BYTES};
pub use listen::{
    CANCEL_GRACE, DEFAULT_MAX_CONNECTIONS, ListenError, Listener, SHUTDOWN_GRACE, Stopped,
};
pub use mirror::StoreBinding;
pub use pages::MAX_ANSWER_MESSAGES;
pub use stop::ABANDON_AFTER;
mod validate;
mod validate_blocks;
mod wire;

use std::path::PathBuf;
use std::sync::Arc;

use ctxkit_compaction::Prompts;
use ctxkit_summarizer::Summarizer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{RwLock, mpsc};

use ctxkit_engine::{Engine, EngineSettings, ModelInfo};

/// The protocol version reported by `initialize`.
pub const PROTOCOL_VERSION: &str = "1";

/// What sessions opened through the server are given.
pub struct ServerConfig {
    pub settings: EngineSettings,
    pub summarizer: Arc<dyn Summarizer>,
    pub prompts: Prompts,
    /// The model of the conversation until `model.set`.
    pub model: Option<ModelInfo>,
    /// Sessions created without a directory go to `<sessions_root>/<encoded cwd>/`.
    pub sessions_root: PathBuf,
    /// What `agent.run` needs; `None` refuses it.
    pub agent: Option<AgentConfig>,
    /// The longest request line accepted (`server.maxRequestBytes`); a longer one is discarded
    /// as it arrives and answered with an error.
    pub max_request_bytes: usize,
    /// The bytes of request lines held behind the running request (`server.maxQueuedBytes`): past
    /// it the server stops reading its input until the queue drains, so a client that pipelines
    /// faster than requests run is slowed down instead of growing the server's memory.
    pub max_queued_bytes: usize,
    /// A database store (`--store postgres://…`): `session.create` and `session.open` by id work
    /// on it, each acknowledged entry committed there under the session's lease. `None`: files.
    pub store: Option<StoreBinding>,
    /// What to tell a client whose `session.open` names a file another agent wrote (a Claude Code
    /// transcript, a Codex rollout): the command that converts it. `None` says only that the file
    /// is not a session.
    pub foreign_hint: Option<ForeignHint>,
}

/// The hint for a file another agent wrote, when it is one ([`ServerConfig::foreign_hint`]).
pub type ForeignHint = fn(&std::path::Path) -> Option<String>;

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ServerConfig")
            .field("summarizer", &self.summarizer.name())
            .field("model", &self.model)
            .field("sessions_root", &self.sessions_root)
            .finish_non_exhaustive()
    }
}

/// JSON-RPC error codes.
pub(crate) mod codes {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// The engine refused or failed; `data.kind` says how.
    pub const ENGINE_ERROR: i64 = -32000;
    /// No session is open yet.
    pub const NO_SESSION: i64 = -32001;
    /// `agent.run` has no model to talk to.
    pub const NO_MODEL: i64 = -32002;
}

/// A method's failure.
#[derive(Debug)]
pub(crate) struct MethodError {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) kind: Option<&'static str>,
}

impl MethodError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            kind: None,
        }
    }
}

pub(crate) struct Shared {
    pub(crate) config: Arc<ServerConfig>,
    /// This client's name as a writer of database sessions.
    pub(crate) owner: String,
    /// The open database session, when the store is a database.
    pub(crate) mirror: tokio::sync::Mutex<Option<mirror::Mirror>>,
    pub(crate) engine: RwLock<Option<Engine>>,
    pub(crate) out: outgoing::Outgoing,
    /// The method of the request running now (a `compact` arriving during `agent.run` stops it).
    pub(crate) running: std::sync::Mutex<Option<String>>,
    /// What the running request is doing (named when it is abandoned).
    pub(crate) activity: activity::Tracker,
    /// The `compact.cancel`s read so far, and those read before the running request: a `compact`
    /// read before a `compact.cancel` is cancelled even when it had not started.
    pub(crate) compact_cancels: std::sync::atomic::AtomicU64,
    pub(crate) compact_cancels_before_running: std::sync::atomic::AtomicU64,
    /// Tells the running request to stop (`agent.cancel`, `shutdown`, the client's end).
    pub(crate) stop: tokio::sync::watch::Sender<stop::Stop>,
    /// A listening server's phase (`None` on stdio): once it drains, the input ends because the
    /// server stops reading, not because the client left, and the requests read finish.
    pub(crate) draining: Option<tokio::sync::watch::Receiver<drain::Phase>>,
    /// Set (to the signal's number) when the process is being stopped, before a stdio server's
    /// input is ended for it: that end is the server stopping, not the client leaving.
    pub(crate) signalled: Option<Arc<std::sync::OnceLock<i32>>>,
    /// The projects this client chose: where its runs may work (`projects`).
    pub(crate) projects: projects::ChosenProjects,
    /// What `agent.steer` queued for the run (`steer`).
    pub(crate) steered: Arc<steer::Steered>,
    /// The budget a listening server's clients share for their queued lines (`None` on stdio).
    pub(crate) queue_budget: Option<budget::MemoryBudget>,
}

/// What a WebSocket client of a listening server is served with, beside its config.
pub(crate) struct Listened {
    /// The server's phase: once it drains, the input ends because the server stops reading.
    pub(crate) draining: tokio::sync::watch::Receiver<drain::Phase>,
    /// Set when the client disconnected: what it queued is not run.
    pub(crate) gone: Arc<std::sync::atomic::AtomicBool>,
    /// The bytes all clients' queued lines together may hold.
    pub(crate) queue_budget: budget::MemoryBudget,
}

/// Serves requests from `input` until it ends or `shutdown` is called; writes to `output`.
pub async fn serve<R, W>(config: ServerConfig, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_client(Arc::new(config), input, output, None, None).await
}

/// [`serve`] in a process that ends `input` when a signal stops it, having first set `signalled`
/// to the signal's number: what that end interrupts says the server is stopping, not that the
/// client disconnected.
pub async fn serve_until_signalled<R, W>(
    config: ServerConfig,
    input: R,
    output: W,
    signalled: Arc<std::sync::OnceLock<i32>>,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_client(Arc::new(config), input, output, Some(signalled), None).await
}

/// [`serve`] for one client of several sharing `config` (a WebSocket connection). The end of
/// `input` is the client's end, which stops its requests as `shutdown` does, unless the server
/// drains by then (it stopped reading the input: the requests read finish, or are cancelled when
/// the drain's grace is over; see [`drain`]).
pub(crate) async fn serve_client<R, W>(
    config: Arc<ServerConfig>,
    mut input: R,
    mut output: W,
    signalled: Option<Arc<std::sync::OnceLock<i32>>>,
    listened: Option<Listened>,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (draining, gone, queue_budget) = match listened {
        Some(listened) => (
            Some(listened.draining),
            Some(listened.gone),
            Some(listened.queue_budget),
        ),
        None => (None, None, None),
    };
    let (out, mut outgoing) = outgoing::Outgoing::new(outgoing::MAX_WAITING_BYTES);
    let writer = tokio::spawn(async move {
        // `None` is the end (a tool abandoned in a thread may still hold an event sender).
        while let Some(Some(line)) = outgoing.receiver.recv().await {
            let written = async {
                output.write_all(line.as_bytes()).await?;
                output.flush().await
            }
            .await;
            outgoing.written(line.len());
            if let Err(error) = written {
                outgoing.closed();
                return Err(error);
            }
        }
        outgoing.closed();
        Ok::<(), std::io::Error>(())
    });
    let owner = config
        .store
        .as_ref()
        .map(mirror::client_owner)
        .unwrap_or_default();
    let shared = Arc::new(Shared {
        config,
        owner,
        mirror: tokio::sync::Mutex::new(None),
        running: std::sync::Mutex::new(None),
        activity: activity::Tracker::default(),
        compact_cancels: std::sync::atomic::AtomicU64::new(0),
        compact_cancels_before_running: std::sync::atomic::AtomicU64::new(0),
        engine: RwLock::new(None),
        out,
        stop: tokio::sync::watch::Sender::new(stop::Stop::Nothing),
        draining: draining.clone(),
        signalled,
        projects: projects::ChosenProjects::new(),
        queue_budget,
        steered: Arc::default(),
    });
    let follower = draining.map(|phase| tokio::spawn(drain::follow(Arc::clone(&shared), phase)));
    // Requests run one after another, in order, so a client may pipeline them; cancellation and
    // `initialize` are answered at once, so a running `compact` can be cancelled.
    let (queue, mut queued) = mpsc::unbounded_channel::<queue::Queued>();
    let worker_shared = Arc::clone(&shared);
    let worker = tokio::spawn(async move {
        while let Some(request) = queued.recv().await {
            // A WebSocket client that disconnected reads no answer: what it queued is dropped,
            // so its session is released at once (a stdio client's input ending is answered).
            if gone
                .as_ref()
                .is_some_and(|gone| gone.load(std::sync::atomic::Ordering::SeqCst))
            {
                request
                    .reply
                    .send(&worker_shared.out, Err(envelope::client_gone()));
                continue;
            }
            if let Some(error) = request.refused {
                request.reply.send(&worker_shared.out, Err(error));
                continue;
            }
            if request.reply.batch_is_full() {
                request
                    .reply
                    .send(&worker_shared.out, Err(envelope::batch_too_large()));
                continue;
            }
            // A client that reads nothing holds the next request back (and, through the queue's
            // budget, the reading of its input); `shutdown` does not wait.
            let mut stop = worker_shared.stop.subscribe();
            tokio::select! {
                () = worker_shared.out.room() => {}
                _ = stop.wait_for(|stop| *stop == stop::Stop::Everything) => {}
            }
            let outcome = run_queued(
                &worker_shared,
                request.method,
                request.params,
                request.compact_cancels_before,
            )
            .await;
            request.reply.send(&worker_shared.out, outcome);
            // Its share of the queue's budget is given back once it has run.
            drop(request.held);
        }
    });
    let (lines_in, lines) = mpsc::channel(1);
    let (read, shutdown) = tokio::join!(
        queue::read_requests(&shared, &mut input, lines_in),
        queue::dispatch_requests(&shared, lines, queue),
    );
    if read.is_err()
        && let Some(follower) = &follower
    {
        follower.abort();
    }
    read?;
    let _ = worker.await;
    // The requests have ended: nothing is left to cancel.
    if let Some(follower) = follower {
        follower.abort();
    }
    // Entries held back by the deferred first write (no assistant message yet) were acknowledged
    // with ids: write them now, on `shutdown` and at the end of input alike, and say when that fails.
    let engine = shared.engine.read().await.clone();
    let flushed = match engine {
        Some(engine) => engine.flush_pending().await,
        None => Ok(()),
    };
    mirror::close(&shared).await;
    if let Some(reply) = shutdown {
        let outcome = flushed.map(|()| Answer::Value(json!({}))).map_err(|error| {
            MethodError::new(
                codes::ENGINE_ERROR,
                format!("entries appended before the first reply were not written: {error}"),
            )
        });
        // Answered, and its batch (if any) written, before the writer ends.
        reply.send(&shared.out, outcome);
    }
    // Ends the writer; the engines' events were written as they happened.
    agent_run::stop_warming(&shared);
    *shared.engine.write().await = None;
    shared.out.end();
    drop(shared);
    match writer.await {
        Ok(result) => result,
        Err(error) => Err(std::io::Error::other(error)),
    }
}

/// Runs a request that waited its turn, its `compact.cancel`s read before it given.
async fn run_queued(
    shared: &Arc<Shared>,
    method: String,
    params: Value,
    compact_cancels_before: u64,
) -> Result<Answer, MethodError> {
    // On a database store a writer whose lease was taken over runs nothing.
    mirror::before_request(shared, &method).await?;
    // Each request on its own task: a panic fails that request, not every later one.
    set_running(shared, Some(method.clone()));
    shared
        .compact_cancels_before_running
        .store(compact_cancels_before, std::sync::atomic::Ordering::SeqCst);
    let outcome = stop::run_request(shared, method, params).await;
    set_running(shared, None);
    // On a database store the entries it appended are committed before it is answered.
    mirror::after_request(shared, outcome).await
}

fn set_running(shared: &Shared, method: Option<String>) {
    if let Ok(mut running) = shared.running.lock() {
        *running = method;
    }
    shared.activity.set(activity::Activity::Other);
}

/// A method's result: built as a `Value`, or already JSON text (`view.get`, written straight from
/// the view's messages).
pub(crate) enum Answer {
    Value(Value),
    Text(Box<serde_json::value::RawValue>),
}

impl serde::Serialize for Answer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Value(value) => value.serialize(serializer),
            Self::Text(text) => text.serialize(serializer),
        }
    }
}

/// Forwards an engine's events as `event` notifications, as they happen: a request's events are
/// written before its answer.
pub(crate) fn forward_events(shared: &Arc<Shared>, engine: &Engine) {
    let out = shared.out.clone();
    let activity = shared.activity.clone();
    engine.add_sink(Box::new(move |event| {
        activity.engine_event(event);
        let Ok(params) = serde_json::to_value(wire::Event::from(event.clone())) else {
            return true;
        };
        out.send(&json!({"jsonrpc": "2.0", "method": "event", "params": params}))
            .is_ok()
    }));
}

//! How a listening server stops (`serve --listen` on SIGTERM, SIGHUP or Ctrl-C), as each client
//! sees it: a `server_stopping` notification saying why and how long running requests may still
//! take, no request read after it, the requests read answered, the running ones cancelled (as
//! the client's end cancels them) once the grace is over, the session closed (its entries
//! written, its lease released), then a close frame 1001 ("going away") with the reason.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;

use crate::Shared;

/// Why and how a listening server stops: `reason` names the cause in a word or two (`SIGTERM`),
/// `grace` is how long requests already running may go on before they are cancelled (zero:
/// cancelled at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shutdown {
    pub reason: String,
    pub grace: Duration,
}

impl Shutdown {
    /// A drain: running requests may finish within `grace`.
    pub fn drain(reason: impl Into<String>, grace: Duration) -> Self {
        Self {
            reason: reason.into(),
            grace,
        }
    }

    /// A stop that cancels running requests at once.
    pub fn now(reason: impl Into<String>) -> Self {
        Self::drain(reason, Duration::ZERO)
    }

    /// The close frame's reason (at most 123 bytes, as a close frame's reason may hold).
    pub(crate) fn close_reason(&self) -> String {
        let mut text = format!(
            "the server is stopping ({}); reconnect to continue",
            self.reason
        );
        while text.len() > 123 {
            text.pop();
        }
        text
    }
}

/// Where a listening server is in its life, as each of its clients follows it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Phase {
    /// Requests are read and run.
    #[default]
    Serving,
    /// No request is read any more; those read run (within the grace).
    Draining(Arc<Shutdown>),
    /// The grace is over: running requests are cancelled as the client's end cancels them.
    Cancelling(Arc<Shutdown>),
}

impl Phase {
    pub(crate) fn shutdown(&self) -> Option<&Shutdown> {
        match self {
            Self::Serving => None,
            Self::Draining(shutdown) | Self::Cancelling(shutdown) => Some(shutdown),
        }
    }
}

/// The `server_stopping` notification for `shutdown`, as a line of JSON. The client's socket
/// writes it itself (`socket`), on the same task that writes the close frame after it: sent from a
/// task of its own, it could be aborted (the client's input ended by the drain, its requests done)
/// before it ran, and the client got the close frame alone.
pub(crate) fn notice(shutdown: &Shutdown) -> String {
    let grace = u64::try_from(shutdown.grace.as_millis()).unwrap_or(u64::MAX);
    json!({"jsonrpc": "2.0", "method": "server_stopping", "params": {
        "reason": shutdown.reason,
        "grace_ms": grace,
        "message": format!(
            "the server is stopping ({}): no new request is read; running ones are cancelled \
             after {grace} ms; the session is written and released, then the connection \
             closes (reconnect to continue)",
            shutdown.reason
        ),
    }})
    .to_string()
}

/// Follows the server's phase for one client: cancels what runs once the grace is over. Ends when
/// the phase can no longer change.
pub(crate) async fn follow(shared: Arc<Shared>, mut phase: watch::Receiver<Phase>) {
    let cancelling = phase
        .wait_for(|phase| matches!(phase, Phase::Cancelling(_)))
        .await
        .is_ok();
    if cancelling {
        crate::queue::stop_everything(&shared, ctxkit_engine::InterruptCause::ServerStopping).await;
    }
}

//! The signals that stop a long-running command (`serve`, `view`) the way Ctrl-C does, so it ends
//! cleanly: requests answered, sessions released, private copies removed.

use std::future::Future;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Which signals stop a command besides Ctrl-C (SIGINT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stops {
    /// SIGTERM too: a service manager's stop, `kill`.
    OnTerminate,
    /// SIGTERM and SIGHUP: the terminal the command runs in was closed.
    OnTerminateAndHangup,
}

/// A future that completes when one of the signals arrives. They are caught from this call on,
/// so it must run inside the runtime, before the command says it is ready (a signal sent as soon
/// as it said so must not meet the default action, which ends the process on the spot). A signal
/// that cannot be caught keeps its default.
pub fn stop_signal(stops: Stops) -> impl Future<Output = ()> + Send + 'static {
    let hangup = match stops {
        Stops::OnTerminate => None,
        Stops::OnTerminateAndHangup => signal(SignalKind::hangup()).ok(),
    };
    let interrupt = signal(SignalKind::interrupt()).ok();
    let terminate = signal(SignalKind::terminate()).ok();
    async move {
        tokio::select! {
            () = received(interrupt) => {}
            () = received(terminate) => {}
            () = received(hangup) => {}
        }
    }
}

/// When `signal` arrives; never when it is not caught.
async fn received(signal: Option<Signal>) {
    match signal {
        Some(mut signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

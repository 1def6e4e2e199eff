//! The signals that stop a long-running command (`serve`, `view`) the way Ctrl-C does, so it ends
//! cleanly: requests answered, sessions released, private copies removed.

use std::future::Future;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Which signals stop a command besides Ctrl-C (SIGINT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stops {
    /// SIGTERM and SIGHUP: the terminal the command runs in was closed.
    OnTerminateAndHangup,
}

/// A future that completes when one of the signals arrives. They are caught from this call on,
/// so it must run inside the runtime, before the command says it is ready (a signal sent as soon
/// as it said so must not meet the default action, which ends the process on the spot). A signal
/// that cannot be caught keeps its default.
pub fn stop_signal(stops: Stops) -> impl Future<Output = ()> + Send + 'static {
    let stopped = stop_signal_named(stops);
    async move {
        stopped.await;
    }
}

/// [`stop_signal`] that says which signal arrived: its number (2 for SIGINT, 15 for SIGTERM, 1
/// for SIGHUP).
pub fn stop_signal_named(stops: Stops) -> impl Future<Output = i32> + Send + 'static {
    let hangup = match stops {
        Stops::OnTerminateAndHangup => signal(SignalKind::hangup()).ok(),
    };
    let interrupt = signal(SignalKind::interrupt()).ok();
    let terminate = signal(SignalKind::terminate()).ok();
    async move {
        let kind = tokio::select! {
            () = received(interrupt) => SignalKind::interrupt(),
            () = received(terminate) => SignalKind::terminate(),
            () = received(hangup) => SignalKind::hangup(),
        };
        kind.as_raw_value()
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

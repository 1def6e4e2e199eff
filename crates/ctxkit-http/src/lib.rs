//! Accepting HTTP/1 connections within limits, for the two servers ctxkit runs (`serve --listen` in
//! `ctxkit-server`, `view` in `ctxkit-web`): a cap on the connections open at once (one over it is
//! answered `503` and closed), a timeout on reading a request's headers (hyper's, which needs a
//! timer), and a pause before accepting again when accepting failed (out of file descriptors), so
//! a client that opens sockets and never finishes a request can neither hold the server nor make
//! it spin. And which local user opened a loopback connection (`peer_user`), for a server that
//! takes connections without a token.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

mod peer_user;

pub use peer_user::{loopback_peer_uid, opened_by_this_user, process_uid};

use hyper::server::conn::http1;
use hyper_util::rt::TokioTimer;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long accepting waits after it failed before it tries again. A failed accept (`EMFILE`: the
/// process is out of file descriptors) leaves the connection in the kernel's queue, so trying again
/// at once fails again at once: a loop that did spun a core.
pub const ACCEPT_BACK_OFF: Duration = Duration::from_millis(100);

/// How long a client may take to send a request's headers, by default.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an upgrade (a WebSocket handshake's `101`) may take once its request was read, by
/// default.
pub const DEFAULT_UPGRADE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a server allows its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once, a WebSocket connection for as long as it lasts; one more is
    /// answered `503` and closed.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers, counted from when the server waits
    /// for them (the first request, or the next one on a kept-alive connection); then the
    /// connection is closed.
    pub header_read_timeout: Duration,
    /// How long an upgrade may take to hand the connection over once its request was read.
    pub upgrade_timeout: Duration,
}

impl ConnectionLimits {
    /// At most `max_connections` (at least 1) open at once, the default timeouts.
    pub fn new(max_connections: usize) -> Self {
        Self {
            max_connections: max_connections.max(1),
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            upgrade_timeout: DEFAULT_UPGRADE_TIMEOUT,
        }
    }

    /// An HTTP/1 connection builder that closes a connection whose headers take longer than
    /// [`Self::header_read_timeout`] (hyper applies that timeout only with a timer, and none is
    /// set by default).
    pub fn http1(&self) -> http1::Builder {
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout);
        builder
    }
}

/// One connection the cap counts, until every clone of it is dropped: the connection's task holds
/// one, and a WebSocket's task takes another with the socket.
#[derive(Debug, Clone)]
pub struct Slot(#[expect(dead_code, reason = "held for its drop")] Arc<OwnedSemaphorePermit>);

/// A connection accepted within the cap.
#[derive(Debug)]
pub struct Accepted {
    pub stream: TcpStream,
    pub peer: SocketAddr,
    pub slot: Slot,
}

/// A listener that hands out connections within [`ConnectionLimits::max_connections`].
#[derive(Debug)]
pub struct Acceptor {
    listener: TcpListener,
    slots: Arc<Semaphore>,
    limits: ConnectionLimits,
}

/// What a connection over the cap is told before it is closed.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
content-length: 49\r\nconnection: close\r\n\r\n{\"error\":\"too many connections; try again later\"}";

impl Acceptor {
    pub fn new(listener: TcpListener, limits: ConnectionLimits) -> Self {
        Self {
            listener,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            limits,
        }
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    pub fn limits(&self) -> &ConnectionLimits {
        &self.limits
    }

    /// The connections open now (accepted, their slots not yet let go).
    pub fn open_connections(&self) -> usize {
        self.limits
            .max_connections
            .saturating_sub(self.slots.available_permits())
    }

    /// The next connection within the cap. One over it is answered `503` and closed; a failed
    /// accept is tried again after [`ACCEPT_BACK_OFF`]. Cancel-safe: a `select!` may drop it.
    pub async fn accept(&self) -> Accepted {
        let listener = &self.listener;
        let (stream, peer, slot) =
            accept_within(|| listener.accept(), &self.slots, ACCEPT_BACK_OFF, refuse).await;
        // An answer written in two parts (an event frame, then the result) would otherwise wait
        // for the client's delayed ACK: 40 ms per request on Linux. Best effort: a socket that
        // refuses the option still works, only slower.
        let _ = stream.set_nodelay(true);
        keep_alive(&stream);
        Accepted { stream, peer, slot }
    }
}

/// How long a connection may be silent before the system asks whether its peer is still there,
/// how often it asks, and how many unanswered asks close it: a client whose machine or network
/// vanished (no FIN, no RST) is gone within about a minute.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_PROBES: u32 = 3;
/// How long data the server sent may stay unacknowledged before the connection is closed:
/// keepalive asks only after a silent one, and a peer that vanished while a turn streamed to it
/// held its session for good (QA verification).
const USER_TIMEOUT: Duration = Duration::from_secs(60);

/// Turns on TCP keepalive for an accepted connection (QA: a `serve` client whose network went
/// down held its session, its lease renewed by the server, and a connection slot until the server
/// stopped; the socket stayed established for good). Best effort: a socket that refuses it works
/// as before.
fn keep_alive(stream: &TcpStream) {
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(KEEPALIVE_IDLE)
        .with_interval(KEEPALIVE_INTERVAL)
        .with_retries(KEEPALIVE_PROBES);
    let socket = socket2::SockRef::from(stream);
    let _ = socket.set_tcp_keepalive(&keepalive);
    let _ = socket.set_tcp_user_timeout(Some(USER_TIMEOUT));
}

/// Tells a connection over the cap so, without waiting (a client that does not read is not
/// waited for), and closes it.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(BUSY);
}

/// The loop of [`Acceptor::accept`], over any source of connections.
async fn accept_within<S, Accept, Accepting>(
    mut accept: Accept,
    slots: &Arc<Semaphore>,
    back_off: Duration,
    refuse: impl Fn(S),
) -> (S, SocketAddr, Slot)
where
    Accept: FnMut() -> Accepting,
    Accepting: Future<Output = io::Result<(S, SocketAddr)>>,
{
    loop {
        match accept().await {
            Ok((stream, peer)) => match Arc::clone(slots).try_acquire_owned() {
                Ok(permit) => return (stream, peer, Slot(Arc::new(permit))),
                Err(_) => refuse(stream),
            },
            Err(_) => tokio::time::sleep(back_off).await,
        }
    }
}

#[cfg(test)]
mod tests;

//! Every statement the PostgreSQL backend sends has a deadline, here and only here: a database
//! that stops answering (a frozen host, a network cut that leaves the connection open) fails the
//! statement with [`StoreError::Unresponsive`] instead of holding its request, and with it a
//! shutdown, for ever. The driver's errors become [`StoreError`] only through [`Deadline`], so a
//! statement cannot be sent without one: there is no other conversion.
//!
//! The socket has its own limits ([`bound_socket`]): a connect timeout, TCP keepalives and a TCP
//! user timeout, so a connection to a host that went away is found dead and dropped from the pool.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::error::{Result, StoreError};

/// How long one statement of a request (an append, a lease, a read, a listing) may take: far
/// more than a healthy database needs, short enough that a request over a silent one is
/// answered `store` while its client still waits, and that a shutdown ends.
pub(crate) const STATEMENT_DEADLINE: Duration = Duration::from_secs(10);

/// How long a bulk statement may take: a migration (it may build an index over every stored
/// entry, or wait for another instance's migration) or one batch of an import (up to 16 MiB).
pub(crate) const BULK_DEADLINE: Duration = Duration::from_secs(600);

/// How long connecting may take (TCP, TLS and authentication), unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// After how long without traffic the socket sends keepalive probes, how often, and how many
/// go unanswered before the kernel closes it: a dead peer is found within about 25 s.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;

/// How long sent data may stay unacknowledged before the kernel closes the socket (Linux).
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(20);

/// The driver's default keepalive idle time: a URL that left it alone gets ours.
const DRIVER_KEEPALIVE_IDLE: Duration = Duration::from_secs(2 * 60 * 60);

/// Sets the socket limits a URL did not set itself.
pub(crate) fn bound_socket(config: &mut tokio_postgres::Config) {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_keepalives_idle() == DRIVER_KEEPALIVE_IDLE {
        config
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_RETRIES);
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
}

/// A driver call with its deadline: `.within("append the entries").await?`.
pub(crate) trait Deadline<T>:
    Future<Output = Result<T, tokio_postgres::Error>> + Sized
{
    /// The call's answer, or [`StoreError::Unresponsive`] after [`STATEMENT_DEADLINE`].
    fn within(self, context: &'static str) -> Bounded<Self> {
        Bounded::new(self, context, STATEMENT_DEADLINE)
    }

    /// The same for a bulk statement, after [`BULK_DEADLINE`].
    fn within_bulk(self, context: &'static str) -> Bounded<Self> {
        Bounded::new(self, context, BULK_DEADLINE)
    }
}

impl<T, F: Future<Output = Result<T, tokio_postgres::Error>>> Deadline<T> for F {}

/// A driver call under its deadline. A named type rather than an `async fn` so that it is `Send`
/// whenever the call is (a trait's `impl Future` would hide that from the store's callers).
pub(crate) struct Bounded<F> {
    call: Pin<Box<tokio::time::Timeout<F>>>,
    context: &'static str,
    seconds: u64,
}

impl<F: Future> Bounded<F> {
    fn new(call: F, context: &'static str, deadline: Duration) -> Self {
        Self {
            call: Box::pin(tokio::time::timeout(deadline, call)),
            context,
            seconds: deadline.as_secs(),
        }
    }
}

impl<T, F: Future<Output = Result<T, tokio_postgres::Error>>> Future for Bounded<F> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let answer = std::task::ready!(self.call.as_mut().poll(context));
        let what = self.context;
        Poll::Ready(match answer {
            Ok(answer) => answer.map_err(|error| StoreError::Database {
                context: what,
                error,
            }),
            Err(_elapsed) => Err(StoreError::Unresponsive {
                context: what,
                seconds: self.seconds,
            }),
        })
    }
}

//! The memory every `serve --listen` client together may hold in requests (`server.maxBufferedBytes`).
//! Each connection alone is bounded (a message by 2 × (`server.maxRequestBytes` + 64 KiB), its
//! queue by `server.maxQueuedBytes`), but 256 connections each sending a message at its limit held
//! 256 times that: 60 GiB with the defaults. So one byte budget is shared by the server:
//!
//! - the bytes read from a socket hold their share from the read until their message is handed to
//!   the server ([`Budgeted`]); a connection that finds the budget spent waits, and one that waits
//!   [`BUDGET_WAIT`] while it holds part of a message is closed (1013, try again later), so
//!   connections that each hold part of a message cannot wait on one another for ever;
//! - a request waiting in a queue holds its line's share until it has run (`queue.rs`).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;
use tokio_util::sync::PollSemaphore;

/// The default server-wide budget (`server.maxBufferedBytes`).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 1 << 30;

/// The most bytes one read from a socket asks the budget for.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// How long a connection waits for room in the budget before it is closed (1013).
pub(crate) const BUDGET_WAIT: Duration = Duration::from_secs(30);

/// The reason of the close of a connection that waited [`BUDGET_WAIT`] for the budget.
pub(crate) const BUDGET_CLOSE_REASON: &str =
    "the server holds `server.maxBufferedBytes` of requests; try again later";

/// The budget of a server: bytes as permits.
#[derive(Clone, Debug)]
pub(crate) struct MemoryBudget {
    semaphore: Arc<Semaphore>,
    bytes: usize,
}

impl MemoryBudget {
    /// A budget of `bytes`, at least `floor` (one message at its limit and a read of each
    /// connection must fit, or a message at the limit could never be received).
    pub(crate) fn new(bytes: usize, floor: usize) -> Self {
        let bytes = bytes.max(floor).min(Semaphore::MAX_PERMITS);
        Self {
            semaphore: Arc::new(Semaphore::new(bytes)),
            bytes,
        }
    }

    /// Waits for `bytes` of the budget (at most the whole budget).
    pub(crate) async fn acquire(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let wanted = u32::try_from(bytes.clamp(1, self.bytes)).unwrap_or(u32::MAX);
        Arc::clone(&self.semaphore)
            .acquire_many_owned(wanted)
            .await
            .ok()
    }

    /// The bytes not held by anyone.
    #[cfg(test)]
    pub(crate) fn available(&self) -> usize {
        self.semaphore.available_permits()
    }
}

/// What a connection holds of the budget for the bytes it has read and not yet handed on.
#[derive(Clone, Default)]
pub(crate) struct Held(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Held {
    fn add(&self, permit: OwnedSemaphorePermit) {
        if let Ok(mut held) = self.0.lock() {
            match held.as_mut() {
                Some(existing) => existing.merge(permit),
                None => *held = Some(permit),
            }
        }
    }

    /// Whether the connection holds bytes of a message it has not finished.
    fn holds_any(&self) -> bool {
        self.0.lock().is_ok_and(|held| held.is_some())
    }

    /// Gives back what was read so far: the message it made is the server's now.
    pub(crate) fn release(&self) {
        if let Ok(mut held) = self.0.lock() {
            held.take();
        }
    }
}

/// A socket whose reads take their bytes from the server's budget (see the module comment).
pub(crate) struct Budgeted<S> {
    inner: S,
    semaphore: PollSemaphore,
    /// Asked for and not read yet.
    chunk: Option<OwnedSemaphorePermit>,
    held: Held,
    /// Running while the budget is spent.
    waiting: Option<Pin<Box<Sleep>>>,
    /// How long a read waits for the budget before it fails.
    wait: Duration,
}

impl<S> Budgeted<S> {
    /// Reads of `inner` from `budget`, waiting for it at most `wait` ([`BUDGET_WAIT`]).
    pub(crate) fn new(inner: S, budget: &MemoryBudget, held: Held, wait: Duration) -> Self {
        Self {
            inner,
            semaphore: PollSemaphore::new(Arc::clone(&budget.semaphore)),
            chunk: None,
            held,
            waiting: None,
            wait,
        }
    }

    /// A chunk of the budget to read into, or the end of the wait.
    fn poll_chunk(&mut self, context: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if let Some(chunk) = &self.chunk {
            return Poll::Ready(Ok(chunk.num_permits()));
        }
        let wanted = u32::try_from(READ_CHUNK).unwrap_or(u32::MAX);
        match self.semaphore.poll_acquire_many(context, wanted) {
            Poll::Ready(Some(permit)) => {
                self.waiting = None;
                self.chunk = Some(permit);
                Poll::Ready(Ok(READ_CHUNK))
            }
            Poll::Ready(None) => Poll::Ready(Err(io::Error::other("the server's budget closed"))),
            // A connection between messages holds nothing another waits on: it waits as long
            // as it takes. One holding part of a message waits at most `wait`.
            Poll::Pending if !self.held.holds_any() => Poll::Pending,
            Poll::Pending => {
                let waiting = self
                    .waiting
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(self.wait)));
                ready!(waiting.as_mut().poll(context));
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    BUDGET_CLOSE_REASON,
                )))
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Budgeted<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let room = ready!(this.poll_chunk(context))?;
        let limit = room.min(buffer.remaining());
        let mut limited = ReadBuf::new(buffer.initialize_unfilled_to(limit));
        ready!(Pin::new(&mut this.inner).poll_read(context, &mut limited))?;
        let read = limited.filled().len();
        buffer.advance(read);
        if read > 0
            && let Some(chunk) = this.chunk.as_mut()
        {
            match chunk.split(read) {
                Some(used) => this.held.add(used),
                None => {
                    if let Some(all) = this.chunk.take() {
                        this.held.add(all);
                    }
                }
            }
            if this
                .chunk
                .as_ref()
                .is_some_and(|chunk| chunk.num_permits() == 0)
            {
                this.chunk = None;
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Budgeted<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(context, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(context)
    }

    fn poll_shutdown(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(context)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(context, buffers)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    #[tokio::test]
    async fn reads_hold_the_budget_until_released() {
        let budget = MemoryBudget::new(4 * READ_CHUNK, 0);
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let held = Held::default();
        let mut reader = Budgeted::new(server, &budget, held.clone(), BUDGET_WAIT);
        client.write_all(&[b'x'; 1000]).await.unwrap();
        let mut buffer = vec![0; 4096];
        let read = reader.read(&mut buffer).await.unwrap();
        assert_eq!(read, 1000);
        // What was read is held; the rest of the chunk stays asked for, for the next read.
        assert_eq!(budget.available(), 3 * READ_CHUNK);
        held.release();
        assert_eq!(budget.available(), 3 * READ_CHUNK + 1000);
        drop(reader);
        assert_eq!(budget.available(), 4 * READ_CHUNK);
    }

    #[tokio::test]
    async fn a_read_that_waits_too_long_for_the_budget_fails() {
        let wait = Duration::from_millis(100);
        let budget = MemoryBudget::new(2 * READ_CHUNK, 0);
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut reader = Budgeted::new(server, &budget, Held::default(), wait);
        // The reader holds part of a message; the rest of the budget is another's.
        client.write_all(&[b'x'; READ_CHUNK]).await.unwrap();
        let mut buffer = vec![0; READ_CHUNK];
        assert_eq!(reader.read(&mut buffer).await.unwrap(), READ_CHUNK);
        let taken = budget.acquire(READ_CHUNK).await.unwrap();
        client.write_all(b"hello").await.unwrap();
        let error = reader.read(&mut buffer).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::OutOfMemory);
        assert_eq!(error.to_string(), BUDGET_CLOSE_REASON);
        // Between messages a reader waits as long as it takes.
        let idle = Held::default();
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut reader_between = Budgeted::new(server, &budget, idle, wait);
        client.write_all(b"later").await.unwrap();
        let waited = tokio::time::timeout(wait * 3, reader_between.read(&mut buffer)).await;
        assert!(waited.is_err(), "{waited:?}");
        drop(reader_between);
        // Once room comes back, a connection reads again.
        drop(reader);
        drop(taken);
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut reader = Budgeted::new(server, &budget, Held::default(), wait);
        client.write_all(b"again").await.unwrap();
        assert_eq!(reader.read(&mut buffer).await.unwrap(), 5);
    }
}

//! A socket whose reads take their bytes from the server's budget ([`Budgeted`]).

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::PollSemaphore;

use super::frames::Cursor;
use super::{Held, MemoryBudget, Patience, SLOW_REASON, STALLED_REASON};

/// A socket whose reads take their bytes from the server's budget (see the module comment).
pub(crate) struct Budgeted<S> {
    inner: S,
    semaphore: PollSemaphore,
    /// The most one message can take: the whole budget, or less.
    message_limit: u64,
    cursor: Cursor,
    /// A message sent in several frames is open: its later frames are covered by its first.
    fragmented: bool,
    held: Held,
    /// Running while a message holding a share waits for its client's bytes.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    /// When the message holding a share must have come whole.
    due: Option<tokio::time::Instant>,
    patience: Patience,
}

impl<S> Budgeted<S> {
    /// Reads of `inner` from `budget`, a message taking at most `message_limit` bytes of it and
    /// coming within `patience`.
    pub(crate) fn new(
        inner: S,
        budget: &MemoryBudget,
        held: Held,
        message_limit: usize,
        patience: Patience,
    ) -> Self {
        let most = message_limit.min(budget.bytes).min(u32::MAX as usize);
        Self {
            inner,
            semaphore: PollSemaphore::new(Arc::clone(&budget.semaphore)),
            message_limit: u64::try_from(most).unwrap_or(u64::from(u32::MAX)),
            cursor: Cursor::header(),
            fragmented: false,
            held,
            stalled: None,
            due: None,
            patience,
        }
    }

    /// Fails once a message that holds a share has waited `stall_limit` for its client.
    fn poll_stall(&mut self, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.held.holds_any() {
            self.stalled = None;
            return Poll::Pending;
        }
        let limit = self.patience.stall;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        ready!(stalled.as_mut().poll(context));
        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, STALLED_REASON)))
    }

    /// How many bytes the next read may take: the rest of a header, or of a payload once its
    /// message has its share of the budget.
    fn poll_room(&mut self, context: &mut Context<'_>) -> Poll<io::Result<usize>> {
        loop {
            match &self.cursor {
                Cursor::Header { bytes, filled } => {
                    let wanted = Cursor::header_wanted(bytes, *filled);
                    if wanted > 0 {
                        return Poll::Ready(Ok(wanted));
                    }
                    self.cursor = Cursor::after_header(
                        &bytes[..*filled],
                        self.message_limit,
                        &mut self.fragmented,
                    );
                }
                Cursor::Budget { wanted, remaining } => {
                    let (wanted, remaining) = (*wanted, *remaining);
                    let permits = u32::try_from(wanted.min(self.message_limit)).unwrap_or(u32::MAX);
                    let Some(permit) = ready!(self.semaphore.poll_acquire_many(context, permits))
                    else {
                        return Poll::Ready(Err(io::Error::other("the server's budget closed")));
                    };
                    if !self.held.holds_any() {
                        let rate = self.patience.bytes_per_second.max(1);
                        let transfer = std::time::Duration::from_secs(wanted / rate);
                        self.due =
                            Some(tokio::time::Instant::now() + self.patience.stall + transfer);
                    }
                    self.held.add(permit);
                    self.cursor = Cursor::Payload { remaining };
                }
                Cursor::Payload { remaining: 0 } => self.cursor = Cursor::header(),
                Cursor::Payload { remaining } => {
                    return Poll::Ready(Ok(usize::try_from(*remaining).unwrap_or(usize::MAX)));
                }
            }
        }
    }

    /// Moves the cursor past `read`, the bytes just read.
    fn advance(&mut self, read: &[u8]) {
        match &mut self.cursor {
            Cursor::Header { bytes, filled } => {
                bytes[*filled..*filled + read.len()].copy_from_slice(read);
                *filled += read.len();
            }
            Cursor::Payload { remaining } => {
                *remaining = remaining.saturating_sub(read.len() as u64);
            }
            Cursor::Budget { .. } => {}
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
        let room = ready!(this.poll_room(context))?;
        let limit = room.min(buffer.remaining());
        let mut limited = ReadBuf::new(buffer.initialize_unfilled_to(limit));
        if Pin::new(&mut this.inner)
            .poll_read(context, &mut limited)?
            .is_pending()
        {
            return this.poll_stall(context);
        }
        this.stalled = None;
        let read = limited.filled().len();
        this.advance(&limited.filled()[..read]);
        buffer.advance(read);
        if this.held.holds_any() {
            if this
                .due
                .is_some_and(|due| tokio::time::Instant::now() > due)
            {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, SLOW_REASON)));
            }
        } else {
            this.due = None;
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
    use std::time::Duration;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};

    use super::super::MIN_BYTES_PER_SECOND;
    use super::super::frames::SMALL_MESSAGE_BYTES;
    use super::super::frames::tests::frame;
    use super::*;

    /// A client's end of a pipe, and the server's end read through `budget`, with what it holds.
    fn over(
        budget: &MemoryBudget,
        message_limit: usize,
        patience: Patience,
    ) -> (DuplexStream, Held, Budgeted<DuplexStream>) {
        let (client, server) = tokio::io::duplex(4 << 20);
        let held = Held::default();
        let reader = Budgeted::new(server, budget, held.clone(), message_limit, patience);
        (client, held, reader)
    }

    async fn read_exactly(reader: &mut (impl AsyncRead + Unpin), length: usize) {
        let mut bytes = vec![0; length];
        reader.read_exact(&mut bytes).await.unwrap();
    }

    #[tokio::test]
    async fn a_message_takes_its_whole_share_at_its_first_frame_until_released() {
        let budget = MemoryBudget::new(1 << 20, 0);
        let (mut client, held, mut reader) = over(&budget, 500_000, Patience::default());
        client.write_all(&frame(1, 300_000, true)).await.unwrap();
        // The header passes without the budget; the payload's first byte takes all of it.
        read_exactly(&mut reader, 14 + 1).await;
        assert_eq!(budget.available(), (1 << 20) - 300_000);
        read_exactly(&mut reader, 300_000 - 1).await;
        held.release();
        assert_eq!(budget.available(), 1 << 20);
        // A message in several frames takes the most a message may be at its first; a ping
        // between its frames and its later frames take nothing more.
        client.write_all(&frame(1, 1000, false)).await.unwrap();
        client.write_all(&frame(9, 4, true)).await.unwrap();
        client.write_all(&frame(0, 1000, true)).await.unwrap();
        read_exactly(&mut reader, 8 + 1000 + 10 + 8 + 1000).await;
        assert_eq!(budget.available(), (1 << 20) - 500_000);
        held.release();
        assert_eq!(budget.available(), 1 << 20);
    }

    /// A message large enough to take a share.
    const LARGE: usize = SMALL_MESSAGE_BYTES as usize + 1000;

    #[tokio::test]
    async fn a_message_waits_whole_for_room_holding_nothing() {
        let budget = MemoryBudget::new(2 * LARGE, 0);
        let taken = budget.acquire(LARGE + 1).await.unwrap();
        let (mut client, held, mut reader) = over(&budget, 2 * LARGE, Patience::default());
        client.write_all(&frame(1, LARGE, true)).await.unwrap();
        read_exactly(&mut reader, 14).await;
        let mut byte = [0; 1];
        let waited = tokio::time::timeout(Duration::from_millis(200), reader.read(&mut byte)).await;
        assert!(waited.is_err(), "{waited:?}");
        assert!(
            held.0.lock().unwrap().is_none(),
            "the connection holds nothing while it waits"
        );
        drop(taken);
        read_exactly(&mut reader, LARGE).await;
        assert_eq!(budget.available(), LARGE);
    }

    #[tokio::test]
    async fn small_messages_and_pings_take_no_share_and_frames_against_the_protocol_do() {
        let budget = MemoryBudget::new(4 * LARGE, 0);
        let (mut client, held, mut reader) = over(&budget, 2 * LARGE, Patience::default());
        client.write_all(&frame(1, 60_000, true)).await.unwrap();
        client.write_all(&frame(9, 100, true)).await.unwrap();
        read_exactly(&mut reader, 8 + 60_000 + 6 + 100).await;
        assert_eq!(budget.available(), 4 * LARGE);
        // A ping claiming more than 125 bytes, or a continuation with no message open, is
        // refused by the protocol only once read: it is read within the budget.
        client.write_all(&frame(9, 1000, true)).await.unwrap();
        read_exactly(&mut reader, 8 + 1000).await;
        assert_eq!(budget.available(), 4 * LARGE - 1000);
        held.release();
        client.write_all(&frame(0, 2000, true)).await.unwrap();
        read_exactly(&mut reader, 8 + 2000).await;
        assert_eq!(budget.available(), 4 * LARGE - 2000);
        held.release();
        // A fragmented message's later frames and a ping between them take nothing more.
        client.write_all(&frame(1, 10, false)).await.unwrap();
        client.write_all(&frame(9, 4, true)).await.unwrap();
        client.write_all(&frame(0, 3000, false)).await.unwrap();
        client.write_all(&frame(0, 3000, true)).await.unwrap();
        read_exactly(&mut reader, 6 + 10 + 6 + 4 + 8 + 3000 + 8 + 3000).await;
        assert_eq!(budget.available(), 2 * LARGE);
        held.release();
        // Once it ended, a continuation is against the protocol again.
        client.write_all(&frame(0, 500, true)).await.unwrap();
        read_exactly(&mut reader, 8 + 500).await;
        assert_eq!(budget.available(), 4 * LARGE - 500);
    }

    #[tokio::test]
    async fn a_message_that_stalls_holding_its_share_fails_and_an_idle_one_waits() {
        let stall = Duration::from_millis(100);
        let budget = MemoryBudget::new(2 * LARGE, 0);
        let patience = Patience {
            stall,
            bytes_per_second: MIN_BYTES_PER_SECOND,
        };
        let (mut client, held, mut reader) = over(&budget, 2 * LARGE, patience);
        // Between messages a client may send nothing for as long as it likes.
        let mut byte = [0; 1];
        let idle = tokio::time::timeout(stall * 3, reader.read(&mut byte)).await;
        assert!(idle.is_err(), "{idle:?}");
        // A header that claims a large message and sends 10 bytes holds its share: it fails
        // after `stall`.
        client
            .write_all(&frame(1, LARGE, true)[..14 + 10])
            .await
            .unwrap();
        read_exactly(&mut reader, 14 + 10).await;
        let error = reader.read(&mut byte).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(error.to_string(), STALLED_REASON);
        // The connection closes: its share comes back.
        drop(reader);
        drop(held);
        assert_eq!(budget.available(), 2 * LARGE);
    }

    #[tokio::test]
    async fn a_message_that_trickles_in_holding_its_share_fails() {
        let patience = Patience {
            stall: Duration::from_millis(150),
            bytes_per_second: 10_000_000,
        };
        let budget = MemoryBudget::new(2 * LARGE, 0);
        let (mut client, _held, mut reader) = over(&budget, 2 * LARGE, patience);
        let frame = frame(1, LARGE, true);
        client.write_all(&frame[..14]).await.unwrap();
        read_exactly(&mut reader, 14).await;
        // A byte every 50 ms never stalls, but at that pace the message passes the 150 ms
        // allowed.
        let mut failed = None;
        for byte in &frame[14..] {
            client.write_all(std::slice::from_ref(byte)).await.unwrap();
            let mut one = [0; 1];
            if let Err(error) = reader.read(&mut one).await {
                failed = Some(error);
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let error = failed.expect("the trickle was cut");
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert_eq!(error.to_string(), SLOW_REASON);
    }
}

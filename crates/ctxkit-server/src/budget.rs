//! The memory every `serve --listen` client together may hold in requests (`server.maxBufferedBytes`).
//! Each connection alone is bounded (a message by 2 × (`server.maxRequestBytes` + 64 KiB), its
//! queue by `server.maxQueuedBytes`), but 256 connections each sending a message at its limit held
//! 256 times that: 60 GiB with the defaults. So the server's clients share budgets of bytes:
//!
//! - a message read from a socket holds its share from its first frame's header until it is handed
//!   to the server ([`Budgeted`]): a message in one frame takes its length, one in several frames
//!   the most a message may be, all at once, so a connection never holds part of the budget while
//!   it waits for more (connections sharing it out a little each would leave every message
//!   unfinished, waiting on one another); a message that finds no room waits its turn;
//! - a request waiting in a queue holds its line's share of a second budget of the same size until
//!   it has run (`queue.rs`). Two, not one: a client's message waits to be handed on while its
//!   queue is full, so with one budget a message waiting for room could wait on the very lines
//!   queued behind it. Neither wait holds a share of the budget it waits on, so each ends as
//!   requests run.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::PollSemaphore;

/// The default server-wide budget (`server.maxBufferedBytes`).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 1 << 30;

/// How long a client holding a share may send nothing of its message before the connection is
/// closed (1008): a header that claims 100 MB and never sends them holds no budget for ever.
pub(crate) const STALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The slowest a message holding a share may arrive, after [`STALL_LIMIT`] of grace: a client
/// sending a byte every few seconds would hold its share for days.
pub(crate) const MIN_BYTES_PER_SECOND: u64 = 256 * 1024;

/// The reason of the close of a connection whose message came slower than
/// [`MIN_BYTES_PER_SECOND`].
pub(crate) const SLOW_REASON: &str =
    "a message came slower than 256 KiB/s while it held the server's budget";

/// How long a message holding a share may take: [`STALL_LIMIT`] without a byte, and
/// [`STALL_LIMIT`] plus its size at [`MIN_BYTES_PER_SECOND`] in all.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patience {
    pub(crate) stall: std::time::Duration,
    pub(crate) bytes_per_second: u64,
}

impl Default for Patience {
    fn default() -> Self {
        Self {
            stall: STALL_LIMIT,
            bytes_per_second: MIN_BYTES_PER_SECOND,
        }
    }
}

/// The reason of the close of a connection whose message stalled past [`STALL_LIMIT`].
pub(crate) const STALLED_REASON: &str =
    "a message sent nothing for 30 s while it held the server's budget";

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

    /// `bytes` of the budget if they are free now.
    pub(crate) fn try_acquire(&self, bytes: usize) -> Option<OwnedSemaphorePermit> {
        let wanted = u32::try_from(bytes.clamp(1, self.bytes)).unwrap_or(u32::MAX);
        Arc::clone(&self.semaphore)
            .try_acquire_many_owned(wanted)
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

    /// Whether the connection holds a share for a message it has not finished.
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

/// Where a socket's reads are in the WebSocket frames a client sends (RFC 6455, 5.2).
#[derive(Debug, PartialEq, Eq)]
enum Cursor {
    /// In a frame's header, of which `filled` bytes are read.
    Header {
        bytes: [u8; MAX_HEADER],
        filled: usize,
    },
    /// Before a payload of `remaining` bytes, waiting for `wanted` bytes of the budget.
    Budget { wanted: u64, remaining: u64 },
    /// In a payload, `remaining` bytes to read.
    Payload { remaining: u64 },
}

/// A frame header's most bytes: 2, 8 of extended length, 4 of mask.
const MAX_HEADER: usize = 14;

/// A message in one frame of at most this many bytes takes no share: a connection reads one such
/// message at a time, so they hold at most this much each, and a request as small as
/// `initialize` never waits behind a large message that waits for room.
pub(crate) const SMALL_MESSAGE_BYTES: u64 = 64 * 1024;

impl Cursor {
    fn header() -> Self {
        Self::Header {
            bytes: [0; MAX_HEADER],
            filled: 0,
        }
    }

    /// How many bytes the header has in all, once its first two are known.
    fn header_length(first: [u8; 2]) -> usize {
        let extended = match first[1] & 0x7f {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        let mask = if first[1] & 0x80 != 0 { 4 } else { 0 };
        2 + extended + mask
    }

    /// The payload length a whole header gives.
    fn payload_length(header: &[u8]) -> u64 {
        match header[1] & 0x7f {
            126 => u64::from(u16::from_be_bytes([header[2], header[3]])),
            127 => header[2..10]
                .iter()
                .fold(0, |length, byte| (length << 8) | u64::from(*byte)),
            short => u64::from(short),
        }
    }

    /// The header bytes still to read (none once it is whole).
    fn header_wanted(bytes: &[u8; MAX_HEADER], filled: usize) -> usize {
        if filled < 2 {
            return 2 - filled;
        }
        Self::header_length([bytes[0], bytes[1]]) - filled
    }

    /// What follows a whole header: the budget a message's first frame takes (a whole message
    /// in one frame, its payload; the first of several, `message_limit`, the most they can add up
    /// to), or the payload at once (a control frame of at most 125 bytes, a small message
    /// ([`SMALL_MESSAGE_BYTES`]), or a later fragment of the message `fragmented` says is open,
    /// covered by its first). Any other frame (a control
    /// frame claiming more, a continuation with no message open) is against the protocol: it takes
    /// its payload's share, so nothing is read beyond the budget before it is refused.
    /// `fragmented` becomes whether a fragmented message is open after this frame.
    fn after_header(header: &[u8], message_limit: u64, fragmented: &mut bool) -> Self {
        let remaining = Self::payload_length(header);
        let (last, opcode) = (header[0] & 0x80 != 0, header[0] & 0x0f);
        let control = opcode & 0x08 != 0;
        let wanted = match (opcode, last) {
            (_, _) if control && remaining <= 125 => 0,
            (_, _) if control => remaining,
            (0, last) if *fragmented => {
                *fragmented = !last;
                0
            }
            (0, _) => remaining,
            (_, true) if remaining <= SMALL_MESSAGE_BYTES => 0,
            (_, true) => remaining,
            (_, false) => {
                *fragmented = true;
                message_limit
            }
        };
        if wanted == 0 {
            Self::Payload { remaining }
        } else {
            Self::Budget { wanted, remaining }
        }
    }
}

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
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use std::time::Duration;

    use super::*;

    /// A masked client frame's header: `opcode` (1 text, 0 continuation, 9 ping), final or not.
    fn header(opcode: u8, length: usize, last: bool) -> Vec<u8> {
        let mut header = vec![opcode | if last { 0x80 } else { 0 }];
        match length {
            0..=125 => header.push(0x80 | length as u8),
            126..=65_535 => {
                header.push(0x80 | 126);
                header.extend_from_slice(&(length as u16).to_be_bytes());
            }
            _ => {
                header.push(0x80 | 127);
                header.extend_from_slice(&(length as u64).to_be_bytes());
            }
        }
        header.extend_from_slice(&[1, 2, 3, 4]);
        header
    }

    fn frame(opcode: u8, length: usize, last: bool) -> Vec<u8> {
        let mut frame = header(opcode, length, last);
        frame.extend(std::iter::repeat_n(b'x', length));
        frame
    }

    async fn read_exactly(reader: &mut (impl AsyncRead + Unpin), length: usize) {
        let mut bytes = vec![0; length];
        reader.read_exact(&mut bytes).await.unwrap();
    }

    #[test]
    fn headers_say_how_long_they_are_and_their_payload() {
        for length in [0, 5, 125, 126, 65_535, 65_536, 3 << 30] {
            let bytes = header(1, length, true);
            assert_eq!(Cursor::header_length([bytes[0], bytes[1]]), bytes.len());
            assert_eq!(Cursor::payload_length(&bytes), length as u64);
        }
    }

    #[tokio::test]
    async fn a_message_takes_its_whole_share_at_its_first_frame_until_released() {
        let budget = MemoryBudget::new(1 << 20, 0);
        let (mut client, server) = tokio::io::duplex(4 << 20);
        let held = Held::default();
        let mut reader = Budgeted::new(server, &budget, held.clone(), 500_000, Patience::default());
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
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let held = Held::default();
        let mut reader = Budgeted::new(
            server,
            &budget,
            held.clone(),
            2 * LARGE,
            Patience::default(),
        );
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
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let held = Held::default();
        let mut reader = Budgeted::new(
            server,
            &budget,
            held.clone(),
            2 * LARGE,
            Patience::default(),
        );
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
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let held = Held::default();
        let patience = Patience {
            stall,
            bytes_per_second: MIN_BYTES_PER_SECOND,
        };
        let mut reader = Budgeted::new(server, &budget, held.clone(), 2 * LARGE, patience);
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
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut reader = Budgeted::new(server, &budget, Held::default(), 2 * LARGE, patience);
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

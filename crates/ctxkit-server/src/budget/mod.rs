//! The memory every `serve --listen` client together may hold in requests (`server.maxBufferedBytes`).
//! Each connection alone is bounded (a message by 2 × (`server.maxRequestBytes` + 64 KiB), its
//! queue by `server.maxQueuedBytes`), but 256 connections each sending a message at its limit held
//! 256 times that: 60 GiB with the defaults. So the server's clients share budgets of bytes:
//!
//! - a message read from a socket holds its share from its first frame's header until it is handed
//!   to the server ([`Budgeted`], the headers followed in `frames`): a message in one frame takes
//!   its length, one in several frames the most a message may be, all at once, so a connection
//!   never holds part of the budget while it waits for more (connections sharing it out a little
//!   each would leave every message unfinished, waiting on one another); a message that finds no
//!   room waits its turn. A one-frame message up to 64 KiB and a ping take none; a frame against
//!   the protocol takes its length before it is read. A message holding a share that stalls 30 s,
//!   or comes slower than 256 KiB/s, closes its connection (1008): the share is taken on the
//!   header's word;
//! - a request waiting in a queue holds its line's share of a second budget of the same size until
//!   it has run (`queue.rs`; a line of up to 64 KiB takes its client's own 64 KiB allowance
//!   first, so a small request never waits behind another client's large ones). Two, not one: a client's message waits to be handed on while its
//!   queue is full, so with one budget a message waiting for room could wait on the very lines
//!   queued behind it. Neither wait holds a share of the budget it waits on, so each ends as
//!   requests run.

mod frames;
mod reader;

use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub(crate) use reader::Budgeted;

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
    /// A budget of `bytes`, at least `floor` (one message at its limit must fit, or it could
    /// never be received).
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

//! What the server sends: responses and notifications, one JSON line each, written in order by one
//! writer. The lines waiting to be written are bounded for a client that reads slowly or not at
//! all: past [`MAX_WAITING_BYTES`] streamed pieces of a reply (`agent_event` of type `delta`) are
//! dropped — the `reply` event that follows carries the whole message, and an `agent_event` of type
//! `deltas_dropped` says how many were dropped — while responses and every other event are kept;
//! and the next request does not start until the waiting lines are back under the bound, so the
//! request queue fills and the server stops reading (backpressure, as for requests). What one
//! request sends is bounded by that request (its answer, its run's replies and tool results).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

/// The bytes of lines waiting to be written past which deltas are dropped and the next request
/// waits.
pub(crate) const MAX_WAITING_BYTES: usize = 16 << 20;

/// A handle that sends lines to the writer (cloned by every task that sends).
#[derive(Clone)]
pub(crate) struct Outgoing {
    sender: mpsc::UnboundedSender<Option<String>>,
    waiting: Arc<Waiting>,
}

/// The writer's side: the lines to write, and the count to give back as each is written.
pub(crate) struct Lines {
    pub(crate) receiver: mpsc::UnboundedReceiver<Option<String>>,
    waiting: Arc<Waiting>,
}

struct Waiting {
    bytes: AtomicUsize,
    limit: usize,
    /// Deltas dropped since the client was last told.
    dropped: AtomicU64,
    /// The writer has stopped (the client's end is closed): nothing waits for room any more.
    closed: AtomicBool,
    drained: Notify,
}

impl Outgoing {
    pub(crate) fn new(limit: usize) -> (Self, Lines) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let waiting = Arc::new(Waiting {
            bytes: AtomicUsize::new(0),
            limit,
            dropped: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            drained: Notify::new(),
        });
        let lines = Lines {
            receiver,
            waiting: Arc::clone(&waiting),
        };
        (Self { sender, waiting }, lines)
    }

    /// Queues `message` for the writer, or drops it when it is a delta and the bound is reached.
    /// An error when the writer is gone.
    pub(crate) fn send(&self, message: &Value) -> Result<(), ()> {
        let mut line = message.to_string();
        line.push('\n');
        let waiting = &self.waiting;
        if is_delta(message) {
            if waiting.bytes.load(Ordering::Acquire) + line.len() > waiting.limit {
                waiting.dropped.fetch_add(1, Ordering::AcqRel);
                return Ok(());
            }
            return self.queue(line);
        }
        self.queue_kept(line)
    }

    /// Queues a response (never dropped), already JSON text (one line).
    pub(crate) fn send_text(&self, mut line: String) -> Result<(), ()> {
        line.push('\n');
        self.queue_kept(line)
    }

    /// Queues a line that is kept, after telling the client of the deltas dropped before it.
    fn queue_kept(&self, line: String) -> Result<(), ()> {
        let dropped = self.waiting.dropped.swap(0, Ordering::AcqRel);
        if dropped > 0 {
            let notice = json!({"jsonrpc": "2.0", "method": "agent_event",
                                "params": {"type": "deltas_dropped", "count": dropped}});
            self.queue(format!("{notice}\n"))?;
        }
        self.queue(line)
    }

    fn queue(&self, line: String) -> Result<(), ()> {
        let length = line.len();
        self.waiting.bytes.fetch_add(length, Ordering::AcqRel);
        self.sender.send(Some(line)).map_err(|_| {
            self.waiting.bytes.fetch_sub(length, Ordering::AcqRel);
        })
    }

    /// Tells the writer to stop once the lines before have been written.
    pub(crate) fn end(&self) {
        let _ = self.sender.send(None);
    }

    /// Returns once no more than the bound waits to be written (or the writer has stopped).
    pub(crate) async fn room(&self) {
        let waiting = &self.waiting;
        loop {
            let drained = waiting.drained.notified();
            if waiting.closed.load(Ordering::Acquire)
                || waiting.bytes.load(Ordering::Acquire) <= waiting.limit
            {
                return;
            }
            drained.await;
        }
    }

    /// The bytes of lines waiting to be written.
    #[cfg(test)]
    pub(crate) fn waiting_bytes(&self) -> usize {
        self.waiting.bytes.load(Ordering::Acquire)
    }
}

impl Lines {
    /// `bytes` of a line were written.
    pub(crate) fn written(&self, bytes: usize) {
        self.waiting.bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.waiting.drained.notify_waiters();
    }

    /// The writer stopped: whoever waits for room goes on (their lines go nowhere).
    pub(crate) fn closed(&self) {
        self.waiting.closed.store(true, Ordering::Release);
        self.waiting.drained.notify_waiters();
    }
}

/// Whether `message` is a streamed piece of a reply (the `reply` event repeats it whole).
fn is_delta(message: &Value) -> bool {
    message["method"] == "agent_event" && message["params"]["type"] == "delta"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(text: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "agent_event",
               "params": {"type": "delta", "kind": "text", "text": text}})
    }

    #[tokio::test]
    async fn past_the_bound_deltas_are_dropped_and_counted_and_the_rest_is_kept() {
        let (out, mut lines) = Outgoing::new(1_000);
        for _ in 0..100 {
            out.send(&delta(&"x".repeat(100))).unwrap();
        }
        assert!(out.waiting_bytes() <= 1_000, "{}", out.waiting_bytes());
        let reply = json!({"jsonrpc": "2.0", "method": "agent_event",
                           "params": {"type": "reply", "message": "x".repeat(5_000)}});
        out.send(&reply).unwrap();
        out.send(&json!({"jsonrpc": "2.0", "id": 1, "result": {}}))
            .unwrap();
        out.end();
        let mut received = Vec::new();
        while let Some(Some(line)) = lines.receiver.recv().await {
            lines.written(line.len());
            received.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        let kept = received.iter().filter(|message| is_delta(message)).count();
        assert!(kept > 0 && kept < 100, "{kept}");
        let notice = &received[kept];
        assert_eq!(notice["params"]["type"], "deltas_dropped");
        assert_eq!(notice["params"]["count"], 100 - kept);
        assert_eq!(received[kept + 1]["params"]["type"], "reply");
        assert_eq!(received[kept + 2]["id"], 1);
        assert_eq!(out.waiting_bytes(), 0);
    }

    #[tokio::test]
    async fn room_waits_until_the_writer_has_caught_up() {
        let (out, mut lines) = Outgoing::new(100);
        out.send(&json!({"result": "x".repeat(500)})).unwrap();
        let waiter = out.clone();
        let room = tokio::spawn(async move { waiter.room().await });
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!room.is_finished());
        let line = lines.receiver.recv().await.unwrap().unwrap();
        lines.written(line.len());
        room.await.unwrap();
    }
}

//! `agent.steer` and `agent.follow_up`: messages for the model while `agent.run` works, as Pi's
//! RPC `steer` and `follow_up`. Both are answered at once. A steering message reaches the model
//! with the run's next request: after the tool batch running now, or, when the model was
//! answering, as a new turn of the same run; one sent before a run starts goes with that run's
//! first request. A follow-up waits until the model stops with no steering left, then goes on
//! with the run. Queued messages belong to the open session: opening another drops them.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::OwnedSemaphorePermit;

use crate::budget::MemoryBudget;
use crate::methods::{engine, params};
use crate::{MethodError, Shared, codes};

/// Messages waiting for the run, oldest first, and how many go at once.
#[derive(Debug, Default)]
struct Queue {
    waiting: Mutex<Waiting>,
    /// `"all"` in the settings: every queued message at once; else one at a time.
    all: AtomicBool,
}

/// The messages and their bytes, at most `server.maxQueuedBytes` (they are answered at once, so
/// the request queue's budget does not hold them); on a listening server each holds its share of
/// the budget all clients' queued requests share.
#[derive(Debug, Default)]
struct Waiting {
    messages: VecDeque<(String, Option<OwnedSemaphorePermit>)>,
    bytes: usize,
}

impl Queue {
    /// Queues `text`; how many wait now, or `None` when it would pass `limit` bytes.
    fn push(&self, text: String, limit: usize, server: Option<&MemoryBudget>) -> Option<usize> {
        let mut waiting = self.waiting.lock().ok()?;
        let bytes = waiting.bytes.saturating_add(text.len());
        if bytes > limit {
            return None;
        }
        let share = match server {
            Some(budget) => Some(budget.try_acquire(text.len())?),
            None => None,
        };
        waiting.bytes = bytes;
        waiting.messages.push_back((text, share));
        Some(waiting.messages.len())
    }

    fn take(&self) -> Vec<String> {
        let Ok(mut waiting) = self.waiting.lock() else {
            return Vec::new();
        };
        let taken: Vec<String> = if self.all.load(Ordering::SeqCst) {
            waiting.messages.drain(..).map(|(text, _)| text).collect()
        } else {
            waiting
                .messages
                .pop_front()
                .map(|(text, _)| text)
                .into_iter()
                .collect()
        };
        let freed: usize = taken.iter().map(String::len).sum();
        waiting.bytes = waiting.bytes.saturating_sub(freed);
        taken
    }

    fn clear(&self) {
        if let Ok(mut waiting) = self.waiting.lock() {
            *waiting = Waiting::default();
        }
    }

    /// Every waiting message, oldest first; the queue is left empty.
    fn drain(&self) -> Vec<String> {
        let Ok(mut waiting) = self.waiting.lock() else {
            return Vec::new();
        };
        let drained = std::mem::take(&mut *waiting);
        drained.messages.into_iter().map(|(text, _)| text).collect()
    }
}

/// The messages sent with `agent.steer` and `agent.follow_up`, not yet delivered.
#[derive(Debug, Default)]
pub(crate) struct Steered {
    steering: Queue,
    follow_ups: Queue,
}

impl Steered {
    /// How many of each go at once from now on: all (`steeringMode`/`followUpMode` `"all"`) or one.
    pub(crate) fn set_modes(&self, steering_all: bool, follow_ups_all: bool) {
        self.steering.all.store(steering_all, Ordering::SeqCst);
        self.follow_ups.all.store(follow_ups_all, Ordering::SeqCst);
    }

    /// Drops what was queued for the session that was open.
    pub(crate) fn clear(&self) {
        self.steering.clear();
        self.follow_ups.clear();
    }

    /// Takes every waiting message out: the steering ones, then the follow-ups (`agent.cancel`:
    /// they were for the run it stops, and went in after the next prompt, QA).
    pub(crate) fn drain(&self) -> (Vec<String>, Vec<String>) {
        (self.steering.drain(), self.follow_ups.drain())
    }
}

impl ctxkit_agent::Steering for Steered {
    fn take(&self) -> Vec<String> {
        self.steering.take()
    }

    fn take_follow_ups(&self) -> Vec<String> {
        self.follow_ups.take()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SteerParams {
    text: String,
}

/// `agent.steer {text}` → `{queued}`, the steering messages now waiting for the run.
pub(crate) async fn steer(shared: &Shared, raw: Value) -> Result<Value, MethodError> {
    queue(shared, raw, &shared.steered.steering).await
}

/// `agent.follow_up {text}` → `{queued}`, the follow-ups now waiting for the model to stop.
pub(crate) async fn follow_up(shared: &Shared, raw: Value) -> Result<Value, MethodError> {
    queue(shared, raw, &shared.steered.follow_ups).await
}

async fn queue(shared: &Shared, raw: Value, queue: &Queue) -> Result<Value, MethodError> {
    let SteerParams { text } = params(raw)?;
    if text.trim().is_empty() {
        return Err(MethodError::new(
            codes::INVALID_PARAMS,
            "invalid params: `text` is empty",
        ));
    }
    // A session must be open: the message is stored in it when delivered.
    engine(shared).await?;
    let limit = shared.config.max_queued_bytes;
    match queue.push(text, limit, shared.queue_budget.as_ref()) {
        Some(queued) => Ok(json!({"queued": queued})),
        None => Err(MethodError {
            code: codes::ENGINE_ERROR,
            message: format!(
                "not queued: the messages waiting for the run would pass `server.maxQueuedBytes` \
                 ({limit} bytes), or the requests all clients have waiting \
                 `server.maxBufferedBytes`; send it once the run has taken some"
            ),
            kind: Some("queue_full"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use ctxkit_agent::Steering as _;

    use super::*;

    #[test]
    fn one_message_a_request_unless_all() {
        let steered = Steered::default();
        for text in ["first", "second", "third"] {
            steered.steering.push(text.to_owned(), 100, None);
            steered.follow_ups.push(format!("then {text}"), 100, None);
        }
        assert_eq!(steered.take(), ["first"]);
        assert_eq!(steered.take_follow_ups(), ["then first"]);
        steered.set_modes(true, false);
        assert_eq!(steered.take(), ["second", "third"]);
        assert!(steered.take().is_empty());
        assert_eq!(steered.take_follow_ups(), ["then second"]);
        steered.steering.push("dropped".to_owned(), 100, None);
        steered.clear();
        assert!(steered.take().is_empty());
        assert!(steered.take_follow_ups().is_empty());
        // `agent.cancel` takes every waiting message back, in order, and frees their bytes.
        steered.steering.push("a".to_owned(), 2, None);
        steered.steering.push("b".to_owned(), 2, None);
        steered.follow_ups.push("c".to_owned(), 2, None);
        assert_eq!(
            steered.drain(),
            (vec!["a".to_owned(), "b".to_owned()], vec!["c".to_owned()])
        );
        assert!(steered.take().is_empty());
        assert_eq!(steered.steering.push("d".to_owned(), 1, None), Some(1));
    }

    #[test]
    fn the_queue_holds_no_more_bytes_than_its_limit_and_frees_what_is_taken() {
        let queue = Queue::default();
        assert_eq!(queue.push("a".repeat(60), 100, None), Some(1));
        assert_eq!(queue.push("b".repeat(60), 100, None), None);
        assert_eq!(queue.push("c".repeat(40), 100, None), Some(2));
        assert_eq!(queue.take().len(), 1);
        assert_eq!(queue.push("d".repeat(60), 100, None), Some(2));
        // On a listening server the texts hold the budget all clients share, until taken.
        let server = MemoryBudget::new(100, 0);
        let other = Queue::default();
        assert_eq!(other.push("e".repeat(70), 1000, Some(&server)), Some(1));
        assert_eq!(other.push("f".repeat(70), 1000, Some(&server)), None);
        assert_eq!(server.available(), 30);
        other.take();
        assert_eq!(server.available(), 100);
    }
}

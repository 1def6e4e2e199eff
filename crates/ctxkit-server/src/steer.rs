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
/// the request queue's budget does not hold them).
#[derive(Debug, Default)]
struct Waiting {
    messages: VecDeque<String>,
    bytes: usize,
}

impl Queue {
    /// Queues `text`; how many wait now, or `None` when it would pass `limit` bytes.
    fn push(&self, text: String, limit: usize) -> Option<usize> {
        let mut waiting = self.waiting.lock().ok()?;
        let bytes = waiting.bytes.saturating_add(text.len());
        if bytes > limit {
            return None;
        }
        waiting.bytes = bytes;
        waiting.messages.push_back(text);
        Some(waiting.messages.len())
    }

    fn take(&self) -> Vec<String> {
        let Ok(mut waiting) = self.waiting.lock() else {
            return Vec::new();
        };
        let taken: Vec<String> = if self.all.load(Ordering::SeqCst) {
            waiting.messages.drain(..).collect()
        } else {
            waiting.messages.pop_front().into_iter().collect()
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
    match queue.push(text, limit) {
        Some(queued) => Ok(json!({"queued": queued})),
        None => Err(MethodError {
            code: codes::ENGINE_ERROR,
            message: format!(
                "not queued: the messages waiting for the run would pass `server.maxQueuedBytes` \
                 ({} bytes); send it once the run has taken some",
                limit
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
            steered.steering.push(text.to_owned(), 100);
            steered.follow_ups.push(format!("then {text}"), 100);
        }
        assert_eq!(steered.take(), ["first"]);
        assert_eq!(steered.take_follow_ups(), ["then first"]);
        steered.set_modes(true, false);
        assert_eq!(steered.take(), ["second", "third"]);
        assert!(steered.take().is_empty());
        assert_eq!(steered.take_follow_ups(), ["then second"]);
        steered.steering.push("dropped".to_owned(), 100);
        steered.clear();
        assert!(steered.take().is_empty());
        assert!(steered.take_follow_ups().is_empty());
    }

    #[test]
    fn the_queue_holds_no_more_bytes_than_its_limit_and_frees_what_is_taken() {
        let queue = Queue::default();
        assert_eq!(queue.push("a".repeat(60), 100), Some(1));
        assert_eq!(queue.push("b".repeat(60), 100), None);
        assert_eq!(queue.push("c".repeat(40), 100), Some(2));
        assert_eq!(queue.take().len(), 1);
        assert_eq!(queue.push("d".repeat(60), 100), Some(2));
    }
}

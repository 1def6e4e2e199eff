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
    messages: Mutex<VecDeque<String>>,
    /// `"all"` in the settings: every queued message at once; else one at a time.
    all: AtomicBool,
}

impl Queue {
    fn push(&self, text: String) -> usize {
        let Ok(mut messages) = self.messages.lock() else {
            return 0;
        };
        messages.push_back(text);
        messages.len()
    }

    fn take(&self) -> Vec<String> {
        let Ok(mut messages) = self.messages.lock() else {
            return Vec::new();
        };
        if self.all.load(Ordering::SeqCst) {
            messages.drain(..).collect()
        } else {
            messages.pop_front().into_iter().collect()
        }
    }

    fn clear(&self) {
        if let Ok(mut messages) = self.messages.lock() {
            messages.clear();
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
    let queued = queue.push(text);
    Ok(json!({"queued": queued}))
}

#[cfg(test)]
mod tests {
    use ctxkit_agent::Steering as _;

    use super::*;

    #[test]
    fn one_message_a_request_unless_all() {
        let steered = Steered::default();
        for text in ["first", "second", "third"] {
            steered.steering.push(text.to_owned());
            steered.follow_ups.push(format!("then {text}"));
        }
        assert_eq!(steered.take(), ["first"]);
        assert_eq!(steered.take_follow_ups(), ["then first"]);
        steered.set_modes(true, false);
        assert_eq!(steered.take(), ["second", "third"]);
        assert!(steered.take().is_empty());
        assert_eq!(steered.take_follow_ups(), ["then second"]);
        steered.steering.push("dropped".to_owned());
        steered.clear();
        assert!(steered.take().is_empty());
        assert!(steered.take_follow_ups().is_empty());
    }
}

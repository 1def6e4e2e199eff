//! `agent.steer`: a message for the model while `agent.run` works, as Pi's RPC `steer`. It is
//! answered at once and reaches the model with the run's next request: after the tool batch
//! running now, or, when the model was answering, as a new turn of the same run. One sent before
//! a run starts goes with that run's first request. Queued messages belong to the open session:
//! opening another drops them.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Deserialize;
use serde_json::{Value, json};

use crate::methods::{engine, params};
use crate::{MethodError, Shared, codes};

/// The messages sent with `agent.steer` and not yet delivered.
#[derive(Debug, Default)]
pub(crate) struct Steered {
    queue: Mutex<VecDeque<String>>,
    /// `steeringMode: "all"`: every queued message at once; else one a request.
    all: AtomicBool,
}

impl Steered {
    /// Delivers every queued message at once from now on (`steeringMode: "all"`), or one.
    pub(crate) fn set_all(&self, all: bool) {
        self.all.store(all, Ordering::SeqCst);
    }

    fn push(&self, text: String) -> usize {
        let Ok(mut queue) = self.queue.lock() else {
            return 0;
        };
        queue.push_back(text);
        queue.len()
    }

    /// Drops what was queued for the session that was open.
    pub(crate) fn clear(&self) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.clear();
        }
    }
}

impl ctxkit_agent::Steering for Steered {
    fn take(&self) -> Vec<String> {
        let Ok(mut queue) = self.queue.lock() else {
            return Vec::new();
        };
        if self.all.load(Ordering::SeqCst) {
            queue.drain(..).collect()
        } else {
            queue.pop_front().into_iter().collect()
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SteerParams {
    text: String,
}

/// `agent.steer {text}` → `{queued}`, the messages now waiting for the run.
pub(crate) async fn steer(shared: &Shared, raw: Value) -> Result<Value, MethodError> {
    let SteerParams { text } = params(raw)?;
    if text.trim().is_empty() {
        return Err(MethodError::new(
            codes::INVALID_PARAMS,
            "invalid params: `text` is empty",
        ));
    }
    // A session must be open: the message is stored in it when delivered.
    engine(shared).await?;
    let queued = shared.steered.push(text);
    Ok(json!({"queued": queued}))
}

#[cfg(test)]
mod tests {
    use ctxkit_agent::Steering as _;

    use super::*;

    #[test]
    fn one_message_a_request_unless_all() {
        let steered = Steered::default();
        steered.push("first".to_owned());
        steered.push("second".to_owned());
        steered.push("third".to_owned());
        assert_eq!(steered.take(), ["first"]);
        steered.set_all(true);
        assert_eq!(steered.take(), ["second", "third"]);
        assert!(steered.take().is_empty());
        steered.push("dropped".to_owned());
        steered.clear();
        assert!(steered.take().is_empty());
    }
}

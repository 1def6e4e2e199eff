//! Requests that do not stop when told to. `agent.cancel` and `shutdown` interrupt the running
//! request; a request that has not ended [`ABANDON_AFTER`] later (a tool blocked in a call that
//! cannot be interrupted, such as a read of a FIFO) is abandoned: its task is aborted, the client
//! gets an error saying so, naming what held it (`activity`: the tool call, the compaction, the
//! model request it was in), and later requests run. A tool's own thread cannot be killed: it is left to
//! end by itself.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::{MethodError, Shared, codes, methods};

/// How long a told-to-stop request may take before it is abandoned.
pub const ABANDON_AFTER: Duration = Duration::from_secs(1);

/// What the running request was told to stop for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Nothing yet.
    Nothing,
    /// `agent.cancel`: an `agent.*` request stops.
    Agent,
    /// `shutdown` or the client's end: every request stops.
    Everything,
}

impl Stop {
    fn applies_to(self, method: &str) -> bool {
        match self {
            Self::Nothing => false,
            Self::Agent => method.starts_with("agent."),
            Self::Everything => true,
        }
    }
}

/// Runs one request on its own task (a panic fails that request only), abandoning it when it
/// does not end within [`ABANDON_AFTER`] of being told to stop.
pub(crate) async fn run_request(
    shared: &Arc<Shared>,
    method: String,
    params: Value,
) -> Result<crate::Answer, MethodError> {
    // Per-request state: an `agent.cancel` that came while nothing ran (or for the run before this
    // one) is not this request's; `shutdown` stays.
    shared.stop.send_if_modified(|stop| match stop {
        Stop::Agent => {
            *stop = Stop::Nothing;
            true
        }
        Stop::Nothing | Stop::Everything => false,
    });
    let mut stops = shared.stop.subscribe();
    let already_stopping = stops.borrow_and_update().applies_to(&method);
    if already_stopping
        && let Some(answer) = stopped_before_it_started(shared, &method, &params).await
    {
        return answer;
    }
    let request_shared = Arc::clone(shared);
    let request_method = method.clone();
    let mut task =
        tokio::spawn(
            async move { methods::dispatch(&request_shared, &request_method, params).await },
        );
    let joined = if already_stopping {
        let stop = *stops.borrow();
        tokio::time::timeout(ABANDON_AFTER, stopping(shared, stop, &mut task)).await
    } else {
        loop {
            tokio::select! {
                joined = &mut task => break Ok(joined),
                changed = stops.changed() => {
                    let stop = *stops.borrow_and_update();
                    if changed.is_ok() && stop.applies_to(&method) {
                        break tokio::time::timeout(ABANDON_AFTER, stopping(shared, stop, &mut task))
                            .await;
                    }
                    if changed.is_err() {
                        break Ok((&mut task).await);
                    }
                }
            }
        }
    };
    match joined {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(failure)) => Err(MethodError::new(
            codes::INTERNAL_ERROR,
            format!("the request failed inside the engine: {failure}"),
        )),
        Err(_) => {
            task.abort();
            Err(MethodError {
                code: codes::ENGINE_ERROR,
                message: format!(
                    "`{method}` did not stop within {} ms of being cancelled and was abandoned: \
                     {}",
                    ABANDON_AFTER.as_millis(),
                    crate::activity::held_by(
                        &method,
                        &shared.activity.get(),
                        compaction_hooks(shared)
                    )
                ),
                kind: Some("abandoned"),
            })
        }
    }
}

/// How often a request told to stop everything is told again while it has not ended.
const TOLD_AGAIN_EVERY: Duration = Duration::from_millis(25);

/// Waits for a request told to stop. When everything stops (`shutdown`, the client's end), the
/// engine's compaction and branch summary are cancelled again and again until it ends, and so is
/// the compaction of an `agent.run` told to stop by `agent.cancel`: the one
/// cancellation sent when the stop came finds nothing to cancel if the request had not yet started
/// its compaction (a `compact` read just before the input ended), which would then run to its
/// end and be abandoned.
async fn stopping(
    shared: &Shared,
    stop: Stop,
    task: &mut tokio::task::JoinHandle<Result<crate::Answer, MethodError>>,
) -> Result<Result<crate::Answer, MethodError>, tokio::task::JoinError> {
    let mut again = tokio::time::interval(TOLD_AGAIN_EVERY);
    loop {
        tokio::select! {
            joined = &mut *task => return joined,
            _ = again.tick() => {
                // Never waits: a request holding the engine for writing is not one that compacts.
                if let Ok(engine) = shared.engine.try_read()
                    && let Some(engine) = engine.as_ref()
                {
                    match stop {
                        Stop::Everything => {
                            engine.cancel_compaction();
                            engine.cancel_branch_summary();
                        }
                        // `agent.cancel`: the run's own compaction (before the prompt, between
                        // turns) stops too; the prompt not sent is given back (`not_sent`).
                        Stop::Agent => engine.cancel_compaction(),
                        Stop::Nothing => {}
                    }
                }
            }
        }
    }
}

/// The answer of a request that waits on a model, a summary or a hook, read after the server was
/// told to stop (`shutdown`, the client's end, `agent.cancel` for `agent.*`): it is not started,
/// and answered as if stopped at once. `None` for the others, which run (they end by themselves).
/// A `tree.navigate` is answered as a running one cancelled is (`cancelled`, `aborted`, the leaf
/// where it was), not with a compaction's error.
async fn stopped_before_it_started(
    shared: &Shared,
    method: &str,
    params: &Value,
) -> Option<Result<crate::Answer, MethodError>> {
    match method {
        "compact" | "check.before_prompt" | "check.after_run" => Some(Err(
            crate::errors::engine_error(ctxkit_engine::EngineError::Cancelled),
        )),
        "tree.navigate" => {
            let engine = shared.engine.read().await.clone();
            let leaf = match engine {
                Some(engine) => {
                    engine
                        .with_session(|session| session.leaf_id().map(str::to_owned))
                        .await
                }
                None => None,
            };
            let outcome = ctxkit_engine::NavigateOutcome {
                cancelled: true,
                aborted: true,
                new_leaf_id: leaf,
                ..ctxkit_engine::NavigateOutcome::default()
            };
            Some(
                serde_json::to_value(crate::wire::Navigated::from(outcome))
                    .map(crate::Answer::Value)
                    .map_err(|error| {
                        MethodError::new(crate::codes::ENGINE_ERROR, error.to_string())
                    }),
            )
        }
        "agent.run" => {
            let text = params.get("text").and_then(Value::as_str)?;
            Some(Ok(crate::Answer::Value(
                serde_json::json!({"outcome": "not_sent", "text": text}),
            )))
        }
        _ => None,
    }
}

/// Whether a `before_compact` command hook is configured (one with no events receives them all).
fn compaction_hooks(shared: &Shared) -> bool {
    shared.config.settings.hooks.iter().any(|hook| {
        hook.events.is_empty() || hook.events.iter().any(|event| event == "before_compact")
    })
}

//! One-shot commands (`compact`, `branch --summarize`) run their work through the engine, as chat
//! and serve do: the same hooks, fallback, pins, budgets and "nothing to compact" rule. This module
//! builds that engine over a session file and runs an operation with a spinner, Ctrl-C cancelling
//! it (nothing is written).

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::sync::Arc;

use anyhow::Result;
use ctxkit_engine::{Engine, EngineEvent, EngineOptions, HookSet, ModelInfo};
use ctxkit_session::Session;

use super::summary_setup::SummarySetup;

/// An engine over `session` with the setup's settings, summarizer and prompts. `context_window`
/// (0 when unknown) sets the budgets that follow the window and the loop guard; the session's
/// model picks its `compaction.modelOverrides` entry.
pub fn engine_for(session: Session, setup: SummarySetup, context_window: u64) -> Engine {
    let model = session_model(&session, context_window);
    Engine::new(
        session,
        EngineOptions {
            settings: setup.engine_settings,
            model,
            summarizer: Arc::from(setup.summarizer),
            prompts: setup.prompts,
            hooks: HookSet::new(),
            thinking_level: None,
            // Where the command runs (whose settings named the hooks), never the file's `cwd`.
            project: None,
        },
    )
}

/// Runs `operation` on `engine` to its end on a new runtime with a spinner showing `message` on a
/// terminal; says which summarizer writes once a compaction or branch summary really starts (not
/// when there turns out to be nothing to summarize); Ctrl-C calls `cancel` (the operation then ends
/// as cancelled).
pub fn run_cancellable<T>(
    engine: &Engine,
    summarizer: String,
    message: &'static str,
    operation: impl Future<Output = T>,
    cancel: impl Fn() + Send + 'static,
) -> Result<T> {
    // A worker beside the thread that runs `operation`: the offline summarizer never yields, and
    // on one thread Ctrl-C was not seen until the compaction was written (QA).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    // Ctrl-C cancels the operation, whose files are removed as it ends.
    let _answering = super::leftovers::answering_interrupts();
    let spinner = std::io::stderr()
        .is_terminal()
        .then(|| crate::render::spinner(message));
    let mut events = engine.subscribe();
    let announcer = spinner.clone();
    let outcome = runtime.block_on(async {
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                cancel();
            }
        });
        let announce = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let starts = match event {
                    // The engine starts no branch summary for a branch with nothing to summarize.
                    EngineEvent::CompactionStart { .. }
                    | EngineEvent::BranchSummaryStart { .. } => true,
                    EngineEvent::CompactionEnd(_)
                    | EngineEvent::CompactionFailed(_)
                    | EngineEvent::BranchSummaryEnd { .. }
                    | EngineEvent::ContextUsage(_)
                    | EngineEvent::HookError { .. } => false,
                };
                if starts {
                    let line = summarizing_line(&summarizer);
                    match &announcer {
                        Some(spinner) => spinner.println(line),
                        None => {
                            let _ = writeln!(crate::redact::stderr(), "{line}");
                        }
                    }
                    break;
                }
            }
        });
        let outcome = operation.await;
        ctrl_c.abort();
        // Let an announcement already queued be printed before the result.
        tokio::task::yield_now().await;
        announce.abort();
        outcome
    });
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    Ok(outcome)
}

/// The model the session's branch runs on (its last `model_change` or reply, as Pi resumes it),
/// with `context_window`; `None` when neither is known.
pub fn session_model(session: &Session, context_window: u64) -> Option<ModelInfo> {
    let model = session.build_context().model;
    let (provider, id) = model
        .and_then(|model| Some((model.provider?, model.model_id?)))
        .unwrap_or_default();
    (context_window > 0 || !provider.is_empty()).then_some(ModelInfo {
        cache: ctxkit_models::model_cache_terms(&provider, &id),
        provider,
        id,
        context_window,
    })
}

/// The line announcing a summary: the model that writes it, or that no model does.
fn summarizing_line(summarizer: &str) -> String {
    if summarizer == "offline" {
        "Summarizing without a model (offline: sections drawn from the session's own text)"
            .to_owned()
    } else {
        format!("Summarizing with {summarizer}")
    }
}

//! The context engine an agent loop embeds. It owns a session, its settings and a summarizer, and tells
//! the loop what the model should see (`model_view`) and when to compact (`after_run`,
//! `before_prompt`, `after_tool_batch`: the reference's checks), emitting events for UIs and
//! calling hooks on the way.
//!
//! A loop using it: `before_prompt` → `append(user)` → loop { `model_view` → call the model →
//! `append(reply)` → run tools → `append(results)` → `after_tool_batch` } → `after_run`, and when the report says
//! `retry`, run the model again. `compact`, `navigate`, `fork`, pins, scopes and `forget` are the
//! user's commands. The loop itself is `ctxkit-agent`; the stdio protocol is `ctxkit-server`.
//!
//! Planning and running a compaction offline: [`Engine::plan`] says what a compaction now would
//! cover (or why it would write nothing), [`Engine::compact`] carries that plan out.
//!
//! ```
//! use std::sync::Arc;
//!
//! use ctxkit_compaction::Prompts;
//! use ctxkit_engine::{
//!     CompactionPlan, Engine, EngineOptions, EngineSettings, HookSet, ModelInfo, NoCompaction,
//! };
//! use ctxkit_protocol::AgentMessage;
//! use ctxkit_session::Session;
//! use ctxkit_summarizer_offline::OfflineSummarizer;
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! // A small keep budget, so the older turns are summarized.
//! let read = ctxkit_settings::SettingsManager::in_memory(
//!     json!({"compaction": {"keepRecentTokens": 100}}).as_object().cloned().unwrap_or_default(),
//! );
//! let settings = EngineSettings::from_settings(read.settings());
//! let engine = Engine::new(
//!     Session::in_memory("/home/me/project"),
//!     EngineOptions {
//!         settings,
//!         model: Some(ModelInfo {
//!             provider: "anthropic".into(),
//!             id: "claude-sonnet-4-5".into(),
//!             context_window: 200_000,
//!             cache: None,
//!         }),
//!         summarizer: Arc::new(OfflineSummarizer::default()),
//!         prompts: Prompts::default(),
//!         hooks: HookSet::new(),
//!         thinking_level: None,
//!         project: None,
//!     },
//! );
//! assert!(matches!(engine.plan().await?, CompactionPlan::Nothing(NoCompaction::EmptyBranch)));
//! for turn in 0..4 {
//!     let question = json!({"role": "user", "content": format!("step {turn}: {}", "fix the parser ".repeat(20))});
//!     let reply = json!({
//!         "role": "assistant", "content": [{"type": "text", "text": format!("done with step {turn}")}],
//!         "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
//!     });
//!     engine.append(serde_json::from_value::<AgentMessage>(question)?).await?;
//!     engine.append(serde_json::from_value::<AgentMessage>(reply)?).await?;
//! }
//!
//! let CompactionPlan::Ready(plan) = engine.plan().await? else {
//!     return Err("four turns over a keep budget of 100 tokens are a plan".into());
//! };
//! let end = engine.compact(None).await?;
//! assert_eq!(end.first_kept_entry_id, Some(plan.first_kept_entry_id.clone()));
//! // The context now starts with the summary, then the kept turns; nothing was deleted.
//! let transcript = engine.transcript().await?;
//! assert_eq!(transcript[0].role(), "compactionSummary");
//! // Compacting again at once would write nothing.
//! assert!(matches!(engine.plan().await?, CompactionPlan::Nothing(NoCompaction::AlreadyCompacted)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod background;
mod cache_prefix;
mod carried;
mod check;
mod command_hooks;
mod compact;
mod configure;
mod context_status;
mod engine;
mod error;
mod events;
mod facts;
mod fallback;
mod forget;
mod hooks;
mod hot;
mod line_excerpt;
mod messages;
mod navigate_marker;
mod on_demand;
mod owed_end;
mod pins;
mod planning;
mod project;
mod projection;
mod provider_compaction;
mod recall;
mod recall_answer;
mod recovery;
mod scope;
mod settings;
mod state;
mod summarized;
mod tree;
mod verbs;
mod view;
mod words;

pub use carried::appended_chars;
pub use check::{
    CheckInput, Decision, ModelInfo, SkipReason, Trigger, decide, decide_by_length, overflowed,
};
pub use command_hooks::CommandHook;
pub use compact::{CheckReport, MAX_OVERFLOW_ATTEMPTS, RECOVERY_EXHAUSTED};
pub use context_status::{ContextStatus, UnrecordedOverhead};
pub use engine::{Engine, EngineOptions, InterruptCause, TurnGuard};
pub use error::{EngineError, Result};
pub use events::{
    CompactionEnd, CompactionFailed, CompactionReason, ContextUsage, EngineEvent, EventSink,
};
pub use facts::SessionFacts;
pub use forget::FORGOTTEN_PREAMBLE;
pub use hooks::{
    AfterCompact, AfterTree, BeforeCompact, BeforeCompactResult, BeforeFork, BeforeForkResult,
    BeforeTree, BeforeTreeResult, FileOpsView, ForkPosition, HookCompaction, HookError, HookFuture,
    HookSet, HookSummary, Hooks, PreparationSettings, PreparationView,
};
pub use navigate_marker::NAVIGATE_MARKER_TYPE;
pub use pins::Pin;
pub use planning::{CompactionPlan, NoCompaction};
pub use project::ProjectDir;
pub use recall::SUMMARIZED_REFERENCE;
pub use recall_answer::Recalled;
pub use recovery::MAX_OVER_COUNT;
pub use scope::{SCOPE_RESULT_TYPE, Scope};
pub use settings::{CompactionBudgets, EngineSettings, durability};
pub use summarized::{Originals, SummarizedRange};
pub use tree::{ForgetOutcome, ForkOutcome, NavigateOptions, NavigateOutcome};
pub use view::{IMAGE_BLOCKED, ModelView, build_view};

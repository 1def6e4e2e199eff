//! The context engine an agent loop embeds. It owns a session, its settings and a summarizer, and tells
//! the loop what the model should see (`model_view`) and when to compact (`after_run`,
//! `before_prompt`, `after_tool_batch`: the reference's checks), emitting events for UIs and
//! calling hooks on the way.
//!
//! A loop using it: `before_prompt` → `append(user)` → loop { `model_view` → call the model →
//! `append(reply)` → run tools → `append(results)` → `after_tool_batch` } → `after_run`, and when the report says
//! `retry`, run the model again. `compact`, `navigate`, `fork`, pins, scopes and `forget` are the
//! user's commands. The loop itself is `ctxkit-agent`; the stdio protocol is `ctxkit-server`.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod background;
mod cache_prefix;
mod check;
mod command_hooks;
mod compact;
mod engine;
mod error;
mod events;
mod fallback;
mod hooks;
mod pins;
mod planning;
mod provider_compaction;
mod recovery;
mod scope;
mod settings;
mod tree;
mod view;

pub use check::{CheckInput, Decision, ModelInfo, SkipReason, Trigger, decide};
pub use command_hooks::CommandHook;
pub use compact::{CheckReport, MAX_OVERFLOW_ATTEMPTS, RECOVERY_EXHAUSTED};
pub use engine::{Engine, EngineOptions, TurnGuard};
pub use error::{EngineError, Result};
pub use events::{CompactionEnd, CompactionFailed, CompactionReason, ContextUsage, EngineEvent};
pub use hooks::{
    AfterCompact, AfterTree, BeforeCompact, BeforeCompactResult, BeforeFork, BeforeForkResult,
    BeforeTree, BeforeTreeResult, FileOpsView, ForkPosition, HookCompaction, HookError, HookFuture,
    HookSet, HookSummary, Hooks, PreparationSettings, PreparationView,
};
pub use pins::{PIN_ENTRY_TYPE, PINNED_MESSAGE_TYPE, Pin};
pub use scope::{FORGOTTEN_PREAMBLE, SCOPE_RESULT_TYPE, Scope};
pub use settings::{
    AdaptiveBudgets, BranchSummaryConfig, CommandHookConfig, CompactionConfig,
    CompactionModelOverride, ContextStrategy, DurabilityMode, EngineSettings, EngineSettingsError,
    FallbackPolicy, MAX_TOKEN_BUDGET, PinnedConfig, RECOMMENDED_DIGEST_NAMES,
    RECOMMENDED_THRESHOLD_TOKENS, SessionConfig, SettingsError, SummaryRole, model_override_key,
};
pub use tree::{ForgetOutcome, ForkOutcome, NavigateOptions, NavigateOutcome};
pub use view::{ModelView, build_view};

//! Hooks: a Rust trait for embedders, and the dispatch rules of the reference. Handlers run in
//! registration order; a `before_*` answer replaces the previous one (last wins) and `cancel`
//! short-circuits; a failing hook is reported as a `hook_error` event and ignored.

use std::sync::Arc;

use ctxkit_compaction::Preparation;
use ctxkit_protocol::AgentMessage;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::events::{CompactionFailed, CompactionReason, EngineEvent, EventBus};

/// A hook's failure; reported and ignored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    pub message: String,
}

impl HookError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// What a hook returns.
pub type HookFuture<'a, T> = BoxFuture<'a, Result<T, HookError>>;

/// The planning settings a preparation was made with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreparationSettings {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
}

/// Files touched in the span being summarized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOpsView {
    pub read: Vec<String>,
    pub written: Vec<String>,
    pub edited: Vec<String>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

/// A compaction plan as hooks see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparationView {
    pub first_kept_entry_id: String,
    pub messages_to_summarize: Vec<AgentMessage>,
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// Messages left out of the middle of a span too long to carry whole (`Preparation`): the
    /// list holds its beginning and its latest messages. 0 (and not serialized) for a whole span.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub messages_omitted: usize,
    /// The same for the turn prefix.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub turn_prefix_omitted: usize,
    pub is_split_turn: bool,
    pub tokens_before: u64,
    pub previous_summary: Option<String>,
    pub file_ops: FileOpsView,
    pub settings: PreparationSettings,
}

impl From<&Preparation> for PreparationView {
    fn from(preparation: &Preparation) -> Self {
        let sorted = |set: &std::collections::HashSet<String>| {
            let mut list: Vec<String> = set.iter().cloned().collect();
            list.sort();
            list
        };
        Self {
            first_kept_entry_id: preparation.first_kept_entry_id.clone(),
            messages_to_summarize: preparation
                .messages_to_summarize
                .iter()
                .map(|message| message.message.clone())
                .collect(),
            turn_prefix_messages: preparation
                .turn_prefix_messages
                .iter()
                .map(|message| message.message.clone())
                .collect(),
            messages_omitted: preparation.history_gap.map_or(0, |gap| gap.messages),
            turn_prefix_omitted: preparation.turn_prefix_gap.map_or(0, |gap| gap.messages),
            is_split_turn: preparation.is_split_turn,
            tokens_before: preparation.tokens_before,
            previous_summary: preparation.previous_summary.clone(),
            file_ops: FileOpsView {
                read: sorted(&preparation.file_operations.read),
                written: sorted(&preparation.file_operations.written),
                edited: sorted(&preparation.file_operations.edited),
            },
            settings: PreparationSettings {
                enabled: preparation.settings.enabled,
                reserve_tokens: preparation.settings.reserve_tokens,
                keep_recent_tokens: preparation.settings.keep_recent_tokens,
            },
        }
    }
}

/// Before a compaction summarizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeforeCompact {
    pub reason: CompactionReason,
    pub preparation: PreparationView,
    /// Every entry on the current branch, root first, as stored.
    pub branch_entries: Vec<Value>,
    /// The focus text of a manual compaction.
    pub custom_instructions: Option<String>,
}

/// A compaction supplied by a hook, stored as given (`fromHook: true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCompaction {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    #[serde(default)]
    pub details: Option<Value>,
}

/// A `before_compact` answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BeforeCompactResult {
    #[serde(default)]
    pub cancel: bool,
    #[serde(default)]
    pub compaction: Option<HookCompaction>,
}

/// After a compaction entry was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterCompact {
    pub reason: CompactionReason,
    pub entry_id: String,
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    pub from_hook: bool,
}

/// Before the leaf moves in the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BeforeTree {
    pub target_id: String,
    pub old_leaf_id: Option<String>,
    pub common_ancestor_id: Option<String>,
    /// The entries of the branch being left, chronological, as stored.
    pub entries_to_summarize: Vec<Value>,
    pub user_wants_summary: bool,
    pub custom_instructions: Option<String>,
    pub replace_instructions: bool,
    pub label: Option<String>,
}

/// A branch summary supplied by a hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookSummary {
    pub summary: String,
    #[serde(default)]
    pub details: Option<Value>,
}

/// A `before_tree` answer; set fields override the caller's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BeforeTreeResult {
    #[serde(default)]
    pub cancel: bool,
    #[serde(default)]
    pub summary: Option<HookSummary>,
    #[serde(default)]
    pub custom_instructions: Option<String>,
    #[serde(default)]
    pub replace_instructions: Option<bool>,
    #[serde(default)]
    pub label: Option<String>,
}

/// After the leaf moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AfterTree {
    pub new_leaf_id: Option<String>,
    pub old_leaf_id: Option<String>,
    pub summary_entry_id: Option<String>,
    /// Whether a written summary came from a hook; absent when none was written.
    pub from_hook: Option<bool>,
}

/// Where a fork starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForkPosition {
    /// Before a user message: the new session ends at its parent and its text is returned for
    /// editing.
    Before,
    /// At any entry (a clone up to it).
    At,
}

/// Before a fork.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeforeFork {
    pub entry_id: String,
    pub position: ForkPosition,
}

/// A `before_fork` answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeforeForkResult {
    #[serde(default)]
    pub cancel: bool,
    /// A summary of what the fork leaves behind, appended to the new session as a branch summary.
    #[serde(default)]
    pub summary: Option<String>,
}

/// Hooks an embedder implements; every method has a do-nothing default.
pub trait Hooks: Send + Sync {
    /// A name for error reports.
    fn name(&self) -> String;

    fn before_compact<'a>(
        &'a self,
        _event: &'a BeforeCompact,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeCompactResult>> {
        Box::pin(async { Ok(None) })
    }

    fn after_compact<'a>(&'a self, _event: &'a AfterCompact) -> HookFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    /// A compaction failed or was cancelled (after its `compaction_end`); a notification.
    fn compaction_failed<'a>(&'a self, _event: &'a CompactionFailed) -> HookFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn before_tree<'a>(
        &'a self,
        _event: &'a BeforeTree,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeTreeResult>> {
        Box::pin(async { Ok(None) })
    }

    fn after_tree<'a>(&'a self, _event: &'a AfterTree) -> HookFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn before_fork<'a>(
        &'a self,
        _event: &'a BeforeFork,
    ) -> HookFuture<'a, Option<BeforeForkResult>> {
        Box::pin(async { Ok(None) })
    }
}

/// `answer` when the compaction it supplies keeps from an entry of the branch: one keeping from
/// anywhere else (a missing id, another branch's entry) would leave nothing of the history in
/// the view and a file `ctxkit check` flags, so it is the hook's error and goes unused.
fn keeps_from_the_branch(
    answer: Option<BeforeCompactResult>,
    event: &BeforeCompact,
) -> Result<Option<BeforeCompactResult>, HookError> {
    let supplied = answer
        .as_ref()
        .filter(|answer| !answer.cancel)
        .and_then(|answer| answer.compaction.as_ref());
    let Some(compaction) = supplied else {
        return Ok(answer);
    };
    let kept = compaction.first_kept_entry_id.as_str();
    let on_branch = event
        .branch_entries
        .iter()
        .any(|entry| entry.get("id").and_then(Value::as_str) == Some(kept));
    if on_branch {
        Ok(answer)
    } else {
        Err(HookError::new(format!(
            "its compaction keeps from `{kept}`, which is not an entry of the current branch; \
             the compaction was made without it"
        )))
    }
}

/// Answers that can cancel.
trait Cancels {
    fn cancels(&self) -> bool;
}

impl Cancels for BeforeCompactResult {
    fn cancels(&self) -> bool {
        self.cancel
    }
}

impl Cancels for BeforeTreeResult {
    fn cancels(&self) -> bool {
        self.cancel
    }
}

impl Cancels for BeforeForkResult {
    fn cancels(&self) -> bool {
        self.cancel
    }
}

/// The registered hooks, in order.
#[derive(Clone, Default)]
pub struct HookSet {
    hooks: Vec<Arc<dyn Hooks>>,
}

impl std::fmt::Debug for HookSet {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.hooks.iter().map(|hook| hook.name()).collect();
        formatter
            .debug_struct("HookSet")
            .field("hooks", &names)
            .finish()
    }
}

impl HookSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, hook: Arc<dyn Hooks>) {
        self.hooks.push(hook);
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Asks each hook in turn; the first that cancels wins. Once `cancel` fires no further hook
    /// is asked (the caller sees the cancel itself).
    async fn decide<'a, T: Cancels>(
        &'a self,
        event_name: &str,
        bus: &EventBus,
        cancel: Option<&CancellationToken>,
        call: impl Fn(&'a dyn Hooks) -> HookFuture<'a, Option<T>>,
    ) -> Option<T> {
        let mut answer = None;
        for hook in &self.hooks {
            if cancel.is_some_and(CancellationToken::is_cancelled) {
                break;
            }
            match call(hook.as_ref()).await {
                Ok(Some(result)) if result.cancels() => return Some(result),
                Ok(Some(result)) => answer = Some(result),
                Ok(None) => {}
                Err(error) => report(bus, hook.as_ref(), event_name, &error),
            }
        }
        answer
    }

    async fn notify<'a>(
        &'a self,
        event_name: &str,
        bus: &EventBus,
        call: impl Fn(&'a dyn Hooks) -> HookFuture<'a, ()>,
    ) {
        for hook in &self.hooks {
            if let Err(error) = call(hook.as_ref()).await {
                report(bus, hook.as_ref(), event_name, &error);
            }
        }
    }

    pub(crate) async fn before_compact(
        &self,
        bus: &EventBus,
        event: &BeforeCompact,
        cancel: &CancellationToken,
    ) -> Option<BeforeCompactResult> {
        self.decide("before_compact", bus, Some(cancel), |hook| {
            Box::pin(async move {
                let answer = hook.before_compact(event, cancel).await?;
                keeps_from_the_branch(answer, event)
            })
        })
        .await
    }

    pub(crate) async fn after_compact(&self, bus: &EventBus, event: &AfterCompact) {
        self.notify("after_compact", bus, |hook| hook.after_compact(event))
            .await;
    }

    pub(crate) async fn compaction_failed(&self, bus: &EventBus, event: &CompactionFailed) {
        self.notify("compaction_failed", bus, |hook| {
            hook.compaction_failed(event)
        })
        .await;
    }

    pub(crate) async fn before_tree(
        &self,
        bus: &EventBus,
        event: &BeforeTree,
        cancel: &CancellationToken,
    ) -> Option<BeforeTreeResult> {
        self.decide("before_tree", bus, Some(cancel), |hook| {
            hook.before_tree(event, cancel)
        })
        .await
    }

    pub(crate) async fn after_tree(&self, bus: &EventBus, event: &AfterTree) {
        self.notify("after_tree", bus, |hook| hook.after_tree(event))
            .await;
    }

    pub(crate) async fn before_fork(
        &self,
        bus: &EventBus,
        event: &BeforeFork,
    ) -> Option<BeforeForkResult> {
        self.decide("before_fork", bus, None, |hook| hook.before_fork(event))
            .await
    }
}

fn report(bus: &EventBus, hook: &dyn Hooks, event: &str, error: &HookError) {
    bus.emit(EngineEvent::HookError {
        hook: hook.name(),
        event: event.to_owned(),
        error: error.message.clone(),
    });
}

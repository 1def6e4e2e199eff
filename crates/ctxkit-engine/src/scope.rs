//! Scoped work and forgetting. A scope runs a sub-task (a skill, a search) in an in-memory child
//! engine; only its result enters the parent, as a custom message, so the sub-task's process never
//! takes room in the parent's context. Forgetting replaces a span of the current branch by a
//! summary: the leaf moves before the span, the summary is attached there, and the messages after
//! the span are appended again.

use std::collections::HashSet;

use ctxkit_compaction::{BranchSummaryOptions, Prompts, summarize_branch};
use ctxkit_protocol::{EntryKind, MessageContent};
use ctxkit_session::{Session, SummarySource};
use ctxkit_tokens::estimate_tokens;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::{Engine, EngineOptions, Running};
use crate::error::{EngineError, Result};
use crate::hooks::HookSet;
use crate::messages::transcript;
use crate::tree::{ForgetOutcome, branch_summary_budget};

/// The custom message type of a scope's result.
pub const SCOPE_RESULT_TYPE: &str = "ctxkit.scope-result";

/// Text placed before the summary of a forgotten span.
pub const FORGOTTEN_PREAMBLE: &str =
    "A span of this conversation was removed on request. Summary of what it contained:\n\n";

/// Whether a branch summary stands for a span the user had forgotten ([`Engine::forget`] puts
/// [`FORGOTTEN_PREAMBLE`] before every such summary, given or written): `recall` never reads such a
/// span back, and the view's summary names no originals.
pub(crate) fn is_forgotten(summary: &str) -> bool {
    summary.starts_with(FORGOTTEN_PREAMBLE)
}

/// A sub-task running in its own in-memory engine.
#[derive(Debug)]
pub struct Scope {
    name: String,
    parent: Engine,
    child: Engine,
}

impl Scope {
    /// The child engine the sub-task runs in.
    pub fn engine(&self) -> &Engine {
        &self.child
    }

    /// Ends the sub-task: appends `result` to the parent as a custom message (with the child's size
    /// in its details) and returns the new entry's id. The child's messages are discarded.
    pub async fn finish(self, result: &str) -> Result<String> {
        let child_messages = transcript(&self.child.lock().await.session)?;
        let child_tokens: u64 = child_messages.iter().map(estimate_tokens).sum();
        let mut state = self.parent.lock().await;
        Ok(state.session.append_custom_message_entry(
            SCOPE_RESULT_TYPE,
            MessageContent::Text(format!("Result of {}:\n\n{result}", self.name)),
            true,
            Some(json!({
                "scope": self.name,
                "messages": child_messages.len(),
                "tokens": child_tokens,
            })),
        )?)
    }
}

impl Engine {
    /// Starts a scope named `name` with the same settings, model and summarizer, and no hooks.
    pub async fn scope(&self, name: &str) -> Scope {
        let state = self.lock().await;
        let child = Engine::new(
            Session::in_memory(state.session.cwd()),
            EngineOptions {
                settings: ctxkit_settings_without_hooks(&state.settings),
                model: state.model.clone(),
                summarizer: self.summarizer(),
                prompts: self.inner.prompts.clone(),
                hooks: HookSet::new(),
                thinking_level: state.thinking_level.clone(),
                project: Some(self.project()),
            },
        );
        Scope {
            name: name.to_owned(),
            parent: self.clone(),
            child,
        }
    }

    /// Forgets the span `from_id..=to_id` of the current branch (to the leaf when `to_id` is
    /// `None`): the leaf moves to the span's parent, a branch summary of the span is attached there
    /// (`summary`, or one written by the summarizer), and the messages after the span are appended
    /// again. Nothing is deleted from the file: the span stays reachable in the tree.
    pub async fn forget(
        &self,
        from_id: &str,
        to_id: Option<&str>,
        summary: Option<String>,
    ) -> Result<ForgetOutcome> {
        let mut state = self.lock().await;
        let path: Vec<(String, Option<String>, usize)> = state
            .session
            .branch_path(None)
            .iter()
            .filter_map(|entry| {
                let position = state.session.index().position(entry.id())?;
                Some((
                    entry.id().to_owned(),
                    entry.parent_id().map(str::to_owned),
                    position,
                ))
            })
            .collect();
        let start = path
            .iter()
            .position(|(id, _, _)| id == from_id)
            .ok_or_else(|| EngineError::NotOnBranch(from_id.to_owned()))?;
        let end = match to_id {
            Some(to_id) => path
                .iter()
                .position(|(id, _, _)| id == to_id)
                .filter(|end| *end >= start)
                .ok_or_else(|| EngineError::NotOnBranch(to_id.to_owned()))?,
            None => path.len().saturating_sub(1),
        };
        let span: Vec<usize> = path[start..=end]
            .iter()
            .map(|(_, _, position)| *position)
            .collect();
        // A later compaction keeps entries by id; the span's copies would leave it pointing off
        // the new branch.
        if let Some((id, _, _)) = path[end + 1..].iter().find(|(id, _, _)| {
            state
                .session
                .entry(id)
                .is_some_and(|entry| entry.type_name() == "compaction")
        }) {
            return Err(EngineError::ForgetBeforeCompaction(id.clone()));
        }
        let (summary, written) = match summary {
            Some(text) => (format!("{FORGOTTEN_PREAMBLE}{text}"), None),
            None => {
                let prompts = Prompts {
                    branch_preamble: FORGOTTEN_PREAMBLE.to_owned(),
                    ..self.inner.prompts.clone()
                };
                let options = BranchSummaryOptions {
                    token_budget: branch_summary_budget(&state).max(1),
                    thinking_level: state.thinking_level.clone(),
                    ..BranchSummaryOptions::default()
                };
                // Cancellable with `cancel_branch_summary`, and shown as running.
                let cancel = CancellationToken::new();
                let running = Running::start(
                    &self.inner,
                    &self.inner.branch_summary_cancel,
                    &cancel,
                    &state.session,
                );
                let summarizer = self.summarizer();
                let written = summarize_branch(
                    &state.session,
                    &span,
                    summarizer.as_ref(),
                    &prompts,
                    &options,
                    &cancel,
                )
                .await;
                drop(running);
                // A span with no message to summarize leaves an empty summary, which no context
                // shows; the entry still records what was forgotten.
                let written = written?;
                let summary = written
                    .as_ref()
                    .map(|written| written.summary.clone())
                    .unwrap_or_default();
                (summary, written)
            }
        };
        let mut details = json!({ "forgotten": { "from": from_id, "to": path[end].0 } });
        // The summary call's model and usage, as a compaction records them (`ctxkit info`).
        if let (Some(written), Some(object)) = (&written, details.as_object_mut())
            && let Some(recorded) = written.details().as_object()
        {
            for key in ["summarizer", "usage"] {
                if let Some(value) = recorded.get(key) {
                    object.insert(key.to_owned(), value.clone());
                }
            }
        }
        let after: Vec<(String, EntryKind)> = path[end + 1..]
            .iter()
            .filter_map(|(id, _, _)| {
                Some((id.clone(), state.session.entry(id)?.parse().ok()?.kind))
            })
            .collect();
        let parent = path[start].1.clone();
        let summary_entry_id = state.session.branch_with_summary(
            parent.as_deref(),
            &summary,
            Some(details),
            SummarySource::Ctxkit,
        )?;
        let kept_before: HashSet<&str> =
            path[..start].iter().map(|(id, _, _)| id.as_str()).collect();
        let carried = carried_after(&after, &kept_before);
        let reappended = state.session.append_copies(&carried)?.len();
        Ok(ForgetOutcome {
            summary_entry_id,
            reappended,
            new_leaf_id: state.session.leaf_id().map(str::to_owned),
        })
    }
}

/// The entries `after` a forgotten span that come back (see [`Engine::forget`]), in order, as
/// `Session::append_copies` copies them (what they name among the copies names the copies):
/// messages, model and thinking changes, extension state (pins), labels, and context edits of an
/// entry still in view (an edit of a forgotten entry has nothing left to edit). Left out: branch
/// summaries (they belong to the old branch), the session name (not part of a branch), usage
/// records and unknown entries; a compaction after the span was refused before.
fn carried_after<'a>(
    after: &'a [(String, EntryKind)],
    kept_before: &HashSet<&str>,
) -> Vec<&'a str> {
    let mut carried: Vec<&str> = Vec::new();
    let mut carried_set: HashSet<&str> = HashSet::new();
    for (id, kind) in after {
        let carry = match kind {
            EntryKind::ContextEdit(edit) => {
                let target = edit.target_id.as_str();
                kept_before.contains(target) || carried_set.contains(target)
            }
            EntryKind::Message(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Custom(_)
            | EntryKind::Label(_) => true,
            EntryKind::Compaction(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => false,
        };
        if carry {
            carried.push(id);
            carried_set.insert(id);
        }
    }
    carried
}

fn ctxkit_settings_without_hooks(
    settings: &crate::settings::EngineSettings,
) -> crate::settings::EngineSettings {
    crate::settings::EngineSettings {
        hooks: Vec::new(),
        ..settings.clone()
    }
}

//! Moving in the tree: navigation with an optional branch summary (the reference's target rules),
//! forks and clones, and forgetting a span of the conversation.

use std::ops::ControlFlow;

use crate::engine::Running;

use ctxkit_compaction::{
    BranchEntries, BranchSummaryOptions, InstructionsMode, branch_has_messages,
    collect_branch_entries, summarize_branch,
};
use ctxkit_protocol::EntryKind;
use ctxkit_session::SummarySource;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::events::EngineEvent;
use crate::hooks::{AfterTree, BeforeFork, BeforeTree, ForkPosition, HookSummary};
use crate::messages::content_text;
use crate::owed_end::OwedEnd;
use crate::state::State;

/// The input budget of a branch summary when the window is unknown.
const UNKNOWN_WINDOW_BUDGET: u64 = 128_000;

/// Tokens a branch summary request may use: the window (or a default when it is unknown) less
/// `branchSummary.reserveTokens`. A reserve as large as the window (the default 16,384 on a
/// local model of 8k or 16k) would leave nothing, and every branch summary said "nothing left
/// behind to summarize": the reserve then follows the window as compaction's does.
pub(crate) fn branch_summary_budget(state: &State) -> u64 {
    let window = state.model.as_ref().map_or(0, |model| model.context_window);
    let window = if window == 0 {
        UNKNOWN_WINDOW_BUDGET
    } else {
        window
    };
    let reserve = state.settings.branch_summary.reserve_tokens;
    let reserve = if reserve >= window {
        ctxkit_compaction::CompactionSettings::for_context_window(window).reserve_tokens
    } else {
        reserve
    };
    ctxkit_tokens::compaction_threshold(window, reserve)
}

/// How to navigate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NavigateOptions {
    /// Summarize the branch being left.
    pub summarize: bool,
    /// Focus for the summary, or its whole instructions with `replace_instructions`.
    pub custom_instructions: Option<String>,
    pub replace_instructions: bool,
    /// A label for the summary (or, without one, for the target).
    pub label: Option<String>,
    /// Move the leaf to the target itself even when it is a user message (serve's `keep_target`;
    /// the next prompt then follows that message); by default the leaf goes to its parent and its
    /// text comes back for editing (the reference; `ctxkit branch`, the chat's `/tree`).
    pub keep_target: bool,
}

/// What a navigation did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NavigateOutcome {
    pub cancelled: bool,
    /// Cancelled while summarizing.
    pub aborted: bool,
    /// The text of a user message navigated to, for editing.
    pub editor_text: Option<String>,
    pub summary_entry_id: Option<String>,
    pub new_leaf_id: Option<String>,
    /// A summary was asked for and none was written because there was nothing to summarize:
    /// nothing was left behind, or what was left behind holds no message (only labels, model
    /// changes, extension state, a navigation marker…). The leaf moved all the same.
    #[serde(default)]
    pub nothing_to_summarize: bool,
    /// The navigation marker that records a move without a summary entry, now the session's leaf
    /// (standing on `new_leaf_id`, or a new root when that is `None`): written by
    /// [`Engine::navigate_recorded`], never by [`Engine::navigate`].
    #[serde(default)]
    pub marker_entry_id: Option<String>,
}

/// What a fork did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkOutcome {
    pub cancelled: bool,
    /// The text of the user message forked before.
    pub selected_text: Option<String>,
    /// The new session's file (written once it holds a reply), `None` in memory.
    pub session_file: Option<String>,
}

/// What forgetting a span did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgetOutcome {
    pub summary_entry_id: String,
    /// How many entries after the span were appended again after the summary (`carried`).
    pub reappended: usize,
    pub new_leaf_id: Option<String>,
    /// The first entry forgotten: the span's first in branch order, or the reply whose call a
    /// tool result in the span answers.
    pub from_id: String,
    /// The last entry of the span.
    pub to_id: String,
    /// The tool results after the span that answer a call in it, forgotten with their calls.
    pub results_left_out: Vec<String>,
    /// The entries after the span appended again, in order, each with its copy's id (what
    /// `compaction.undo` reports too), so ids held from before the forget can be followed.
    pub carried: Vec<ctxkit_compaction::CarriedEntry>,
}

/// Text of a user message or custom message entry, when the entry is one.
fn editable_text(state: &State, id: &str) -> Option<String> {
    let entry = state.session.entry(id)?;
    match entry.parse().ok()?.kind {
        EntryKind::Message(message) => message.as_user().map(|user| content_text(&user.content)),
        EntryKind::CustomMessage(custom) => Some(content_text(&custom.content)),
        EntryKind::ThinkingLevelChange(_)
        | EntryKind::ModelChange(_)
        | EntryKind::Compaction(_)
        | EntryKind::BranchSummary(_)
        | EntryKind::Custom(_)
        | EntryKind::Label(_)
        | EntryKind::SessionInfo(_)
        | EntryKind::ContextEdit(_)
        | EntryKind::Usage(_)
        | EntryKind::Unknown { .. } => None,
    }
}

fn raw_values(
    state: &State,
    positions: &[usize],
) -> Result<Vec<Value>, ctxkit_session::SessionError> {
    positions
        .iter()
        .filter_map(|&position| state.session.index().get(position))
        .map(|entry| {
            let raw = entry.raw()?;
            Ok(ctxkit_protocol::from_str_repaired(&raw)
                .unwrap_or_else(|_| Value::String(raw.to_string())))
        })
        .collect()
}

impl Engine {
    /// Cancels a running branch summary; the navigation then changes nothing.
    pub fn cancel_branch_summary(&self) {
        if let Ok(slot) = self.inner.branch_summary_cancel.lock()
            && let Some(cancel) = slot.as_ref()
        {
            cancel.cancel();
        }
    }

    /// Moves the leaf to `target_id` (the reference's `navigateTree`): a user or custom message
    /// puts its text back for editing and the leaf moves to its parent; any other entry becomes the
    /// leaf. With `summarize`, the branch being left is summarized and attached at the new leaf.
    pub async fn navigate(
        &self,
        target_id: &str,
        options: NavigateOptions,
    ) -> Result<NavigateOutcome> {
        let mut state = self.lock().await;
        let old_leaf = state.session.leaf_id().map(str::to_owned);
        if old_leaf.as_deref() == Some(target_id) {
            return Ok(NavigateOutcome {
                new_leaf_id: old_leaf,
                nothing_to_summarize: options.summarize,
                ..NavigateOutcome::default()
            });
        }
        if state.session.entry(target_id).is_none() {
            return Err(EngineError::EntryNotFound(target_id.to_owned()));
        }
        let cancel = CancellationToken::new();
        let running = Running::start(
            &self.inner,
            &self.inner.branch_summary_cancel,
            &cancel,
            &state.session,
        );
        let outcome = self
            .navigate_locked(&mut state, target_id, old_leaf, options, &cancel)
            .await;
        drop(running);
        outcome
    }

    async fn navigate_locked(
        &self,
        state: &mut State,
        target_id: &str,
        old_leaf: Option<String>,
        mut options: NavigateOptions,
        cancel: &CancellationToken,
    ) -> Result<NavigateOutcome> {
        let branch = collect_branch_entries(&state.session, old_leaf.as_deref(), Some(target_id));
        let hook_summary = match self
            .ask_before_tree(state, target_id, &old_leaf, &branch, &mut options, cancel)
            .await?
        {
            ControlFlow::Break(outcome) => return Ok(outcome),
            ControlFlow::Continue(hook_summary) => hook_summary,
        };
        let mut summary =
            hook_summary.map(|supplied| (supplied.summary, supplied.details, SummarySource::Hook));
        // A branch without a message to summarize is not announced as being summarized.
        let summarizing = summary.is_none()
            && options.summarize
            && branch_has_messages(&state.session, &branch.entries)?;
        // Owed from the summary's start to its end, which a dropped navigation still emits.
        let mut owed = None;
        if summarizing {
            let started = OwedEnd::branch_summary(self, target_id);
            match self
                .write_branch_summary(state, target_id, &old_leaf, &branch, &options, cancel)
                .await
            {
                Ok(ControlFlow::Break(outcome)) => {
                    started.paid();
                    return Ok(outcome);
                }
                Ok(ControlFlow::Continue(written)) => {
                    summary = written;
                    owed = Some(started);
                }
                Err(error) => {
                    started.paid();
                    return Err(error);
                }
            }
        }
        // Unlike Pi 1.6, which writes "No content to summarize" into the context, a branch that
        // holds nothing to summarize gets no summary entry.
        let nothing_to_summarize = options.summarize && summary.is_none();

        let editor_text = if options.keep_target {
            None
        } else {
            editable_text(state, target_id)
        };
        let new_leaf = match editor_text {
            Some(_) => state
                .session
                .entry(target_id)
                .and_then(|entry| entry.parent_id())
                .map(str::to_owned),
            None => Some(target_id.to_owned()),
        };
        let from_hook = summary
            .as_ref()
            .map(|(_, _, source)| *source == SummarySource::Hook);
        let label = options.label.as_deref().filter(|label| !label.is_empty());
        // The summary and its label are written together, or neither is.
        let written = state.session.append_batch(|session| {
            let summary_entry_id = match summary {
                Some((text, details, source)) => Some(session.branch_with_summary(
                    new_leaf.as_deref(),
                    &text,
                    details,
                    source,
                )?),
                None => {
                    match &new_leaf {
                        Some(id) => session.branch(id)?,
                        None => session.reset_leaf(),
                    }
                    None
                }
            };
            if let Some(label) = label {
                let labelled = summary_entry_id.as_deref().unwrap_or(target_id);
                session.append_label_change(labelled, Some(label))?;
            }
            Ok(summary_entry_id)
        });
        let summary_entry_id = match written {
            Ok(id) => id,
            Err(error) => {
                if let Some(owed) = owed {
                    owed.paid();
                    self.inner.bus.emit(EngineEvent::BranchSummaryEnd {
                        target_id: target_id.to_owned(),
                        aborted: false,
                        summary_entry_id: None,
                        error: Some(error.to_string()),
                    });
                }
                return Err(error.into());
            }
        };
        let new_leaf_id = state.session.leaf_id().map(str::to_owned);
        // The last request was sent from another branch: the new branch's own replies count its
        // context (Pi's figure) until a request is sent from it (`projection`).
        if new_leaf_id != old_leaf {
            state.calibration.forget_counted();
        }
        if let Some(owed) = owed {
            owed.paid();
            self.inner.bus.emit(EngineEvent::BranchSummaryEnd {
                target_id: target_id.to_owned(),
                aborted: false,
                summary_entry_id: summary_entry_id.clone(),
                error: None,
            });
        }
        let after = AfterTree {
            new_leaf_id: new_leaf_id.clone(),
            old_leaf_id: old_leaf,
            summary_entry_id: summary_entry_id.clone(),
            from_hook: summary_entry_id.as_ref().and(from_hook),
        };
        self.inner.hooks.after_tree(&self.inner.bus, &after).await;
        Ok(NavigateOutcome {
            cancelled: false,
            aborted: false,
            editor_text,
            summary_entry_id,
            new_leaf_id,
            nothing_to_summarize,
            marker_entry_id: None,
        })
    }

    /// Runs the `before_tree` hooks: stops the navigation when they cancel it (or a cancel arrived
    /// while they ran), applies their overrides to `options`, and returns the summary they
    /// supplied, if a summary was asked for.
    async fn ask_before_tree(
        &self,
        state: &State,
        target_id: &str,
        old_leaf: &Option<String>,
        branch: &BranchEntries,
        options: &mut NavigateOptions,
        cancel: &CancellationToken,
    ) -> Result<ControlFlow<NavigateOutcome, Option<HookSummary>>> {
        if self.inner.hooks.is_empty() {
            return Ok(ControlFlow::Continue(None));
        }
        let event = BeforeTree {
            target_id: target_id.to_owned(),
            old_leaf_id: old_leaf.clone(),
            common_ancestor_id: branch.common_ancestor_id.clone(),
            entries_to_summarize: raw_values(state, &branch.entries)?,
            user_wants_summary: options.summarize,
            custom_instructions: options.custom_instructions.clone(),
            replace_instructions: options.replace_instructions,
            label: options.label.clone(),
        };
        let answer = self
            .inner
            .hooks
            .before_tree(&self.inner.bus, &event, cancel)
            .await;
        if answer.as_ref().is_some_and(|answer| answer.cancel) {
            return Ok(ControlFlow::Break(NavigateOutcome {
                cancelled: true,
                new_leaf_id: old_leaf.clone(),
                ..NavigateOutcome::default()
            }));
        }
        // A cancel that arrived while the hooks ran stops the navigation: a command hook it
        // interrupted was killed without answering, and its answer might have cancelled it.
        if cancel.is_cancelled() {
            return Ok(ControlFlow::Break(aborted_navigation(old_leaf)));
        }
        let Some(answer) = answer else {
            return Ok(ControlFlow::Continue(None));
        };
        if answer.custom_instructions.is_some() {
            options.custom_instructions = answer.custom_instructions;
        }
        if let Some(replace) = answer.replace_instructions {
            options.replace_instructions = replace;
        }
        if answer.label.is_some() {
            options.label = answer.label;
        }
        Ok(ControlFlow::Continue(
            answer.summary.filter(|_| options.summarize),
        ))
    }

    /// Summarizes the branch being left (after `BranchSummaryStart`, and emits `BranchSummaryEnd`
    /// on failure): the summary, its details and its source (`None` when the branch holds
    /// no message to summarize), or the outcome of an aborted navigation when it was cancelled.
    async fn write_branch_summary(
        &self,
        state: &State,
        target_id: &str,
        old_leaf: &Option<String>,
        branch: &BranchEntries,
        options: &NavigateOptions,
        cancel: &CancellationToken,
    ) -> Result<ControlFlow<NavigateOutcome, Option<(String, Option<Value>, SummarySource)>>> {
        let budget = branch_summary_budget(state);
        let branch_options = BranchSummaryOptions {
            instructions: options.custom_instructions.clone(),
            mode: if options.replace_instructions {
                InstructionsMode::Replace
            } else {
                InstructionsMode::Focus
            },
            token_budget: budget.max(1),
            thinking_level: state.thinking_level.clone(),
        };
        let summarizer = self.summarizer();
        let result = summarize_branch(
            &state.session,
            &branch.entries,
            summarizer.as_ref(),
            &self.inner.prompts,
            &branch_options,
            cancel,
        )
        .await
        .map_err(EngineError::from);
        // A cancel that came while the summary was written wins, whatever the summarizer
        // answered: the offline one answers `Ok` (QA: Ctrl-C during `branch --summarize` with it
        // moved the leaf and wrote the summary).
        let result = if cancel.is_cancelled() {
            Err(EngineError::Cancelled)
        } else {
            result
        };
        match result {
            Ok(written) => Ok(ControlFlow::Continue(written.map(|written| {
                let details = written.details();
                (written.summary, Some(details), SummarySource::Ctxkit)
            }))),
            Err(error) => {
                let aborted = error.is_cancelled();
                self.inner.bus.emit(EngineEvent::BranchSummaryEnd {
                    target_id: target_id.to_owned(),
                    aborted,
                    summary_entry_id: None,
                    error: (!aborted).then(|| error.to_string()),
                });
                if aborted {
                    return Ok(ControlFlow::Break(aborted_navigation(old_leaf)));
                }
                Err(error)
            }
        }
    }

    /// Forks the session (the reference's `fork`): `before` a user message (its text is returned
    /// for editing) or `at` any entry. The engine continues on the new session; the old file is not
    /// modified. Unlike the reference, a fork before the first user message keeps its parent link
    /// and the entries before it.
    pub async fn fork(&self, entry_id: &str, position: ForkPosition) -> Result<ForkOutcome> {
        let mut state = self.lock().await;
        let event = BeforeFork {
            entry_id: entry_id.to_owned(),
            position,
        };
        let answer = self.inner.hooks.before_fork(&self.inner.bus, &event).await;
        if answer.as_ref().is_some_and(|answer| answer.cancel) {
            return Ok(ForkOutcome {
                cancelled: true,
                ..ForkOutcome::default()
            });
        }
        let entry = state
            .session
            .entry(entry_id)
            .ok_or_else(|| EngineError::EntryNotFound(entry_id.to_owned()))?;
        let parent = entry.parent_id().map(str::to_owned);
        let is_user = entry.role() == Some("user");
        let (leaf, selected_text) = match position {
            ForkPosition::At => (Some(entry_id.to_owned()), None),
            ForkPosition::Before if is_user => (parent, editable_text(&state, entry_id)),
            ForkPosition::Before => return Err(EngineError::InvalidForkEntry),
        };
        let previous = state.session.path().map(|path| path.display().to_string());
        let new_path = match &leaf {
            Some(leaf) => state.session.create_branched_session(leaf)?,
            None => state.session.new_session(previous),
        };
        if let Some(summary) = answer.and_then(|answer| answer.summary) {
            let leaf = state.session.leaf_id().map(str::to_owned);
            state.session.branch_with_summary(
                leaf.as_deref(),
                &summary,
                None,
                SummarySource::Hook,
            )?;
        }
        state.overflow_attempts = 0;
        state.overflow_cut = None;
        state.overflow_written = 0;
        state.messages.clear();
        state.last_request = None;
        Ok(ForkOutcome {
            cancelled: false,
            selected_text,
            session_file: new_path.map(|path| path.display().to_string()),
        })
    }

    /// Clones the session up to the current leaf.
    pub async fn clone_session(&self) -> Result<ForkOutcome> {
        let leaf = self
            .with_session(|session| session.leaf_id().map(str::to_owned))
            .await
            .ok_or(EngineError::NothingToClone)?;
        self.fork(&leaf, ForkPosition::At).await
    }
}

/// The outcome of a navigation cancelled while its branch summary was asked for or being written:
/// the leaf stays where it was.
fn aborted_navigation(old_leaf: &Option<String>) -> NavigateOutcome {
    NavigateOutcome {
        cancelled: true,
        aborted: true,
        new_leaf_id: old_leaf.clone(),
        ..NavigateOutcome::default()
    }
}

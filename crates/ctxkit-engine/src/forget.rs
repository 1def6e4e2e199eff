//! Forgetting a span of the current branch: the leaf moves before the span, a summary of it is
//! attached there, and what came after the span is appended again. A reply's tool calls and their
//! results go together, as when a context edit leaves a reply out (Pi 1.6.0): a provider rejects
//! a tool result whose call is gone, and Pi sends such a result as it is, so a forgotten reply
//! takes its results with it, and a forgotten result takes the reply that called it.

use std::collections::HashSet;

use ctxkit_compaction::{BranchSummaryOptions, CarriedEntry, Prompts, summarize_branch};
use ctxkit_protocol::{ContentBlock, EntryKind};
use ctxkit_session::{EntryIndex, Session, SummarySource};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::engine::{Engine, Running};
use crate::error::{EngineError, Result};
use crate::state::State;
use crate::tree::{ForgetOutcome, branch_summary_budget};

/// Text placed before the summary of a forgotten span.
pub const FORGOTTEN_PREAMBLE: &str =
    "A span of this conversation was removed on request. Summary of what it contained:\n\n";

/// Whether a branch summary stands for a span the user had forgotten ([`Engine::forget`] puts
/// [`FORGOTTEN_PREAMBLE`] before every such summary, given or written): `recall` never reads such a
/// span back, and the view's summary names no originals.
pub(crate) fn is_forgotten(summary: &str) -> bool {
    summary.starts_with(FORGOTTEN_PREAMBLE)
}

/// One entry of the current branch.
struct OnPath {
    id: String,
    parent_id: Option<String>,
    position: EntryIndex,
}

/// What one forget takes out of the branch.
struct Span {
    /// The first and last entries of the branch it forgets (`start` moved back to the reply whose
    /// call a forgotten result answers).
    start: usize,
    end: usize,
    /// The tool results after `end` that answer a call of the span: forgotten with it.
    results_left_out: Vec<String>,
}

impl Engine {
    /// Forgets the span `from_id..=to_id` of the current branch (either may come first; to the leaf
    /// when `to_id` is `None`): the leaf moves to the span's parent, a branch summary of the span
    /// is attached there (`summary`, or one written by the summarizer), and what came after the
    /// span is appended again. A reply's tool results are forgotten with it, and a forgotten
    /// result's reply with it. Nothing is deleted from the file: the span stays reachable in the
    /// tree.
    pub async fn forget(
        &self,
        from_id: &str,
        to_id: Option<&str>,
        summary: Option<String>,
    ) -> Result<ForgetOutcome> {
        let mut state = self.lock().await;
        let path = current_path(&state.session);
        let span = span_to_forget(&state.session, &path, from_id, to_id)?;
        // A later compaction keeps entries by id; the span's copies would leave it pointing off
        // the new branch.
        if let Some(entry) = path[span.end + 1..].iter().find(|entry| {
            state
                .session
                .entry(&entry.id)
                .is_some_and(|entry| entry.type_name() == "compaction")
        }) {
            return Err(EngineError::ForgetBeforeCompaction(entry.id.clone()));
        }
        let mut forgotten: Vec<EntryIndex> = path[span.start..=span.end]
            .iter()
            .map(|entry| entry.position)
            .collect();
        forgotten.extend(
            span.results_left_out
                .iter()
                .filter_map(|id| state.session.index().position(id)),
        );
        let (summary, mut details) = self.forgotten_summary(&state, &forgotten, summary).await?;
        if let Some(object) = details.as_object_mut() {
            object.insert(
                "forgotten".to_owned(),
                json!({
                    "from": path[span.start].id,
                    "to": path[span.end].id,
                    "toolResults": span.results_left_out,
                }),
            );
        }
        let kept_before: HashSet<&str> = path[..span.start]
            .iter()
            .map(|entry| entry.id.as_str())
            .collect();
        let left_out: HashSet<&str> = span.results_left_out.iter().map(String::as_str).collect();
        let after: Vec<(String, EntryKind)> = path[span.end + 1..]
            .iter()
            .filter(|entry| !left_out.contains(entry.id.as_str()))
            .filter_map(|entry| {
                let kind = state.session.entry(&entry.id)?.parse().ok()?.kind;
                Some((entry.id.clone(), kind))
            })
            .collect();
        let carried_ids = carried_after(&after, &kept_before);
        // The summary moves the leaf: without the copies after it, the later turns would leave the
        // context. All of it is written, or none.
        let (summary_entry_id, copies) = state.session.append_batch(|session| {
            let summary_entry_id = session.branch_with_summary(
                path[span.start].parent_id.as_deref(),
                &summary,
                Some(details),
                SummarySource::Ctxkit,
            )?;
            let copies = session.append_copies(&carried_ids)?;
            Ok((summary_entry_id, copies))
        })?;
        let carried_set: HashSet<&str> = carried_ids.iter().copied().collect();
        let carried = after
            .iter()
            .filter(|(id, _)| carried_set.contains(id.as_str()))
            .zip(copies)
            .map(|((original_id, kind), copy_id)| CarriedEntry {
                entry_type: kind.type_name().to_owned(),
                original_id: original_id.clone(),
                copy_id,
            })
            .collect::<Vec<_>>();
        Ok(ForgetOutcome {
            summary_entry_id,
            reappended: carried.len(),
            new_leaf_id: state.session.leaf_id().map(str::to_owned),
            from_id: path[span.start].id.clone(),
            to_id: path[span.end].id.clone(),
            results_left_out: span.results_left_out,
            carried,
        })
    }

    /// The summary of the forgotten entries (`given`, or one the summarizer writes) with
    /// [`FORGOTTEN_PREAMBLE`] before it, and the details its entry records: the summary call's
    /// model and usage, as a compaction records them (`ctxkit info`).
    async fn forgotten_summary(
        &self,
        state: &State,
        forgotten: &[EntryIndex],
        given: Option<String>,
    ) -> Result<(String, serde_json::Value)> {
        let mut details = json!({});
        if let Some(text) = given {
            return Ok((format!("{FORGOTTEN_PREAMBLE}{text}"), details));
        }
        let prompts = Prompts {
            branch_preamble: FORGOTTEN_PREAMBLE.to_owned(),
            ..self.inner.prompts.clone()
        };
        let options = BranchSummaryOptions {
            token_budget: branch_summary_budget(state).max(1),
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
            forgotten,
            summarizer.as_ref(),
            &prompts,
            &options,
            &cancel,
        )
        .await;
        drop(running);
        // A span with no message to summarize leaves an empty summary, which no context shows;
        // the entry still records what was forgotten.
        let Some(written) = written? else {
            return Ok((String::new(), details));
        };
        if let (Some(object), Some(recorded)) =
            (details.as_object_mut(), written.details().as_object())
        {
            for key in ["summarizer", "usage"] {
                if let Some(value) = recorded.get(key) {
                    object.insert(key.to_owned(), value.clone());
                }
            }
        }
        Ok((written.summary, details))
    }
}

/// The current branch, root to leaf.
fn current_path(session: &Session) -> Vec<OnPath> {
    session
        .branch_path(None)
        .iter()
        .filter_map(|entry| {
            Some(OnPath {
                id: entry.id().to_owned(),
                parent_id: entry.parent_id().map(str::to_owned),
                position: session.index().position(entry.id())?,
            })
        })
        .collect()
}

/// The span `from_id..=to_id` of `path` (in either order; to the leaf without `to_id`), moved back
/// to the reply whose call a result in it answers, and the results after it that answer its calls.
fn span_to_forget(
    session: &Session,
    path: &[OnPath],
    from_id: &str,
    to_id: Option<&str>,
) -> Result<Span> {
    let find = |id: &str| {
        path.iter()
            .position(|entry| entry.id == id)
            .ok_or_else(|| EngineError::NotOnBranch(id.to_owned()))
    };
    let from = find(from_id)?;
    let to = match to_id {
        Some(to_id) => find(to_id)?,
        None => path.len().saturating_sub(1),
    };
    let end = from.max(to);
    let mut start = from.min(to);
    // Moving back to a reply brings in the entries between it and the span, which may answer an
    // earlier reply: repeat until every result in the span has its call there. `start` only
    // decreases, so this ends.
    loop {
        let calls = calls_in(session, &path[start..=end]);
        let earliest = path[start..=end]
            .iter()
            .filter_map(|entry| answered_call(session, &entry.id))
            .filter(|call| !calls.contains(call))
            .filter_map(|call| {
                path[..start]
                    .iter()
                    .rposition(|entry| tool_calls(session, &entry.id).contains(&call))
            })
            .min();
        match earliest {
            Some(reply) => start = reply,
            None => break,
        }
    }
    let calls = calls_in(session, &path[start..=end]);
    let results_left_out = path[end + 1..]
        .iter()
        .filter(|entry| answered_call(session, &entry.id).is_some_and(|call| calls.contains(&call)))
        .map(|entry| entry.id.clone())
        .collect();
    Ok(Span {
        start,
        end,
        results_left_out,
    })
}

/// The ids of the tool calls the replies among `entries` make.
fn calls_in(session: &Session, entries: &[OnPath]) -> HashSet<String> {
    entries
        .iter()
        .flat_map(|entry| tool_calls(session, &entry.id))
        .collect()
}

/// The ids of the tool calls of the reply `id`; none when it is not a reply (or cannot be read).
fn tool_calls(session: &Session, id: &str) -> Vec<String> {
    let Some(entry) = session
        .entry(id)
        .filter(|entry| entry.role() == Some("assistant"))
    else {
        return Vec::new();
    };
    let Some(Ok(message)) = entry.parse_message() else {
        return Vec::new();
    };
    message
        .as_assistant()
        .map(|reply| {
            reply
                .content
                .iter()
                .filter_map(ContentBlock::as_tool_call)
                .map(|call| call.id.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// The call the tool result `id` answers; `None` when it is not a tool result.
fn answered_call(session: &Session, id: &str) -> Option<String> {
    let entry = session
        .entry(id)
        .filter(|entry| entry.role() == Some("toolResult"))?;
    let Ok(message) = entry.parse_message()? else {
        return None;
    };
    Some(message.as_tool_result()?.tool_call_id.clone())
}

/// The entries `after` a forgotten span that come back (see [`Engine::forget`]), in order, as
/// `Session::append_copies` copies them (what they name among the copies names the copies):
/// messages, branch summaries (one after the span sits on the current branch, where a navigation
/// put it, and the model reads it), model and thinking changes, extension state (pins), labels,
/// and context edits of an entry still in view (an edit of a forgotten entry has nothing left to
/// edit). Left out: the session name (not part of a branch), usage records and unknown entries; a
/// compaction after the span was refused before. The tool results forgotten with their calls are
/// not among `after`.
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
            | EntryKind::BranchSummary(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Custom(_)
            | EntryKind::Label(_) => true,
            EntryKind::Compaction(_)
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

//! Branch summaries: when the leaf moves elsewhere in the tree, the branch being left (from the old
//! leaf back to the common ancestor) is summarized so its context is not lost. Collection and budgeted
//! preparation are pure; generation goes through a [`Summarizer`].

use ctxkit_protocol::{ContentBlock, EntryKind};
use std::collections::{HashMap, HashSet};

use ctxkit_session::{ContextMessage, ContextMessageKind, EditEffect, EntryIndex, Session};
use ctxkit_summarizer::{Summarizer, SummaryPurpose, SummaryRequest};
use ctxkit_tokens::estimate_tokens;
use tokio_util::sync::CancellationToken;

use crate::error::CompactionError;
use crate::file_ops::{FileLists, FileOperations};
use crate::prepare::SourcedMessage;
use crate::prompts::Prompts;
use crate::runner::{run_request, serialize_messages};

/// The entries of the branch being left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchEntries {
    /// From just after the common ancestor to the old leaf, chronological.
    pub entries: Vec<EntryIndex>,
    pub common_ancestor_id: Option<String>,
}

/// Collects the entries between `old_leaf` and the deepest entry it shares with the path to `target`.
/// Like the reference, a `None` target means the current leaf.
pub fn collect_branch_entries(
    session: &Session,
    old_leaf: Option<&str>,
    target: Option<&str>,
) -> BranchEntries {
    let Some(old_leaf) = old_leaf else {
        return BranchEntries {
            entries: Vec::new(),
            common_ancestor_id: None,
        };
    };
    let old_path = session.branch_path(Some(old_leaf));
    let old_ids: std::collections::HashSet<&str> =
        old_path.iter().map(|entry| entry.id()).collect();
    let target_path = session.branch_path(target);
    let common_ancestor_id = target_path
        .iter()
        .rev()
        .find(|entry| old_ids.contains(entry.id()))
        .map(|entry| entry.id().to_owned());
    let start = match &common_ancestor_id {
        Some(ancestor) => old_path
            .iter()
            .position(|entry| entry.id() == ancestor)
            .map_or(0, |position| position + 1),
        None => 0,
    };
    let entries = old_path[start..]
        .iter()
        .filter_map(|entry| session.index().position(entry.id()))
        .collect();
    BranchEntries {
        entries,
        common_ancestor_id,
    }
}

/// The messages of a branch chosen for its summary.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedBranch {
    pub messages: Vec<SourcedMessage>,
    /// The results of the calls among `messages`, which the request's text leaves out (as Pi's
    /// does: a model reads what a call did from the replies after it) and its structure keeps, so
    /// the offline summarizer, which reads calls and their outcomes, does not take a finished call
    /// for one still running.
    pub tool_results: Vec<SourcedMessage>,
    pub file_operations: FileOperations,
    pub total_tokens: u64,
}

/// The message `position` contributes to a branch summary, with the context edit in force for it
/// among the branch's entries (Pi 1.6): a hidden message contributes none, a replaced one its new
/// content. Only messages and extension messages can be edited; summaries never are.
fn branch_message(
    session: &Session,
    position: EntryIndex,
    edits: &HashMap<Box<str>, EditEffect>,
) -> Result<Option<SourcedMessage>, CompactionError> {
    let Some(entry) = session.index().get(position) else {
        return Ok(None);
    };
    let (kind, editable) = match entry.type_name() {
        "message" if entry.role() == Some("toolResult") => return Ok(None),
        "message" => (ContextMessageKind::Stored, true),
        "custom_message" => (ContextMessageKind::Custom, true),
        "branch_summary" => (ContextMessageKind::BranchSummary, false),
        "compaction" => (ContextMessageKind::CompactionSummary, false),
        _ => return Ok(None),
    };
    let mut source = ContextMessage::new(position, kind);
    match edits.get(entry.id()).filter(|_| editable) {
        None => {}
        Some(EditEffect::Omit) => return Ok(None),
        Some(&EditEffect::Replace(edit)) => source.edit = Some(edit),
    }
    Ok(Some(SourcedMessage {
        message: session.message(&source)?,
        source,
    }))
}

/// Whether `entries` hold a message a branch summary reads (as the context edits among them leave
/// it): without one there is nothing to summarize.
pub fn branch_has_messages(
    session: &Session,
    entries: &[EntryIndex],
) -> Result<bool, CompactionError> {
    let edits = ctxkit_session::edits_among(session.index(), entries);
    for &position in entries.iter().rev() {
        if branch_message(session, position, &edits)?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Walks the branch from newest to oldest adding messages until `token_budget` (0: unlimited) would be
/// exceeded; a compaction or branch summary may still go in while under 90% of the budget. File
/// operations come from earlier non-hook branch summaries and from every message walked, as edited:
/// context edits among `entries` apply to their targets among them (the last edit per target wins).
pub fn prepare_branch_entries(
    session: &Session,
    entries: &[EntryIndex],
    token_budget: u64,
) -> Result<PreparedBranch, CompactionError> {
    let mut file_operations = FileOperations::default();
    for &position in entries {
        let Some(entry) = session.index().get(position) else {
            continue;
        };
        if entry.type_name() != "branch_summary" {
            continue;
        }
        if let EntryKind::BranchSummary(summary) = entry
            .parse()
            .map_err(|error| CompactionError::reading(session, entry, error))?
            .kind
            && summary.from_hook != Some(true)
            && let Some(details) = &summary.details
        {
            file_operations.add_from_details(details);
        }
    }
    let edits = ctxkit_session::edits_among(session.index(), entries);
    let mut messages = Vec::new();
    let mut total_tokens = 0;
    for &position in entries.iter().rev() {
        let Some(message) = branch_message(session, position, &edits)? else {
            continue;
        };
        file_operations.add_from_message(&message.message);
        let tokens = estimate_tokens(&message.message);
        if token_budget > 0 && total_tokens + tokens > token_budget {
            let is_summary = matches!(
                message.source.kind,
                ContextMessageKind::CompactionSummary | ContextMessageKind::BranchSummary
            );
            if is_summary && (total_tokens as f64) < token_budget as f64 * 0.9 {
                messages.push(message);
                total_tokens += tokens;
            }
            break;
        }
        messages.push(message);
        total_tokens += tokens;
    }
    messages.reverse();
    let tool_results = results_of_calls(session, entries, &edits, &messages)?;
    Ok(PreparedBranch {
        messages,
        tool_results,
        file_operations,
        total_tokens,
    })
}

/// The tool results among `entries` (as the context edits among them leave them) that answer a
/// call of one of `messages`, in order.
fn results_of_calls(
    session: &Session,
    entries: &[EntryIndex],
    edits: &HashMap<Box<str>, EditEffect>,
    messages: &[SourcedMessage],
) -> Result<Vec<SourcedMessage>, CompactionError> {
    let calls: HashSet<&str> = messages
        .iter()
        .filter_map(|message| message.message.as_assistant())
        .flat_map(|reply| reply.content.iter().filter_map(ContentBlock::as_tool_call))
        .map(|call| call.id.as_str())
        .collect();
    let mut results = Vec::new();
    for &position in entries {
        let Some(entry) = session.index().get(position) else {
            continue;
        };
        if entry.type_name() != "message" || entry.role() != Some("toolResult") {
            continue;
        }
        let mut source = ContextMessage::new(position, ContextMessageKind::Stored);
        match edits.get(entry.id()) {
            None => {}
            Some(EditEffect::Omit) => continue,
            Some(&EditEffect::Replace(edit)) => source.edit = Some(edit),
        }
        let message = session.message(&source)?;
        let answers_a_call = message
            .as_tool_result()
            .is_some_and(|result| calls.contains(result.tool_call_id.as_str()));
        if answers_a_call {
            results.push(SourcedMessage { source, message });
        }
    }
    Ok(results)
}

/// The branch's messages with their calls' results, in the branch's order: what the request's
/// structure holds.
fn with_results(prepared: &PreparedBranch) -> Vec<SourcedMessage> {
    let mut merged: Vec<SourcedMessage> = prepared
        .messages
        .iter()
        .chain(&prepared.tool_results)
        .cloned()
        .collect();
    merged.sort_by_key(|message| message.source.entry);
    merged
}

/// How a user's instructions combine with the built-in branch prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InstructionsMode {
    /// Appended as `Additional focus: …`.
    #[default]
    Focus,
    /// Used instead of the built-in instructions.
    Replace,
}

/// Options of one branch summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BranchSummaryOptions {
    pub instructions: Option<String>,
    pub mode: InstructionsMode,
    /// Context window − reserve tokens of the summarizing model; 0 for no limit.
    pub token_budget: u64,
    /// The session's thinking level, sent as the reasoning level when the summarizer supports one
    /// and it is not `off` (Pi 1.6).
    pub thinking_level: Option<String>,
}

/// The request for a prepared branch.
pub fn branch_request(
    prepared: &PreparedBranch,
    prompts: &Prompts,
    options: &BranchSummaryOptions,
    supports_reasoning: bool,
) -> SummaryRequest {
    let instructions = match (
        options
            .instructions
            .as_deref()
            .filter(|text| !text.is_empty()),
        options.mode,
    ) {
        (Some(text), InstructionsMode::Replace) => text.to_owned(),
        (Some(text), InstructionsMode::Focus) => {
            format!("{}\n\nAdditional focus: {text}", prompts.branch)
        }
        (None, InstructionsMode::Replace | InstructionsMode::Focus) => prompts.branch.clone(),
    };
    SummaryRequest {
        purpose: SummaryPurpose::Branch,
        system_prompt: prompts.system.clone(),
        user_text: format!(
            "<conversation>\n{}\n</conversation>\n\n{instructions}",
            serialize_messages(&prepared.messages)
        ),
        // Pi 1.6: no limit of its own; the provider fits the model's output limit.
        max_tokens: None,
        reasoning: options
            .thinking_level
            .as_deref()
            .filter(|level| supports_reasoning && *level != "off")
            .map(str::to_owned),
        source: ctxkit_summarizer::SummarySpan {
            focus: match options.mode {
                InstructionsMode::Focus => {
                    options.instructions.clone().filter(|text| !text.is_empty())
                }
                InstructionsMode::Replace => None,
            },
            // What Pi 0.87 asked of a model for a branch summary.
            room_tokens: Some(4_096),
            ..crate::runner::source(
                &with_results(prepared),
                None,
                None,
                &prepared.file_operations,
            )
        },
    }
}

/// A generated branch summary, ready for `Session::branch_with_summary`.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummary {
    /// Preamble, summary text and file blocks.
    pub summary: String,
    pub files: FileLists,
    /// The request sent.
    pub request: SummaryRequest,
    /// Who wrote it ([`Summarizer::name`]: `offline`, `provider/model`).
    pub summarizer: String,
    /// The usage the summary request reported (none from the offline summarizer).
    pub usage: Option<ctxkit_protocol::Usage>,
}

impl BranchSummary {
    /// The entry's `details`: the file lists as Pi writes them, plus `summarizer` and `usage` as
    /// a compaction records them (what `ctxkit info` counts the call by).
    pub fn details(&self) -> serde_json::Value {
        let mut details = self.files.details();
        if let Some(object) = details.as_object_mut() {
            object.insert("summarizer".to_owned(), self.summarizer.clone().into());
            let usage = self
                .usage
                .as_ref()
                .and_then(|usage| serde_json::to_value(usage).ok())
                .unwrap_or(serde_json::Value::Null);
            object.insert("usage".to_owned(), serde_json::Value::Array(vec![usage]));
        }
        details
    }
}

/// Summarizes the branch `entries`; `None` when they hold no message to summarize (only labels,
/// model changes, extension state, tool results, a navigation marker…, or a newest message alone
/// over the budget): no request is sent. Pi 1.6 writes "No content to summarize" into the
/// context then; a caller writes no summary.
pub async fn summarize_branch(
    session: &Session,
    entries: &[EntryIndex],
    summarizer: &dyn Summarizer,
    prompts: &Prompts,
    options: &BranchSummaryOptions,
    cancel: &CancellationToken,
) -> Result<Option<BranchSummary>, CompactionError> {
    let prepared = prepare_branch_entries(session, entries, options.token_budget)?;
    if prepared.messages.is_empty() {
        return Ok(None);
    }
    let request = branch_request(&prepared, prompts, options, summarizer.supports_reasoning());
    let response = run_request(summarizer, request.clone(), cancel).await?;
    let files = prepared.file_operations.lists();
    let summary = format!(
        "{}{}{}",
        prompts.branch_preamble,
        response.text,
        files.blocks()
    );
    Ok(Some(BranchSummary {
        summary,
        files,
        request,
        summarizer: summarizer.name(),
        usage: response.usage,
    }))
}

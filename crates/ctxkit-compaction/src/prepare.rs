//! Planning a compaction (the reference's `prepareCompaction`): the previous compaction's boundary, the
//! cut, the messages to summarize and the split-turn prefix, tokens before, and file operations. Pure:
//! it reads a session and decides; nothing is written.

use rayon::prelude::*;

use ctxkit_protocol::{AgentMessage, EntryKind};
use ctxkit_session::{
    ContextMessage, ContextMessageKind, EntryIndex, Session, StoredEntry, build_context_on_path,
};

use crate::cut::{CutEntry, find_cut_point};
use crate::error::CompactionError;
use crate::file_ops::FileOperations;
use crate::settings::CompactionSettings;
use crate::tokens::{estimate_tokens, last_valid_usage};

/// A message taken from the path, with the entry it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedMessage {
    pub source: ContextMessage,
    pub message: AgentMessage,
}

/// Everything a summarizer run needs, and what a hook can inspect before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    pub first_kept_entry_id: String,
    pub messages_to_summarize: Vec<SourcedMessage>,
    pub turn_prefix_messages: Vec<SourcedMessage>,
    pub is_split_turn: bool,
    pub tokens_before: u64,
    pub previous_summary: Option<String>,
    pub file_operations: FileOperations,
    pub settings: CompactionSettings,
}

/// Why there is no plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPlanReason {
    /// The leaf is a compaction already.
    AlreadyCompacted,
    /// The path has no entry to keep (empty session, or a leaf before the first entry).
    NothingToCompact,
}

impl NoPlanReason {
    /// A short explanation for users and JSON output.
    pub fn describe(self) -> &'static str {
        match self {
            Self::AlreadyCompacted => "already compacted: the leaf is a compaction",
            Self::NothingToCompact => "nothing to compact",
        }
    }
}

/// A plan, or why there is none.
pub type PlanOutcome = Result<Preparation, NoPlanReason>;

/// The message an entry contributes to a summarized span (compactions contribute none).
fn message_of(
    session: &Session,
    position: EntryIndex,
    entry: &StoredEntry,
) -> Result<Option<SourcedMessage>, CompactionError> {
    let kind = match entry.type_name() {
        "message" => ContextMessageKind::Stored,
        "custom_message" => ContextMessageKind::Custom,
        "branch_summary" => ContextMessageKind::BranchSummary,
        _ => return Ok(None),
    };
    let source = ContextMessage {
        entry: position,
        kind,
    };
    let message = session.message(&source)?;
    Ok(Some(SourcedMessage { source, message }))
}

/// The reference's `estimateContextTokens` over a context, parsing messages from the end only as far
/// as the last reply that reports usage.
fn context_tokens(session: &Session, messages: &[ContextMessage]) -> Result<u64, CompactionError> {
    let mut trailing: u64 = 0;
    for source in messages.iter().rev() {
        let message = session.message(source)?;
        if let Some((_, usage)) = last_valid_usage(std::slice::from_ref(&message)) {
            return Ok(usage.saturating_add(trailing));
        }
        trailing = trailing.saturating_add(estimate_tokens(&message));
    }
    Ok(trailing)
}

/// The reference estimate of each path entry (messages only).
pub fn path_token_estimates(
    session: &Session,
    path: &[EntryIndex],
) -> Result<Vec<u64>, CompactionError> {
    path.iter()
        .map(|&position| {
            let Some(entry) = session.index().get(position) else {
                return Ok(0);
            };
            match entry.parse_message() {
                Some(message) => {
                    Ok(estimate_tokens(&message.map_err(|source| {
                        CompactionError::entry(session, entry, source)
                    })?))
                }
                None => Ok(0),
            }
        })
        .collect()
}

/// Plans a compaction of the path from the root to `leaf` (the session's leaf when `None`).
pub fn prepare_compaction(
    session: &Session,
    leaf: Option<&str>,
    settings: CompactionSettings,
) -> Result<PlanOutcome, CompactionError> {
    let leaf_position = match leaf {
        Some(id) => Some(
            session
                .index()
                .position(id)
                .ok_or_else(|| CompactionError::EntryNotFound { id: id.to_owned() })?,
        ),
        None => session
            .leaf_id()
            .and_then(|id| session.index().position(id)),
    };
    let Some(leaf_position) = leaf_position else {
        return Ok(Err(NoPlanReason::NothingToCompact));
    };
    let path = session.index().path_to(leaf_position);
    let entries: Vec<&StoredEntry> = path
        .iter()
        .filter_map(|&position| session.index().get(position))
        .collect();
    if entries
        .last()
        .is_some_and(|entry| entry.type_name() == "compaction")
    {
        return Ok(Err(NoPlanReason::AlreadyCompacted));
    }

    let previous_compaction = entries
        .iter()
        .rposition(|entry| entry.type_name() == "compaction");
    let mut previous_summary = None;
    let mut previous_details = None;
    let mut boundary_start = 0;
    if let Some(position) = previous_compaction {
        let entry = entries[position];
        if let EntryKind::Compaction(compaction) = entry
            .parse()
            .map_err(|source| CompactionError::entry(session, entry, source))?
            .kind
        {
            boundary_start = session
                .index()
                .position_in(&path, &compaction.first_kept_entry_id)
                .unwrap_or(position + 1);
            if compaction.from_hook != Some(true) {
                previous_details = compaction.details;
            }
            previous_summary = Some(compaction.summary);
        }
    }

    let context = build_context_on_path(session.index(), &path);
    let tokens_before = context_tokens(session, &context.messages)?;

    // Every message from the boundary on is parsed once, on all cores: its estimate places the cut,
    // and the ones before the cut are summarized.
    let mut parsed: Vec<Option<SourcedMessage>> = path[boundary_start..]
        .par_iter()
        .zip(&entries[boundary_start..])
        .with_min_len(16)
        .map(|(&position, &entry)| message_of(session, position, entry))
        .collect::<Result<_, _>>()?;
    let cut_entries: Vec<CutEntry<'_>> = entries
        .iter()
        .enumerate()
        .map(|(offset, &entry)| {
            let tokens = offset
                .checked_sub(boundary_start)
                .and_then(|parsed_offset| parsed.get(parsed_offset)?.as_ref())
                .filter(|message| message.source.kind == ContextMessageKind::Stored)
                .map_or(0, |message| estimate_tokens(&message.message));
            CutEntry { entry, tokens }
        })
        .collect();
    let cut = find_cut_point(
        &cut_entries,
        boundary_start,
        entries.len(),
        settings.keep_recent_tokens,
    );
    let Some(first_kept) = entries.get(cut.first_kept) else {
        return Ok(Err(NoPlanReason::NothingToCompact));
    };

    let history_end = match cut.turn_start {
        Some(turn_start) if cut.is_split_turn => turn_start,
        Some(_) | None => cut.first_kept,
    };
    let mut take = |range: std::ops::Range<usize>| -> Vec<SourcedMessage> {
        let range =
            range.start.saturating_sub(boundary_start)..range.end.saturating_sub(boundary_start);
        parsed
            .get_mut(range)
            .map(|slots| slots.iter_mut().filter_map(Option::take).collect())
            .unwrap_or_default()
    };
    let messages_to_summarize = take(boundary_start..history_end.max(boundary_start));
    let turn_prefix_messages = match cut.turn_start {
        Some(turn_start) if cut.is_split_turn => take(turn_start..cut.first_kept),
        Some(_) | None => Vec::new(),
    };

    let mut file_operations = FileOperations::default();
    if let Some(details) = &previous_details {
        file_operations.add_from_details(details);
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_operations.add_from_message(&message.message);
    }

    Ok(Ok(Preparation {
        first_kept_entry_id: first_kept.id().to_owned(),
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_operations,
        settings,
    }))
}

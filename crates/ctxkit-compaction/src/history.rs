//! Compactions made inspectable and reversible: every compaction on a path with what it covered and
//! what it saved, undo by moving the leaf back to the compaction's parent and carrying what came
//! after the compaction over (append-only: the undone summary stays in the tree), and the loop guard
//! that checks a compaction really made room.

use std::collections::HashSet;

use ctxkit_protocol::{AFTER_COMPACTION_KEY, EntryKind};
use ctxkit_session::{LeafSelector, Session};
use ctxkit_tokens::estimate_tokens;
use serde_json::{Value, json};

use crate::error::CompactionError;
use crate::settings::CompactionSettings;

/// The custom entry type ctxkit appends to record an undone compaction.
pub const UNDO_COMPACTION_TYPE: &str = "ctxkit.undo-compaction";

/// One compaction on a path.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionRecord {
    pub id: String,
    pub timestamp: String,
    /// The first entry the compaction kept verbatim.
    pub first_kept_entry_id: String,
    /// Ids of the path entries it replaced by its summary (from the previous boundary to the cut).
    pub covered_entry_ids: Vec<String>,
    pub tokens_before: u64,
    /// Estimated context tokens right after it (summary plus kept messages).
    pub tokens_after: u64,
    /// `offline`, a model name, or null for summaries written by Pi or hooks.
    pub summarizer: Option<String>,
    pub usage: Value,
    pub from_hook: bool,
    pub summary: String,
    /// The messages of the context right after it that could not be read (valid JSON that is not
    /// a message, e.g. a number for a content): left out of `tokens_after`, as a warning says.
    pub unreadable_entry_ids: Vec<String>,
    /// Why the compaction entry itself could not be read (valid JSON of the wrong shape: a number
    /// for its summary); its other fields are then empty. The context passes over such an entry,
    /// and the listing names it rather than failing (QA 2026-12-07).
    pub unreadable: Option<String>,
}

impl CompactionRecord {
    /// The record of a compaction entry that could not be read.
    fn unreadable(id: &str, timestamp: &str, reason: String) -> Self {
        Self {
            id: id.to_owned(),
            timestamp: timestamp.to_owned(),
            first_kept_entry_id: String::new(),
            covered_entry_ids: Vec::new(),
            tokens_before: 0,
            tokens_after: 0,
            summarizer: None,
            usage: Value::Null,
            from_hook: false,
            summary: String::new(),
            unreadable_entry_ids: Vec::new(),
            unreadable: Some(reason),
        }
    }
}

/// Estimated context tokens at entry `id`. Provider usage is not trusted here: a kept reply's usage
/// measured the context before the compaction, so every message is estimated.
fn context_tokens_at(session: &Session, id: &str) -> Result<u64, CompactionError> {
    let context = session.context_at(LeafSelector::Entry(id));
    let mut tokens = 0;
    for message in &context.messages {
        tokens += estimate_tokens(&session.message(message)?);
    }
    Ok(tokens)
}

/// Estimated context tokens at entry `id` of the messages that can be read, and the ids of those
/// that cannot (left out of the count).
fn readable_context_tokens_at(
    session: &Session,
    id: &str,
) -> Result<(u64, Vec<String>), CompactionError> {
    let context = session.context_at(LeafSelector::Entry(id));
    let mut tokens = 0;
    let mut unreadable = Vec::new();
    for message in &context.messages {
        match session.message(message) {
            Ok(message) => tokens += estimate_tokens(&message),
            Err(ctxkit_session::SessionError::InvalidEntry { .. }) => {
                let entry = session.index().get(message.entry);
                unreadable.push(entry.map(|entry| entry.id().to_owned()).unwrap_or_default());
            }
            Err(error) => return Err(error.into()),
        }
    }
    Ok((tokens, unreadable))
}

/// Every compaction on the path to `leaf` (the session's leaf when `None`), oldest first.
pub fn list_compactions(
    session: &Session,
    leaf: Option<&str>,
) -> Result<Vec<CompactionRecord>, CompactionError> {
    let path = session.branch_path(leaf);
    let mut records = Vec::new();
    let mut boundary = 0;
    for (position, entry) in path.iter().enumerate() {
        // Only compactions are parsed: a message is never read here (a damaged one no longer
        // fails the listing, and a 1 MiB tool output is not parsed to be passed over).
        if entry.type_name() != "compaction" {
            continue;
        }
        let parsed = match entry.parse() {
            Ok(parsed) => parsed,
            Err(ctxkit_session::SessionError::InvalidEntry { line, source, .. }) => {
                let reason = format!("line {line}: {source}");
                records.push(CompactionRecord::unreadable(
                    entry.id(),
                    entry.timestamp(),
                    reason,
                ));
                continue;
            }
            Err(error) => return Err(CompactionError::reading(session, entry, error)),
        };
        let EntryKind::Compaction(compaction) = parsed.kind else {
            continue;
        };
        let kept = path[..position]
            .iter()
            .position(|candidate| candidate.id() == compaction.first_kept_entry_id);
        let covered_end = kept.unwrap_or(position);
        let covered_entry_ids = path[boundary.min(covered_end)..covered_end]
            .iter()
            .map(|entry| entry.id().to_owned())
            .collect();
        boundary = kept.unwrap_or(position + 1);
        let details = compaction.details.clone().unwrap_or(Value::Null);
        let (tokens_after, unreadable_entry_ids) = readable_context_tokens_at(session, entry.id())?;
        records.push(CompactionRecord {
            id: entry.id().to_owned(),
            timestamp: entry.timestamp().to_owned(),
            first_kept_entry_id: compaction.first_kept_entry_id.clone(),
            covered_entry_ids,
            tokens_before: compaction.tokens_before,
            tokens_after,
            summarizer: details
                .get("summarizer")
                .and_then(Value::as_str)
                .map(str::to_owned),
            usage: details.get("usage").cloned().unwrap_or(Value::Null),
            from_hook: compaction.from_hook == Some(true),
            summary: compaction.summary,
            unreadable_entry_ids,
            unreadable: None,
        });
    }
    Ok(records)
}

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UndoOutcome {
    pub compaction_id: String,
    /// The entry the leaf moved back to.
    pub restored_leaf_id: Option<String>,
    /// The marker entry appended there, which keeps the move when the file is reopened.
    pub marker_id: String,
    /// The entries after the compaction appended again after the marker, in order (the later work
    /// stays in the context as it was; the originals stay on the compaction's branch).
    pub carried: Vec<CarriedEntry>,
    /// The entries after the compaction that could not be carried over, and why.
    pub not_carried: Vec<NotCarried>,
}

impl UndoOutcome {
    /// How many of the carried entries are messages.
    pub fn reappended_messages(&self) -> usize {
        self.carried
            .iter()
            .filter(|entry| entry.entry_type == "message")
            .count()
    }
}

/// An entry an undo appended again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedEntry {
    /// The entry's `type` (`message`, `context_edit`, `model_change`, …).
    pub entry_type: String,
    pub original_id: String,
    pub copy_id: String,
}

/// An entry an undo could not carry over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCarried {
    pub id: String,
    /// The entry's `type`.
    pub entry_type: String,
    pub reason: NotCarriedReason,
}

/// Why an entry was not carried over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCarriedReason {
    /// A context edit of the undone compaction itself (hiding its summary): there is no summary
    /// after the undo.
    EditsUndoneCompaction,
    /// A context edit of an entry that is neither on the restored branch nor carried over, so it
    /// would change nothing there.
    TargetNotOnBranch { target_id: String },
}

impl std::fmt::Display for NotCarried {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = self.entry_type.replace('_', " ");
        match &self.reason {
            NotCarriedReason::EditsUndoneCompaction => write!(
                formatter,
                "{what} {} (it edits the undone compaction, which is no longer in the context)",
                self.id
            ),
            NotCarriedReason::TargetNotOnBranch { target_id } => write!(
                formatter,
                "{what} {} (its target {target_id} is not on the restored branch)",
                self.id
            ),
        }
    }
}

/// What an undo does with one entry that came after the compaction.
enum Carry {
    /// Appended again after the marker.
    Copy,
    /// Still in force where it is, or part of no context: left alone.
    Leave,
    /// Cannot be carried over: reported.
    Refuse(NotCarriedReason),
}

/// Undoes the last compaction on the current path: the leaf moves to the compaction's parent and a
/// `custom` marker entry is appended there (it takes no part in the context), so the restored view
/// survives reopening. Then everything after the compaction that shapes the context or the model
/// call is appended again after the marker, in order, so the later work stays as it was: messages,
/// context edits (a redaction stays redacted; an edit of a carried entry edits its copy), model and
/// thinking level changes, extension messages and state, branch summaries, labels of carried
/// entries, and entry types ctxkit does not know. Left where they are: usage records (spend, counted
/// wherever they are), session names and labels of entries not carried (they hold for the whole
/// file), an earlier undo's marker and what the compaction itself caused ([`AFTER_COMPACTION_KEY`]). A context edit whose target is not on the restored branch
/// cannot be carried over and is reported in [`UndoOutcome::not_carried`]. Nothing is deleted; the
/// compaction and what followed it stay in the tree on their own branch.
pub fn undo_last_compaction(session: &mut Session) -> Result<Option<UndoOutcome>, CompactionError> {
    let path = session.branch_path(None);
    let Some(position) = path
        .iter()
        .rposition(|entry| entry.type_name() == "compaction")
    else {
        return Ok(None);
    };
    let compaction = path[position];
    let compaction_id = compaction.id().to_owned();
    let parent = compaction.parent_id().map(str::to_owned);
    let restored: HashSet<&str> = path[..position].iter().map(|entry| entry.id()).collect();
    let mut to_copy: Vec<(String, String)> = Vec::new();
    let mut copied: HashSet<&str> = HashSet::new();
    let mut not_carried = Vec::new();
    for entry in &path[position + 1..] {
        let kind = entry
            .parse()
            .map_err(|error| CompactionError::reading(session, entry, error))?
            .kind;
        let carry = match &kind {
            EntryKind::ContextEdit(edit) => {
                let target = edit.target_id.as_str();
                if restored.contains(target) || copied.contains(target) {
                    Carry::Copy
                } else if target == compaction_id {
                    Carry::Refuse(NotCarriedReason::EditsUndoneCompaction)
                } else {
                    Carry::Refuse(NotCarriedReason::TargetNotOnBranch {
                        target_id: target.to_owned(),
                    })
                }
            }
            // Labels hold for the whole file: only a carried entry's copy needs its own.
            EntryKind::Label(label) => {
                if copied.contains(label.target_id.as_str()) {
                    Carry::Copy
                } else {
                    Carry::Leave
                }
            }
            EntryKind::Custom(custom) if custom.custom_type == UNDO_COMPACTION_TYPE => Carry::Leave,
            EntryKind::Custom(custom) if follows(custom.data.as_ref(), &compaction_id) => {
                Carry::Leave
            }
            EntryKind::CustomMessage(message)
                if follows(message.details.as_ref(), &compaction_id) =>
            {
                Carry::Leave
            }
            EntryKind::Message(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Unknown { .. } => Carry::Copy,
            // The name is the file's latest, on any branch; usage counts wherever it is; no
            // compaction follows the last one.
            EntryKind::SessionInfo(_) | EntryKind::Usage(_) | EntryKind::Compaction(_) => {
                Carry::Leave
            }
        };
        match carry {
            Carry::Copy => {
                copied.insert(entry.id());
                to_copy.push((entry.id().to_owned(), kind.type_name().to_owned()));
            }
            Carry::Leave => {}
            Carry::Refuse(reason) => not_carried.push(NotCarried {
                id: entry.id().to_owned(),
                entry_type: kind.type_name().to_owned(),
                reason,
            }),
        }
    }
    let ids: Vec<&str> = to_copy.iter().map(|(id, _)| id.as_str()).collect();
    // The marker moves the leaf before the compaction: without the copies after it, the session's
    // latest turns would leave the context. All of it is written, or none (a full disk).
    let (marker_id, copies) = session.append_batch(|session| {
        match &parent {
            Some(parent) => session.branch(parent)?,
            None => session.reset_leaf(),
        }
        let marker_id = session.append_custom_entry(
            UNDO_COMPACTION_TYPE,
            Some(json!({"compactionId": compaction_id})),
        )?;
        let copies = session.append_copies(&ids)?;
        carry_labels_set_elsewhere(session, &ids, &copies)?;
        Ok((marker_id, copies))
    })?;
    let carried = to_copy
        .into_iter()
        .zip(copies)
        .map(|((original_id, entry_type), copy_id)| CarriedEntry {
            entry_type,
            original_id,
            copy_id,
        })
        .collect();
    Ok(Some(UndoOutcome {
        compaction_id,
        restored_leaf_id: parent,
        marker_id,
        carried,
        not_carried,
    }))
}

/// A label set on a copied entry from another branch (its label entry is not on the path, so it was
/// not copied) names the copy too: the restored path showed the entry without it (a tester's
/// `important`, set while the leaf was on a side branch).
fn carry_labels_set_elsewhere(
    session: &mut Session,
    originals: &[&str],
    copies: &[String],
) -> ctxkit_session::Result<()> {
    for (original, copy) in originals.iter().zip(copies) {
        let Some(label) = session.label(original).map(str::to_owned) else {
            continue;
        };
        if session.label(copy) != Some(label.as_str()) {
            session.append_label_change(copy, Some(&label))?;
        }
    }
    Ok(())
}

/// Whether an entry's `data` or `details` says it was appended because of this compaction.
fn follows(fields: Option<&Value>, compaction_id: &str) -> bool {
    fields
        .and_then(|fields| fields.get(AFTER_COMPACTION_KEY))
        .and_then(Value::as_str)
        == Some(compaction_id)
}

/// The loop guard's verdict on a finished compaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopGuard {
    /// The context is now comfortably below the threshold.
    Clear { tokens_after: u64, threshold: u64 },
    /// The context is still at or near the threshold (the kept messages alone are too large, for
    /// example); compacting again would not help.
    StillOver {
        tokens_after: u64,
        threshold: u64,
        kept_tokens: u64,
        /// `compaction.keepRecentTokens` in force: advice never says to lower a budget of 0.
        keep_recent_tokens: u64,
    },
    /// No context window is known, so there is no threshold to check against.
    Unknown { tokens_after: u64 },
}

impl LoopGuard {
    /// Advice for the user when the guard trips.
    pub fn advice(&self) -> Option<String> {
        match self {
            Self::StillOver {
                tokens_after,
                threshold,
                kept_tokens,
                keep_recent_tokens: 0,
            } => Some(format!(
                "the context is still {tokens_after} tokens after compacting (threshold {threshold}); \
                 `compaction.keepRecentTokens` is already 0, and the summary and what must stay (about \
                 {kept_tokens} tokens besides it) do not fit under the threshold: lower \
                 `compaction.reserveTokens`, or use a model with a larger context window"
            )),
            // The kept part is over twice its budget: a message in it is larger than the budget on
            // its own, and no lower budget cuts a message (QA: a 7.5M-token prompt was told to
            // lower the setting).
            Self::StillOver {
                tokens_after,
                threshold,
                kept_tokens,
                keep_recent_tokens,
            } if *kept_tokens > keep_recent_tokens.saturating_mul(2) => Some(format!(
                "the context is still {tokens_after} tokens after compacting (threshold {threshold}); the kept \
                 recent messages take about {kept_tokens}, more than `compaction.keepRecentTokens` \
                 ({keep_recent_tokens}) because a message among them is larger on its own, and a message is \
                 never cut: leave it out of later contexts (`ctxkit edit-context FILE ID --omit`), or use a \
                 model with a larger context window"
            )),
            Self::StillOver {
                tokens_after,
                threshold,
                kept_tokens,
                keep_recent_tokens: _,
            } => Some(format!(
                "the context is still {tokens_after} tokens after compacting (threshold {threshold}); the kept \
                 recent messages alone take about {kept_tokens}: lower `compaction.keepRecentTokens`, or use a \
                 model with a larger context window"
            )),
            Self::Clear { .. } | Self::Unknown { .. } => None,
        }
    }
}

/// Margin below the threshold a compaction must reach: 10% of the threshold (not of the window: a
/// threshold set far below the window, as `compaction.thresholdTokens` does, would otherwise never be
/// cleared).
const GUARD_MARGIN_DIVISOR: u64 = 10;

/// Checks the context after the compaction `compaction_id` (its leaf) against the trigger threshold
/// of `context_window` (0: unknown).
pub fn check_after_compaction(
    session: &Session,
    compaction_id: &str,
    context_window: u64,
    settings: &CompactionSettings,
) -> Result<LoopGuard, CompactionError> {
    let tokens_after = context_tokens_at(session, compaction_id)?;
    if context_window == 0 {
        return Ok(LoopGuard::Unknown { tokens_after });
    }
    let threshold = ctxkit_tokens::compaction_threshold(context_window, settings.reserve_tokens);
    let margin = threshold / GUARD_MARGIN_DIVISOR;
    if tokens_after + margin <= threshold {
        return Ok(LoopGuard::Clear {
            tokens_after,
            threshold,
        });
    }
    let summary_tokens = session
        .entry(compaction_id)
        .and_then(|entry| entry.parse().ok())
        .and_then(|entry| {
            let compaction = entry.kind.as_compaction()?;
            Some(ctxkit_tokens::utf16_len(&compaction.summary).div_ceil(4) as u64)
        })
        .unwrap_or(0);
    Ok(LoopGuard::StillOver {
        tokens_after,
        threshold,
        kept_tokens: tokens_after.saturating_sub(summary_tokens),
        keep_recent_tokens: settings.keep_recent_tokens,
    })
}

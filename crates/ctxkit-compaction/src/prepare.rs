//! Planning a compaction (the reference's `prepareCompaction`): the previous compaction's boundary, the
//! cut, the messages to summarize and the split-turn prefix, tokens before, and file operations. Pure:
//! it reads a session and decides; nothing is written.

use rayon::prelude::*;

use ctxkit_protocol::AgentMessage;
use ctxkit_session::{
    ContextMessage, ContextMessageKind, EntryIndex, ProjectedEntry, Session, StoredEntry,
    current_system_message, entry_messages, project_path,
};
use ctxkit_tokens::{Estimator, TokenSource, count_message_tokens, last_valid_usage};

use crate::cut::{CutEntry, find_cut_point};
use crate::error::CompactionError;
use crate::file_ops::FileOperations;
use crate::settings::CompactionSettings;
use crate::span_window::{SpanGap, SpanUnit, is_compaction_entry, span};

/// A message taken from the path, with the entry it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedMessage {
    pub source: ContextMessage,
    pub message: AgentMessage,
}

/// Everything a summarizer run needs, and what a hook can inspect before it.
///
/// A span longer than a summary request carries (`SPAN_WINDOW_MESSAGES`, `SPAN_WINDOW_TOKENS`) is
/// held as its beginning and its latest messages, with the count left out between them
/// (`history_gap`, `turn_prefix_gap`): a span of a million messages is never held whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Preparation {
    pub first_kept_entry_id: String,
    pub messages_to_summarize: Vec<SourcedMessage>,
    pub turn_prefix_messages: Vec<SourcedMessage>,
    /// Messages of the history span left out of `messages_to_summarize`, if any.
    pub history_gap: Option<SpanGap>,
    /// Messages of the turn prefix left out of `turn_prefix_messages`, if any.
    pub turn_prefix_gap: Option<SpanGap>,
    pub is_split_turn: bool,
    pub tokens_before: u64,
    pub previous_summary: Option<String>,
    pub file_operations: FileOperations,
    pub settings: CompactionSettings,
}

impl Preparation {
    /// How many messages the history span has, those left out included.
    pub fn history_len(&self) -> usize {
        self.messages_to_summarize.len() + self.history_gap.map_or(0, |gap| gap.messages)
    }

    /// How many messages the turn prefix has, those left out included.
    pub fn turn_prefix_len(&self) -> usize {
        self.turn_prefix_messages.len() + self.turn_prefix_gap.map_or(0, |gap| gap.messages)
    }
}

/// Why there is no plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPlanReason {
    /// The leaf is a compaction already.
    AlreadyCompacted,
    /// The path has no entry to keep (empty session, or a leaf before the first entry).
    NothingToCompact,
    /// Everything after the previous compaction is kept: there is nothing to summarize.
    NothingToSummarize,
}

impl NoPlanReason {
    /// A short explanation for users and JSON output.
    pub fn describe(self) -> &'static str {
        match self {
            Self::AlreadyCompacted => "already compacted: the leaf is a compaction",
            Self::NothingToCompact => "nothing to compact",
            Self::NothingToSummarize => "nothing to summarize: every message is kept",
        }
    }
}

/// A plan, or why there is none.
pub type PlanOutcome = Result<Preparation, NoPlanReason>;

/// The role a context message has, without parsing it.
fn role_of<'a>(entry: &'a StoredEntry, message: &ContextMessage) -> &'a str {
    match message.kind {
        ContextMessageKind::Stored => entry.role().unwrap_or(""),
        ContextMessageKind::Custom => "custom",
        ContextMessageKind::BranchSummary => "branchSummary",
        ContextMessageKind::CompactionSummary => "compactionSummary",
        ContextMessageKind::CompactionSystem => "system",
    }
}

/// Whether a `context_edit` entry carries a replacement (not `null`, not missing).
fn has_replacement(entry: &StoredEntry) -> bool {
    // `context_edit` lines are always held in memory, so reading one does not fail.
    let Ok(raw) = entry.raw() else {
        return false;
    };
    ctxkit_protocol::from_str_repaired::<serde_json::Value>(&raw)
        .ok()
        .and_then(|fields| fields.get("replacement").map(|value| !value.is_null()))
        .unwrap_or(false)
}

/// What the cut needs of one projected entry whose messages are already estimated.
fn cut_entry<'a>(session: &'a Session, projected: &ProjectedEntry, tokens: u64) -> CutEntry<'a> {
    let Some(entry) = session.index().get(projected.entry) else {
        return CutEntry::default();
    };
    let roles = || {
        projected
            .messages
            .iter()
            .map(|message| role_of(entry, message))
    };
    let is_compaction = entry.type_name() == "compaction";
    let is_edit = entry.type_name() == "context_edit";
    CutEntry {
        id: entry.id(),
        tokens,
        is_compaction,
        is_cut_point: roles().any(|role| {
            matches!(
                role,
                "user"
                    | "assistant"
                    | "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
            )
        }),
        starts_turn: roles().any(|role| {
            matches!(
                role,
                "user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
            )
        }),
        visible: !projected.messages.is_empty(),
        intrinsically_visible: !entry_messages(projected.entry, entry).is_empty(),
        is_assistant_message: entry.type_name() == "message" && entry.role() == Some("assistant"),
        replaces: (is_edit && has_replacement(entry))
            .then(|| entry.target_id())
            .flatten(),
    }
}

/// What planning needs of one projected entry's messages, so a path's messages are parsed on all
/// cores without being held: their estimates, the last valid usage among them, and their system
/// messages (few).
#[derive(Debug, Default)]
struct EntryFacts {
    /// What counts the messages (Pi's chars/4 when planning).
    estimator: Estimator,
    /// Every message's estimate.
    tokens: u64,
    /// The estimates of the messages that are not system messages.
    not_system: u64,
    /// How many messages are not system messages.
    not_system_messages: usize,
    /// The last valid usage, and `tokens` up to and including its message.
    last_usage: Option<(u64, u64)>,
    systems: Vec<AgentMessage>,
}

impl EntryFacts {
    fn new(estimator: Estimator) -> Self {
        Self {
            estimator,
            ..Self::default()
        }
    }

    fn add(&mut self, message: AgentMessage) {
        let tokens = count_message_tokens(&message, self.estimator).tokens;
        self.tokens = self.tokens.saturating_add(tokens);
        if let Some((_, usage)) = last_valid_usage(std::slice::from_ref(&message)) {
            self.last_usage = Some((usage, self.tokens));
        }
        if message.role() == "system" {
            self.systems.push(message);
        } else {
            self.not_system = self.not_system.saturating_add(tokens);
            self.not_system_messages += 1;
        }
    }
}

/// The facts of every projected entry, parsed on all cores, one entry's messages at a time.
fn entry_facts(
    session: &Session,
    projected: &[ProjectedEntry],
) -> Result<Vec<EntryFacts>, CompactionError> {
    projected
        .par_iter()
        .with_min_len(16)
        .map(|entry| {
            let mut facts = EntryFacts::new(Estimator::Pi);
            for message in &entry.messages {
                facts.add(session.message(message)?);
            }
            Ok(facts)
        })
        .collect()
}

/// The projected context's tokens over messages given one at a time (a branch of a million
/// entries is counted without holding its messages): `estimate_context_tokens` when the last
/// reported usage is trusted, else every message estimated with the system messages replayed
/// once.
#[derive(Debug, Default)]
struct ProjectedCount {
    /// What counts the messages (Pi's chars/4 when planning).
    estimator: Estimator,
    /// Every message's estimate.
    all: u64,
    /// The estimates of the messages that are not system messages.
    not_system: u64,
    /// The last valid usage: its entry, its tokens, and `all` up to and including its message.
    last_usage: Option<(EntryIndex, u64, u64)>,
    /// The system messages (few), replayed as one.
    systems: Vec<AgentMessage>,
}

impl ProjectedCount {
    fn new(estimator: Estimator) -> Self {
        Self {
            estimator,
            ..Self::default()
        }
    }

    fn add(&mut self, entry: EntryIndex, message: AgentMessage) {
        let mut facts = EntryFacts::new(self.estimator);
        facts.add(message);
        self.add_facts(entry, facts);
    }

    /// Adds an entry's messages, as counted in `facts`.
    fn add_facts(&mut self, entry: EntryIndex, facts: EntryFacts) {
        if let Some((usage, through)) = facts.last_usage {
            self.last_usage = Some((entry, usage, self.all.saturating_add(through)));
        }
        self.all = self.all.saturating_add(facts.tokens);
        self.not_system = self.not_system.saturating_add(facts.not_system);
        self.systems.extend(facts.systems);
    }

    fn finish(&self, session: &Session, path: &[EntryIndex]) -> ProjectedTokens {
        let estimated = self.estimator.source();
        let Some((usage_entry, usage, through)) = self.last_usage else {
            return self.estimated_whole(UsageStanding::NoneReported);
        };
        let usage_position = path.iter().position(|&at| at == usage_entry);
        let invalidating = path.iter().rposition(|&at| {
            session
                .index()
                .get(at)
                .is_some_and(|entry| matches!(entry.type_name(), "context_edit" | "compaction"))
        });
        let trusted = match (usage_position, invalidating) {
            (Some(usage), Some(invalidating)) => usage > invalidating,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if !trusted {
            return self.estimated_whole(UsageStanding::SetAside);
        }
        let after = self.all - through;
        ProjectedTokens {
            tokens: usage.saturating_add(after),
            source: if after == 0 {
                TokenSource::Reported
            } else {
                estimated
            },
            usage: UsageStanding::Counted,
        }
    }

    /// Every message counted by the estimator, the system messages replayed once.
    fn estimated_whole(&self, usage: UsageStanding) -> ProjectedTokens {
        let replay = current_system_message(self.systems.iter()).map_or(0, |system| {
            count_message_tokens(&system, self.estimator).tokens
        });
        ProjectedTokens {
            tokens: self.not_system.saturating_add(replay),
            source: self.estimator.source(),
            usage,
        }
    }
}

/// What became of the last usage reported in a projected count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageStanding {
    /// The path reports no valid usage: every message is counted.
    NoneReported,
    /// It leads the count; only the messages after it are counted.
    Counted,
    /// A compaction or context edit follows it, so it measured another context: every message
    /// is counted.
    SetAside,
}

/// The projected context's tokens at a leaf (see [`count_projected_context_tokens`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProjectedTokens {
    pub tokens: u64,
    /// `Reported` when the usage covers every message, else the estimator's.
    pub source: TokenSource,
    pub usage: UsageStanding,
}

/// Pi 0.87's `estimateProjectedContextTokens` of the context at `leaf` (the session's leaf when
/// `None`): what Pi compares with the window to decide on compaction. It differs from
/// [`ctxkit_tokens::estimate_context_tokens`] only after a `context_edit` or compaction that the last
/// reported usage predates.
pub fn estimate_projected_context_tokens(
    session: &Session,
    leaf: Option<&str>,
) -> Result<u64, CompactionError> {
    count_projected_context_tokens(session, leaf, Estimator::Pi).map(|projected| projected.tokens)
}

/// [`estimate_projected_context_tokens`] with the messages counted by `estimator` (`ctxkit tokens
/// --estimator`), saying where the number came from and whether the last usage reported counted.
pub fn count_projected_context_tokens(
    session: &Session,
    leaf: Option<&str>,
    estimator: Estimator,
) -> Result<ProjectedTokens, CompactionError> {
    let path =
        leaf_position(session, leaf)?.map_or_else(Vec::new, |leaf| session.index().path_to(leaf));
    let projected = project_path(session.index(), &path);
    // One message at a time (see `ProjectedCount`).
    let mut count = ProjectedCount::new(estimator);
    for entry in &projected {
        for message in &entry.messages {
            count.add(entry.entry, session.message(message)?);
        }
    }
    Ok(count.finish(session, &path))
}

/// The position of `leaf` (the session's leaf when `None`; `None` when the session has none).
fn leaf_position(
    session: &Session,
    leaf: Option<&str>,
) -> Result<Option<EntryIndex>, CompactionError> {
    match leaf {
        Some(id) => session
            .index()
            .position(id)
            .map(Some)
            .ok_or_else(|| CompactionError::EntryNotFound { id: id.to_owned() }),
        None => Ok(session
            .leaf_id()
            .and_then(|id| session.index().position(id))),
    }
}

/// Plans a compaction of the path from the root to `leaf` (the session's leaf when `None`), over
/// the projected context (Pi 0.87): the previous compaction's retained tail is the boundary, edits
/// are applied, system messages are never summarized.
pub fn prepare_compaction(
    session: &Session,
    leaf: Option<&str>,
    settings: CompactionSettings,
) -> Result<PlanOutcome, CompactionError> {
    let Some(leaf_position) = leaf_position(session, leaf)? else {
        return Ok(Err(NoPlanReason::NothingToCompact));
    };
    let path = session.index().path_to(leaf_position);
    if path
        .last()
        .and_then(|&position| session.index().get(position))
        .is_some_and(|entry| entry.type_name() == "compaction")
    {
        return Ok(Err(NoPlanReason::AlreadyCompacted));
    }

    let projected = project_path(session.index(), &path);
    let facts = entry_facts(session, &projected)?;
    let tokens: Vec<u64> = facts.iter().map(|facts| facts.tokens).collect();
    // What the span's window weighs of each entry: compactions' and system messages are never
    // summarized.
    let units: Vec<SpanUnit> = projected
        .iter()
        .zip(&facts)
        .map(|(entry, facts)| {
            if is_compaction_entry(session, entry) {
                SpanUnit::default()
            } else {
                SpanUnit {
                    messages: facts.not_system_messages,
                    tokens: facts.not_system,
                }
            }
        })
        .collect();
    let mut count = ProjectedCount::new(Estimator::Pi);
    for (entry, facts) in projected.iter().zip(facts) {
        count.add_facts(entry.entry, facts);
    }
    let tokens_before = count.finish(session, &path).tokens;

    // The newest compaction leads the projection; older ones inside its kept range project nothing.
    let previous_compaction = projected
        .iter()
        .position(|entry| is_compaction_entry(session, entry) && !entry.messages.is_empty());
    let mut previous_summary = None;
    let mut previous_details = None;
    let mut boundary_start = 0;
    if let Some(position) = previous_compaction
        && let Some(entry) = session.index().get(projected[position].entry)
    {
        // Read loosely: a retain-none compaction may carry `firstKeptEntryId: null`.
        let fields: serde_json::Value = ctxkit_protocol::from_str_repaired(&entry.raw()?)
            .map_err(|source| CompactionError::entry(session, entry, source))?;
        if fields.get("fromHook") != Some(&serde_json::Value::Bool(true)) {
            previous_details = fields.get("details").cloned();
        }
        // A Codex compaction made on the server (`codexCompacted`, imported) has no readable
        // summary, only a note that the kept messages follow: carried into the next summary it
        // said they follow once they were summarized (QA 2026-12-07).
        let unreadable = fields.get("codexCompacted").is_some();
        previous_summary = (!unreadable).then(|| {
            fields
                .get("summary")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        });
        boundary_start = position + 1;
    }

    let cut_entries: Vec<CutEntry<'_>> = projected
        .iter()
        .zip(&tokens)
        .map(|(entry, &tokens)| cut_entry(session, entry, tokens))
        .collect();
    let cut = find_cut_point(
        &cut_entries,
        boundary_start,
        projected.len(),
        settings.keep_recent_tokens,
    );
    let Some(first_kept) = projected
        .get(cut.first_kept)
        .and_then(|entry| session.index().get(entry.entry))
    else {
        return Ok(Err(NoPlanReason::NothingToCompact));
    };

    let history_end = match cut.turn_start {
        Some(turn_start) if cut.is_split_turn => turn_start,
        Some(_) | None => cut.first_kept,
    };
    let history = boundary_start..history_end.max(boundary_start);
    let turn_prefix = match cut.turn_start {
        Some(turn_start) if cut.is_split_turn => turn_start..cut.first_kept,
        Some(_) | None => 0..0,
    };
    drop(cut_entries);
    let mut file_operations = FileOperations::default();
    if let Some(details) = &previous_details {
        file_operations.add_from_details(details);
    }
    // The span is parsed again rather than kept from the count: a path of a million messages is
    // never held whole, and a span only as far as a summary request carries it.
    let (messages_to_summarize, history_gap) =
        span(session, &projected, &units, history, &mut file_operations)?;
    let (turn_prefix_messages, turn_prefix_gap) = span(
        session,
        &projected,
        &units,
        turn_prefix,
        &mut file_operations,
    )?;
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return Ok(Err(NoPlanReason::NothingToSummarize));
    }

    Ok(Ok(Preparation {
        first_kept_entry_id: first_kept.id().to_owned(),
        messages_to_summarize,
        turn_prefix_messages,
        history_gap,
        turn_prefix_gap,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_operations,
        settings,
    }))
}

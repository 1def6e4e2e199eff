//! What a session cost: every model call the file records, priced as it was recorded (`usage.cost`,
//! dollars), in parts — the conversation's requests, tools' own model calls (Pi 1.6's `usage` on a
//! tool result: a subagent, code execution), summaries (compactions and branch summaries) and cache
//! warming — with the share of the requests' input read from the prompt cache.
//! Every branch counts: money spent on a branch left behind was still spent.

use std::collections::HashSet;

use ctxkit_protocol::{AgentMessage, EntryKind, JsonObject, Usage};
use serde_json::Value;

use crate::StoredEntry;

/// Calls of one kind and what they cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpendPart {
    /// Model calls recorded.
    pub calls: u64,
    /// Dollars, as recorded with each call (a call recorded without a cost counts zero).
    pub dollars: f64,
    /// Calls whose price is not known: recorded without a cost, or at $0 although they used
    /// tokens (ctxkit records a model it has no price for at $0, as Pi does, since Pi reads
    /// `usage.cost` unguarded). Their dollars are not in `dollars`: what they cost is unknown.
    pub unpriced_calls: u64,
    /// Calls that used no tokens and cost nothing (a request that failed or was interrupted
    /// before its usage came): neither priced nor of unknown price.
    pub empty_calls: u64,
    /// Input tokens sent uncached.
    pub input_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
}

/// The models the user declared free: `llm.models` entries whose `cost` is given and all zero. A
/// call of theirs recorded at $0 cost nothing; any other call recorded at $0 for the tokens it used
/// is of unknown price (ctxkit and Pi record a model they know no price for at $0).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FreeModels {
    models: Vec<(String, String)>,
}

impl FreeModels {
    /// No model declared free.
    pub const NONE: Self = Self { models: Vec::new() };

    /// The free models, as `(provider, id)` pairs.
    pub fn new(models: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            models: models.into_iter().collect(),
        }
    }

    /// Whether `provider`/`model` was declared free.
    pub fn contains(&self, provider: Option<&str>, model: Option<&str>) -> bool {
        let (Some(provider), Some(model)) = (provider, model) else {
            return false;
        };
        self.models
            .iter()
            .any(|(known_provider, known_id)| known_provider == provider && known_id == model)
    }

    /// Whether a call's price is unknown: recorded without a cost (`dollars` `None`), or at $0
    /// although it used `tokens` by a model not declared free. The one rule `ctxkit info`, the
    /// chat's `/cost` and status line, and the web view follow.
    pub fn price_unknown(
        &self,
        dollars: Option<f64>,
        tokens: u64,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> bool {
        match dollars {
            None => true,
            Some(dollars) => dollars == 0.0 && tokens > 0 && !self.contains(provider, model),
        }
    }
}

/// Who made a call: its provider and model, as recorded.
type Caller<'a> = (Option<&'a str>, Option<&'a str>);

impl SpendPart {
    fn add(&mut self, usage: &Usage, caller: Caller<'_>, free: &FreeModels) {
        self.calls = self.calls.saturating_add(1);
        let recorded = usage.cost.as_ref().map(|cost| cost.total);
        let dollars = recorded.unwrap_or(0.0);
        let tokens = usage.part_tokens();
        if tokens == 0 && dollars == 0.0 {
            self.empty_calls += 1;
        } else if free.price_unknown(recorded, tokens, caller.0, caller.1) {
            self.unpriced_calls += 1;
        }
        self.dollars += dollars;
        // A session file's counts are whatever its author wrote: sums saturate.
        self.input_tokens = self.input_tokens.saturating_add(usage.input);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(usage.cache_read);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(usage.cache_write);
        self.output_tokens = self.output_tokens.saturating_add(usage.output);
    }

    /// Calls whose price matters: all but those that used no tokens and cost nothing.
    pub fn counted_calls(&self) -> u64 {
        self.calls.saturating_sub(self.empty_calls)
    }

    /// Input tokens: uncached, cache reads and writes, summed saturating.
    pub fn all_input_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// The share of the input read from the cache (0–1); `None` without input.
    pub fn cache_read_share(&self) -> Option<f64> {
        let input = self.all_input_tokens();
        (input > 0).then(|| self.cache_read_tokens as f64 / input as f64)
    }
}

/// A session's spend by part ([`session_spend`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SessionSpend {
    /// The conversation's requests (assistant replies).
    pub requests: SpendPart,
    /// The model calls tools made while they ran, as their results record them (Pi 1.6's `usage`
    /// on a tool result, which Pi counts under "Tools/summaries"); one record counts as one call.
    pub tools: SpendPart,
    /// Compaction and branch summaries (the calls their entries record).
    pub summaries: SpendPart,
    /// Prompt-cache refreshes (`usage` entries of kind `cache_warm`).
    pub cache_warming: SpendPart,
    /// Other usage recorded outside the conversation.
    pub other: SpendPart,
    /// Summaries the offline summarizer wrote (`details.summarizer` `offline`): no model call,
    /// nothing spent, so in no part.
    pub offline_summaries: u64,
}

impl SessionSpend {
    /// Dollars over every part.
    pub fn total_dollars(&self) -> f64 {
        self.requests.dollars
            + self.tools.dollars
            + self.summaries.dollars
            + self.cache_warming.dollars
            + self.other.dollars
    }

    /// Calls whose price matters: every call but those that used no tokens and cost nothing
    /// ([`SpendPart::empty_calls`]).
    pub fn counted_calls(&self) -> u64 {
        self.parts().iter().map(|part| part.counted_calls()).sum()
    }

    /// Calls of unknown price over every part ([`SpendPart::unpriced_calls`]).
    pub fn unpriced_calls(&self) -> u64 {
        self.parts().iter().map(|part| part.unpriced_calls).sum()
    }

    /// Input tokens (uncached, cache reads and writes) and output tokens over every part.
    pub fn total_tokens(&self) -> (u64, u64) {
        self.parts().iter().fold((0, 0), |(input, output), part| {
            (
                part.all_input_tokens().saturating_add(input),
                output.saturating_add(part.output_tokens),
            )
        })
    }

    /// Input tokens read from and written to the prompt cache over every part.
    pub fn total_cache_tokens(&self) -> (u64, u64) {
        self.parts().iter().fold((0, 0), |(read, written), part| {
            (
                read.saturating_add(part.cache_read_tokens),
                written.saturating_add(part.cache_write_tokens),
            )
        })
    }

    fn parts(&self) -> [&SpendPart; 5] {
        [
            &self.requests,
            &self.tools,
            &self.summaries,
            &self.cache_warming,
            &self.other,
        ]
    }

    /// Model calls over every part.
    pub fn total_calls(&self) -> u64 {
        self.parts().iter().map(|part| part.calls).sum()
    }
}

/// The spend of every entry of a session file (all branches). Entries that cannot be parsed count
/// nothing. A reply or branch summary appended again as a copy (`undo-compact` and `forget` bring
/// a branch's later entries back) was paid for once and counts once (a copied reply's usage is
/// zero: it is not counted as a call). A call at $0 of a model in
/// `free` is free; other calls at $0 for their tokens are of unknown price.
pub fn session_spend(entries: &[StoredEntry], free: &FreeModels) -> SessionSpend {
    let mut tally = SpendTally::default();
    tally.add(entries, free);
    tally.spend
}

/// [`session_spend`] counted as a session grows: [`SpendTally::add`] takes the entries appended
/// since the last call, so a chat's status line after every turn reads only the new entries, not
/// the whole file again (each parsed: 0.6 s a turn on a 63 MB session).
#[derive(Debug, Default)]
pub struct SpendTally {
    spend: SessionSpend,
    counted: HashSet<CallKey>,
    /// When each counted reply was written: a copy's usage counts nothing (`append_copies`).
    replied_at: HashSet<i64>,
    entries: usize,
}

impl SpendTally {
    /// Counts `entries`, the ones that follow those counted so far.
    pub fn add(&mut self, entries: &[StoredEntry], free: &FreeModels) {
        for entry in entries.iter().filter(|entry| may_record_a_call(entry)) {
            if let Ok(parsed) = entry.parse() {
                self.add_parsed(&parsed.kind, free);
            }
        }
        self.entries += entries.len();
    }

    /// How many entries were counted.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The spend of the entries counted.
    pub fn spend(&self) -> &SessionSpend {
        &self.spend
    }

    fn add_parsed(&mut self, kind: &EntryKind, free: &FreeModels) {
        let Self {
            spend,
            counted,
            replied_at,
            ..
        } = self;
        match kind {
            EntryKind::Message(message) => {
                if let AgentMessage::Assistant(reply) = message.as_ref()
                    && let Some(usage) = &reply.usage
                    && !no_count(reply, usage)
                    && !(usage_key(usage) == [0; 4]
                        && reply.timestamp.is_some_and(|at| replied_at.contains(&at)))
                    && call_key(reply, usage).is_none_or(|key| counted.insert(key))
                {
                    replied_at.extend(reply.timestamp);
                    let caller = (reply.provider.as_deref(), reply.model.as_deref());
                    spend.requests.add(usage, caller, free);
                }
                if let AgentMessage::ToolResult(result) = message.as_ref() {
                    add_tool_usage(&mut spend.tools, result, counted, free);
                }
            }
            EntryKind::Compaction(compaction) => {
                let details = compaction.details.as_ref();
                if !add_recorded_usages(spend, details, free) {
                    // Pi 1.6 records the summary call's usage on the entry itself.
                    add_entry_usage(&mut spend.summaries, compaction.extra.get("usage"), free);
                }
            }
            EntryKind::BranchSummary(summary) => {
                let recorded = summary
                    .details
                    .as_ref()
                    .and_then(|details| details.get("usage"));
                let key = recorded
                    .map(|usage| CallKey::Summary(summary.summary.clone(), usage.to_string()));
                if key.is_none_or(|key| counted.insert(key))
                    && !add_recorded_usages(spend, summary.details.as_ref(), free)
                {
                    add_entry_usage(&mut spend.summaries, summary.extra.get("usage"), free);
                }
            }
            EntryKind::Usage(usage) => {
                let part = match usage.kind.as_str() {
                    "cache_warm" => &mut spend.cache_warming,
                    "compaction" | "branch_summary" => &mut spend.summaries,
                    _ => &mut spend.other,
                };
                part.add(
                    &usage.usage,
                    (Some(&usage.provider), Some(&usage.model)),
                    free,
                );
            }
            EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Unknown { .. } => {}
        }
    }
}

/// What identifies a reply's paid call among copies of it: the provider's id of the response
/// (`responseId`, Pi 1.6's; an imported Claude Code reply's `message.id`) with its token counts,
/// else its own time (milliseconds) with them. A transcript that wrote its history again gave the
/// copies new times (QA 2026-12-07). `None`: no way to tell a copy, counted.
fn call_key(reply: &ctxkit_protocol::AssistantMessage, usage: &Usage) -> Option<CallKey> {
    let tokens = usage_key(usage);
    match reply
        .extra
        .get("responseId")
        .and_then(serde_json::Value::as_str)
    {
        Some(id) if !id.is_empty() => Some(CallKey::Response(id.to_owned(), tokens)),
        Some(_) | None => reply.timestamp.map(|at| CallKey::Reply(at, tokens)),
    }
}

/// What identifies one paid call among copies of its entry: a reply's response id or own time
/// (milliseconds) and token counts, a tool result's time, call id and token counts, or a branch
/// summary's text and recorded usage.
#[derive(Debug, PartialEq, Eq, Hash)]
enum CallKey {
    Response(String, [u64; 4]),
    Reply(i64, [u64; 4]),
    Tool(i64, String, [u64; 4]),
    Summary(String, String),
}

/// A tool result's `usage` (Pi 1.6): the tool's own model calls, counted as one call. A record of
/// nothing (no tokens, no cost: a copy's, zeroed as a copied reply's is) counts nothing, as Pi's
/// breakdown leaves it out; a copy ctxkit made before it zeroed them counts once.
fn add_tool_usage(
    part: &mut SpendPart,
    result: &ctxkit_protocol::ToolResultMessage,
    counted: &mut HashSet<CallKey>,
    free: &FreeModels,
) {
    let Some(usage) = result
        .extra
        .get("usage")
        .filter(|usage| usage.is_object())
        .and_then(|usage| serde_json::from_value::<Usage>(usage.clone()).ok())
    else {
        return;
    };
    let dollars = usage.cost.as_ref().map_or(0.0, |cost| cost.total);
    if usage.part_tokens() == 0 && dollars == 0.0 {
        return;
    }
    let key = result
        .timestamp
        .map(|at| CallKey::Tool(at, result.tool_call_id.clone(), usage_key(&usage)));
    if key.is_none_or(|key| counted.insert(key)) {
        part.add(&usage, (None, None), free);
    }
}

/// A reply that answered with a usage of all zeros at no cost: no count of a call (an imported
/// reply its source recorded no usage for, such as a Codex response's replies before its last,
/// which carry zeros because Pi requires a usage of every reply). A failed or aborted reply's
/// zeros are a call that used nothing, counted as one.
fn no_count(reply: &ctxkit_protocol::AssistantMessage, usage: &Usage) -> bool {
    usage_key(usage) == [0; 4]
        && usage.cost.as_ref().is_none_or(|cost| cost.total == 0.0)
        && !reply.is_aborted_or_error()
}

fn usage_key(usage: &Usage) -> [u64; 4] {
    [
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
    ]
}

/// The usages a summary entry's `details.usage` records (one object, or one per request), added
/// to the summaries, each attributed to the model that wrote the summary: the usage's own
/// `provider` and `model`, else the entry's `details.summarizer` (`provider/model`, as ctxkit
/// names a model summarizer). A summary of the offline summarizer is counted apart: no call, no
/// cost. `false` when the details record no summarizer and no usage (a summary Pi wrote).
fn add_recorded_usages(
    spend: &mut SessionSpend,
    details: Option<&Value>,
    free: &FreeModels,
) -> bool {
    let summarizer = details
        .and_then(|details| details.get("summarizer"))
        .and_then(Value::as_str);
    if summarizer == Some(OFFLINE_SUMMARIZER) {
        spend.offline_summaries += 1;
        return true;
    }
    let recorded = details.and_then(|details| details.get("usage"));
    let usages: Vec<&Value> = match recorded {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(object @ Value::Object(_)) => vec![object],
        Some(Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_)) | None => {
            Vec::new()
        }
    };
    let summarizer_caller = summarizer.map(summarizer_model).unwrap_or((None, None));
    for usage in &usages {
        if let Ok(usage) = serde_json::from_value::<Usage>((*usage).clone()) {
            let own = |key: &str| usage.extra.get(key).and_then(Value::as_str);
            let caller = match (own("provider"), own("model")) {
                (Some(provider), Some(model)) => (Some(provider), Some(model)),
                _ => summarizer_caller,
            };
            spend.summaries.add(&usage, caller, free);
        }
    }
    summarizer.is_some() || recorded.is_some()
}

/// The usage a summary entry records as its own (`usage`, beside `details`), as Pi 1.6 writes the
/// summary call's: the calls `details.usage` records, summed (Pi's `combineUsage`: tokens and
/// cost, with a `cost` always, which Pi's totals read). `None` for the offline summarizer (no
/// call) and when no call reported usage. Counted once: a reader of ctxkit's entries counts
/// `details.usage` and leaves the entry's own aside ([`add_recorded_usages`]).
pub(crate) fn summary_call_usage(details: Option<&Value>) -> Option<Value> {
    let details = details?;
    let summarizer = details.get("summarizer").and_then(Value::as_str);
    if summarizer == Some(OFFLINE_SUMMARIZER) {
        return None;
    }
    let recorded: Vec<Usage> = match details.get("usage")? {
        Value::Array(items) => items.iter().collect::<Vec<_>>(),
        object @ Value::Object(_) => vec![object],
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => Vec::new(),
    }
    .into_iter()
    .filter(|usage| usage.is_object())
    .filter_map(|usage| serde_json::from_value::<Usage>(usage.clone()).ok())
    .collect();
    let first = recorded.first()?;
    let mut sum = Usage {
        cost: Some(first.cost.clone().unwrap_or_default()),
        extra: JsonObject::new(),
        ..first.clone()
    };
    for usage in &recorded[1..] {
        sum.input = sum.input.saturating_add(usage.input);
        sum.output = sum.output.saturating_add(usage.output);
        sum.cache_read = sum.cache_read.saturating_add(usage.cache_read);
        sum.cache_write = sum.cache_write.saturating_add(usage.cache_write);
        sum.total_tokens = sum.total_tokens.saturating_add(usage.total_tokens);
        if let (Some(total), Some(cost)) = (sum.cost.as_mut(), usage.cost.as_ref()) {
            total.add(cost);
        }
    }
    if let Some(cost) = sum.cost.as_mut() {
        cost.extra = JsonObject::new();
    }
    serde_json::to_value(sum).ok()
}

/// What ctxkit records as `details.summarizer` for the offline summarizer.
const OFFLINE_SUMMARIZER: &str = "offline";

/// The provider and model a recorded summarizer name gives: `myco/m`, or `myco/m (on-demand)`;
/// the provider is up to the first `/` (a model id may hold more: `openrouter/anthropic/claude`).
fn summarizer_model(name: &str) -> Caller<'_> {
    let name = name.split(" (").next().unwrap_or(name);
    match name.split_once('/') {
        Some((provider, model)) if !provider.is_empty() && !model.is_empty() => {
            (Some(provider), Some(model))
        }
        Some(_) | None => (None, None),
    }
}

/// A summary entry's own `usage` (Pi 1.6 writes the summary call's there; it names no model).
fn add_entry_usage(part: &mut SpendPart, usage: Option<&Value>, free: &FreeModels) {
    if let Some(usage) = usage.filter(|usage| usage.is_object())
        && let Ok(usage) = serde_json::from_value::<Usage>(usage.clone())
    {
        part.add(&usage, (None, None), free);
    }
}

/// Whether an entry may record a model call: an assistant message, a compaction, a branch summary
/// or a usage entry. Known by the head, so the other entries (user messages and tool results are
/// most of a file's bytes) are not read back and parsed.
fn may_record_a_call(entry: &StoredEntry) -> bool {
    match entry.type_name() {
        // A tool result is read only when its line may record `usage` (known from the index).
        "message" if entry.role() == Some("toolResult") => entry.may_hold_tool_usage(),
        "message" => !matches!(
            entry.role(),
            Some("user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary")
        ),
        "thinking_level_change"
        | "model_change"
        | "custom"
        | "custom_message"
        | "label"
        | "session_info"
        | "context_edit" => false,
        // A compaction, a branch summary, a usage entry, and a type the head did not know.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Session;

    #[test]
    fn only_entries_that_may_record_a_call_are_parsed() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let output = "line of output\n".repeat(10_000);
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#.to_owned(),
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_owned(),
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{}}],"usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.5}},"stopReason":"toolUse","timestamp":2}}"#.to_owned(),
            format!(r#"{{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03Z","message":{{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{{"type":"text","text":"{output}"}}],"isError":false,"timestamp":3}}}}"#),
            r#"{"type":"label","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04Z","targetId":"a","label":"start"}"#.to_owned(),
        ];
        std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
        let session = Session::open(file.path()).unwrap();
        let before = crate::entry::parses_on_this_thread();
        let spend = session_spend(session.entries(), &FreeModels::default());
        assert_eq!(spend.requests.calls, 1);
        assert!((spend.requests.dollars - 0.5).abs() < 1e-9);
        // Only the reply was read: before, the user message, the 150 kB tool result and the label
        // were parsed too.
        assert_eq!(crate::entry::parses_on_this_thread() - before, 1);
    }

    #[test]
    fn requests_summaries_and_warming_are_counted_apart() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"yo"}],"usage":{"input":100,"output":10,"cacheRead":300,"cacheWrite":0,"totalTokens":410,"cost":{"input":0.1,"output":0.2,"cacheRead":0.03,"cacheWrite":0,"total":0.33}},"stopReason":"stop","timestamp":2}}"#,
            r#"{"type":"compaction","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"b","tokensBefore":410,"details":{"usage":[{"input":50,"output":5,"cost":{"total":0.05}}]}}"#,
            r#"{"type":"usage","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:04Z","kind":"cache_warm","provider":"anthropic","model":"m","usage":{"input":0,"output":1,"cacheRead":400,"cost":{"total":0.075}}}"#,
        ];
        std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
        let session = Session::open(file.path()).unwrap();
        let spend = session_spend(session.entries(), &FreeModels::default());
        assert_eq!(spend.requests.calls, 1);
        assert!((spend.requests.dollars - 0.33).abs() < 1e-9);
        assert_eq!(spend.requests.cache_read_share(), Some(0.75));
        assert_eq!(spend.summaries.calls, 1);
        assert!((spend.summaries.dollars - 0.05).abs() < 1e-9);
        assert_eq!(spend.cache_warming.calls, 1);
        assert!((spend.total_dollars() - 0.455).abs() < 1e-9);
    }

    #[test]
    fn a_reply_appended_again_as_a_copy_counts_once() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let reply = r#"{"role":"assistant","content":[{"type":"text","text":"yo"}],"usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.5}},"stopReason":"stop","timestamp":2}"#;
        let other = r#"{"role":"assistant","content":[{"type":"text","text":"again"}],"usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.5}},"stopReason":"stop","timestamp":3}"#;
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#.to_owned(),
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_owned(),
            format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{reply}}}"#),
            // The same reply copied below an undo marker, and a second reply of the same size.
            format!(r#"{{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:05Z","message":{reply}}}"#),
            format!(r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:06Z","message":{other}}}"#),
        ];
        std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
        let session = Session::open(file.path()).unwrap();
        let spend = session_spend(session.entries(), &FreeModels::default());
        assert_eq!(spend.requests.calls, 2);
        assert!((spend.requests.dollars - 1.0).abs() < 1e-9);
    }

    /// QA r102: a chat's status line counted the whole session again after every turn (0.6 s a
    /// turn on a 63 MB file). A tally counted on, entry by entry, gives what a count of the whole
    /// gives, a copied reply still counted once.
    #[test]
    fn a_tally_counted_on_gives_the_count_of_the_whole() {
        let file = tempfile::NamedTempFile::new().unwrap();
        let reply = r#"{"role":"assistant","content":[{"type":"text","text":"yo"}],"usage":{"input":100,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":110,"cost":{"total":0.5}},"stopReason":"stop","timestamp":2}"#;
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#.to_owned(),
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_owned(),
            format!(r#"{{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{reply}}}"#),
            r#"{"type":"compaction","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"b","tokensBefore":410,"details":{"usage":[{"input":50,"output":5,"cost":{"total":0.05}}]}}"#.to_owned(),
            format!(r#"{{"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:05Z","message":{reply}}}"#),
        ];
        std::fs::write(file.path(), lines.join("\n") + "\n").unwrap();
        let session = Session::open(file.path()).unwrap();
        let entries = session.entries();
        let whole = session_spend(entries, &FreeModels::default());
        let mut tally = SpendTally::default();
        for counted in 0..entries.len() {
            assert_eq!(tally.entries(), counted);
            tally.add(&entries[counted..=counted], &FreeModels::default());
        }
        assert_eq!(*tally.spend(), whole);
        assert_eq!(whole.requests.calls, 1);
    }

    /// A call recorded at $0 although it used tokens (a model ctxkit has no price for), or
    /// without a cost, is of unknown price; a priced call and an empty one are not.
    #[test]
    fn a_call_at_zero_dollars_with_tokens_is_of_unknown_price() {
        let usage = |text: &str| serde_json::from_str::<Usage>(text).unwrap();
        let mut part = SpendPart::default();
        part.add(
            &usage(r#"{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#),
            (None, None),
            &FreeModels::default(),
        );
        part.add(
            &usage(r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15}"#),
            (None, None),
            &FreeModels::default(),
        );
        assert_eq!(part.unpriced_calls, 2);
        part.add(
            &usage(r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.25}}"#),
            (None, None),
            &FreeModels::default(),
        );
        part.add(
            &usage(r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#),
            (None, None),
            &FreeModels::default(),
        );
        assert_eq!((part.calls, part.unpriced_calls), (4, 2));
    }

    /// QA: a model given `cost` of all zeros (a local or free model) showed "price unknown"; its
    /// calls are free. A model not declared free, at $0 for its tokens, stays of unknown price.
    #[test]
    fn a_call_of_a_model_declared_free_is_free() {
        let usage = |text: &str| serde_json::from_str::<Usage>(text).unwrap();
        let zero = r#"{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
        let free = FreeModels::new([("ollama".to_owned(), "qwen3".to_owned())]);
        let mut part = SpendPart::default();
        part.add(&usage(zero), (Some("ollama"), Some("qwen3")), &free);
        assert_eq!((part.calls, part.unpriced_calls), (1, 0));
        part.add(&usage(zero), (Some("ollama"), Some("other")), &free);
        part.add(&usage(zero), (None, None), &free);
        assert_eq!((part.calls, part.unpriced_calls), (3, 2));
        // Without a cost recorded, even a free model's call is of unknown price.
        part.add(
            &usage(r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15}"#),
            (Some("ollama"), Some("qwen3")),
            &free,
        );
        assert_eq!(part.unpriced_calls, 3);
    }

    fn spend_of(lines: &[&str], free: &FreeModels) -> SessionSpend {
        let file = tempfile::NamedTempFile::new().unwrap();
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#;
        let text: Vec<&str> = std::iter::once(header)
            .chain(lines.iter().copied())
            .collect();
        std::fs::write(file.path(), text.join("\n") + "\n").unwrap();
        let session = Session::open(file.path()).unwrap();
        session_spend(session.entries(), free)
    }

    /// QA: a compaction or branch summary a free model wrote counted as "of unknown price": the
    /// summary call was attributed to no model. It is the model `details.summarizer` names (or the
    /// usage's own `provider`/`model`), so the `FreeModels` rule applies to it as to a reply.
    #[test]
    fn a_summary_is_attributed_to_the_model_that_wrote_it() {
        let zero = r#"{"input":900,"output":90,"cacheRead":0,"cacheWrite":0,"totalTokens":990,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#;
        let compaction = format!(
            r#"{{"type":"compaction","id":"c","parentId":null,"timestamp":"2025-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"c","tokensBefore":10,"details":{{"summarizer":"myco/m","usage":[{zero}]}}}}"#
        );
        let branch = format!(
            r#"{{"type":"branch_summary","id":"b","parentId":"c","timestamp":"2025-01-01T00:00:04Z","fromId":"c","summary":"t","details":{{"summarizer":"myco/m (on-demand)","usage":[{zero}]}}}}"#
        );
        let free = FreeModels::new([("myco".to_owned(), "m".to_owned())]);
        let spend = spend_of(&[&compaction, &branch], &free);
        assert_eq!((spend.summaries.calls, spend.unpriced_calls()), (2, 0));
        // Not declared free, the same calls are of unknown price.
        let spend = spend_of(&[&compaction, &branch], &FreeModels::NONE);
        assert_eq!((spend.summaries.calls, spend.unpriced_calls()), (2, 2));
        // A usage naming its own model is that model's.
        let named = zero.replace(
            r#""totalTokens""#,
            r#""provider":"other","model":"x","totalTokens""#,
        );
        let compaction = format!(
            r#"{{"type":"compaction","id":"c","parentId":null,"timestamp":"2025-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"c","tokensBefore":10,"details":{{"summarizer":"myco/m","usage":[{named}]}}}}"#
        );
        let other = FreeModels::new([("other".to_owned(), "x".to_owned())]);
        assert_eq!(spend_of(&[&compaction], &other).unpriced_calls(), 0);
        assert_eq!(spend_of(&[&compaction], &free).unpriced_calls(), 1);
    }

    /// The offline summarizer calls no model: its summaries are counted apart, at no cost, and
    /// never as calls of unknown price.
    #[test]
    fn an_offline_summary_is_no_call_and_costs_nothing() {
        let compaction = r#"{"type":"compaction","id":"c","parentId":null,"timestamp":"2025-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"c","tokensBefore":10,"details":{"summarizer":"offline","usage":[null]}}"#;
        let branch = r#"{"type":"branch_summary","id":"b","parentId":"c","timestamp":"2025-01-01T00:00:04Z","fromId":"c","summary":"t","details":{"summarizer":"offline","usage":[null]}}"#;
        let spend = spend_of(&[compaction, branch], &FreeModels::NONE);
        assert_eq!(spend.offline_summaries, 2);
        assert_eq!((spend.total_calls(), spend.unpriced_calls()), (0, 0));
    }

    /// Pi 1.6 records a summary call's usage on the entry itself (`usage`, no model): counted.
    #[test]
    fn a_pi_summary_usage_on_the_entry_is_counted() {
        let compaction = r#"{"type":"compaction","id":"c","parentId":null,"timestamp":"2025-01-01T00:00:03Z","summary":"s","firstKeptEntryId":"c","tokensBefore":10,"details":{"readFiles":[],"modifiedFiles":[]},"usage":{"input":50,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":55,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.05}}}"#;
        let spend = spend_of(&[compaction], &FreeModels::NONE);
        assert_eq!(spend.summaries.calls, 1);
        assert!((spend.summaries.dollars - 0.05).abs() < 1e-9);
    }

    /// Pi 1.6 records a model summary's call usage as the entry's own `usage`; ctxkit wrote it only
    /// in `details.usage`. Both now, for compactions and branch summaries a model wrote (the
    /// requests summed), none for an offline summary or a hook's, and counted once.
    #[test]
    fn a_model_summary_records_its_usage_as_the_entry_usage_counted_once() {
        use crate::{NewCompaction, SummarySource};
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::create("/p", dir.path());
        let usage = |input: u64, cost: f64| {
            serde_json::json!({"input": input, "output": 10, "cacheRead": 0, "cacheWrite": 0,
                "totalTokens": input + 10, "cost": {"input": cost, "output": 0.0, "cacheRead": 0.0,
                "cacheWrite": 0.0, "total": cost}})
        };
        let reply = session
            .append_message(AgentMessage::User(ctxkit_protocol::UserMessage {
                content: ctxkit_protocol::MessageContent::Text("hi".into()),
                timestamp: None,
                extra: JsonObject::new(),
            }))
            .unwrap();
        let compaction = |summarizer: &str, source| NewCompaction {
            summary: "s".into(),
            first_kept_entry_id: reply.clone(),
            tokens_before: 10,
            details: Some(serde_json::json!({"summarizer": summarizer,
                "usage": [usage(100, 0.5), usage(20, 0.25)]})),
            source,
        };
        let model = session
            .append_compaction(compaction("myco/m", SummarySource::Ctxkit))
            .unwrap();
        let offline = session
            .append_compaction(NewCompaction {
                details: Some(serde_json::json!({"summarizer": "offline", "usage": [null]})),
                ..compaction("offline", SummarySource::Ctxkit)
            })
            .unwrap();
        let hook = session
            .append_compaction(compaction("myco/m", SummarySource::Hook))
            .unwrap();
        let branch = session
            .branch_with_summary(
                Some(&reply),
                "b",
                Some(serde_json::json!({"summarizer": "myco/m", "usage": [usage(40, 0.125)]})),
                SummarySource::Ctxkit,
            )
            .unwrap();
        let own_usage = |id: &str| {
            let entry = session.entry(id).unwrap().parse().unwrap();
            if let EntryKind::Compaction(compaction) = &entry.kind {
                return compaction.extra.get("usage").cloned();
            }
            if let EntryKind::BranchSummary(summary) = &entry.kind {
                return summary.extra.get("usage").cloned();
            }
            panic!("{id} is no summary")
        };
        let summed = own_usage(&model).unwrap();
        assert_eq!(
            (&summed["input"], &summed["output"], &summed["totalTokens"]),
            (
                &serde_json::json!(120),
                &serde_json::json!(20),
                &serde_json::json!(140)
            )
        );
        assert_eq!(summed["cost"]["total"], serde_json::json!(0.75));
        assert_eq!(own_usage(&offline), None);
        assert_eq!(own_usage(&hook), None);
        assert_eq!(own_usage(&branch).unwrap()["input"], serde_json::json!(40));
        // `details.usage` counts; the entry's own does not count again.
        let spend = session_spend(session.entries(), &FreeModels::NONE);
        assert_eq!(spend.summaries.calls, 5, "{spend:?}");
        assert!(
            (spend.summaries.dollars - (0.75 + 0.75 + 0.125)).abs() < 1e-9,
            "{spend:?}"
        );
        assert_eq!(spend.offline_summaries, 1);
    }
}

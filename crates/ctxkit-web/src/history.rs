//! The session over time: each compaction with what it replaced and kept, the context size per
//! request on the current path (provider usage and the estimate) with its markers, and usage and
//! cost per turn and in total.

use std::collections::HashMap;

use ctxkit_compaction::UNDO_COMPACTION_TYPE;
use ctxkit_protocol::AgentMessage;
use ctxkit_session::{
    ContextMessage, EntryIndex, FreeModels, Session, build_context, entry_messages,
};
use ctxkit_tokens::estimate_tokens;
use serde_json::{Value, json};

use crate::blocks::{Renderer, usage_of};
use crate::error::WebError;
use crate::parsed::readable_messages;

/// Compactions a session names in `ctxkit.undo-compaction` entries: compaction id → the marker's
/// entry index.
fn undone_compactions(session: &Session) -> HashMap<String, EntryIndex> {
    let mut undone = HashMap::new();
    for (position, entry) in session.entries().iter().enumerate() {
        if entry.type_name() != "custom" {
            continue;
        }
        let Ok(raw) = entry.raw() else { continue };
        let Ok(value) = ctxkit_protocol::from_str_repaired::<Value>(&raw) else {
            continue;
        };
        if value.get("customType").and_then(Value::as_str) == Some(UNDO_COMPACTION_TYPE)
            && let Some(id) = value
                .get("data")
                .and_then(|data| data.get("compactionId"))
                .and_then(Value::as_str)
        {
            undone.insert(id.to_owned(), position);
        }
    }
    undone
}

/// Entries with no child: the tips of the tree's branches.
pub(crate) fn tips(session: &Session) -> Vec<EntryIndex> {
    let index = session.index();
    let count = session.entries().len();
    let mut has_child = vec![false; count];
    for position in 0..count {
        if let Some(parent) = index.parent(position) {
            has_child[parent] = true;
        }
    }
    (0..count)
        .filter(|&position| !has_child[position])
        .collect()
}

/// A compaction entry's JSON (few per session: read from its line).
fn compaction_value(session: &Session, position: EntryIndex) -> Value {
    session
        .index()
        .get(position)
        .and_then(|entry| entry.raw().ok())
        .and_then(|raw| ctxkit_protocol::from_str_repaired::<Value>(&raw).ok())
        .unwrap_or(Value::Null)
}

/// Where the entries a compaction on `path` at `on_path` covered start and end, and where its kept
/// range starts: the rule of `ctxkit_compaction::list_compactions` (covered: from the previous
/// compaction's kept entry, or the entry after it, up to this one's kept entry), computed from the
/// compaction entries alone so a large session's messages are not parsed once per compaction.
fn covered_range(
    session: &Session,
    path: &[EntryIndex],
    on_path: usize,
) -> (usize, usize, Option<usize>) {
    let index = session.index();
    let kept_position = |position: usize| {
        let first_kept = compaction_value(session, path[position])
            .get("firstKeptEntryId")
            .and_then(Value::as_str)
            .map(str::to_owned);
        first_kept.and_then(|id| {
            path[..position]
                .iter()
                .position(|&entry| index.get(entry).is_some_and(|stored| stored.id() == id))
        })
    };
    let mut boundary = 0;
    for (position, &entry) in path.iter().enumerate().take(on_path) {
        if index
            .get(entry)
            .is_some_and(|stored| stored.type_name() == "compaction")
        {
            boundary = kept_position(position).unwrap_or(position + 1);
        }
    }
    let kept = kept_position(on_path);
    let covered_end = kept.unwrap_or(on_path);
    (boundary.min(covered_end), covered_end, kept)
}

/// The latest continuation below `position`: its last child, that child's last child, and so on.
fn continuation(children: &[Vec<EntryIndex>], position: EntryIndex) -> Vec<EntryIndex> {
    let mut chain = Vec::new();
    let mut current = position;
    while let Some(&next) = children.get(current).and_then(|list| list.last()) {
        chain.push(next);
        current = next;
    }
    chain
}

/// Estimated context tokens right after a compaction (its summary and the kept messages), as
/// `ctxkit compactions` reports it.
fn tokens_after(session: &Session, position: EntryIndex) -> Result<u64, WebError> {
    let context = build_context(session.index(), Some(position));
    readable_estimate(session, &context.messages)
}

/// The estimated tokens of the messages that can be read (a message of the wrong type is left
/// out, as from the page's contexts).
fn readable_estimate(session: &Session, messages: &[ContextMessage]) -> Result<u64, WebError> {
    Ok(readable_messages(session, messages)?
        .iter()
        .flatten()
        .map(estimate_tokens)
        .sum())
}

/// Every compaction of the tree, with what it covered and kept and what the next turns carried.
pub(crate) fn compactions(
    session: &Session,
    renderer: &Renderer<'_>,
) -> Result<Vec<Value>, WebError> {
    let index = session.index();
    let undone = undone_compactions(session);
    let count = session.entries().len();
    let mut children: Vec<Vec<EntryIndex>> = vec![Vec::new(); count];
    for position in 0..count {
        if let Some(parent) = index.parent(position) {
            children[parent].push(position);
        }
    }
    let mut shown = Vec::new();
    for position in 0..count {
        let Some(entry) = index.get(position) else {
            continue;
        };
        if entry.type_name() != "compaction" {
            continue;
        }
        let path = index.path_to(position);
        let on_path = path.len().saturating_sub(1);
        let (covered_start, covered_end, kept_from) = covered_range(session, &path, on_path);
        let value = compaction_value(session, position);
        let details = value.get("details").cloned().unwrap_or(Value::Null);
        let summary = value.get("summary").and_then(Value::as_str).unwrap_or("");
        let summarizer = details.get("summarizer").and_then(Value::as_str);
        shown.push(json!({
            "e": position,
            "tokensBefore": value.get("tokensBefore").and_then(Value::as_u64).unwrap_or(0),
            "tokensAfter": tokens_after(session, position)?,
            "summarizer": summarizer.map(|name| renderer.short(name)),
            "fromHook": value.get("fromHook").and_then(Value::as_bool) == Some(true),
            "summary": renderer.redactor.clip(summary, renderer.clip_chars.max(20_000)).0,
            "covered": path[covered_start..covered_end].to_vec(),
            "kept": kept_from.map(|from| path[from..on_path].to_vec()).unwrap_or_default(),
            "readFiles": file_list(&details, "readFiles", renderer),
            "modifiedFiles": file_list(&details, "modifiedFiles", renderer),
            "undoneBy": undone.get(entry.id()),
            "next": next_requests(session, &continuation(&children, position)),
        }));
    }
    Ok(shown)
}

fn file_list(details: &Value, field: &str, renderer: &Renderer<'_>) -> Vec<String> {
    details
        .get(field)
        .and_then(Value::as_array)
        .map(|files| {
            files
                .iter()
                .filter_map(Value::as_str)
                .take(500)
                .map(|file| renderer.short(file))
                .collect()
        })
        .unwrap_or_default()
}

/// The requests after a compaction, up to the next one: how many (replies that report usage: a
/// Codex response imported as several replies reports it on its last, QA 2026-12-07), and the
/// context the provider reported for the first (what the next turn really carried).
fn next_requests(session: &Session, after: &[EntryIndex]) -> Value {
    let mut requests = 0;
    let mut first_usage = None;
    for &position in after {
        let Some(entry) = session.index().get(position) else {
            continue;
        };
        if entry.type_name() == "compaction" {
            break;
        }
        if entry.role() != Some("assistant") {
            continue;
        }
        let Some(usage) = assistant_usage(session, position) else {
            continue;
        };
        requests += 1;
        if first_usage.is_none() {
            first_usage = Some(usage[4].clone());
        }
    }
    json!({"requests": requests, "firstUsage": first_usage})
}

/// The short usage of an assistant entry.
fn assistant_usage(session: &Session, position: EntryIndex) -> Option<Value> {
    let entry = session.index().get(position)?;
    let message = entry.message_json().ok()??;
    let value: Value = serde_json::from_str(&message).ok()?;
    // Only the tokens are read: no price needs knowing.
    usage_of(&value, &FreeModels::NONE)
}

/// The estimate of the messages an entry adds to a context.
fn entry_estimate(session: &Session, position: EntryIndex) -> u64 {
    let Some(entry) = session.index().get(position) else {
        return 0;
    };
    entry_messages(position, entry)
        .iter()
        .filter_map(|message| session.message(message).ok())
        .map(|message| estimate_tokens(&message))
        .sum()
}

/// One request on the chart: its entry, the estimate of the context it was built from, and the
/// provider's reported total.
struct Point {
    entry: EntryIndex,
    estimate: u64,
    usage: Option<Value>,
}

/// A marker on the chart: its entry, its kind, and the point it stands before.
struct Marker {
    entry: EntryIndex,
    kind: &'static str,
    at: usize,
}

/// Usage summed over requests: `[input, output, cache read, cache write, total, cost]` as the
/// page shows it (the cost of the requests that record one), how many requests, and how many of
/// them record no cost (the page says "unknown" rather than `$0.0000` when none does).
#[derive(Debug)]
pub(crate) struct Totals {
    usage: Value,
    requests: u64,
    cost_unknown: u64,
}

impl Default for Totals {
    fn default() -> Self {
        Self {
            usage: json!([0, 0, 0, 0, 0, 0.0]),
            requests: 0,
            cost_unknown: 0,
        }
    }
}

impl Totals {
    fn add_usage(&mut self, usage: &Value) {
        if let Some(sum) = self.usage.as_array_mut() {
            for (field, value) in sum.iter_mut().zip(usage.as_array().into_iter().flatten()) {
                *field = match (field.as_u64(), value.as_u64()) {
                    (Some(left), Some(right)) => json!(left + right),
                    _ => json!(field.as_f64().unwrap_or(0.0) + value.as_f64().unwrap_or(0.0)),
                };
            }
        }
        self.requests += 1;
        if usage.get(5).is_none_or(Value::is_null) {
            self.cost_unknown += 1;
        }
    }

    /// The totals of a session's spend: every model call it records, as `ctxkit info` sums them
    /// ([`ctxkit_session::session_spend`]: each paid call once) — its requests, the calls its
    /// tools made, its summaries, cache refreshes and other recorded usage (QA 2026-12-07: a
    /// compaction's $0.33 was left out of the page's total). Calls that used nothing are not
    /// counted, as an entry without usage adds none.
    pub(crate) fn of_spend(spend: &ctxkit_session::SessionSpend) -> Self {
        let parts = [
            &spend.requests,
            &spend.tools,
            &spend.summaries,
            &spend.cache_warming,
            &spend.other,
        ];
        let sum = |field: fn(&ctxkit_session::SpendPart) -> u64| -> u64 {
            parts.iter().map(|part| field(part)).sum()
        };
        let input = sum(|part| part.input_tokens);
        let output = sum(|part| part.output_tokens);
        let cache_read = sum(|part| part.cache_read_tokens);
        let cache_write = sum(|part| part.cache_write_tokens);
        let total = input + output + cache_read + cache_write;
        let dollars: f64 = parts.iter().map(|part| part.dollars).sum();
        Self {
            usage: json!([input, output, cache_read, cache_write, total, dollars]),
            requests: sum(ctxkit_session::SpendPart::counted_calls),
            cost_unknown: sum(|part| part.unpriced_calls),
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        json!({"usage": self.usage, "requests": self.requests, "costUnknown": self.cost_unknown})
    }
}

/// The chart's data: one point per request, the markers, and the usage per turn.
pub(crate) struct Timeline {
    points: Vec<Point>,
    markers: Vec<Marker>,
    /// Each user message's entry with the usage of its turn's requests.
    turns: Vec<(EntryIndex, Totals)>,
}

impl Timeline {
    /// Writes `{"points": […], "markers": […], "turns": […]}`, an item at a time.
    pub(crate) fn write(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        let mut array = |name: &str, first: bool, items: &mut dyn Iterator<Item = Value>| {
            let separator = if first { "{" } else { "," };
            write!(out, "{separator}\"{name}\":[")?;
            for (index, item) in items.enumerate() {
                if index > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, &item)?;
            }
            out.write_all(b"]")
        };
        array(
            "points",
            true,
            &mut self.points.iter().map(
                |point| json!({"e": point.entry, "est": point.estimate, "usage": point.usage}),
            ),
        )?;
        array(
            "markers",
            false,
            &mut self
                .markers
                .iter()
                .map(|marker| json!({"e": marker.entry, "kind": marker.kind, "at": marker.at})),
        )?;
        array(
            "turns",
            false,
            &mut self.turns.iter().map(|(entry, totals)| {
                let mut turn = totals.to_value();
                turn["e"] = json!(entry);
                turn
            }),
        )?;
        out.write_all(b"}")
    }
}

/// The context size per request on the path to `leaf` (the estimate of the context the request
/// was built from, chars/4, and the provider's reported total), markers for compactions,
/// overflows, branch summaries, cache reads and model changes, and usage per turn and in total.
pub(crate) fn timeline(
    session: &Session,
    leaf: Option<EntryIndex>,
    free: &FreeModels,
) -> Result<Timeline, WebError> {
    let index = session.index();
    let path = leaf.map(|leaf| index.path_to(leaf)).unwrap_or_default();
    let mut timeline = Timeline {
        points: Vec::new(),
        markers: Vec::new(),
        turns: Vec::new(),
    };
    let mut estimate: u64 = 0;
    let mut last_model: Option<String> = None;
    for &position in &path {
        let Some(entry) = index.get(position) else {
            continue;
        };
        let marker = |kind| Marker {
            entry: position,
            kind,
            at: timeline.points.len(),
        };
        match entry.type_name() {
            "compaction" => {
                let context = build_context(index, Some(position));
                estimate = readable_estimate(session, &context.messages)?;
                let compaction = marker("compaction");
                timeline.markers.push(compaction);
                continue;
            }
            "branch_summary" => {
                let summary = marker("branchSummary");
                timeline.markers.push(summary);
            }
            "model_change" => {
                let change = marker("modelChange");
                timeline.markers.push(change);
                // The next reply of that model is the same change, not another one.
                let raw = entry.raw().ok();
                last_model = raw
                    .and_then(|raw| ctxkit_protocol::from_str_repaired::<Value>(&raw).ok())
                    .and_then(|value| {
                        value
                            .get("modelId")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    });
            }
            _ => {}
        }
        if entry.role() == Some("user") {
            timeline.turns.push((position, Totals::default()));
        }
        if entry.role() == Some("assistant") {
            let stored = ctxkit_session::ContextMessage::new(
                position,
                ctxkit_session::ContextMessageKind::Stored,
            );
            // A reply of the wrong type is no point on the chart (the page lists it as damage).
            if let Some(message) = readable_messages(session, &[stored])?.pop().flatten() {
                request_point(
                    &message,
                    position,
                    estimate,
                    &mut timeline,
                    &mut last_model,
                    free,
                );
            }
        }
        estimate += entry_estimate(session, position);
    }
    Ok(timeline)
}

/// One request (an assistant message): its point, its markers, and its usage added to its turn.
fn request_point(
    message: &AgentMessage,
    position: EntryIndex,
    estimate: u64,
    timeline: &mut Timeline,
    last_model: &mut Option<String>,
    free: &FreeModels,
) {
    let value = serde_json::to_value(message).unwrap_or(Value::Null);
    let usage = usage_of(&value, free);
    let at = timeline.points.len();
    let marker = |kind| Marker {
        entry: position,
        kind,
        at,
    };
    if let Some(assistant) = message.as_assistant() {
        if ctxkit_overflow::is_context_overflow(assistant, None) {
            timeline.markers.push(marker("overflow"));
        }
        let model = value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if model.is_some() && last_model.is_some() && model != *last_model {
            timeline.markers.push(marker("modelChange"));
        }
        if model.is_some() {
            *last_model = model;
        }
    }
    if let Some(usage) = &usage {
        if usage[2].as_u64().unwrap_or(0) > 0 {
            timeline.markers.push(marker("cacheRead"));
        }
        if let Some((_, turn)) = timeline.turns.last_mut() {
            turn.add_usage(usage);
        }
    }
    timeline.points.push(Point {
        entry: position,
        estimate,
        usage: usage.as_ref().map(|usage| usage[4].clone()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pi cuts a string inside an emoji and writes a lone surrogate escape: the page showed that
    /// message empty (its line did not parse as plain JSON); it reads the half as U+FFFD, as the
    /// session does.
    #[test]
    fn a_message_holding_a_lone_surrogate_is_shown() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cut.jsonl");
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"cut \ud83d here","timestamp":1}}"#,
        ];
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let session = ctxkit_session::Session::open(&file).unwrap();
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let options = crate::PageOptions::new("cut", redactor);
        let data = crate::build_page_data(&session, &options).unwrap();
        assert!(data.to_string().contains("cut \u{fffd} here"), "{data}");
    }

    /// QA (2026-12-07): a Codex response imported as several replies (usage on the last) counted
    /// as several requests after a compaction ("next: 188 requests" for 75 calls).
    #[test]
    fn the_requests_after_a_compaction_are_the_replies_that_report_usage() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("split.jsonl");
        let reply = |id: &str, parent: &str, input: u64| {
            json!({"type": "message", "id": id, "parentId": parent,
                "timestamp": "2025-01-01T00:00:03.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "part"}],
                    "provider": "openai", "model": "gpt-5", "api": "openai-responses",
                    "usage": {"input": input, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    "stopReason": "stop", "timestamp": 3}})
            .to_string()
        };
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned(),
            r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_owned(),
            r#"{"type":"compaction","id":"c","parentId":"u","timestamp":"2025-01-01T00:00:02.000Z","summary":"s","firstKeptEntryId":"u","tokensBefore":100}"#.to_owned(),
            reply("r1", "c", 0),
            reply("r2", "r1", 0),
            reply("r3", "r2", 500),
        ];
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let session = ctxkit_session::Session::open(&file).unwrap();
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let options = crate::PageOptions::new("split", redactor);
        let data = crate::build_page_data(&session, &options).unwrap();
        let next = &data["compactions"][0]["next"];
        assert_eq!(next["requests"], json!(1), "{next}");
        assert_eq!(next["firstUsage"], json!(500), "{next}");
    }

    /// An imported Claude Code reply records tokens but no price: the totals say how many
    /// requests have no cost, so the page shows "unknown" rather than `$0.0000`. A reply written
    /// twice (a rewritten transcript, an `undo-compact` copy) is one paid call, as `ctxkit info`
    /// counts it (QA 2026-12-07: the page said $6.26 where `info` said $4.99).
    #[test]
    fn totals_count_each_paid_call_once_and_unpriced_ones_as_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("paid.jsonl");
        let reply = |id: &str, parent: &str, at: u64, usage: Value| {
            json!({"type": "message", "id": id, "parentId": parent,
                "timestamp": "2025-01-01T00:00:01.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                    "provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages",
                    "usage": usage, "stopReason": "stop", "timestamp": at}})
            .to_string()
        };
        let unpriced = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0});
        let priced = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
            "cost": {"input": 0.2, "output": 0.05, "cacheRead": 0, "cacheWrite": 0, "total": 0.25}});
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned(),
            r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#.to_owned(),
            reply("a", "u", 2, unpriced),
            reply("b", "a", 3, priced.clone()),
            reply("c", "a", 3, priced),
            // A model summary's call counts too, as `ctxkit info` counts it (QA 2026-12-07).
            json!({"type": "compaction", "id": "k", "parentId": "b", "timestamp": "2025-01-01T00:00:04.000Z",
                "summary": "s", "firstKeptEntryId": "b", "tokensBefore": 30,
                "details": {"usage": [{"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0,
                    "totalTokens": 120, "cost": {"total": 0.5}}]}})
            .to_string(),
        ];
        std::fs::write(&file, lines.join("\n") + "\n").unwrap();
        let session = ctxkit_session::Session::open(&file).unwrap();
        let redactor = crate::Redactor::new(Vec::new(), &[]).unwrap();
        let options = crate::PageOptions::new("paid", redactor);
        let data = crate::build_page_data(&session, &options).unwrap();
        let totals = &data["totals"];
        assert_eq!(totals["requests"], json!(3), "{totals}");
        assert_eq!(totals["costUnknown"], json!(1), "{totals}");
        assert_eq!(totals["usage"][5], json!(0.75), "{totals}");
        assert_eq!(totals["usage"][0], json!(120), "{totals}");
        let spend = ctxkit_session::session_spend(session.entries(), &FreeModels::NONE);
        assert!((spend.total_dollars() - 0.75).abs() < 1e-9, "{spend:?}");
        let imported = json!({"usage": {"input": 10, "output": 5}});
        assert_eq!(
            usage_of(&imported, &FreeModels::NONE).unwrap()[5],
            Value::Null
        );
    }
}

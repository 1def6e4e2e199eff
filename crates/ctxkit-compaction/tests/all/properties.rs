//! Properties of cut points and compaction plans over generated paths: the kept segment never
//! starts at a tool result, the cut respects the keep budget (against a separately written model of
//! the reference's rule), and a plan loses no message: each one is summarized or kept.

use std::collections::HashSet;

use ctxkit_compaction::{
    CompactionSettings, CutEntry, find_cut_point, is_valid_cut_point, prepare_compaction,
};
use ctxkit_protocol::MessageContent;
use ctxkit_session::{NewCompaction, Session, StoredEntry, SummarySource};
use proptest::prelude::*;
use serde_json::json;

use crate::fixtures::message;

/// Entries a path can hold.
#[derive(Debug, Clone, Copy)]
enum Kind {
    User,
    Assistant,
    ToolResult,
    BashExecution,
    ModelChange,
    ThinkingChange,
    Label,
    CustomMessage,
    BranchSummary,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        4 => Just(Kind::User),
        5 => Just(Kind::Assistant),
        5 => Just(Kind::ToolResult),
        1 => Just(Kind::BashExecution),
        1 => Just(Kind::ModelChange),
        1 => Just(Kind::ThinkingChange),
        1 => Just(Kind::Label),
        1 => Just(Kind::CustomMessage),
        1 => Just(Kind::BranchSummary),
    ]
}

fn append(session: &mut Session, kind: Kind, size: usize) {
    let text = "w ".repeat(size);
    match kind {
        Kind::User => {
            session
                .append_message(message(json!({"role": "user", "content": text})))
                .unwrap();
        }
        Kind::Assistant => {
            session
                .append_message(message(json!({"role": "assistant", "content": [
                    {"type": "text", "text": text},
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.rs"}}],
                    "stopReason": "toolUse"})))
                .unwrap();
        }
        Kind::ToolResult => {
            session
                .append_message(message(json!({"role": "toolResult", "toolCallId": "c1",
                    "toolName": "read", "content": [{"type": "text", "text": text}]})))
                .unwrap();
        }
        Kind::BashExecution => {
            session
                .append_message(message(json!({"role": "bashExecution", "command": "ls",
                    "output": text, "exitCode": 0})))
                .unwrap();
        }
        Kind::ModelChange => {
            session.append_model_change("p", "m").unwrap();
        }
        Kind::ThinkingChange => {
            session.append_thinking_level_change("high").unwrap();
        }
        Kind::Label => {
            let target = session.leaf_id().map(str::to_owned);
            if let Some(target) = target {
                session.append_label_change(&target, Some("l")).unwrap();
            }
        }
        Kind::CustomMessage => {
            session
                .append_custom_message_entry("ext", MessageContent::Text(text), true, None)
                .unwrap();
        }
        Kind::BranchSummary => {
            let leaf = session.leaf_id().map(str::to_owned);
            session
                .branch_with_summary(leaf.as_deref(), &text, None, SummarySource::Ctxkit)
                .unwrap();
        }
    }
}

/// A session built from `(kind, size)` steps, compacted (through the planner, as the runner would)
/// where `compact_at` says.
/// Sessions start with a user message (an orphan tool result at the very start has no valid cut
/// point at all; then nothing is cut and the plan keeps everything from it).
fn build(steps: &[(Kind, usize)], compact_at: &[usize], keep: u64) -> Session {
    let mut session = Session::in_memory("/p");
    append(&mut session, Kind::User, 3);
    for (position, &(kind, size)) in steps.iter().enumerate() {
        append(&mut session, kind, size);
        if compact_at.contains(&position)
            && let Ok(plan) = prepare_compaction(&session, None, settings(keep)).unwrap()
        {
            session
                .append_compaction(NewCompaction {
                    summary: "summary".into(),
                    first_kept_entry_id: plan.first_kept_entry_id,
                    tokens_before: plan.tokens_before,
                    details: None,
                    source: SummarySource::Ctxkit,
                })
                .unwrap();
        }
    }
    session
}

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens: keep,
    }
}

fn is_message(entry: &StoredEntry) -> bool {
    entry.type_name() == "message"
}

fn is_tool_result(entry: &StoredEntry) -> bool {
    is_message(entry) && entry.role() == Some("toolResult")
}

/// What the cut sees of a raw path entry (no edits, so nothing is omitted).
fn cut_entry(entry: &StoredEntry, tokens: u64) -> CutEntry<'_> {
    let role = match entry.type_name() {
        "message" => entry.role().unwrap_or(""),
        "custom_message" => "custom",
        "branch_summary" => "branchSummary",
        _ => "",
    };
    let visible = !role.is_empty();
    CutEntry {
        id: entry.id(),
        tokens: if visible { tokens } else { 0 },
        is_compaction: entry.type_name() == "compaction",
        is_cut_point: visible && role != "toolResult",
        starts_turn: matches!(role, "user" | "bashExecution" | "custom" | "branchSummary"),
        visible,
        intrinsically_visible: visible,
        is_assistant_message: role == "assistant",
        replaces: None,
    }
}

/// Pi 0.87.1's rule, written forwards: the budget is reached at the latest visible entry `i` whose
/// suffix of tokens reaches `keep`; the cut is the first valid cut point at or after `i` (the last
/// one when none follows `i`, the first one overall when the budget is never reached), then moved
/// back over the entries that project nothing just before it. ctxkit's one divergence: the
/// session's first message of `keep` tokens or more, with nothing before it, is summarized (the cut moves to the next
/// turn's start), where Pi would keep it and compact nothing.
fn model_cut(entries: &[CutEntry<'_>], start: usize, end: usize, keep: u64) -> usize {
    let valid: Vec<usize> = (start..end)
        .filter(|&index| is_valid_cut_point(&entries[index]))
        .collect();
    let (Some(&first_valid), Some(&last_valid)) = (valid.first(), valid.last()) else {
        return start;
    };
    let suffix = |from: usize| -> u64 { (from..end).map(|index| entries[index].tokens).sum() };
    let reached = (start..end)
        .rev()
        .filter(|&index| entries[index].tokens > 0)
        .find(|&index| suffix(index) >= keep);
    let mut cut = match reached {
        Some(reached) => valid
            .iter()
            .copied()
            .find(|&point| point >= reached)
            .unwrap_or(last_valid),
        None => first_valid,
    };
    let nothing_before = (0..cut).all(|index| entries[index].tokens == 0);
    let oversized = cut < end && entries[cut].tokens >= keep;
    if reached.is_some()
        && nothing_before
        && oversized
        && let Some(&next) = valid
            .iter()
            .find(|&&point| point > cut && entries[point].starts_turn)
    {
        cut = next;
    }
    while cut > start {
        let previous = &entries[cut - 1];
        if previous.is_compaction || previous.visible {
            break;
        }
        cut -= 1;
    }
    cut
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn cut_points_never_keep_from_a_tool_result_and_respect_the_budget(
        steps in prop::collection::vec((kind(), 0..50usize), 1..40),
        tokens in prop::collection::vec(0..400u64, 40),
        keep in 0..3000u64,
        start_fraction in 0..4usize,
    ) {
        let session = build(&steps, &[], keep);
        let path = session.branch_path(None);
        let entries: Vec<CutEntry<'_>> = path
            .iter()
            .zip(&tokens)
            .map(|(&entry, &tokens)| cut_entry(entry, tokens))
            .collect();
        let start = path.len() * start_fraction / 4;
        let cut = find_cut_point(&entries, start, entries.len(), keep);
        prop_assert!(cut.first_kept >= start && cut.first_kept <= entries.len().max(start));
        prop_assert_eq!(cut.first_kept, model_cut(&entries, start, entries.len(), keep));
        let valid_exists = (start..entries.len()).any(|index| is_valid_cut_point(&entries[index]));
        if valid_exists {
            let kept = &path[cut.first_kept..];
            prop_assert!(!is_tool_result(kept[0]), "kept segment starts at a tool result");
            let first_visible = entries[cut.first_kept..].iter().find(|cut| cut.visible);
            if let Some(first) = first_visible {
                prop_assert!(is_valid_cut_point(first));
            }
        }
        if let Some(turn_start) = cut.turn_start {
            prop_assert!(turn_start >= start && turn_start <= cut.first_kept);
        }
    }

    #[test]
    fn plans_keep_from_a_valid_entry_and_lose_no_message(
        steps in prop::collection::vec((kind(), 0..200usize), 1..40),
        compact_at in prop::collection::vec(0..40usize, 0..3),
        keep in 1..2000u64,
    ) {
        let mut session = build(&steps, &compact_at, keep);
        let Ok(plan) = prepare_compaction(&session, None, settings(keep)).unwrap() else {
            return Ok(());
        };
        let first_kept = session.entry(&plan.first_kept_entry_id).unwrap();
        prop_assert!(!is_tool_result(first_kept), "the plan keeps from a tool result");
        prop_assert!(
            session.branch_path(None).iter().any(|entry| entry.id() == first_kept.id()),
            "the first kept entry is on the path"
        );

        // Every message the model sees now is summarized, in the split turn's prefix, or kept.
        let before: Vec<usize> = session
            .build_context()
            .messages
            .iter()
            .filter(|message| {
                session.index().get(message.entry).is_some_and(|entry| entry.type_name() != "compaction")
            })
            .map(|message| message.entry)
            .collect();
        let summarized: HashSet<usize> = plan
            .messages_to_summarize
            .iter()
            .chain(&plan.turn_prefix_messages)
            .map(|message| message.source.entry)
            .collect();
        session
            .append_compaction(NewCompaction {
                summary: "new summary".into(),
                first_kept_entry_id: plan.first_kept_entry_id.clone(),
                tokens_before: plan.tokens_before,
                details: None,
                source: SummarySource::Ctxkit,
            })
            .unwrap();
        let kept: HashSet<usize> = session
            .build_context()
            .messages
            .iter()
            .map(|message| message.entry)
            .collect();
        for entry in before {
            prop_assert!(
                summarized.contains(&entry) || kept.contains(&entry),
                "message entry #{} is neither summarized nor kept", entry
            );
        }
    }
}

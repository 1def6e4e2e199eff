//! History before a compaction stays on the leaf path: a Claude Code boundary whose logical parent
//! is not in the file continues from the record before it (and keeps the segment Claude Code kept),
//! a Codex remote compaction continues its thread. Counted as real-world imports are judged: the
//! share of the file's tool results on the path from the root to the leaf.
//!
//! The fixtures (`tests/fixtures/shapes/claude-boundary-missing-parent.jsonl`,
//! `codex-remote-compaction-mid-thread.jsonl`) were written in the shapes these agents write:
//! streamed replies one block per record, parallel tool calls, an inline sidechain, bookkeeping
//! records between turns, Windows paths, a remote compaction between tool loops.

use std::collections::HashMap;

use ctxkit_import::{ImportedSession, IssueKind, import_file};
use ctxkit_protocol::{AgentMessage, EntryKind, SessionEntry};

use crate::shapes::{imported_context, shape};

/// The entries from the root to the leaf (the last entry).
fn leaf_path(session: &ImportedSession) -> Vec<SessionEntry> {
    let entries = session.entries();
    let by_id: HashMap<&str, &SessionEntry> = entries
        .iter()
        .map(|entry| (entry.id.as_str(), entry))
        .collect();
    let mut path = Vec::new();
    let mut current = entries.last();
    while let Some(entry) = current {
        path.push(entry.clone());
        current = entry
            .parent_id
            .as_deref()
            .and_then(|parent| by_id.get(parent).copied());
    }
    path.reverse();
    path
}

fn is_tool_result(entry: &SessionEntry) -> bool {
    matches!(&entry.kind, EntryKind::Message(message)
        if matches!(message.as_ref(), AgentMessage::ToolResult(_)))
}

/// Tool results on the leaf path, and in the whole file (subagent sidechains excluded: they are
/// their own chain).
fn tool_results_on_path(session: &ImportedSession) -> (usize, usize) {
    let on_path = leaf_path(session)
        .into_iter()
        .filter(is_tool_result)
        .count();
    let total = session
        .entries()
        .iter()
        .filter(|entry| is_tool_result(entry))
        .count();
    (on_path, total)
}

fn roots(session: &ImportedSession) -> usize {
    session
        .entries()
        .iter()
        .filter(|entry| entry.parent_id.is_none())
        .count()
}

#[test]
fn a_claude_code_boundary_whose_parent_is_missing_continues_from_the_record_before_it() {
    let path = shape("claude-boundary-missing-parent.jsonl");
    let session = import_file(&path, None).unwrap();
    let (on_path, total) = tool_results_on_path(&session);
    assert_eq!(total, 28, "24 before the compaction, 4 after");
    assert!(
        on_path * 100 >= total * 95,
        "{on_path} of {total} tool results on the leaf path"
    );
    assert_eq!(on_path, total);
    // The sidechain is its own root; the main conversation is one chain.
    assert_eq!(roots(&session), 2);
    assert!(session.report.issues.iter().any(|issue| matches!(
        &issue.kind,
        IssueKind::BoundaryParentMissing { parent } if parent.starts_with("0f0f0f0f")
    )));
    assert!(
        !session
            .report
            .issues
            .iter()
            .any(|issue| matches!(issue.kind, IssueKind::MissingParent { .. })),
        "{:?}",
        session.report.issues
    );
    // Bookkeeping records seen in the wild are not reported as unknown.
    assert!(
        !session
            .report
            .issues
            .iter()
            .any(|issue| matches!(issue.kind, IssueKind::UnknownRecord { .. })),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn the_segment_claude_code_kept_follows_the_summary_in_the_context() {
    let (_, context) = imported_context(&shape("claude-boundary-missing-parent.jsonl"));
    assert!(context[0].starts_with("compactionSummary: This session is being continued"));
    assert_eq!(
        &context[1..3],
        [
            "user: Also keep the reservation under 5 ms p95.",
            "assistant: Noted: reservations stay under 5 ms p95.",
        ]
    );
    assert_eq!(
        context.last().unwrap(),
        "assistant: Reservations are atomic; all 14 tests pass."
    );
    assert_eq!(context.len(), 3 + 8 + 1);
}

#[test]
fn a_codex_remote_compaction_continues_its_thread() {
    let path = shape("codex-remote-compaction-mid-thread.jsonl");
    let session = import_file(&path, None).unwrap();
    let (on_path, total) = tool_results_on_path(&session);
    assert_eq!((on_path, total), (14, 14));
    assert_eq!(roots(&session), 1);
    let entries = session.entries();
    let compactions: Vec<_> = entries
        .iter()
        .filter_map(|entry| entry.kind.as_compaction())
        .collect();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0].tokens_before, 200_500);
    assert!(compactions[0].extra.contains_key("codexCompacted"));

    let (_, context) = imported_context(&path);
    assert!(context[0].starts_with("compactionSummary: Codex compacted this conversation"));
    assert_eq!(
        context[1],
        "user: Invoices in EUR round half-even; make the PDF totals match the ledger."
    );
    assert_eq!(
        context.last().unwrap(),
        "assistant: Added tests/test_rounding.py; 0.125 rounds to 0.12."
    );
}

/// A Claude Code transcript cut off by its writer can end with a bookkeeping record (a
/// `turn_duration`) whose parent is not in the file (seen on blind14's `xfs96192/claude-config`).
/// It is a root of its own, in front, so the conversation's last entry stays the leaf.
#[test]
fn a_trailing_record_of_no_conversation_whose_parent_is_missing_does_not_become_the_leaf() {
    let path = shape("claude-trailing-stray-bookkeeping.jsonl");
    let session = import_file(&path, None).unwrap();
    let (on_path, total) = tool_results_on_path(&session);
    assert_eq!((on_path, total), (28, 28));
    assert!(session.report.issues.iter().any(|issue| matches!(
        &issue.kind,
        IssueKind::MissingParent { parent } if parent.starts_with("b6c60775")
    )));
    assert_eq!(roots(&session), 3);
    let (_, context) = imported_context(&path);
    assert_eq!(
        context.last().unwrap(),
        "assistant: Reservations are atomic; all 14 tests pass."
    );
}

/// Claude Code's local-command caveat, as the fixture's records write it.
const CAVEAT: &str = "Caveat: The messages below were generated by the user while running local \
    commands. DO NOT respond to these messages or otherwise consider them in your response unless \
    the user explicitly asks you to.";

/// The text of a message entry, as `describe` writes it (`role: text`).
fn entry_text(entry: &SessionEntry) -> String {
    if let EntryKind::Message(message) = &entry.kind {
        crate::shapes::describe(message)
    } else {
        String::new()
    }
}

/// Old Claude Code versions (1.0.x) write several sessions into one file, each with the same
/// local-command caveat record (one uuid, written again from a root). A command hangs under the
/// caveat written before it, and a file ending with a session of nothing but `/exit` keeps the last
/// conversation as the leaf (seen on blind15's `francojc/dotfiles`).
#[test]
fn sessions_sharing_a_caveat_uuid_keep_their_commands_and_the_last_conversation_is_the_leaf() {
    let path = shape("claude-sessions-sharing-a-caveat.jsonl");
    let session = import_file(&path, None).unwrap();
    let duplicates = session
        .report
        .issues
        .iter()
        .filter(|issue| matches!(issue.kind, IssueKind::DuplicateId { .. }))
        .count();
    assert_eq!(duplicates, 3);
    let entries = session.entries();
    let by_id: HashMap<&str, &SessionEntry> = entries
        .iter()
        .map(|entry| (entry.id.as_str(), entry))
        .collect();
    let parent_of = |entry: &SessionEntry| {
        entry
            .parent_id
            .as_deref()
            .and_then(|parent| by_id.get(parent).copied())
    };
    // Each command's caveat follows what was written before the command: the first /clear the
    // first answer, /cost a root, the second /clear the second answer, /exit a root.
    let before_caveats: Vec<(String, Option<String>)> = entries
        .iter()
        .filter(|entry| entry_text(entry).starts_with("user: <command-name>"))
        .map(|command| {
            let caveat = parent_of(command).unwrap();
            assert!(entry_text(caveat).starts_with("user: Caveat:"));
            let text = entry_text(command);
            let name = text["user: <command-name>".len()..]
                .split('<')
                .next()
                .unwrap()
                .to_owned();
            (name, parent_of(caveat).map(entry_text))
        })
        .collect();
    let one = "assistant: One item is open: renew the TLS certificate.";
    let renew =
        "assistant: Renew with certbot renew --cert-name notes.example.org, then reload nginx.";
    let mut expected = vec![
        ("exit".to_owned(), None),
        ("clear".to_owned(), Some(one.to_owned())),
        ("cost".to_owned(), None),
        ("clear".to_owned(), Some(renew.to_owned())),
    ];
    let mut actual = before_caveats;
    expected.sort();
    actual.sort();
    assert_eq!(actual, expected);
    // The trailing /exit session went in front: the leaf is the second session's /clear, after
    // its conversation.
    let (_, context) = imported_context(&path);
    assert_eq!(
        context,
        [
            "user: Draft the renewal steps for the TLS certificate.",
            renew,
            &format!("user: {CAVEAT}"),
            "user: <command-name>clear</command-name>\n          <command-message>clear</command-message>\n          <command-args></command-args>",
            "user: <local-command-stdout></local-command-stdout>",
        ]
    );
}

/// Claude Code can write a conversation's records again, uuids and all, from a root (seen on
/// blind10's `pshung/personal_git`: 106 records written twice). Each record's parent is the one
/// written before it with that uuid, so the copy is a chain of its own: before, the first writing
/// linked into the copy and a reply's merged fragments closed a parent cycle (a damaged file whose
/// leaf showed 4 of its 6 messages).
#[test]
fn history_written_twice_imports_without_a_cycle() {
    let path = shape("claude-history-written-twice.jsonl");
    let session = import_file(&path, None).unwrap();
    assert_eq!(roots(&session), 2);
    // `imported_context` also opens the written session and asserts it is not damaged.
    let (_, context) = imported_context(&path);
    assert_eq!(
        context,
        [
            "user: Why does checkout round the total twice?",
            "assistant: Reading the checkout code. | <call toolu_11 Read>",
            "toolResult toolu_11 Read: const total = round(round(subtotal) + tax);",
            "assistant: roundTotal runs on the subtotal and again on the sum.",
            "user: Round once, at the end.",
            "assistant: Now only the final sum is rounded.",
        ]
    );
}

/// A transcript can end with a run of `api_error` records whose first parent is not in the file
/// (seen on blind16's `13562964800/claude-skills`); the run, and a queue record after it, go in
/// front, so the leaf stays the conversation's last entry.
#[test]
fn a_trailing_run_of_api_errors_from_a_missing_parent_does_not_become_the_leaf() {
    let path = shape("claude-trailing-api-errors.jsonl");
    let (session, context) = imported_context(&path);
    assert!(session.report.issues.iter().any(|issue| matches!(
        &issue.kind,
        IssueKind::MissingParent { parent } if parent.starts_with("0badf00d")
    )));
    assert_eq!(
        context.last().unwrap(),
        "assistant: GET /health now answers with the database's status."
    );
    assert_eq!(context.len(), 4);
}

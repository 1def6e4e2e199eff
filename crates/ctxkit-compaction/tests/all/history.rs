//! Listing, undoing and guarding compactions.

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, LoopGuard, NotCarried, NotCarriedReason, Prompts,
    UNDO_COMPACTION_TYPE, check_after_compaction, compact, list_compactions, prepare_compaction,
    undo_last_compaction,
};
use ctxkit_protocol::MessageContent;
use ctxkit_session::{NewCompaction, Session, SummarySource};
use ctxkit_summarizer_offline::OfflineSummarizer;
use tokio_util::sync::CancellationToken;

use crate::fixtures::{split_turn_session, user};

async fn compact_once(session: &mut Session, settings: CompactionSettings) -> String {
    let preparation = prepare_compaction(session, None, settings)
        .unwrap()
        .unwrap();
    let result = compact(
        &preparation,
        &OfflineSummarizer::default(),
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    session
        .append_compaction(NewCompaction {
            summary: result.summary,
            first_kept_entry_id: result.first_kept_entry_id,
            tokens_before: result.tokens_before,
            details: Some(result.details),
            source: SummarySource::Ctxkit,
        })
        .unwrap()
}

#[tokio::test]
async fn compactions_are_listed_with_what_they_cover_and_can_be_undone() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    let mut session = split_turn_session();
    // Persist the in-memory fixture by copying its lines into a file.
    let lines: Vec<String> = std::iter::once(serde_json::to_string(session.header()).unwrap())
        .chain(
            session
                .entries()
                .iter()
                .map(|entry| entry.raw().unwrap().to_string()),
        )
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    session = Session::open(&path).unwrap();
    let before_ids: Vec<String> = session
        .entries()
        .iter()
        .map(|entry| entry.id().to_owned())
        .collect();

    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 1000,
        keep_recent_tokens: 300,
    };
    let compaction_id = compact_once(&mut session, settings).await;
    let records = list_compactions(&session, None).unwrap();
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.id, compaction_id);
    assert_eq!(record.summarizer.as_deref(), Some("offline"));
    assert_eq!(record.covered_entry_ids.first(), before_ids.first());
    assert!(
        !record
            .covered_entry_ids
            .contains(&record.first_kept_entry_id)
    );
    assert!(record.tokens_after < record.tokens_before, "{record:?}");

    let guard = check_after_compaction(&session, &compaction_id, 200_000, &settings).unwrap();
    assert!(matches!(guard, LoopGuard::Clear { .. }));
    // A threshold far below the window (`compaction.thresholdTokens`) is cleared by a context well
    // under it: the margin is a share of the threshold, not of the window.
    let low_threshold = CompactionSettings {
        reserve_tokens: 200_000 - 2 * record.tokens_after,
        ..settings
    };
    let low = check_after_compaction(&session, &compaction_id, 200_000, &low_threshold).unwrap();
    assert!(matches!(low, LoopGuard::Clear { .. }), "{low:?}");
    let tight = check_after_compaction(
        &session,
        &compaction_id,
        record.tokens_after + 1000,
        &settings,
    )
    .unwrap();
    assert!(tight.advice().unwrap().contains("keepRecentTokens"));
    // QA r97 (sec): with `keepRecentTokens` already 0 the advice said to lower it.
    let keep_none = CompactionSettings {
        keep_recent_tokens: 0,
        ..settings
    };
    let advice = check_after_compaction(
        &session,
        &compaction_id,
        record.tokens_after + 1000,
        &keep_none,
    )
    .unwrap()
    .advice()
    .unwrap();
    assert!(
        !advice.contains("lower `compaction.keepRecentTokens`"),
        "{advice}"
    );
    assert!(
        advice.contains("`compaction.keepRecentTokens` is already 0"),
        "{advice}"
    );
    let LoopGuard::StillOver {
        tokens_after,
        kept_tokens,
        ..
    } = tight
    else {
        panic!("{tight:?}");
    };
    // What was kept is the context after compaction without its summary.
    let parsed = session.entry(&compaction_id).unwrap().parse().unwrap();
    let summary = &parsed.kind.as_compaction().unwrap().summary;
    let summary_tokens = summary.encode_utf16().count().div_ceil(4) as u64;
    assert!(summary_tokens > 0);
    assert_eq!(kept_tokens, tokens_after - summary_tokens);

    let undo = undo_last_compaction(&mut session).unwrap().unwrap();
    assert_eq!(undo.compaction_id, compaction_id);
    assert_eq!(
        undo.restored_leaf_id.as_deref(),
        before_ids.last().map(String::as_str)
    );
    drop(session);
    let reopened = Session::open(&path).unwrap();
    assert_eq!(
        reopened
            .leaf_entry()
            .unwrap()
            .parse()
            .unwrap()
            .kind
            .type_name(),
        "custom"
    );
    assert!(
        reopened
            .leaf_entry()
            .unwrap()
            .raw()
            .unwrap()
            .contains(UNDO_COMPACTION_TYPE)
    );
    assert!(list_compactions(&reopened, None).unwrap().is_empty());
    assert!(
        reopened.entry(&compaction_id).is_some(),
        "the undone compaction stays in the tree"
    );
    let full_context = reopened.build_context().messages.len();
    assert_eq!(full_context, before_ids.len());
}

#[test]
fn nothing_to_undo_without_a_compaction() {
    let mut session = Session::in_memory("/p");
    session.append_message(user("hi")).unwrap();
    assert_eq!(undo_last_compaction(&mut session).unwrap(), None);
}

/// Issue 33, item 13: compact, three more exchanges, undo → the three later user messages left the
/// context (still in the file, on a side branch nobody mentioned). They are appended again after
/// the restored context.
#[tokio::test]
async fn undo_keeps_the_work_done_after_the_compaction() {
    let mut session = split_turn_session();
    let before = session.build_context().messages.len();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 100,
        keep_recent_tokens: 1,
    };
    compact_once(&mut session, settings).await;
    for turn in 1..=3 {
        session
            .append_message(user(&format!("later question {turn}")))
            .unwrap();
        session
            .append_message(crate::fixtures::assistant_text(&format!(
                "later answer {turn}"
            )))
            .unwrap();
    }
    let undo = undo_last_compaction(&mut session).unwrap().unwrap();
    assert_eq!(undo.reappended_messages(), 6);
    let context = session.build_context();
    assert_eq!(context.messages.len(), before + 6);
    let texts: Vec<String> = session
        .messages(&context.messages)
        .unwrap()
        .iter()
        .map(|message| serde_json::to_string(message).unwrap())
        .collect();
    for turn in 1..=3 {
        let position = texts
            .iter()
            .position(|text| text.contains(&format!("later question {turn}")))
            .unwrap_or_else(|| panic!("later question {turn} left the context"));
        assert!(position >= before, "after the restored context");
    }
    assert!(list_compactions(&session, None).unwrap().is_empty());
}

/// The session's entries written to `path` as they are, and opened from there.
fn persisted(session: &Session, path: &std::path::Path) -> Session {
    let lines: Vec<String> = std::iter::once(serde_json::to_string(session.header()).unwrap())
        .chain(
            session
                .entries()
                .iter()
                .map(|entry| entry.raw().unwrap().to_string()),
        )
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
    Session::open(path).unwrap()
}

/// The context's messages at the leaf, each as its JSON text.
fn context_texts(session: &Session) -> Vec<String> {
    let context = session.build_context();
    session
        .messages(&context.messages)
        .unwrap()
        .iter()
        .map(|message| serde_json::to_string(message).unwrap())
        .collect()
}

/// A tester's report: after compact, `edit-context --replace "REDACTED BY USER"` and a switch to
/// another model and thinking level, `undo-compact` brought the original text back and the old
/// model, and said nothing. Everything after the compaction that shapes the context or the call
/// now comes back after the marker; what cannot is named.
#[tokio::test]
async fn undo_carries_edits_model_changes_and_extension_entries_over() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    let mut session = persisted(&split_turn_session(), &path);
    let path_ids: Vec<String> = session
        .branch_path(None)
        .iter()
        .map(|entry| entry.id().to_owned())
        .collect();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 100,
        keep_recent_tokens: 300,
    };
    let compaction_id = compact_once(&mut session, settings).await;
    // A summarized message and a kept one redacted after the compaction.
    let (first, last) = (&path_ids[0], &path_ids[path_ids.len() - 1]);
    session
        .append_context_edit(first, Some(MessageContent::Text("REDACTED ONE".into())))
        .unwrap();
    session
        .append_context_edit(last, Some(MessageContent::Text("REDACTED TWO".into())))
        .unwrap();
    session.append_model_change("openai", "gpt-5").unwrap();
    session.append_thinking_level_change("low").unwrap();
    let later = session.append_message(user("later secret")).unwrap();
    session.append_label_change(&later, Some("later")).unwrap();
    session
        .append_context_edit(&later, Some(MessageContent::Text("REDACTED THREE".into())))
        .unwrap();
    session
        .append_custom_message_entry(
            "x.note",
            MessageContent::Text("extension note".into()),
            true,
            None,
        )
        .unwrap();
    session.append_session_info("the name").unwrap();
    let usage: ctxkit_protocol::Usage = serde_json::from_value(serde_json::json!({
        "input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12
    }))
    .unwrap();
    session.append_usage("side", "p", "m", usage, None).unwrap();
    // Pi writes an edit hiding the compaction itself; ctxkit only reads one.
    let leaf = session.leaf_id().unwrap().to_owned();
    drop(session);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "{{\"type\":\"context_edit\",\"id\":\"e0000001\",\"parentId\":\"{leaf}\",\"timestamp\":\"2030-01-01T00:00:00.000Z\",\"targetId\":\"{compaction_id}\",\"replacement\":null}}\n"
    ));
    std::fs::write(&path, text).unwrap();
    let mut session = Session::open(&path).unwrap();
    let before_undo = context_texts(&session);
    assert!(before_undo.iter().all(|text| !text.contains("secret")));

    let undo = undo_last_compaction(&mut session).unwrap().unwrap();
    let carried: Vec<&str> = undo
        .carried
        .iter()
        .map(|entry| entry.entry_type.as_str())
        .collect();
    assert_eq!(
        carried,
        [
            "context_edit",
            "context_edit",
            "model_change",
            "thinking_level_change",
            "message",
            "label",
            "context_edit",
            "custom_message"
        ]
    );
    assert_eq!(undo.reappended_messages(), 1);
    assert_eq!(
        undo.not_carried,
        [NotCarried {
            id: "e0000001".to_owned(),
            entry_type: "context_edit".to_owned(),
            reason: NotCarriedReason::EditsUndoneCompaction,
        }]
    );
    assert!(undo.not_carried[0].to_string().contains("e0000001"));

    for session in [session, Session::open(&path).unwrap()] {
        let context = session.build_context();
        let model = context.model.clone().unwrap();
        assert_eq!(model.provider.as_deref(), Some("openai"));
        assert_eq!(model.model_id.as_deref(), Some("gpt-5"));
        assert_eq!(context.thinking_level, "low");
        let texts = context_texts(&session).join("\n");
        for gone in ["Add a cache", "All tests pass.", "later secret"] {
            assert!(!texts.contains(gone), "{gone} came back: {texts}");
        }
        for kept in [
            "REDACTED ONE",
            "REDACTED TWO",
            "REDACTED THREE",
            "extension note",
        ] {
            assert!(texts.contains(kept), "{kept} is missing: {texts}");
        }
        let later_copy = &undo.carried[4].copy_id;
        assert_eq!(session.label(later_copy), Some("later"));
        assert_eq!(session.session_name().as_deref(), Some("the name"));
        let usages = session
            .entries()
            .iter()
            .filter(|entry| entry.type_name() == "usage")
            .count();
        assert_eq!(usages, 1, "spend is not counted twice");
        assert!(list_compactions(&session, None).unwrap().is_empty());
    }
}

/// Two compactions undone one after the other: the first undo's marker is not copied by the
/// second, and what came after both is still carried.
#[tokio::test]
async fn undoing_two_compactions_carries_the_later_work_through_both() {
    let mut session = split_turn_session();
    let first_id = session.branch_path(None)[0].id().to_owned();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 100,
        keep_recent_tokens: 300,
    };
    compact_once(&mut session, settings).await;
    session
        .append_message(user("second question ".repeat(200).as_str()))
        .unwrap();
    session
        .append_message(crate::fixtures::assistant_text(
            &"second answer ".repeat(200),
        ))
        .unwrap();
    compact_once(&mut session, settings).await;
    session
        .append_context_edit(&first_id, Some(MessageContent::Text("REDACTED".into())))
        .unwrap();
    let undo = undo_last_compaction(&mut session).unwrap().unwrap();
    assert_eq!(undo.carried.len(), 1);
    let undo = undo_last_compaction(&mut session).unwrap().unwrap();
    let carried: Vec<&str> = undo
        .carried
        .iter()
        .map(|entry| entry.entry_type.as_str())
        .collect();
    assert_eq!(carried, ["message", "message", "context_edit"]);
    let markers = session
        .branch_path(None)
        .iter()
        .filter(|entry| entry.raw().unwrap().contains(UNDO_COMPACTION_TYPE))
        .count();
    assert_eq!(markers, 1, "one marker on the branch, the last undo's");
    let texts = context_texts(&session).join("\n");
    assert!(!texts.contains("Add a cache"), "{texts}");
    assert!(texts.contains("REDACTED"));
    assert!(texts.contains("second answer"));
}

#[test]
fn a_damaged_message_leaves_the_compactions_listed() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("damaged.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1735689601000}}"#,
        // JSON whose head reads, but not a message: before, listing the compactions failed here.
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":5}}"#,
        r#"{"type":"compaction","id":"c1","parentId":"m2","timestamp":"2025-01-01T00:00:03.000Z","summary":"the summary","firstKeptEntryId":"m2","tokensBefore":100}"#,
        r#"{"type":"message","id":"m3","parentId":"c1","timestamp":"2025-01-01T00:00:04.000Z","message":{"role":"user","content":"again","timestamp":1735689604000}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let session = Session::open(&path).unwrap();
    let records = list_compactions(&session, None).unwrap();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].id, "c1");
    assert_eq!(records[0].covered_entry_ids, ["m1"]);
    assert_eq!(records[0].unreadable_entry_ids, ["m2"]);
    assert!(records[0].tokens_after > 0);
}

/// A tester's report: a label set on a kept message while the leaf was on a side branch (its label
/// entry is on that branch, so it was not copied) was missing from the message's copy after the
/// undo. The copy gets the label.
#[tokio::test]
async fn undo_carries_a_label_set_from_another_branch() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    let mut session = persisted(&split_turn_session(), &path);
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 100,
        keep_recent_tokens: 300,
    };
    compact_once(&mut session, settings).await;
    let answer = session.append_message(user("the answer to keep")).unwrap();
    // Elsewhere: a side question off the first entry, where the label is set.
    let first = session.branch_path(None)[0].id().to_owned();
    session.branch(&first).unwrap();
    session.append_message(user("a side question")).unwrap();
    session
        .append_label_change(&answer, Some("important"))
        .unwrap();
    session.branch(&answer).unwrap();

    let undo = undo_last_compaction(&mut session).unwrap().unwrap();
    let copy = undo
        .carried
        .iter()
        .find(|entry| entry.original_id == answer)
        .map(|entry| entry.copy_id.clone())
        .unwrap();
    for session in [session, Session::open(&path).unwrap()] {
        assert_eq!(session.label(&copy), Some("important"));
        let on_path = session
            .branch_path(None)
            .iter()
            .any(|entry| entry.id() == copy);
        assert!(on_path, "the copy is on the restored path");
    }
}

/// QA (2026-12-07): a session whose last prompt alone is 7.5M tokens was told to lower
/// `compaction.keepRecentTokens`, which cannot help: a message is never cut. Kept messages over
/// twice the budget say so, and what can help.
#[test]
fn a_message_larger_than_the_keep_budget_is_not_answered_by_lowering_it() {
    let still_over = |kept_tokens| LoopGuard::StillOver {
        tokens_after: 7_501_384,
        threshold: 183_616,
        kept_tokens,
        keep_recent_tokens: 20_000,
    };
    let huge = still_over(7_500_000).advice().unwrap();
    assert!(
        !huge.contains("lower `compaction.keepRecentTokens`"),
        "{huge}"
    );
    assert!(
        huge.contains("a message among them is larger on its own") && huge.contains("--omit"),
        "{huge}"
    );
    let near = still_over(30_000).advice().unwrap();
    assert!(
        near.contains("lower `compaction.keepRecentTokens`"),
        "{near}"
    );
}

/// QA (2026-12-07): an imported Codex compaction made on the server has no readable summary, only
/// a note that the messages Codex kept follow; the next compaction took it as the previous summary
/// and carried the note into a summary of those very messages. It is no previous summary.
#[test]
fn a_codex_server_compaction_is_no_previous_summary() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("codex.jsonl");
    let text = |n: usize| "words of a long message ".repeat(n);
    let message = |id: &str, parent: &str, role: &str, body: &str| {
        serde_json::json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": role, "content": [{"type": "text", "text": body}], "timestamp": 1,
                "provider": "openai", "model": "gpt-5", "api": "openai-responses",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "stopReason": "stop"}})
        .to_string()
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned(),
        r#"{"type":"message","id":"u0","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"start","timestamp":1}}"#.to_owned(),
        serde_json::json!({"type": "compaction", "id": "c", "parentId": "u0",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "summary": "Codex compacted this conversation on the server; its summary is encrypted and cannot be read here. The conversation continues from the messages Codex kept, which follow.",
            "firstKeptEntryId": "", "tokensBefore": 1000,
            "codexCompacted": {"type": "compacted"}})
        .to_string(),
        message("u1", "c", "user", &text(400)),
        message("a1", "u1", "assistant", &text(400)),
        message("u2", "a1", "user", &text(400)),
        message("a2", "u2", "assistant", &text(400)),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let session = Session::open(&file).unwrap();
    let settings = CompactionSettings {
        keep_recent_tokens: 500,
        ..CompactionSettings::default()
    };
    let preparation = prepare_compaction(&session, None, settings)
        .unwrap()
        .unwrap();
    assert_eq!(preparation.previous_summary, None);
    assert!(!preparation.messages_to_summarize.is_empty());
}

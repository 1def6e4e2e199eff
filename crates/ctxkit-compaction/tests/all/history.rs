//! Listing, undoing and guarding compactions.

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, LoopGuard, Prompts, UNDO_COMPACTION_TYPE,
    check_after_compaction, compact, list_compactions, prepare_compaction, undo_last_compaction,
};
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
    assert_eq!(undo.reappended, 6);
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

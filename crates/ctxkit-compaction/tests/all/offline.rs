//! The offline summarizer on the shipped demo session: format, budget, and identifier recall against
//! plain truncation.

use std::path::Path;

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, OFFLINE_NOTICE, OfflineSummarizer, Prompts, compact,
    identifier_recall, prepare_compaction, serialize_messages,
};
use ctxkit_session::Session;
use tokio_util::sync::CancellationToken;

fn demo() -> Session {
    Session::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl"))
        .unwrap()
}

#[tokio::test]
async fn offline_summary_is_structured_bounded_and_keeps_more_identifiers_than_truncation() {
    let session = demo();
    for keep in [500, 2_000] {
        let settings = CompactionSettings {
            enabled: true,
            reserve_tokens: 4_000,
            keep_recent_tokens: keep,
        };
        let preparation = prepare_compaction(&session, None, settings)
            .unwrap()
            .unwrap();
        let result = compact(
            &preparation,
            &OfflineSummarizer,
            &Prompts::default(),
            &CompactOptions::default(),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        let history = result.summary.split("\n\n---\n\n").next().unwrap();
        assert!(history.starts_with(OFFLINE_NOTICE));
        for heading in [
            "## Goal",
            "## Constraints & Preferences",
            "## Progress",
            "### Done",
            "### In Progress",
            "### Blocked",
            "## Key Decisions",
            "## Next Steps",
            "## Critical Context",
        ] {
            assert!(history.contains(heading), "{heading} missing in\n{history}");
        }
        assert!(
            ctxkit_compaction::utf16_len(history) <= 4 * settings.max_summary_tokens() as usize
        );
        let span = serialize_messages(&preparation.messages_to_summarize);
        let report = identifier_recall(&span, history);
        assert!(report.identifiers > 10, "{report:?}");
        assert!(
            report.summary > report.head_truncation && report.summary > report.tail_truncation,
            "keep {keep}: {report:?}"
        );
    }
}

#[tokio::test]
async fn offline_summaries_are_deterministic() {
    let session = demo();
    let settings = CompactionSettings {
        enabled: true,
        reserve_tokens: 4_000,
        keep_recent_tokens: 1_000,
    };
    let preparation = prepare_compaction(&session, None, settings)
        .unwrap()
        .unwrap();
    let (prompts, options, cancel) = (
        Prompts::default(),
        CompactOptions::default(),
        CancellationToken::new(),
    );
    let first = compact(
        &preparation,
        &OfflineSummarizer,
        &prompts,
        &options,
        &cancel,
    )
    .await
    .unwrap();
    let second = compact(
        &preparation,
        &OfflineSummarizer,
        &prompts,
        &options,
        &cancel,
    )
    .await
    .unwrap();
    assert_eq!(first.summary, second.summary);
}

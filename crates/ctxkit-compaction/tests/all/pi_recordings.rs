//! The offline summaries of the two real Pi recordings in `shared/fixtures/pi/` (kept beside the
//! clone, never in the repository; `.ci/run` runs beside them, a clone on its own skips them), as
//! snapshots reviewed line by line, plus the bounds every summary must keep.

use std::path::{Path, PathBuf};

use ctxkit_compaction::{CompactOptions, CompactionSettings, Prompts, compact, prepare_compaction};
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use tokio_util::sync::CancellationToken;

/// The recording `name`, or `None` outside CI when the folder is not there (a clone on its own,
/// as the README's test command runs it): the recordings are people's sessions, never committed,
/// and `.ci/run` runs beside them.
fn recording(name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/pi")
        .join(name);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "`{}` is missing: the Pi recordings live in `shared/fixtures/pi/` beside the clone",
        path.display()
    );
    #[allow(clippy::print_stderr, reason = "the skip must be visible")]
    {
        eprintln!(
            "SKIPPED: `{}` is not beside this clone (CI has it)",
            path.display()
        );
    }
    None
}

async fn offline_summary(name: &str) -> Option<String> {
    let session = Session::open(&recording(name)?).unwrap();
    let settings = CompactionSettings {
        keep_recent_tokens: 2_000,
        ..CompactionSettings::default()
    };
    let preparation = prepare_compaction(&session, None, settings)
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
    let history = result.summary.split("\n\n---\n\n").next().unwrap();
    // Tool-call arguments other than paths and commands never appear, nor provider call ids.
    for fragment in ["`oldText`", "`newText`", "`toolu_"] {
        assert!(!history.contains(fragment), "{fragment} in\n{history}");
    }
    // The size follows the span, within the default bounds.
    let tokens = ctxkit_tokens::count_text_tokens(history, ctxkit_tokens::Encoding::Cl100kBase);
    let size = ctxkit_summarizer_offline::SummarySize::default();
    assert!(
        tokens <= size.max_tokens,
        "{tokens} tokens of history summary"
    );
    assert!(
        tokens >= size.min_tokens / 2,
        "{tokens} tokens of history summary"
    );
    Some(result.summary)
}

#[tokio::test]
async fn before_compaction_recording() {
    let Some(summary) = offline_summary("fx_before-compaction.jsonl").await else {
        return;
    };
    // The earlier model-written checkpoint survives the update.
    for kept in ["`refactor`", "E2E tests only", "AgentSession"] {
        assert!(summary.contains(kept), "{kept} lost");
    }
    insta::assert_snapshot!(summary);
}

#[tokio::test]
async fn large_session_recording() {
    let Some(summary) = offline_summary("fx_large-session.jsonl").await else {
        return;
    };
    insta::assert_snapshot!(summary);
}

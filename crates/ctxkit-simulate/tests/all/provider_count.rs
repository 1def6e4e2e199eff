//! The provider's count in a replay: a session whose replies recorded no usage, or usage that does
//! not grow with the request, replays exactly as it did before the simulator learnt the provider's
//! count (the reports below were written by the simulator of the seventeenth round; rewritten
//! when the engine came to measure the next request as sent, the prune layer's cuts subtracted:
//! only the provider-side compaction strategy, whose checks read the projection, moved).

use std::path::Path;

use ctxkit_simulate::{SimulateOptions, SimulationReport, Timing, simulate_session};

use super::simulate_sessions::{claude_code, codex, options, pi};

/// The report as JSON, without what changes from run to run (timings, the temporary path).
fn stable_json(mut report: SimulationReport) -> String {
    report.generate_ms = 0.0;
    report.wall_ms = 0.0;
    for strategy in &mut report.strategies {
        strategy.timing = Timing::default();
    }
    if let Some(session) = report.session.as_mut() {
        session.path = "session.jsonl".to_owned();
    }
    serde_json::to_string_pretty(&report).unwrap() + "\n"
}

/// Compares with `tests/all/expected/NAME.json`; `CTXKIT_BLESS=1` writes it instead.
fn assert_unchanged(name: &str, file: &Path, options: &SimulateOptions) {
    let json = stable_json(simulate_session(file, options).unwrap());
    let expected = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/all/expected")
        .join(format!("{name}.json"));
    if std::env::var_os("CTXKIT_BLESS").is_some() {
        std::fs::write(&expected, &json).unwrap();
    }
    let before = std::fs::read_to_string(&expected).unwrap();
    assert!(
        before == json,
        "{name}: the replay changed; run with CTXKIT_BLESS=1 and compare with git diff"
    );
}

#[test]
fn sessions_without_provider_counts_replay_as_before() {
    let dir = tempfile::tempdir().unwrap();
    // Pi without usage; Codex, whose import keeps no usage on replies; Claude Code whose usage
    // stays at 10 input tokens while the request grows (no evidence of a tokenizer).
    assert_unchanged("pi-without-usage", &pi(dir.path()), &options());
    assert_unchanged("codex-without-usage", &codex(dir.path()), &options());
    assert_unchanged(
        "claude-code-flat-usage",
        &claude_code(dir.path()),
        &options(),
    );
}

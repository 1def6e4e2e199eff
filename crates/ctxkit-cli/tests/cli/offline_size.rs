//! The offline summary's size follows `compaction.offlineSummaryPercent` and its bounds, from the
//! user's settings and from an untrusted project's (a size is harmless, so `compaction.*` may be
//! set there); a bad value stops `compact` with one line naming the file and the key, and a hint.

use crate::{Run, corpus};

/// The summary `ctxkit compact` writes for the large corpus session, keeping 1,000 tokens.
fn summary(run: &Run) -> String {
    let file = run.home.path().join("session.jsonl");
    std::fs::copy(corpus("good-large-realistic.jsonl"), &file).unwrap();
    let output = run.ctxkit(&[
        "compact",
        file.to_str().unwrap(),
        "--keep-recent-tokens",
        "1000",
    ]);
    assert!(output.starts_with("exit: 0"), "{output}");
    let text = std::fs::read_to_string(&file).unwrap();
    let entry: serde_json::Value = text
        .lines()
        .rev()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|entry| entry["type"] == "compaction")
        .unwrap();
    entry["summary"].as_str().unwrap().to_owned()
}

fn write(path: &std::path::Path, settings: serde_json::Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, settings.to_string()).unwrap();
}

#[test]
fn the_summary_size_follows_the_settings() {
    let default = summary(&Run::new());
    let small_settings = serde_json::json!({"compaction": {
        "offlineSummaryPercent": 1,
        "offlineSummaryMinTokens": 100
    }});
    let run = Run::new();
    write(
        &run.home.path().join("settings.json"),
        small_settings.clone(),
    );
    let small = summary(&run);
    assert!(
        small.len() * 2 < default.len(),
        "{} against {} bytes:\n{small}",
        small.len(),
        default.len()
    );
    // From a project nobody trusted it waits for trust, as whatever shapes what a model is
    // sent does (QA 2026-12-07); once trusted, it applies.
    let run = Run::new();
    write(
        &run.home.path().join(".ctxkit/settings.json"),
        small_settings,
    );
    let untrusted = summary(&run);
    assert_eq!(untrusted.len(), default.len(), "{untrusted}");
    let trusted = run.ctxkit(&["trust", "--yes"]);
    assert!(trusted.starts_with("exit: 0"), "{trusted}");
    let from_project = summary(&run);
    assert_eq!(from_project.len(), small.len(), "{from_project}");
}

#[test]
fn a_bad_size_setting_stops_compact_with_the_file_and_the_key() {
    for (settings, key) in [
        (
            serde_json::json!({"offlineSummaryPercent": 500}),
            "compaction.offlineSummaryPercent",
        ),
        (
            serde_json::json!({"offlineSummaryMinTokens": 9000, "offlineSummaryMaxTokens": 6000}),
            "compaction.offlineSummaryMinTokens",
        ),
    ] {
        let run = Run::new();
        write(
            &run.home.path().join("settings.json"),
            serde_json::json!({ "compaction": settings }),
        );
        let file = run.home.path().join("session.jsonl");
        std::fs::copy(corpus("good-large-realistic.jsonl"), &file).unwrap();
        let before = std::fs::read(&file).unwrap();
        let output = run.ctxkit(&["compact", file.to_str().unwrap()]);
        let stderr = output.split_once("--- stderr\n").unwrap().1;
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{output}");
        assert!(
            lines[0].starts_with("error: Invalid value for `"),
            "{output}"
        );
        assert!(lines[0].contains(key), "{output}");
        assert!(lines[0].contains("`[HOME]/settings.json`"), "{output}");
        assert!(lines[1].starts_with("hint: "), "{output}");
        assert!(!output.starts_with("exit: 0"), "{output}");
        assert_eq!(std::fs::read(&file).unwrap(), before, "nothing written");
    }
}

/// QA (a new user): with a model configured for the chat, `compact --model offline` was taken for
/// a model id of the default provider and the session was sent to it. It names the offline
/// summarizer, and nothing is sent (the configured endpoint answers nothing here).
#[test]
fn model_offline_summarizes_offline_whatever_is_configured() {
    let run = Run::new();
    write(
        &run.home.path().join("settings.json"),
        serde_json::json!({"defaultProvider": "openai", "defaultModel": "gpt-4.1",
            "llm": {"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "sk-test-not-a-real-key-0000"}}),
    );
    let file = run.home.path().join("session.jsonl");
    std::fs::copy(corpus("good-large-realistic.jsonl"), &file).unwrap();
    let output = run.ctxkit(&[
        "compact",
        file.to_str().unwrap(),
        "--keep-recent-tokens",
        "1000",
        "--model",
        "offline",
        "--preview",
    ]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(output.contains("Summarizing without a model"), "{output}");
}

//! Issue 41's smaller items, each as a user meets it: fork's parent path, importing a Pi session,
//! a mistyped settings key, a session from a newer version, `--out` in a missing folder, a bad
//! value in a settings file, and what a session spent.

use crate::Run;

const DEMO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/demo-session.jsonl"
);

fn demo_copy(run: &Run, relative: &str) -> std::path::PathBuf {
    let target = run.home.path().join(relative);
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(DEMO, &target).unwrap();
    target
}

#[test]
fn fork_records_the_parent_as_an_absolute_path() {
    let run = Run::new();
    demo_copy(&run, "s/x.jsonl");
    let forked = run.ctxkit(&["fork", "s/x.jsonl"]);
    assert!(forked.starts_with("exit: 0"), "{forked}");
    let new_file = forked
        .lines()
        .nth(1)
        .unwrap()
        .replace("[HOME]", &run.home.path().display().to_string());
    let path = std::path::Path::new(&new_file);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        run.home.path().join(path)
    };
    let header = std::fs::read_to_string(path).unwrap();
    let header: serde_json::Value = serde_json::from_str(header.lines().next().unwrap()).unwrap();
    let parent = header["parentSession"].as_str().unwrap();
    assert!(std::path::Path::new(parent).is_absolute(), "{parent}");
    assert!(parent.ends_with("s/x.jsonl"), "{parent}");
}

#[test]
fn importing_a_pi_session_says_it_is_one_and_writes_nothing() {
    let run = Run::new();
    demo_copy(&run, "demo.jsonl");
    let imported = run.ctxkit(&["import", "demo.jsonl"]);
    assert!(imported.starts_with("exit: 3"), "{imported}");
    assert!(
        imported.contains("is already a Pi session (format v3)"),
        "{imported}"
    );
    assert!(
        imported.contains("hint: read it as it is: `ctxkit info demo.jsonl`"),
        "{imported}"
    );
    let sessions = run.home.path().join("sessions");
    assert!(!sessions.exists() || std::fs::read_dir(&sessions).unwrap().next().is_none());
}

#[test]
fn a_mistyped_key_is_refused_with_the_key_it_meant() {
    let run = Run::new();
    let set = run.ctxkit(&["config", "set", "compactoin.reserveTokens", "5"]);
    assert!(set.starts_with("exit: 3"), "{set}");
    assert!(
        set.contains("did you mean `compaction.reserveTokens`?"),
        "{set}"
    );
    assert!(!run.home.path().join("settings.json").exists());
    let forced = run.ctxkit(&["config", "set", "--force", "otherTool.option", "5"]);
    assert!(forced.starts_with("exit: 0"), "{forced}");
}

#[test]
fn a_session_from_a_newer_version_is_not_called_damaged() {
    let run = Run::new();
    let text = std::fs::read_to_string(DEMO)
        .unwrap()
        .replacen("\"version\":3", "\"version\":9", 1);
    std::fs::write(run.home.path().join("v9.jsonl"), text).unwrap();
    for command in ["info", "tree"] {
        let output = run.ctxkit(&[command, "v9.jsonl"]);
        assert!(output.starts_with("exit: 0"), "{output}");
        assert!(!output.contains("damaged"), "{output}");
        assert!(
            output.contains("written by a newer version (session format v9)"),
            "{output}"
        );
    }
    let compacted = run.ctxkit(&["compact", "v9.jsonl"]);
    assert!(
        compacted.contains("written by a newer version"),
        "{compacted}"
    );
}

#[test]
fn an_out_file_in_a_missing_folder_is_an_io_error() {
    let run = Run::new();
    demo_copy(&run, "demo.jsonl");
    let output = run.ctxkit(&["compact", "demo.jsonl", "--out", "/nonexistent/dir/x.jsonl"]);
    assert!(output.starts_with("exit: 4"), "{output}");
}

#[test]
fn a_bad_value_in_a_settings_file_names_the_file_and_the_key() {
    let run = Run::new();
    demo_copy(&run, "demo.jsonl");
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"compaction": {"reserveTokens": "lots"}}"#,
    )
    .unwrap();
    let output = run.ctxkit(&["compact", "demo.jsonl", "--dry-run"]);
    assert!(output.starts_with("exit: 3"), "{output}");
    assert!(
        output.contains("`compaction.reserveTokens` in `[HOME]/settings.json`")
            && output.contains("found \"lots\""),
        "{output}"
    );
}

#[test]
fn info_breaks_down_what_the_session_spent() {
    let run = Run::new();
    let file = demo_copy(&run, "demo.jsonl");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let last_id = text
        .lines()
        .last()
        .and_then(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .and_then(|entry| entry["id"].as_str().map(str::to_owned))
        .unwrap();
    text.push_str(&format!(
        "{{\"type\":\"usage\",\"id\":\"warm0001\",\"parentId\":\"{last_id}\",\"timestamp\":\"2025-03-17T12:00:00.000Z\",\"kind\":\"cache_warm\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-4-5\",\"usage\":{{\"input\":0,\"output\":1,\"cacheRead\":250000,\"cacheWrite\":0,\"cost\":{{\"total\":0.075}}}}}}\n"
    ));
    std::fs::write(&file, text).unwrap();
    let info = run.ctxkit(&["info", "demo.jsonl"]);
    assert!(
        info.contains("spend:    $") && info.contains(" over 108 model calls"),
        "{info}"
    );
    assert!(info.contains("  requests        107 calls"), "{info}");
    assert!(
        info.contains("  cache warming     1 call     $0.0750"),
        "{info}"
    );
}

/// QA (fourth round): a session with a custom model ctxkit has no price for (its replies recorded
/// at $0, as Pi records them) showed "spend: $0.0000", which reads as free. Now the spend says the
/// price is unknown, with the tokens used, and where a price is given.
#[test]
fn info_says_the_price_of_an_unpriced_model_is_unknown() {
    let run = Run::new();
    let zero = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}"#;
    let lines = [
        r#"{"type":"session","version":3,"id":"01a23000-0000-7000-8000-000000000001","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/p"}"#.to_owned(),
        r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1796119201000}}"#.to_owned(),
        format!(
            r#"{{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-12-01T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"hello"}}],"api":"openai-completions","provider":"myco","model":"m","usage":{{"input":12300,"output":1100,"cacheRead":0,"cacheWrite":0,"totalTokens":13400,"cost":{zero}}},"stopReason":"stop","timestamp":1796119202000}}}}"#
        ),
    ];
    std::fs::write(run.home.path().join("s.jsonl"), lines.join("\n") + "\n").unwrap();
    let info = run.ctxkit(&["info", "s.jsonl"]);
    assert!(
        info.contains(
            "spend:    price unknown over 1 model call (tokens 12.3k in / 1.1k out): recorded \
             without a price; `llm.models[].cost` prices the model's calls from now on"
        ),
        "{info}"
    );
    assert!(
        info.contains("  requests          1 call     unknown"),
        "{info}"
    );
    assert!(!info.contains("$0.0000"), "{info}");
}

/// QA (fifth round): a model given `cost` of all zeros (free) showed "price unknown" like a model
/// with no price. Its calls are free: `info` and the web page say $0; a model with no `cost` stays
/// of unknown price.
#[test]
fn a_model_declared_free_costs_zero_not_an_unknown_price() {
    let run = Run::new();
    let zero = r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}"#;
    let reply = |id: &str, parent: &str, model: &str| {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-12-01T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"hello"}}],"api":"openai-completions","provider":"myco","model":"{model}","usage":{{"input":12300,"output":1100,"cacheRead":0,"cacheWrite":0,"totalTokens":13400,"cost":{zero}}},"stopReason":"stop","timestamp":1796119202000}}}}"#
        )
    };
    let lines = [
        r#"{"type":"session","version":3,"id":"01a23000-0000-7000-8000-000000000001","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/p"}"#.to_owned(),
        r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1796119201000}}"#.to_owned(),
        reply("aaaa0002", "aaaa0001", "free"),
    ];
    std::fs::write(run.home.path().join("s.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"llm": {"models": [
            {"provider": "myco", "id": "free", "contextWindow": 128000,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}},
            {"provider": "myco", "id": "unpriced", "contextWindow": 128000}]}}"#,
    )
    .unwrap();
    let info = run.ctxkit(&["info", "s.jsonl"]);
    assert!(
        info.contains("spend:    $0.0000 over 1 model call"),
        "{info}"
    );
    assert!(!info.contains("unknown"), "{info}");
    let page = run.ctxkit(&["export", "s.jsonl", "-o", "page.html"]);
    assert!(page.starts_with("exit: 0"), "{page}");
    let html = std::fs::read_to_string(run.home.path().join("page.html")).unwrap();
    assert!(
        html.contains("[12300,1100,0,0,13400,0.0]"),
        "free: priced at $0"
    );

    // The same reply by a model with no `cost`: of unknown price, here and on the page.
    let unpriced = [
        lines[0].clone(),
        lines[1].clone(),
        reply("aaaa0002", "aaaa0001", "unpriced"),
    ];
    std::fs::write(run.home.path().join("s.jsonl"), unpriced.join("\n") + "\n").unwrap();
    let info = run.ctxkit(&["info", "s.jsonl"]);
    assert!(
        info.contains("spend:    price unknown over 1 model call"),
        "{info}"
    );
    let page = run.ctxkit(&["export", "s.jsonl", "-o", "page.html"]);
    assert!(page.starts_with("exit: 0"), "{page}");
    let html = std::fs::read_to_string(run.home.path().join("page.html")).unwrap();
    assert!(
        html.contains("[12300,1100,0,0,13400,null]"),
        "unpriced: cost unknown"
    );
}

/// Codex puts the project's `AGENTS.md` and an `<environment_context>` block into user messages:
/// neither is the user's request, so neither is the first message nor the summary's goal.
#[test]
fn injected_context_is_never_taken_for_the_users_request() {
    let run = Run::new();
    let source = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ctxkit-import/tests/fixtures/shapes/codex-injected-context.jsonl"
    );
    std::fs::copy(
        source,
        run.home
            .path()
            .join("rollout-2025-09-01T10-00-00-abc.jsonl"),
    )
    .unwrap();
    let imported = run.ctxkit(&[
        "import",
        "rollout-2025-09-01T10-00-00-abc.jsonl",
        "--out",
        "s.jsonl",
    ]);
    assert!(imported.starts_with("exit: 0"), "{imported}");
    let info = run.ctxkit(&["info", "s.jsonl"]);
    assert!(info.contains("first:    Add a --verbose flag"), "{info}");
    let compacted = run.ctxkit(&["compact", "s.jsonl", "--keep-recent-tokens", "1"]);
    assert!(compacted.starts_with("exit: 0"), "{compacted}");
    let session = std::fs::read_to_string(run.home.path().join("s.jsonl")).unwrap();
    let summary = session
        .lines()
        .find(|line| line.contains("\"type\":\"compaction\""))
        .unwrap();
    assert!(!summary.contains("Never use unwrap"), "{summary}");
    assert!(!summary.contains("environment_context"), "{summary}");
    assert!(summary.contains("Add a --verbose flag"), "{summary}");
}

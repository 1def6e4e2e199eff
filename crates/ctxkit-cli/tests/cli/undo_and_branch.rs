//! `undo-compact` and `branch --summarize` as a tester met them: an undo that brought back a
//! redacted message and the model used before the compaction, saying nothing of either; a branch
//! summary of nothing ("No content to summarize") written into the model's context.

use crate::Run;

const DEMO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/demo-session.jsonl"
);

/// A copy of the demo session in the run's home, as an argument.
fn demo(run: &Run, name: &str) -> String {
    let target = run.home.path().join(name);
    std::fs::copy(DEMO, &target).unwrap();
    target.display().to_string()
}

/// Appends a hand-written entry (`fields` after `type`) below the file's last entry, the leaf.
fn append_entry(path: &str, id: &str, fields: &str) {
    let mut text = std::fs::read_to_string(path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let parent = last["id"].as_str().unwrap();
    text.push_str(&format!(
        "{{{fields},\"id\":\"{id}\",\"parentId\":\"{parent}\",\"timestamp\":\"2030-01-01T00:00:00.000Z\"}}\n"
    ));
    std::fs::write(path, text).unwrap();
}

/// The id of the file's last entry of `type`.
fn last_of_type(path: &str, entry_type: &str) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|entry| entry["type"] == entry_type)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn undo_compact_keeps_a_redaction_and_the_model_chosen_after_the_compaction() {
    let run = Run::new();
    let path = demo(&run, "u.jsonl");
    let compacted = run.ctxkit(&["compact", &path, "--keep-recent-tokens", "2000"]);
    assert!(compacted.starts_with("exit: 0"), "{compacted}");
    let compaction = last_of_type(&path, "compaction");
    let edited = run.ctxkit(&[
        "edit-context",
        &path,
        "6c360fcb",
        "--replace",
        "REDACTED BY USER",
    ]);
    assert!(edited.starts_with("exit: 0"), "{edited}");
    append_entry(
        &path,
        "a0000001",
        r#""type":"model_change","provider":"openai","modelId":"gpt-5""#,
    );
    append_entry(
        &path,
        "a0000002",
        r#""type":"thinking_level_change","thinkingLevel":"low""#,
    );
    // Pi can write an edit hiding the compaction's summary; after the undo it has nothing to edit.
    append_entry(
        &path,
        "a0000003",
        &format!(r#""type":"context_edit","targetId":"{compaction}","replacement":null"#),
    );
    let before = run.ctxkit(&["context", &path]);
    assert!(before.ends_with("REDACTED BY USER\n"), "{before}");
    assert!(
        before.contains("(model openai/gpt-5, thinking low)"),
        "{before}"
    );

    let undone = run.ctxkit(&["undo-compact", &path]);
    snapshot!(undone);
    let after = run.ctxkit(&["context", &path]);
    assert!(after.ends_with("REDACTED BY USER\n"), "{after}");
    assert!(
        after.contains("(model openai/gpt-5, thinking low)"),
        "{after}"
    );
    let listing = run.ctxkit(&["compactions", &path]);
    assert!(!listing.contains(&compaction), "{listing}");
}

#[test]
fn branch_summarize_writes_no_summary_when_nothing_left_behind_holds_a_message() {
    let run = Run::new();
    let path = demo(&run, "b.jsonl");
    let labelled = run.ctxkit(&["label", &path, "e7596aac", "hi"]);
    assert!(labelled.starts_with("exit: 0"), "{labelled}");
    // Left behind: the label.
    snapshot!(run.ctxkit(&["branch", &path, "--to", "6c360fcb", "--summarize"]));
    // The marker of that move stands on the target: already there, nothing written.
    let again = run.ctxkit(&["branch", &path, "--to", "6c360fcb", "--summarize"]);
    assert!(
        again.contains("The leaf is already at 6c360fcb; nothing was written"),
        "{again}"
    );
    let context = run.ctxkit(&["context", &path, "--llm"]);
    assert!(!context.contains("No content to summarize"), "{context}");
    let summaries = |text: &str| text.matches("\"type\":\"branch_summary\"").count();
    let file = std::fs::read_to_string(&path).unwrap();
    let demo = std::fs::read_to_string(DEMO).unwrap();
    assert_eq!(
        summaries(&file),
        summaries(&demo),
        "no summary entry written"
    );
    // The target is the leaf itself: nothing moves.
    let leaf = last_of_type(&path, "custom");
    let stayed = run.ctxkit(&["branch", &path, "--to", &leaf, "--summarize"]);
    assert!(stayed.contains("; nothing was written"), "{stayed}");
}

/// QA: `branch --to <user message>` left that message as the leaf, so the next prompt sent two user
/// messages in a row. As Pi's tree navigation: the leaf goes to its parent and its text comes back.
#[test]
fn branch_to_a_user_message_moves_before_it_and_gives_its_text_back() {
    let run = Run::new();
    let path = demo(&run, "u.jsonl");
    let moved = run.ctxkit(&["branch", &path, "--to", "2bb61fc5", "--json"]);
    let json: serde_json::Value =
        serde_json::from_str(moved.strip_prefix("exit: 0\n").unwrap()).unwrap();
    assert_eq!(json["movedTo"], "9745ff40", "{moved}");
    assert_eq!(json["targetId"], "2bb61fc5");
    let marker = last_of_type(&path, "custom");
    assert_eq!(json["leafId"], marker.as_str());
    let text = json["editorText"].as_str().unwrap();
    assert!(!text.is_empty(), "{moved}");
    // The context ends with the assistant before the message, not with the message.
    let context = run.ctxkit(&["context", &path, "--json"]);
    let messages: serde_json::Value =
        serde_json::from_str(context.strip_prefix("exit: 0\n").unwrap()).unwrap();
    let last = messages["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "assistant", "{last}");

    // Another entry as the target stays the leaf, as before, with no text.
    let moved = run.ctxkit(&["branch", &path, "--to", "9de85d39"]);
    assert_eq!(moved, "exit: 0\nMoved the leaf to 9de85d39\n");
    let moved = run.ctxkit(&["branch", &path, "--to", "9de85d39", "--json"]);
    assert!(moved.contains("\"editorText\": null"), "{moved}");
}

/// A user message that is a true root: the leaf goes to the start of the session (a navigation
/// marker as a new root records it); `info`, `tree` and `context` read the file as Pi would.
#[test]
fn branch_to_a_root_user_message_starts_the_session_over() {
    let run = Run::new();
    let path = run.home.path().join("root.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#, "\n",
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"first question","timestamp":1}}"#, "\n",
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"an answer"}],"stopReason":"stop","timestamp":2}}"#, "\n",
        ),
    )
    .unwrap();
    let path = path.display().to_string();
    snapshot!(run.ctxkit(&["branch", &path, "--to", "u1"]));
    let context = run.ctxkit(&["context", &path]);
    assert!(context.contains("0 messages at"), "{context}");
    let info = run.ctxkit(&["info", &path]);
    assert!(info.starts_with("exit: 0"), "{info}");
    let tree = run.ctxkit(&["tree", &path]);
    assert!(tree.contains("custom: ctxkit.navigate  ← leaf"), "{tree}");
    let check = run.ctxkit(&["check", &path]);
    assert!(check.starts_with("exit: 0"), "{check}");
}

/// QA (sweep 9): a reply written after a compaction reports the usage of the compacted context.
/// The undo brings it back as a copy, and its usage stood for the whole restored context: `tokens`
/// counted 3,010 where the context held the demo's whole history, and the chat's check before a
/// prompt let a request past its threshold. A copy's usage now counts nothing, for tokens and
/// spend alike.
#[test]
fn after_an_undo_the_context_is_not_counted_by_a_copied_replys_usage() {
    let run = Run::new();
    let path = demo(&run, "counted.jsonl");
    let tokens = |run: &Run| -> serde_json::Value {
        let output = run.ctxkit(&["tokens", &path, "--json"]);
        serde_json::from_str(output.split_once('\n').unwrap().1).unwrap()
    };
    let whole = tokens(&run)["tokens"].as_u64().unwrap();
    let compacted = run.ctxkit(&["compact", &path, "--keep-recent-tokens", "2000"]);
    assert!(compacted.starts_with("exit: 0"), "{compacted}");
    append_entry(
        &path,
        "b0000001",
        r#""type":"message","message":{"role":"assistant","content":[{"type":"text","text":"Done after the compaction."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":3010,"cost":{"input":0.009,"output":0.00015,"cacheRead":0,"cacheWrite":0,"total":0.00915}},"stopReason":"stop","timestamp":1893456000000}"#,
    );
    assert_eq!(tokens(&run)["tokens"], 3010);
    let spent = run.ctxkit(&["info", &path]);
    let undone = run.ctxkit(&["undo-compact", &path]);
    assert!(undone.starts_with("exit: 0"), "{undone}");
    let after = tokens(&run);
    assert!(
        after["tokens"].as_u64().unwrap() >= whole,
        "{after} after the undo, {whole} before the compaction"
    );
    assert!(
        after["projectedTokens"].as_u64().unwrap() >= whole,
        "{after}"
    );
    let spend_line = |info: &str| {
        info.lines()
            .filter(|line| line.contains("Spend") || line.contains("spend") || line.contains('$'))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        spend_line(&run.ctxkit(&["info", &path])),
        spend_line(&spent),
        "the undo changed the spend"
    );
}

/// QA (2026-12-05): `branch --to` the leaf itself said "Moved the leaf" and appended a navigation
/// marker each time, a new empty branch in the tree.
#[test]
fn branch_to_the_leaf_itself_writes_nothing() {
    let run = Run::new();
    let file = demo(&run, "here.jsonl");
    let leaf = last_of_type(&file, "message");
    let before = std::fs::read(&file).unwrap();
    let output = run.ctxkit(&["branch", &file, "--to", &leaf]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains(&format!(
            "The leaf is already at {leaf}; nothing was written"
        )),
        "{output}"
    );
    let json = run.ctxkit(&["branch", &file, "--to", &leaf, "--json"]);
    assert!(json.contains(&format!("\"leafId\": \"{leaf}\"")), "{json}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

/// A tester's report: `branch --to <a user message>` run again said "The leaf is already at
/// <the message>" (the leaf stands on its parent; the message is not on the branch) and gave no
/// text to send again, which the first run gave.
#[test]
fn branch_to_a_user_message_again_says_the_leaf_is_before_it_and_gives_its_text() {
    let run = Run::new();
    let file = demo(&run, "again.jsonl");
    let first = run.ctxkit(&["branch", &file, "--to", "082a0069"]);
    assert!(
        first.contains("Wire the POST /reservations endpoint."),
        "{first}"
    );
    let before = std::fs::read(&file).unwrap();
    let again = run.ctxkit(&["branch", &file, "--to", "082a0069"]);
    assert!(
        again.contains("The leaf is already before the message 082a0069 (at ")
            && again.contains("nothing was written")
            && again.contains("Wire the POST /reservations endpoint."),
        "{again}"
    );
    let json = run.ctxkit(&["branch", &file, "--to", "082a0069", "--json"]);
    assert!(
        json.contains("\"editorText\": \"Wire the POST /reservations endpoint.\""),
        "{json}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

/// A model configured but its key absent, or a retry setting or model id the model's client
/// would refuse: a leaf move without a summary and a dry-run plan call no model, so they go on
/// (both refused with "No API key…"); the commands that summarize still refuse.
#[test]
fn a_move_and_a_plan_need_no_model_key_nor_its_settings() {
    let run = Run::new();
    let path = demo(&run, "keyless.jsonl");
    // Moved on a copy of its own, so the plans see the whole session.
    let moving = demo(&run, "moving.jsonl");
    let settings = run.home.path().join("settings.json");
    for text in [
        r#"{"defaultModel": "anthropic/claude-sonnet-4-5"}"#,
        r#"{"defaultModel": "anthropc/claude-sonnet-4-5"}"#,
        r#"{"retry": {"enabled": "yes"}}"#,
    ] {
        std::fs::write(&settings, text).unwrap();
        let plan = run.ctxkit(&[
            "compact",
            &path,
            "--keep-recent-tokens",
            "2000",
            "--dry-run",
        ]);
        assert!(
            plan.starts_with("exit: 0\nWould summarize "),
            "{text}: {plan}"
        );
        let summary = run.ctxkit(&[
            "compact",
            &path,
            "--keep-recent-tokens",
            "2000",
            "--preview",
        ]);
        assert!(summary.starts_with("exit: 3\n"), "{text}: {summary}");
        let summarized = run.ctxkit(&["branch", &moving, "--to", "61c45bec", "--summarize"]);
        assert!(summarized.starts_with("exit: 3\n"), "{text}: {summarized}");
        // Moved the first time, already there the next ones.
        let moved = run.ctxkit(&["branch", &moving, "--to", "61c45bec"]);
        assert!(moved.starts_with("exit: 0\n"), "{text}: {moved}");
    }
    // A wrong value a plan reads still stops it.
    std::fs::write(&settings, r#"{"compaction": {"reserveTokens": "lots"}}"#).unwrap();
    let plan = run.ctxkit(&["compact", &path, "--dry-run"]);
    assert!(plan.contains("compaction.reserveTokens"), "{plan}");
}

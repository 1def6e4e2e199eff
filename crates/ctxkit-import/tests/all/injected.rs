//! Injected context in the shapes real sessions have (hand-written, made-up content): the first
//! message a listing shows is the user's request, never what the agent put before it.

use std::path::Path;

use ctxkit_import::{SourceFormat, list_foreign_sessions};

/// The first message of the one session listed under `root`.
fn first_message(format: SourceFormat, root: &Path) -> String {
    let (records, skipped) = list_foreign_sessions(format, root).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(records.len(), 1);
    records[0].first_message.clone()
}

fn write(path: &Path, lines: &[serde_json::Value]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(path, text).unwrap();
}

fn codex_user(text: &str) -> serde_json::Value {
    serde_json::json!({"timestamp":"2026-04-01T06:00:02.000Z","type":"response_item","payload":{
        "type":"message","role":"user","content":[{"type":"input_text","text":text}]}})
}

/// Codex Desktop (`originator` "Codex Desktop", `source` "vscode"): a developer message, the
/// `AGENTS.md` and environment message, then the request behind the IDE's context sections.
#[test]
fn codex_desktop_ide_context_is_not_the_first_message() {
    let temp = tempfile::tempdir().unwrap();
    let rollout = temp
        .path()
        .join("2026/04/01/rollout-2026-04-01T06-00-00-019d47a1-0000-7000-8000-000000000001.jsonl");
    write(
        &rollout,
        &[
            serde_json::json!({"timestamp":"2026-04-01T06:00:00.000Z","type":"session_meta","payload":{
                "id":"019d47a1-0000-7000-8000-000000000001","timestamp":"2026-04-01T06:00:00.000Z",
                "cwd":"C:\\Users\\dev\\vault","originator":"Codex Desktop","cli_version":"0.118.0-alpha.2",
                "source":"vscode","model_provider":"openai","base_instructions":{"text":"You are Codex."}}}),
            serde_json::json!({"timestamp":"2026-04-01T06:00:01.000Z","type":"event_msg","payload":{
                "type":"task_started","turn_id":"t1","model_context_window":258400}}),
            serde_json::json!({"timestamp":"2026-04-01T06:00:01.000Z","type":"response_item","payload":{
                "type":"message","role":"developer","content":[{"type":"input_text",
                "text":"<permissions instructions>\nSandbox: workspace-write.\n</permissions instructions>"}]}}),
            codex_user(
                "# AGENTS.md instructions for C:\\Users\\dev\\vault\n\n<INSTRUCTIONS>\nKeep notes short.\n\
                 </INSTRUCTIONS>\n<environment_context>\n  <cwd>C:\\Users\\dev\\vault</cwd>\n  \
                 <shell>powershell</shell>\n</environment_context>",
            ),
            serde_json::json!({"timestamp":"2026-04-01T06:00:02.000Z","type":"turn_context","payload":{
                "turn_id":"t1","cwd":"C:\\Users\\dev\\vault","model":"gpt-5.4","effort":"medium"}}),
            codex_user(
                "# Context from my IDE setup:\n\n## Open tabs:\n- README.md: README.md\n\n\
                 ## My request for Codex:\nTag every note in inbox/ with #todo\n",
            ),
            serde_json::json!({"timestamp":"2026-04-01T06:00:03.000Z","type":"response_item","payload":{
                "type":"message","role":"assistant","content":[{"type":"output_text","text":"Tagged 3 notes."}]}}),
        ],
    );
    assert_eq!(
        first_message(SourceFormat::Codex, temp.path()),
        "Tag every note in inbox/ with #todo"
    );
}

/// Claude Code: a skill's text and an interruption marker come before the user's words.
#[test]
fn claude_code_skill_text_and_markers_are_not_the_first_message() {
    let temp = tempfile::tempdir().unwrap();
    let record = |uuid: &str, parent: Option<&str>, meta: bool, text: &str| {
        serde_json::json!({"parentUuid":parent,"isSidechain":false,"userType":"external",
            "cwd":"/home/dev/app","sessionId":"5e6f7a8b-0000-4000-8000-000000000001","version":"2.1.3",
            "type":"user","isMeta":meta,"uuid":uuid,"timestamp":"2026-04-01T06:00:00.000Z",
            "message":{"role":"user","content":[{"type":"text","text":text}]}})
    };
    write(
        &temp
            .path()
            .join("-home-dev-app/5e6f7a8b-0000-4000-8000-000000000001.jsonl"),
        &[
            record(
                "u1",
                None,
                true,
                "Base directory for this skill: /home/dev/.claude/skills/tdd\n\n# TDD\nTest first.",
            ),
            record("u2", Some("u1"), false, "[Request interrupted by user]"),
            record(
                "u3",
                Some("u2"),
                false,
                "Add a retry to fetch_feed in src/feed.rs",
            ),
            serde_json::json!({"parentUuid":"u3","isSidechain":false,"type":"assistant","uuid":"a1",
                "sessionId":"5e6f7a8b-0000-4000-8000-000000000001","cwd":"/home/dev/app",
                "timestamp":"2026-04-01T06:00:01.000Z","message":{"id":"msg_1","role":"assistant",
                "model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],
                "usage":{"input_tokens":10,"output_tokens":2}}}),
        ],
    );
    assert_eq!(
        first_message(SourceFormat::ClaudeCode, temp.path()),
        "Add a retry to fetch_feed in src/feed.rs"
    );
}

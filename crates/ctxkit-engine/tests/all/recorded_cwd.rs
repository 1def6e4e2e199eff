//! A session's recorded `cwd` is a record, not a grant: a session file someone sent names its own,
//! and the engine's hooks and file context work in the project the user chose
//! (`EngineOptions::project`), never there.

use ctxkit_protocol::AgentMessage;
use ctxkit_settings::CommandHookConfig;
use serde_json::json;

use crate::support::*;

/// A folder holding `scripts/after.sh` and `notes.txt`, each saying `who`.
fn folder_of(who: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fill(dir.path(), who);
    dir
}

fn fill(dir: &std::path::Path, who: &str) {
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("scripts/after.sh"),
        format!("cat > /dev/null; echo {who} > ran\n"),
    )
    .unwrap();
    std::fs::write(dir.join("notes.txt"), format!("NOTES OF {who}\n")).unwrap();
}

/// Attack: a trusted project's hook `["sh", "scripts/after.sh"]` ran in the `cwd` the session
/// file records, so `ctxkit chat --session sent.jsonl` (or `ctxkit compact sent.jsonl`) in the
/// project ran the sender's `scripts/after.sh` from the folder the file names.
#[tokio::test]
async fn a_hook_runs_in_the_project_not_in_the_cwd_a_session_file_records() {
    let elsewhere = folder_of("elsewhere");
    let mut settings = settings(2_000);
    settings.hooks = vec![CommandHookConfig {
        command: vec!["sh".to_owned(), "scripts/after.sh".to_owned()],
        events: vec!["before_compact".to_owned()],
        timeout_ms: 10_000,
        pass_env: Vec::new(),
        pinned_scripts: Vec::new(),
    }];
    let recorded = elsewhere.path().display().to_string();
    let harness = Harness::recorded_in(&recorded, settings, [Answer::Text("SUMMARY")]);
    fill(harness.dir.path(), "project");
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap();
    assert!(
        !elsewhere.path().join("ran").exists(),
        "the recorded folder's script ran"
    );
    let ran = std::fs::read_to_string(harness.dir.path().join("ran")).unwrap();
    assert_eq!(ran, "project\n");
    assert_eq!(harness.engine.project(), harness.dir.path());
}

/// Attack: `serve` loads the settings of the folder it started in (a trusted project, whose hook
/// `["sh", "scripts/after.sh"]` pins that project's script), and a client's run works in another
/// project (`agent.run {"cwd": …}`, a `session.create` elsewhere). The hook ran there, so it ran
/// that project's `scripts/after.sh`, which nobody trusted: a cloned repository's, or one the
/// model had just written (a write in the project asks nothing). The pin was checked on the
/// trusted project's file only. Now the script the hook would run is checked where it runs.
#[tokio::test]
async fn a_trusted_hook_runs_no_script_of_another_project() {
    let trusted = folder_of("trusted");
    let script = std::fs::canonicalize(trusted.path().join("scripts/after.sh")).unwrap();
    let mut settings = settings(2_000);
    settings.hooks = vec![CommandHookConfig {
        command: vec!["sh".to_owned(), "scripts/after.sh".to_owned()],
        events: vec!["before_compact".to_owned()],
        timeout_ms: 10_000,
        pass_env: Vec::new(),
        pinned_scripts: vec![ctxkit_settings::PinnedScript {
            named: "scripts/after.sh".into(),
            digest: ctxkit_settings::script_digest(&script).unwrap(),
            path: script,
        }],
    }];
    let mut harness = Harness::recorded_in(
        &trusted.path().display().to_string(),
        settings,
        [Answer::Text("SUMMARY"), Answer::Text("SUMMARY")],
    );
    fill(harness.dir.path(), "untrusted");
    harness.turn("first", 100).await;
    harness.engine.compact(None).await.unwrap();
    assert!(
        !harness.dir.path().join("ran").exists(),
        "the other project's script ran"
    );
    let errors: Vec<String> = harness
        .drain()
        .into_iter()
        .filter_map(|event| {
            if let ctxkit_engine::EngineEvent::HookError { error, .. } = event {
                Some(error)
            } else {
                None
            }
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|error| error.contains("not the script trusted")),
        "{errors:?}"
    );
    // In the project it was trusted in, it runs.
    harness.engine.set_project(trusted.path().to_path_buf());
    harness.turn("second", 100).await;
    harness.engine.compact(None).await.unwrap();
    let ran = std::fs::read_to_string(trusted.path().join("ran")).unwrap();
    assert_eq!(ran, "trusted\n");
}

fn read_call(path: &str) -> AgentMessage {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": path}}],
        "provider": PROVIDER, "model": MODEL, "api": "faux",
        "usage": {"input": 100, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 100},
        "stopReason": "toolUse",
        "timestamp": now_ms(),
    }))
    .unwrap()
}

fn read_result() -> AgentMessage {
    serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": "c1", "toolName": "read",
        "content": [{"type": "text", "text": "(read)"}], "isError": false, "timestamp": now_ms(),
    }))
    .unwrap()
}

/// Attack: `compaction.fileContext` read the touched files beneath the recorded `cwd` (a `"cwd":
/// "/"` made every file of the machine but the denied places "the project's") and sent them to
/// the summary model; it reads beneath the project.
#[tokio::test]
async fn the_file_context_is_read_in_the_project_not_in_the_recorded_cwd() {
    let elsewhere = folder_of("elsewhere");
    let mut settings = settings(2_000);
    settings.compaction.file_context = true;
    let recorded = elsewhere.path().display().to_string();
    let harness = Harness::recorded_in(&recorded, settings, [Answer::Text("SUMMARY")]);
    fill(harness.dir.path(), "project");
    harness
        .engine
        .append(user("look at the notes"))
        .await
        .unwrap();
    harness.engine.append(read_call("notes.txt")).await.unwrap();
    harness.engine.append(read_result()).await.unwrap();
    harness.turn("next", 200).await;
    harness.engine.compact(None).await.unwrap();
    let request = harness.summarizer.last_request();
    assert!(
        request.user_text.contains("NOTES OF project"),
        "{}",
        request.user_text
    );
    assert!(!request.user_text.contains("NOTES OF elsewhere"));
}

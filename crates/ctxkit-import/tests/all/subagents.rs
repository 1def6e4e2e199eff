//! Subagent transcripts: found beside their session, imported as linked child sessions, listed
//! under their parent.

use std::path::Path;

use ctxkit_import::{
    SourceFormat, find_subagents, import_file, import_subagent, list_foreign_sessions,
};

use crate::shapes::{imported_context, shape};

#[test]
fn claude_code_subagents_are_found_and_imported_as_children() {
    let project = shape("claude-projects/c--Users-dev-app");
    let parent = project.join("5e6f7a8b-parent.jsonl");
    let (session, context) = imported_context(&parent);
    assert_eq!(session.header.id, "5e6f7a8b-parent");
    assert_eq!(
        context,
        [
            "user: Find where the session cookie is set, use an explorer agent.",
            "assistant: <call toolu_task1 Task>",
            "toolResult toolu_task1 Task: The cookie is set in src/auth/session.ts:42.",
            "assistant: It is set in src/auth/session.ts, line 42.",
        ]
    );
    let found = find_subagents(SourceFormat::ClaudeCode, &parent, "5e6f7a8b-parent").unwrap();
    let names: Vec<String> = found
        .iter()
        .map(|found| {
            found
                .path
                .strip_prefix(&project)
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(
        names,
        [
            "5e6f7a8b-parent/subagents/agent-a1b2c3.jsonl",
            "5e6f7a8b-parent/subagents/workflows/wf_01/agent-w1.jsonl",
            "agent-d4e5f6.jsonl"
        ]
    );
    assert_eq!(
        found[0]
            .meta
            .as_ref()
            .and_then(|meta| meta.get("agentType")),
        Some(&serde_json::json!("Explore"))
    );
    let written_parent = Path::new("/sessions/parent.jsonl");
    let child = import_subagent(SourceFormat::ClaudeCode, &found[0], written_parent).unwrap();
    assert_eq!(child.header.id, "agent-a1b2c3");
    assert_eq!(
        child.header.parent_session.as_deref(),
        Some("/sessions/parent.jsonl")
    );
    assert_eq!(
        child.header.extra["importedFrom"]["parentSessionId"],
        serde_json::json!("5e6f7a8b-parent")
    );
    assert_eq!(
        child.header.extra["subagent"]["description"],
        serde_json::json!("Find cookie code")
    );
    let (_, child_context) = imported_context(&found[0].path);
    assert_eq!(
        child_context,
        [
            "user: Where is the session cookie set?",
            "assistant: <call toolu_s1 Grep>",
            "toolResult toolu_s1 Grep: src\\auth\\session.ts:42: res.setHeader('Set-Cookie', cookie)",
            "assistant: The cookie is set in src/auth/session.ts:42.",
        ]
    );
    let older = import_file(&found[2].path, None).unwrap();
    assert_eq!(older.header.id, "agent-d4e5f6");
}

#[test]
fn listings_show_subagents_under_their_parent() {
    let (claude, skipped) =
        list_foreign_sessions(SourceFormat::ClaudeCode, &shape("claude-projects")).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let rows: Vec<(String, Option<String>)> = claude
        .iter()
        .map(|record| {
            let name = |path: &str| {
                Path::new(path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            };
            (
                name(&record.path),
                record.parent_session_path.as_deref().map(name),
            )
        })
        .collect();
    let parent = Some("5e6f7a8b-parent.jsonl".to_owned());
    assert_eq!(
        rows,
        [
            ("5e6f7a8b-parent.jsonl".to_owned(), None),
            ("agent-a1b2c3.jsonl".to_owned(), parent.clone()),
            ("agent-d4e5f6.jsonl".to_owned(), parent.clone()),
            ("agent-w1.jsonl".to_owned(), parent),
        ]
    );
    assert_eq!(claude[0].name.as_deref(), Some("Cookie hunt"));

    let root = shape("codex-sessions");
    let (codex, _) = list_foreign_sessions(SourceFormat::Codex, &root).unwrap();
    let ids: Vec<(&str, bool)> = codex
        .iter()
        .map(|record| (record.id.as_str(), record.parent_session_path.is_some()))
        .collect();
    assert_eq!(ids, [("019ccc01-parent", false), ("019ccc02-worker", true)]);
    let parent = Path::new(&codex[0].path);
    let found = find_subagents(SourceFormat::Codex, parent, "019ccc01-parent").unwrap();
    assert_eq!(found.len(), 1);
    assert!(
        found[0]
            .path
            .ends_with("rollout-2026-03-09T11-00-04-019ccc02-worker.jsonl")
    );
}

/// Codex writes a thread under the day it started: a thread spawned after midnight, or when the
/// session was resumed another day, is in a later day's folder. The listing showed it under its
/// parent while the import left it out (QA r102); a thread of an earlier day, another parent's,
/// or one in a folder that is no day folder is not the parent's.
#[test]
fn a_codex_thread_spawned_on_a_later_day_is_found_with_its_parent() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("sessions");
    let rollout = |day: &str, name: &str, id: &str, parent: Option<&str>| {
        let folder = root.join(day);
        std::fs::create_dir_all(&folder).unwrap();
        let source = match parent {
            Some(parent) => serde_json::json!({"subagent": {"thread_spawn":
                {"parent_thread_id": parent, "depth": 1}}}),
            None => serde_json::json!("cli"),
        };
        let meta = serde_json::json!({"timestamp": "2026-04-14T23:50:00.000Z",
            "type": "session_meta", "payload": {"id": id, "cwd": "/home/dev",
            "timestamp": "2026-04-14T23:50:00.000Z", "source": source}});
        let path = folder.join(format!("rollout-{name}.jsonl"));
        std::fs::write(&path, format!("{meta}\n")).unwrap();
        path
    };
    let parent = rollout("2026/04/14", "a-parent", "parent", None);
    rollout("2026/04/14", "b-same-day", "same-day", Some("parent"));
    rollout("2026/04/13", "c-day-before", "day-before", Some("parent"));
    rollout(
        "2026/04/15",
        "d-after-midnight",
        "after-midnight",
        Some("parent"),
    );
    rollout("2026/05/02", "e-resumed", "resumed", Some("parent"));
    rollout("2026/05/02", "f-other", "other", Some("another-parent"));
    rollout("2026/05/xx", "g-no-day", "no-day", Some("parent"));
    let found: Vec<String> = find_subagents(SourceFormat::Codex, &parent, "parent")
        .unwrap()
        .iter()
        .map(|subagent| {
            let relative = subagent.path.strip_prefix(&root).unwrap();
            relative.to_string_lossy().replace('\\', "/")
        })
        .collect();
    assert_eq!(
        found,
        [
            "2026/04/14/rollout-b-same-day.jsonl",
            "2026/04/15/rollout-d-after-midnight.jsonl",
            "2026/05/02/rollout-e-resumed.jsonl",
        ]
    );
}

#[test]
fn a_codex_spawned_thread_imports_as_a_child_of_its_parent() {
    let root = shape("codex-sessions");
    let day = root.join("2026/03/09");
    let parent = day.join("rollout-2026-03-09T11-00-00-019ccc01-parent.jsonl");
    let found = find_subagents(SourceFormat::Codex, &parent, "019ccc01-parent").unwrap();
    assert_eq!(found.len(), 1);
    let child = import_subagent(
        SourceFormat::Codex,
        &found[0],
        Path::new("/out/parent.jsonl"),
    )
    .unwrap();
    assert_eq!(child.header.id, "019ccc02-worker");
    assert_eq!(
        child.header.parent_session.as_deref(),
        Some("/out/parent.jsonl")
    );
    assert_eq!(
        child.header.extra["importedFrom"]["parentSessionId"],
        serde_json::json!("019ccc01-parent")
    );
    let (_, context) = imported_context(&found[0].path);
    assert_eq!(
        context,
        [
            "user: check migrations",
            "assistant: 2 migrations pending: 0007_users, 0008_tokens.",
        ]
    );
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
                files.push((path.clone(), std::fs::read(&path).unwrap(), modified));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn importing_sessions_with_their_subagents_writes_nothing_into_the_source_trees() {
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join("out");
    for (format, tree, parent, id) in [
        (
            SourceFormat::ClaudeCode,
            "claude-projects",
            "c--Users-dev-app/5e6f7a8b-parent.jsonl",
            "5e6f7a8b-parent",
        ),
        (
            SourceFormat::Codex,
            "codex-sessions",
            "2026/03/09/rollout-2026-03-09T11-00-00-019ccc01-parent.jsonl",
            "019ccc01-parent",
        ),
    ] {
        let root = shape(tree);
        let before = snapshot(&root);
        let parent = root.join(parent);
        for _ in 0..2 {
            let session = import_file(&parent, Some(format)).unwrap();
            let target = out.join(session.file_name());
            session.write_to(&target).unwrap();
            for subagent in find_subagents(format, &parent, id).unwrap() {
                let child = import_subagent(format, &subagent, &target).unwrap();
                child.write_to(&out.join(child.file_name())).unwrap();
            }
            list_foreign_sessions(format, &root).unwrap();
        }
        assert_eq!(snapshot(&root), before, "{tree} changed");
    }
}

/// A link among a transcript's subagents (to another private transcript, say) is not one of them.
#[test]
fn a_linked_subagent_transcript_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let source = shape("claude-projects/c--Users-dev-app");
    let project = dir.path().join("app");
    std::fs::create_dir_all(project.join("5e6f7a8b-parent/subagents")).unwrap();
    let parent = project.join("5e6f7a8b-parent.jsonl");
    std::fs::copy(source.join("5e6f7a8b-parent.jsonl"), &parent).unwrap();
    let private = dir.path().join("private-agent.jsonl");
    std::fs::copy(
        source.join("5e6f7a8b-parent/subagents/agent-a1b2c3.jsonl"),
        &private,
    )
    .unwrap();
    let linked = project.join("5e6f7a8b-parent/subagents/agent-zz.jsonl");
    std::os::unix::fs::symlink(&private, &linked).unwrap();
    assert!(
        find_subagents(SourceFormat::ClaudeCode, &parent, "5e6f7a8b-parent")
            .unwrap()
            .is_empty()
    );
    // The same file, copied in, is one.
    std::fs::remove_file(&linked).unwrap();
    std::fs::copy(&private, &linked).unwrap();
    assert_eq!(
        find_subagents(SourceFormat::ClaudeCode, &parent, "5e6f7a8b-parent")
            .unwrap()
            .len(),
        1
    );
}

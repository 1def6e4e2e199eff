//! OpenCode: the 1.x file store and the 2.x SQLite database, read-only, with subagent sessions.

use std::path::{Path, PathBuf};

use ctxkit_import::{
    ImportedSession, SourceFormat, import_file, import_opencode, list_foreign_sessions,
};
use ctxkit_protocol::EntryKind;

use crate::shapes::{describe, imported_context, shape};

/// Every entry that carries conversation, in file order: messages and compactions.
pub fn conversation(session: &ImportedSession) -> Vec<String> {
    session
        .entries()
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message(message) => Some(describe(message)),
            EntryKind::Compaction(compaction) => {
                Some(format!("compaction: {}", compaction.summary))
            }
            EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => None,
        })
        .collect()
}

fn session_file() -> PathBuf {
    shape("opencode-1x/storage/session/4f1e2d3c5b6a7980/ses_5d0a1b2c3ffeRssFeedParent.json")
}

#[test]
fn opencode_file_store_sessions_import_step_by_step() {
    let (session, context) = imported_context(&session_file());
    assert_eq!(session.format, SourceFormat::OpenCode);
    assert_eq!(session.header.id, "ses_5d0a1b2c3ffeRssFeedParent");
    assert_eq!(session.header.cwd, "/home/dev/blog");
    assert_eq!(session.header.timestamp, "2025-10-09T08:53:20.000Z");
    assert_eq!(
        conversation(&session),
        [
            "user: Add an RSS feed to the blog. Here is the design: | <image image/png 96B>",
            "assistant: <thinking Find the post list first.> | Reading the posts module. | <call toolu_r1 read> | <call toolu_g1 glob>",
            "toolResult toolu_r1 read: export const posts = loadPosts()",
            "toolResult toolu_g1 glob: [Old tool result content cleared]",
            "assistant: <call toolu_t1 task>",
            "toolResult toolu_t1 task: Use the `feed` package.",
            "assistant: <call toolu_e1 edit>",
            "toolResult toolu_e1 edit: File not found: src/feed.ts",
            "assistant: Created src/feed.ts with the `feed` package.",
            "compaction: Summary: the user asked for an RSS feed; src/feed.ts now builds it with the `feed` package.",
            "user: Now add a link to it in the header.",
            "assistant: Editing the header. | <call toolu_e2 edit>",
            "toolResult toolu_e2 edit: [Tool execution was interrupted]",
        ]
    );
    assert_eq!(
        context,
        [
            "compactionSummary: Summary: the user asked for an RSS feed; src/feed.ts now builds it with the `feed` package.",
            "user: Now add a link to it in the header.",
            "assistant: Editing the header. | <call toolu_e2 edit>",
            "toolResult toolu_e2 edit: [Tool execution was interrupted]",
        ]
    );
    let text = session.to_jsonl().unwrap();
    assert!(text.contains("\"stopReason\":\"aborted\""), "{text}");
    assert!(text.contains("\"name\":\"Add an RSS feed\""));
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn opencode_subagent_sessions_come_along() {
    let sessions = import_opencode(&session_file()).unwrap();
    let ids: Vec<&str> = sessions
        .iter()
        .map(|session| session.header.id.as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "ses_5d0a1b2c3ffeRssFeedParent",
            "ses_5d0a1b2c4ffeRssFeedChild"
        ]
    );
    assert_eq!(
        sessions[1].header.extra["importedFrom"]["parentSessionId"],
        serde_json::json!("ses_5d0a1b2c3ffeRssFeedParent")
    );
    assert_eq!(
        conversation(&sessions[1]),
        [
            "user: Which npm package writes RSS?",
            "assistant: Use the `feed` package."
        ]
    );
}

/// Builds the 2.x fixture database from its SQL in `dir`.
fn database(dir: &Path) -> PathBuf {
    database_from(dir, "opencode-2x.sql")
}

/// Builds `opencode.db` in `dir` from the fixture SQL `sql_file`.
pub fn database_from(dir: &Path, sql_file: &str) -> PathBuf {
    let path = dir.join("opencode.db");
    let sql = std::fs::read_to_string(shape(sql_file)).unwrap();
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection.execute_batch(&sql).unwrap();
    drop(connection);
    path
}

pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn opencode_databases_import_read_only_with_the_compaction_tail() {
    let temp = tempfile::tempdir().unwrap();
    let path = database(temp.path());
    assert_eq!(listing(temp.path()), ["opencode.db"]);
    let before = std::fs::read(&path).unwrap();
    let (session, context) = imported_context(&path);
    assert_eq!(session.header.id, "ses_6e1f00000001ApiTimeouts");
    assert_eq!(session.header.cwd, "C:\\Users\\dev\\api");
    assert_eq!(
        conversation(&session),
        [
            "user: The client times out after 5 s; raise it to 30 s.",
            "assistant: <call call_x1 task>",
            "toolResult call_x1 task: src\\http.ts:12 sets timeout: 5000",
            "assistant: Raised the timeout to 30 s in src/http.ts.",
            "user: Also the retry delay: 2 s.",
            "compaction: Summary: the HTTP timeout is now 30 s (src/http.ts).",
            "user: Thanks, ship it.",
            "assistant: Done.",
        ]
    );
    // The compaction keeps the tail OpenCode kept (`tail_start_id`).
    assert_eq!(
        context,
        [
            "compactionSummary: Summary: the HTTP timeout is now 30 s (src/http.ts).",
            "user: Also the retry delay: 2 s.",
            "user: Thanks, ship it.",
            "assistant: Done.",
        ]
    );
    let compaction = session
        .entries()
        .iter()
        .find_map(|entry| match &entry.kind {
            EntryKind::Compaction(compaction) => Some(compaction.tokens_before),
            EntryKind::Message(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => None,
        });
    assert_eq!(compaction, Some(6000));
    // A chosen session, and its subagent.
    let chosen = PathBuf::from(format!("{}#ses_6e1f00000000Older", path.display()));
    let older = import_file(&chosen, None).unwrap();
    assert_eq!(conversation(&older), ["user: Hello"]);
    let with_child = import_opencode(&path).unwrap();
    assert_eq!(with_child.len(), 2);
    assert_eq!(
        conversation(&with_child[1]),
        [
            "user: Where is the HTTP timeout set?",
            "assistant: src\\http.ts:12 sets timeout: 5000"
        ]
    );
    let missing = PathBuf::from(format!("{}#ses_nope", path.display()));
    assert!(matches!(
        import_file(&missing, None),
        Err(ctxkit_import::ImportError::SessionNotFound { .. })
    ));
    // Nothing was written to or beside the database.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(listing(temp.path()), ["opencode.db"]);
}

#[test]
fn opencode_sessions_are_listed_with_subagents_under_their_parent() {
    let temp = tempfile::tempdir().unwrap();
    database(temp.path());
    let (records, skipped) = list_foreign_sessions(SourceFormat::OpenCode, temp.path()).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let rows: Vec<(String, bool)> = records
        .iter()
        .map(|record| {
            let id = record.path.rsplit_once('#').unwrap().1.to_owned();
            (id, record.parent_session_path.is_some())
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("ses_6e1f00000001ApiTimeouts".to_owned(), false),
            ("ses_6e1f00000002Explore".to_owned(), true),
            ("ses_6e1f00000000Older".to_owned(), false),
        ]
    );
    let (files, _) = list_foreign_sessions(SourceFormat::OpenCode, &shape("opencode-1x")).unwrap();
    let names: Vec<Option<&str>> = files.iter().map(|record| record.name.as_deref()).collect();
    assert_eq!(
        names,
        [
            Some("Add an RSS feed"),
            Some("Find a feed library (@general subagent)"),
            Some("Unrelated"),
        ]
    );
    // The `storage` folder itself, named as the root, lists the same sessions.
    let (from_storage, _) = list_foreign_sessions(
        SourceFormat::OpenCode,
        &shape("opencode-1x").join("storage"),
    )
    .unwrap();
    assert_eq!(from_storage.len(), files.len());
}

/// QA: an imported OpenCode session showed its replies as "of unknown price" in `ctxkit info`:
/// the dollars OpenCode recorded per step (`step-finish.cost`, the message's `cost`) were dropped.
/// Each reply now carries its step's cost as `usage.cost.total`, and a compaction summary's call
/// is recorded as ctxkit records its own (`details.summarizer`, `details.usage`).
#[test]
fn opencode_costs_are_carried_into_the_imported_usage() {
    let (session, _) = imported_context(&session_file());
    let entries = session.entries();
    let costs: Vec<Option<f64>> = entries
        .iter()
        .filter_map(|entry| {
            let EntryKind::Message(message) = &entry.kind else {
                return None;
            };
            let reply = message.as_assistant()?;
            Some(reply.usage.as_ref()?.cost.as_ref().map(|cost| cost.total))
        })
        .collect();
    assert_eq!(
        costs,
        [
            Some(0.004),
            Some(0.003),
            Some(0.002),
            Some(0.002),
            Some(0.01)
        ]
    );
    let details = entries
        .iter()
        .find_map(|entry| entry.kind.as_compaction()?.details.clone())
        .unwrap();
    assert_eq!(details["usage"][0]["cost"]["total"], 0.001, "{details}");
    assert!(details["summarizer"].as_str().is_some(), "{details}");
}

/// Each step of an OpenCode reply is its own model call, so it gets its own time: the message's
/// for the first, then the first time its parts record, else a millisecond after the step before
/// (two steps with the message's time and the same usage were counted as one call).
#[test]
fn opencode_steps_take_their_own_time() {
    let (session, _) = imported_context(&session_file());
    let times: Vec<Option<i64>> = session
        .entries()
        .iter()
        .filter_map(|entry| {
            let EntryKind::Message(message) = &entry.kind else {
                return None;
            };
            Some(message.as_assistant()?.timestamp)
        })
        .collect();
    assert_eq!(
        times,
        [
            Some(1_760_000_002_000),
            Some(1_760_000_020_000),
            Some(1_760_000_031_000),
            Some(1_760_000_031_001),
            Some(1_760_000_071_000),
        ]
    );
}

/// Copies the 1.x store fixture to `dir`; returns its session file.
fn copied_store(dir: &Path) -> PathBuf {
    let source = shape("opencode-1x");
    let mut stack = vec![source.clone()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let target = dir.join(entry.path().strip_prefix(&source).unwrap());
            if entry.file_type().unwrap().is_dir() {
                std::fs::create_dir_all(&target).unwrap();
                stack.push(entry.path());
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }
    dir.join("storage/session/4f1e2d3c5b6a7980/ses_5d0a1b2c3ffeRssFeedParent.json")
}

/// An OpenCode record's id names the folder of its messages: an id that is a path, or a folder
/// that is a link, must not read another folder's JSON into the import.
#[test]
fn an_opencode_id_reads_no_folder_outside_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let session_file = copied_store(&dir.path().join("store"));
    let messages = dir
        .path()
        .join("store/storage/message/ses_5d0a1b2c3ffeRssFeedParent");
    // The session's messages, moved outside the store, stand for another folder's JSON.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::rename(&messages, &elsewhere).unwrap();
    let text = std::fs::read_to_string(&session_file).unwrap();
    let aimed = text.replace(
        "\"ses_5d0a1b2c3ffeRssFeedParent\"",
        &serde_json::to_string(elsewhere.to_str().unwrap()).unwrap(),
    );
    assert_ne!(aimed, text);
    std::fs::write(&session_file, &aimed).unwrap();
    let read = |path: &Path| {
        import_file(path, None)
            .map(|session| conversation(&session).join("\n"))
            .unwrap_or_default()
    };
    assert!(!read(&session_file).contains("RSS feed"));
    // The same through a link in place of the session's message folder.
    std::fs::write(&session_file, &text).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &messages).unwrap();
    assert!(!read(&session_file).contains("RSS feed"));
    // Put back as a folder, it is read.
    std::fs::remove_file(&messages).unwrap();
    std::fs::rename(&elsewhere, &messages).unwrap();
    assert!(read(&session_file).contains("RSS feed"));
}

/// Found on a real database (1.17): a session's history in `message` rows and its one model
/// switch as a `session_message` row. The switch made the rows created at or before it count as
/// moved into `session_message`, and the first prompt, its reply and the user's task were dropped
/// with no issue. Switches are events, not history: every `message` row is imported, each switch
/// before the prompt that made it.
#[test]
fn switches_recorded_beside_message_rows_hide_no_message() {
    let temp = tempfile::tempdir().unwrap();
    let path = database_from(temp.path(), "opencode-switch-events.sql");
    let (session, context) = imported_context(&path);
    assert_eq!(session.header.id, "ses_8a0000000001Portfolio");
    let entries: Vec<String> = session
        .entries()
        .iter()
        .map(|entry| match &entry.kind {
            EntryKind::Message(message) => crate::shapes::describe(message),
            EntryKind::ModelChange(change) => {
                format!("model_change {}/{}", change.provider, change.model_id)
            }
            EntryKind::Custom(custom) => format!("custom {}", custom.custom_type),
            EntryKind::SessionInfo(info) => format!("session_info {:?}", info.name),
            EntryKind::Compaction(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => format!("other entry {}", entry.id),
        })
        .collect();
    assert_eq!(
        entries,
        [
            "session_info Some(\"Build a portfolio page\")",
            "user: hi",
            "assistant: Hello! How can I help you?",
            "model_change opencode/large-model",
            "user: Build a single page portfolio about me.",
            "assistant: Which sections should it have?",
            "custom import.opencode.agent_switched",
            "user: About, projects and contact.",
            "assistant: Plan: three sections, one page.",
        ]
    );
    assert_eq!(context.first().map(String::as_str), Some("user: hi"));
    assert_eq!(context.len(), 6);
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

/// QA: one empty part file (a torn write) made the whole 1.x session unimportable ("holds no
/// readable records", naming the part) and dropped it from the listing; one byte that is not
/// UTF-8 in a part failed it too. Each bad record file is left out and reported, the rest imported.
#[test]
fn a_damaged_record_file_costs_only_itself() {
    use ctxkit_import::IssueKind;
    let dir = tempfile::tempdir().unwrap();
    let session_file = copied_store(&dir.path().join("store"));
    let storage = dir.path().join("store/storage");
    std::fs::write(storage.join("part/msg_a0000004/prt_a000000401.json"), "").unwrap();
    let message = storage.join("message/ses_5d0a1b2c3ffeRssFeedParent/msg_a0000005.json");
    let text = std::fs::read(&message).unwrap();
    std::fs::write(&message, &text[..text.len() / 2]).unwrap();
    let first = storage.join("part/msg_a0000001/prt_a000000100.json");
    let mut bytes = std::fs::read(&first).unwrap();
    let at = bytes
        .windows(3)
        .position(|window| window == b"RSS")
        .unwrap();
    bytes[at + 1] = 0xE9;
    std::fs::write(&first, bytes).unwrap();

    let session = import_file(&session_file, None).unwrap();
    let issues: Vec<&IssueKind> = session
        .report
        .issues
        .iter()
        .map(|issue| &issue.kind)
        .collect();
    let unreadable: Vec<&str> = issues
        .iter()
        .filter_map(|kind| {
            if let IssueKind::UnreadableRecordFile { file, .. } = kind {
                Some(file.as_str())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        unreadable,
        [
            "part/msg_a0000004/prt_a000000401.json",
            "message/ses_5d0a1b2c3ffeRssFeedParent/msg_a0000005.json"
        ],
        "{issues:?}"
    );
    assert!(
        issues.contains(&&IssueKind::InvalidUtf8 {
            file: Some("part/msg_a0000001/prt_a000000100.json".to_owned())
        }),
        "{issues:?}"
    );
    let conversation = conversation(&session);
    assert!(
        conversation[0].starts_with("user: Add an R\u{fffd}S feed to the blog."),
        "{conversation:?}"
    );
    assert!(
        conversation
            .iter()
            .any(|line| line.contains("Editing the header")),
        "{conversation:?}"
    );
    // Listed, not dropped.
    let (listed, skipped) =
        list_foreign_sessions(SourceFormat::OpenCode, &dir.path().join("store")).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let names: Vec<Option<&str>> = listed.iter().map(|record| record.name.as_deref()).collect();
    assert!(names.contains(&Some("Add an RSS feed")), "{names:?}");
}

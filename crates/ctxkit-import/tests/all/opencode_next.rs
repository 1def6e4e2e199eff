//! OpenCode's newer message model (`session_message` rows) and its `revert`, from a database the
//! test builds with rusqlite (`opencode-next.sql`).

use std::path::{Path, PathBuf};

use ctxkit_import::{
    ImportedSession, SourceFormat, import_file, import_opencode, list_foreign_sessions,
};
use ctxkit_protocol::{EntryKind, SessionEntry};

use crate::opencode::{conversation, database_from, listing};
use crate::shapes::imported_context;

fn chosen(database: &Path, session: &str) -> PathBuf {
    PathBuf::from(format!("{}#{session}", database.display()))
}

fn custom_types(session: &ImportedSession) -> Vec<String> {
    session
        .entries()
        .into_iter()
        .filter_map(|entry| match entry.kind {
            EntryKind::Custom(custom) => Some(custom.custom_type),
            EntryKind::Message(_)
            | EntryKind::Compaction(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => None,
        })
        .collect()
}

#[test]
fn session_message_rows_import_message_by_message() {
    let temp = tempfile::tempdir().unwrap();
    let path = database_from(temp.path(), "opencode-next.sql");
    let before = std::fs::read(&path).unwrap();
    // The default session is the most recent top-level one: it has only `session_message` rows.
    let (session, context) = imported_context(&path);
    assert_eq!(session.header.id, "ses_7f0000000001Checkout");
    assert_eq!(session.header.cwd, "/home/dev/shop");
    assert_eq!(
        conversation(&session),
        [
            "user: The checkout total ignores the discount. See the screenshot and notes. | <image image/png 12B>",
            "user: Called the Read tool with {\"filePath\":\"NOTES.txt\"}: discount applies before tax",
            "assistant: <thinking Find where the total is computed.> | Looking for the total. | <call toolu_n1 grep> | <call toolu_n2 read>",
            "toolResult toolu_n1 grep: src/cart.ts:40: total = sum\nsrc/tax.ts:8: total * rate",
            "toolResult toolu_n2 read: [Old tool result content cleared]",
            "assistant: <call toolu_n3 edit> | <call toolu_n4 bash>",
            "toolResult toolu_n3 edit: oldString not found in src/cart.ts",
            "toolResult toolu_n4 bash: [Tool execution was interrupted]",
            "user: The following shell command was executed by the user:\n\nnpm test\n\nOutput:\n1 failing: checkout total",
            "compaction: Summary: the total is computed in src/cart.ts:40 without the discount; npm test fails on it.",
            "user: Apply the discount before tax.",
            "assistant: Done: the discount now applies before tax.",
        ]
    );
    // The context starts at the compaction's summary, as OpenCode's history does.
    assert_eq!(
        context,
        [
            "compactionSummary: Summary: the total is computed in src/cart.ts:40 without the discount; npm test fails on it.",
            "user: Apply the discount before tax.",
            "assistant: Done: the discount now applies before tax.",
        ]
    );
    // The agent switch and the compaction that never got a summary are kept as data.
    assert_eq!(
        custom_types(&session),
        [
            "import.opencode.agent_switched",
            "import.opencode.compaction"
        ]
    );
    let entries = session.entries();
    let model = entries.iter().find_map(|entry| {
        if let EntryKind::ModelChange(change) = &entry.kind {
            Some((change.provider.as_str(), change.model_id.as_str()))
        } else {
            None
        }
    });
    assert_eq!(model, Some(("anthropic", "claude-sonnet-4-5")));
    let tokens_before = entries.iter().find_map(|entry| {
        if let EntryKind::Compaction(compaction) = &entry.kind {
            Some(compaction.tokens_before)
        } else {
            None
        }
    });
    assert_eq!(tokens_before, Some(6200));
    let text = session.to_jsonl().unwrap();
    assert!(text.contains("\"stopReason\":\"toolUse\""), "{text}");
    assert!(text.contains("\"provider\":\"anthropic\""), "{text}");
    assert!(text.contains("\"isError\":true"), "{text}");
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
    // Its subagent session (`session_v2.parent_id`) comes along.
    let sessions = import_opencode(&path).unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1].header.id, "ses_7f0000000005Explore");
    assert_eq!(
        sessions[1].header.extra["importedFrom"]["parentSessionId"],
        serde_json::json!("ses_7f0000000001Checkout")
    );
    assert_eq!(
        conversation(&sessions[1]),
        [
            "user: Where is the cart total computed?",
            "assistant: In src/cart.ts:40."
        ]
    );
    // Nothing was written to or beside the database.
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(listing(temp.path()), ["opencode.db"]);
}

#[test]
fn a_migrated_session_reads_its_session_message_rows_once_and_what_an_older_version_added() {
    let temp = tempfile::tempdir().unwrap();
    let path = database_from(temp.path(), "opencode-next.sql");
    let (session, context) = imported_context(&chosen(&path, "ses_7f0000000004Migrated"));
    // The `message` rows the upgrade moved are not read twice; the one added afterwards is.
    assert_eq!(
        conversation(&session),
        [
            "user: Add a coupon field to checkout.",
            "assistant: Added the coupon input.",
            "user: Validate the code on submit.",
            "assistant: Validated on submit.",
            "user: Make it optional.",
        ]
    );
    assert_eq!(context, conversation(&session));
    // The session's newer row (`session_v2`) names it.
    assert!(
        session
            .to_jsonl()
            .unwrap()
            .contains("\"name\":\"Add a coupon field\""),
    );
    // Listing: both session tables, newest first, the subagent under its parent; a session counts
    // the messages of the branch it continues from (a reverted one: the kept messages only; a
    // compacted one: the compacted messages too).
    let (records, skipped) = list_foreign_sessions(SourceFormat::OpenCode, temp.path()).unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    let rows: Vec<(&str, bool, u64)> = records
        .iter()
        .map(|record| {
            let id = record.path.rsplit_once('#').unwrap().1;
            (
                id,
                record.parent_session_path.is_some(),
                record.message_count,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("ses_7f0000000001Checkout", false, 11),
            ("ses_7f0000000005Explore", true, 2),
            ("ses_7f0000000002Undo", false, 2),
            ("ses_7f0000000003UndoParts", false, 2),
            ("ses_7f0000000004Migrated", false, 5),
        ]
    );
}

/// The ids of the entries on the path from the root to `leaf`.
fn path_to(entries: &[SessionEntry], leaf: &str) -> Vec<String> {
    let mut path = Vec::new();
    let mut current = Some(leaf.to_owned());
    while let Some(id) = current {
        let entry = entries.iter().find(|entry| entry.id == id).unwrap();
        path.push(entry.id.clone());
        current = entry.parent_id.clone();
    }
    path.reverse();
    path
}

#[test]
fn a_revert_drops_the_undone_messages_from_the_context_and_keeps_them_on_a_branch() {
    let temp = tempfile::tempdir().unwrap();
    let path = database_from(temp.path(), "opencode-next.sql");
    // `session_message` rows, reverted to the second prompt: it and its reply are undone.
    let (session, context) = imported_context(&chosen(&path, "ses_7f0000000002Undo"));
    assert_eq!(
        conversation(&session),
        [
            "user: Rename cart.ts to basket.ts.",
            "assistant: Renamed.",
            "user: Now delete the tests.",
            "assistant: Deleted the tests.",
        ]
    );
    assert_eq!(
        context,
        ["user: Rename cart.ts to basket.ts.", "assistant: Renamed."]
    );
    let entries = session.entries();
    let marker = entries.last().unwrap();
    assert_eq!(custom_types(&session), ["import.opencode.revert"]);
    // The marker hangs under the last kept message; the undone ones stay on their own branch.
    let kept = path_to(&entries, &marker.id);
    assert_eq!(kept.len(), 4, "session info, two messages, the marker");
    let undone = entries.iter().filter(|entry| !kept.contains(&entry.id));
    assert_eq!(undone.count(), 2);

    // `message`/`part` rows reverted inside a reply (`partID`): the reply's first step stays.
    let (session, context) = imported_context(&chosen(&path, "ses_7f0000000003UndoParts"));
    assert_eq!(
        conversation(&session),
        [
            "user: Bump the version to 2.0.",
            "assistant: Bumping package.json.",
            "assistant: Also published it to npm.",
            "user: Do not publish!",
        ]
    );
    assert_eq!(
        context,
        [
            "user: Bump the version to 2.0.",
            "assistant: Bumping package.json."
        ]
    );
    // The same import twice is byte-identical.
    let again = import_file(&chosen(&path, "ses_7f0000000003UndoParts"), None).unwrap();
    assert_eq!(again.to_jsonl().unwrap(), session.to_jsonl().unwrap());
}

/// Late-2026 rows, read as `to-llm-message.ts` sends them: `system` text as a custom message,
/// `skill` text as a user message, a `shell` row's output object as `Shell command:`, a completed
/// compaction with its `recent` text, a failed tool's partial output; `location-switched` and
/// `idle` rows kept quietly.
#[test]
fn late_2026_session_message_rows_keep_what_the_model_was_sent() {
    let temp = tempfile::tempdir().unwrap();
    let path = database_from(temp.path(), "opencode-late.sql");
    let (session, context) = imported_context(&path);
    assert_eq!(session.header.id, "ses_8a0000000001Latest");
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
    assert_eq!(
        conversation(&session)[..5],
        [
            "user: Write the release notes for 2.4.",
            "user: List user-visible changes first, one line each.",
            "user: Shell command: git log --oneline v2.3..\n\na1b2c3d add coupon codes\n9f8e7d6 fix rounding",
            "assistant: Writing docs/releases/2.4.md. | <call toolu_l1 write>",
            "toolResult toolu_l1 write: [Tool execution was interrupted]",
        ]
    );
    let system: Vec<String> = session
        .entries()
        .into_iter()
        .filter_map(|entry| {
            if let EntryKind::CustomMessage(custom) = entry.kind {
                Some(custom.custom_type)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(system, ["import.opencode.system"]);
    assert_eq!(
        context,
        [
            "compactionSummary: Release notes for 2.4 are being written from git log v2.3..\n\n<recent-context>\n[Shell]: git log --oneline v2.3..\na1b2c3d add coupon codes\n</recent-context>",
            "user: Try writing the file again.",
            "assistant: <call toolu_l2 write>",
            "toolResult toolu_l2 write: disk full | wrote 512 of 2048 bytes",
        ]
    );
    assert_eq!(
        custom_types(&session),
        [
            "import.opencode.agent_switched",
            "import.opencode.location_switched",
            "import.opencode.idle",
        ]
    );
}

/// A part of a type OpenCode's `Part` union does not name is kept with its message and reported,
/// not left out without a word.
#[test]
fn a_part_of_an_unknown_type_is_reported() {
    let temp = tempfile::tempdir().unwrap();
    let path = database_from(temp.path(), "opencode-late.sql");
    let (session, context) = imported_context(&chosen(&path, "ses_8a0000000002OlderParts"));
    assert_eq!(
        context,
        [
            "user: Bump the version to 2.4.1.",
            "assistant: Bumped to 2.4.1.",
        ]
    );
    let reported: Vec<String> = session
        .report
        .issues
        .iter()
        .map(|issue| issue.kind.to_string())
        .collect();
    assert_eq!(
        reported,
        ["kept a part of unknown type `selection` with its message; no block shows it"]
    );
    assert!(
        session
            .to_jsonl()
            .unwrap()
            .contains("\"type\":\"selection\"")
    );
}

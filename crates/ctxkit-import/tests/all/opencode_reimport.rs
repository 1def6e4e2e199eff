//! Re-importing an OpenCode session that went on since the earlier import: a reply imported while
//! its tool ran (its result then the interruption note) is completed, not refused.

use std::path::Path;

use ctxkit_import::{WriteOutcome, import_file};
use serde_json::{Value, json};

use crate::shapes::shape;

/// Copies the directory `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

/// The context of a session file, message by message.
fn context_of(path: &Path) -> Vec<String> {
    let session = ctxkit_session::Session::open(path).unwrap();
    assert!(
        session.diagnostics().is_empty(),
        "{}: {:?}",
        path.display(),
        session.diagnostics()
    );
    session
        .build_context()
        .messages
        .iter()
        .map(|message| crate::shapes::describe(&session.message(message).unwrap()))
        .collect()
}

/// The 1.x fixture's last reply (`msg_a0000006`) with its `edit` call still running, as OpenCode
/// stores it while the tool runs (the fixture's reply was aborted there); then the tool finished.
#[test]
fn a_reply_imported_while_its_tool_ran_is_completed_on_reimport() {
    let temp = tempfile::tempdir().unwrap();
    let storage = temp.path().join("storage");
    copy_dir(&shape("opencode-1x/storage"), &storage);
    let message = storage.join("message/ses_5d0a1b2c3ffeRssFeedParent/msg_a0000006.json");
    let tool_part = storage.join("part/msg_a0000006/prt_a000000602.json");
    let session = storage.join("session/4f1e2d3c5b6a7980/ses_5d0a1b2c3ffeRssFeedParent.json");
    edit_json(&message, |message| {
        message.as_object_mut().unwrap().remove("error");
    });
    let out = temp.path().join("out.jsonl");
    let running = import_file(&session, None).unwrap();
    assert_eq!(running.write_to(&out).unwrap(), WriteOutcome::Created);
    let before = std::fs::read(&out).unwrap();
    assert!(
        context_of(&out)
            .last()
            .unwrap()
            .contains("[Tool execution was interrupted]")
    );

    edit_json(&tool_part, |part| {
        part["state"] = json!({"status": "completed", "input": {"filePath": "/home/dev/blog/src/header.ts"},
            "output": "Edited src/header.ts.", "title": "src/header.ts", "metadata": {},
            "time": {"start": 1_760_000_071_500_i64, "end": 1_760_000_072_000_i64}});
    });
    edit_json(&message, |message| {
        message["time"]["completed"] = json!(1_760_000_072_000_i64);
    });
    // The reply goes on after the result.
    let next = storage.join("message/ses_5d0a1b2c3ffeRssFeedParent/msg_a0000007.json");
    std::fs::copy(&message, &next).unwrap();
    edit_json(&next, |next| {
        next["id"] = json!("msg_a0000007");
        next["parentID"] = json!("msg_a0000005");
        next["time"] =
            json!({"created": 1_760_000_073_000_i64, "completed": 1_760_000_074_000_i64});
    });
    std::fs::create_dir_all(storage.join("part/msg_a0000007")).unwrap();
    std::fs::write(
        storage.join("part/msg_a0000007/prt_a000000700.json"),
        json!({"id": "prt_a000000700", "sessionID": "ses_5d0a1b2c3ffeRssFeedParent",
            "messageID": "msg_a0000007", "type": "text", "text": "Linked the feed in the header."})
        .to_string(),
    )
    .unwrap();
    let fresh = temp.path().join("fresh.jsonl");
    let completed = import_file(&session, None).unwrap();
    completed.write_to(&fresh).unwrap();
    let outcome = completed
        .write_to(&out)
        .unwrap_or_else(|error| panic!("refused: {error}"));
    assert!(
        matches!(outcome, WriteOutcome::AppendedCompleted { .. }),
        "{outcome:?}"
    );
    assert!(std::fs::read(&out).unwrap().starts_with(&before));
    let context = context_of(&out);
    assert_eq!(context, context_of(&fresh));
    assert!(
        context[context.len() - 2].contains("Edited src/header.ts."),
        "{context:?}"
    );
    assert!(
        context[context.len() - 1].contains("Linked the feed in the header."),
        "{context:?}"
    );
    assert_eq!(completed.write_to(&out).unwrap(), WriteOutcome::UpToDate);
}

//! Issue 42, limits: hostile session files against the reader, as a table. Each line that
//! attacks must be skipped with a diagnostic, like any malformed line, and everything else must
//! read: the context builds, every message in it parses, and a new entry can be appended. Before,
//! a line nested deeper than the JSON parser's limit was indexed from its first fields and failed
//! only when read back, so the whole session became unreadable. `docs/security.md` ("Limits")
//! lists these with the server's and the CLI's attacks.

use ctxkit_session::Session;
use serde_json::json;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn user_line(id: &str, parent: Option<&str>, text: &str) -> String {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z",
           "message": {"role": "user", "content": text, "timestamp": 1}})
    .to_string()
}

const ASSISTANT: &str = r#"{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{}}],"provider":"p","model":"m","api":"x","stopReason":"toolUse","timestamp":2,"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}}}"#;

fn nest(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// A tool result (child of `a`) whose `details` are `details`.
fn tool_result(details: &str) -> String {
    format!(
        r#"{{"type":"message","id":"t","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":3,"details":{details}}}}}"#
    )
}

/// One attack: its name, the hostile line (a child of `a`), and whether the line is kept.
struct Attack {
    name: &'static str,
    line: String,
    kept: bool,
}

fn attacks() -> Vec<Attack> {
    let attack = |name, line, kept| Attack { name, line, kept };
    vec![
        // The issue's line.
        attack(
            "tool result details 200 deep",
            tool_result(&nest(200)),
            false,
        ),
        // The deepest line the parser reads (the outer object counts as one: 127 in all).
        attack(
            "details at the parser's limit",
            tool_result(&nest(125)),
            true,
        ),
        attack(
            "details one past the parser's limit",
            tool_result(&nest(126)),
            false,
        ),
        attack("details 100,000 deep", tool_result(&nest(100_000)), false),
        attack(
            "brackets opened 1,000,000 times, never closed",
            tool_result(&"[".repeat(1_000_000)),
            false,
        ),
        attack(
            "an assistant's content 300 deep",
            format!(
                r#"{{"type":"message","id":"t","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"x","extra":{}}}],"provider":"p","model":"m","api":"x","stopReason":"stop","timestamp":3}}}}"#,
                nest(300)
            ),
            false,
        ),
        attack(
            "a compaction's details 300 deep",
            format!(
                r#"{{"type":"compaction","id":"t","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryId":"u","tokensBefore":1,"details":{}}}"#,
                nest(300)
            ),
            false,
        ),
        attack(
            "a custom entry's data 300 deep",
            format!(
                r#"{{"type":"custom","id":"t","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","customType":"x","data":{}}}"#,
                nest(300)
            ),
            false,
        ),
        // Brackets inside a string are text, not nesting.
        attack(
            "10,000 brackets inside a string",
            tool_result(&json!("[".repeat(10_000)).to_string()),
            true,
        ),
    ]
}

/// Opens `text` as a session file: `entries` entries besides the attack's line, which is kept or
/// skipped as `kept` says.
fn check(name: &str, text: &str, entries: usize, kept: bool) {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    std::fs::write(&path, text).unwrap();
    let mut session =
        Session::open(&path).unwrap_or_else(|error| panic!("{name}: not opened: {error}"));
    let expected = entries + usize::from(kept);
    let context = session.build_context();
    for message in &context.messages {
        session
            .message(message)
            .unwrap_or_else(|error| panic!("{name}: a message does not read: {error}"));
    }
    assert_eq!(session.entries().len(), expected, "{name}");
    assert_eq!(
        session.diagnostics().is_empty(),
        kept,
        "{name}: {:?}",
        session.diagnostics()
    );
    session
        .append_message(
            serde_json::from_value(json!({"role": "user", "content": "after", "timestamp": 9}))
                .unwrap(),
        )
        .unwrap_or_else(|error| panic!("{name}: no append: {error}"));
}

#[test]
fn hostile_lines_are_skipped_and_the_rest_of_the_session_reads() {
    for attack in attacks() {
        let text = [
            HEADER.to_owned(),
            user_line("u", None, "hello"),
            ASSISTANT.to_owned(),
            attack.line.clone(),
        ]
        .join("\n")
            + "\n";
        check(attack.name, &text, 2, attack.kept);
    }
}

/// The same lines in a file of more than 8 MiB, which is read in chunks on all cores with its
/// message lines left on disk (another path through the reader).
#[test]
fn hostile_lines_in_a_large_file_are_skipped_too() {
    let padding = user_line("p", None, &"padding ".repeat(1_200_000));
    assert!(padding.len() > 8 << 20);
    for attack in attacks()
        .into_iter()
        .filter(|attack| attack.line.len() < 1_000_000)
    {
        let text = [
            HEADER.to_owned(),
            padding.clone(),
            user_line("u", None, "hello"),
            ASSISTANT.to_owned(),
            attack.line.clone(),
        ]
        .join("\n")
            + "\n";
        check(attack.name, &text, 3, attack.kept);
    }
}

/// Attack (issue 42): a `serve` client appending large messages (24 × 60 MB behind a long run)
/// grew the server past 1.5 GB: every appended line stayed in memory beside the file that holds
/// it. Now a large appended message is read back from the file when asked for, like a loaded
/// one; small entries stay in memory (checked in `entry.rs`); and everything reads back byte for
/// byte, after a reopen too.
#[test]
fn large_appended_messages_are_left_in_the_file_not_in_memory() {
    use crate::store::{assistant, user};

    let home = tempfile::tempdir().unwrap();
    let mut session = Session::create("/p", home.path());
    let large: Vec<String> = (0..4)
        .map(|index| format!("{index} {}", "é".repeat(200_000)))
        .collect();
    session.append_message(user("small question")).unwrap();
    for text in &large {
        session.append_message(user(text)).unwrap();
        session.append_message(assistant("ok")).unwrap();
    }
    session
        .append_messages(vec![user(&large[0]), assistant("batch")])
        .unwrap();
    // Which lines stay in memory is checked beside the code (`entry.rs`); here, that every one
    // reads back whole.
    let texts = |session: &Session| -> Vec<String> {
        let context = session.build_context();
        context
            .messages
            .iter()
            .map(|message| session.message_value(message).unwrap()["content"].to_string())
            .collect()
    };
    let before = texts(&session);
    assert_eq!(before.len(), 11);
    assert_eq!(before[1], json!(large[0]).to_string());
    assert_eq!(before[9], json!(large[0]).to_string());
    // The file holds what memory answered, and a new append still lands after it.
    let path = session.path().unwrap().to_owned();
    session.append_message(user("after")).unwrap();
    drop(session);
    let reopened = Session::open(&path).unwrap();
    let after = texts(&reopened);
    assert_eq!(&after[..11], &before[..]);
    assert_eq!(after[11], "\"after\"");
}

/// A session someone sent whose replies claim token counts at the top of what a count reads
/// (`i64::MAX`): the spend `ctxkit info`, `/cost` and the page show adds them up saturating.
/// Before, the sums overflowed (a panic in a debug build, a small total in a release one).
#[test]
fn token_counts_at_the_top_of_the_range_add_up_saturating() {
    let reply = |id: &str, parent: &str, at: u64| {
        json!({"type": "message", "id": id, "parentId": parent,
               "timestamp": "2025-01-01T00:00:02.000Z",
               "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                           "provider": "p", "model": "m", "api": "x", "stopReason": "stop",
                           "timestamp": at,
                           "usage": {"input": i64::MAX, "output": i64::MAX, "cacheRead": 5,
                                     "cacheWrite": 6, "totalTokens": 0,
                                     "cost": {"total": 1.0}}}})
        .to_string()
    };
    let text = [
        HEADER.to_owned(),
        user_line("u", None, "hi"),
        reply("a", "u", 2),
        reply("b", "a", 3),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    std::fs::write(&path, text + "\n").unwrap();
    let session = Session::open(&path).unwrap();
    let spend = ctxkit_session::session_spend(session.entries(), &ctxkit_session::FreeModels::NONE);
    assert_eq!(spend.requests.calls, 2);
    assert_eq!(spend.requests.input_tokens, u64::MAX - 1);
    assert_eq!(spend.requests.all_input_tokens(), u64::MAX);
    assert_eq!(spend.total_tokens(), (u64::MAX, u64::MAX - 1));
    let share = spend.requests.cache_read_share().unwrap();
    assert!((0.0..=1.0).contains(&share), "{share}");
}

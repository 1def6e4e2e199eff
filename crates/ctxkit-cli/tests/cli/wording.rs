//! Sentences the CLI printed garbled, each pinned as a tester found it: a field name left empty
//! and a line said twice, a plural of one, a sentence left unfinished.

use super::Run;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}"#;

/// `check` on a reply whose `content` is a string said "entry `b` has a field of the wrong type
/// (`` line 3: invalid type…)": an empty path in backticks and the line a second time.
#[test]
fn check_says_a_field_of_the_wrong_type_once() {
    let run = Run::new();
    let file = run.home.path().join("bad.jsonl");
    let lines = [
        HEADER,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":"yo","stopReason":"stop","timestamp":2}}"#,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let output = run.ctxkit(&["check", file.to_str().unwrap()]);
    assert_eq!(
        output,
        "exit: 1\n[HOME]/bad.jsonl:3: entry `b` has a field of the wrong type: invalid type: \
         string \"yo\", expected a sequence\n1 problem found; the file was not modified\n"
    );
}

/// `check` named a message's content of the wrong type in serde's words ("data did not match any
/// variant of untagged enum MessageContent"); it names the field and what it holds. A `null`
/// content is no problem: Pi writes it for an empty message, and it reads as no blocks.
#[test]
fn check_names_a_content_of_the_wrong_type_and_takes_a_null_one() {
    let run = Run::new();
    let file = run.home.path().join("null.jsonl");
    let lines = [
        HEADER,
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z","message":{"role":"user","content":null,"timestamp":1}}"#,
        r#"{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":null,"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":2}}"#,
        r#"{"type":"message","id":"c","parentId":"b","timestamp":"2025-01-01T00:00:03Z","message":{"role":"user","content":7,"timestamp":3}}"#,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let output = run.ctxkit(&["check", file.to_str().unwrap()]);
    assert_eq!(
        output,
        "exit: 1\n[HOME]/null.jsonl:4: entry `c` has a field of the wrong type: `message.content` \
         is a number, where a string or a list of content blocks is expected\n1 problem found; the \
         file was not modified\n"
    );
}

/// `context` at a leaf with one message said "1 messages at e7596aac".
#[test]
fn context_of_one_message_says_message() {
    let run = Run::new();
    let demo =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/demo-session.jsonl");
    let output = run.ctxkit(&["context", demo.to_str().unwrap(), "--leaf", "e7596aac"]);
    assert!(
        output.starts_with("exit: 0\n1 message at e7596aac ("),
        "{output}"
    );
}

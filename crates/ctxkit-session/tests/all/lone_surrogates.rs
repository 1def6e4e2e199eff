//! QA r103, defect 1: a lone UTF-16 surrogate escape (`"\ud83d"`, half an emoji, which
//! `JSON.stringify` writes and `JSON.parse` reads) in a line that is not a `message` made the whole
//! line "not valid JSON": a compaction's summary and every entry after it were cut off from the
//! context. Every line type now reads it as U+FFFD, as message lines did, and the file is never
//! rewritten.

use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;

const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn user(id: &str, parent: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn assistant(id: &str, parent: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"openai","model":"gpt-4.1","api":"openai-completions","stopReason":"stop","timestamp":2}}}}"#
    )
}

/// One line type at a time: the line (holding lone surrogates, its id `x`, its parent `m4`) and
/// what the session must read of it.
struct Case {
    name: &'static str,
    line: &'static str,
    /// The message the line adds to the context after the kept messages, if any.
    context_text: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "compaction summary",
            line: r#"{"type":"compaction","id":"x","parentId":"m4","timestamp":"2026-01-01T00:00:03.000Z","summary":"The user asked two questions \ud83d","firstKeptEntryId":"m3","tokensBefore":5000}"#,
            context_text: None,
        },
        Case {
            name: "label text",
            line: r#"{"type":"label","id":"x","parentId":"m4","timestamp":"2026-01-01T00:00:03.000Z","targetId":"m3","label":"tag \udc00"}"#,
            context_text: None,
        },
        Case {
            name: "session name",
            line: r#"{"type":"session_info","id":"x","parentId":"m4","timestamp":"2026-01-01T00:00:03.000Z","name":"name \ud83d"}"#,
            context_text: None,
        },
        Case {
            name: "custom data",
            line: r#"{"type":"custom","id":"x","parentId":"m4","timestamp":"2026-01-01T00:00:03.000Z","customType":"ext","data":{"t":"\ud83d"}}"#,
            context_text: None,
        },
        Case {
            name: "branch summary",
            line: r#"{"type":"branch_summary","id":"x","parentId":"m4","timestamp":"2026-01-01T00:00:03.000Z","fromId":"m2","summary":"tried \ud83d"}"#,
            context_text: Some("tried \u{fffd}"),
        },
        Case {
            name: "timestamp",
            line: r#"{"type":"model_change","id":"x","parentId":"m4","timestamp":"2026\ud83d","provider":"openai","modelId":"gpt\udfff"}"#,
            context_text: None,
        },
    ]
}

fn session_text(middle: &str, padding: Option<&str>) -> String {
    let mut lines = vec![HEADER.to_owned()];
    lines.extend(padding.map(str::to_owned));
    let first_parent = if padding.is_some() { "pad" } else { "none" };
    lines.extend([
        user("m1", first_parent, "first question")
            .replace(r#""parentId":"none""#, "\"parentId\":null"),
        assistant("m2", "m1", "first answer"),
        user("m3", "m2", "second question"),
        assistant("m4", "m3", "second answer"),
        middle.to_owned(),
        user("m5", "x", "third question"),
        assistant("m6", "m5", "third answer"),
    ]);
    lines.join("\n") + "\n"
}

/// The text of a context message: a user's string content, an assistant's first text block, a
/// summary.
fn text_of(message: &AgentMessage) -> String {
    let value = serde_json::to_value(message).unwrap();
    value["content"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| value["content"][0]["text"].as_str().map(str::to_owned))
        .or_else(|| value["summary"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn check(case: &Case, padding: Option<&str>) {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    let text = session_text(case.line, padding);
    std::fs::write(&path, &text).unwrap();
    let session = Session::open(&path).unwrap();
    assert_eq!(session.diagnostics(), &[], "{}", case.name);
    let ids: Vec<&str> = session
        .branch_path(None)
        .iter()
        .map(|entry| entry.id())
        .collect();
    let mut expected_ids = padding.map(|_| vec!["pad"]).unwrap_or_default();
    expected_ids.extend(["m1", "m2", "m3", "m4", "x", "m5", "m6"]);
    assert_eq!(ids, expected_ids, "{}", case.name);
    let context = session.build_context();
    let texts: Vec<String> = session
        .messages(&context.messages)
        .unwrap()
        .iter()
        .map(text_of)
        .collect();
    let expected: Vec<String> = if case.name == "compaction summary" {
        vec![
            "The user asked two questions \u{fffd}".to_owned(),
            "second question".to_owned(),
            "second answer".to_owned(),
            "third question".to_owned(),
            "third answer".to_owned(),
        ]
    } else {
        let mut all: Vec<String> = padding.map(|_| vec![String::new()]).unwrap_or_default();
        all.extend(
            [
                "first question",
                "first answer",
                "second question",
                "second answer",
            ]
            .map(str::to_owned),
        );
        all.extend(case.context_text.map(str::to_owned));
        all.extend(["third question", "third answer"].map(str::to_owned));
        all
    };
    let texts: Vec<String> = texts
        .into_iter()
        .map(|text| {
            if text.starts_with("padding") {
                String::new()
            } else {
                text
            }
        })
        .collect();
    assert_eq!(texts, expected, "{}", case.name);
    match case.name {
        "label text" => assert_eq!(session.label("m3"), Some("tag \u{fffd}")),
        "session name" => {
            assert_eq!(session.session_name().as_deref(), Some("name \u{fffd}"));
            let listed = ctxkit_session::read_session_info(&path).unwrap();
            assert_eq!(listed.name.as_deref(), Some("name \u{fffd}"));
        }
        "timestamp" => {
            let entry = session.entries().iter().find(|entry| entry.id() == "x");
            assert_eq!(entry.unwrap().timestamp(), "2026\u{fffd}");
        }
        _ => {}
    }
    // Every entry parses whole, and the file is read, never rewritten.
    for entry in session.entries() {
        entry.parse().unwrap();
    }
    drop(session);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "{}",
        case.name
    );
}

#[test]
fn a_lone_surrogate_in_any_line_type_is_read_as_a_replacement_character() {
    for case in cases() {
        check(&case, None);
    }
}

/// A file of 8 MiB or more is read in chunks, its message lines left on disk: the same lines read
/// the same.
#[test]
fn a_lone_surrogate_in_a_large_file_is_read_too() {
    let padding = r#"{"type":"message","id":"pad","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","message":{"role":"user","content":"PADDING","timestamp":1}}"#
        .replace("PADDING", &"padding ".repeat(1_100_000));
    for case in cases() {
        check(&case, Some(&padding));
    }
}

/// An id holding a lone surrogate (`mal/lone-surrogate-in-id.jsonl`): the entry and its child,
/// whose parent id holds the same escape, stay linked; a scan of the file's ids finds it.
#[test]
fn an_id_holding_a_lone_surrogate_keeps_its_children() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("s.jsonl");
    let text = [
        HEADER.to_owned(),
        user("m1", "none", "first").replace(r#""parentId":"none""#, "\"parentId\":null"),
        assistant(r"a\ud83d", "m1", "answer"),
        user("m2", r"a\ud83d", "second"),
    ]
    .join("\n")
        + "\n";
    std::fs::write(&path, &text).unwrap();
    let session = Session::open(&path).unwrap();
    assert_eq!(session.diagnostics(), &[]);
    let ids: Vec<&str> = session
        .branch_path(None)
        .iter()
        .map(|entry| entry.id())
        .collect();
    assert_eq!(ids, ["m1", "a\u{fffd}", "m2"]);
    let mut scanned = Vec::new();
    ctxkit_session::scan_entry_ids(&path, |id| {
        scanned.push(id.to_owned());
        true
    })
    .unwrap();
    assert_eq!(scanned, ["m1", "a\u{fffd}", "m2"]);
    drop(session);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

//! A session with an entry of the wrong type (a tool call whose id is a number): `export` refused
//! the whole session and a live `view` stopped following for good, while `check`, `tree` and
//! `context` read past it. The page shows what can be read and names the line.

use std::io::Write as _;
use std::path::Path;

use serde_json::json;

use super::fixture::jsonl;
use super::{KillOnDrop, export, http_answer, page_data, start_view};

const AT: &str = "2026-01-01T00:00:00.000Z";

fn good_session(file: &Path) {
    let lines = [
        json!({"type": "session", "version": 3, "id": "wrong", "timestamp": AT, "cwd": "/tmp/w"}),
        json!({"type": "message", "id": "u1", "parentId": null, "timestamp": AT,
               "message": {"role": "user", "content": "first question", "timestamp": 1}}),
    ];
    std::fs::write(file, jsonl(&lines)).unwrap();
}

/// Appends a reply whose tool call's id is a number, and a question after it.
fn append_wrong_typed_reply(file: &Path) {
    let lines = [
        json!({"type": "message", "id": "bad00001", "parentId": "u1", "timestamp": AT,
               "message": {"role": "assistant", "content": [{"type": "toolCall", "id": 1, "name": "bash",
                           "arguments": {"command": "ls"}}], "stopReason": "toolUse", "timestamp": 2}}),
        json!({"type": "message", "id": "good0002", "parentId": "bad00001", "timestamp": AT,
               "message": {"role": "user", "content": "next question", "timestamp": 3}}),
    ];
    let mut opened = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    opened.write_all(jsonl(&lines).as_bytes()).unwrap();
}

#[test]
fn export_shows_a_session_with_an_entry_of_the_wrong_type_and_names_its_line() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("w.jsonl");
    good_session(&file);
    append_wrong_typed_reply(&file);
    let data = page_data(&export(home.path(), &file, &[]));
    assert_eq!(data["entries"].as_array().unwrap().len(), 3);
    assert_eq!(data["problems"][0]["kind"], json!("wrongType"), "{data}");
    assert_eq!(data["problems"][0]["line"], json!(3));
    assert_eq!(data["problems"][0]["damage"], json!(true));
}

#[test]
fn the_view_keeps_following_past_an_entry_of_the_wrong_type() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("w.jsonl");
    good_session(&file);
    let (view, url) = start_view(home.path(), file.to_str().unwrap(), None);
    let _view = KillOnDrop(view);
    let (base, query) = url.split_once("/?").unwrap();
    let host = &base["http://".len()..];
    let before = http_answer(base, "GET", &format!("/api/data?{query}"), host);
    assert!(before.starts_with("HTTP/1.1 200"), "{before}");
    append_wrong_typed_reply(&file);
    let after = http_answer(base, "GET", &format!("/api/data?{query}"), host);
    assert!(after.starts_with("HTTP/1.1 200"), "{after}");
    assert!(
        after.contains("good0002") && after.contains("wrongType"),
        "{after}"
    );
    let context = http_answer(
        base,
        "GET",
        &format!("/api/context?{query}&id=good0002"),
        host,
    );
    assert!(context.starts_with("HTTP/1.1 200"), "{context}");
}

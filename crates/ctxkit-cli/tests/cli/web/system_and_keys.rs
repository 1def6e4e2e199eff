//! A Pi 1.6 session's system prompt on the page, and the keyboard: the page showed an empty
//! "system" card for the `sections`/`toolsAdded` Pi 1.6 stores, and a page-wide key handler took
//! PageDown, the arrows and End to move the tree's selection wherever the focus was (only Space
//! scrolled a pane; the tree could not be reached with Tab).

use serde_json::{Value, json};

use super::{browser_tools, check_in_browser, export, jsonl, page_data, screenshot_dir};

/// A Pi 1.6 session: its system message (prompt in sections, tools declared), then 30 turns of
/// long text, so the model's view is much taller than its pane.
fn pi16_session() -> Vec<Value> {
    let at = "2026-01-01T00:00:00.000Z";
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "pi16", "timestamp": at, "cwd": "/tmp/p"}),
        json!({"type": "message", "id": "sys1", "parentId": null, "timestamp": at, "message": {
            "role": "system", "content": "", "timestamp": 1,
            "sections": {"preamble": "You are a coding assistant PREAMBLE_MARKER.",
                         "rules": "<rules>\n- RULES_MARKER\n</rules>"},
            "toolsAdded": [{"name": "read", "description": "Read file contents", "parameters":
                {"type": "object", "required": ["path"],
                 "properties": {"path": {"type": "string", "description": "File to read"}}}}]}}),
    ];
    let mut parent = "sys1".to_owned();
    for turn in 0..30 {
        for role in ["user", "assistant"] {
            let id = format!("{}{turn}", &role[..1]);
            let text = format!("{role} message {turn} {}", "lorem ipsum ".repeat(30));
            let message = if role == "user" {
                json!({"role": "user", "content": text, "timestamp": 2})
            } else {
                json!({"role": "assistant", "content": [{"type": "text", "text": text}],
                    "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
                    "timestamp": 2})
            };
            lines.push(
                json!({"type": "message", "id": id, "parentId": parent, "timestamp": at,
                "message": message}),
            );
            parent = id;
        }
    }
    lines
}

#[test]
fn the_page_carries_a_pi16_system_prompt_and_its_tools() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("pi16.jsonl");
    std::fs::write(&file, jsonl(&pi16_session())).unwrap();
    let data = page_data(&export(home.path(), &file, &[]));
    let system = &data["entries"][0];
    assert_eq!(system["role"], "system");
    assert_eq!(system["blocks"][0]["sec"], "preamble");
    assert!(
        system["blocks"][0]["t"]
            .as_str()
            .unwrap()
            .contains("PREAMBLE_MARKER")
    );
    assert_eq!(system["blocks"][2]["add"][0]["name"], "read");
}

#[test]
fn a_browser_shows_the_system_prompt_and_scrolls_the_focused_pane() {
    let Some(tools) = browser_tools() else { return };
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("pi16.jsonl");
    std::fs::write(&file, jsonl(&pi16_session())).unwrap();
    export(home.path(), &file, &[]);
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    check_in_browser(&tools, "systemkeys", &url, &shots, json!({}));
}

//! A session's markdown and code on the page, as a person sees them in headless Chromium: a
//! reply's headings, lists, tables and links drawn, its code blocks and a read file coloured by
//! their language, known tools' calls drawn as Pi draws them, and nothing in the markdown made
//! into markup, a script or a request.

use serde_json::json;

use super::{browser_tools, check_in_browser, export, fixture::jsonl, page_data, screenshot_dir};

const REPLY: &str = "## Plan\n\n1. read `src/main.rs`\n2. fix **the parser**\n\n\
| step | state |\n|---|--:|\n| read | done |\n\n\
See [the docs](https://example.com/docs), [this](javascript:alert(4)) and ![a chart](https://example.com/chart.png).\n\n\
Also https://example.com/bare.[^n]\n\n[^n]: The note.\n\n\
```rust\nfn main() {\n    let answer = 42; // the answer\n}\n```\n\n\
<img src=x onerror=alert(5)> <script>alert(6)</script>";

#[test]
fn a_browser_draws_markdown_and_colours_code() {
    let home = tempfile::tempdir().unwrap();
    let at = "2026-01-01T00:00:00.000Z";
    let message = |id: &str, parent: Option<&str>, message: serde_json::Value| json!({"type": "message", "id": id, "parentId": parent, "timestamp": at, "message": message});
    let lines = [
        json!({"type": "session", "version": 3, "id": "md", "timestamp": at, "cwd": "/tmp/md"}),
        message(
            "m1",
            None,
            json!({"role": "user", "content": "Fix *the* parser", "timestamp": 1}),
        ),
        message(
            "m2",
            Some("m1"),
            json!({"role": "assistant", "content": [
            {"type": "text", "text": REPLY},
            {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "src/main.rs"}},
            {"type": "toolCall", "id": "w1", "name": "write", "arguments": {"path": "src/new.py", "content": "def f():\n    return 1\n"}},
            {"type": "toolCall", "id": "e1", "name": "edit", "arguments": {"path": "src/main.rs", "edits": [{"oldText": "let a = 1;", "newText": "let a = 2;"}]}},
            {"type": "toolCall", "id": "b1", "name": "bash", "arguments": {"command": "cargo test --quiet"}},
            {"type": "toolCall", "id": "x1", "name": "bash", "arguments": {"command": "ls", "cwd": "/tmp"}}],
            "stopReason": "toolUse", "timestamp": 2}),
        ),
        message(
            "m3",
            Some("m2"),
            json!({"role": "toolResult", "toolCallId": "r1", "toolName": "read",
            "isError": false, "content": [{"type": "text", "text": "use std::io;\n\nfn main() {\n    println!(\"**not bold**\");\n}\n"}],
            "timestamp": 3}),
        ),
        json!({"type": "compaction", "id": "m4", "parentId": "m3", "timestamp": at,
               "summary": "## Goal\nFix the parser.\n\n## Done\n- read `src/main.rs`",
               "firstKeptEntryId": "m3", "tokensBefore": 1000}),
        message(
            "m5",
            Some("m4"),
            json!({"role": "user", "content": "Thanks. Now run the tests, please.", "timestamp": 5}),
        ),
    ];
    let file = home.path().join("md.jsonl");
    std::fs::write(&file, jsonl(&lines)).unwrap();
    let page = export(home.path(), &file, &[]);
    let data = page_data(&page);
    assert_eq!(
        data["entries"][1]["blocks"][0]["md"][0],
        json!(["h2", "Plan"])
    );
    assert_eq!(data["entries"][2]["blocks"][0]["lang"], "rs");
    // One paragraph of plain words is not carried twice: the page draws it from the text.
    assert_eq!(data["entries"][4]["blocks"][0]["md"], json!(1));
    let Some(tools) = browser_tools() else { return };
    let shots = screenshot_dir(home.path());
    let url = format!("file://{}", home.path().join("page.html").display());
    check_in_browser(&tools, "markdown", &url, &shots, json!({}));
}

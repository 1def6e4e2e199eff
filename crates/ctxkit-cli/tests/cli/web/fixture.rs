//! A session made to be looked at: two compactions, a branch with a branch summary, a label, a
//! name, a model change, an overflow, thinking, an image, long tool results the transforms prune,
//! a fake key, and text that would run as HTML if it were not escaped.

use serde_json::{Value, json};

/// The strings that must render as text.
pub const HOSTILE: &str = "<script>alert(1)</script> <img src=x onerror=alert(2)> \
[click](javascript:alert(3)) &lt;b&gt; &amp; \u{1b}[31mred\u{1b}[0m";
/// A credential-shaped string the page must redact.
pub const FAKE_KEY: &str = "sk-ant-api03-FAKEFAKEFAKEFAKEFAKEFAKE";
/// A 1×1 PNG.
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Builds the file's lines: `lines()` and the ids the tests look for.
pub struct Demo {
    pub lines: Vec<Value>,
    parent: Option<String>,
    clock: i64,
    serial: usize,
}

impl Demo {
    fn stamp(&mut self) -> (String, i64) {
        self.clock += 1000;
        let seconds = self.clock / 1000;
        let iso = format!(
            "2026-01-01T{:02}:{:02}:{:02}.000Z",
            seconds / 3600,
            (seconds / 60) % 60,
            seconds % 60
        );
        (iso, 1_767_225_600_000 + self.clock)
    }

    /// Appends an entry under the current parent; returns its id.
    fn push(&mut self, mut entry: Value) -> String {
        self.serial += 1;
        let id = format!("e{:03}", self.serial);
        let (iso, _) = self.stamp();
        entry["id"] = json!(id);
        entry["parentId"] = json!(self.parent);
        entry["timestamp"] = json!(iso);
        self.lines.push(entry);
        self.parent = Some(id.clone());
        id
    }

    fn message(&mut self, mut message: Value) -> String {
        let (_, ms) = self.stamp();
        message["timestamp"] = json!(ms);
        self.push(json!({"type": "message", "message": message}))
    }

    fn user(&mut self, text: &str) -> String {
        self.message(json!({"role": "user", "content": text}))
    }

    fn assistant(&mut self, content: Value, context: u64, cache_read: u64, model: &str) -> String {
        self.message(json!({
            "role": "assistant", "content": content, "provider": "anthropic", "model": model,
            "stopReason": "toolUse",
            "usage": {"input": context - cache_read, "output": 120, "cacheRead": cache_read,
                      "cacheWrite": 0, "totalTokens": context + 120,
                      "cost": {"input": 0.01, "output": 0.002, "cacheRead": 0.001, "cacheWrite": 0.0, "total": 0.013}}
        }))
    }

    /// One tool call and its long result (120 numbered lines); returns the result's id.
    fn tool_turn(&mut self, call: &str, context: u64, model: &str) -> String {
        self.assistant(
            json!([{"type": "thinking", "thinking": format!("I should run step {call}")},
                   {"type": "toolCall", "id": call, "name": "bash", "arguments": {"command": format!("cargo test {call}")}}]),
            context,
            context / 2,
            model,
        );
        let output: String = (0..120)
            .map(|line| format!("line {line} of {call}: ok\n"))
            .collect();
        self.message(
            json!({"role": "toolResult", "toolCallId": call, "toolName": "bash", "isError": false,
                            "content": [{"type": "text", "text": output}]}),
        )
    }
}

/// The demo session's lines (header first) and the ids tests look for.
pub struct DemoSession {
    pub lines: Vec<Value>,
    pub first_compaction: String,
    pub second_compaction: String,
    pub covered_by_first: usize,
    pub before_second: String,
    pub branch_summary: String,
    pub leaf: String,
}

pub fn demo_session() -> DemoSession {
    let mut demo = Demo {
        lines: Vec::new(),
        parent: None,
        clock: 0,
        serial: 0,
    };
    demo.push(json!({"type": "session_info", "name": "Parser refactor"}));
    demo.push(json!({"type": "thinking_level_change", "thinkingLevel": "medium"}));
    let first_user = demo.user(&format!(
        "fix the parser; the needle-word is here. İstanbul İzmir İzmit hatası burada. {HOSTILE}"
    ));
    let sonnet = "claude-sonnet-4-5";
    demo.tool_turn("c01", 9_000, sonnet);
    demo.message(json!({"role": "toolResult", "toolCallId": "img", "toolName": "screenshot", "isError": false,
                        // Labelled as tools and importers often write it, its base64 wrapped: the page
                        // draws it by its bytes (QA r104: `image/jpg` and wrapped base64 were refused).
                        "content": [{"type": "image", "mimeType": "image/jpg",
                                     "data": format!("{}\n{}", &PIXEL[..40], &PIXEL[40..])}]}));
    for turn in 2..=7 {
        demo.tool_turn(&format!("c{turn:02}"), 9_000 + turn * 3_000, sonnet);
    }
    let kept_from = demo.user(&format!("keep going (token {FAKE_KEY})"));
    demo.tool_turn("c08", 32_000, sonnet);
    let covered_by_first = demo
        .lines
        .iter()
        .position(|line| line["id"] == json!(kept_from))
        .unwrap_or(0);
    let first_compaction = demo.push(json!({"type": "compaction", "summary": "## Goal\nFix the parser.\n\n## Done\n- ran c01..c07",
        "firstKeptEntryId": kept_from, "tokensBefore": 30_000,
        "details": {"readFiles": ["src/parser.rs"], "modifiedFiles": ["src/lexer.rs"], "summarizer": "offline"}}));
    for turn in 9..=11 {
        demo.tool_turn(&format!("c{turn:02}"), 12_000 + turn * 1_000, sonnet);
    }
    demo.message(json!({"role": "assistant", "content": [], "provider": "anthropic", "model": sonnet,
        "stopReason": "error", "errorMessage": "prompt is too long: 210000 tokens > 200000 maximum"}));
    demo.push(json!({"type": "model_change", "provider": "openai", "modelId": "gpt-5"}));
    let kept_second = demo.user("continue after the overflow");
    demo.tool_turn("c12", 26_000, "gpt-5");
    let before_second = demo
        .lines
        .last()
        .and_then(|line| line["id"].as_str())
        .unwrap_or("")
        .to_owned();
    let second_compaction = demo.push(json!({"type": "compaction", "summary": "## Goal\nFix the parser.\n\n## Progress\n- c08..c12 green",
        "firstKeptEntryId": kept_second, "tokensBefore": 28_000,
        "details": {"readFiles": ["src/parser.rs", "tests/parse.rs"], "modifiedFiles": ["src/parser.rs"], "summarizer": "anthropic/claude-haiku-4-5"}}));
    let fork_point = demo.tool_turn("c13", 14_000, "gpt-5");
    // A side branch from the fork point, left behind.
    demo.user("try the other approach");
    demo.assistant(
        json!([{"type": "text", "text": "the other approach fails"}]),
        15_000,
        7_000,
        "gpt-5",
    );
    demo.parent = Some(fork_point.clone());
    let branch_summary = demo.push(json!({"type": "branch_summary", "fromId": fork_point, "summary": "Tried the other approach: it fails."}));
    demo.push(json!({"type": "label", "targetId": first_user, "label": "start"}));
    for turn in 14..=22 {
        demo.tool_turn(
            &format!("c{turn:02}"),
            14_000 + (turn - 13) * 1_500,
            "gpt-5",
        );
    }
    let leaf = demo.assistant(
        json!([{"type": "text", "text": "All tests pass."}]),
        30_000,
        20_000,
        "gpt-5",
    );
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "web-demo", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/home/me/app"}),
    ];
    lines.extend(demo.lines);
    DemoSession {
        lines,
        first_compaction,
        second_compaction,
        covered_by_first,
        before_second,
        branch_summary,
        leaf,
    }
}

/// The session as JSONL text.
pub fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|line| format!("{line}\n")).collect()
}

//! A seeded generator of Claude Code transcripts and Codex rollouts covering what the importers must
//! handle: branches, sidechains, compaction, tool use (paired, failed, orphaned), thinking, images,
//! unknown records and malformed lines. Same seed, same bytes.

use serde_json::{Value, json};

/// A small deterministic generator (64-bit LCG).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    pub fn words(&mut self, count: usize) -> String {
        const WORDS: &[&str] = &[
            "parser", "session", "token", "refactor", "cache", "branch", "test", "lexer", "config",
            "error", "compact", "summary", "file", "module", "trait", "index",
        ];
        (0..count)
            .map(|_| WORDS[self.below(WORDS.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn uuid(&mut self) -> String {
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            self.next() & 0xffff_ffff,
            self.next() & 0xffff,
            self.next() & 0xfff,
            self.next() & 0xfff,
            (self.next() << 16 | self.next()) & 0xffff_ffff_ffff
        )
    }
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn time(second: u64) -> String {
    format!("2025-06-01T10:{:02}:{:02}.000Z", second / 60, second % 60)
}

/// A Claude Code transcript.
pub fn claude_code(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let session = rng.uuid();
    let cwd = "/home/dev/project";
    let mut lines: Vec<String> = Vec::new();
    let mut clock = 0;
    let mut record = |rng: &mut Rng, kind: &str, uuid: &str, parent: Option<&str>, extra: Value| {
        clock += 1 + rng.below(5);
        let mut object = json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external", "cwd": cwd,
            "sessionId": session, "version": "1.0.80", "gitBranch": "main", "type": kind,
            "uuid": uuid, "timestamp": time(clock),
        });
        if let (Value::Object(object), Value::Object(extra)) = (&mut object, extra) {
            object.extend(extra);
        }
        object.to_string()
    };
    let user = |text: String| json!({"message": {"role": "user", "content": text}});
    // Every API response has its own message id.
    let responses = std::cell::Cell::new(0);
    let assistant = |content: Value, stop: &str| {
        responses.set(responses.get() + 1);
        json!({"message": {"id": format!("msg_{}", responses.get()), "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-20250514", "content": content, "stop_reason": stop,
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 300,
                      "cache_read_input_tokens": 4000, "output_tokens": 80}}})
    };
    let ids: Vec<String> = (0..24).map(|_| rng.uuid()).collect();
    let id = |index: usize| ids[index].as_str();

    lines.push(
        json!({"type": "summary", "summary": "Refactor the parser", "leafUuid": id(7)}).to_string(),
    );
    let prompt = rng.words(6);
    lines.push(record(&mut rng, "user", id(0), None, user(prompt)));
    let thought = rng.words(8);
    lines.push(record(&mut rng, "assistant", id(1), Some(id(0)), assistant(json!([
        {"type": "thinking", "thinking": thought, "signature": "sig-1"},
        {"type": "text", "text": "Let me read the file."},
        {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": "/home/dev/project/src/lib.rs"}}
    ]), "tool_use")));
    lines.push(record(&mut rng, "user", id(2), Some(id(1)), json!({
        "message": {"role": "user", "content": [{"tool_use_id": "toolu_01", "type": "tool_result", "content": "fn main() {}"}]},
        "toolUseResult": {"type": "text", "file": {"filePath": "/home/dev/project/src/lib.rs", "numLines": 1}}
    })));
    lines.push(record(&mut rng, "assistant", id(3), Some(id(2)), assistant(json!([
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "tool_use", "id": "toolu_02", "name": "Bash", "input": {"command": "cargo test"}}
    ]), "tool_use")));
    lines.push(record(&mut rng, "user", id(4), Some(id(3)), json!({
        "message": {"role": "user", "content": [{"tool_use_id": "toolu_02", "type": "tool_result",
            "content": [{"type": "text", "text": "error: 1 test failed"}], "is_error": true}]}
    })));
    // Two replies to the same tool result: a branch (the user retried).
    let reply = rng.words(5);
    lines.push(record(
        &mut rng,
        "assistant",
        id(5),
        Some(id(4)),
        assistant(json!([{"type": "text", "text": reply}, {"type": "tool_use", "id": "toolu_04", "name": "Edit", "input": {"file_path": "src/lib.rs"}}]), "tool_use"),
    ));
    let retry = rng.words(5);
    lines.push(record(
        &mut rng,
        "assistant",
        id(6),
        Some(id(4)),
        assistant(json!([{"type": "text", "text": retry}]), "end_turn"),
    ));
    // A sub-agent run (sidechain) with its own root.
    let task = rng.words(4);
    lines.push(record(
        &mut rng,
        "user",
        id(8),
        None,
        json!({"isSidechain": true, "message": {"role": "user", "content": task}}),
    ));
    lines.push(record(&mut rng, "assistant", id(9), Some(id(8)), json!({"isSidechain": true, "message": {"role": "assistant", "model": "claude-sonnet-4-20250514", "content": [{"type": "text", "text": "Sub-agent done."}]}})));
    lines.push(json!({"type": "file-history-snapshot", "messageId": id(6), "snapshot": {"trackedFileBackups": {}}}).to_string());
    lines.push(r#"{"type":"user","uuid":"cut-off"#.to_owned());
    lines.push("[1, 2, 3]".to_owned());
    lines.push(String::new());
    let pre_tokens = 150_000 + rng.below(20_000);
    lines.push(record(&mut rng, "system", id(10), None, json!({
        "subtype": "compact_boundary", "content": "Conversation compacted", "level": "info",
        "logicalParentUuid": id(6),
        "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens, "postTokens": 9000, "filesIncluded": ["src/lib.rs"]}
    })));
    lines.push(record(&mut rng, "user", id(11), Some(id(10)), json!({
        "isCompactSummary": true, "isVisibleInTranscriptOnly": true,
        "message": {"role": "user", "content": "This session is being continued from a previous conversation. Summary: the parser was refactored."}
    })));
    lines.push(record(
        &mut rng,
        "user",
        id(12),
        Some(id(11)),
        json!({"message": {"role": "user", "content": [
            {"type": "text", "text": "What does this screenshot show?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
        ]}}),
    ));
    lines.push(record(&mut rng, "assistant", id(13), Some(id(12)), assistant(json!([
        {"type": "text", "text": "A single pixel. Checking the repo."},
        {"type": "tool_use", "id": "toolu_03", "name": "Glob", "input": {"pattern": "**/*.png"}}
    ]), "tool_use")));
    lines.push(record(
        &mut rng,
        "user",
        id(14),
        Some(id(13)),
        json!({"message": {"role": "user", "content": [
            {"tool_use_id": "toolu_99", "type": "tool_result", "content": "orphan output"},
            {"type": "text", "text": "[Request interrupted by user]"}
        ]}}),
    ));
    lines.push(record(
        &mut rng,
        "system",
        id(15),
        Some(id(14)),
        json!({"subtype": "informational", "content": "Hook ran", "level": "info"}),
    ));
    lines.push(record(
        &mut rng,
        "workflow-checkpoint",
        id(16),
        Some(id(15)),
        json!({"attachment": {"type": "queued_command", "prompt": "later"}}),
    ));
    let closing = rng.words(4);
    lines.push(record(
        &mut rng,
        "assistant",
        id(17),
        Some(id(16)),
        assistant(json!([{"type": "text", "text": closing}]), "end_turn"),
    ));
    lines.join("\n") + "\n"
}

/// A Claude Code transcript in which Claude calls `calls` tools in one reply, written the way Claude
/// Code writes it: one `assistant` record per content block (thinking, text, each `tool_use`), all
/// with the reply's `message.id`, each the child of the previous one; one `user` record per result,
/// the child of the block that called it, written as the tools finish (the last call first); a
/// `progress` record under a call; the next reply the child of the last result written.
pub fn claude_code_parallel(calls: u64) -> String {
    let mut rng = Rng::new(calls);
    let session = rng.uuid();
    let mut lines: Vec<String> = Vec::new();
    let mut clock = 0;
    let mut record = |rng: &mut Rng, kind: &str, parent: Option<&str>, extra: Value| {
        clock += 1;
        let uuid = rng.uuid();
        let mut object = json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": "C:\\Users\\dev\\shop", "sessionId": session, "version": "2.0.14",
            "gitBranch": "main", "type": kind, "uuid": uuid, "timestamp": time(clock),
        });
        if let (Value::Object(object), Value::Object(extra)) = (&mut object, extra) {
            object.extend(extra);
        }
        lines.push(object.to_string());
        uuid
    };
    let fragment = |message: &str, block: Value| {
        json!({"requestId": format!("req_{message}"), "message": {"id": message, "type": "message",
            "role": "assistant", "model": "claude-opus-4-1-20250805", "content": [block],
            "stop_reason": null, "usage": {"input_tokens": 9, "output_tokens": 40}}})
    };
    let prompt = record(
        &mut rng,
        "user",
        None,
        json!({"message": {"role": "user",
        "content": format!("Read the {calls} config files and tell me which one sets the port.")}}),
    );
    let mut parent = record(
        &mut rng,
        "assistant",
        Some(&prompt),
        fragment(
            "msg_01A",
            json!({"type": "thinking", "thinking": "Read them all at once.", "signature": "c2ln"}),
        ),
    );
    parent = record(
        &mut rng,
        "assistant",
        Some(&parent),
        fragment(
            "msg_01A",
            json!({"type": "text", "text": "I'll read them in parallel."}),
        ),
    );
    let mut call_records = Vec::new();
    for call in 1..=calls {
        parent = record(
            &mut rng,
            "assistant",
            Some(&parent),
            fragment(
                "msg_01A",
                json!({
            "type": "tool_use", "id": format!("toolu_{call:02}"), "name": "Read",
            "input": {"file_path": format!("C:\\Users\\dev\\shop\\config{call}.toml")}}),
            ),
        );
        call_records.push(parent.clone());
    }
    record(
        &mut rng,
        "progress",
        Some(&call_records[0]),
        json!({"data": {"type": "hook_progress",
        "hookEvent": "PreToolUse"}, "toolUseID": "toolu_01"}),
    );
    let mut order: Vec<u64> = (1..=calls).collect();
    order.rotate_right(1);
    let mut last_result = String::new();
    for call in order {
        let caller = &call_records[usize::try_from(call - 1).unwrap()];
        last_result = record(
            &mut rng,
            "user",
            Some(caller),
            json!({
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("toolu_{call:02}"), "content": format!("port = {}", 8000 + call)}]},
            "toolUseResult": {"type": "text", "file": {"numLines": 1}},
            "sourceToolAssistantUUID": caller}),
        );
    }
    let answer = record(
        &mut rng,
        "assistant",
        Some(&last_result),
        fragment(
            "msg_01B",
            json!({"type": "text", "text": format!("config{calls}.toml sets the last port.")}),
        ),
    );
    let thanks = record(
        &mut rng,
        "user",
        Some(&answer),
        json!({"message": {"role": "user",
        "content": "Thanks."}}),
    );
    record(
        &mut rng,
        "assistant",
        Some(&thanks),
        fragment(
            "msg_01C",
            json!({"type": "text", "text": "You're welcome."}),
        ),
    );
    lines.join("\n") + "\n"
}

/// Marks a line written as given (a malformed one).
const RAW: &str = "(raw)";

/// A Codex rollout.
pub fn codex(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let session = rng.uuid();
    let mut clock = 0;
    let mut lines: Vec<String> = Vec::new();
    let mut line = |rng: &mut Rng, kind: &str, payload: Value| {
        clock += 1 + rng.below(5);
        if kind == RAW {
            lines.push(payload.as_str().unwrap_or_default().to_owned());
        } else {
            lines.push(
                json!({"timestamp": time(clock), "type": kind, "payload": payload}).to_string(),
            );
        }
    };
    line(
        &mut rng,
        "session_meta",
        json!({"id": session, "timestamp": time(0), "cwd": "/home/dev/project",
        "originator": "codex_cli_rs", "cli_version": "0.46.0", "instructions": null, "model_provider": "openai",
        "git": {"commit_hash": "abc123", "branch": "main"}}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>"}]}),
    );
    line(
        &mut rng,
        "turn_context",
        json!({"cwd": "/home/dev/project", "approval_policy": "on-request",
        "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex", "effort": "medium", "summary": "auto"}),
    );
    let prompt = rng.words(6);
    line(
        &mut rng,
        "event_msg",
        json!({"type": "user_message", "message": prompt, "images": []}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": prompt}, {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")}]}),
    );
    let thought = rng.words(7);
    line(
        &mut rng,
        "response_item",
        json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": thought}], "content": null, "encrypted_content": "gAAAA-opaque"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"ls\"]}", "call_id": "call_1"}),
    );
    let tokens = 20_000 + rng.below(5_000);
    line(
        &mut rng,
        "event_msg",
        json!({"type": "token_count", "info": {"total_token_usage": {"input_tokens": tokens, "total_tokens": tokens + 500},
        "last_token_usage": {"input_tokens": tokens, "cached_input_tokens": 0, "output_tokens": 500, "reasoning_output_tokens": 100, "total_tokens": tokens + 500}}}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "function_call_output", "call_id": "call_1", "output": "Cargo.toml\nsrc\n"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "custom_tool_call", "status": "completed", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done!"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "function_call", "name": "shell", "arguments": "not json", "call_id": "call_3"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "function_call_output", "call_id": "call_3", "output": {"content": "failed to parse arguments", "success": false}}),
    );
    line(
        &mut rng,
        RAW,
        json!(
            r#"{"timestamp":"2025-06-01T10:09:00.000Z","type":"response_item","payload":{"type":"mess"#
        ),
    );
    line(
        &mut rng,
        "compacted",
        json!({"message": "Summary: listed files and applied a patch.", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}]}),
    );
    line(
        &mut rng,
        "turn_context",
        json!({"cwd": "/home/dev/project", "approval_policy": "on-request",
        "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5", "effort": "high", "summary": "auto"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "And this one?"}, {"type": "input_image", "image_url": "https://example.com/shot.png"}]}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "rust jsonl"}}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "function_call_output", "call_id": "call_9", "output": "orphan"}),
    );
    line(
        &mut rng,
        "response_item",
        json!({"type": "local_shell_call", "call_id": "call_4", "status": "completed", "action": {"type": "exec", "command": ["pwd"]}}),
    );
    line(
        &mut rng,
        "future_record",
        json!({"note": "a kind this version does not know"}),
    );
    let answer = rng.words(5);
    line(
        &mut rng,
        "response_item",
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}),
    );
    lines.join("\n") + "\n"
}

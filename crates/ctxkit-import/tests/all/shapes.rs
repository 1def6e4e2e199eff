//! Real-world shapes (hand-written fixtures under `tests/fixtures/shapes`): each is imported, written,
//! opened by the store, and its context checked message by message.

use std::path::{Path, PathBuf};

use ctxkit_import::{ImportedSession, IssueKind, SourceFormat, WriteOutcome, import_file};
use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};
use ctxkit_session::{LeafSelector, Session};

pub fn shape(name: &str) -> PathBuf {
    crate::fixtures_dir().join("shapes").join(name)
}

fn text_of(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .map(block_text)
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("<image {} {}B>", image.mime_type, image.data.len()),
        ContentBlock::Thinking(thinking) => format!("<thinking {}>", thinking.thinking),
        ContentBlock::ToolCall(call) => format!("<call {} {}>", call.id, call.name),
        ContentBlock::Unknown(object) => format!("<unknown {:?}>", object.get("type")),
    }
}

/// One line per context message: `role: text`.
pub fn describe(message: &AgentMessage) -> String {
    match message {
        AgentMessage::User(user) => format!("user: {}", text_of(&user.content)),
        AgentMessage::Assistant(assistant) => format!(
            "assistant: {}",
            assistant
                .content
                .iter()
                .map(block_text)
                .collect::<Vec<_>>()
                .join(" | ")
        ),
        AgentMessage::ToolResult(result) => format!(
            "toolResult {} {}: {}",
            result.tool_call_id,
            result.tool_name,
            text_of(&result.content)
        ),
        AgentMessage::Custom(custom) => {
            format!(
                "custom {}: {}",
                custom.custom_type,
                text_of(&custom.content)
            )
        }
        AgentMessage::CompactionSummary(summary) => {
            format!("compactionSummary: {}", summary.summary)
        }
        other @ (AgentMessage::BashExecution(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::Unknown(_)) => other.role().to_owned(),
    }
}

/// Imports `path`, writes the session into a temp dir (checking a second write changes nothing and
/// the source stays as it was), opens it and returns the context at the leaf.
pub fn imported_context(path: &Path) -> (ImportedSession, Vec<String>) {
    // `opencode.db#<session id>` names a session inside the file.
    let source = if path.exists() {
        path.to_owned()
    } else {
        let text = path.to_string_lossy();
        PathBuf::from(text.rsplit_once('#').unwrap().0)
    };
    let before = std::fs::read(&source).unwrap();
    let session = import_file(path, None).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let out = temp.path().join(session.file_name());
    assert_eq!(session.write_to(&out).unwrap(), WriteOutcome::Created);
    assert_eq!(
        import_file(path, None).unwrap().write_to(&out).unwrap(),
        WriteOutcome::UpToDate
    );
    assert_eq!(
        std::fs::read(&source).unwrap(),
        before,
        "the source changed"
    );
    let opened = Session::open(&out).unwrap();
    assert!(
        opened.diagnostics().is_empty(),
        "{}: {:?}",
        path.display(),
        opened.diagnostics()
    );
    let context = opened.context_at(LeafSelector::Current);
    let messages = context
        .messages
        .iter()
        .map(|message| describe(&opened.message(message).unwrap()))
        .collect();
    (session, messages)
}

fn has_issue(session: &ImportedSession, wanted: fn(&IssueKind) -> bool) -> bool {
    session
        .report
        .issues
        .iter()
        .any(|issue| wanted(&issue.kind))
}

#[test]
fn codex_remote_compaction_continues_from_the_replacement_history() {
    let (session, context) = imported_context(&shape("codex-remote-compaction.jsonl"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(
        context,
        [
            &format!(
                "compactionSummary: {}",
                ctxkit_import::REMOTE_COMPACTION_SUMMARY
            ),
            "user: The checkout total is off by one cent for discounts; fix it and add a test.",
            "assistant: Plan: 1. round the discount after subtracting it in src/cart.rs. 2. add a test for 19.99 with 15% off.",
            "user: Go ahead.",
            "assistant: <call call_p1 apply_patch>",
            "toolResult call_p1 apply_patch: Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM src/cart.rs\n",
            "assistant: [web search: \"banker's rounding rust f64\"]",
            "assistant: Fixed: the discount is rounded on its own now, and a test covers 19.99 at 15% off.",
        ]
    );
    assert!(!has_issue(&session, |kind| matches!(
        kind,
        IssueKind::CompactionWithoutSummary | IssueKind::UnknownRecord { .. }
    )));
    // The encrypted checkpoint is kept as data, in the record and as its own entry.
    let text = session.to_jsonl().unwrap();
    assert!(text.contains("gAAAAB-opaque-compaction-checkpoint"));
    assert!(text.contains("\"customType\":\"import.codex.compaction\""));
    // The earlier conversation stays on the thread, before the compaction.
    assert!(text.contains("The discount is rounded before it is subtracted."));
    assert_eq!(
        session
            .entries()
            .iter()
            .filter(|entry| entry.parent_id.is_none())
            .count(),
        1
    );
    let entries = session.entries();
    let compaction = entries
        .iter()
        .find_map(|entry| entry.kind.as_compaction())
        .unwrap();
    assert!(compaction.extra.contains_key("codexCompacted"));
}

#[test]
fn codex_2025_rollouts_without_envelopes_import() {
    let (session, context) = imported_context(&shape("codex-legacy-2025-08.jsonl"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(session.header.id, "0198c0de-legacy");
    assert_eq!(session.header.cwd, "C:\\Users\\dev\\notes");
    assert_eq!(
        context,
        [
            "user: <environment_context>\n  <cwd>C:\\Users\\dev\\notes</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>",
            "user: Count the TODOs in this repo.",
            "assistant: <thinking Use ripgrep.>",
            "assistant: <call call_l1 shell>",
            "toolResult call_l1 shell: Exit code: 0\nWall time: 0.1 seconds\nOutput:\nnotes.md:3\n",
            "assistant: There are 3 TODOs, all in notes.md.",
        ]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn the_oldest_single_document_rollout_imports() {
    let (session, context) = imported_context(&shape("rollout-2025-05-03T10-00-00-oldest.json"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(session.header.id, "6f1c-oldest");
    assert_eq!(
        context,
        [
            "user: What does main.py do?",
            "assistant: <call call_o1 shell>",
            "toolResult call_o1 shell: print('hello')",
            "assistant: It prints hello.",
        ]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn a_header_only_rollout_is_an_empty_session_with_a_note() {
    let (session, context) = imported_context(&shape("codex-header-only.jsonl"));
    assert_eq!(session.format, SourceFormat::Codex);
    assert_eq!(session.header.cwd, "/home/dev/empty");
    assert!(context.is_empty());
    assert!(has_issue(&session, |kind| matches!(
        kind,
        IssueKind::NoConversation
    )));
}

#[test]
fn claude_code_parallel_tool_calls_keep_every_result_in_the_context() {
    let temp = tempfile::tempdir().unwrap();
    for calls in 2..=10_u64 {
        let path = temp.path().join(format!("parallel-{calls}.jsonl"));
        std::fs::write(&path, crate::generator::claude_code_parallel(calls)).unwrap();
        let (session, context) = imported_context(&path);
        let mut reply =
            "assistant: <thinking Read them all at once.> | I'll read them in parallel.".to_owned();
        for call in 1..=calls {
            reply.push_str(&format!(" | <call toolu_{call:02} Read>"));
        }
        let mut expected = vec![
            format!("user: Read the {calls} config files and tell me which one sets the port."),
            reply,
        ];
        // Results in the order the tools finished: the last call first.
        let mut order: Vec<u64> = (1..=calls).collect();
        order.rotate_right(1);
        for call in order {
            expected.push(format!(
                "toolResult toolu_{call:02} Read: port = {}",
                8000 + call
            ));
        }
        expected.push(format!("assistant: config{calls}.toml sets the last port."));
        expected.push("user: Thanks.".to_owned());
        expected.push("assistant: You're welcome.".to_owned());
        assert_eq!(context, expected, "{calls} parallel calls");
        assert!(
            !has_issue(&session, |kind| matches!(
                kind,
                IssueKind::MissingToolResultAdded { .. }
                    | IssueKind::ToolCallWithoutResult { .. }
                    | IssueKind::OrphanToolResult { .. }
                    | IssueKind::UnknownRecord { .. }
            )),
            "{calls}: {:?}",
            session.report.issues
        );
        assert_eq!(session.header.cwd, "C:\\Users\\dev\\shop");
    }
}

#[test]
fn claude_code_files_without_a_conversation_import_empty() {
    let (session, context) = imported_context(&shape("7d3c2a10-summary-only.jsonl"));
    assert_eq!(session.format, SourceFormat::ClaudeCode);
    assert_eq!(session.header.id, "7d3c2a10-summary-only");
    assert!(context.is_empty());
    assert!(has_issue(&session, |kind| matches!(
        kind,
        IssueKind::NoConversation
    )));
    let (session, context) = imported_context(&shape("1e9b8c7d-teleported.jsonl"));
    assert_eq!(session.format, SourceFormat::ClaudeCode);
    assert!(context.is_empty());
    assert_eq!(session.header.timestamp, "2026-05-10T12:00:00.000Z");
    assert!(!has_issue(&session, |kind| matches!(
        kind,
        IssueKind::UnknownRecord { .. }
    )));
    assert!(has_issue(&session, |kind| matches!(
        kind,
        IssueKind::NoConversation
    )));
}

/// A Windows session with a ~600 KB pasted screenshot, a model switch and models other than
/// Anthropic's behind Claude Code (an Anthropic-compatible endpoint).
fn windows_session(image_bytes: usize) -> String {
    let image = "iVBORw0KGgo".repeat(image_bytes / 11);
    let record =
        |uuid: &str, parent: Option<&str>, kind: &str, second: u32, message: serde_json::Value| {
            serde_json::json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": "C:\\Users\\Dev User\\source\\repos\\shop", "sessionId": "0a1b2c3d-win",
            "version": "2.0.30", "type": kind, "uuid": uuid,
            "timestamp": format!("2026-02-11T08:00:{second:02}.000Z"), "message": message})
            .to_string()
        };
    let reply = |id: &str, model: &str, text: &str| {
        serde_json::json!({"id": id, "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 5, "output_tokens": 7}})
    };
    [
        record("u1", None, "user", 1, serde_json::json!({"role": "user", "content": [
            {"type": "text", "text": "Why is this button misaligned?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}}]})),
        record("a1", Some("u1"), "assistant", 2, reply("msg_w1", "claude-sonnet-4-5-20250929", "The flex container lacks align-items.")),
        record("u2", Some("a1"), "user", 3, serde_json::json!({"role": "user", "content": "Switch to glm and fix it."})),
        record("a2", Some("u2"), "assistant", 4, reply("msg_w2", "glm-4.6", "Added align-items: center.")),
        record("u3", Some("a2"), "user", 5, serde_json::json!({"role": "user", "content": "Now qwen: review it."})),
        record("a3", Some("u3"), "assistant", 6, reply("msg_w3", "qwen3-coder-plus", "Looks right.")),
    ]
    .join("\n")
        + "\n"
}

#[test]
fn windows_paths_a_600_kb_image_line_and_model_switches_import() {
    let temp = tempfile::tempdir().unwrap();
    let project = temp.path().join("c--Users-Dev-User-source-repos-shop");
    std::fs::create_dir_all(&project).unwrap();
    let path = project.join("0a1b2c3d-win.jsonl");
    std::fs::write(&path, windows_session(600_000)).unwrap();
    let longest = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::len)
        .max()
        .unwrap();
    assert!(longest > 590_000, "{longest}");
    let (session, context) = imported_context(&path);
    assert_eq!(
        session.header.cwd,
        "C:\\Users\\Dev User\\source\\repos\\shop"
    );
    assert_eq!(
        context,
        [
            "user: Why is this button misaligned? | <image image/png 599995B>",
            "assistant: The flex container lacks align-items.",
            "user: Switch to glm and fix it.",
            "assistant: Added align-items: center.",
            "user: Now qwen: review it.",
            "assistant: Looks right.",
        ]
    );
    let models: Vec<String> = session
        .entries()
        .iter()
        .filter_map(|entry| {
            if let ctxkit_protocol::EntryKind::ModelChange(change) = &entry.kind {
                Some(change.model_id.clone())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        models,
        ["claude-sonnet-4-5-20250929", "glm-4.6", "qwen3-coder-plus"]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

#[test]
fn reply_fragments_separated_by_hook_records_merge_and_queued_prompts_are_user_messages() {
    let (session, context) = imported_context(&shape("claude-parallel-interleaved.jsonl"));
    assert_eq!(
        context,
        [
            "user: Run the linter and the tests.",
            "assistant: <call toolu_lint Bash> | <call toolu_test Bash>",
            "toolResult toolu_lint Bash: 0 problems",
            "toolResult toolu_test Bash: 42 passed",
            "assistant: Lint is clean and all 42 tests pass.",
            "user: also bump the version",
            "assistant: Bumped to 1.4.1.",
        ]
    );
    assert!(
        !has_issue(&session, |kind| matches!(
            kind,
            IssueKind::MissingToolResultAdded { .. } | IssueKind::UnknownRecord { .. }
        )),
        "{:?}",
        session.report.issues
    );
}

/// Defaults QA: an imported Claude Code session's replies carried their tokens and no cost, so
/// `ctxkit info` called every call "of unknown price". They are priced as Pi prices its own
/// replies, at the model's list prices; a model the table does not know gets a zero cost (Pi
/// 1.6.0 cannot open a reply without one; `ctxkit info` still calls a $0 call that used tokens
/// of unknown price).
#[test]
fn claude_code_replies_are_priced_at_the_models_list_prices() {
    let line = |model: &str| {
        serde_json::json!({"type": "assistant", "uuid": format!("a-{model}"), "parentUuid": null,
            "sessionId": "s", "timestamp": "2026-06-23T20:04:09.252Z", "cwd": "/p",
            "message": {"id": format!("m-{model}"), "role": "assistant", "model": model,
                "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1000, "output_tokens": 2000,
                    "cache_read_input_tokens": 100000, "cache_creation_input_tokens": 10000}}})
        .to_string()
    };
    let temp = tempfile::tempdir().unwrap();
    let source = temp.path().join("s.jsonl");
    let text = [line("claude-opus-4-8"), line("claude-made-up-9")].join("\n");
    std::fs::write(&source, text + "\n").unwrap();
    let out = temp.path().join("out.jsonl");
    import_file(&source, None).unwrap().write_to(&out).unwrap();
    let costs: Vec<Option<f64>> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|entry| entry["message"]["role"] == "assistant")
        .map(|entry| entry["message"]["usage"]["cost"]["total"].as_f64())
        .collect();
    // Opus 4.8: $5 in, $25 out, $0.50 cache reads, $6.25 cache writes per million tokens.
    let opus = 0.005 + 0.05 + 0.05 + 0.0625;
    assert!(
        matches!(costs[..], [Some(total), Some(0.0)] if (total - opus).abs() < 1e-9),
        "{costs:?}"
    );
}

/// QA (session files, defect 1): Pi 1.6.0 could not open an imported Codex session (`TypeError:
/// Cannot read properties of undefined (reading 'input')`): a response's replies before its last,
/// and Claude Code records written without usage, had no `usage`. Every imported reply now has a
/// complete one, as every reply Pi writes does: the four counts, `totalTokens` and a `cost`.
#[test]
fn every_imported_reply_carries_the_usage_pi_reads() {
    let shapes = crate::fixtures_dir().join("shapes");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&shapes)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .chain(
            crate::FIXTURES
                .iter()
                .map(|(name, _, _)| crate::fixtures_dir().join(name)),
        )
        .collect();
    sources.sort();
    let mut replies = 0;
    for source in sources {
        // Folders, databases as SQL text and refused shapes are covered elsewhere.
        let Ok(session) = import_file(&source, None) else {
            continue;
        };
        for line in session.entry_lines() {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            if entry["type"] != "message" || entry["message"]["role"] != "assistant" {
                continue;
            }
            replies += 1;
            let usage = &entry["message"]["usage"];
            for field in ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] {
                assert!(
                    usage[field].is_u64(),
                    "{}: {field} in {line}",
                    source.display()
                );
            }
            for field in ["input", "output", "cacheRead", "cacheWrite", "total"] {
                let cost = &usage["cost"][field];
                assert!(
                    cost.is_number(),
                    "{}: cost.{field} in {line}",
                    source.display()
                );
            }
        }
    }
    assert!(replies > 50, "{replies} replies checked");
}

/// A byte-order mark at the start of a transcript (an editor's, or PowerShell 5's `Set-Content
/// -Encoding utf8`) cost the first record (QA r102): a Codex rollout's `session_meta`, so the
/// session's id became the file's name and its start the next record's. Now it imports as the
/// file without the mark does, a record at a time or read whole.
#[test]
fn a_byte_order_mark_at_the_start_costs_no_record() {
    let temp = tempfile::tempdir().unwrap();
    for fixture in ["codex-rollout.jsonl", "claude-code-session.jsonl"] {
        let clean = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture);
        let marked = temp.path().join(format!("marked-{fixture}"));
        let mut bytes = "\u{feff}".as_bytes().to_vec();
        bytes.extend(std::fs::read(&clean).unwrap());
        std::fs::write(&marked, bytes).unwrap();
        let expected = import_file(&clean, None).unwrap();
        let imported = import_file(&marked, None).unwrap();
        assert_eq!(imported.header.id, expected.header.id, "{fixture}");
        assert_eq!(
            imported.header.timestamp, expected.header.timestamp,
            "{fixture}"
        );
        assert_eq!(imported.entries(), expected.entries(), "{fixture}");
        assert_eq!(imported.report.issues, expected.report.issues, "{fixture}");
    }
}

#[test]
fn codex_parallel_calls_are_one_reply_followed_by_every_output() {
    // Three calls of one response, a developer message Codex wrote between two outputs: one reply
    // holding the three calls, their outputs right after it, the developer text after the outputs
    // (an assistant message per call left every call but the last without its result).
    let (session, context) = imported_context(&shape("codex-parallel-calls.jsonl"));
    assert_eq!(
        context,
        [
            "user: Why does the build fail?",
            "assistant: <thinking Look at the manifest, the lock file and the log at once.>",
            "assistant: Reading three files.",
            "assistant: <call call_one shell_command> | <call call_two shell_command> | <call call_three shell_command>",
            "toolResult call_one shell_command: Exit code: 0\nOutput:\n[package]\nname = \"shop\"\n",
            "toolResult call_two shell_command: Exit code: 0\nOutput:\nversion = 4\n",
            "toolResult call_three shell_command: Exit code: 0\nOutput:\nerror: missing field `edition`\n",
            "custom import.codex.developer: Approved command prefix saved:\n- [\"head\"]",
            "assistant: <call call_four shell_command>",
            "toolResult call_four shell_command: Exit code: 1\nOutput:\n",
            "assistant: Cargo.toml has no `edition`; add `edition = \"2024\"`.",
        ]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
    // The response's usage is on the reply holding its calls.
    let entries = session.entries();
    let calls = entries
        .iter()
        .filter_map(|entry| {
            if let ctxkit_protocol::EntryKind::Message(message) = &entry.kind {
                message.as_assistant()
            } else {
                None
            }
        })
        .find(|reply| reply.content.len() == 3)
        .unwrap();
    assert_eq!(calls.usage.as_ref().unwrap().total_tokens, 2100);
}

#[test]
fn a_prompt_under_hook_progress_records_continues_from_the_reply_before_it() {
    // Claude Code 2.1.81: the hooks' progress records hang off the first tool call, written after
    // the turn, and the next prompt hangs under the last of them. The prompt continues from the
    // turn's last reply, as Claude Code wrote it, not from the call (which left the call's result
    // and the replies after it on a dead branch).
    let (session, context) = imported_context(&shape("claude-progress-fork.jsonl"));
    assert_eq!(
        context,
        [
            "user: List the notes about taxes.",
            "assistant: <call toolu_glob Glob>",
            "toolResult toolu_glob Glob: notes/tax-2025.md",
            "assistant: <call toolu_read Read>",
            "toolResult toolu_read Read: Deadline: April 15.",
            "assistant: One note: notes/tax-2025.md, deadline April 15.",
            "user: Add a reminder for it.",
            "assistant: Reminder added for April 15.",
        ]
    );
    assert!(
        session.report.issues.is_empty(),
        "{:?}",
        session.report.issues
    );
}

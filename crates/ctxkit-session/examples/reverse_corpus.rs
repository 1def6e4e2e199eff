//! Writes session files with ctxkit's store, each beside ctxkit's own reading of it
//! (`X.expected.json`), for `conformance/reverse.mjs` to check against the reference:
//! `cargo run -p ctxkit-session --example reverse_corpus -- DIR && node conformance/reverse.mjs DIR`.

use std::error::Error;
use std::path::{Path, PathBuf};

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, BashExecutionMessage, ContentBlock, MessageContent, ToolCall,
    ToolResultMessage, Usage, UserMessage,
};
use ctxkit_session::{ContextForm, LeafSelector, NewCompaction, Session, SummarySource};
use serde_json::{Value, json};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage {
        content: MessageContent::Text(text.into()),
        timestamp: Some(1_741_000_000_000),
        extra: Default::default(),
    })
}

fn assistant(content: Vec<ContentBlock>, stop_reason: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content,
        api: Some("anthropic-messages".into()),
        provider: Some("anthropic".into()),
        model: Some("claude-sonnet-4-5".into()),
        usage: Some(Usage {
            input: 1200,
            output: 80,
            cache_read: 0,
            cache_write: 0,
            total_tokens: 1280,
            cost: None,
            extra: Default::default(),
        }),
        stop_reason: Some(stop_reason.into()),
        error_message: None,
        timestamp: Some(1_741_000_001_000),
        extra: Default::default(),
    })
}

fn build_all_types(dir: &Path) -> Result<PathBuf> {
    let mut session = Session::create("/work/project 🦀", &dir.join("tmp-all"));
    session.append_model_change("anthropic", "claude-sonnet-4-5")?;
    session.append_thinking_level_change("high")?;
    let first = session.append_message(user("Read src/lib.rs and fix the 👩‍💻 bug"))?;
    let mut arguments = serde_json::Map::new();
    arguments.insert("path".into(), json!("src/lib.rs"));
    arguments.insert("limit".into(), json!(20));
    session.append_message(assistant(
        vec![
            ContentBlock::Thinking(ctxkit_protocol::ThinkingContent {
                thinking: "look first".into(),
                thinking_signature: Some("sig".into()),
                extra: Default::default(),
            }),
            ContentBlock::ToolCall(ToolCall {
                id: "call_1".into(),
                name: "read".into(),
                arguments: Value::Object(arguments),
                extra: Default::default(),
            }),
        ],
        "toolUse",
    ))?;
    session.append_message(AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "call_1".into(),
        tool_name: "read".into(),
        content: MessageContent::Blocks(vec![ContentBlock::text("fn main() {}")]),
        details: None,
        is_error: false,
        timestamp: Some(1_741_000_002_000),
        extra: Default::default(),
    }))?;
    let reply = session.append_message(assistant(vec![ContentBlock::text("Fixed.")], "stop"))?;
    session.append_message(AgentMessage::BashExecution(BashExecutionMessage {
        command: "cargo test".into(),
        output: "ok".into(),
        exit_code: Some(1),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        exclude_from_context: None,
        timestamp: Some(1_741_000_003_000),
        extra: Default::default(),
    }))?;
    session.append_custom_message_entry(
        "note",
        MessageContent::Text("remember the tests".into()),
        true,
        Some(json!({"k": 1})),
    )?;
    session.append_custom_entry("state", Some(json!({"count": 2})))?;
    session.append_label_change(&reply, Some("fixed"))?;
    session.append_session_info("  Reverse check  ")?;
    let kept = session.append_message(user("Now the docs"))?;
    session.append_message(assistant(vec![ContentBlock::text("Docs done.")], "stop"))?;
    session.append_compaction(NewCompaction {
        summary: "## Goal\nFix the bug".into(),
        first_kept_entry_id: kept,
        tokens_before: 5000,
        // A model's summary in two requests: the entry's own `usage` is their sum (Pi 1.6).
        details: Some(json!({"readFiles": ["src/lib.rs"], "modifiedFiles": [],
            "summarizer": "myco/m", "usage": [summary_usage(1200, 0.01), summary_usage(300, 0.002)]})),
        source: SummarySource::Ctxkit,
    })?;
    session.append_message(user("Continue"))?;
    session.branch_with_summary(
        Some(&first),
        "Tried a fix, then docs.",
        Some(
            json!({"readFiles": [], "modifiedFiles": [], "summarizer": "myco/m",
            "usage": [summary_usage(800, 0.004)]}),
        ),
        SummarySource::Ctxkit,
    )?;
    session.append_message(user("Another approach"))?;
    session.branch(&reply)?;
    session.append_message(assistant(
        vec![ContentBlock::text("Alternative reply")],
        "stop",
    ))?;
    session.reset_leaf();
    session.append_message(user("A new root"))?;
    Ok(session.path().ok_or("not persisted")?.to_owned())
}

/// A session using what Pi 0.87 added: system messages, context edits (a replacement and an
/// omission, before and after a compaction), usage entries, a compaction recording the prompt state.
fn build_087_entries(dir: &Path) -> Result<PathBuf> {
    let mut session = Session::create("/work/project", &dir.join("tmp-087"));
    let system: AgentMessage = serde_json::from_value(json!({
        "role": "system", "content": "You are a coding assistant.",
        "sections": {"environment": "cwd: /work/project"},
        "toolsAdded": [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}],
        "timestamp": 1_741_000_000_000_u64,
    }))?;
    session.append_message(system)?;
    session.append_message(user("Read src/lib.rs"))?;
    session.append_message(assistant(
        vec![ContentBlock::ToolCall(ToolCall {
            id: "call_1".into(),
            name: "read".into(),
            arguments: json!({"path": "src/lib.rs"}),
            extra: Default::default(),
        })],
        "toolUse",
    ))?;
    let result = session.append_message(AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "call_1".into(),
        tool_name: "read".into(),
        content: MessageContent::Blocks(vec![ContentBlock::text("fn main() {}\n".repeat(40))]),
        details: None,
        is_error: false,
        timestamp: Some(1_741_000_002_000),
        extra: Default::default(),
    }))?;
    let reply = session.append_message(assistant(vec![ContentBlock::text("Read it.")], "stop"))?;
    session.append_context_edit(&result, Some(MessageContent::Text("[file elided]".into())))?;
    session.append_usage(
        "cache_warm",
        "anthropic",
        "claude-sonnet-4-5",
        Usage::default(),
        None,
    )?;
    let kept = session.append_message(user("Now the tests"))?;
    session.append_message(assistant(vec![ContentBlock::text("Tests pass.")], "stop"))?;
    let removed: AgentMessage = serde_json::from_value(json!({
        "role": "system", "content": "", "sections": {"mode": "careful"},
        "toolsRemoved": [{"name": "read"}], "timestamp": 1_741_000_003_000_u64,
    }))?;
    session.append_message(removed)?;
    session.append_compaction(NewCompaction {
        summary: "Read src/lib.rs; tests pass.".into(),
        first_kept_entry_id: kept.clone(),
        tokens_before: 4000,
        details: Some(json!({"readFiles": ["src/lib.rs"], "modifiedFiles": []})),
        source: SummarySource::Ctxkit,
    })?;
    session.append_context_edit(
        &kept,
        Some(MessageContent::Text("Now the tests (edited)".into())),
    )?;
    let last = session.append_message(user("And the docs"))?;
    session.append_message(assistant(vec![ContentBlock::text("Docs done.")], "stop"))?;
    session.append_context_edit(&last, None)?;
    // An edit of an entry the compaction summarized: accepted, no effect.
    session.append_context_edit(&reply, Some(MessageContent::Text("summarized away".into())))?;
    Ok(session.path().ok_or("not persisted")?.to_owned())
}

/// Continues a session Pi 1.6.0 wrote with each of ctxkit's writing commands.
fn continue_pi_16_session(path: &Path) -> Result<()> {
    let mut session = Session::open(path)?;
    let tool_result = session
        .branch_path(None)
        .iter()
        .rev()
        .find(|entry| entry.role() == Some("toolResult"))
        .map(|entry| entry.id().to_owned())
        .ok_or("no tool result")?;
    let first = session
        .entries()
        .first()
        .map(|entry| entry.id().to_owned())
        .ok_or("empty")?;
    session.append_label_change(&first, Some("pi 1.6 start"))?;
    session.append_session_info("Continued by ctxkit")?;
    session.append_context_edit(&tool_result, Some(MessageContent::Text("[elided]".into())))?;
    let kept = session.append_message(user("Continue the refactor"))?;
    let mut reply: AssistantMessage = serde_json::from_value(json!({
        "role": "assistant", "content": [{"type": "text", "text": "Running the script."},
            {"type": "toolCall", "id": "ck_1", "name": "code", "arguments": {"script": "edit()"}}],
        "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
        "usage": {"input": 900, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 940,
            "cost": {"input": 0.0027, "output": 0.0006, "cacheRead": 0, "cacheWrite": 0, "total": 0.0033, "totalFromProvider": true}},
        "stopReason": "toolUse", "thinkingLevel": "medium", "durationMs": 2210, "timestamp": 1_795_300_000_000_i64
    }))?;
    reply.extra.insert("responseId".into(), json!("resp_1"));
    session.append_message(AgentMessage::Assistant(reply))?;
    session.append_message(serde_json::from_value(json!({
        "role": "toolResult", "toolCallId": "ck_1", "toolName": "code",
        "content": [{"type": "text", "text": "edited 1 file"}], "isError": false, "durationMs": 830,
        "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 12,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "nestedCalls": {"complete": true, "calls": [
            {"id": "n1", "name": "edit", "arguments": {"path": "src/lib.rs"}, "status": "ok", "durationMs": 4}]},
        "timestamp": 1_795_300_001_000_i64
    }))?)?;
    session.append_compaction(NewCompaction {
        summary: "## Goal\nContinue the refactor".into(),
        first_kept_entry_id: kept.clone(),
        tokens_before: 12_000,
        details: Some(json!({"readFiles": [], "modifiedFiles": ["src/lib.rs"]})),
        source: SummarySource::Ctxkit,
    })?;
    session.append_message(user("One more thing"))?;
    session.branch_with_summary(
        Some(&kept),
        "Tried one more thing.",
        Some(json!({"readFiles": [], "modifiedFiles": []})),
        SummarySource::Ctxkit,
    )?;
    session.append_message(assistant(vec![ContentBlock::text("Back here.")], "stop"))?;
    Ok(())
}

fn expected(session: &Session) -> Result<Value> {
    let mut leaves: Vec<Option<String>> = vec![None, Some("__default__".into())];
    leaves.extend(
        session
            .entries()
            .iter()
            .map(|entry| Some(entry.id().to_owned())),
    );
    let mut contexts = Vec::new();
    for leaf in &leaves {
        let selector = match leaf.as_deref() {
            None => LeafSelector::BeforeFirst,
            Some("__default__") => LeafSelector::Current,
            Some(id) => LeafSelector::Entry(id),
        };
        let record = session.context_record(selector, ContextForm::Session)?;
        let llm = session.context_record(selector, ContextForm::Llm)?;
        contexts.push(json!({"leafId": leaf, "messages": record.messages, "thinkingLevel": record.thinking_level,
            "model": record.model, "llm": llm.messages}));
    }
    let labels: serde_json::Map<String, Value> = session
        .entries()
        .iter()
        .filter_map(|entry| {
            session
                .label(entry.id())
                .map(|label| (entry.id().to_owned(), json!(label)))
        })
        .collect();
    Ok(json!({
        "contexts": contexts,
        "tree": session.tree_record().nodes,
        "load": {"leafId": session.leaf_id(), "sessionName": session.session_name(), "labels": labels},
    }))
}

fn emit(dir: &Path, name: &str, written: &Path) -> Result<()> {
    let target = dir.join(format!("{name}.jsonl"));
    std::fs::copy(written, &target)?;
    let session = Session::open(&target)?;
    std::fs::write(
        dir.join(format!("{name}.expected.json")),
        serde_json::to_string_pretty(&expected(&session)?)?,
    )?;
    Ok(())
}

fn main() -> Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: reverse_corpus DIR")?);
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance/corpus");
    std::fs::create_dir_all(&dir)?;
    let scratch = dir.join("scratch");

    let all = build_all_types(&scratch)?;
    emit(&dir, "written-all-types", &all)?;
    let entries_087 = build_087_entries(&scratch)?;
    emit(&dir, "written-087-entries", &entries_087)?;

    let mut branched = Session::open(&all)?;
    let at = branched
        .entries()
        .iter()
        .find(|entry| entry.role() == Some("toolResult"))
        .map(|entry| entry.id().to_owned());
    let branched_path = branched
        .create_branched_session(&at.ok_or("no tool result")?)?
        .ok_or("not persisted")?;
    branched.append_message(assistant(
        vec![ContentBlock::text("after the branch")],
        "stop",
    ))?;
    emit(&dir, "written-branched", &branched_path)?;

    let fork = Session::fork_from(
        &corpus.join("good-branches.jsonl"),
        "/elsewhere",
        &scratch.join("fork"),
    )?;
    emit(
        &dir,
        "written-fork-from",
        fork.path().ok_or("not persisted")?,
    )?;

    for (name, source) in [
        ("written-migrated-v1", "legacy-v1-version1.jsonl"),
        ("written-migrated-v2", "legacy-v2.jsonl"),
    ] {
        let copy = scratch.join(source);
        std::fs::copy(corpus.join(source), &copy)?;
        Session::open(&copy)?.migrate_file()?;
        emit(&dir, name, &copy)?;
    }

    for (name, source) in [
        ("written-after-torn-line", "bad-truncated-last-line.jsonl"),
        ("written-after-no-newline", "good-no-trailing-newline.jsonl"),
    ] {
        let copy = scratch.join(source);
        std::fs::copy(corpus.join(source), &copy)?;
        let mut session = Session::open(&copy)?;
        session.append_message(user("appended after the last line"))?;
        session.append_message(assistant(vec![ContentBlock::text("still here")], "stop"))?;
        // The reference skips the terminated fragment like any malformed line.
        emit(&dir, name, &copy)?;
    }

    // Sessions Pi 1.6.0 wrote (new message fields: nested calls, durations, thinking levels, tool
    // usage, provider-billed cost; context edits, branch summaries, labels), continued by ctxkit's
    // writing commands: a label, a name, a context edit, a compaction, a branch summary, and
    // messages carrying the same new fields.
    let corpus_16 = corpus.join("../corpus-16");
    for (name, source) in [
        ("written-16-nested-calls", "16-nested-calls.jsonl"),
        ("written-16-branch-edits", "16-branch-edits.jsonl"),
    ] {
        let copy = scratch.join(source);
        std::fs::copy(corpus_16.join(source), &copy)?;
        continue_pi_16_session(&copy)?;
        emit(&dir, name, &copy)?;
    }

    // A session `ctxkit serve` wrote with Anthropic on-demand compaction against the CLI tests'
    // mock (a split turn; the signed block in `details.providerCompaction`), continued here.
    let on_demand = scratch.join("on-demand-compaction.jsonl");
    std::fs::copy(
        corpus.join("../written/on-demand-compaction.jsonl"),
        &on_demand,
    )?;
    let mut session = Session::open(&on_demand)?;
    session.append_message(user("after the on-demand compaction"))?;
    emit(&dir, "written-on-demand-compaction", &on_demand)?;

    let labels = scratch.join("labels.jsonl");
    std::fs::copy(corpus.join("good-labels.jsonl"), &labels)?;
    let mut session = Session::open(&labels)?;
    let target = session
        .entries()
        .first()
        .map(|entry| entry.id().to_owned())
        .ok_or("empty")?;
    session.append_label_change(&target, Some("start here"))?;
    session.append_session_info("Renamed by ctxkit")?;
    session.flush_pending()?;
    emit(&dir, "written-label-name", &labels)?;

    // A branched session of a path that holds label entries: re-chained around them.
    session.append_message(user("after the label"))?;
    let leaf = session.leaf_id().ok_or("empty")?.to_owned();
    let branched_labels = session
        .create_branched_session(&leaf)?
        .ok_or("not persisted")?;
    session.append_message(assistant(vec![ContentBlock::text("on the branch")], "stop"))?;
    emit(&dir, "written-branched-labels", &branched_labels)?;

    std::fs::remove_dir_all(&scratch)?;
    Ok(())
}

/// A summary request's usage as the provider layer records it.
fn summary_usage(input: u64, cost: f64) -> serde_json::Value {
    json!({"input": input, "output": 100, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + 100,
        "cost": {"input": cost, "output": 0.001, "cacheRead": 0, "cacheWrite": 0, "total": cost + 0.001}})
}

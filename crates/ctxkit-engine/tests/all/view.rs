//! The model's view: transforms never touch stored history, orphans are repaired, summaries can go
//! to the system text, pruned outputs can be fetched back.

use ctxkit_engine::HookSet;
use ctxkit_settings::SummaryRole;
use serde_json::json;

use crate::support::*;

fn message(value: serde_json::Value) -> ctxkit_protocol::AgentMessage {
    serde_json::from_value(value).unwrap()
}

fn tool_call(id: &str) -> ctxkit_protocol::AgentMessage {
    message(json!({
        "role": "assistant",
        "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "cat big.log"}}],
        "provider": PROVIDER, "model": MODEL, "stopReason": "toolUse",
        "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11},
        "timestamp": now_ms(),
    }))
}

fn tool_result(id: &str, text: &str) -> ctxkit_protocol::AgentMessage {
    message(json!({
        "role": "toolResult", "toolCallId": id, "toolName": "bash",
        "content": [{"type": "text", "text": text}], "isError": false, "timestamp": now_ms(),
    }))
}

/// What each of [`ten_calls_of_logs`]'s calls reads.
fn log_lines() -> String {
    (0..200).map(|line| format!("log line {line}\n")).collect()
}

/// An engine with `settings` and `model` after a prompt and ten calls that each read
/// [`log_lines`].
async fn ten_calls_of_logs(
    settings: ctxkit_engine::EngineSettings,
    model: ctxkit_engine::ModelInfo,
) -> Harness {
    let harness = Harness::with(settings, Some(model), HookSet::new(), []);
    harness
        .engine
        .append(user("look at the logs"))
        .await
        .unwrap();
    for index in 0..10 {
        let id = format!("call-{index}");
        harness.engine.append(tool_call(&id)).await.unwrap();
        harness
            .engine
            .append(tool_result(&id, &log_lines()))
            .await
            .unwrap();
    }
    harness
}

#[tokio::test]
async fn old_tool_results_are_pruned_in_the_view_only_and_can_be_fetched_back() {
    // The plain rule (cut at every call): ten calls are too few for pruning to pay by default.
    let mut settings = settings(2_000);
    settings.transforms.prune_when_it_pays = false;
    let harness = ten_calls_of_logs(settings, model(100_000)).await;
    let view = harness.engine.model_view().await.unwrap();
    assert!(view.report.tool_results_pruned >= 4, "{:?}", view.report);
    let text = serde_json::to_string(&view.messages).unwrap();
    assert!(text.contains("call-0"));
    // The stored history is untouched and the full text comes back by id.
    let transcript = serde_json::to_string(&harness.engine.transcript().await.unwrap()).unwrap();
    assert_eq!(transcript.matches("log line 150").count(), 10);
    let full = harness
        .engine
        .fetch_pruned("call-0")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(full, log_lines());
}

#[tokio::test]
async fn old_calls_long_arguments_are_cut_in_the_view_only_and_can_be_fetched_back() {
    let mut settings = settings(2_000);
    settings.transforms.prune_when_it_pays = false;
    settings.transforms.prune_tool_calls = true;
    let harness = Harness::with(settings, Some(model(100_000)), HookSet::new(), []);
    harness
        .engine
        .append(user("write the modules"))
        .await
        .unwrap();
    let file: String = (0..200)
        .map(|line| format!("pub fn item_{line}() {{}}\n"))
        .collect();
    for index in 0..10 {
        let id = format!("write-{index}");
        let call = message(json!({
            "role": "assistant",
            "content": [{"type": "toolCall", "id": id, "name": "write",
                "arguments": {"path": format!("src/m{index}.rs"), "content": file}}],
            "provider": PROVIDER, "model": MODEL, "stopReason": "toolUse",
            "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11},
            "timestamp": now_ms(),
        }));
        harness.engine.append(call).await.unwrap();
        harness
            .engine
            .append(tool_result(&id, "written"))
            .await
            .unwrap();
    }
    let view = harness.engine.model_view().await.unwrap();
    // Every call but those of the six results kept whole (the default keep) is cut.
    assert_eq!(view.report.tool_calls_cut, 4, "{:?}", view.report);
    let text = serde_json::to_string(&view.messages).unwrap();
    assert!(text.contains("full call: ctxkit://tool-call/write-0]"));
    assert_eq!(text.matches("item_150").count(), 6);
    // The stored calls are whole, and one comes back by its id; nothing else answers to it.
    let transcript = serde_json::to_string(&harness.engine.transcript().await.unwrap()).unwrap();
    assert_eq!(transcript.matches("item_150").count(), 10);
    let call = harness
        .engine
        .fetch_tool_call("write-0")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        call,
        format!("write (call write-0)\npath: src/m0.rs\ncontent:\n{file}")
    );
    for id in ["write-99", "", "../write-0", "ctxkit://tool-call/write-0"] {
        assert_eq!(
            harness.engine.fetch_tool_call(id).await.unwrap(),
            None,
            "{id}"
        );
    }
}

/// A file of large tool results (big enough that they stay on disk and are read on demand).
fn large_session_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("large.jsonl");
    let mut text = String::from(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/p"}"#,
    );
    text.push('\n');
    let mut parent = "null".to_owned();
    for index in 0..40 {
        let output = "line of output\\n".repeat(20_000);
        text.push_str(&format!(
            r#"{{"type":"message","id":"m{index}","parentId":{parent},"timestamp":"2024-01-01T00:00:00.000Z","message":{{"role":"toolResult","toolCallId":"c{index}","toolName":"bash","content":[{{"type":"text","text":"{output}"}}],"isError":false,"timestamp":1}}}}"#
        ));
        text.push('\n');
        parent = format!("\"m{index}\"");
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn fetching_a_result_from_a_file_changed_under_the_engine_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = large_session_file(dir.path());
    let session = ctxkit_session::Session::open(&path).unwrap();
    let harness = Harness::with_session(session);
    let output = harness.engine.fetch_pruned("c3").await.unwrap().unwrap();
    assert!(output.starts_with("line of output\n"));
    // Another program rewrites the file in place: the result asked for can no longer be read as
    // indexed, which is an error, not "no such result".
    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, original.replace("line of output", "LINE OF OUTPUT")).unwrap();
    let error = harness.engine.fetch_pruned("c1").await.unwrap_err();
    assert!(error.to_string().contains("changed"), "{error}");
}

/// Tool results cut in the view after ten calls of 200 log lines, with `model` and `settings`.
async fn pruned_after_ten_calls(
    settings: ctxkit_engine::EngineSettings,
    model: ctxkit_engine::ModelInfo,
) -> usize {
    let harness = ten_calls_of_logs(settings, model).await;
    let view = harness.engine.model_view().await.unwrap();
    view.report.tool_results_pruned
}

#[tokio::test]
async fn the_pruning_rule_weighs_the_model_s_own_cache_unless_the_settings_name_one() {
    // Under Anthropic's terms (unknown prices) ten calls are too few for a cut to pay; a model
    // whose cache reads cost the full price is not worth keeping whole, so the plain rule cuts.
    let uncached = ctxkit_models::CacheTerms {
        read_percent: 100,
        write_percent: 100,
        reads_any_prefix: true,
    };
    let priced = ctxkit_engine::ModelInfo {
        cache: Some(uncached),
        ..model(100_000)
    };
    assert_eq!(
        pruned_after_ten_calls(settings(2_000), model(100_000)).await,
        0
    );
    assert_eq!(
        pruned_after_ten_calls(settings(2_000), priced.clone()).await,
        4
    );
    let mut named = settings(2_000);
    named.transforms.cache_read_percent = Some(10);
    named.transforms.cache_write_percent = Some(125);
    named.transforms.cache_reads_any_prefix = Some(false);
    assert_eq!(pruned_after_ten_calls(named, priced).await, 0);
}

#[tokio::test]
async fn a_result_without_its_call_is_left_out_of_the_view() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.engine.append(user("hi")).await.unwrap();
    harness
        .engine
        .append(tool_result("ghost", "orphaned output"))
        .await
        .unwrap();
    harness.engine.append(reply("done", 10)).await.unwrap();
    let view = harness.engine.model_view().await.unwrap();
    let text = serde_json::to_string(&view.messages).unwrap();
    assert!(!text.contains("orphaned output"), "{text}");
}

/// The leaf moved onto a reply that made a tool call (`/tree`, `ctxkit branch --to`), then the
/// session went on: the model is sent the reply whole, its call answered by an error result
/// after it, as Pi 1.6.0 sends it, not a reply with the call cut out.
#[tokio::test]
async fn a_call_the_session_went_on_from_is_answered_not_removed() {
    let harness = Harness::new(100_000, 2_000, []);
    harness.engine.append(user("read the log")).await.unwrap();
    let call = harness.engine.append(tool_call("call-1")).await.unwrap();
    harness
        .engine
        .append(tool_result("call-1", "log"))
        .await
        .unwrap();
    harness.engine.append(reply("read it", 10)).await.unwrap();
    harness
        .engine
        .navigate(&call, ctxkit_engine::NavigateOptions::default())
        .await
        .unwrap();
    harness.engine.append(user("next")).await.unwrap();
    let view = harness.engine.model_view().await.unwrap();
    let roles: Vec<&str> = view.messages.iter().map(|message| message.role()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "user"]);
    let stored_call = harness.engine.transcript().await.unwrap()[1].clone();
    assert_eq!(view.messages[1], stored_call);
    let answer = serde_json::to_value(&view.messages[2]).unwrap();
    assert_eq!(
        answer,
        json!({"role": "toolResult", "toolCallId": "call-1", "toolName": "bash",
            "content": [{"type": "text", "text": "No result provided"}], "isError": true,
            "timestamp": stored_call.timestamp()})
    );
    assert_eq!(view.report.orphans_repaired, 1);
}

#[tokio::test]
async fn summaries_can_be_shown_as_system_text() {
    let mut settings = settings(2_000);
    settings.summary_role = SummaryRole::System;
    let harness = Harness::with(settings, Some(model(100_000)), Default::default(), []);
    harness.turn("first", 100).await;
    // The kept part opens with a prompt: a summary before a reply stays a user message (below).
    harness.engine.append(user("second")).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let view = harness.engine.model_view().await.unwrap();
    assert_eq!(view.system.len(), 1);
    assert!(view.system[0].contains("SUMMARY"));
    assert!(
        !serde_json::to_string(&view.messages)
            .unwrap()
            .contains("SUMMARY")
    );
}

/// QA (2026-12-06): under `summaryRole: system`, a compaction that split a turn left the request
/// opening with the kept reply; Bedrock's Anthropic models answer "first message must use the
/// user role". The summary stays a user message then.
#[test]
fn a_summary_before_a_reply_stays_the_first_user_message() {
    let mut settings = settings(2_000);
    settings.summary_role = SummaryRole::System;
    let summary = ctxkit_protocol::AgentMessage::CompactionSummary(
        ctxkit_protocol::CompactionSummaryMessage {
            summary: "SUMMARY of the span".to_owned(),
            tokens_before: 1_000,
            timestamp: None,
            extra: Default::default(),
        },
    );
    let transcript = vec![
        summary.clone(),
        tool_call("call-1"),
        tool_result("call-1", "done"),
    ];
    let view = ctxkit_engine::build_view(&transcript, &settings, 100_000);
    let roles: Vec<&str> = view.messages.iter().map(|message| message.role()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult"]);
    assert!(view.system.is_empty());
    assert!(
        serde_json::to_string(&view.messages[0])
            .unwrap()
            .contains("SUMMARY of the span")
    );

    // Before a user message the summary is system text, as asked.
    let transcript = vec![summary, user("go on")];
    let view = ctxkit_engine::build_view(&transcript, &settings, 100_000);
    assert_eq!(view.system.len(), 1);
    assert_eq!(view.messages.len(), 1);
}

/// A transcript of `results` tool results of about 2,500 tokens each after one user message.
fn long_transcript(results: usize) -> Vec<ctxkit_protocol::AgentMessage> {
    let text = "x".repeat(10_000);
    let mut transcript = vec![user("read everything")];
    for index in 0..results {
        let id = format!("call-{index}");
        transcript.push(tool_call(&id));
        transcript.push(tool_result(&id, &text));
    }
    transcript
}

#[test]
fn with_compaction_enabled_the_sliding_window_waits_above_the_compaction_threshold() {
    // Window 100,000, reserve 20,000: compaction above 80,000, the sliding window above 90,000
    // (halfway to the window) instead of its own 75%.
    let mut settings = settings(20_000);
    settings.transforms.prune_enabled = false;
    let transcript = long_transcript(34); // ≈ 85,000 tokens
    let view = ctxkit_engine::build_view(&transcript, &settings, 100_000);
    assert_eq!(
        view.report.messages_dropped_by_window, 0,
        "{:?}",
        view.report
    );
    assert!(view.report.estimated_tokens_after > 80_000);

    let transcript = long_transcript(40); // ≈ 100,000 tokens: the last resort acts
    let view = ctxkit_engine::build_view(&transcript, &settings, 100_000);
    assert!(view.report.messages_dropped_by_window > 0);
    assert!(
        view.report.estimated_tokens_after <= 90_000,
        "{:?}",
        view.report
    );
    assert!(
        view.report.estimated_tokens_after > 80_000,
        "{:?}",
        view.report
    );

    // Without compaction the window keeps its own threshold.
    settings.compaction.enabled = false;
    let view = ctxkit_engine::build_view(&long_transcript(34), &settings, 100_000);
    assert!(view.report.messages_dropped_by_window > 0);
    assert!(
        view.report.estimated_tokens_after <= 75_000,
        "{:?}",
        view.report
    );
}

#[test]
fn the_budget_note_tells_the_model_how_full_its_context_is_at_the_end_of_the_view() {
    let mut settings = settings(20_000);
    settings.transforms.prune_enabled = false;
    let last_text = |view: &ctxkit_engine::ModelView| {
        let last = view.messages.last().unwrap();
        serde_json::to_value(last).unwrap()["content"].to_string()
    };
    let transcript = long_transcript(24); // ≈ 60,000 tokens of 100,000
    let view = ctxkit_engine::build_view(&transcript, &settings, 100_000);
    assert!(
        !last_text(&view).contains("Context budget"),
        "off by default"
    );

    settings.transforms.budget_note = true;
    let view = ctxkit_engine::build_view(&transcript, &settings, 100_000);
    let text = last_text(&view);
    assert!(text.contains("[Context budget: about "), "{text}");
    assert!(text.contains("of 100000 tokens used (60%)"), "{text}");
    assert!(
        text.contains("Near 80% older messages are replaced"),
        "{text}"
    );
    // The earlier messages, and so the cached prefix, are untouched.
    let plain = ctxkit_engine::build_view(
        &transcript,
        &{
            let mut off = settings.clone();
            off.transforms.budget_note = false;
            off
        },
        100_000,
    );
    assert_eq!(
        view.messages[..view.messages.len() - 1],
        plain.messages[..plain.messages.len() - 1]
    );

    // Below the configured share nothing is added.
    let view = ctxkit_engine::build_view(&long_transcript(8), &settings, 100_000);
    assert!(!last_text(&view).contains("Context budget"));
}

fn stamped(text: &str, role: &str, at: i64) -> ctxkit_protocol::AgentMessage {
    match role {
        "user" => message(json!({"role": "user", "content": text, "timestamp": at})),
        _ => message(json!({
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "provider": PROVIDER, "model": MODEL, "stopReason": "stop", "timestamp": at,
        })),
    }
}

#[tokio::test]
async fn the_view_asks_for_the_hour_long_cache_once_the_sessions_pauses_pay_for_it() {
    use ctxkit_transform::CacheLifetime;
    const MINUTE: i64 = 60_000;
    for enabled in [false, true] {
        let mut settings = settings(2_000);
        settings.transforms.long_cache_when_it_pays = enabled;
        let harness = Harness::with(settings, Some(model(1_000_000)), HookSet::new(), []);
        let engine = &harness.engine;
        let context = "word ".repeat(40_000);
        engine.append(stamped(&context, "user", 0)).await.unwrap();
        let first = engine.model_view().await.unwrap();
        assert_eq!(first.cache_lifetime, CacheLifetime::Configured);
        // The user comes back twice after a quarter of an hour: the five-minute cache lost the
        // context each time. From the first pause on (two pauses in 101 with the prior of one in a
        // hundred), a request adding a few words to 50,000 tokens asks for the hour.
        let expected = if enabled {
            CacheLifetime::Long
        } else {
            CacheLifetime::Configured
        };
        for pause in 1..=2 {
            let at = pause * 15 * MINUTE;
            engine
                .append(stamped("done", "assistant", at - 14 * MINUTE))
                .await
                .unwrap();
            engine
                .append(stamped("and now?", "user", at))
                .await
                .unwrap();
            let after_pause = engine.model_view().await.unwrap();
            assert_eq!(after_pause.cache_lifetime, expected, "pause {pause}");
        }
    }
}

/// The summary of the compaction the session's leaf is.
async fn leaf_summary(harness: &Harness) -> String {
    harness
        .engine
        .with_session(|session| {
            let raw = session.leaf_entry().unwrap().raw().unwrap();
            serde_json::from_str::<serde_json::Value>(&raw).unwrap()["summary"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .await
}

/// Per line of `lines`, a tool call (`call-0`, `call-1`, …) and its result: a 200-line log with
/// that line as its 101st.
async fn append_logs(harness: &Harness, lines: &[String]) {
    for (index, named) in lines.iter().enumerate() {
        let id = format!("call-{index}");
        let output: String = (0..200)
            .map(|line| match line {
                100 => format!("{named}\n"),
                _ => format!("log line {line}\n"),
            })
            .collect();
        harness.engine.append(tool_call(&id)).await.unwrap();
        harness
            .engine
            .append(tool_result(&id, &output))
            .await
            .unwrap();
    }
}

/// Names the tool results showed the model (a cut one's in its marker) stay in its view after a
/// compaction summarizes them: the summary gains a line of them (the summarizer's own text wins where it names them),
/// the next compaction carries them on, and nothing is added without digests.
#[tokio::test]
async fn a_compaction_carries_the_names_of_the_cut_results_it_summarizes() {
    let run = |digest_names: usize| async move {
        let mut settings = settings(2_000);
        settings.transforms.prune_when_it_pays = false;
        settings.transforms.keep_recent_tool_results = 1;
        settings.transforms.prune_digest_names = digest_names;
        let harness = Harness::with(
            settings,
            Some(model(100_000)),
            HookSet::new(),
            [
                Answer::Text("SUMMARY names module_1_open"),
                Answer::Text("SECOND"),
            ],
        );
        harness
            .engine
            .append(user("look at the logs"))
            .await
            .unwrap();
        let opened: Vec<String> = (0..6)
            .map(|index| format!("opened src/module_{index}.rs at module_{index}_open"))
            .collect();
        append_logs(&harness, &opened).await;
        harness.engine.append(reply("done", 10)).await.unwrap();
        harness.engine.compact(None).await.unwrap();
        let first =
            serde_json::to_string(&harness.engine.model_view().await.unwrap().messages).unwrap();
        harness.engine.append(user("go on")).await.unwrap();
        harness.engine.append(tool_call("call-9")).await.unwrap();
        harness
            .engine
            .append(tool_result("call-9", "short"))
            .await
            .unwrap();
        harness.engine.append(reply("done", 10)).await.unwrap();
        harness.engine.compact(None).await.unwrap();
        let second =
            serde_json::to_string(&harness.engine.model_view().await.unwrap().messages).unwrap();
        (first, second)
    };
    let (first, second) = run(8).await;
    // Cut results (their head, tail and digest) and the latest, whole, alike.
    for index in 0..6 {
        assert!(
            first.contains(&format!("`src/module_{index}.rs`")),
            "{first}"
        );
        assert!(
            second.contains(&format!("`src/module_{index}.rs`")),
            "{second}"
        );
    }
    assert_eq!(first.matches("module_1_open").count(), 1, "{first}");
    assert!(first.contains("Named in the tool results this summary replaces"));
    let (first, second) = run(0).await;
    assert!(!first.contains("src/module_0.rs") && !first.contains("Named in the tool results"));
    assert!(!second.contains("Named in the tool results"), "{second}");
}

/// QA 2026-12-07: after a compaction over `recall` results, the summary's line of names listed
/// the entry ids of the recalled messages (`fa9eb1e2`, from recall's `[entry …]` headers). A
/// recall's result is the originals behind an earlier summary, recallable again: its names are
/// not carried.
#[tokio::test]
async fn a_compaction_carries_no_name_from_a_recall_result() {
    let mut settings = settings(2_000);
    settings.transforms.prune_when_it_pays = false;
    settings.transforms.keep_recent_tool_results = 1;
    settings.transforms.prune_digest_names = 8;
    let harness = Harness::with(
        settings,
        Some(model(100_000)),
        HookSet::new(),
        [Answer::Text("SUMMARY")],
    );
    harness
        .engine
        .append(user("what was the port?"))
        .await
        .unwrap();
    let recalled: String = (0..200)
        .map(|line| match line {
            0 => "[entry fa9eb1e2] tool result:\n".to_owned(),
            100 => "opened src/recalled_module.rs\n".to_owned(),
            _ => format!("log line {line}\n"),
        })
        .collect();
    harness
        .engine
        .append(message(json!({
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "call-r", "name": "recall",
                         "arguments": {"query": "port"}}],
            "provider": PROVIDER, "model": MODEL, "stopReason": "toolUse",
            "usage": {"input": 10, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 11},
            "timestamp": now_ms(),
        })))
        .await
        .unwrap();
    harness
        .engine
        .append(message(json!({
            "role": "toolResult", "toolCallId": "call-r", "toolName": "recall",
            "content": [{"type": "text", "text": recalled}], "isError": false,
            "timestamp": now_ms(),
        })))
        .await
        .unwrap();
    append_logs(
        &harness,
        &["opened src/module_0.rs".to_owned(), "log".to_owned()],
    )
    .await;
    harness.engine.append(reply("done", 10)).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let summary = leaf_summary(&harness).await;
    let carried = summary
        .lines()
        .find(|line| line.starts_with("Named in the tool results"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(carried.contains("src/module_0.rs"), "{carried}");
    assert!(
        !carried.contains("fa9eb1e2") && !carried.contains("recalled_module"),
        "{carried}"
    );
}

/// A verifier's summary listed 35 test secrets among the names of the results it replaced, and the
/// page showed them: values the redaction takes out by their context (given to a secret's name, on
/// a command line), which have no shape of their own. The names carried are read from the results
/// as a summary keeps them.
#[tokio::test]
async fn a_compaction_carries_no_secret_a_result_showed_by_its_context() {
    let mut settings = settings(2_000);
    settings.transforms.prune_when_it_pays = false;
    settings.transforms.keep_recent_tool_results = 1;
    settings.transforms.prune_digest_names = 8;
    let harness = Harness::with(
        settings,
        Some(model(100_000)),
        HookSet::new(),
        [Answer::Text("SUMMARY")],
    );
    harness.engine.append(user("set it up")).await.unwrap();
    let secrets = [
        "SECRET_KEY_BASE=S3CRETak1234567890abcdef",
        "mysql -u root -pS3CRETaq5 app",
        "curl -u admin:S3CRETaz4 https://x",
        "private_key = \"S3CRETah8888888888\"",
    ];
    let lines: Vec<String> = secrets
        .iter()
        .enumerate()
        .map(|(index, secret)| format!("{secret} in src/module_{index}.rs"))
        .collect();
    append_logs(&harness, &lines).await;
    harness.engine.append(reply("done", 10)).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let summary = leaf_summary(&harness).await;
    assert!(summary.contains("Named in the tool results"), "{summary}");
    assert!(summary.contains("src/module_0.rs"), "{summary}");
    assert!(!summary.contains("S3CRET"), "{summary}");
}

/// A result the model keeps naming from after it was cut ("hot": a task list it works through) keeps
/// the names its cut hid: the compaction that summarizes it carries them.
#[tokio::test]
async fn a_compaction_carries_the_names_of_a_result_the_model_works_from() {
    let mut settings = settings(2_000);
    settings.transforms.prune_when_it_pays = false;
    settings.transforms.keep_recent_tool_results = 1;
    settings.transforms.prune_digest_names = 8;
    let harness = Harness::with(
        settings,
        Some(model(100_000)),
        HookSet::new(),
        [Answer::Text("SUMMARY")],
    );
    harness.engine.append(user("do the tasks")).await.unwrap();
    let tasks: String = (0..300)
        .map(|line| match line {
            150..170 => format!("- [ ] T{line} wire handler_{line}\n"),
            _ => format!("log line {line}\n"),
        })
        .collect();
    harness.engine.append(tool_call("call-0")).await.unwrap();
    harness
        .engine
        .append(tool_result("call-0", &tasks))
        .await
        .unwrap();
    harness
        .engine
        .append(reply("starting with T150", 10))
        .await
        .unwrap();
    harness.engine.append(tool_call("call-1")).await.unwrap();
    harness
        .engine
        .append(tool_result("call-1", "short"))
        .await
        .unwrap();
    harness.engine.append(reply("done", 10)).await.unwrap();
    harness.engine.compact(None).await.unwrap();
    let view = serde_json::to_string(&harness.engine.model_view().await.unwrap().messages).unwrap();
    for task in 151..170 {
        assert!(view.contains(&format!("`T{task}`")), "{view}");
    }
}

/// `images.blockImages`: no image of a prompt or a tool result reaches the model, a run of them is
/// one line, and the stored messages keep theirs.
#[tokio::test]
async fn blocked_images_are_a_line_in_the_view_and_stay_in_the_session() {
    let image = json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"});
    let settings = ctxkit_engine::EngineSettings {
        block_images: true,
        ..Default::default()
    };
    let harness = Harness::with(settings, Some(model(100_000)), HookSet::new(), []);
    let prompt = message(json!({"role": "user", "timestamp": now_ms(),
        "content": [{"type": "text", "text": "what is in these?"}, image, image]}));
    harness.engine.append(prompt).await.unwrap();
    harness.engine.append(tool_call("call-1")).await.unwrap();
    let result = message(json!({
        "role": "toolResult", "toolCallId": "call-1", "toolName": "read",
        "content": [image, {"type": "text", "text": "a PNG of 1 KB"}], "isError": false,
        "timestamp": now_ms(),
    }));
    harness.engine.append(result).await.unwrap();
    let view = harness.engine.model_view().await.unwrap();
    let sent = serde_json::to_value(&view.messages).unwrap().to_string();
    assert!(!sent.contains("iVBORw0KGgo="), "{sent}");
    let blocked = ctxkit_engine::IMAGE_BLOCKED;
    assert!(
        sent.contains(&format!(
            r#"[{{"type":"text","text":"what is in these?"}},{{"type":"text","text":"{blocked}"}}]"#
        )),
        "{sent}"
    );
    assert!(
        sent.contains(&format!(
            r#"[{{"type":"text","text":"{blocked}"}},{{"type":"text","text":"a PNG of 1 KB"}}]"#
        )),
        "{sent}"
    );
    let stored = serde_json::to_value(harness.engine.transcript().await.unwrap()).unwrap();
    assert_eq!(stored.to_string().matches("iVBORw0KGgo=").count(), 3);

    // Off (the default), the images go as they are.
    let harness = Harness::with(
        ctxkit_engine::EngineSettings::default(),
        Some(model(100_000)),
        HookSet::new(),
        [],
    );
    let prompt = message(json!({"role": "user", "timestamp": now_ms(),
        "content": [{"type": "text", "text": "and this?"}, image]}));
    harness.engine.append(prompt).await.unwrap();
    let view = harness.engine.model_view().await.unwrap();
    assert!(
        serde_json::to_value(&view.messages)
            .unwrap()
            .to_string()
            .contains("iVBORw0KGgo=")
    );
}

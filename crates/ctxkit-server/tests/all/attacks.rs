//! Issue 42, limits and state: a hostile client (and a hostile session file) against `serve`.
//! Each test is one attack that got through before; the table of all of them, with the CLI's and
//! the session store's, is in `docs/security.md` ("Limits").

use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_agent::{ChatModel, ToolRegistry};
use ctxkit_compaction::Prompts;
use ctxkit_engine::ModelInfo;
use ctxkit_server::{AgentConfig, ModelSource, ServerConfig};
use serde_json::{Value, json};

use crate::server::{Client, start_config, start_with};
use crate::support::{Fixed, settings};

/// A model that thinks for `delay` (unless cancelled), then answers `done`.
#[derive(Clone)]
pub(crate) struct Slow {
    replies: ScriptedModel,
    delay: Duration,
    /// Told each time the model is asked (a test waits on it instead of sleeping).
    pub(crate) asked: Arc<tokio::sync::Notify>,
}

impl ChatModel for Slow {
    fn info(&self) -> ModelInfo {
        self.replies.info()
    }

    fn chat<'a>(
        &'a self,
        request: &'a ctxkit_llm::ChatRequest,
        cancel: &'a tokio_util::sync::CancellationToken,
    ) -> futures::future::BoxFuture<'a, ctxkit_protocol::AssistantMessage> {
        Box::pin(async move {
            self.asked.notify_one();
            tokio::select! {
                () = tokio::time::sleep(self.delay) => {}
                () = cancel.cancelled() => {}
            }
            self.replies.chat(request, cancel).await
        })
    }

    fn chat_streaming<'a>(
        &'a self,
        request: &'a ctxkit_llm::ChatRequest,
        cancel: &'a tokio_util::sync::CancellationToken,
        _sink: &'a mut ctxkit_llm::DeltaSink<'_>,
    ) -> futures::future::BoxFuture<'a, ctxkit_protocol::AssistantMessage> {
        self.chat(request, cancel)
    }
}

impl ModelSource for Slow {
    fn chat_model(&self, _spec: Option<&str>) -> Result<Arc<dyn ChatModel>, String> {
        Ok(Arc::new(self.clone()))
    }
}

pub(crate) fn slow(delay: Duration) -> Slow {
    let info = ModelInfo {
        provider: "mock".to_owned(),
        id: "slow".to_owned(),
        context_window: 100_000,
        cache: None,
    };
    let builder = ScriptedModel::new(info.clone(), |_, _| unreachable!());
    let replies = ScriptedModel::new(info, move |_, _| builder.text("done", 10));
    Slow {
        replies,
        delay,
        asked: Arc::default(),
    }
}

pub(crate) fn agent(model: Slow) -> AgentConfig {
    AgentConfig {
        models: Arc::new(model),
        system_prompt: ctxkit_server::SystemPrompt::fixed(""),
        bash_timeout: Duration::from_secs(5),
        shell: Default::default(),
        pass_env: Vec::new(),
        auto_resize_images: true,
        tools: ToolRegistry::new(),
        home: None,
        readable_paths: Vec::new(),
        secrets: Vec::new(),
        guarded: Vec::new(),
        skill_folders: Vec::new(),
        warmer: None,
        steering_all: false,
        follow_ups_all: false,
    }
}

async fn create(client: &mut Client, dir: &std::path::Path) -> Value {
    let created = client
        .call(
            "session.create",
            json!({"cwd": dir.display().to_string(), "session_dir": dir.join("sessions")}),
        )
        .await;
    assert!(created.get("result").is_some(), "{created}");
    created
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text, "timestamp": 1})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}], "provider": "mock",
           "model": "m", "api": "mock", "stopReason": "stop", "timestamp": 2,
           "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}})
}

/// The client's end (stdin closed, SIGTERM) interrupts a running `agent.run` as `shutdown` does,
/// and the server ends. Before, the run went on to its end (a 30 s model call) and was answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_input_interrupts_a_running_agent_run() {
    let dir = tempfile::tempdir().unwrap();
    let model = slow(Duration::from_secs(120));
    let asked = Arc::clone(&model.asked);
    let mut client = start_with(dir.path(), Some(agent(model)));
    create(&mut client, dir.path()).await;
    let run = client.send("agent.run", json!({"text": "long"})).await;
    // The input ends while the model call runs.
    tokio::time::timeout(Duration::from_secs(60), asked.notified())
        .await
        .expect("the model is asked");
    let ended = std::time::Instant::now();
    client.close_input().await;
    let answer = client.answer(run).await;
    assert_eq!(answer["result"]["outcome"], "interrupted", "{answer}");
    // The model call takes two minutes: the server gone within 30 s (a loaded machine's margin)
    // did not wait for it.
    assert!(
        client.ended_within(Duration::from_secs(30)).await,
        "the server still runs"
    );
    assert!(
        ended.elapsed() < Duration::from_secs(30),
        "{:?}",
        ended.elapsed()
    );
}

/// Attack: a storm of `agent.cancel` with nothing running left the stop flag set, and every
/// later `agent.run` was abandoned after 1 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_cancels_with_nothing_running_abandons_no_later_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), Some(agent(slow(Duration::from_millis(1_500)))));
    create(&mut client, dir.path()).await;
    for _ in 0..50 {
        let cancel = client.call("agent.cancel", Value::Null).await;
        assert_eq!(
            cancel["result"],
            json!({"dropped_steering": [], "dropped_follow_ups": []}),
            "{cancel}"
        );
    }
    let run = client.call("agent.run", json!({"text": "go"})).await;
    assert_eq!(run["result"]["outcome"], "answered", "{run}");
}

/// Attack: a cancel that arrives just after a run ended (meant for it) abandoned the next run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_cancel_for_one_run_does_not_stop_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), Some(agent(slow(Duration::from_millis(1_200)))));
    create(&mut client, dir.path()).await;
    let first = client.call("agent.run", json!({"text": "one"})).await;
    assert_eq!(first["result"]["outcome"], "answered", "{first}");
    client.call("agent.cancel", Value::Null).await;
    let second = client.call("agent.run", json!({"text": "two"})).await;
    assert_eq!(second["result"]["outcome"], "answered", "{second}");
}

/// Attack: requests pipelined behind a long run were all read into memory at once (24 × 60 MB
/// grew serve past 1 GiB). Now the server stops reading once the queue's byte budget is full:
/// the client's writes wait (the pipe fills), and every request is still answered, in order, once
/// the run ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_appends_behind_a_long_run_wait_for_room_in_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_config(ServerConfig {
        settings: settings(2_000),
        summarizer: Arc::new(Fixed),
        prompts: Prompts::default(),
        model: None,
        sessions_root: dir.path().to_owned(),
        agent: Some(agent(slow(Duration::from_secs(3)))),
        max_request_bytes: 64 * 1024,
        max_queued_bytes: 256 * 1024,
        foreign_hint: None,
        store: None,
    });
    create(&mut client, dir.path()).await;
    let run = client.send("agent.run", json!({"text": "long"})).await;
    // 48 requests of 60 KB: 2.9 MB, far more than the budget (256 KiB) and the pipe (1 MiB).
    let mut ids = vec![run];
    let mut lines = Vec::new();
    for index in 0..48u64 {
        let id = 1_000 + index;
        let text = format!("{index} {}", "x".repeat(60_000));
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "message.append",
                             "params": {"message": user(&text)}});
        lines.extend_from_slice(format!("{request}\n").as_bytes());
        ids.push(id);
    }
    let (took, answers) = client.write_while_reading(&lines, &ids).await;
    assert!(
        took >= Duration::from_millis(2_000),
        "the server read 2.9 MB of requests in {took:?} while a 3 s run was going: nothing held \
         them back"
    );
    assert_eq!(
        answers[&run]["result"]["outcome"], "answered",
        "{:?}",
        answers[&run]
    );
    for id in &ids[1..] {
        assert!(
            answers[id]["result"]["entry_id"].is_string(),
            "{}",
            answers[id]
        );
    }
    // In order: the appended messages follow one another (a threshold compaction may have put
    // the earlier ones in a summary).
    let transcript = client.call("view.get", Value::Null).await;
    let numbers: Vec<u64> = transcript["result"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_str())
        .filter_map(|text| text.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(numbers.last(), Some(&47), "{numbers:?}");
    assert!(
        numbers.windows(2).all(|pair| pair[0] + 1 == pair[1]),
        "{numbers:?}"
    );
}

/// Attack: a `fork` that failed (the new file could not be written) was answered as an error,
/// yet the server had switched to a new file: later acknowledged appends went there, not into
/// the client's session. Now the session stays the client's.
#[tokio::test]
async fn a_failed_fork_or_clone_leaves_the_server_on_the_clients_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    create(&mut client, dir.path()).await;
    let question = client
        .call("message.append", json!({"message": user("question")}))
        .await;
    let question = question["result"]["entry_id"].as_str().unwrap().to_owned();
    client
        .call("message.append", json!({"message": assistant("answer")}))
        .await;
    let info = client.call("session.info", Value::Null).await;
    let real = std::path::PathBuf::from(info["result"]["session_file"].as_str().unwrap());
    // The session, opened again through `/proc/self/fd/N` (the server runs in this process): its
    // file stays writable, but a new file beside it (`/proc/self/fd/<new>.jsonl`) cannot be made.
    let held = std::fs::File::open(&real).unwrap();
    let file = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&held));
    let opened = client.call("session.open", json!({"path": file})).await;
    assert!(opened.get("result").is_some(), "{opened}");

    for (method, params) in [
        ("fork", json!({"entry_id": question, "position": "at"})),
        ("clone", Value::Null),
    ] {
        let failed = client.call(method, params).await;
        assert!(failed.get("error").is_some(), "{method}: {failed}");
        let info = client.call("session.info", Value::Null).await;
        assert_eq!(
            info["result"]["session_file"],
            json!(file),
            "{method}: {info}"
        );
        let text = format!("after the failed {method}");
        let appended = client
            .call("message.append", json!({"message": user(&text)}))
            .await;
        assert!(
            appended["result"]["entry_id"].is_string(),
            "{method}: {failed} then {appended}"
        );
        let written = std::fs::read_to_string(&real).unwrap();
        assert!(
            written.contains(&text),
            "{method}: the append is not in the client's file"
        );
    }
    drop(held);
}

/// The issue's line: a tool result whose `details` nest 200 deep.
fn nested_tool_result(depth: usize) -> String {
    let details = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    format!(
        r#"{{"type":"message","id":"t","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{{"type":"text","text":"ok"}}],"isError":false,"timestamp":3,"details":{details}}}}}"#
    )
}

/// Attack: one line nested 200 deep made the whole session unreadable (`view.get` failed); it is
/// now skipped with a warning like any malformed line, and the rest reads.
#[tokio::test]
async fn a_line_nested_200_deep_is_skipped_and_the_session_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#.to_owned(),
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello","timestamp":1}}"#.to_owned(),
        r#"{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{}}],"provider":"p","model":"m","api":"x","stopReason":"toolUse","timestamp":2,"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}}}"#.to_owned(),
        nested_tool_result(200),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut client = start_with(dir.path(), None);
    let opened = client.call("session.open", json!({"path": path})).await;
    assert!(opened.get("result").is_some(), "{opened}");
    let view = client.call("view.get", Value::Null).await;
    assert!(view.get("result").is_some(), "{view}");
    let messages = view["result"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{view}");
    let usage = client.call("context.usage", Value::Null).await;
    assert!(usage.get("result").is_some(), "{usage}");
}

/// A model that streams `pieces` text deltas of `size` bytes, then answers `done`.
#[derive(Clone)]
struct Streamer {
    replies: ScriptedModel,
    pieces: usize,
    size: usize,
    /// Set once every piece went to the sink.
    streamed: Arc<std::sync::atomic::AtomicBool>,
}

impl ChatModel for Streamer {
    fn info(&self) -> ModelInfo {
        self.replies.info()
    }

    fn chat<'a>(
        &'a self,
        request: &'a ctxkit_llm::ChatRequest,
        cancel: &'a tokio_util::sync::CancellationToken,
    ) -> futures::future::BoxFuture<'a, ctxkit_protocol::AssistantMessage> {
        self.replies.chat(request, cancel)
    }

    fn chat_streaming<'a>(
        &'a self,
        request: &'a ctxkit_llm::ChatRequest,
        cancel: &'a tokio_util::sync::CancellationToken,
        sink: &'a mut ctxkit_llm::DeltaSink<'_>,
    ) -> futures::future::BoxFuture<'a, ctxkit_protocol::AssistantMessage> {
        Box::pin(async move {
            let piece = "x".repeat(self.size);
            for _ in 0..self.pieces {
                sink(ctxkit_llm::ChatDelta::Text(piece.clone()));
            }
            self.streamed
                .store(true, std::sync::atomic::Ordering::SeqCst);
            self.replies.chat(request, cancel).await
        })
    }
}

impl ModelSource for Streamer {
    fn chat_model(&self, _spec: Option<&str>) -> Result<Arc<dyn ChatModel>, String> {
        Ok(Arc::new(self.clone()))
    }
}

/// Attack (issue 42): a client that reads nothing while a run streams. Every streamed delta
/// waited in an unbounded channel, so 48 MB of deltas (or any amount) stayed in serve's memory
/// until the client read. Now past 16 MiB waiting the deltas are dropped (the `reply` carries the
/// whole message) and the client is told how many; responses and other events are all kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_nothing_does_not_grow_the_servers_outgoing_lines() {
    let dir = tempfile::tempdir().unwrap();
    let Slow { replies, .. } = slow(Duration::ZERO);
    let streamed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let streamer = Streamer {
        replies,
        pieces: 3_000,
        size: 16_000,
        streamed: Arc::clone(&streamed),
    };
    let mut client = start_with(
        dir.path(),
        Some(AgentConfig {
            models: Arc::new(streamer),
            ..agent(slow(Duration::ZERO))
        }),
    );
    create(&mut client, dir.path()).await;
    let run = client.send("agent.run", json!({"text": "stream"})).await;
    // The client reads nothing until the 48 MB have streamed (waited for, not slept on).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while !streamed.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(
            std::time::Instant::now() < deadline,
            "the stream never ended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let answer = client.answer(run).await;
    assert_eq!(answer["result"]["outcome"], "answered", "{answer}");
    let deltas: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|message| message["params"]["type"] == "delta")
        .collect();
    let delta_bytes: usize = deltas
        .iter()
        .map(|message| message["params"]["text"].as_str().map_or(0, str::len))
        .sum();
    assert!(
        delta_bytes < 20 << 20,
        "{delta_bytes} bytes of deltas waited for a client that read nothing"
    );
    let dropped = client
        .notifications
        .iter()
        .find(|message| message["params"]["type"] == "deltas_dropped")
        .unwrap_or_else(|| panic!("no deltas_dropped among {} notices", deltas.len()));
    assert_eq!(
        dropped["params"]["count"].as_u64().unwrap() as usize + deltas.len(),
        3_000
    );
    assert!(
        client
            .notifications
            .iter()
            .any(|message| message["params"]["type"] == "reply"),
        "the reply is kept"
    );
}

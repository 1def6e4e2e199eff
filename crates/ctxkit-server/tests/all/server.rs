//! The stdio server in process, over an in-memory pipe.

use std::sync::Arc;

use ctxkit_compaction::Prompts;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::*;
use ctxkit_server::{ServerConfig, serve};

pub struct Client {
    to_server: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    from_server: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    next_id: u64,
    pub notifications: Vec<Value>,
}

impl Client {
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.answer(id).await
    }

    /// Appends a user message and a reply reporting `total` tokens, per turn.
    pub async fn append_turns(&mut self, turns: &[(&str, u64)]) {
        for (text, total) in turns {
            let appended = self
                .call("message.append", json!({"message": user(text)}))
                .await;
            assert!(appended["result"]["entry_id"].is_string(), "{appended}");
            self.call("message.append", json!({"message": reply("ok", *total)}))
                .await;
        }
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(format!("{request}\n").as_bytes()).await;
        id
    }

    /// Writes bytes to the server as they are.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.to_server.write_all(bytes).await.unwrap();
    }

    /// Reads what arrives for up to `wait` into `notifications` (answers included).
    pub async fn poll(&mut self, wait: std::time::Duration) {
        while let Ok(line) = tokio::time::timeout(wait, self.from_server.next_line()).await {
            let Some(line) = line.unwrap() else { break };
            self.notifications
                .push(serde_json::from_str(&line).unwrap());
        }
    }

    /// Waits for the answer to `id` (JSON `null` for an answer without id), keeping notifications.
    pub async fn answer_to(&mut self, id: Value) -> Value {
        loop {
            let line = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                self.from_server.next_line(),
            )
            .await
            .expect("an answer within 10 s")
            .unwrap()
            .expect("the server is still running");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id") == Some(&id) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// Writes `bytes` while reading until every id in `ids` is answered; returns how long the
    /// write took and the answers by id.
    pub async fn write_while_reading(
        &mut self,
        bytes: &[u8],
        ids: &[u64],
    ) -> (std::time::Duration, std::collections::BTreeMap<u64, Value>) {
        let started = std::time::Instant::now();
        let Self {
            to_server,
            from_server,
            notifications,
            ..
        } = self;
        let write = async {
            to_server.write_all(bytes).await.unwrap();
            started.elapsed()
        };
        let read = async {
            let mut answers = std::collections::BTreeMap::new();
            while answers.len() < ids.len() {
                let line = tokio::time::timeout(
                    std::time::Duration::from_secs(60),
                    from_server.next_line(),
                )
                .await
                .expect("an answer within 60 s")
                .unwrap()
                .expect("the server is still running");
                let message: Value = serde_json::from_str(&line).unwrap();
                match message.get("id").and_then(Value::as_u64) {
                    Some(id) if ids.contains(&id) => {
                        answers.insert(id, message);
                    }
                    Some(_) | None => notifications.push(message),
                }
            }
            answers
        };
        tokio::join!(write, read)
    }

    pub async fn answer(&mut self, id: u64) -> Value {
        self.answer_to(json!(id)).await
    }

    /// Ends the server's input, as a client that leaves does.
    pub async fn close_input(&mut self) {
        self.to_server.shutdown().await.unwrap();
    }

    /// Whether the server ended its output within `wait` (what arrives first is kept).
    pub async fn ended_within(&mut self, wait: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            match tokio::time::timeout_at(deadline, self.from_server.next_line()).await {
                Ok(Ok(Some(line))) => self
                    .notifications
                    .push(serde_json::from_str(&line).unwrap()),
                Ok(Ok(None)) => return true,
                Ok(Err(_)) | Err(_) => return false,
            }
        }
    }
}

fn start(dir: &std::path::Path) -> Client {
    start_with(dir, None)
}

pub fn start_with(dir: &std::path::Path, agent: Option<ctxkit_server::AgentConfig>) -> Client {
    start_summarizing(dir, agent, std::sync::Arc::new(Fixed))
}

/// A server whose compactions are summarized by `summarizer`.
pub fn start_summarizing(
    dir: &std::path::Path,
    agent: Option<ctxkit_server::AgentConfig>,
    summarizer: std::sync::Arc<dyn ctxkit_summarizer::Summarizer>,
) -> Client {
    start_configured(dir, agent, summarizer, settings(2_000))
}

fn start_configured(
    dir: &std::path::Path,
    agent: Option<ctxkit_server::AgentConfig>,
    summarizer: std::sync::Arc<dyn ctxkit_summarizer::Summarizer>,
    settings: ctxkit_engine::EngineSettings,
) -> Client {
    start_config(ServerConfig {
        settings,
        summarizer,
        prompts: Prompts::default(),
        model: None,
        sessions_root: dir.to_path_buf(),
        agent,
        max_request_bytes: 64 * 1024,
        max_queued_bytes: 1024 * 1024,
        foreign_hint: None,
        store: None,
    })
}

/// A server with `config`, over an in-memory pipe of 1 MiB.
pub fn start_config(config: ServerConfig) -> Client {
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    tokio::spawn(serve(config, BufReader::new(server_read), server_write));
    let (client_read, client_write) = tokio::io::split(client_side);
    Client {
        to_server: client_write,
        from_server: BufReader::new(client_read).lines(),
        next_id: 0,
        notifications: Vec::new(),
    }
}

#[tokio::test]
async fn a_session_through_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let init = client.call("initialize", Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit");
    let early = client.call("view.get", Value::Null).await;
    assert_eq!(early["error"]["code"], -32001);
    let created = client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    assert!(created["result"]["session_id"].is_string(), "{created}");
    client
        .call(
            "model.set",
            json!({"model": {"provider": PROVIDER, "id": MODEL, "context_window": 10_000}}),
        )
        .await;
    client
        .append_turns(&[("first", 100), ("second", 9_000)])
        .await;
    let report = client.call("check.after_run", Value::Null).await;
    assert_eq!(report["result"]["decision"], "threshold", "{report}");
    assert_eq!(report["result"]["retry"], false);
    let view = client.call("view.get", Value::Null).await;
    let text = view["result"]["messages"].to_string();
    assert!(text.contains("SUMMARY"), "{text}");
    let again = client.call("compact", json!({})).await;
    assert_eq!(
        again["error"]["data"]["kind"], "already_compacted",
        "{again}"
    );
    let unknown = client.call("nope", Value::Null).await;
    assert_eq!(unknown["error"]["code"], -32601);
    let kinds: Vec<&str> = client
        .notifications
        .iter()
        .filter_map(|message| message["params"]["type"].as_str())
        .collect();
    assert!(
        kinds.contains(&"compaction_start") && kinds.contains(&"compaction_end"),
        "{kinds:?}"
    );
    let _ = Arc::new(());
}

/// A request's events are written before its answer: a client that reads up to the answer of
/// `compact` (or of the last `agent.run` before `shutdown`) has seen the compaction's end. (On a
/// one-worker runtime the request task's end put the answer ahead of a forwarding task.)
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_compactions_events_come_before_the_answer_of_its_request() {
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let mut client = start(dir.path());
        client.call("initialize", Value::Null).await;
        client
            .call("session.create", json!({"cwd": dir.path()}))
            .await;
        client
            .append_turns(&[("first", 100), ("second", 9_000)])
            .await;
        let compact = client.call("compact", json!({})).await;
        assert!(compact["result"]["entry_id"].is_string(), "{compact}");
        let kinds: Vec<&str> = client
            .notifications
            .iter()
            .filter_map(|message| message["params"]["type"].as_str())
            .filter(|kind| kind.starts_with("compaction"))
            .collect();
        assert_eq!(
            kinds,
            ["compaction_start", "compaction_end"],
            "round {round}"
        );
    }
}

#[tokio::test]
async fn bad_lines_and_absurd_numbers_do_not_stop_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    // A line that is not UTF-8, then one that is not JSON: each gets a parse error, nothing stops.
    client
        .to_server
        .write_all(b"\xff\xfe{\n{oops\n")
        .await
        .unwrap();
    let created = client
        .call(
            "session.create",
            json!({"cwd": dir.path(), "in_memory": true}),
        )
        .await;
    assert!(created["result"]["session_id"].is_string(), "{created}");
    let errors: Vec<&Value> = client
        .notifications
        .iter()
        .filter(|message| message["error"]["code"] == -32700)
        .collect();
    assert_eq!(errors.len(), 2, "{:?}", client.notifications);
    assert!(
        errors[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not UTF-8")
    );
    // Token counts whose sum passes u64::MAX saturate instead of overflowing (3 × i64::MAX).
    client
        .call(
            "model.set",
            json!({"model": {"provider": "faux", "id": "faux-1", "context_window": 100_000}}),
        )
        .await;
    let huge = json!({
        "role": "assistant", "content": [{"type": "text", "text": "x"}],
        "provider": "faux", "model": "faux-1", "stopReason": "stop",
        "usage": {"input": i64::MAX, "output": 1, "cacheRead": i64::MAX, "cacheWrite": i64::MAX, "totalTokens": 0},
        "timestamp": now_ms(),
    });
    client
        .call("message.append", json!({"message": user("hi")}))
        .await;
    let appended = client
        .call("message.append", json!({"message": huge}))
        .await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    let usage = client.call("context.usage", Value::Null).await;
    let transcript = client.call("transcript.get", Value::Null).await;
    assert_eq!(
        usage["result"]["tokens"],
        json!(u64::MAX),
        "{usage} {transcript}"
    );
    let info = client.call("session.info", Value::Null).await;
    assert!(info["result"].is_object(), "{info}");
}

#[tokio::test]
async fn names_labels_compactions_and_sessions_over_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let cwd = dir.path().join("project").display().to_string();
    client.call("session.create", json!({"cwd": cwd})).await;
    let mut last = String::new();
    for turn in 0..3 {
        client
            .call(
                "message.append",
                json!({"message": user(&format!("question {turn}"))}),
            )
            .await;
        let appended = client
            .call("message.append", json!({"message": reply("ok", 1_000)}))
            .await;
        last = appended["result"]["entry_id"].as_str().unwrap().to_owned();
    }
    let named = client
        .call("session.name", json!({"name": "parser work"}))
        .await;
    assert!(named["result"]["entry_id"].is_string(), "{named}");
    let info = client.call("session.info", Value::Null).await;
    assert_eq!(info["result"]["name"], "parser work");
    let labelled = client
        .call("label.set", json!({"entry_id": last, "label": "done"}))
        .await;
    assert!(labelled["result"]["entry_id"].is_string(), "{labelled}");
    // Unknown ids are errors, not nulls.
    let unknown = client
        .call("label.set", json!({"entry_id": "nope", "label": "x"}))
        .await;
    assert_eq!(
        unknown["error"]["data"]["kind"], "entry_not_found",
        "{unknown}"
    );
    let unknown = client
        .call("pruned.fetch", json!({"tool_call_id": "nope"}))
        .await;
    assert_eq!(
        unknown["error"]["data"]["kind"], "entry_not_found",
        "{unknown}"
    );
    let none = client.call("compaction.undo", Value::Null).await;
    assert_eq!(none["error"]["data"]["kind"], "no_compaction", "{none}");
    let compacted = client.call("compact", Value::Null).await;
    assert!(compacted["result"]["entry_id"].is_string(), "{compacted}");
    let listed = client.call("compaction.list", Value::Null).await;
    let compactions = listed["result"]["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 1);
    assert!(
        compactions[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("SUMMARY")
    );
    // Work after the compaction comes back with the undo, as on every surface.
    let later = client
        .call("message.append", json!({"message": user("later question")}))
        .await;
    let later = later["result"]["entry_id"].as_str().unwrap().to_owned();
    client
        .call("label.set", json!({"entry_id": later, "label": "later"}))
        .await;
    let undone = client.call("compaction.undo", Value::Null).await;
    assert_eq!(
        undone["result"]["compaction_id"], compactions[0]["id"],
        "{undone}"
    );
    assert_eq!(undone["result"]["reappended"], 1, "{undone}");
    let carried: Vec<&str> = undone["result"]["carried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["type"].as_str().unwrap())
        .collect();
    assert_eq!(carried, ["message", "label"], "{undone}");
    assert_eq!(undone["result"]["carried"][0]["id"], later.as_str());
    assert_eq!(undone["result"]["not_carried"], json!([]), "{undone}");
    let listed = client.call("compaction.list", Value::Null).await;
    assert!(
        listed["result"]["compactions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let sessions = client.call("sessions.list", Value::Null).await;
    let rows = sessions["result"]["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{sessions}");
    assert_eq!(rows[0]["name"], "parser work");
    // Six messages, the later one and its copy on the restored branch.
    assert_eq!(rows[0]["message_count"], 8);
    let all = client.call("sessions.list", json!({"all": true})).await;
    assert_eq!(all["result"]["sessions"].as_array().unwrap().len(), 1);
    // Sweep 9: a relative `cwd` names no project; it listed nothing, silently.
    let relative = client
        .call("sessions.list", json!({"cwd": "projects/parser"}))
        .await;
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
}

#[tokio::test]
async fn every_listed_method_is_handled() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let init = client.call("initialize", Value::Null).await;
    let methods: Vec<String> = init["result"]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|method| method.as_str().unwrap().to_owned())
        .collect();
    assert!(methods.len() >= 30, "{methods:?}");
    for method in methods.iter().filter(|method| *method != "shutdown") {
        let answer = client.call(method, Value::Null).await;
        assert_ne!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
    let unknown = client.call("nope", Value::Null).await;
    assert_eq!(unknown["error"]["code"], -32601);
}

/// Issue 17, defects 4 and 5: entries acknowledged before the first reply are written at
/// `shutdown`, and messages that are not protocol types are refused.
#[tokio::test]
async fn held_back_entries_are_written_at_shutdown_and_bad_messages_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let created = client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    for bad in [
        json!({"role": "bogus"}),
        json!({"role": 5}),
        json!({"role": "user"}),
        json!({"role": "user", "content": "no timestamp"}),
    ] {
        let refused = client.call("message.append", json!({"message": bad})).await;
        assert_eq!(refused["error"]["code"], json!(-32602), "{refused}");
    }
    assert!(
        !std::path::Path::new(&file).exists(),
        "refused messages write nothing"
    );
    let appended = client
        .call("message.append", json!({"message": user("first words")}))
        .await;
    let id = appended["result"]["entry_id"].as_str().unwrap().to_owned();
    // Pi 1.6 writes a new session from its first user message.
    let text = std::fs::read_to_string(&file).expect("written at the first user message");
    assert!(text.contains(&id));
    let done = client.call("shutdown", Value::Null).await;
    assert_eq!(done["result"], json!({}), "{done}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(&id));
    assert!(!text.contains("bogus"));
    assert_eq!(text.lines().count(), 2, "{text}");
}

/// QA r102 (interop), finding 5: a reply appended with some of its counts was stored with
/// `totalTokens: 0` beside them; it is stored with their sum, as Pi computes it.
#[tokio::test]
async fn an_appended_reply_with_partial_usage_is_stored_with_its_total() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let created = client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    client
        .call("message.append", json!({"message": user("hi")}))
        .await;
    let partial = json!({
        "role": "assistant", "content": [{"type": "text", "text": "x"}],
        "provider": "faux", "model": "faux-1", "stopReason": "stop",
        "usage": {"input": 5, "cacheRead": 3},
        "timestamp": now_ms(),
    });
    let appended = client
        .call("message.append", json!({"message": partial}))
        .await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    let text = std::fs::read_to_string(&file).unwrap();
    let stored: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(
        stored["message"]["usage"],
        json!({"input": 5, "output": 0, "cacheRead": 3, "cacheWrite": 0, "totalTokens": 8,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}),
        "{text}"
    );
}

/// Issue 33, item 12: a request line without a newline was buffered without limit (1 GiB after
/// 1 GiB sent). Past `max_request_bytes` it is discarded as it arrives and answered with an error;
/// the server goes on.
#[tokio::test]
async fn a_request_line_past_the_limit_is_refused_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":\"{}\"}}\n",
        "x".repeat(200 * 1024)
    );
    client.send_raw(long.as_bytes()).await;
    let refused = client.answer_to(Value::Null).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("longer than the limit of 65536 bytes (`server.maxRequestBytes`)"),
        "{message}"
    );
    let init = client.call("initialize", Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit");
}

/// QA (2026-12-07): a line that was not JSON, a number too large to read and a line of the wrong
/// shape were answered the moment they were read, ahead of the requests pipelined before them, so
/// a client pairing answers in order paired a `null`-id error with an earlier request. Every line
/// is answered in its turn.
#[tokio::test]
async fn unreadable_lines_are_answered_in_their_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let create = json!({"jsonrpc": "2.0", "id": 1, "method": "session.create",
        "params": {"cwd": dir.path(), "in_memory": true}});
    let lines = format!(
        "{create}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.info\"}}\n\
         {{bad\n\
         {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"}}\n\
         {{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"session.info\"}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session.info\",\"params\":{{\"x\":1e99999}}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"session.info\"}}\n"
    );
    client.send_raw(lines.as_bytes()).await;
    client.answer(6).await;
    let order: Vec<Value> = client
        .notifications
        .iter()
        .filter(|message| message.get("method").is_none())
        .map(|message| message["id"].clone())
        .collect();
    assert_eq!(
        order,
        [
            json!(1),
            json!(2),
            Value::Null,
            json!(3),
            json!(4),
            json!(5)
        ],
        "{:?}",
        client.notifications
    );
}

/// Found by the `serve_requests` fuzz target: a request with a key written twice, or a number past
/// what the reader holds (`1e99999`), was refused under the id `null`, so a client waiting for its
/// id waited forever. It is answered under its id when it names one; with two ids it names none,
/// and `null` it is.
#[tokio::test]
async fn a_request_refused_for_its_shape_is_answered_under_its_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    client
        .send_raw(
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"method\":\"view.get\"}\n",
        )
        .await;
    let refused = client.answer_to(json!(5)).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("duplicate field `method`"), "{message}");
    client
        .send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\",\"id\":7}\n")
        .await;
    let refused = client.answer_to(Value::Null).await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("duplicate field `id`")
    );
    // A number this reader cannot hold, in JSON that is otherwise sound.
    client
        .send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"initialize\",\"params\":{\"t\":1e99999}}\n")
        .await;
    let refused = client.answer_to(json!(8)).await;
    assert_eq!(refused["error"]["code"], -32700, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("JSON this server cannot read: number out of range"),
        "{message}"
    );
    let init = client.call("initialize", Value::Null).await;
    assert_eq!(init["result"]["server"], "ctxkit");
}

/// `model.set` picks the model's `compaction.modelOverrides` entry: the same usage is under the
/// threshold for one model and over it for the model whose override reserves more.
#[tokio::test]
async fn model_set_picks_the_models_compaction_budgets() {
    let dir = tempfile::tempdir().unwrap();
    let read = ctxkit_settings::SettingsManager::in_memory(
        json!({
            "compaction": {"reserveTokens": 2_000, "keepRecentTokens": 1, "modelOverrides": {
                format!("{PROVIDER}/{MODEL}"): {"reserveTokens": 5_000}
            }}
        })
        .as_object()
        .cloned()
        .unwrap(),
    );
    let settings = ctxkit_engine::EngineSettings::from_settings(read.settings());
    let mut client = start_configured(dir.path(), None, Arc::new(Fixed), settings);
    client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let set_model =
        |id: &str| json!({"model": {"provider": PROVIDER, "id": id, "context_window": 10_000}});
    client.call("model.set", set_model("other")).await;
    client
        .append_turns(&[("first", 100), ("second", 6_000)])
        .await;
    let report = client.call("check.after_run", Value::Null).await;
    assert_eq!(
        report["result"]["decision"], "skip_under_threshold",
        "{report}"
    );
    client.call("model.set", set_model(MODEL)).await;
    let report = client.call("check.after_run", Value::Null).await;
    assert_eq!(report["result"]["decision"], "threshold", "{report}");
}

/// A session file of `count` one-word messages on one branch, without usage.
fn long_session(dir: &std::path::Path, count: usize) -> std::path::PathBuf {
    let path = dir.join("long.jsonl");
    let mut text = json!({"type": "session", "version": 3, "id": "long",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": dir.display().to_string()})
    .to_string();
    for index in 0..count {
        let parent = if index == 0 {
            "null".to_owned()
        } else {
            format!("\"{index:08x}\"")
        };
        text.push_str(&format!(
            "\n{{\"type\":\"message\",\"id\":\"{:08x}\",\"parentId\":{parent},\
             \"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\
             \"content\":\"word {index}\",\"timestamp\":{index}}}}}",
            index + 1
        ));
    }
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    path
}

/// QA (serve): a file whose last line was cut in half opened as if whole, one entry short; the
/// answer now names what was left out, as `ctxkit check` does.
#[tokio::test]
async fn a_damaged_file_opens_with_its_problems_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = long_session(dir.path(), 3);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 20]).unwrap();
    let mut client = start(dir.path());
    let opened = client.call("session.open", json!({"path": path})).await;
    assert_eq!(opened["result"]["entries"], 2, "{opened}");
    let problems = opened["result"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{opened}");
    assert_eq!(problems[0]["line"], 4, "{opened}");
    let whole = client.call("session.info", Value::Null).await;
    assert_eq!(whole["result"]["problems"], opened["result"]["problems"]);
}

#[tokio::test]
async fn a_view_over_the_bound_is_refused_with_its_length_and_the_branch_is_read_by_page() {
    let dir = tempfile::tempdir().unwrap();
    let count = ctxkit_server::MAX_ANSWER_MESSAGES + 2;
    let path = long_session(dir.path(), count);
    let mut client = start(dir.path());
    let opened = client.call("session.open", json!({"path": path})).await;
    assert!(opened["result"].is_object(), "{opened}");
    // Refused before it is built, naming its length and how to page.
    for method in ["view.get", "transcript.get"] {
        let refused = client.call(method, Value::Null).await;
        assert_eq!(
            refused["error"]["data"]["kind"], "too_many_messages",
            "{refused}"
        );
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("holds {count} messages")),
            "{message}"
        );
        assert!(message.contains("`transcript.get`"), "{message}");
    }
    // The last page: two messages, the total and where it starts.
    let page = client
        .call(
            "transcript.get",
            json!({"offset": ctxkit_server::MAX_ANSWER_MESSAGES, "limit": 10}),
        )
        .await;
    assert_eq!(page["result"]["total"], count, "{page}");
    let messages = page["result"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["content"], format!("word {}", count - 1));
    let first = client.call("transcript.get", json!({"limit": 1})).await;
    assert_eq!(
        first["result"]["messages"][0]["content"], "word 0",
        "{first}"
    );
    let over = client
        .call(
            "transcript.get",
            json!({"limit": ctxkit_server::MAX_ANSWER_MESSAGES + 1}),
        )
        .await;
    assert_eq!(over["error"]["code"], -32602, "{over}");
    // Past the end: an empty page.
    let past = client
        .call("transcript.get", json!({"offset": count + 5}))
        .await;
    assert_eq!(past["result"]["messages"], json!([]), "{past}");
}

/// `pruned.fetch` reads back a tool result, or with `call` the call whose arguments a
/// `ctxkit://tool-call/` marker cut, as the session stores them.
#[tokio::test]
async fn pruned_fetch_reads_a_result_or_its_call() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("calls.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"write it","timestamp":1}}"#,
        r#"{"type":"message","id":"a","parentId":"u","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"write","arguments":{"path":"a.txt","content":"one\ntwo\n"}}],"provider":"p","model":"m","api":"x","stopReason":"toolUse","timestamp":2,"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2}}}"#,
        r#"{"type":"message","id":"t","parentId":"a","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"write","content":[{"type":"text","text":"wrote 2 lines"}],"isError":false,"timestamp":3}}"#,
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let mut client = start_with(dir.path(), None);
    let opened = client.call("session.open", json!({"path": path})).await;
    assert!(opened.get("result").is_some(), "{opened}");
    let result = client
        .call("pruned.fetch", json!({"tool_call_id": "c"}))
        .await;
    assert_eq!(result["result"]["text"], "wrote 2 lines", "{result}");
    let call = client
        .call("pruned.fetch", json!({"tool_call_id": "c", "call": true}))
        .await;
    assert_eq!(
        call["result"]["text"], "write (call c)\npath: a.txt\ncontent:\none\ntwo\n",
        "{call}"
    );
    let unknown = client
        .call("pruned.fetch", json!({"tool_call_id": "t", "call": true}))
        .await;
    assert_eq!(
        unknown["error"]["data"]["kind"], "entry_not_found",
        "{unknown}"
    );
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no tool call with call id `t`"),
        "{unknown}"
    );
}

/// `session.create` refuses a `cwd` that is empty, relative or holds a NUL byte, naming `cwd`
/// (-32602), and a relative `session_dir`. Before, each was accepted and every later write went to
/// a folder nobody meant (the `serve_requests` fuzz target's runs wrote sessions into the working
/// folder through mutated `session_dir`s). A `cwd` whose Pi folder name would be longer than a file
/// name may be gets a shortened folder (`encode_cwd`), and its session is written.
#[tokio::test]
async fn session_create_refuses_a_cwd_no_sessions_folder_can_be_named_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let too_long = format!("/{}", "x".repeat(300));
    for cwd in ["", "relative/project", "/tmp/a\0b"] {
        let refused = client.call("session.create", json!({"cwd": cwd})).await;
        assert_eq!(refused["error"]["code"], -32602, "{cwd:?}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("`cwd`"), "{cwd:?}: {message}");
    }
    // A relative `session_dir` would be below wherever the server runs; a file is no folder
    // (QA 2026-12-05: taken, the first append failed with "File exists").
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "notes").unwrap();
    let file = file.display().to_string();
    for session_dir in ["", "sessions", "../up", file.as_str()] {
        let refused = client
            .call(
                "session.create",
                json!({"cwd": "/p", "session_dir": session_dir}),
            )
            .await;
        assert_eq!(
            refused["error"]["code"], -32602,
            "{session_dir:?}: {refused}"
        );
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`session_dir`"),
            "{session_dir:?}: {message}"
        );
    }
    // Kept elsewhere, the long one's folder is never named after it; a long name that fits works,
    // and so does one that does not, in its shortened folder.
    let elsewhere = client
        .call(
            "session.create",
            json!({"cwd": too_long, "session_dir": dir.path().join("elsewhere")}),
        )
        .await;
    assert!(elsewhere["result"]["session_id"].is_string(), "{elsewhere}");
    let fits = format!("/{}", "y".repeat(250));
    for cwd in [fits, too_long] {
        let created = client.call("session.create", json!({"cwd": cwd})).await;
        assert!(created["result"]["session_id"].is_string(), "{created}");
        client
            .call("message.append", json!({"message": user("one")}))
            .await;
        let written = client
            .call("message.append", json!({"message": reply("done", 10)}))
            .await;
        assert!(written["result"]["entry_id"].is_string(), "{written}");
    }
}

/// The events of a compaction the client's end cancelled reach the client: the end waits for the
/// engine's events to be forwarded before the writer stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_compaction_s_events_are_written_before_the_end() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let mut client = start_summarizing(dir.path(), None, Arc::new(UntilCancelled));
        client
            .call("session.create", json!({"cwd": dir.path()}))
            .await;
        client
            .append_turns(&[("first", 100), ("second", 9_000)])
            .await;
        let compact = client.send("compact", json!({})).await;
        while !client
            .notifications
            .iter()
            .any(|message| message["params"]["type"] == "compaction_start")
        {
            client.poll(std::time::Duration::from_millis(10)).await;
        }
        client.to_server.shutdown().await.unwrap();
        client.poll(std::time::Duration::from_secs(5)).await;
        let answer = client
            .notifications
            .iter()
            .find(|message| message["id"] == compact)
            .unwrap();
        assert_eq!(answer["error"]["data"]["kind"], "cancelled", "{answer}");
        assert!(
            client
                .notifications
                .iter()
                .any(|message| message["params"]["type"] == "compaction_end"),
            "round {round}: {:?}",
            client.notifications
        );
    }
}

/// A compaction read after the client's end is not started: it is answered as cancelled at once,
/// not abandoned a second later; an `agent.run` read then is answered `not_sent`.
#[tokio::test]
async fn requests_read_after_the_end_that_would_wait_are_answered_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        settings: settings(2_000),
        summarizer: Arc::new(UntilCancelled),
        prompts: Prompts::default(),
        model: None,
        sessions_root: dir.path().to_path_buf(),
        agent: None,
        max_request_bytes: 64 * 1024,
        max_queued_bytes: 1024 * 1024,
        foreign_hint: None,
        store: None,
    };
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "session.create",
        "params": {"cwd": dir.path()}}),
    ];
    for (index, (text, total)) in [("first", 100), ("second", 9_000)].into_iter().enumerate() {
        lines.push(
            json!({"jsonrpc": "2.0", "id": 10 + index * 2, "method": "message.append",
            "params": {"message": user(text)}}),
        );
        lines.push(
            json!({"jsonrpc": "2.0", "id": 11 + index * 2, "method": "message.append",
            "params": {"message": reply("ok", total)}}),
        );
    }
    lines.push(json!({"jsonrpc": "2.0", "id": 2, "method": "compact", "params": {}}));
    lines.push(
        json!({"jsonrpc": "2.0", "id": 3, "method": "agent.run", "params": {"text": "go on"}}),
    );
    lines.push(json!({"jsonrpc": "2.0", "id": 4, "method": "tree.navigate",
        "params": {"target_id": "anywhere", "summarize": true}}));
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let (writer, mut reader) = tokio::io::duplex(1 << 20);
    let mut output = String::new();
    let (served, read) = tokio::join!(
        serve(config, input.as_bytes(), writer),
        tokio::io::AsyncReadExt::read_to_string(&mut reader, &mut output),
    );
    served.unwrap();
    read.unwrap();
    let answers: Vec<Value> = output
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let answer = |id: u64| answers.iter().find(|message| message["id"] == id).unwrap();
    assert!(answer(12)["result"]["entry_id"].is_string(), "{output}");
    // Told apart by its kind, not timed: a compaction started and abandoned a second later is
    // answered `abandoned` (a bound under that second failed on a loaded machine).
    assert_eq!(answer(2)["error"]["data"]["kind"], "cancelled", "{output}");
    assert_eq!(
        answer(2)["error"]["message"],
        "Compaction cancelled",
        "{output}"
    );
    assert_eq!(
        answer(3)["result"],
        json!({"outcome": "not_sent", "text": "go on"})
    );
    // QA r108 S1: answered as a running navigation cancelled is, not "Compaction cancelled".
    assert_eq!(
        answer(4)["result"],
        json!({"cancelled": true, "aborted": true, "editor_text": null,
               "summary_entry_id": null, "new_leaf_id": answer(13)["result"]["entry_id"],
               "nothing_to_summarize": false, "marker_entry_id": null}),
        "{output}"
    );
}

/// Found by a client sweep: a JavaScript client that cut a string inside an emoji sent a lone
/// surrogate escape, and the whole append was refused as unreadable JSON; a Python client's
/// fractional timestamp (`time.time() * 1000`) was accepted and then dropped from the stored
/// message. Both are stored now: U+FFFD for the lone half, the whole milliseconds.
#[tokio::test]
async fn a_lone_surrogate_and_a_fractional_timestamp_are_stored() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start(dir.path());
    let created = client
        .call("session.create", json!({"cwd": dir.path()}))
        .await;
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    client
        .send_raw(
            b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"message.append\",\"params\":{\"message\":\
              {\"role\":\"user\",\"content\":\"emoji \\ud83d\",\"timestamp\":1796356873858.7178}}}\n",
        )
        .await;
    let appended = client.answer_to(json!(8)).await;
    assert!(appended["result"]["entry_id"].is_string(), "{appended}");
    let stored = std::fs::read_to_string(&file).unwrap();
    let line = stored.lines().last().unwrap();
    let entry: Value = serde_json::from_str(line).unwrap();
    assert_eq!(entry["message"]["content"], "emoji \u{fffd}", "{line}");
    assert_eq!(
        entry["message"]["timestamp"], 1_796_356_873_858_i64,
        "{line}"
    );
}

/// A `compact` read just before the input ends, on a session large enough that planning takes a
/// while: the end's cancellation came before the compaction had started, found nothing to cancel,
/// and the compaction ran on until it was abandoned a second later (a summary that never ends
/// here; the second summary request of a slow provider for the client that found it). The
/// request is told to stop until it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_starting_as_the_input_ends_is_cancelled_not_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("large.jsonl");
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "large-session",
        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": dir.path()}),
    ];
    let mut parent = Value::Null;
    for index in 0..2_000 {
        let message = if index % 2 == 0 {
            serde_json::to_value(user(&format!("step {index}: {}", "words ".repeat(40)))).unwrap()
        } else {
            serde_json::to_value(reply(&format!("done {index}"), 100 + index)).unwrap()
        };
        let id = format!("{index:08x}");
        lines.push(json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z", "message": message}));
        parent = Value::String(id);
    }
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&file, text).unwrap();
    for round in 0..3 {
        let mut client = start_summarizing(dir.path(), None, Arc::new(UntilCancelled));
        let opened = client.call("session.open", json!({"path": file})).await;
        assert!(opened["result"]["session_id"].is_string(), "{opened}");
        let compact = client.send("compact", json!({})).await;
        // The input ends while the compaction is being planned, before it has started.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        client.to_server.shutdown().await.unwrap();
        client.poll(std::time::Duration::from_secs(5)).await;
        let answer = client
            .notifications
            .iter()
            .find(|message| message["id"] == compact)
            .unwrap();
        assert_eq!(
            answer["error"]["data"]["kind"], "cancelled",
            "round {round}: {answer}"
        );
    }
}

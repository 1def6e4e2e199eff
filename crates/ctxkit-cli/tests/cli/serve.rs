//! `ctxkit serve --stdio` end to end: spawn the binary and speak JSON-RPC to it.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// `ctxkit serve --stdio` with a JSON-RPC client that records every notification.
pub(crate) struct Server {
    pub(crate) child: Child,
    /// `None` once closed (the client's end).
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// Every notification received so far, in order.
    pub(crate) notifications: Vec<Value>,
}

impl Server {
    /// A server whose home and project directory are both `home`.
    pub(crate) fn start(home: &Path) -> Self {
        Self::start_in(home, home)
    }

    /// A server with its home at `home`, run in `project`, without provider keys.
    pub(crate) fn start_in(home: &Path, project: &Path) -> Self {
        Self::start_with(home, project, &[])
    }

    /// [`Server::start_in`] with the environment variables `env` set too.
    pub(crate) fn start_with(home: &Path, project: &Path, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ctxkit"));
        for name in crate::PROVIDER_VARIABLES {
            command.env_remove(name);
        }
        command.envs(env.iter().copied());
        let mut child = command
            .args(["serve", "--stdio"])
            .env("CTXKIT_HOME", home)
            .env_remove("CTXKIT_SESSIONS_DIR")
            .current_dir(project)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin: Some(stdin),
            stdout,
            next_id: 0,
            notifications: Vec::new(),
        }
    }

    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.answer(id)
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub(crate) fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().expect("the server's stdin is open");
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        id
    }

    /// Reads until the answer to `id`, keeping the notifications before it.
    pub(crate) fn answer(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            assert_ne!(
                self.stdout.read_line(&mut line).unwrap(),
                0,
                "the server exited"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == json!(id) {
                return message;
            }
            self.notifications.push(message);
        }
    }

    /// Writes `line` as it is, then a `session.info` marker (queued behind whatever `line`
    /// started); returns, as text, every line the server wrote before the marker's answer.
    pub(crate) fn exchange(&mut self, line: &str) -> Vec<String> {
        let marker = r#"{"jsonrpc":"2.0","id":"marker","method":"session.info"}"#;
        let stdin = self.stdin.as_mut().expect("the server's stdin is open");
        writeln!(stdin, "{line}\n{marker}").unwrap();
        stdin.flush().unwrap();
        let mut lines = Vec::new();
        loop {
            let mut text = String::new();
            assert_ne!(
                self.stdout.read_line(&mut text).unwrap(),
                0,
                "the server exited"
            );
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["id"] == "marker" {
                return lines;
            }
            lines.push(text.trim_end().to_owned());
        }
    }

    /// Closes the server's stdin, as a client that ends does.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The engine's events (`event` notifications), their parameters.
    pub(crate) fn events(&self) -> impl Iterator<Item = &Value> {
        self.notifications
            .iter()
            .filter(|message| message["method"] == "event")
            .map(|message| &message["params"])
    }

    /// The engine's events of one type.
    pub(crate) fn events_of(&self, kind: &str) -> Vec<&Value> {
        self.events()
            .filter(|event| event["type"] == kind)
            .collect()
    }

    fn event_types(&self) -> Vec<String> {
        self.events()
            .filter_map(|event| event["type"].as_str().map(str::to_owned))
            .filter(|kind| kind != "context_usage")
            .collect()
    }
}

fn now_ms() -> i64 {
    std::thread::sleep(std::time::Duration::from_millis(3));
    chrono::Utc::now().timestamp_millis()
}

pub(crate) fn user(text: &str) -> Value {
    json!({"role": "user", "content": text, "timestamp": now_ms()})
}

pub(crate) fn reply(text: &str, total: u64) -> Value {
    json!({
        "role": "assistant", "content": [{"type": "text", "text": text}],
        "provider": "faux", "model": "faux-1", "api": "faux", "stopReason": "stop",
        "usage": {"input": total, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total},
        "timestamp": now_ms(),
    })
}

#[test]
fn an_agent_drives_a_session_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    // A small keep budget, so the first turn is summarized and the second kept verbatim.
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"compaction": {"keepRecentTokens": 500}}"#,
    )
    .unwrap();
    let mut server = Server::start(home.path());
    let init = server.call("initialize", Value::Null);
    assert_eq!(init["result"]["protocol_version"], "1");
    let created = server.call("session.create", json!({"cwd": home.path()}));
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    server.call(
        "model.set",
        json!({"model": {"provider": "faux", "id": "faux-1", "context_window": 20_000}}),
    );
    let mut ids = Vec::new();
    let long_answer = "I rewrote the tokenizer loop and the error recovery. ".repeat(80);
    for (text, answer_text, total) in [
        (
            "fix the parser in src/parse.rs",
            long_answer.as_str(),
            2_000,
        ),
        ("now run the tests", "done", 18_000),
    ] {
        let answer = server.call("message.append", json!({"message": user(text)}));
        ids.push(answer["result"]["entry_id"].as_str().unwrap().to_owned());
        server.call(
            "message.append",
            json!({"message": reply(answer_text, total)}),
        );
    }
    // The check before a prompt finds the context over 20 000 − 16 384 and compacts offline.
    let report = server.call("check.before_prompt", Value::Null);
    assert_eq!(report["result"]["decision"], "threshold", "{report}");
    let compaction = &report["result"]["compaction"];
    assert_eq!(compaction["aborted"], false);
    // Before and after are estimated the same way (the replies' usage is far larger than their
    // short texts, so the estimate is what is compared).
    assert!(compaction["tokens_before"].is_u64() && compaction["tokens_after"].is_u64());
    let view = server.call("view.get", Value::Null);
    let first = view["result"]["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        first.contains("<summary>"),
        "the view starts with the summary: {first}"
    );
    let whole = view["result"]["messages"].to_string();
    assert!(
        whole.contains("src/parse.rs"),
        "the task is still visible: {whole}"
    );
    let again = server.call("compact", json!({"focus": "the parser"}));
    assert_eq!(again["error"]["message"], "Already compacted");
    assert_eq!(again["error"]["data"]["kind"], "already_compacted");
    // Navigation back to the first question puts its text back for editing.
    let navigated = server.call("tree.navigate", json!({"target_id": ids[0]}));
    assert_eq!(
        navigated["result"]["editor_text"],
        "fix the parser in src/parse.rs"
    );
    let pinned = server.call("pin.add", json!({"text": "never push to main"}));
    assert!(pinned["result"]["id"].is_string(), "{pinned}");
    let bad = server.call("pin.add", json!({}));
    assert_eq!(bad["error"]["code"], -32602);
    // QA (2026-12-05): an empty pin was an empty `<pinned>` message in every request.
    let empty = server.call("pin.add", json!({"text": " \n"}));
    assert_eq!(empty["error"]["code"], -32602, "{empty}");
    let unknown = server.call("does.not.exist", Value::Null);
    assert_eq!(unknown["error"]["code"], -32601);
    let done = server.call("shutdown", Value::Null);
    assert_eq!(done["result"], json!({}));
    assert!(server.child.wait().unwrap().success());
    assert!(
        server
            .event_types()
            .starts_with(&["compaction_start".to_owned(), "compaction_end".to_owned()]),
        "{:?}",
        server.event_types()
    );
    // What the server wrote is an ordinary session file.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"type\":\"compaction\""));
    assert!(text.contains("ctxkit.pin"));
}

/// The protocol carries a session's text exactly as stored: a URL's `user:pass@` and a line break
/// after a URL stay (the output layer hides them for people, not in data a client sends on), and a
/// bidirectional override comes as JSON's own escape (the same string).
#[test]
fn the_view_carries_the_session_s_text_exactly() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    server.call("session.create", json!({"cwd": home.path()}));
    let text = "clone https://me:pass@git.example/r\nDocs at https://docs.example\nuser.email=a@example.com \u{202e}";
    server.call("message.append", json!({"message": user(text)}));
    let view = server.call("view.get", Value::Null);
    assert_eq!(view["result"]["messages"][0]["content"], text, "{view}");
    server.call("shutdown", Value::Null);
    assert!(server.child.wait().unwrap().success());
}

/// QA (2026-12-07): `session.open` on a Claude Code transcript or a Codex rollout said only that
/// the file is not a session; the CLI's hint (the command that converts it) is in the message now,
/// and the file is left as it was.
#[test]
fn opening_another_agents_session_names_the_import() {
    let home = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ctxkit-import/tests/fixtures");
    let mut server = Server::start(home.path());
    for (name, agent) in [
        ("claude-code-session.jsonl", "Claude Code"),
        ("codex-rollout.jsonl", "Codex"),
    ] {
        let file = home.path().join(name);
        std::fs::copy(fixtures.join(name), &file).unwrap();
        let before = std::fs::read(&file).unwrap();
        let refused = server.call("session.open", json!({"path": file}));
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("is not a session file")
                && message.contains(agent)
                && message.contains("run `ctxkit import "),
            "{refused}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), before);
    }
}

/// A session imported from Codex before 2026-12-06 holds a reply per parallel call, then the
/// outputs. Continued, the view sent each output right after the reply making its call; until then
/// it answered every call but the last `No result provided` and dropped the recorded outputs.
#[test]
fn an_old_codex_import_s_view_carries_the_real_outputs() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("old-import.jsonl");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ctxkit-transform/tests/fixtures/codex-one-reply-per-call.jsonl");
    std::fs::copy(&fixture, &file).unwrap();
    let stored = std::fs::read(&file).unwrap();
    let mut server = Server::start(home.path());
    let opened = server.call("session.open", json!({"path": file}));
    assert!(opened["result"].is_object(), "{opened}");
    let view = server.call("view.get", Value::Null);
    let messages = view["result"]["messages"].as_array().unwrap();
    let whole = view["result"]["messages"].to_string();
    assert!(!whole.contains("No result provided"), "{whole}");
    for output in [
        "name = \\\"shop\\\"",
        "version = 4",
        "missing field `edition`",
    ] {
        assert!(whole.contains(output), "{output} in {whole}");
    }
    // Each result right after the reply making its call (its results between).
    let mut calls: Vec<&str> = Vec::new();
    let mut results = 0;
    for message in messages {
        match message["role"].as_str() {
            Some("assistant") => {
                calls = message["content"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|block| block["id"].as_str())
                    .collect();
            }
            Some("toolResult") => {
                assert!(
                    calls.contains(&message["toolCallId"].as_str().unwrap()),
                    "{whole}"
                );
                results += 1;
            }
            _ => calls.clear(),
        }
    }
    assert_eq!(results, 4);
    assert_eq!(view["result"]["report"]["orphans_repaired"], 0, "{view}");
    server.call("shutdown", Value::Null);
    assert!(server.child.wait().unwrap().success());
    // The stored history is untouched.
    assert_eq!(std::fs::read(&file).unwrap(), stored);
}

#[test]
fn a_closed_stdin_ends_the_server_cleanly() {
    let home = tempfile::tempdir().unwrap();
    let mut server = Server::start(home.path());
    server.call("initialize", Value::Null);
    server.close_stdin();
    assert!(server.child.wait().unwrap().success());
}

#[test]
fn serve_reads_the_settings_files_once() {
    // The engine's settings, the summarizer, the agent's tools and the resources all come from one
    // reading, so a file changed while the server starts cannot give them different views.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("settings.json"),
        r#"{"compaction": {"keepRecentTokens": 500}, "chat": {"bashTimeoutSeconds": 30}}"#,
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["--log", "ctxkit_settings=debug", "serve", "--stdio"])
        .env("CTXKIT_HOME", home.path())
        .env_remove("CTXKIT_SESSIONS_DIR")
        .env_remove("CTXKIT_LOG_FILE")
        .current_dir(home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let log = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        log.matches("reading the settings files").count(),
        1,
        "{log}"
    );
}

#[test]
fn serve_warns_once_about_a_broken_settings_file() {
    // One reading, so one report (the server used to read, and warn, three times, then warned
    // and refused): the refusal, naming the file; it does not start without the user's settings.
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("settings.json"), "{ not json").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["serve", "--stdio"])
        .env("CTXKIT_HOME", home.path())
        .env_remove("CTXKIT_SESSIONS_DIR")
        .env_remove("CTXKIT_LOG")
        .current_dir(home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("warning:").count(), 0, "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    assert!(stderr.contains("settings.json"), "{stderr}");
}

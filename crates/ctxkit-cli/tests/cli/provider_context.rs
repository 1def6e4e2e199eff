//! Anthropic message threads and cache warming end to end, `ctxkit serve` and `ctxkit chat`
//! against a mock Anthropic server (`provider_context/mock.rs`): turns continue the session's
//! thread with only their new messages, a compaction and an expired thread send the whole
//! request as a new thread (and the log says why), and the cache is refreshed between runs only
//! when Pi's rule says it pays, never for a model without prompt caching, never through the thread.

#[path = "provider_context/mock.rs"]
mod mock;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use wiremock::MockServer;

use crate::chat::Tmux;
use crate::serve::Server;
use mock::{Anthropic, MODEL};

/// The wait before each cache refresh (the test hook `CTXKIT_CACHE_WARMING_DELAY_MS`).
const DELAY_MS: &str = "150";

struct World {
    runtime: tokio::runtime::Runtime,
    server: MockServer,
    mock: Anthropic,
    home: tempfile::TempDir,
    project: PathBuf,
}

impl World {
    /// A mock reporting prompts of `prompt_tokens`, and settings that point the Anthropic provider
    /// at it with `llm` (merged into `llm.anthropic`) and `cacheWarming`.
    fn new(prompt_tokens: u64, anthropic: Value, warming: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let server = runtime.block_on(MockServer::start());
        let mock = Anthropic::default();
        mock.0.prompt_tokens.store(prompt_tokens, Ordering::SeqCst);
        runtime.block_on(mock.mount(&server));
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let mut llm_anthropic = json!({"supportsMessageThreads": true});
        if let (Some(base), Some(extra)) = (llm_anthropic.as_object_mut(), anthropic.as_object()) {
            base.extend(extra.clone());
        }
        let settings = json!({
            "defaultModel": format!("anthropic/{MODEL}"),
            "cacheWarming": warming,
            "llm": {"baseUrl": server.uri(), "apiKey": "sk-ant-test", "anthropic": llm_anthropic},
            "retry": {"enabled": false},
            // The reference strategy: the thread and the warming are measured against the
            // window's threshold and fresh summary requests, which this mock tells apart.
            "contextStrategy": "reference",
            "compaction": {"keepRecentTokens": 1},
        });
        std::fs::write(
            home.path().join("settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
        Self {
            runtime,
            server,
            mock,
            home,
            project,
        }
    }

    fn log(&self) -> PathBuf {
        self.home.path().join("ctxkit.log")
    }

    fn serve(&self) -> Server {
        let log = self.log().display().to_string();
        let mut server = Server::start_with(
            self.home.path(),
            &self.project,
            &[
                ("CTXKIT_CACHE_WARMING_DELAY_MS", DELAY_MS),
                ("CTXKIT_LOG", "ctxkit_llm=info,ctxkit_agent=info"),
                ("CTXKIT_LOG_FILE", log.as_str()),
            ],
        );
        let created = server.call(
            "session.create",
            json!({"cwd": self.project.display().to_string()}),
        );
        assert!(created["result"]["session_id"].is_string(), "{created}");
        server
    }

    fn bodies(&self) -> Vec<Value> {
        self.runtime
            .block_on(self.server.received_requests())
            .unwrap()
            .iter()
            .map(|request| serde_json::from_slice(&request.body).unwrap())
            .collect()
    }

    fn conversation(&self) -> Vec<Value> {
        self.bodies()
            .into_iter()
            .filter(mock::is_conversation)
            .collect()
    }

    fn refreshes(&self) -> Vec<Value> {
        self.bodies().into_iter().filter(mock::is_refresh).collect()
    }

    /// Waits until the mock has received `count` cache refreshes (60 s at most: a loaded CI machine).
    fn wait_for_refreshes(&self, count: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while self.refreshes().len() < count {
            assert!(
                std::time::Instant::now() < deadline,
                "{} of {count} refreshes",
                self.refreshes().len()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The `cache_warm` usage entries of the project's sessions.
    fn warm_entries(&self) -> Vec<Value> {
        let root = self.home.path().join("sessions");
        walk(&root)
            .iter()
            .flat_map(|file| {
                std::fs::read_to_string(file)
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
            .filter(|entry| entry["type"] == "usage" && entry["kind"] == "cache_warm")
            .collect()
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else if path.extension().is_some_and(|ext| ext == "jsonl") {
            files.push(path);
        }
    }
    files
}

fn run(server: &mut Server, text: &str) {
    let ran = server.call("agent.run", json!({"text": text}));
    assert_eq!(ran["result"]["outcome"], "answered", "{ran}");
}

fn messages(body: &Value) -> usize {
    body["messages"].as_array().map_or(0, Vec::len)
}

#[test]
fn serve_continues_the_thread_and_sends_it_whole_after_expiry_and_compaction() {
    let world = World::new(2_000, json!({}), "off");
    let mut server = world.serve();
    run(&mut server, "one");
    run(&mut server, "two");
    world.mock.0.expire.store(true, Ordering::SeqCst);
    run(&mut server, "three");
    run(&mut server, "four");
    let compacted = server.call("compact", json!({}));
    assert!(compacted.get("result").is_some(), "{compacted}");
    run(&mut server, "five");
    server.call("shutdown", json!({}));

    let sent = world.conversation();
    let kinds: Vec<&str> = sent
        .iter()
        .map(|body| body["thread"]["type"].as_str().unwrap_or("none"))
        .collect();
    // one: create; two: continue; three: continue rejected (expired), create; four: continue;
    // five: create after the compaction.
    assert_eq!(
        kinds,
        [
            "create", "continue", "continue", "create", "continue", "create"
        ]
    );
    assert_eq!(messages(&sent[1]), 1, "only the new user message");
    assert_eq!(sent[1]["thread"]["previous_message_id"], "msg_1");
    assert_eq!(messages(&sent[3]), 5, "the whole conversation again");
    assert_eq!(messages(&sent[4]), 1);
    assert!(sent[5].get("system").is_some() && messages(&sent[5]) > 1);
    let log = std::fs::read_to_string(world.log()).unwrap();
    assert!(log.contains("thread_not_found"), "{log}");
    assert!(log.contains("a compaction"), "{log}");
}

#[test]
fn serve_warms_the_cache_between_runs_only_when_it_pays_and_never_through_the_thread() {
    // 100k tokens of Opus 4.1: 0.15 × 100k × $17.25/M − 100k × $1.50/M ≈ $0.109 ≥ $0.05.
    let world = World::new(100_000, json!({}), "idle");
    let mut server = world.serve();
    run(&mut server, "one");
    world.wait_for_refreshes(2);
    let refreshes = world.refreshes();
    assert!(refreshes.len() >= 2, "{} refreshes", refreshes.len());
    for refresh in &refreshes {
        assert!(refresh.get("thread").is_none(), "{refresh}");
        assert_eq!(messages(refresh), 1, "the request as it was sent");
    }
    // A refresh the mock answered is recorded once its answer is read (or dropped if cancelled).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while world.warm_entries().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "no cache_warm entry");
        std::thread::sleep(Duration::from_millis(50));
    }
    let warm = world.warm_entries();
    assert!(warm.len() <= world.refreshes().len());
    assert_eq!(warm[0]["provider"], "anthropic");
    assert!(warm[0]["usage"]["cost"]["total"].as_f64().unwrap() > 0.0);
    // The next run stops the warming and continues the thread from the last real reply.
    run(&mut server, "two");
    let before = world.refreshes().len();
    server.call("shutdown", json!({}));
    // The server has exited (waited for, not slept on): nothing of it can refresh any more.
    server.close_stdin();
    server.child.wait().unwrap();
    assert_eq!(world.refreshes().len(), before, "no refresh after the end");
    let sent = world.conversation();
    assert_eq!(
        sent[1]["thread"]["previous_message_id"], "msg_1",
        "{}",
        sent[1]
    );
    // Every recorded refresh was one the mock answered; none after the end.
    assert!(world.warm_entries().len() <= before);
}

#[test]
fn serve_does_not_warm_when_it_would_not_pay_or_without_caching() {
    // 30k tokens: 0.15 × 30k × $17.25/M − 30k × $1.50/M ≈ $0.033 < $0.05.
    let small = World::new(30_000, json!({}), "idle");
    // Caching off: no cache to keep warm (and no thread).
    let uncached = World::new(100_000, json!({"cacheRetention": "none"}), "idle");
    for world in [&small, &uncached] {
        let mut server = world.serve();
        run(&mut server, "one");
        std::thread::sleep(Duration::from_millis(600));
        server.call("shutdown", json!({}));
        assert!(world.refreshes().is_empty());
        assert!(world.warm_entries().is_empty());
    }
    assert!(
        uncached
            .conversation()
            .iter()
            .all(|body| body.get("thread").is_none())
    );
}

#[test]
fn chat_keeps_its_thread_across_prompts_and_warms_while_idle() {
    assert!(Tmux::available(), "tmux is needed: apt-get install -y tmux");
    let world = World::new(100_000, json!({}), "idle");
    let tmux = start_chat(&world);
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_for("Answer 1.");
    tmux.wait_idle(2);
    tmux.line("two");
    tmux.wait_for("Answer 2.");
    tmux.wait_idle(3);
    // Idle: the refreshes come.
    world.wait_for_refreshes(2);
    tmux.line("/compact");
    tmux.wait_idle(4);
    tmux.line("three");
    tmux.wait_for("Answer");
    tmux.wait_idle(5);
    tmux.line("/quit");
    let sent = world.conversation();
    let kinds: Vec<&str> = sent
        .iter()
        .map(|body| body["thread"]["type"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(kinds, ["create", "continue", "create"], "{sent:#?}");
    assert_eq!(messages(&sent[1]), 1);
    assert!(!world.warm_entries().is_empty());
    for refresh in world.refreshes() {
        assert!(refresh.get("thread").is_none());
    }
}

/// `ctxkit chat` in the world's project, with the warming test hook.
fn start_chat(world: &World) -> Tmux {
    let mut command = format!("cd '{}' && exec env", world.project.display());
    for name in crate::PROVIDER_VARIABLES
        .into_iter()
        .chain(["CTXKIT_SESSIONS_DIR", "CTXKIT_OFFLINE"])
    {
        command.push_str(&format!(" -u {name}"));
    }
    command.push_str(&format!(
        " HOME='{home}' CTXKIT_HOME='{home}' CTXKIT_CACHE_WARMING_DELAY_MS={DELAY_MS} '{bin}' chat",
        home = world.home.path().display(),
        bin = env!("CARGO_BIN_EXE_ctxkit"),
    ));
    Tmux::start(&command)
}

#[test]
fn serve_compacts_on_demand_then_opens_a_new_thread_that_carries_the_block() {
    // The three features through one mock: threads across turns, an on-demand compaction (never
    // threaded), then a whole request as a new thread that opens with the signed block.
    let world = World::new(2_000, json!({}), "off");
    let settings_path = world.home.path().join("settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).unwrap()).unwrap();
    settings["compaction"]["provider"] = json!("on-demand");
    std::fs::write(&settings_path, settings.to_string()).unwrap();
    let mut server = world.serve();
    run(&mut server, "one");
    run(&mut server, "two");
    let compacted = server.call("compact", json!({}));
    assert!(compacted.get("result").is_some(), "{compacted}");
    run(&mut server, "three");
    run(&mut server, "four");
    server.call("shutdown", json!({}));

    let requests = world
        .runtime
        .block_on(world.server.received_requests())
        .unwrap();
    let compaction = requests
        .iter()
        .find(|request| mock::is_compaction(&serde_json::from_slice(&request.body).unwrap()))
        .expect("an on-demand compaction request");
    let beta = compaction
        .headers
        .get("anthropic-beta")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    assert!(beta.contains("compact-2026-09-04"), "{beta}");
    let compaction: Value = serde_json::from_slice(&compaction.body).unwrap();
    assert!(compaction.get("thread").is_none(), "{compaction}");

    let sent = world.conversation();
    let kinds: Vec<&str> = sent
        .iter()
        .map(|body| body["thread"]["type"].as_str().unwrap_or("none"))
        .collect();
    assert_eq!(kinds, ["create", "continue", "create", "continue"]);
    let first = &sent[2]["messages"][0];
    assert_eq!(first["role"], "assistant", "{}", sent[2]);
    assert_eq!(first["content"][0]["type"], "compaction", "{}", sent[2]);
    assert!(
        first["content"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("ON-DEMAND"),
        "{first}"
    );
    assert_eq!(messages(&sent[3]), 1, "the thread goes on after the block");
}

//! Issue 32's held-out scenario: `ctxkit serve --stdio` runs 8 tool-heavy prompts (`agent.run`)
//! against a mock provider per wire format whose real limit is the configured window (16,000
//! tokens, counted from the request's bytes: / 4, / 3.5 and / 2.7) and which refuses a longer
//! request with that provider's overflow error. Every prompt makes the model read two 16.7 KB
//! files, then run two commands that print 10 KB, then answer. The context must stay inside the
//! window by threshold compactions between tool calls, not by crashing into the provider's limit.

pub(crate) mod mock;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use mock::{Counts, Format, Provider, start_provider};

use crate::serve::Server;

const MODEL_ID: &str = "test-model";
/// Markers on every line of the project's files and of the commands' output, so the mock knows
/// which step of a turn a request answers.
const FILE_MARKER: &str = "FILE-LINE";
const COMMAND_MARKER: &str = "LOG-LINE";
const WINDOW: usize = 16_000;
const PROMPTS: usize = 8;

/// The project: per prompt two source files of 15 KB and two build logs of 9 KB.
fn write_project(project: &Path) {
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("logs")).unwrap();
    for prompt in 0..PROMPTS {
        for part in ["a", "b"] {
            let source: String = (0..170)
                .map(|line| format!("// {FILE_MARKER} {line:03} of module {prompt}{part}: the parser reads tokens, builds the tree, reports errors\n"))
                .collect();
            std::fs::write(
                project.join(format!("src/module-{prompt}-{part}.rs")),
                source,
            )
            .unwrap();
            let log: String = (0..135)
                .map(|line| format!("{COMMAND_MARKER} {line:03} Compiling crate-{prompt}{part} v0.1.0 (/work/project/crate-{prompt}{part}) ok\n"))
                .collect();
            std::fs::write(project.join(format!("logs/build-{prompt}-{part}.log")), log).unwrap();
        }
    }
}

/// The numbers of one format's run.
#[derive(Debug)]
struct Numbers {
    answered: usize,
    refused: usize,
    threshold: usize,
    mid_run: usize,
    overflow: usize,
}

fn run_scenario(provider: Provider) -> Numbers {
    let format = provider.format;
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    write_project(&project);
    let prompt = Arc::new(Mutex::new(0));
    let counts = Arc::new(Mutex::new(Counts::default()));
    let url = start_provider(provider, Arc::clone(&prompt), Arc::clone(&counts));
    write_settings(home.path(), format, &url);
    let mut serve = Server::start_in(home.path(), &project);
    serve.call("initialize", Value::Null);
    let created = serve.call("session.create", json!({"cwd": project}));
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    let answered = run_prompts(&mut serve, format, &prompt);
    let done = serve.call("shutdown", Value::Null);
    assert_eq!(done["result"], json!({}));
    assert!(serve.child.wait().unwrap().success());
    let (threshold, overflow) = compactions(&serve, format, &file);
    assert_checks_clean(home.path(), &file);
    let counts = counts.lock().unwrap();
    assert!(counts.largest_accepted <= WINDOW);
    assert_eq!(counts.refused_summaries, 0, "{format:?}: {counts:?}");
    // A split turn asks for two summaries (the history and the turn's prefix).
    assert!(
        counts.summaries >= threshold + overflow,
        "{format:?}: {counts:?}"
    );
    #[allow(clippy::print_stderr, reason = "the scenario's numbers are reported")]
    {
        eprintln!("{format:?}: {counts:?}");
    }
    Numbers {
        answered,
        refused: counts.refused,
        threshold,
        mid_run: mid_run_compactions(&file),
        overflow,
    }
}

/// Settings pointing the default model at the mock, with the provider's window and no retries.
fn write_settings(home: &Path, format: Format, url: &str) {
    let base_url = match format {
        Format::Anthropic => url.to_owned(),
        Format::Chat | Format::Responses | Format::Gemini => format!("{url}/v1"),
    };
    let settings = json!({
        "defaultProvider": "mock",
        "defaultModel": format!("mock/{MODEL_ID}"),
        "llm": {
            "api": format.api(),
            "baseUrl": base_url,
            "apiKey": "mock-key",
            "models": [{"provider": "mock", "id": MODEL_ID, "contextWindow": WINDOW, "maxOutput": 2048}]
        },
        "retry": {"enabled": false},
    });
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
}

/// Sends the prompts with tools approved; returns how many got the model's final answer.
fn run_prompts(serve: &mut Server, format: Format, prompt: &Mutex<usize>) -> usize {
    let mut answered = 0;
    for number in 0..PROMPTS {
        *prompt.lock().unwrap() = number;
        let text = format!(
            "prompt {number}: read both modules, run both builds, then tell me if it works"
        );
        let run = serve.call("agent.run", json!({"text": text, "approve": "all"}));
        assert_eq!(
            run["result"]["outcome"], "answered",
            "{format:?} prompt {number}: {run}"
        );
        let replied = serve.notifications.iter().any(|message| {
            message["method"] == "agent_event"
                && message["params"]["type"] == "reply"
                && message["params"]["message"]
                    .to_string()
                    .contains(&format!("ANSWER-{number}:"))
        });
        answered += usize::from(replied);
        // The run's events were written before its answer.
        assert_eq!(
            serve.events_of("compaction_start").len(),
            serve.events_of("compaction_end").len(),
            "{format:?} prompt {number}"
        );
    }
    answered
}

/// Every `compaction_start` has its `compaction_end` with the same reason, which wrote an entry;
/// returns the threshold and overflow compactions.
fn compactions(serve: &Server, format: Format, file: &str) -> (usize, usize) {
    let starts = serve.events_of("compaction_start");
    let ends = serve.events_of("compaction_end");
    assert_eq!(
        starts.len(),
        ends.len(),
        "{format:?}: every start has its end"
    );
    for (start, end) in starts.iter().zip(&ends) {
        assert_eq!(start["reason"], end["reason"], "{format:?}");
        assert_eq!(end["aborted"], false, "{format:?}: {end}");
        assert!(
            end["error"].is_null() && end["entry_id"].is_string(),
            "{format:?}: {end}"
        );
    }
    let written = std::fs::read_to_string(file).unwrap();
    assert_eq!(
        written.matches("\"type\":\"compaction\"").count(),
        ends.len(),
        "{format:?}"
    );
    let count = |reason: &str| {
        starts
            .iter()
            .filter(|start| start["reason"] == reason)
            .count()
    };
    (count("threshold"), count("overflow"))
}

/// `ctxkit check` finds nothing wrong with the session file.
fn assert_checks_clean(home: &Path, file: &str) {
    let check = Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["check", file])
        .env("CTXKIT_HOME", home)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

/// Compactions written right after a tool result, with the next message a model reply: the
/// threshold check between a tool batch and the next model call of the same run.
fn mid_run_compactions(file: &str) -> usize {
    let entries: Vec<Value> = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let by_id = |id: &Value| entries.iter().find(|entry| &entry["id"] == id);
    entries
        .iter()
        .filter(|entry| entry["type"] == "compaction")
        .filter(|compaction| {
            let parent = by_id(&compaction["parentId"]);
            let child = entries
                .iter()
                .find(|entry| entry["parentId"] == compaction["id"]);
            parent.is_some_and(|entry| entry["message"]["role"] == "toolResult")
                && child.is_some_and(|entry| entry["message"]["role"] == "assistant")
        })
        .count()
}

/// Runs the scenario with a provider counting like ctxkit's estimate, then 14% and 48% more.
fn assert_acceptance(format: Format) {
    for bytes_per_token in [40, 35, 27] {
        let numbers = run_scenario(Provider {
            format,
            bytes_per_token,
        });
        #[allow(clippy::print_stderr, reason = "the scenario's numbers are reported")]
        {
            eprintln!(
                "issue-32 scenario {format:?}, {}.{} bytes a token: answered {}/{PROMPTS}, refused overflows {}, \
                 threshold compactions {} (between tool calls {}), overflow compactions {}",
                bytes_per_token / 10,
                bytes_per_token % 10,
                numbers.answered,
                numbers.refused,
                numbers.threshold,
                numbers.mid_run,
                numbers.overflow
            );
        }
        assert_eq!(numbers.answered, PROMPTS, "{format:?}: {numbers:?}");
        assert!(numbers.refused <= 1, "{format:?}: {numbers:?}");
        assert!(numbers.mid_run >= 1, "{format:?}: {numbers:?}");
        assert!(
            numbers.threshold >= numbers.mid_run,
            "{format:?}: {numbers:?}"
        );
    }
}

#[test]
fn tool_heavy_prompts_stay_in_the_window_over_chat_completions() {
    assert_acceptance(Format::Chat);
}

#[test]
fn tool_heavy_prompts_stay_in_the_window_over_anthropic_messages() {
    assert_acceptance(Format::Anthropic);
}

#[test]
fn tool_heavy_prompts_stay_in_the_window_over_openai_responses() {
    assert_acceptance(Format::Responses);
}

#[test]
fn tool_heavy_prompts_stay_in_the_window_over_gemini() {
    assert_acceptance(Format::Gemini);
}

/// A server started in one folder serves sessions of other projects: each run's system prompt is
/// that project's (its `AGENTS.md`, its working directory), not the server's.
#[test]
fn a_run_gets_the_system_prompt_of_its_session_s_project() {
    let home = tempfile::tempdir().unwrap();
    let server_folder = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        server_folder.path().join("AGENTS.md"),
        "SERVER-FOLDER-RULES\n",
    )
    .unwrap();
    std::fs::write(project.path().join("AGENTS.md"), "PROJECT-RULES-42\n").unwrap();
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for mut socket in listener.incoming().flatten() {
            let (_, body) = crate::chat_stream::read_http_request(&socket);
            seen.lock()
                .unwrap()
                .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
            let text = Format::Chat.text("hello", 10);
            let _ = std::io::Write::write_all(
                &mut socket,
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                )
                .as_bytes(),
            );
        }
    });
    write_settings(home.path(), Format::Chat, &url);
    let mut serve = Server::start_in(home.path(), server_folder.path());
    serve.call("session.create", json!({"cwd": project.path()}));
    let run = serve.call("agent.run", json!({"text": "hi"}));
    assert_eq!(run["result"]["outcome"], "answered", "{run}");
    serve.call("shutdown", Value::Null);
    let bodies = bodies.lock().unwrap();
    let system = bodies[0]["messages"][0]["content"].to_string();
    assert!(system.contains("PROJECT-RULES-42"), "{system}");
    assert!(!system.contains("SERVER-FOLDER-RULES"), "{system}");
    assert!(
        system.contains(&project.path().display().to_string()),
        "{system}"
    );
}

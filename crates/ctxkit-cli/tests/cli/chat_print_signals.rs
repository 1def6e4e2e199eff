//! `ctxkit chat -p` stopped from outside: Ctrl-C (SIGINT) ends the run with 130 and sends no later
//! prompt, SIGTERM keeps what the turn did so far, and a prompt too big for the window says why
//! it was not sent.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use wiremock::MockServer;

use crate::Run;
use crate::chat_print::{OPENAI_KEY, print_chat, project, server};

/// `ctxkit chat --model openai/gpt-5-mini --yes ARGS` against `server`, started in the run's
/// project with nothing on its input, its output captured.
fn start_print_chat(run: &Run, server: &MockServer, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ctxkit"))
        .args(["chat", "--model", "openai/gpt-5-mini", "--yes", "-p"])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", run.home.path())
        .env("CTXKIT_HOME", run.home.path())
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .env("OPENAI_BASE_URL", format!("{}/v1", server.uri()))
        .current_dir(project(run))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `marker` exists (the model's command started), then sends `signal` to `chat`;
/// its exit code, stdout and stderr.
fn signal_when_started(chat: Child, marker: &Path, signal: &str) -> (i32, String, String) {
    let started = Instant::now();
    while !marker.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args([signal, &chat.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = chat.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The entries of the one session file of `file`.
fn entries(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// QA r105 (1, 2): Ctrl-C while the model's command ran exited 0 and printed the text of the
/// reply that called the command as the answer; and the next MESSAGE was sent after it. Now the
/// run stops: exit 130, nothing on stdout, no later prompt sent.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_a_command_stops_the_run_with_130() {
    let run = Run::new();
    let marker = project(&run).join("started");
    let command = format!("touch {}; sleep 30", marker.display());
    let server = server(Some(&command)).await;
    let chat = start_print_chat(&run, &server, &["--no-session", "first", "second"]);
    let (code, stdout, stderr) =
        tokio::task::block_in_place(|| signal_when_started(chat, &marker, "-INT"));
    assert_eq!(code, 130, "{stdout}\n{stderr}");
    assert_eq!(stdout, "", "{stderr}");
    assert!(stderr.contains("The answer was interrupted"), "{stderr}");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1, "no request after the interrupt");
}

/// QA r105 (3): SIGTERM (`timeout 60 ctxkit chat -p …`) while the model's command ran left the
/// call with no result: print mode never told the signal handler a prompt was at work. Now the
/// command's output so far is stored as its result, as at the input line, and the chat exits 143.
#[tokio::test(flavor = "multi_thread")]
async fn sigterm_during_a_command_keeps_its_output() {
    let run = Run::new();
    let marker = project(&run).join("started");
    let command = format!("echo partial-output; touch {}; sleep 30", marker.display());
    let server = server(Some(&command)).await;
    let file = run.home.path().join("print.jsonl");
    let file_argument = file.display().to_string();
    let chat = start_print_chat(&run, &server, &["--session", &file_argument, "run it"]);
    let (code, stdout, stderr) =
        tokio::task::block_in_place(|| signal_when_started(chat, &marker, "-TERM"));
    assert_eq!(code, 143, "{stdout}\n{stderr}");
    let entries = entries(&file);
    let last = &entries.last().unwrap()["message"];
    assert_eq!(last["role"], "toolResult", "{entries:?}");
    assert_eq!(
        last["content"][0]["text"],
        "partial-output\n\nCommand cancelled: the chat was closed"
    );
}

/// QA r105 (4): a piped input too big for the model's window was rightly not sent, but print mode
/// said it was "back on the input line" (it has none) and ended blaming a changed session or a
/// cancelled compaction. Now the last line says it was not sent, with what to do, exit 3.
#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_too_big_for_the_window_says_why_it_was_not_sent() {
    let server = server(None).await;
    let run = Run::new();
    let big = "the log line of a long run, repeated many times over\n".repeat(50_000);
    let output = print_chat(
        &run,
        &server,
        &["--no-session", "-p", "summarize this log"],
        &big,
    );
    assert!(output.starts_with("exit: 3\n--- stderr\n"), "{output}");
    assert!(!output.contains("input line"), "{output}");
    assert!(!output.contains("cancelled"), "{output}");
    assert!(
        output.contains("error: The prompt was not sent (the line above says why)"),
        "{output}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

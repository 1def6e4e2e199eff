//! `ctxkit chat` in print mode (Pi's `-p`, and what piped input gets): the piped input and the
//! message arguments make one prompt, nothing in them runs as a `!command` or a `/command`, the
//! final answer is printed on stdout, and a `bash` call runs only when `--yes` lets it.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

pub(crate) const OPENAI_KEY: &str = "sk-oai-test-PRINT789";

fn answered(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}}))
}

/// A Responses API that answers `bash` with `command` first (when given), then `all good`.
pub(crate) async fn server(command: Option<&str>) -> MockServer {
    let server = MockServer::start().await;
    if let Some(command) = command {
        Mock::given(method("POST"))
            .and(path("/v1/responses"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "id": "resp_0", "object": "response", "status": "completed", "model": "gpt-5-mini",
                "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                            "name": "bash", "status": "completed",
                            "arguments": json!({"command": command}).to_string()}],
                "usage": {"input_tokens": 9, "output_tokens": 8, "total_tokens": 17}})))
            .up_to_n_times(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(answered("all good"))
        .mount(&server)
        .await;
    server
}

/// `ctxkit chat --model openai/gpt-5-mini ARGS` against `server`, in the folder `project` of the
/// run's home (the home is ctxkit's, where tools never work), `input` piped in as it is.
pub(crate) fn print_chat(run: &Run, server: &MockServer, args: &[&str], input: &str) -> String {
    let base = format!("{}/v1", server.uri());
    let home = run.home.path().display().to_string();
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
        ("HOME", home.as_str()),
    ];
    let mut all = vec!["chat", "--model", "openai/gpt-5-mini"];
    all.extend_from_slice(args);
    // The mock server answers on this test's runtime: the wait must not block it.
    tokio::task::block_in_place(|| run.ctxkit_piped_in(&project(run), &all, &variables, input))
}

/// The project folder the chat runs in.
pub(crate) fn project(run: &Run) -> std::path::PathBuf {
    let project = run.home.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    project
}

/// The texts of the user messages of each request, in order.
async fn user_texts(server: &MockServer) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for request in server.received_requests().await.unwrap() {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let texts = body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["role"] == "user")
            .flat_map(|item| match &item["content"] {
                Value::String(text) => vec![text.clone()],
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|part| part["text"].as_str().map(str::to_owned))
                    .collect(),
                Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => Vec::new(),
            })
            .collect();
        all.push(texts);
    }
    all
}

/// The tester's scenario (r104 defect 1): a file piped in for review holds a `!` line and a `/`
/// line. Nothing runs, the session is not renamed, and the model gets the whole file as one
/// prompt in one request; stdout holds the answer only.
#[tokio::test(flavor = "multi_thread")]
async fn a_piped_file_is_one_prompt_and_none_of_its_lines_runs() {
    let server = server(None).await;
    let run = Run::new();
    let notes = "Please review these notes:\nstep one is fine\n!touch PWNED_BY_PIPE\n\
                 /name renamed-by-pipe\n";
    let output = print_chat(&run, &server, &[], notes);
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert_eq!(output.matches("all good").count(), 1, "{output}");
    assert!(!project(&run).join("PWNED_BY_PIPE").exists(), "{output}");
    assert!(!output.contains("renamed-by-pipe\u{201d}"), "{output}");
    assert_eq!(
        user_texts(&server).await,
        vec![vec![notes.trim().to_owned()]]
    );
    let sessions = run.ctxkit(&["sessions", "--all"]);
    assert!(!sessions.contains("renamed-by-pipe"), "{sessions}");
}

/// `git diff | pi -p "review this"`: the piped input goes before the message, trimmed, a blank line
/// between them (Pi joins them with nothing between: `…+new linereview this`).
#[tokio::test(flavor = "multi_thread")]
async fn print_mode_puts_the_piped_input_before_the_message() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(
        &run,
        &server,
        &["--no-session", "-p", "review this"],
        "\n-old line\n+new line\n\n",
    );
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert_eq!(
        user_texts(&server).await,
        vec![vec!["-old line\n+new line\n\nreview this".to_owned()]]
    );
}

/// QA r105: a piped `.env` went out with its keys while the same file as `@.env` was redacted. The
/// piped text goes through the same redaction (the keys ctxkit knows, as in a tool's output).
#[tokio::test(flavor = "multi_thread")]
async fn piped_input_is_redacted_as_an_attached_file_is() {
    let server = server(None).await;
    let run = Run::new();
    let env = format!("OPENAI_API_KEY={OPENAI_KEY}\nPORT=8080\n");
    let output = print_chat(&run, &server, &["-p", "why does it fail"], &env);
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let sent = user_texts(&server).await.concat().join("\n");
    assert!(!sent.contains(OPENAI_KEY), "{sent}");
    assert!(sent.contains("PORT=8080"), "{sent}");
    assert!(sent.contains("why does it fail"), "{sent}");
}

/// Message arguments without a pipe: the first is the first prompt, each further one a prompt
/// of its own after it; the final answer is printed. An `@file` argument attaches the file.
#[tokio::test(flavor = "multi_thread")]
async fn message_arguments_are_prompts_and_an_at_file_is_attached() {
    let server = server(None).await;
    let run = Run::new();
    std::fs::write(project(&run).join("notes.md"), "the notes\n").unwrap();
    let output = print_chat(
        &run,
        &server,
        &["--no-session", "@notes.md", "first", "/name second"],
        "",
    );
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let texts = user_texts(&server).await;
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert_eq!(
        texts[0],
        vec!["<file name=\"notes.md\">\nthe notes\n</file>\nfirst".to_owned()]
    );
    assert_eq!(texts[1].last().unwrap(), "/name second");
}

/// Print mode asks nobody: a `bash` call does not run unless `--yes` lets it, and the model is
/// told why; with `--yes` it runs.
#[tokio::test(flavor = "multi_thread")]
async fn print_mode_refuses_a_bash_call_without_yes() {
    let run = Run::new();
    let marker = project(&run).join("RAN");
    let command = format!("touch {}", marker.display());
    let server = server(Some(&command)).await;
    let output = print_chat(&run, &server, &["--no-session", "-p", "make files"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(output.contains("--- stderr\n"), "{output}");
    assert!(output.contains("nobody can be asked"), "{output}");
    assert!(!marker.exists(), "{output}");
    let requests = server.received_requests().await.unwrap();
    let second = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert!(second.contains("nobody can be asked"), "{second}");

    let server = self::server(Some(&command)).await;
    let output = print_chat(&run, &server, &["--no-session", "-y", "make files"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    assert!(marker.exists(), "{output}");
}

/// Print mode with no piped input and no message is a usage error, before anything starts;
/// `--script` keeps reading the input as typed lines.
#[tokio::test(flavor = "multi_thread")]
async fn print_mode_with_nothing_to_send_says_how_to_give_a_prompt() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(&run, &server, &["--no-session"], "  \n");
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(output.contains("Nothing to send"), "{output}");
    assert!(output.contains("--script"), "{output}");
    assert!(server.received_requests().await.unwrap().is_empty());

    let marker = project(&run).join("SCRIPTED");
    let input = format!("!touch {}\n", marker.display());
    let output = print_chat(&run, &server, &["--no-session", "--script"], &input);
    assert!(output.starts_with("exit: 0\n"), "{output}");
    assert!(marker.exists(), "{output}");
}

/// QA r105 (6): `-p --model` with a mistyped id said nothing (the warning lives in the banner,
/// which print mode drops): the typo was sent and compaction silently off. The warning is on
/// stderr now, naming the nearest known model, with a hint print mode can follow.
#[tokio::test(flavor = "multi_thread")]
async fn print_mode_warns_of_a_mistyped_model() {
    let server = server(None).await;
    let run = Run::new();
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let args = [
        "chat",
        "--model",
        "openai/gpt-5-mnii",
        "--no-session",
        "-p",
        "hello",
    ];
    let output =
        tokio::task::block_in_place(|| run.ctxkit_piped_in(&project(&run), &args, &variables, ""));
    let (stdout, stderr) = output.split_once("--- stderr\n").unwrap();
    assert_eq!(stdout, "exit: 0\nall good\n", "{output}");
    assert!(
        stderr.starts_with(
            "warning: `openai/gpt-5-mnii` is no known model (did you mean `openai/gpt-5-mini`"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: `--model` takes a known one"),
        "{stderr}"
    );
    assert!(!stderr.contains("/model"), "{stderr}");
}

/// QA r105 (7): a failed request was reported twice on stderr in print mode (the reply's
/// `Error:` line and its hint, then `error: The chat's last model request failed:` and the same
/// hint). Said once now; still exit 7.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_request_is_reported_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": "Incorrect API key provided", "type": "invalid_request_error",
            "code": "invalid_api_key"}})))
        .mount(&server)
        .await;
    let run = Run::new();
    let output = print_chat(&run, &server, &["--no-session", "-p", "hi"], "");
    assert!(output.starts_with("exit: 7\n--- stderr\n"), "{output}");
    assert_eq!(output.matches("returned HTTP 401").count(), 1, "{output}");
    assert_eq!(output.matches("hint:").count(), 1, "{output}");
    assert!(
        output.contains("hint: the provider refused the credentials"),
        "{output}"
    );
}

/// QA (r105 long workday): print mode started a summary in the background past
/// `backgroundPercent` of the threshold, and the run ended before any compaction took it: the
/// summary request was paid for and thrown away. Print mode writes no summary ahead; the
/// compaction at the threshold still runs.
#[tokio::test(flavor = "multi_thread")]
async fn print_mode_writes_no_summary_in_the_background() {
    let server = MockServer::start().await;
    let bash = |command: &str, input_tokens: u64| {
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_0", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                        "name": "bash", "status": "completed",
                        "arguments": json!({"command": command}).to_string()}],
            "usage": {"input_tokens": input_tokens, "output_tokens": 8,
                      "total_tokens": input_tokens + 8}}))
    };
    // Two long prompts: the second is what the compaction would keep, the first what it would
    // summarize. The third run's first reply counts past 90% of the default 60,000-token
    // threshold, under the threshold, and its tool takes a while.
    let replies = [
        answered("noted"),
        answered("noted again"),
        bash("sleep 2", 56_000),
        answered("all good"),
    ];
    answer_in_order(&server, replies).await;
    let run = Run::new();
    let long = "a line of notes to keep in mind\n".repeat(2_000);
    let first = print_chat(&run, &server, &["-p", "read these"], &long);
    assert!(first.starts_with("exit: 0\nnoted"), "{first}");
    let second = print_chat(&run, &server, &["-p", "-c", "and these"], &long);
    assert!(second.starts_with("exit: 0\nnoted again"), "{second}");
    let third = print_chat(&run, &server, &["-p", "--yes", "-c", "wait a little"], "");
    assert!(third.starts_with("exit: 0\nall good"), "{third}");
    // One request for each answer and one for the call: no summary between.
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 4, "{third}");
}

/// QA (r107 i18n repro): a print-mode run that compacted hung for good: the compaction's notice,
/// said from the event task, waited for stdout's lock, which the thread running the chat holds.
/// It finishes, and the notice is on stderr.
#[tokio::test(flavor = "multi_thread")]
async fn print_mode_finishes_after_a_compaction() {
    let server = MockServer::start().await;
    let counted = |text: &str, input_tokens: u64| {
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": {"input_tokens": input_tokens, "output_tokens": 2,
                      "total_tokens": input_tokens + 2}}))
    };
    // The second reply counts past the default 60,000-token threshold: the run compacts after
    // it (the summary is the third request).
    let replies = [
        counted("noted", 13_000),
        counted("noted again", 70_000),
        counted("## Goal\nSUMMARY-OF-EARLIER", 500),
    ];
    answer_in_order(&server, replies).await;
    let run = Run::new();
    let long = "a line of notes to keep in mind\n".repeat(1_600);
    let first = print_chat(&run, &server, &["-p", "read these"], &long);
    assert!(first.starts_with("exit: 0\nnoted"), "{first}");
    let second = print_chat(&run, &server, &["-p", "-c", "and these"], &long);
    assert!(second.starts_with("exit: 0\nnoted again"), "{second}");
    let (_, stderr) = second.split_once("--- stderr\n").unwrap_or(("", ""));
    assert!(stderr.contains("Compacted"), "{second}");
}

/// Mounts `replies` on `server`'s Responses API, one per request in order, the last for every
/// request after them.
async fn answer_in_order<const N: usize>(server: &MockServer, replies: [ResponseTemplate; N]) {
    let served = std::sync::atomic::AtomicUsize::new(0);
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(move |_: &wiremock::Request| {
            let index = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            replies[index.min(N - 1)].clone()
        })
        .mount(server)
        .await;
}

/// QA 2026-12-07: `retry.provider.maxRetries` was accepted (`config list` said it was acted on)
/// and never read: with `retry.maxRetries: 0` a 500 failed at once where Pi's client retries it.
/// Its retries add to the one retry loop, also with `retry.enabled: false`.
#[tokio::test(flavor = "multi_thread")]
async fn the_provider_clients_retries_are_made() {
    for retry in [
        json!({"maxRetries": 0, "baseDelayMs": 1, "provider": {"maxRetries": 2}}),
        json!({"enabled": false, "baseDelayMs": 1, "provider": {"maxRetries": 2}}),
    ] {
        let server = MockServer::start().await;
        let busy = ResponseTemplate::new(500)
            .set_body_json(json!({"error": {"message": "busy", "type": "server_error"}}));
        answer_in_order(&server, [busy.clone(), busy, answered("third time")]).await;
        let run = Run::new();
        std::fs::write(
            run.home.path().join("settings.json"),
            json!({"retry": retry}).to_string(),
        )
        .unwrap();
        let output = print_chat(&run, &server, &["--no-session", "-p", "hi"], "");
        assert!(
            output.starts_with("exit: 0\nthird time"),
            "{retry}: {output}"
        );
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            3,
            "{retry}"
        );
    }
}

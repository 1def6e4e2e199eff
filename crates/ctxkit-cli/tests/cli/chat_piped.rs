//! `ctxkit chat` fed from a pipe (provider QA F11, F12): a failed request reads as the provider's
//! message with what to check, the exit status says whether the last request failed (7, as
//! `ctxkit --help` lists), and tool calls of a reply cut at the output limit show as not run.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

const OPENAI_KEY: &str = "sk-oai-test-SECRET456";

fn refused() -> ResponseTemplate {
    ResponseTemplate::new(401).set_body_json(json!({"error": {
        "message": format!("Incorrect API key provided: {OPENAI_KEY}."),
        "type": "invalid_request_error", "code": "invalid_api_key"}}))
}

fn answered() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "all good", "annotations": []}]}],
        "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}}))
}

/// `ctxkit chat --no-session --model openai/gpt-5-mini` against `server`, `input` piped in.
fn piped_chat(run: &Run, server: &MockServer, input: &str, extra: &[&str]) -> String {
    let mut args = vec!["--no-session"];
    args.extend_from_slice(extra);
    chat_with(run, server, input, &args)
}

/// `ctxkit chat --model openai/gpt-5-mini ARGS` against `server`, `input` piped in.
fn chat_with(run: &Run, server: &MockServer, input: &str, args: &[&str]) -> String {
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let mut all = vec!["chat", "--model", "openai/gpt-5-mini"];
    all.extend_from_slice(args);
    tokio::task::block_in_place(|| run.ctxkit_with_input(&all, &variables, input))
}

/// A Responses API that answers every request with `response`.
async fn responses_server(response: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(response)
        .mount(&server)
        .await;
    server
}

/// A Responses API that refuses the first request and answers every later one.
async fn refused_once_then_answered() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(refused())
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(answered())
        .mount(&server)
        .await;
    server
}

#[tokio::test(flavor = "multi_thread")]
async fn a_piped_chat_whose_last_request_failed_exits_7_and_says_why() {
    let server = responses_server(refused()).await;
    let run = Run::new();
    let output = piped_chat(&run, &server, "hi\n", &[]);
    assert!(output.starts_with("exit: 7"), "{output}");
    // On the screen: the provider's message and what to check, not a status and a JSON body.
    assert!(
        output.contains("Error: Provider `openai` returned HTTP 401: Incorrect API key provided"),
        "{output}"
    );
    assert!(!output.contains("invalid_request_error"), "{output}");
    // On stderr, for a script: the same failure, the exit status's reason.
    assert!(
        output.contains(
            "error: The chat's last model request failed: Provider `openai` returned HTTP 401"
        ),
        "{output}"
    );
    assert!(
        output.contains("hint: the provider refused the credentials: check `OPENAI_API_KEY`"),
        "{output}"
    );
    assert!(!output.contains(OPENAI_KEY), "{output}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_piped_chat_whose_last_request_succeeded_exits_0() {
    let server = refused_once_then_answered().await;
    let run = Run::new();
    let output = piped_chat(&run, &server, "first\nsecond\n", &[]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("Error: Provider `openai` returned HTTP 401"),
        "{output}"
    );
    assert!(output.contains("all good"), "{output}");
}

/// QA (r105): under `--script` the provider's error and an unknown command's were printed on
/// stdout, mixed with the replies a script reads; they go to stderr, the replies stay on stdout.
#[tokio::test(flavor = "multi_thread")]
async fn a_scripts_errors_go_to_stderr_and_its_replies_to_stdout() {
    let server = refused_once_then_answered().await;
    let run = Run::new();
    let output = piped_chat(&run, &server, "first\n/nonexistent-cmd\nsecond\n", &[]);
    let (stdout, stderr) = output
        .split_once("--- stderr\n")
        .unwrap_or((output.as_str(), ""));
    assert!(stdout.contains("all good"), "{output}");
    for error in [
        "Error: Provider `openai` returned HTTP 401",
        "Unknown command `/nonexistent-cmd`",
    ] {
        assert!(stderr.contains(error), "{output}");
        assert!(!stdout.contains(error), "{output}");
    }
}

/// The reply stops on the output limit inside its tool calls: nothing runs, and the screen says
/// so instead of listing the calls as if they ran.
#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_of_a_reply_cut_at_the_output_limit_show_as_not_run() {
    let server = MockServer::start().await;
    let run = Run::new();
    let marker = run.home.path().join("FIRST");
    let command = format!("touch {}", marker.display());
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "incomplete", "model": "gpt-5-mini",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                        "name": "bash", "status": "completed",
                        "arguments": json!({"command": command}).to_string()}],
            "usage": {"input_tokens": 9, "output_tokens": 8192, "total_tokens": 8201}})))
        .mount(&server)
        .await;
    let output = piped_chat(&run, &server, "make files\n", &["--yes"]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(output.contains("→ bash touch"), "{output}");
    assert!(output.contains("(not run)"), "{output}");
    assert!(
        output.contains("before its tool calls were complete: none was run"),
        "{output}"
    );
    assert!(!marker.exists(), "the cut call ran: {output}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

/// The chat gave the model the project's AGENTS.md (and CLAUDE.md) without a word to the user:
/// the banner names the instruction files the model is given.
#[tokio::test(flavor = "multi_thread")]
async fn the_banner_names_the_instruction_files_the_model_is_given() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(run.home.path().join("AGENTS.md"), "Answer in French.\n").unwrap();
    let output = piped_chat(&run, &server, "hi\n", &[]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(output.contains("Instructions from AGENTS.md\n"), "{output}");
    std::fs::remove_file(run.home.path().join("AGENTS.md")).unwrap();
    let output = piped_chat(&run, &server, "hi\n", &[]);
    assert!(!output.contains("Instructions from"), "{output}");
}

/// QA: `quietStartup` (Pi's "hide all startup output") changed nothing: the chat still printed
/// its banner, and the line naming AGENTS.md. With it, the chat starts with the conversation.
#[tokio::test(flavor = "multi_thread")]
async fn quiet_startup_hides_the_banner() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(run.home.path().join("AGENTS.md"), "Answer in French.\n").unwrap();
    let output = piped_chat(&run, &server, "hi\n", &[]);
    assert!(
        output.contains("ctxkit chat · openai/gpt-5-mini"),
        "{output}"
    );
    assert!(output.contains("Instructions from AGENTS.md"), "{output}");
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"quietStartup": true}"#,
    )
    .unwrap();
    let output = piped_chat(&run, &server, "hi\n", &[]);
    assert!(output.starts_with("exit: 0"), "{output}");
    for banner in [
        "ctxkit chat ·",
        "Session:",
        "Instructions from",
        "/help lists commands",
    ] {
        assert!(!output.contains(banner), "{banner}: {output}");
    }
    assert!(output.contains("all good"), "{output}");
    // Pi's `--verbose` shows the whole banner whatever the setting says.
    let output = piped_chat(&run, &server, "hi\n", &["--verbose"]);
    for banner in ["ctxkit chat ·", "Session:", "Instructions from AGENTS.md"] {
        assert!(output.contains(banner), "{banner}: {output}");
    }
}

/// QA r98: Pi 1.6's `quietStartup: "header"` (keep the header, hide the loaded resources)
/// stopped the chat with exit 3 ("expected a boolean"). The header stays; the line naming the
/// instruction files goes.
#[tokio::test(flavor = "multi_thread")]
async fn quiet_startup_header_keeps_the_header_only() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(run.home.path().join("AGENTS.md"), "Answer in French.\n").unwrap();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"quietStartup": "header"}"#,
    )
    .unwrap();
    let output = piped_chat(&run, &server, "hi\n", &[]);
    assert!(output.starts_with("exit: 0"), "{output}");
    for kept in [
        "ctxkit chat · openai/gpt-5-mini",
        "Session:",
        "/help lists commands",
        "all good",
    ] {
        assert!(output.contains(kept), "{kept}: {output}");
    }
    assert!(!output.contains("Instructions from"), "{output}");
    assert!(!output.contains("warning"), "{output}");
}

/// Loose end: `ctxkit chat` said nothing of an unknown key (`config list` warned of it) and ran
/// with the default of a wrong-typed value outside a few sections (`retry.enabled: "yes"`). An
/// unknown key is one warning line, once however many turns run, with the key it most likely
/// meant; Pi's own keys ctxkit does not read are not warned of.
#[tokio::test(flavor = "multi_thread")]
async fn a_piped_chat_warns_once_of_an_unknown_key_and_not_of_pis() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        "{\n  \"compacton\": {},\n  \"tuiMode\": \"fullscreen\",\n  \"terminal\": {\"hyperlinks\": true}\n}\n",
    )
    .unwrap();
    let output = piped_chat(&run, &server, "hi\nagain\nthird\n", &[]);
    assert!(output.starts_with("exit: 0"), "{output}");
    assert_eq!(output.matches("all good").count(), 3, "{output}");
    let warning = "warning: Unknown setting `compacton` in `[HOME]/settings.json` at line 2 \
                   (kept as is); did you mean `compaction`?";
    assert_eq!(output.matches(warning).count(), 1, "{output}");
    assert!(!output.contains("tuiMode"), "{output}");
    assert!(!output.contains("hyperlinks"), "{output}");
}

/// A wrong-typed value of any key stops `chat` and `compact` before anything runs: one error line
/// naming the file, the line and the key, and a hint; the user's and the project's file alike.
#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_typed_value_of_any_key_stops_chat_and_compact() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let session = run.copy("good-branches.jsonl");
    // The project is the folder `ctxkit` runs in, the home here.
    let project = run.home.path().to_path_buf();
    for (file, contents, key) in [
        (
            run.home.path().join("settings.json"),
            "{\n  \"retry\": {\n    \"enabled\": \"yes\"\n  }\n}\n",
            "retry.enabled",
        ),
        (
            // A key an untrusted project may set (one that waits for trust is not read yet).
            project.join(".ctxkit/settings.json"),
            "{\n  \"treeFilterMode\": 1\n}\n",
            "treeFilterMode",
        ),
    ] {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, contents).unwrap();
        let line = if key == "retry.enabled" { 3 } else { 2 };
        let chat = tokio::task::block_in_place(|| {
            run.ctxkit_with_input(
                &["chat", "--no-session", "--model", "openai/gpt-5-mini"],
                &[("OPENAI_API_KEY", OPENAI_KEY)],
                "hi\n",
            )
        });
        let compact = run.ctxkit(&["compact", session.to_str().unwrap()]);
        for output in [chat, compact] {
            assert!(!output.starts_with("exit: 0"), "{output}");
            let stderr = output.split_once("--- stderr\n").unwrap().1;
            let lines: Vec<&str> = stderr.lines().collect();
            assert_eq!(lines.len(), 2, "{output}");
            assert!(
                lines[0].starts_with(&format!("error: Invalid value for `{key}` in `"))
                    && lines[0].contains(&format!("settings.json` at line {line}: ")),
                "{output}"
            );
            assert!(lines[1].starts_with("hint: "), "{output}");
        }
        std::fs::remove_file(&file).unwrap();
    }
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// QA r99: values Pi 1.6 runs with stopped the chat (exit 3): whole numbers written as floats,
/// and out-of-range values of keys ctxkit does not act on (Pi clamps them). The first are read
/// as the integers they are, the others only warned about.
#[tokio::test(flavor = "multi_thread")]
async fn values_pi_runs_with_do_not_stop_the_chat() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"compaction": {"reserveTokens": 16384.0}, "thinkingBudgets": {"low": 2048.0},
            "retry": {"maxRetries": 3.0}, "editorPaddingX": 5, "autocompleteMaxVisible": 30,
            "terminal": {"imageWidthCells": 0}}"#,
    )
    .unwrap();
    let base = format!("{}/v1", server.uri());
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_with_input(
            &["chat", "--no-session", "--model", "openai/gpt-5-mini"],
            &[("OPENAI_API_KEY", OPENAI_KEY), ("OPENAI_BASE_URL", &base)],
            "hi\n",
        )
    });
    assert!(output.starts_with("exit: 0"), "{output}");
    let stderr = output
        .split_once("--- stderr\n")
        .map_or("", |(_, stderr)| stderr);
    for key in [
        "editorPaddingX",
        "autocompleteMaxVisible",
        "terminal.imageWidthCells",
    ] {
        assert!(
            stderr.contains(&format!("warning: Ignored value for `{key}` in `")),
            "{output}"
        );
    }
    assert!(!stderr.contains("reserveTokens"), "{output}");
    assert!(!server.received_requests().await.unwrap().is_empty());
}

/// QA r98: with two wrong values the chat named the first; fixed, it stopped again on the second.
/// The one error line names every wrong value, the first in full.
#[tokio::test(flavor = "multi_thread")]
async fn every_wrong_value_is_named_at_once() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        "{\n  \"retry\": {\"enabled\": \"yes\"},\n  \"images\": {\"blockImages\": 1},\n  \"hideThinkingBlock\": \"no\"\n}\n",
    )
    .unwrap();
    let output = tokio::task::block_in_place(|| {
        run.ctxkit_with_input(
            &["chat", "--no-session", "--model", "openai/gpt-5-mini"],
            &[("OPENAI_API_KEY", OPENAI_KEY)],
            "hi\n",
        )
    });
    assert!(output.starts_with("exit: 3"), "{output}");
    let stderr = output.split_once("--- stderr\n").unwrap().1;
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{output}");
    assert!(
        lines[0].starts_with("error: Invalid value for `retry.enabled` in `")
            && lines[0].contains("; also invalid: `images.blockImages` in `")
            && lines[0].contains("settings.json` at line 3, `hideThinkingBlock` in `")
            && lines[0].ends_with("settings.json` at line 4"),
        "{output}"
    );
    assert!(
        lines[1].starts_with("hint: `ctxkit config list`"),
        "{output}"
    );
    assert!(server.received_requests().await.unwrap().is_empty());
}

/// Loose end: `chat --resume` announced a new session (its banner) before the list and the
/// question that replaced it, so a piped run read as two chats. The list comes first, then the
/// banner of the session chosen, each on lines of its own.
#[tokio::test(flavor = "multi_thread")]
async fn chat_resume_lists_before_any_banner() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let chat = |args: &[&str], input: &str| {
        let mut all = vec!["chat", "--model", "openai/gpt-5-mini"];
        all.extend_from_slice(args);
        tokio::task::block_in_place(|| run.ctxkit_with_input(&all, &variables, input))
    };
    let first = chat(&[], "first question\n/quit\n");
    assert!(first.starts_with("exit: 0"), "{first}");
    let resumed = chat(&["--resume"], "1\n/quit\n");
    assert!(resumed.starts_with("exit: 0"), "{resumed}");
    let lines: Vec<&str> = resumed.lines().collect();
    assert!(
        lines[1].starts_with("  1. ") && lines[1].ends_with("first question"),
        "{resumed}"
    );
    assert!(
        lines[2].starts_with("ctxkit chat · openai/gpt-5-mini"),
        "{resumed}"
    );
    assert!(lines[3].starts_with("Continuing session"), "{resumed}");
    assert_eq!(resumed.matches("ctxkit chat · ").count(), 1, "{resumed}");
    // Nothing chosen: the new session's banner, after the list.
    let stayed = chat(&["--resume"], "\n/quit\n");
    let lines: Vec<&str> = stayed.lines().collect();
    assert!(lines[1].starts_with("  1. "), "{stayed}");
    assert_eq!(stayed.matches("ctxkit chat · ").count(), 1, "{stayed}");
    assert!(!stayed.contains("Continuing session"), "{stayed}");
    // QA (2026-12-05): a prompt where the number was expected was taken as a wrong number, the
    // next line read as the answer, and the chat went on without the prompt, exit 0. It fails.
    let wrong = chat(&["--resume"], "what now?\n");
    assert!(!wrong.starts_with("exit: 0"), "{wrong}");
    assert!(wrong.contains("No session number `what now?`"), "{wrong}");
    assert!(!wrong.contains("ctxkit chat · "), "{wrong}");
}

/// `!cmd` runs in bash after the user's `shellCommandPrefix`; an untrusted project's `shellPath`
/// runs nothing (it is held back as every setting that runs code).
#[tokio::test(flavor = "multi_thread")]
async fn the_users_shell_settings_apply_to_commands_and_an_untrusted_projects_do_not() {
    use std::os::unix::fs::PermissionsExt;
    let server = responses_server(answered()).await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        json!({"shellCommandPrefix": "greet() { echo \"hi $1\"; }"}).to_string(),
    )
    .unwrap();
    let marker = run.home.path().join("project-shell-ran");
    let script = run.home.path().join("project-shell");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let project_settings = run.home.path().join(".ctxkit/settings.json");
    std::fs::create_dir_all(project_settings.parent().unwrap()).unwrap();
    std::fs::write(&project_settings, json!({"shellPath": script}).to_string()).unwrap();
    let output = piped_chat(
        &run,
        &server,
        "!!greet you; [[ -n $BASH_VERSION ]] && echo in-bash\n",
        &[],
    );
    assert!(output.contains("hi you"), "{output}");
    assert!(output.contains("in-bash"), "{output}");
    assert!(!marker.exists(), "{output}");
}

/// `shellPath` with a leading `~` names a shell in the user's home, as Pi's `normalizePath`
/// reads it (QA 2026-12-06: `~/bin/mysh` was taken literally and every command failed).
#[tokio::test(flavor = "multi_thread")]
async fn a_shell_path_under_the_users_home_is_found() {
    use std::os::unix::fs::PermissionsExt;
    let server = responses_server(answered()).await;
    let run = Run::new();
    let user_home = tempfile::tempdir().unwrap();
    let shell = user_home.path().join("bin/mysh");
    std::fs::create_dir_all(shell.parent().unwrap()).unwrap();
    std::fs::write(&shell, "#!/bin/sh\necho MYSH-RAN\nexec /bin/sh \"$@\"\n").unwrap();
    std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        run.home.path().join("settings.json"),
        json!({"shellPath": "~/bin/mysh"}).to_string(),
    )
    .unwrap();
    let home = user_home.path().display().to_string();
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", OPENAI_KEY),
        ("OPENAI_BASE_URL", base.as_str()),
        ("HOME", home.as_str()),
    ];
    let args = ["chat", "--model", "openai/gpt-5-mini", "--no-session"];
    let output =
        tokio::task::block_in_place(|| run.ctxkit_with_input(&args, &variables, "!!echo ran\n"));
    assert!(output.contains("MYSH-RAN"), "{output}");
    assert!(output.contains("ran"), "{output}");
    assert!(!output.contains("does not exist"), "{output}");
}

/// Found by a chat sweep: a piped chat read the answer to `bash`'s question from its input, so
/// the next prompt was the answer (one starting with `y` approved the command) and was lost. No
/// one can be asked: the call does not run, the chat says why, and the next prompt is sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_piped_chat_asks_nothing_of_its_prompts_and_runs_nothing_that_needs_asking() {
    let run = Run::new();
    let marker = run.home.path().join("APPROVED");
    let command = format!("touch {}", marker.display());
    let server = crate::chat_print::server(Some(&command)).await;
    let output = piped_chat(
        &run,
        &server,
        "make files\nyesterday the build broke: why?\n",
        &[],
    );
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(!marker.exists(), "approved by the next prompt: {output}");
    assert!(
        output.contains("Not run: the chat's input is not a terminal"),
        "{output}"
    );
    // Said once: the call's result (written for the model) is not shown again (QA, defect list
    // of the protocol tester: "Not run" twice in a row).
    assert_eq!(output.matches("Not run").count(), 1, "{output}");
    let requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 3, "{output}");
    // The model is told nobody could be asked, not that the user said no (QA, 2026-12-05).
    let second = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert!(second.contains("nobody can be asked"), "{second}");
    assert!(!second.contains("The user declined"), "{second}");
    let last = String::from_utf8_lossy(&requests[2].body).into_owned();
    assert!(last.contains("yesterday the build broke: why?"), "{last}");
}

/// Sweep 9: `--continue` with no earlier session in the folder started a new one silently. It
/// says so; the next `--continue` continues that one, without the note.
#[tokio::test(flavor = "multi_thread")]
async fn continue_with_nothing_to_continue_says_it_starts_a_new_session() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let chat = |input: &str| chat_with(&run, &server, input, &["--continue"]);
    let first = chat("hi\n");
    assert!(
        first.starts_with("exit: 0")
            && first.contains("No earlier session in this folder to continue: starting a new one"),
        "{first}"
    );
    let second = chat("again\n");
    assert!(
        second.starts_with("exit: 0") && !second.contains("No earlier session"),
        "{second}"
    );
}

/// `--session` takes a session id or its start from the sessions folder, as Pi's does and as
/// `simulate` does (a tester's `--session 01a2472d` failed: only a file was read); an id no
/// session has exits 4.
#[tokio::test(flavor = "multi_thread")]
async fn session_takes_the_start_of_a_session_id() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let first = chat_with(&run, &server, "hi\n", &[]);
    assert!(first.starts_with("exit: 0"), "{first}");
    let folder = std::fs::read_dir(run.home.path().join("sessions"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    // The folder holds the session and `.ctxkit-last-used`, in no set order.
    let file = std::fs::read_dir(folder)
        .unwrap()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.extension()
                .is_some_and(|extension| extension == "jsonl")
        })
        .unwrap();
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let start = &header["id"].as_str().unwrap()[..13];
    let lines_before = std::fs::read_to_string(&file).unwrap().lines().count();
    let again = chat_with(&run, &server, "again\n", &["--session", start]);
    assert!(again.starts_with("exit: 0"), "{again}");
    let lines_after = std::fs::read_to_string(&file).unwrap().lines().count();
    assert!(lines_after > lines_before, "{again}");
    let missing = chat_with(&run, &server, "x\n", &["--session", "ffffffff"]);
    assert!(missing.starts_with("exit: 4"), "{missing}");
}

/// `--session-dir .` (the project itself) is refused: its session files would lie among the files
/// the model's tools read, this chat's and every later one's (the verifier, 2026-12-07).
#[tokio::test(flavor = "multi_thread")]
async fn a_session_dir_that_is_the_project_is_refused() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    for folder in [".", "./", "sub/.."] {
        std::fs::create_dir_all(run.home.path().join("sub")).unwrap();
        let output = chat_with(&run, &server, "hi\n", &["--session-dir", folder]);
        assert!(output.starts_with("exit: 2"), "{folder}: {output}");
        assert!(output.contains("is the project itself"), "{output}");
    }
    let inside = chat_with(&run, &server, "hi\n", &["--session-dir", ".sessions"]);
    assert!(inside.starts_with("exit: 0"), "{inside}");
}

/// A chat going on in a damaged session says so before it appends (QA 2026-12-07: nothing was
/// said, and the model went on without the lines that cannot be read).
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_in_a_damaged_session_says_so() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let file = run.home.path().join("damaged.jsonl");
    let lines = [
        r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
        r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"first","timestamp":1}}"#,
        r#"{"type":"message", bad json"#,
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let output = chat_with(
        &run,
        &server,
        "hi\n",
        &["--session", file.to_str().unwrap()],
    );
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("is damaged (line 3")
            && output.contains("going on from what could be read"),
        "{output}"
    );
}

/// `--session` naming a file that is not there starts a new session written there, as Pi's does
/// (a tester's `--session /new/path.jsonl` was refused); the folders missing on the way are
/// created, as Pi 1.6.0 creates them (they were refused); a path through a file is refused.
#[tokio::test(flavor = "multi_thread")]
async fn session_naming_a_new_file_writes_the_session_there() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let file = run.home.path().join("fresh.jsonl");
    let output = chat_with(
        &run,
        &server,
        "hi\n",
        &["--session", file.to_str().unwrap()],
    );
    assert!(output.starts_with("exit: 0"), "{output}");
    let text = std::fs::read_to_string(&file).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["type"], "session");
    assert!(text.contains("all good"), "{text}");
    // Relative to the working folder, two folders deep.
    let made = chat_with(&run, &server, "hi\n", &["--session", "sub/dir/new.jsonl"]);
    assert!(made.starts_with("exit: 0"), "{made}");
    let nested = run.home.path().join("sub/dir/new.jsonl");
    assert!(
        std::fs::read_to_string(&nested)
            .unwrap()
            .contains("all good"),
        "{made}"
    );
    let through_a_file = file.join("x.jsonl");
    let refused = chat_with(
        &run,
        &server,
        "hi\n",
        &["--session", through_a_file.to_str().unwrap()],
    );
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert!(refused.contains("is not a folder"), "{refused}");
}

/// A piped chat whose session file cannot be written (its sessions folder is a file) fails with
/// exit 4, as `ctxkit --help` lists for a file that cannot be written: before, the error showed
/// and the chat exited 0, the prompt lost.
#[tokio::test(flavor = "multi_thread")]
async fn a_piped_chat_whose_session_cannot_be_written_exits_4() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let project = std::fs::canonicalize(run.home.path()).unwrap();
    let folder = ctxkit_session::encode_cwd(&project.display().to_string());
    let sessions = run.home.path().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join(&folder), "not a folder").unwrap();
    let output = chat_with(&run, &server, "hi\n", &[]);
    assert!(output.starts_with("exit: 4"), "{output}");
    let last = output
        .lines()
        .rev()
        .find(|line| line.starts_with("error: "));
    assert!(
        last.is_some_and(|line| line.contains("cannot create `")),
        "{output}"
    );
}

/// A tester's report: `ctxkit chat --session old.jsonl` rewrote a v1 file as v3 without a word,
/// where every writing command says it does (pi-compatibility.md, divergence 13).
#[tokio::test(flavor = "multi_thread")]
async fn a_chat_on_an_older_format_says_its_first_write_rewrites_it() {
    let server = responses_server(answered()).await;
    let run = Run::new();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/corpus/legacy-v1-version1.jsonl");
    let file = run.home.path().join("old.jsonl");
    std::fs::copy(corpus, &file).unwrap();
    let output = chat_with(
        &run,
        &server,
        "hi\n",
        &["--session", file.to_str().unwrap()],
    );
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains("is in session format v1; the chat's first write rewrites it as v3"),
        "{output}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.lines().next().unwrap().contains("\"version\":3"),
        "{text}"
    );
}

/// QA r101: a misspelt `--model` started the chat with automatic compaction off and no prices,
/// said only in the banner's parenthesis; `/model` refused the same typo. The chat still starts
/// (the provider may take an id the table lacks), warning with the known ids near it.
#[tokio::test(flavor = "multi_thread")]
async fn a_misspelt_model_is_named_with_the_known_ones_near_it() {
    let run = Run::new();
    let chat = |model: &str| {
        tokio::task::block_in_place(|| {
            run.ctxkit_with_input(
                &["chat", "--no-session", "--model", model],
                &[("OPENAI_API_KEY", OPENAI_KEY)],
                "",
            )
        })
    };
    let output = chat("openai/gpt-5-mnii");
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(
        output.contains(
            "warning: `openai/gpt-5-mnii` is no known model (did you mean `openai/gpt-5-mini`"
        ) && output.contains("automatic compaction is off"),
        "{output}"
    );
    assert!(!chat("openai/gpt-5-mini").contains("is no known model"));
    // An id far from every known one is sent as a custom id, said without a guess (QA r104: it
    // was silent).
    let far = chat("openai/my-finetune-2027");
    assert!(
        far.contains(
            "warning: `openai/my-finetune-2027` is no known model: it is sent to the provider as a \
             custom id"
        ),
        "{far}"
    );
    // A local server's model is no typo: the warning says how to state its window (QA: the
    // README's `ollama/…` example was told "`--model` takes a known one").
    let local = chat("ollama/qwen3-coder:30b");
    assert!(
        local
            .contains("warning: `ollama/qwen3-coder:30b` runs with the window its server gives it")
            && local
                .contains(r#"{"provider":"ollama","id":"qwen3-coder:30b","contextWindow":32768}"#)
            && !local.contains("did you mean")
            && !local.contains("takes a known one"),
        "{local}"
    );
}

//! Pi 1.6's command-line flags of `ctxkit chat` that a Pi user's scripts rely on, run in print
//! mode against a mocked Responses API: what the request holds is what each flag asks for.

use serde_json::Value;
use wiremock::MockServer;

use crate::Run;
use crate::chat_print::{print_chat, server};

/// The first request's body.
async fn first_request(server: &MockServer) -> Value {
    let requests = server.received_requests().await.unwrap();
    serde_json::from_slice(&requests.first().expect("one request").body).unwrap()
}

/// The names of the tools the request offers (none when it has no `tools`).
fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// What the request offers under `flags` (and a `defaultTools` setting of `read`, `bash`), and
/// what the chat said.
async fn offered(flags: &[&str]) -> (Vec<String>, String) {
    let server = server(None).await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"defaultTools": ["read", "bash"]}"#,
    )
    .unwrap();
    let mut args = flags.to_vec();
    args.extend(["-p", "hi"]);
    let output = print_chat(&run, &server, &args, "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    (tool_names(&first_request(&server).await), output)
}

/// `ctxkit chat --tools read,grep -p "review"` failed with clap's unknown-argument error. Each
/// tool flag now selects as Pi 1.6's does, over the `defaultTools` setting.
#[tokio::test(flavor = "multi_thread")]
async fn each_tool_flag_selects_what_pi_selects() {
    let cases: [(&[&str], &[&str]); 9] = [
        (&[], &["read", "bash", "recall"]),
        (&["--tools", "read,grep"], &["read", "grep"]),
        (&["-t", "read,recall"], &["read", "recall"]),
        (&["--tools", "+grep,-bash"], &["read", "grep", "recall"]),
        (&["--no-tools"], &[]),
        (&["-nt", "--tools", "ls"], &["ls"]),
        (&["-nbt"], &["recall"]),
        (&["--exclude-tools", "bash"], &["read", "recall"]),
        (
            &["-xt", "rec*", "--tools", "*"],
            &["read", "write", "edit", "bash", "ls", "grep", "find"],
        ),
    ];
    for (flags, expected) in cases {
        let (names, output) = offered(flags).await;
        assert_eq!(names, expected, "{flags:?}: {output}");
    }
}

/// `--no-tools` sends no tools at all, and a name ctxkit has no tool for is said, naming the flag.
#[tokio::test(flavor = "multi_thread")]
async fn no_tools_sends_none_and_unknown_names_are_said() {
    let server = server(None).await;
    let run = Run::new();
    let output = print_chat(&run, &server, &["--no-tools", "-p", "hi"], "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let body = first_request(&server).await;
    assert!(
        body.get("tools")
            .is_none_or(|tools| tools.as_array().is_some_and(Vec::is_empty)),
        "{body}"
    );
    let (names, output) = offered(&["--tools", "read,fetch", "--exclude-tools", "codemode"]).await;
    assert_eq!(names, ["read"]);
    assert!(
        output.contains("warning: `--tools` names `fetch`, which is no tool of ctxkit; skipped"),
        "{output}"
    );
    assert!(
        output.contains("warning: `--exclude-tools` names `codemode`: Pi's tool"),
        "{output}"
    );
}

/// A `--tools` list Pi refuses is a usage error that says why.
#[test]
fn a_mixed_tools_list_is_refused() {
    let run = Run::new();
    let output = run.ctxkit(&["chat", "--tools", "read,+bash", "-p", "hi"]);
    assert!(output.starts_with("exit: 2\n"), "{output}");
    assert!(
        output.contains("tool names cannot be mixed with +name or -name entries"),
        "{output}"
    );
}

/// The request's system prompt (the Responses API's `instructions`).
async fn instructions(server: &MockServer) -> String {
    first_request(server).await["instructions"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `--system-prompt` and `--append-system-prompt` were unknown arguments. Now a value naming a
/// file in the session's folder is read and any other is the text, as Pi's: the base replaces
/// `SYSTEM.md`, the appended parts replace `APPEND_SYSTEM.md`, in order.
#[tokio::test(flavor = "multi_thread")]
async fn the_system_prompt_flags_give_the_request_their_text() {
    let server = server(None).await;
    let run = Run::new();
    std::fs::write(run.home.path().join("SYSTEM.md"), "From SYSTEM.md").unwrap();
    std::fs::write(
        run.home.path().join("APPEND_SYSTEM.md"),
        "From APPEND_SYSTEM.md",
    )
    .unwrap();
    std::fs::write(
        crate::chat_print::project(&run).join("notes.md"),
        "Notes from the file.",
    )
    .unwrap();
    let args = [
        "--system-prompt",
        "You are a terse reviewer.",
        "--append-system-prompt",
        "notes.md",
        "--append-system-prompt",
        "Answer in French.",
        "-p",
        "hi",
    ];
    let output = print_chat(&run, &server, &args, "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let prompt = instructions(&server).await;
    assert!(prompt.starts_with("You are a terse reviewer.\n\n<addendum>\nNotes from the file.\n\nAnswer in French.\n</addendum>"), "{prompt}");
    assert!(!prompt.contains("SYSTEM.md"), "{prompt}");
}

/// `--name` and `--no-context-files` were unknown arguments. Now `--name` names the session as
/// `/name` does (the listing shows it) and `-nc` leaves the instruction files out of the prompt.
#[tokio::test(flavor = "multi_thread")]
async fn name_names_the_session_and_no_context_files_leaves_agents_md_out() {
    let server = server(None).await;
    let run = Run::new();
    let project = crate::chat_print::project(&run);
    std::fs::write(project.join("AGENTS.md"), "Always answer in haiku.").unwrap();
    let args = ["--name", " Refactor auth ", "-nc", "-p", "hi"];
    let output = print_chat(&run, &server, &args, "");
    assert!(output.starts_with("exit: 0\nall good\n"), "{output}");
    let prompt = instructions(&server).await;
    assert!(!prompt.contains("haiku"), "{prompt}");
    let sessions = run.ctxkit(&["sessions", "--all"]);
    assert!(sessions.contains("Refactor auth"), "{sessions}");
    let refused = run.ctxkit(&["chat", "--name", " ", "-p", "hi"]);
    assert!(refused.starts_with("exit: 2\n"), "{refused}");
}

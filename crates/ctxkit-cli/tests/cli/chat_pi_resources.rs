//! What a Pi 1.6 user's files give the chat (QA r98): `defaultTools` selects the tools the model
//! is offered, files saved with a UTF-8 byte-order mark read as without one, and an
//! `AGENTS.override.md` replaces the `AGENTS.md` of its folder.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;

async fn answering_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5-mini",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "all good", "annotations": []}]}],
            "usage": {"input_tokens": 9, "output_tokens": 2, "total_tokens": 11}})))
        .mount(&server)
        .await;
    server
}

/// A piped `ctxkit chat --no-session` against `server`; its output and the first request's body.
async fn chat(run: &Run, server: &MockServer, input: &str) -> (String, Value) {
    let base = format!("{}/v1", server.uri());
    let variables = [
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", base.as_str()),
    ];
    let args = ["chat", "--no-session", "--model", "openai/gpt-5-mini"];
    let output = tokio::task::block_in_place(|| run.ctxkit_with_input(&args, &variables, input));
    let requests = server.received_requests().await.unwrap();
    let body = requests
        .first()
        .map(|request| serde_json::from_slice(&request.body).unwrap())
        .unwrap_or(Value::Null);
    (output, body)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn write(run: &Run, name: &str, bytes: &[u8]) {
    let file = run.home.path().join(name);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, bytes).unwrap();
}

/// Defect 2: a read-only `defaultTools` list was ignored, and the model could still write.
#[tokio::test(flavor = "multi_thread")]
async fn default_tools_selects_the_tools_the_model_is_offered() {
    let server = answering_server().await;
    let run = Run::new();
    write(
        &run,
        "settings.json",
        br#"{"defaultTools": ["read", "grep", "find", "ls"]}"#,
    );
    let (output, body) = chat(&run, &server, "hi\n").await;
    assert!(output.starts_with("exit: 0"), "{output}");
    assert_eq!(tool_names(&body), ["read", "ls", "grep", "find", "recall"]);
    assert!(!output.contains("defaultTools"), "{output}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_default_tools_name_ctxkit_has_no_tool_for_is_warned_about() {
    let server = answering_server().await;
    let run = Run::new();
    write(
        &run,
        "settings.json",
        br#"{"defaultTools": ["-bash", "+codemode", "+fetch"]}"#,
    );
    let (output, body) = chat(&run, &server, "hi\n").await;
    assert!(output.starts_with("exit: 0"), "{output}");
    assert_eq!(
        tool_names(&body),
        ["read", "write", "edit", "ls", "grep", "find", "recall"]
    );
    assert!(
        output.contains(
            "warning: `defaultTools` names `+codemode`: Pi's tool, which ctxkit does not have; skipped"
        ),
        "{output}"
    );
    assert!(
        output.contains("warning: `defaultTools` names `+fetch`, which is no tool of ctxkit; skipped (the tools are read, write, edit, bash, ls, grep, find, recall)"),
        "{output}"
    );
}

const BOM: &[u8] = b"\xef\xbb\xbf";

/// Defect 6: with a byte-order mark, the settings stopped the chat, the skill was dropped and the
/// prompt template's raw frontmatter went to the model as the user's message.
#[tokio::test(flavor = "multi_thread")]
async fn files_saved_with_a_byte_order_mark_read_as_without_one() {
    let server = answering_server().await;
    let run = Run::new();
    let with_bom = |text: &str| [BOM, text.as_bytes()].concat();
    write(
        &run,
        "settings.json",
        &with_bom(r#"{"defaultTools": ["read"]}"#),
    );
    write(
        &run,
        "skills/bom/SKILL.md",
        &with_bom("---\nname: bom\ndescription: BOM skill.\n---\nbody\n"),
    );
    write(
        &run,
        "prompts/bp.md",
        &with_bom("---\ndescription: bom prompt\n---\nReview $1\n"),
    );
    write(&run, "AGENTS.md", &with_bom("Team rules."));
    let (output, body) = chat(&run, &server, "/bp x\n").await;
    assert!(output.starts_with("exit: 0"), "{output}");
    assert!(!output.contains("description is required"), "{output}");
    assert_eq!(tool_names(&body), ["read", "recall"], "the settings apply");
    let sent = body.to_string();
    assert!(sent.contains("<name>bom</name>"), "{sent}");
    assert!(sent.contains("Review x"), "{sent}");
    assert!(!sent.contains("description: bom prompt"), "{sent}");
    assert!(!sent.contains('\u{feff}'), "{sent}");
}

/// Defect 7: a local `AGENTS.override.md` lost to the committed `AGENTS.md` of its folder.
#[tokio::test(flavor = "multi_thread")]
async fn agents_override_replaces_the_agents_file_of_its_folder() {
    let server = answering_server().await;
    let run = Run::new();
    write(&run, "AGENTS.md", b"Team rules: use npm.");
    write(&run, "AGENTS.override.md", b"My local override: use pnpm.");
    let (output, body) = chat(&run, &server, "hi\n").await;
    assert!(output.starts_with("exit: 0"), "{output}");
    let sent = body.to_string();
    assert!(sent.contains("My local override: use pnpm."), "{sent}");
    assert!(!sent.contains("Team rules"), "{sent}");
}

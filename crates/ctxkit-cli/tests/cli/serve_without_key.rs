//! `ctxkit serve` with a model configured and no key for it (QA r108, S4: it exited 3 at start).
//! The server starts, as Pi's RPC mode does; a compaction asked for before a key is set fails
//! naming the key and changes nothing, and one asked for after `ctxkit login` saved the key, in
//! the same server, runs on the model. A loopback mock stands for OpenAI's host.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::Run;
use crate::providers::reply as reply_of_responses;
use crate::serve::{Server, reply, user};

const SAVED_KEY: &str = "sk-saved-while-serving-SECRET789";

#[tokio::test(flavor = "multi_thread")]
async fn serve_starts_without_a_key_and_summarizes_once_one_is_saved() {
    let mock = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/responses"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(reply_of_responses("## Goal\n- the summary the model wrote")),
        )
        .mount(&mock)
        .await;
    let run = Run::new();
    std::fs::write(
        run.home.path().join("settings.json"),
        r#"{"defaultModel": "openai/gpt-4o-mini", "compaction": {"keepRecentTokens": 500}}"#,
    )
    .unwrap();
    let project = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", mock.uri());
    let file = tokio::task::block_in_place(|| {
        let mut server = Server::start_with(
            run.home.path(),
            project.path(),
            &[("OPENAI_BASE_URL", base.as_str())],
        );
        let init = server.call("initialize", Value::Null);
        assert_eq!(init["result"]["protocol_version"], "1", "{init}");
        let created = server.call("session.create", json!({"cwd": project.path()}));
        let file = created["result"]["session_file"]
            .as_str()
            .unwrap()
            .to_owned();
        let long_answer = "I rewrote the tokenizer loop and the error recovery. ".repeat(80);
        for (text, answer) in [
            ("fix the parser in src/parse.rs", long_answer.as_str()),
            ("now run the tests", "done"),
        ] {
            server.call("message.append", json!({"message": user(text)}));
            server.call("message.append", json!({"message": reply(answer, 2_000)}));
        }
        let before = std::fs::read_to_string(&file).unwrap();
        let refused = server.call("compact", Value::Null);
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("No API key for provider `openai`"),
            "{refused}"
        );
        assert_eq!(refused["error"]["data"]["kind"], "summarization_failed");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

        let output = run.ctxkit_with_input(&["login", "openai"], &[], &format!("{SAVED_KEY}\n"));
        assert!(output.starts_with("exit: 0\n"), "{output}");
        let compacted = server.call("compact", Value::Null);
        assert!(compacted["error"].is_null(), "{compacted}");
        assert_eq!(server.call("shutdown", Value::Null)["result"], json!({}));
        assert!(server.child.wait().unwrap().success());
        file
    });
    let requests = mock.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers.get("authorization").unwrap(),
        format!("Bearer {SAVED_KEY}").as_str()
    );
    let stored = std::fs::read_to_string(&file).unwrap();
    assert!(stored.contains("the summary the model wrote"), "{stored}");
    assert!(
        stored.contains("\"summarizer\":\"openai/gpt-4o-mini\""),
        "{stored}"
    );
    assert!(!stored.contains(SAVED_KEY));
}

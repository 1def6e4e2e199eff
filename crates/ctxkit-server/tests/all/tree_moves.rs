//! Moves in the tree and summaries as a client sees them across connections (QA r108 serve2):
//! a move survives reopening, a session another writer holds is refused before a summary is
//! paid for, and a session Pi 1.6.0 wrote gives a view a provider takes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctxkit_summarizer::{Summarizer, SummarizerError, SummaryRequest, SummaryResponse};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::server::{Client, start_summarizing, start_with};
use crate::support::{reply, user};

/// Counts the summaries asked of it and answers each with `SUMMARY`.
#[derive(Debug, Default)]
struct Counting {
    asked: AtomicUsize,
}

impl Summarizer for Counting {
    fn name(&self) -> String {
        "counting".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        _request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {
            Ok(SummaryResponse {
                text: "SUMMARY".to_owned(),
                usage: None,
            })
        })
    }
}

/// A session of two turns written by `client`: its file and the ids of the two replies.
async fn two_turns(client: &mut Client, dir: &std::path::Path) -> (String, Vec<String>) {
    let created = client.call("session.create", json!({"cwd": dir})).await;
    let file = created["result"]["session_file"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut replies = Vec::new();
    for text in ["first", "second"] {
        client
            .call("message.append", json!({"message": user(text)}))
            .await;
        let written = client
            .call("message.append", json!({"message": reply("ok", 10)}))
            .await;
        replies.push(written["result"]["entry_id"].as_str().unwrap().to_owned());
    }
    (file, replies)
}

fn texts(view: &Value) -> Vec<String> {
    view["result"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let content = &message["content"];
            content
                .as_str()
                .or_else(|| content[0]["text"].as_str())
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

/// D1: `tree.navigate` without a summary moved the leaf in memory only; a client that opened the
/// session again was back on the branch it left, and its next message went there.
#[tokio::test]
async fn a_move_without_a_summary_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = start_with(dir.path(), None);
    let (file, replies) = two_turns(&mut first, dir.path()).await;
    let moved = first
        .call("tree.navigate", json!({"target_id": replies[0]}))
        .await;
    let leaf = moved["result"]["new_leaf_id"].clone();
    assert_eq!(moved["result"]["marker_entry_id"], leaf, "{moved}");
    assert_ne!(leaf, json!(replies[0]), "the marker is the leaf: {moved}");
    let info = first.call("session.info", Value::Null).await;
    assert_eq!(info["result"]["leaf_id"], leaf, "{info}");
    first.close_input().await;
    assert!(first.ended_within(std::time::Duration::from_secs(10)).await);

    let mut second = start_with(dir.path(), None);
    let opened = second.call("session.open", json!({"path": file})).await;
    assert_eq!(opened["result"]["leaf_id"], leaf, "{opened}");
    second
        .call("message.append", json!({"message": user("third")}))
        .await;
    let view = second.call("view.get", Value::Null).await;
    assert_eq!(texts(&view), ["first", "ok", "third"], "{view}");
}

/// Moving to where the leaf already stands (through its marker) records nothing more.
#[tokio::test]
async fn moving_again_to_the_same_place_writes_no_second_marker() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    let (file, replies) = two_turns(&mut client, dir.path()).await;
    for _ in 0..2 {
        let moved = client
            .call("tree.navigate", json!({"target_id": replies[0]}))
            .await;
        assert!(moved["result"].is_object(), "{moved}");
    }
    let text = std::fs::read_to_string(file).unwrap();
    assert_eq!(text.matches("ctxkit.navigate").count(), 1, "{text}");
}

/// D3: a client on a session another process's client writes asked for `compact` or a
/// summarizing `tree.navigate`; the summary was asked of the model, then refused
/// (`session_in_use`) and thrown away. Now it is refused before the model is asked.
#[tokio::test]
async fn a_summary_is_not_paid_for_on_a_session_another_writer_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = start_with(dir.path(), None);
    let (file, replies) = two_turns(&mut writer, dir.path()).await;
    let counting = Arc::new(Counting::default());
    let mut other = start_summarizing(dir.path(), None, counting.clone());
    let opened = other.call("session.open", json!({"path": file})).await;
    assert!(opened["result"].is_object(), "{opened}");

    let compacted = other.call("compact", json!({})).await;
    assert_eq!(
        compacted["error"]["data"]["kind"], "session_in_use",
        "{compacted}"
    );
    let navigated = other
        .call(
            "tree.navigate",
            json!({"target_id": replies[0], "summarize": true}),
        )
        .await;
    assert_eq!(
        navigated["error"]["data"]["kind"], "session_in_use",
        "{navigated}"
    );
    assert_eq!(counting.asked.load(Ordering::SeqCst), 0);
    // Nothing moved either.
    let info = other.call("session.info", Value::Null).await;
    assert_eq!(info["result"]["leaf_id"], json!(replies[1]), "{info}");
}

/// The same for the checks a client makes around a run: `check.before_prompt` and
/// `check.after_run` over the threshold asked the model for a summary the other writer's lock
/// then refused. They are refused before the model is asked; under the threshold they answer.
#[tokio::test]
async fn a_check_does_not_pay_for_a_summary_on_a_session_another_writer_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = start_with(dir.path(), None);
    let (file, _) = two_turns(&mut writer, dir.path()).await;
    let counting = Arc::new(Counting::default());
    let mut other = start_summarizing(dir.path(), None, counting.clone());
    let opened = other.call("session.open", json!({"path": file})).await;
    assert!(opened["result"].is_object(), "{opened}");
    let model = |window: u64| json!({"model": {"provider": "faux", "id": "faux-1", "context_window": window}});
    other.call("model.set", model(1_000_000)).await;
    let under = other.call("check.before_prompt", Value::Null).await;
    assert!(under["result"].is_object(), "{under}");
    other.call("model.set", model(2_005)).await;
    for check in ["check.before_prompt", "check.after_run"] {
        let refused = other.call(check, Value::Null).await;
        assert_eq!(
            refused["error"]["data"]["kind"], "session_in_use",
            "{check}: {refused}"
        );
    }
    assert_eq!(counting.asked.load(Ordering::SeqCst), 0);
}

/// D2: `view.get` on a session Pi 1.6.0 wrote held Pi's recorded system prompt
/// (`{"role":"system","content":"","sections":…}`) among the messages, which no provider takes
/// there. It is left out; `transcript.get` still shows it.
#[tokio::test]
async fn the_view_of_a_pi_session_leaves_its_recorded_system_prompt_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pi.jsonl");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/pi16-system-prompt.jsonl"
        ),
        &file,
    )
    .unwrap();
    let mut client = start_with(dir.path(), None);
    let opened = client.call("session.open", json!({"path": file})).await;
    assert!(opened["result"].is_object(), "{opened}");
    let view = client.call("view.get", Value::Null).await;
    let roles: Vec<&str> = view["result"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "user", "assistant"],
        "{view}"
    );
    assert_eq!(view["result"]["system"], json!([]), "{view}");
    let transcript = client.call("transcript.get", json!({})).await;
    let kept = transcript["result"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|message| message["role"] == "system");
    assert!(kept, "{transcript}");
}

/// S2: `fork` at an id the session does not hold told the client to pass `"position": "at"`,
/// which it had; it is told the entry is not in the session.
#[tokio::test]
async fn forking_at_an_unknown_entry_says_it_is_not_in_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    two_turns(&mut client, dir.path()).await;
    let refused = client
        .call("fork", json!({"entry_id": "nope", "position": "at"}))
        .await;
    assert_eq!(
        refused["error"]["data"]["kind"], "entry_not_found",
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("nope") && !message.contains("position"),
        "{message}"
    );
}

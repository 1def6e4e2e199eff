//! Context edits of replies that made tool calls keep the calls and their results together (Pi
//! 1.6.0), and the orphaned results older files hold are found.

use ctxkit_protocol::{AgentMessage, MessageContent};
use ctxkit_session::{ContextForm, LeafSelector, Session};
use serde_json::json;

use crate::store::{assistant, user};

fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

fn calling(ids: &[&str]) -> AgentMessage {
    let calls: Vec<_> = ids
        .iter()
        .map(|id| json!({"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": "ls"}}))
        .collect();
    message(json!({"role": "assistant", "content": calls, "stopReason": "toolUse", "timestamp": 2}))
}

fn result(call: &str) -> AgentMessage {
    message(json!({
        "role": "toolResult", "toolCallId": call, "toolName": "bash",
        "content": [{"type": "text", "text": "out"}], "isError": false, "timestamp": 3
    }))
}

/// The roles of the context at the leaf, a tool result with its call id.
fn roles(session: &Session) -> Vec<String> {
    let record = session
        .context_record(LeafSelector::Current, ContextForm::Llm)
        .unwrap();
    record
        .messages
        .iter()
        .map(|message| match message["toolCallId"].as_str() {
            Some(call) => format!("toolResult({call})"),
            None => message["role"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// user, a reply calling `a` and `b`, their results, a reply, a second call `c` and its result.
fn session_with_calls() -> (Session, String, Vec<String>) {
    let mut session = Session::in_memory("/p");
    session.append_message(user("run")).unwrap();
    let reply = session.append_message(calling(&["a", "b"])).unwrap();
    let results = vec![
        session.append_message(result("a")).unwrap(),
        session.append_message(result("b")).unwrap(),
    ];
    session.append_message(calling(&["c"])).unwrap();
    session.append_message(result("c")).unwrap();
    session.append_message(assistant("done")).unwrap();
    (session, reply, results)
}

#[test]
fn leaving_out_a_reply_leaves_out_its_tool_results_one_edit_each() {
    let (mut session, reply, results) = session_with_calls();
    let written = session
        .append_context_edit_with_results(&reply, None)
        .unwrap();
    assert_eq!(written.results_left_out, results);
    let targets: Vec<String> = session.entries()[session.entries().len() - 3..]
        .iter()
        .map(|entry| entry.raw().unwrap())
        .map(|line| serde_json::from_str::<serde_json::Value>(&line).unwrap())
        .map(|value| {
            assert_eq!(value["replacement"], serde_json::Value::Null);
            value["targetId"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        targets,
        [reply.clone(), results[0].clone(), results[1].clone()]
    );
    assert_eq!(
        roles(&session),
        ["user", "assistant", "toolResult(c)", "assistant"]
    );
    assert!(session.orphaned_tool_results().unwrap().is_empty());
}

#[test]
fn a_replacement_without_the_calls_leaves_out_their_results() {
    let (mut session, reply, results) = session_with_calls();
    let written = session
        .append_context_edit_with_results(&reply, Some(MessageContent::Text("I ran ls.".into())))
        .unwrap();
    assert_eq!(written.results_left_out, results);
    assert_eq!(
        roles(&session),
        [
            "user",
            "assistant",
            "assistant",
            "toolResult(c)",
            "assistant"
        ]
    );
    assert!(session.orphaned_tool_results().unwrap().is_empty());
}

#[test]
fn a_replacement_keeping_a_call_keeps_its_result() {
    let (mut session, reply, results) = session_with_calls();
    let AgentMessage::Assistant(kept) = calling(&["a"]) else {
        panic!("not a reply");
    };
    let written = session
        .append_context_edit_with_results(&reply, Some(MessageContent::Blocks(kept.content)))
        .unwrap();
    assert_eq!(written.results_left_out, [results[1].clone()]);
    assert_eq!(
        roles(&session),
        [
            "user",
            "assistant",
            "toolResult(a)",
            "assistant",
            "toolResult(c)",
            "assistant"
        ]
    );
}

#[test]
fn a_reply_without_calls_and_other_messages_get_one_edit() {
    let (mut session, _, results) = session_with_calls();
    let done = session.leaf_id().unwrap().to_owned();
    let written = session
        .append_context_edit_with_results(&done, None)
        .unwrap();
    assert!(written.results_left_out.is_empty());
    // A tool result alone is the user's choice; its call stays, and nothing is orphaned.
    let written = session
        .append_context_edit_with_results(&results[0], None)
        .unwrap();
    assert!(written.results_left_out.is_empty());
    assert!(session.orphaned_tool_results().unwrap().is_empty());
}

#[test]
fn the_orphans_an_edit_of_the_reply_alone_leaves_are_found() {
    // 0.87.1's recovery, and ctxkit's `edit-context` before 1.6.0's rule: the reply alone.
    let (mut session, reply, results) = session_with_calls();
    session.append_context_edit(&reply, None).unwrap();
    let orphans = session.orphaned_tool_results().unwrap();
    let found: Vec<_> = orphans
        .iter()
        .map(|orphan| (orphan.entry_id.as_str(), orphan.tool_call_id.as_str()))
        .collect();
    assert_eq!(
        found,
        [(results[0].as_str(), "a"), (results[1].as_str(), "b")]
    );
    // Pi 1.6.0 keeps them in the context, as ctxkit's context does.
    assert_eq!(
        roles(&session),
        [
            "user",
            "toolResult(a)",
            "toolResult(b)",
            "assistant",
            "toolResult(c)",
            "assistant"
        ]
    );
}

/// QA r101 serve: `message.append` wrote a tool result answering no call (`nope`), which Pi 1.6.0
/// sends unpaired. Only a result of an open call of the latest complete reply answers one.
#[test]
fn a_result_answers_an_open_call_of_the_latest_reply_once() {
    let aborted = || {
        message(
            json!({"role": "assistant", "stopReason": "aborted", "timestamp": 2,
            "content": [{"type": "toolCall", "id": "a", "name": "bash", "arguments": {}}]}),
        )
    };
    // (the messages at the leaf, the call id of the result to append, whether it answers)
    let cases: Vec<(Vec<AgentMessage>, &str, bool)> = vec![
        (vec![user("run"), calling(&["a", "b"])], "a", true),
        (
            vec![user("run"), calling(&["a", "b"]), result("a")],
            "b",
            true,
        ),
        (vec![user("run"), calling(&["a", "b"])], "nope", false),
        (
            vec![user("run"), calling(&["a", "b"]), result("a")],
            "a",
            false,
        ),
        (
            vec![user("run"), calling(&["a"]), result("a"), calling(&["c"])],
            "a",
            false,
        ),
        (vec![user("run"), calling(&["a"]), user("more")], "a", false),
        (vec![user("run"), aborted()], "a", false),
        (vec![user("run")], "a", false),
        (vec![], "a", false),
    ];
    for (messages, call, answers) in cases {
        let mut session = Session::in_memory("/p");
        let shown = format!(
            "{:?}",
            messages.iter().map(|m| m.role()).collect::<Vec<_>>()
        );
        session.append_messages(messages).unwrap();
        assert_eq!(
            session.answers_open_call(call).unwrap(),
            answers,
            "{call} after {shown}"
        );
    }
}

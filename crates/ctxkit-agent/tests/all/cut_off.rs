//! Pi 1.6's point 11 (`shared/spec/pi-16.md`): a reply cut off at the output limit in the middle of
//! a tool call must never leave a tool result without its call in a request (providers reject
//! those). ctxkit's loop never runs the calls of a cut-off reply, so there is no result to hide; a
//! file holding the shape 0.87.1 wrote (the reply hidden, its result still there) is continued
//! without sending that result.

use ctxkit_agent::PromptOutcome;
use ctxkit_agent::testing::ScriptedModel;
use ctxkit_engine::ModelInfo;
use ctxkit_llm::ChatRequest;
use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};
use serde_json::json;

use crate::support::*;

fn info() -> ModelInfo {
    ModelInfo {
        provider: "mock".to_owned(),
        id: "coder".to_owned(),
        context_window: WINDOW,
        cache: None,
    }
}

/// Every tool result of `request` answers a call made earlier in it, and every call before the
/// last message is answered.
fn assert_paired(request: &ChatRequest) {
    let mut calls = Vec::new();
    for message in &request.messages {
        match message {
            AgentMessage::Assistant(reply) => calls.extend(
                reply
                    .content
                    .iter()
                    .filter_map(|block| Some(block.as_tool_call()?.id.clone())),
            ),
            AgentMessage::ToolResult(result) => {
                assert!(
                    calls.contains(&result.tool_call_id),
                    "a result without its call: {:?}",
                    request.messages
                );
            }
            _ => {}
        }
    }
    let answered: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|message| Some(message.as_tool_result()?.tool_call_id.as_str()))
        .collect();
    for call in &calls {
        assert!(
            answered.contains(&call.as_str()),
            "a call without its result: {:?}",
            request.messages
        );
    }
}

#[tokio::test]
async fn a_reply_cut_off_mid_tool_call_runs_nothing_and_leaves_nothing_to_hide() {
    let builder = ScriptedModel::new(info(), |_, _| ctxkit_agent::testing::empty_reply());
    let model = ScriptedModel::new(info(), move |_, index| match index {
        // Cut off at the output limit while writing the call's arguments.
        0 => {
            let mut reply = builder.calls(
                &[(
                    "call_cut",
                    "write",
                    json!({"path": "cut.txt", "content": "par"}),
                )],
                200,
            );
            reply.stop_reason = Some("length".to_owned());
            reply
        }
        _ => builder.text("Starting again, with smaller steps.", 300),
    });
    let mut world = World::new(model).await;
    assert_eq!(world.prompt("write cut.txt").await, PromptOutcome::Answered);
    assert!(!world.work().join("cut.txt").exists(), "the call never ran");
    let session = world.reload().await;
    let types: Vec<String> = session
        .entries()
        .iter()
        .map(|entry| {
            let role = entry
                .parse_message()
                .and_then(Result::ok)
                .map(|message| message.role().to_owned());
            format!(
                "{}{}",
                entry.type_name(),
                role.map(|role| format!(":{role}")).unwrap_or_default()
            )
        })
        .collect();
    assert!(
        !types
            .iter()
            .any(|kind| kind == "message:toolResult" || kind == "context_edit"),
        "{types:?}"
    );
    assert_eq!(world.prompt("go on").await, PromptOutcome::Answered);
    let requests = world.model.requests();
    assert_paired(requests.last().unwrap());
}

#[tokio::test]
async fn a_file_with_the_087_recovery_shape_sends_no_orphaned_result() {
    let model = ScriptedModel::answering(info(), &["Continuing."]);
    let reply = model.calls(&[("call_old", "read", json!({"path": "a.rs"}))], 100);
    // What 0.87.1 left: the cut-off reply hidden, the result of its call still in the context.
    let write = |session: &mut ctxkit_session::Session| {
        session
            .append_message(AgentMessage::User(ctxkit_protocol::UserMessage {
                content: MessageContent::Text("read a.rs".to_owned()),
                timestamp: Some(1),
                extra: Default::default(),
            }))
            .unwrap();
        let reply_id = session
            .append_message(AgentMessage::Assistant(reply))
            .unwrap();
        session
            .append_message(AgentMessage::ToolResult(
                ctxkit_protocol::ToolResultMessage {
                    tool_call_id: "call_old".to_owned(),
                    tool_name: "read".to_owned(),
                    content: MessageContent::Blocks(vec![ContentBlock::text("fn a() {}")]),
                    details: None,
                    is_error: false,
                    timestamp: Some(2),
                    extra: Default::default(),
                },
            ))
            .unwrap();
        session.append_context_edit(&reply_id, None).unwrap();
    };
    let settings =
        ctxkit_engine::EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!({})));
    let summarizer = std::sync::Arc::new(ctxkit_summarizer_offline::OfflineSummarizer::default());
    let mut world = World::over_file(model, settings, summarizer, write).await;
    assert_eq!(world.prompt("go on").await, PromptOutcome::Answered);
    let request = world.model.requests().pop().unwrap();
    assert_paired(&request);
    assert!(
        !request
            .messages
            .iter()
            .any(|message| message.as_tool_result().is_some()),
        "{:?}",
        request.messages
    );
    // The stored context keeps the orphaned result, as Pi 1.6.0 does when it loads such a file.
    let session = world.reload().await;
    let context = session.messages(&session.build_context().messages).unwrap();
    assert!(
        context
            .iter()
            .any(|message| message.as_tool_result().is_some())
    );
}

/// QA 2026-12-07: arguments the model sent that are no JSON object are stored as `{}` with an
/// `argumentsError` (Pi 1.6.0's form). Such a call is answered with the error and never run with
/// `{}`: `ls` with no arguments would list the project the model never asked for.
#[tokio::test]
async fn a_call_whose_arguments_could_not_be_read_is_refused_not_run_empty() {
    let builder = ScriptedModel::new(info(), |_, _| ctxkit_agent::testing::empty_reply());
    let model = ScriptedModel::new(info(), move |_, index| match index {
        0 => {
            let mut reply = builder.calls(&[("call_bad", "write", json!({}))], 200);
            for block in &mut reply.content {
                if let ContentBlock::ToolCall(call) = block {
                    call.extra.insert(
                        ctxkit_protocol::ToolCall::ARGUMENTS_ERROR_KEY.to_owned(),
                        json!("EOF while parsing a string\n\nReceived arguments:\n{\"path\": \"."),
                    );
                }
            }
            reply
        }
        _ => builder.text("Sending them again.", 300),
    });
    let mut world = World::new(model).await;
    assert_eq!(world.prompt("write a file").await, PromptOutcome::Answered);
    let requests = world.model.requests();
    let result = requests[1]
        .messages
        .iter()
        .find_map(|message| message.as_tool_result())
        .unwrap();
    assert!(result.is_error);
    let text = result.content.joined_text("");
    assert!(
        text.starts_with("Invalid arguments for `write`: EOF while parsing a string"),
        "{text}"
    );
    assert_paired(&requests[1]);
}

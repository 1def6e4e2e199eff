//! A prompt (or a user's `!cmd`) whose caller drops its future midway — a timeout, a `select!`, an
//! aborted task — stops the command it runs, with its process group, as an interrupt does; the
//! call left without a result is answered "No result provided" in the next request.

use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_llm::ChatRequest;
use ctxkit_protocol::{AgentMessage, NO_TOOL_RESULT};
use serde_json::json;

use crate::support::*;

/// How long the dropped command would run, and how long the test waits after the drop: its side
/// effect would have happened by then.
const COMMAND_SECONDS: u64 = 2;

/// A command that writes `marker` once it has slept.
fn slow_command(marker: &std::path::Path) -> String {
    format!("sleep {COMMAND_SECONDS}; echo ran > '{}'", marker.display())
}

/// Waits long enough for a command that was not stopped to have written its marker.
async fn wait_past_the_command() {
    tokio::time::sleep(Duration::from_millis(COMMAND_SECONDS * 1_000 + 700)).await;
}

#[tokio::test]
async fn dropping_a_prompt_stops_its_running_command() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("side-effect");
    let command = slow_command(&marker);
    let behaviour =
        move |model: &ScriptedModel, request: &ChatRequest, input: u64| match last(request) {
            AgentMessage::User(user) if text_of(&user.content) == "run it" => {
                model.calls(&[("c1", "bash", json!({"command": command}))], input)
            }
            _ => model.text("ok", input),
        };
    let mut world = World::new(provider(1.0, Arc::new(behaviour))).await;
    let dropped = tokio::time::timeout(Duration::from_millis(500), world.prompt("run it")).await;
    assert!(dropped.is_err(), "the command was still running");
    wait_past_the_command().await;
    assert!(
        !marker.exists(),
        "the dropped prompt's command ran to its end"
    );
    // The session keeps the call without a result; the next request answers it.
    world.prompt("next").await;
    let request = world.model.requests().pop().unwrap();
    let answered = request.messages.iter().find_map(|message| match message {
        AgentMessage::ToolResult(result) if result.tool_call_id == "c1" => Some(result),
        _ => None,
    });
    let answered = answered.unwrap();
    assert!(answered.is_error);
    assert_eq!(text_of(&answered.content), NO_TOOL_RESULT);
}

#[tokio::test]
async fn dropping_a_user_command_stops_it() {
    let world = World::new(provider(
        1.0,
        Arc::new(|model: &ScriptedModel, _: &ChatRequest, input: u64| model.text("ok", input)),
    ))
    .await;
    let marker = world.dir.path().join("side-effect");
    let command = slow_command(&marker);
    let dropped = tokio::time::timeout(
        Duration::from_millis(500),
        world.agent.run_user_bash(&command, false),
    )
    .await;
    assert!(dropped.is_err(), "the command was still running");
    wait_past_the_command().await;
    assert!(!marker.exists(), "the dropped user command ran to its end");
}

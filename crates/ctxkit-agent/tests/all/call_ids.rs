//! A server that numbers every reply's calls from `call_0` (some OpenAI-compatible ones do): each
//! call gets an id of its own in the session, so `recall` of a cut result finds that result and
//! not the latest with the same id (a chat sweep's finding).

use std::sync::Arc;

use ctxkit_agent::ChatRequest;
use ctxkit_agent::testing::ScriptedModel;
use serde_json::json;

use crate::support::{Behaviour, World, provider};

fn same_ids() -> Arc<Behaviour> {
    Arc::new(
        |model: &ScriptedModel, request: &ChatRequest, tokens: u64| {
            let results = request
                .messages
                .iter()
                .filter(|message| message.role() == "toolResult")
                .count();
            let users = request
                .messages
                .iter()
                .filter(|message| message.role() == "user")
                .count();
            // One read per prompt, always as `call_0`, then an answer.
            if results < users {
                let file = if users == 1 { "a.txt" } else { "b.txt" };
                model.calls(&[("call_0", "read", json!({"path": file}))], tokens)
            } else {
                model.text("read it", tokens)
            }
        },
    )
}

#[tokio::test]
async fn each_call_of_a_server_that_reuses_ids_gets_its_own() {
    let mut world = World::new(provider(1.0, same_ids())).await;
    std::fs::write(world.work().join("a.txt"), "ALPHA contents").unwrap();
    std::fs::write(world.work().join("b.txt"), "BETA contents").unwrap();
    world.prompt("read a").await;
    world.prompt("read b").await;
    let first = world.engine.fetch_pruned("call_0").await.unwrap().unwrap();
    let second = world
        .engine
        .fetch_pruned("call_0-2")
        .await
        .unwrap()
        .unwrap();
    assert!(first.contains("ALPHA"), "{first}");
    assert!(second.contains("BETA"), "{second}");
    // The model is sent the ids the session holds, each call with its result.
    let last = world.model.requests().pop().unwrap();
    let ids: Vec<String> = last
        .messages
        .iter()
        .filter_map(|message| message.as_tool_result())
        .map(|result| result.tool_call_id.clone())
        .collect();
    assert_eq!(ids, ["call_0", "call_0-2"]);
}

//! Input a provider would refuse is refused by the library, where every surface meets it: a blank
//! prompt before anything is stored or sent, a blank steering message dropped. `serve` answers
//! the same refusal with `-32602`; an embedder gets `EngineError::EmptyPrompt`.

use std::sync::{Arc, Mutex};

use ctxkit_agent::ApproveAll;
use ctxkit_agent::testing::ScriptedModel;
use ctxkit_engine::EngineError;
use ctxkit_llm::ChatRequest;
use ctxkit_protocol::{AgentMessage, ContentBlock, ImageContent, JsonObject};

use crate::support::*;

fn answers_ok() -> ScriptedModel {
    provider(
        1.0,
        Arc::new(|model: &ScriptedModel, _: &ChatRequest, input: u64| model.text("ok", input)),
    )
}

#[tokio::test]
async fn a_blank_prompt_is_refused_before_anything_is_stored_or_sent() {
    let mut world = World::new(answers_ok()).await;
    for blank in ["", "  \n\t "] {
        let refused = world
            .agent
            .prompt(blank.to_owned(), &mut ApproveAll, world.observed.as_ref())
            .await;
        assert!(
            matches!(refused, Err(EngineError::EmptyPrompt)),
            "{blank:?}: {refused:?}"
        );
    }
    let refused = world
        .agent
        .prompt_content(Vec::new(), &mut ApproveAll, world.observed.as_ref())
        .await;
    assert!(matches!(refused, Err(EngineError::EmptyPrompt)));
    assert!(world.model.requests().is_empty(), "a blank prompt was sent");
    let entries = world
        .engine
        .with_session(|session| session.entries().len())
        .await;
    assert_eq!(entries, 0, "a blank prompt wrote to the session");
}

#[tokio::test]
async fn an_image_without_text_is_a_prompt() {
    let mut world = World::new(answers_ok()).await;
    let image = ContentBlock::Image(ImageContent {
        data: "iVBORw0KGgo=".to_owned(),
        mime_type: "image/png".to_owned(),
        extra: JsonObject::new(),
    });
    let content = vec![ContentBlock::text(" "), image];
    world
        .agent
        .prompt_content(content, &mut ApproveAll, world.observed.as_ref())
        .await
        .unwrap();
    assert_eq!(world.model.requests().len(), 1);
}

/// Hands out its messages once, when the run first asks.
struct Typed(Mutex<Vec<String>>);

impl ctxkit_agent::Steering for Typed {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

#[tokio::test]
async fn a_blank_steering_message_is_dropped() {
    let mut world = World::new(answers_ok()).await;
    let typed = vec![" ".to_owned(), "and add tests".to_owned(), String::new()];
    world.agent.set_steering(Arc::new(Typed(Mutex::new(typed))));
    world.prompt("fix the bug").await;
    let session = world.reload().await;
    let users: Vec<String> = session
        .messages(&session.build_context().messages)
        .unwrap()
        .into_iter()
        .filter_map(|message| match message {
            AgentMessage::User(user) => Some(text_of(&user.content)),
            _ => None,
        })
        .collect();
    assert_eq!(users, ["fix the bug", "and add tests"]);
}

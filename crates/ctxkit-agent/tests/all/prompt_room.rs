//! The compaction that makes output room for a prompt's first request runs before the prompt is
//! stored: when the user cancels it and the request cannot go out (it does not fit the window, or
//! the user stopped the run too), the prompt is not stored and its text is given back; when it
//! fits, it is sent uncompacted, without a second compaction.

use std::sync::Arc;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_agent::{
    AfterCancelledCompaction, Agent, AgentEvent, ChatModel, PromptOutcome, ToolRegistry,
};
use ctxkit_engine::ModelInfo;
use ctxkit_llm::{ChatRequest, OutputRoom};
use ctxkit_protocol::AssistantMessage;
use futures::future::BoxFuture;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::scenarios::{Hanging, coder, history};
use crate::support::*;

/// A model that says a request of more than `cramped_above` estimated tokens would leave its reply
/// too little output room (as a provider layer with a large `maxOutput` does). What cramps it is
/// the history: a request of the prompt alone (as the agent measures one before compacting for it)
/// has room unless `prompt_alone_cramped`.
pub struct Cramped {
    pub inner: ScriptedModel,
    pub cramped_above: u64,
    pub prompt_alone_cramped: bool,
}

impl ChatModel for Cramped {
    fn info(&self) -> ModelInfo {
        self.inner.info()
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, AssistantMessage> {
        self.inner.chat(request, cancel)
    }

    fn output_room(&self, request: &ChatRequest) -> Option<OutputRoom> {
        // The input the provider layer fits the output limit to.
        let tokens = ctxkit_llm::request_input_tokens(request);
        let alone = request.messages.len() == 1;
        let cramped = if alone {
            self.prompt_alone_cramped
        } else {
            tokens > self.cramped_above
        };
        cramped.then_some(OutputRoom { room: 0, floor: 1 })
    }
}

/// A world with a short history, whose agent talks to a [`Cramped`] model and whose summaries
/// hang until cancelled; the history and its prompts.
async fn cramped_world(cramped_above: u64) -> (World, Vec<String>) {
    cramped_world_as(cramped_above, false).await
}

/// [`cramped_world`], the prompt alone cramped too when `prompt_alone_cramped`.
async fn cramped_world_as(cramped_above: u64, prompt_alone_cramped: bool) -> (World, Vec<String>) {
    let settings = json!({"compaction": {"keepRecentTokens": 100}});
    let mut world = World::with_summarizer(
        provider(1.0, coder()),
        ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(&settings)),
        Arc::new(Hanging),
    )
    .await;
    let prompts = history(&mut world, 2).await;
    make_cramped_as(&mut world, cramped_above, prompt_alone_cramped).await;
    (world, prompts)
}

/// Gives `world` an agent over a [`Cramped`] model of its scripted one.
pub async fn make_cramped(world: &mut World, cramped_above: u64) {
    make_cramped_as(world, cramped_above, false).await;
}

/// [`make_cramped`], the prompt alone cramped too when `prompt_alone_cramped`.
pub async fn make_cramped_as(world: &mut World, cramped_above: u64, prompt_alone_cramped: bool) {
    let options = world.agent.options().clone();
    let cramped = Cramped {
        inner: world.model.clone(),
        cramped_above,
        prompt_alone_cramped,
    };
    world.agent = Agent::new(
        world.engine.clone(),
        Arc::new(cramped),
        ToolRegistry::coding(),
        options,
    )
    .await;
}

/// Cancels the next compaction as soon as it runs; `interrupt` stops the turn first (Esc twice).
fn cancel_the_compaction(world: &World, interrupt: bool) -> tokio::task::JoinHandle<()> {
    let engine = world.engine.clone();
    tokio::spawn(async move {
        while !engine.is_compacting() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        if interrupt {
            engine.interrupt_turn();
        }
        engine.cancel_compaction();
    })
}

fn cancels(world: &World) -> Vec<AfterCancelledCompaction> {
    world.observed.picked(|event| match event {
        AgentEvent::CompactionCancelled(next) => Some(next.clone()),
        _ => None,
    })
}

/// QA r97: a prompt whose output-room compaction was cancelled, and which could not fit without
/// it, was stored unanswered and unsent; the next prompt followed it as a second user message.
#[tokio::test]
async fn a_prompt_that_cannot_fit_without_the_cancelled_compaction_is_given_back() {
    let (mut world, prompts) = cramped_world(3_000).await;
    let sent_before = world.model.requests().len();
    let canceller = cancel_the_compaction(&world, false);
    let long = format!("look at this\n{}", filler("log", 30_000));
    let outcome = world.prompt(&long).await;
    // Not `assert_eq!`: the prompt is 30,000 characters.
    assert!(
        outcome == PromptOutcome::NotSent(long.clone()),
        "not given back"
    );
    canceller.await.unwrap();
    assert!(
        matches!(
            cancels(&world).as_slice(),
            [AfterCancelledCompaction::DoesNotFit { prompt: true, .. }]
        ),
        "{:?}",
        cancels(&world)
    );
    assert_untouched(&world, sent_before, &prompts).await;
    assert_eq!(world.compactions().await, 0);
}

/// Esc twice: the compaction is cancelled and the run stopped before the prompt went out.
#[tokio::test]
async fn a_prompt_whose_run_was_stopped_during_its_compaction_is_given_back() {
    let (mut world, prompts) = cramped_world(500).await;
    let sent_before = world.model.requests().len();
    let canceller = cancel_the_compaction(&world, true);
    assert_eq!(
        world.prompt("go on").await,
        PromptOutcome::NotSent("go on".to_owned())
    );
    canceller.await.unwrap();
    assert_eq!(cancels(&world), [AfterCancelledCompaction::Interrupted]);
    assert_eq!(world.model.requests().len(), sent_before);
    assert_eq!(world.user_texts().await, prompts);
}

/// A prompt that fits without the cancelled compaction is sent as it is, stored once, and no second
/// compaction starts for it.
#[tokio::test]
async fn a_prompt_that_fits_is_sent_uncompacted_after_the_cancel() {
    let (mut world, mut prompts) = cramped_world(500).await;
    let sent_before = world.model.requests().len();
    let canceller = cancel_the_compaction(&world, false);
    assert_eq!(world.prompt("go on").await, PromptOutcome::Answered);
    canceller.await.unwrap();
    assert_eq!(cancels(&world), [AfterCancelledCompaction::GoesOn]);
    assert_eq!(world.model.requests().len(), sent_before + 1);
    prompts.push("go on".to_owned());
    assert_eq!(world.user_texts().await, prompts);
    assert_eq!(world.compactions().await, 0);
}

/// QA: a 48 KB paste in a 16k window was compacted (a summary paid for, a compaction written)
/// and then refused anyway. A prompt that leaves no room even alone is given back at once, with
/// nothing compacted or sent.
#[tokio::test]
async fn a_prompt_too_large_for_the_window_alone_is_given_back_without_compacting() {
    let (mut world, prompts) = cramped_world_as(500, true).await;
    let sent_before = world.model.requests().len();
    let long = format!("look at this\n{}", filler("log", 30_000));
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(20), world.prompt(&long))
        .await
        .expect("a compaction was started for a prompt no compaction can fit");
    assert!(
        outcome == PromptOutcome::NotSent(long.clone()),
        "not given back"
    );
    assert_untouched(&world, sent_before, &prompts).await;
    assert_eq!(world.compactions().await, 0);
    let stops = stops(&world);
    let [stop] = stops.as_slice() else {
        panic!("{stops:?}");
    };
    assert_eq!(stop.cause, ctxkit_agent::NoRoomCause::PromptTooLarge);
    assert!(
        stop.reason()
            .contains("nothing was sent and nothing compacted"),
        "{}",
        stop.reason()
    );
}

/// Nothing was sent since `sent_before` requests, and the user's messages are `prompts`: a prompt
/// given back left the session as it was.
pub async fn assert_untouched(world: &World, sent_before: usize, prompts: &[String]) {
    assert_eq!(
        world.model.requests().len(),
        sent_before,
        "nothing was sent"
    );
    assert_eq!(
        world.user_texts().await,
        prompts,
        "the prompt is not stored"
    );
}

/// The runs' stops for want of output room, in order.
pub fn stops(world: &World) -> Vec<ctxkit_agent::NoOutputRoom> {
    world.observed.picked(|event| match event {
        AgentEvent::NoOutputRoom(stop) => Some(stop.clone()),
        _ => None,
    })
}

//! QA r100: a request whose reply would get less output room than its floor, when the compaction
//! that should make room fails (the summarizer answers HTTP 500), was sent anyway with the room
//! left, down to `max_tokens: 1`; the reply was cut to a token and the run ended. Now the run stops
//! before sending it and says why; the `truncate` fallback, when set, makes room instead. When what
//! takes the room is the turn's own long tool output (which no compaction summarizes), the request
//! goes out with that output cut to its markers (QA long workday).

use std::sync::Arc;

use ctxkit_agent::{NoRoomCause, PromptOutcome};
use futures::future::BoxFuture;
use serde_json::json;

use crate::prompt_room::{assert_untouched, make_cramped, stops};
use crate::scenarios::{coder, history};
use crate::support::*;

/// A summarizer whose provider is down.
struct Down;

impl ctxkit_summarizer::Summarizer for Down {
    fn name(&self) -> String {
        "down".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        _request: ctxkit_summarizer::SummaryRequest,
        _cancel: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Result<ctxkit_summarizer::SummaryResponse, ctxkit_summarizer::SummarizerError>>
    {
        Box::pin(async {
            Err(ctxkit_summarizer::SummarizerError::new(
                "Provider `mock` returned HTTP 500: overloaded".to_owned(),
            ))
        })
    }
}

/// A world with two answered prompts and a `big.txt` of about 3,000 tokens, whose summaries fail,
/// and whose model leaves a reply no room once a request is 2,500 estimated tokens over the last
/// request of the history (so the next prompt fits, and the read of `big.txt` does not, unless its
/// result is cut to its marker).
async fn world_with(settings: serde_json::Value) -> (World, Vec<String>) {
    let settings =
        ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(&settings));
    let mut world = World::with_summarizer(provider(1.0, coder()), settings, Arc::new(Down)).await;
    let prompts = history(&mut world, 2).await;
    std::fs::write(world.work().join("big.txt"), filler("big", 12_000)).unwrap();
    let requests = world.model.requests();
    let last = requests.last().unwrap();
    // The input the model measured the last request at (the engine's projection of it).
    let tokens = ctxkit_llm::request_input_tokens(last);
    make_cramped(&mut world, tokens + 2_500).await;
    (world, prompts)
}

/// The request with the read's long result goes out with that result cut to its marker (the
/// turn in progress, which no compaction can summarize), the stored result whole; the session
/// goes on (QA long workday: six reads in one turn left every later request refused).
fn assert_sent_shortened(world: &World, sent_before: usize) {
    let requests = world.model.requests();
    assert!(
        requests.len() >= sent_before + 2,
        "the read's request was not sent"
    );
    let with_read = &requests[sent_before + 1];
    let text = serde_json::to_string(&with_read.messages).unwrap();
    assert!(text.contains("ctxkit://tool-result/"), "not shortened");
    assert!(
        !text.contains(&filler("big", 12_000)),
        "the result went whole"
    );
}

#[tokio::test]
async fn a_run_whose_summary_fails_sends_the_turn_with_its_long_output_shortened() {
    let (mut world, mut prompts) =
        world_with(json!({"compaction": {"keepRecentTokens": 100}})).await;
    let sent_before = world.model.requests().len();
    assert_eq!(world.prompt("READ big.txt").await, PromptOutcome::Answered);
    assert_sent_shortened(&world, sent_before);
    assert!(stops(&world).is_empty());
    // The session holds the read's result whole; nothing compacted.
    prompts.push("READ big.txt".to_owned());
    assert_eq!(world.user_texts().await, prompts);
    assert_eq!(world.compactions().await, 0);
    let session = world.reload().await;
    let longest_result = session
        .entries()
        .iter()
        .filter_map(|entry| entry.parse_message().and_then(Result::ok))
        .filter_map(|message| match message {
            ctxkit_protocol::AgentMessage::ToolResult(result) => {
                Some(result.content.joined_text("").len())
            }
            _ => None,
        })
        .max()
        .unwrap_or(0);
    assert!(
        longest_result >= 11_900,
        "the stored result was changed: {longest_result}"
    );
    // And the next prompt goes out too.
    let before_next = world.model.requests().len();
    assert_eq!(world.prompt("hello").await, PromptOutcome::Answered);
    assert!(world.model.requests().len() > before_next);
}

#[tokio::test]
async fn a_prompt_whose_summary_fails_and_that_leaves_no_room_is_given_back() {
    let (mut world, prompts) = world_with(json!({"compaction": {"keepRecentTokens": 100}})).await;
    let sent_before = world.model.requests().len();
    let long = format!("look at this\n{}", filler("log", 30_000));
    let outcome = world.prompt(&long).await;
    assert!(
        outcome == PromptOutcome::NotSent(long.clone()),
        "not given back"
    );
    assert_untouched(&world, sent_before, &prompts).await;
    let stops = stops(&world);
    let [stop] = stops.as_slice() else {
        panic!("{stops:?}");
    };
    assert!(
        matches!(&stop.cause, NoRoomCause::CompactionFailed(error) if error.contains("HTTP 500")),
        "{stop:?}"
    );
    assert!(
        stop.reason().contains("nothing was sent"),
        "{}",
        stop.reason()
    );
}

/// The history here holds an earlier read as large as `big.txt`'s, which the fallback drops. The
/// prune layer keeps it whole (else cutting it would make the room and no compaction would run).
#[tokio::test]
async fn the_truncate_fallback_makes_the_room_a_failed_summary_did_not() {
    let settings = ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(
        &json!({"compaction": {"keepRecentTokens": 100, "fallback": "truncate"},
                "transforms": {"keepRecentToolResults": 10}}),
    ));
    let mut world = World::with_summarizer(provider(1.0, coder()), settings, Arc::new(Down)).await;
    history(&mut world, 2).await;
    std::fs::write(world.work().join("old.txt"), filler("old", 12_000)).unwrap();
    assert_eq!(world.prompt("READ old.txt").await, PromptOutcome::Answered);
    std::fs::write(world.work().join("big.txt"), filler("big", 12_000)).unwrap();
    let last = world.model.requests().last().cloned().unwrap();
    // The input the model measured the last request at (the engine's projection of it).
    let tokens = ctxkit_llm::request_input_tokens(&last);
    make_cramped(&mut world, tokens + 1_000).await;
    assert_eq!(world.prompt("READ big.txt").await, PromptOutcome::Answered);
    assert!(world.compactions().await >= 1);
    assert!(stops(&world).is_empty());
}

/// A compaction that is written but keeps more than the window leaves room for (here the read's
/// result, inside `keepRecentTokens`) made no room: the request with the read goes out with the
/// read's result cut to its marker instead of stopping the run.
#[tokio::test]
async fn a_compaction_that_keeps_too_much_sends_the_turn_with_its_long_output_shortened() {
    let settings = ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(
        &json!({"compaction": {"keepRecentTokens": 4_000}}),
    ));
    let mut world = World::with_settings(provider(1.0, coder()), settings).await;
    history(&mut world, 2).await;
    std::fs::write(world.work().join("big.txt"), filler("big", 12_000)).unwrap();
    let last = world.model.requests().last().cloned().unwrap();
    // The input the model measured the last request at (the engine's projection of it).
    let tokens = ctxkit_llm::request_input_tokens(&last);
    make_cramped(&mut world, tokens + 2_500).await;
    let sent_before = world.model.requests().len();
    assert_eq!(world.prompt("READ big.txt").await, PromptOutcome::Answered);
    assert!(world.compactions().await >= 1);
    assert_sent_shortened(&world, sent_before);
    assert!(stops(&world).is_empty());
}

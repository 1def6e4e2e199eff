use std::sync::Arc;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_agent::{AgentEvent, Approval, Approver, DenyAll, PromptOutcome};
use ctxkit_llm::{ChatDelta, ChatRequest};
use ctxkit_protocol::{AgentMessage, AssistantMessage};
use futures::future::BoxFuture;
use serde_json::json;

use crate::support::*;

/// A coding model: `READ a b` reads the files in one reply (parallel calls), `STEPS a b` reads
/// them one call per reply; a finished turn is answered with a long text (so history grows).
pub fn coder() -> Arc<Behaviour> {
    Arc::new(|model: &ScriptedModel, request: &ChatRequest, input: u64| {
        let user_text = request
            .messages
            .iter()
            .rev()
            .find_map(|message| Some(text_of(&message.as_user()?.content)))
            .unwrap_or_default();
        let files: Vec<&str> = user_text.split_whitespace().skip(1).collect();
        let done = results_this_turn(request);
        match last(request) {
            AgentMessage::User(_) if user_text.starts_with("READ ") => {
                let calls: Vec<(String, &str, serde_json::Value)> = files
                    .iter()
                    .enumerate()
                    .map(|(index, file)| (format!("call_{index}"), "read", json!({"path": file})))
                    .collect();
                let calls: Vec<(&str, &str, serde_json::Value)> = calls
                    .iter()
                    .map(|(id, name, arguments)| (id.as_str(), *name, arguments.clone()))
                    .collect();
                model.calls(&calls, input)
            }
            AgentMessage::User(_) | AgentMessage::ToolResult(_)
                if user_text.starts_with("STEPS ") && done < files.len() =>
            {
                let id = format!("step_{done}");
                model.calls(
                    &[(id.as_str(), "read", json!({"path": files[done]}))],
                    input,
                )
            }
            AgentMessage::ToolResult(_) => model.text("I have read it. Done.", input),
            _ => model.text(&filler("answer", 2_500), input),
        }
    })
}

/// A final text reply, the turn's answer.
fn answered_with(world: &World) -> String {
    let events = world.observed.0.lock().unwrap();
    events
        .iter()
        .rev()
        .find_map(|event| match event {
            AgentEvent::Reply { reply, .. } if reply.stop_reason.as_deref() == Some("stop") => {
                Some(reply_text(reply))
            }
            _ => None,
        })
        .unwrap_or_default()
}

fn reply_text(reply: &AssistantMessage) -> String {
    reply
        .content
        .iter()
        .filter_map(ctxkit_protocol::ContentBlock::as_text)
        .collect()
}

/// Ends of every scenario: answered, the last request fit, the file loads and keeps every prompt.
async fn assert_recovered(world: &World, prompts: &[String]) {
    let limit = WINDOW as usize * 4;
    assert!(world.last_request_chars() <= limit);
    assert!(world.compactions().await >= 1);
    assert_eq!(&world.user_texts().await, prompts);
}

pub async fn history(world: &mut World, turns: usize) -> Vec<String> {
    let mut prompts = Vec::new();
    for turn in 0..turns {
        let prompt = format!("question {turn}");
        assert_eq!(world.prompt(&prompt).await, PromptOutcome::Answered);
        prompts.push(prompt);
    }
    prompts
}

#[tokio::test]
async fn an_overflow_after_a_user_message_is_compacted_and_retried() {
    let mut world = World::new(provider(1.0, coder())).await;
    // The log fits once the history is summarized, with room left for the reply.
    let mut prompts = history(&mut world, 6).await;
    let long = format!("please look at this log\n{}", filler("log", 15_000));
    assert_eq!(world.prompt(&long).await, PromptOutcome::Answered);
    prompts.push(long);
    assert!(world.observed.retries() >= 1);
    assert_recovered(&world, &prompts).await;
}

#[tokio::test]
async fn an_overflow_after_a_tool_result_is_compacted_and_retried() {
    let mut world = World::new(provider(1.0, coder())).await;
    std::fs::write(world.work().join("big.txt"), filler("big", 33_000)).unwrap();
    let mut prompts = history(&mut world, 1).await;
    assert_eq!(world.prompt("READ big.txt").await, PromptOutcome::Answered);
    prompts.push("READ big.txt".to_owned());
    assert!(world.observed.retries() >= 1);
    // The split turn's beginning (the request, the call, the file) went into the summary the
    // retried request starts with.
    let retried = world.model.requests().last().cloned().unwrap();
    let AgentMessage::User(summary) = &retried.messages[0] else {
        panic!("{:?}", retried.messages[0]);
    };
    let summary = text_of(&summary.content);
    assert!(
        summary.contains("compacted") && summary.contains("big.txt"),
        "{summary}"
    );
    assert!(!answered_with(&world).is_empty());
    assert_recovered(&world, &prompts).await;
}

#[tokio::test]
async fn an_overflow_between_two_tool_calls_of_one_turn_is_compacted_and_retried() {
    let mut world = World::new(provider(1.0, coder())).await;
    std::fs::write(world.work().join("small.txt"), "fn main() {}\n").unwrap();
    std::fs::write(world.work().join("big.txt"), filler("big", 30_000)).unwrap();
    let mut prompts = history(&mut world, 2).await;
    let prompt = "STEPS small.txt big.txt small.txt";
    assert_eq!(world.prompt(prompt).await, PromptOutcome::Answered);
    prompts.push(prompt.to_owned());
    assert!(world.observed.retries() >= 1);
    assert_recovered(&world, &prompts).await;
}

#[tokio::test]
async fn parallel_tool_calls_overflowing_together_are_recovered() {
    let mut world = World::new(provider(1.0, coder())).await;
    for name in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(world.work().join(name), filler(name, 12_000)).unwrap();
    }
    let prompts = vec!["READ a.txt b.txt c.txt".to_owned()];
    assert_eq!(world.prompt(&prompts[0]).await, PromptOutcome::Answered);
    assert_recovered(&world, &prompts).await;
}

#[tokio::test]
async fn a_provider_counting_half_again_as_much_is_caught_up_with() {
    let mut world = World::new(provider(1.5, coder())).await;
    std::fs::write(world.work().join("big.txt"), filler("big", 20_000)).unwrap();
    let mut prompts = history(&mut world, 6).await;
    for prompt in ["READ big.txt", "question after", "READ big.txt"] {
        let outcome = world.prompt(prompt).await;
        assert_eq!(outcome, PromptOutcome::Answered, "{prompt}");
        prompts.push(prompt.to_owned());
    }
    let limit = (WINDOW as f64 * 4.0 / 1.5) as usize;
    assert!(world.last_request_chars() <= limit);
    assert_eq!(world.user_texts().await, prompts);
}

#[tokio::test]
async fn a_turn_that_cannot_fit_is_reported_in_one_line_and_the_next_prompt_recovers() {
    let mut world = World::new(provider(1.0, coder())).await;
    let huge = filler("paste", 40_000);
    let outcome = world.prompt(&huge).await;
    let PromptOutcome::Failed(message) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(message.contains("does not fit"), "{message}");
    assert!(!message.contains('\n'), "{message}");
    // The next, small prompt compacts the huge one away instead of failing the same way.
    assert_eq!(world.prompt("question").await, PromptOutcome::Answered);
    assert_eq!(world.user_texts().await, [huge, "question".to_owned()]);
}

#[tokio::test]
async fn threshold_compaction_runs_after_a_turn_and_the_next_prompt_goes_on() {
    let mut world = World::new(provider(1.0, coder())).await;
    let prompts = history(&mut world, 12).await;
    assert!(world.compactions().await >= 1);
    assert!(world.observed.retries() == 0);
    assert_eq!(world.user_texts().await, prompts);
}

/// Blocks every summary until cancelled.
pub struct Hanging;

impl ctxkit_summarizer::Summarizer for Hanging {
    fn name(&self) -> String {
        "hanging".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        _request: ctxkit_summarizer::SummaryRequest,
        cancel: tokio_util::sync::CancellationToken,
    ) -> BoxFuture<'_, Result<ctxkit_summarizer::SummaryResponse, ctxkit_summarizer::SummarizerError>>
    {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(ctxkit_summarizer::SummarizerError::new(
                "cancelled".to_owned(),
            ))
        })
    }
}

#[tokio::test]
async fn cancelling_the_overflow_compaction_interrupts_the_turn_and_writes_no_compaction() {
    let settings =
        ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!({})));
    let mut world =
        World::with_summarizer(provider(1.0, coder()), settings, Arc::new(Hanging)).await;
    let prompts = history(&mut world, 6).await;
    let hanging = world.engine.clone();
    let canceller = tokio::spawn(async move {
        while !hanging.is_compacting() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        hanging.cancel_compaction();
    });
    let long = format!("look\n{}", filler("log", 15_000));
    assert_eq!(world.prompt(&long).await, PromptOutcome::Interrupted);
    canceller.await.unwrap();
    assert_eq!(world.compactions().await, 0);
    let mut expected = prompts;
    expected.push(long);
    assert_eq!(world.user_texts().await, expected);
}

/// Answers approvals from a list and counts the questions.
struct Answers(Vec<Approval>, usize);

impl Approver for Answers {
    fn approve<'a>(&'a mut self, tool: &'a str, question: &'a str) -> BoxFuture<'a, Approval> {
        assert_eq!(tool, "bash");
        assert!(question.contains("echo hi"), "{question}");
        let answer = self.0.get(self.1).copied().unwrap_or(Approval::Deny);
        self.1 += 1;
        Box::pin(async move { answer })
    }
}

fn shell() -> Arc<Behaviour> {
    Arc::new(
        |model: &ScriptedModel, request: &ChatRequest, input: u64| match last(request) {
            AgentMessage::User(_) => {
                model.calls(&[("c1", "bash", json!({"command": "echo hi"}))], input)
            }
            AgentMessage::ToolResult(result) => {
                model.text(&format!("result: {}", text_of(&result.content)), input)
            }
            _ => model.text("?", input),
        },
    )
}

#[tokio::test]
async fn risky_calls_are_asked_about_and_always_means_always() {
    let mut world = World::new(provider(1.0, shell())).await;
    let observer = Arc::clone(&world.observed);
    let outcome = world
        .agent
        .prompt("run it".to_owned(), &mut DenyAll, observer.as_ref())
        .await
        .unwrap();
    assert_eq!(outcome, PromptOutcome::Answered);
    assert!(answered_with(&world).contains("nobody can be asked"));
    let mut answers = Answers(vec![Approval::Always], 0);
    for _ in 0..2 {
        world
            .agent
            .prompt("run it".to_owned(), &mut answers, observer.as_ref())
            .await
            .unwrap();
        assert!(answered_with(&world).contains("hi"));
    }
    assert_eq!(answers.1, 1, "asked once, then always allowed");
}

/// Reads eight files one call at a time, then recalls the first result the view shows pruned.
fn recaller() -> Arc<Behaviour> {
    Arc::new(|model: &ScriptedModel, request: &ChatRequest, input: u64| {
        if let Some(read) = next_of_eight_reads(model, request, input) {
            return read;
        }
        if let AgentMessage::ToolResult(result) = last(request)
            && result.tool_name == "recall"
        {
            let text = text_of(&result.content);
            return model.text(&format!("recalled {} characters", text.len()), input);
        }
        let marker = request.messages.iter().find_map(|message| {
            let text = text_of(&message.as_tool_result()?.content);
            let start = text.find("ctxkit://tool-result/")?;
            let reference: String = text[start..]
                .chars()
                .take_while(|character| *character != ']')
                .collect();
            Some(reference)
        });
        match marker {
            Some(reference) => {
                model.calls(&[("r1", "recall", json!({"reference": reference}))], input)
            }
            None => model.text("nothing was pruned", input),
        }
    })
}

#[tokio::test]
async fn a_pruned_tool_result_can_be_recalled_whole() {
    // The plain rule (cut at every call): eight reads are too few for pruning to pay by default.
    let settings = ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(
        &json!({"transforms": {"pruneWhenItPays": false}}),
    ));
    let mut world = World::with_settings(provider(1.0, recaller()), settings).await;
    for index in 0..8 {
        std::fs::write(
            world.work().join(format!("f{index}.txt")),
            filler(&format!("file {index}"), 1_500),
        )
        .unwrap();
    }
    assert_eq!(world.prompt("read them all").await, PromptOutcome::Answered);
    let answer = answered_with(&world);
    assert!(answer.starts_with("recalled "), "{answer}");
    let recalled: usize = answer["recalled ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(recalled >= 1_500, "the whole result came back: {answer}");
}

/// The read of `f<n>.txt` while fewer than eight of this turn's reads are done.
fn next_of_eight_reads(
    model: &ScriptedModel,
    request: &ChatRequest,
    input: u64,
) -> Option<AssistantMessage> {
    let done = results_this_turn(request);
    (done < 8).then(|| {
        let id = format!("read_{done}");
        let path = format!("f{done}.txt");
        model.calls(&[(id.as_str(), "read", json!({"path": path}))], input)
    })
}

/// Reads eight files one call at a time, then answers.
fn reader() -> Arc<Behaviour> {
    Arc::new(|model: &ScriptedModel, request: &ChatRequest, input: u64| {
        next_of_eight_reads(model, request, input).unwrap_or_else(|| model.text("read them", input))
    })
}

/// QA r99 (proto): with `defaultTools: ["-recall"]` the markers of cut results and the summaries
/// still told the model to call `recall`, a tool it was not offered. Without it, a marker keeps
/// what was cut and the names it held, and a summary no longer says how to read its originals.
#[tokio::test]
async fn without_recall_nothing_in_the_request_points_at_it() {
    let settings = ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(
        &json!({"transforms": {"pruneWhenItPays": false}}),
    ));
    let mut world = World::without_tool(provider(1.0, reader()), settings, "recall").await;
    for index in 0..8 {
        std::fs::write(
            world.work().join(format!("f{index}.txt")),
            filler(&format!("file {index}"), 1_500),
        )
        .unwrap();
    }
    assert_eq!(world.prompt("read them all").await, PromptOutcome::Answered);
    world.engine.compact(None).await.unwrap();
    assert_eq!(
        world.prompt("read them again").await,
        PromptOutcome::Answered
    );
    let requests = world.model.requests();
    let sent = format!("{requests:?}");
    assert!(!sent.contains("ctxkit://"), "a reference reached the model");
    assert!(
        !sent.contains("`recall`"),
        "the model was told to call recall"
    );
    assert!(sent.contains(" omitted"), "the view still cuts results");
    assert!(
        requests
            .iter()
            .all(|request| request.tools.iter().all(|tool| tool.name != "recall"))
    );
}

/// Writes eight files one call at a time, then recalls the first call the view shows cut.
fn call_recaller() -> Arc<Behaviour> {
    Arc::new(|model: &ScriptedModel, request: &ChatRequest, input: u64| {
        let done = results_this_turn(request);
        if done < 8 {
            let id = format!("write_{done}");
            let content = filler(&format!("file {done}"), 1_500);
            let arguments = json!({"path": format!("f{done}.txt"), "content": content});
            return model.calls(&[(id.as_str(), "write", arguments)], input);
        }
        if let AgentMessage::ToolResult(result) = last(request)
            && result.tool_name == "recall"
        {
            let text = text_of(&result.content);
            return model.text(&text, input);
        }
        let marker = request.messages.iter().find_map(|message| {
            let reply = message.as_assistant()?;
            let call = reply
                .content
                .iter()
                .find_map(|block| block.as_tool_call())?;
            let content = call.arguments["content"].as_str()?;
            let start = content.find("ctxkit://tool-call/")?;
            Some(
                content[start..]
                    .chars()
                    .take_while(|c| *c != ']')
                    .collect::<String>(),
            )
        });
        match marker {
            Some(reference) => {
                model.calls(&[("r1", "recall", json!({"reference": reference}))], input)
            }
            None => model.text("no call was cut", input),
        }
    })
}

#[tokio::test]
async fn a_cut_tool_call_can_be_recalled_whole() {
    let settings = ctxkit_agent::EngineSettings::from_settings(&ctxkit_settings::Settings::read(
        &json!({"contextStrategy": "recommended", "transforms": {"pruneWhenItPays": false}}),
    ));
    let mut world = World::with_settings(provider(1.0, call_recaller()), settings).await;
    assert_eq!(
        world.prompt("write them all").await,
        PromptOutcome::Answered
    );
    let answer = answered_with(&world);
    // The first call, as the session stores it: every line of the file it wrote.
    assert!(
        answer.starts_with("write (call write_0)\npath: f0.txt\ncontent:\n"),
        "{answer}"
    );
    assert!(answer.contains(&filler("file 0", 1_500)), "{answer}");
    // The file itself was written whole.
    let written = std::fs::read_to_string(world.work().join("f0.txt")).unwrap();
    assert_eq!(written, filler("file 0", 1_500));
}

#[tokio::test]
async fn a_reply_streams_to_the_observer_before_it_is_stored() {
    let mut world = World::new(provider(1.0, coder())).await;
    std::fs::write(world.work().join("a.txt"), "alpha").unwrap();
    assert_eq!(world.prompt("READ a.txt").await, PromptOutcome::Answered);
    let events = world.observed.0.lock().unwrap().clone();
    let streamed: String = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Delta(ChatDelta::Text(text)) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "I have read it. Done.");
    let call_started = events
        .iter()
        .position(|event| matches!(event, AgentEvent::Delta(ChatDelta::ToolCall { name }) if name == "read"))
        .unwrap();
    let first_reply = events
        .iter()
        .position(|event| matches!(event, AgentEvent::Reply { .. }))
        .unwrap();
    assert!(call_started < first_reply);
    let last_delta = events
        .iter()
        .rposition(|event| matches!(event, AgentEvent::Delta(_)))
        .unwrap();
    let last_reply = events
        .iter()
        .rposition(|event| matches!(event, AgentEvent::Reply { .. }))
        .unwrap();
    assert!(last_delta < last_reply);
}

#[tokio::test]
async fn a_reply_reports_an_overflow_only_when_the_engine_recovers_one() {
    // An overflow error labelled with another model: the engine's check does not recover it (its
    // window is not this model's), so the reply must not be reported as an overflow either.
    let foreign = Arc::new(|model: &ScriptedModel, _: &ChatRequest, _: u64| {
        let mut reply = model.overflow();
        reply.model = Some("another-model".to_owned());
        reply
    });
    let mut world = World::new(provider(1.0, foreign)).await;
    assert!(matches!(
        world.prompt("hello").await,
        PromptOutcome::Failed(_)
    ));
    let overflow_flags: Vec<bool> = world
        .observed
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            AgentEvent::Reply { overflow, .. } => Some(*overflow),
            _ => None,
        })
        .collect();
    assert_eq!(overflow_flags, [false]);
    assert_eq!(world.observed.retries(), 0);
    assert_eq!(world.compactions().await, 0);

    // The same error from this model is an overflow to both.
    let own = Arc::new(|model: &ScriptedModel, _: &ChatRequest, _: u64| model.overflow());
    let mut world = World::new(provider(1.0, own)).await;
    world.prompt("hello").await;
    let first_flag = world
        .observed
        .0
        .lock()
        .unwrap()
        .iter()
        .find_map(|event| match event {
            AgentEvent::Reply { overflow, .. } => Some(*overflow),
            _ => None,
        });
    assert_eq!(first_flag, Some(true));
}

/// QA r103 (embed): an embedder's `Agent::prompt` records the model and thinking level a new
/// session starts with, as Pi 1.6.0 and ctxkit's own surfaces do, so Pi continues the file with
/// both; the second prompt records nothing more.
#[tokio::test]
async fn a_new_sessions_first_entries_are_its_model_and_thinking_level() {
    let mut world = World::new(provider(1.0, coder())).await;
    world.prompt("hello").await;
    world.prompt("again").await;
    let session = world.reload().await;
    let kinds: Vec<&str> = session
        .entries()
        .iter()
        .map(|entry| entry.type_name())
        .collect();
    assert_eq!(
        kinds[..3],
        ["model_change", "thinking_level_change", "message"],
        "{kinds:?}"
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|kind| kind.ends_with("_change"))
            .count(),
        2,
        "{kinds:?}"
    );
    let context = session.build_context();
    assert_eq!(context.thinking_level, "off");
    assert_eq!(
        context.model.and_then(|model| model.model_id).as_deref(),
        Some("coder")
    );
}

//! Issue 41's small windows over `ctxkit serve --stdio` `agent.run`: a model of 8k, 16k or 32k
//! tokens (`llm.models`, `maxOutput` 2048) answers every prompt of a tool-heavy task on each wire
//! format, with no request (summaries included) carrying less output room than its floor (the
//! model's `maxOutput` within a quarter of the window) and at most one refused request; a provider
//! whose real limit is below the configured window is refused at most once; an endpoint refusing
//! the message-threads and on-demand compaction betas answers every prompt with at most one
//! refused request per beta.

pub(crate) mod mock;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use mock::{Counts, Endpoint, FILE_MARKER, LOG_MARKER};

use crate::serve::Server;
use crate::serve_in_run::mock::Format;

const MODEL_ID: &str = "test-model";
const PROMPTS: usize = 6;
const MAX_OUTPUT: u64 = 2048;

/// Per prompt: two source files of about a tenth of the window each, two build logs of about a
/// fifteenth.
fn write_project(project: &Path, window: usize) {
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir_all(project.join("logs")).unwrap();
    for prompt in 0..PROMPTS {
        for part in ["a", "b"] {
            let source: String = (0..window / 220)
                .map(|line| format!("// {FILE_MARKER} {line:03} of module {prompt}{part}: the parser reads tokens, builds the tree\n"))
                .collect();
            std::fs::write(
                project.join(format!("src/module-{prompt}-{part}.rs")),
                source,
            )
            .unwrap();
            let log: String = (0..window / 330)
                .map(|line| format!("{LOG_MARKER} {line:03} Compiling crate-{prompt}{part} v0.1.0 (/work/crate-{prompt}{part}) ok\n"))
                .collect();
            std::fs::write(project.join(format!("logs/build-{prompt}-{part}.log")), log).unwrap();
        }
    }
}

fn write_settings(home: &Path, format: Format, url: &str, window: usize, extra: &Value) {
    let base_url = match format {
        Format::Anthropic => url.to_owned(),
        Format::Chat | Format::Responses | Format::Gemini => format!("{url}/v1"),
    };
    let mut settings = json!({
        "defaultProvider": "mock",
        "defaultModel": format!("mock/{MODEL_ID}"),
        "llm": {
            "api": format.api(),
            "baseUrl": base_url,
            "apiKey": "mock-key",
            "models": [{"provider": "mock", "id": MODEL_ID, "contextWindow": window, "maxOutput": MAX_OUTPUT,
                        "reasoning": extra.get("defaultThinkingLevel").is_some()}]
        },
        "retry": {"enabled": false},
    });
    for (key, value) in extra.as_object().unwrap() {
        match (settings.get_mut(key), value) {
            (Some(Value::Object(base)), Value::Object(over)) => {
                base.extend(over.clone());
            }
            _ => settings[key] = value.clone(),
        }
    }
    std::fs::write(home.join("settings.json"), settings.to_string()).unwrap();
}

/// The outcome of one run.
#[derive(Debug)]
struct Run {
    answered: usize,
    counts: Counts,
    /// The server's `event` notifications' parameters, in order.
    events: Vec<Value>,
}

/// Runs the task against `endpoint` with a configured window of `window`.
fn run(endpoint: Endpoint, window: usize, extra: &Value) -> Run {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    write_project(&project, window);
    let prompt = Arc::new(Mutex::new(0));
    let counts = Arc::new(Mutex::new(Counts::default()));
    let url = mock::start(endpoint, Arc::clone(&prompt), Arc::clone(&counts));
    write_settings(home.path(), endpoint.format, &url, window, extra);
    let mut serve = Server::start_in(home.path(), &project);
    serve.call("initialize", Value::Null);
    serve.call("session.create", json!({"cwd": project}));
    let mut answered = 0;
    for number in 0..PROMPTS {
        *prompt.lock().unwrap() = number;
        let text = format!(
            "prompt {number}: read both modules, run both builds, then tell me if it works"
        );
        let run = serve.call("agent.run", json!({"text": text, "approve": "all"}));
        let replied = serve.notifications.iter().any(|message| {
            message["method"] == "agent_event"
                && message["params"]["type"] == "reply"
                && message["params"]["message"]
                    .to_string()
                    .contains(&format!("ANSWER-{number}:"))
        });
        answered += usize::from(replied && run["result"]["outcome"] == "answered");
    }
    let done = serve.call("shutdown", Value::Null);
    assert_eq!(done["result"], json!({}));
    assert!(serve.child.wait().unwrap().success());
    let counts = std::mem::take(&mut *counts.lock().unwrap());
    let events = serve
        .notifications
        .iter()
        .filter(|message| message["method"] == "event")
        .map(|message| message["params"].clone())
        .collect();
    Run {
        answered,
        counts,
        events,
    }
}

fn report(label: &str, run: &Run) {
    #[allow(clippy::print_stderr, reason = "the scenario's numbers are reported")]
    {
        let counts = &run.counts;
        eprintln!(
            "issue-41 {label}: answered {}/{PROMPTS}, model requests {}, refused {} (summaries {}), \
             below the floor {} (summaries {}), smallest output room {:?}, summaries {}, largest accepted {}, \
             refused betas {:?}",
            run.answered,
            counts.chat_requests,
            counts.refused,
            counts.refused_summaries,
            counts.below_floor,
            counts.summaries_below_floor,
            counts.smallest_room,
            counts.summaries,
            counts.largest_accepted,
            counts.beta_refused
        );
    }
}

fn assert_small_windows(format: Format) {
    // An empty settings file (the recommended strategy), then the reference's budgets.
    for extra in [json!({}), json!({"contextStrategy": "reference"})] {
        assert_small_windows_with(format, &extra);
    }
}

fn assert_small_windows_with(format: Format, extra: &Value) {
    for window in [8_192, 16_384, 32_768] {
        let endpoint = Endpoint {
            format,
            limit: window,
            floor: MAX_OUTPUT.min(window as u64 / 8),
            refuse_betas: false,
        };
        let run = run(endpoint, window, extra);
        report(&format!("{format:?} window {window} {extra}"), &run);
        assert_eq!(run.answered, PROMPTS, "{format:?} {window}: {run:?}");
        assert_eq!(run.counts.below_floor, 0, "{format:?} {window}: {run:?}");
        assert_eq!(
            run.counts.summaries_below_floor, 0,
            "{format:?} {window}: {run:?}"
        );
        assert!(
            run.counts.refused + run.counts.refused_summaries <= 1,
            "{format:?} {window}: {run:?}"
        );
        // At 32k the default pruning of old tool results keeps the task under the threshold.
        if window < 32_768 {
            assert!(
                run.counts.summaries >= 1,
                "{format:?} {window}: the task needs compaction"
            );
        }
    }
    // A provider whose real limit (10,000) is below the configured window (16,384).
    let endpoint = Endpoint {
        format,
        limit: 10_000,
        floor: MAX_OUTPUT,
        refuse_betas: false,
    };
    let run = run(endpoint, 16_384, extra);
    report(
        &format!("{format:?} limit 10000 under a window of 16384 {extra}"),
        &run,
    );
    assert_eq!(run.answered, PROMPTS, "{format:?}: {run:?}");
    assert!(
        run.counts.refused + run.counts.refused_summaries <= 1,
        "{format:?}: {run:?}"
    );
}

#[test]
fn small_windows_answer_every_prompt_over_chat_completions() {
    assert_small_windows(Format::Chat);
}

#[test]
fn small_windows_answer_every_prompt_over_anthropic_messages() {
    assert_small_windows(Format::Anthropic);
}

#[test]
fn small_windows_answer_every_prompt_over_openai_responses() {
    assert_small_windows(Format::Responses);
}

#[test]
fn small_windows_answer_every_prompt_over_gemini() {
    assert_small_windows(Format::Gemini);
}

/// QA r97 (serve): after the provider stated a limit below the configured window, the
/// `context_usage` event still read the context against the configured window, where the chat's
/// status line reads it against the limit in force (compactions fire against it).
#[test]
fn context_usage_reads_against_the_limit_the_provider_stated() {
    let endpoint = Endpoint {
        format: Format::Chat,
        limit: 10_000,
        floor: MAX_OUTPUT,
        refuse_betas: false,
    };
    let run = run(endpoint, 16_384, &json!({}));
    assert_eq!(
        run.counts.refused, 1,
        "the provider stated its limit: {run:?}"
    );
    let usage: Vec<&Value> = run
        .events
        .iter()
        .filter(|event| event["type"] == "context_usage")
        .collect();
    // The refused request's recovery compaction (the first, `tokens` unknown after it) is read
    // against the stated limit, and so is everything after it.
    let recovery = usage
        .iter()
        .position(|event| event["tokens"].is_null())
        .expect("a compaction");
    for event in &usage[recovery..] {
        assert_eq!(
            (
                &event["context_window"],
                &event["configured_window"],
                &event["limit_learned"]
            ),
            (&json!(10_000), &json!(16_384), &json!(true)),
            "{event}"
        );
    }
    // Before the refusal the configured window was in force, and said so.
    let first = usage.first().unwrap();
    assert_eq!(
        (&first["context_window"], &first["limit_learned"]),
        (&json!(16_384), &json!(false)),
        "{first}"
    );
    let last = usage.last().unwrap();
    if let Some(percent) = last["percent"].as_f64() {
        let tokens = last["tokens"].as_f64().unwrap();
        assert!((percent - tokens / 100.0).abs() < 0.01, "{last}");
    }
}

#[test]
fn an_endpoint_refusing_each_beta_is_asked_once_per_beta() {
    let endpoint = Endpoint {
        format: Format::Anthropic,
        limit: 16_384,
        floor: MAX_OUTPUT,
        refuse_betas: true,
    };
    let extra = json!({
        "llm": {"anthropic": {"supportsMessageThreads": true}},
        "compaction": {"provider": "on-demand"},
    });
    let run = run(endpoint, 16_384, &extra);
    report("Anthropic gateway refusing the betas", &run);
    assert_eq!(run.answered, PROMPTS, "{run:?}");
    let refused = &run.counts.beta_refused;
    assert_eq!(
        refused.get("message-threads-2026-08-12"),
        Some(&1),
        "{run:?}"
    );
    // The task compacts: the first on-demand request is refused, the offline summary writes that
    // compaction and every later one without asking the endpoint again.
    assert_eq!(refused.get("compact-2026-09-04"), Some(&1), "{run:?}");
}

#[test]
fn summaries_carry_the_sessions_reasoning_level() {
    // Pi 1.6 asks for every summary at the session's thinking level on a reasoning model.
    let endpoint = Endpoint {
        format: Format::Chat,
        limit: 16_384,
        floor: MAX_OUTPUT,
        refuse_betas: false,
    };
    let run = run(endpoint, 16_384, &json!({"defaultThinkingLevel": "high"}));
    report("Chat Completions at defaultThinkingLevel high", &run);
    assert_eq!(run.answered, PROMPTS, "{run:?}");
    assert!(
        run.counts
            .chat_reasoning
            .iter()
            .all(|level| level == "high"),
        "{run:?}"
    );
    assert!(!run.counts.summary_reasoning.is_empty());
    assert!(
        run.counts
            .summary_reasoning
            .iter()
            .all(|level| level == "high"),
        "{run:?}"
    );
}

/// `ctxkit chat` with a 16k local-style model (Chat Completions, `maxOutput` 2048) works through
/// the whole task without `/compact`: every prompt answered, no request below the floor.
#[test]
fn chat_with_a_16k_local_model_works_through_a_long_task() {
    // A terminal test that skipped would pass without having run: `.ci/run` installs tmux.
    assert!(
        crate::chat::Tmux::available(),
        "tmux is needed: apt-get install -y tmux"
    );
    let window = 16_384;
    let endpoint = Endpoint {
        format: Format::Chat,
        limit: window,
        floor: MAX_OUTPUT,
        refuse_betas: false,
    };
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    write_project(&project, window);
    let prompt = Arc::new(Mutex::new(0));
    let counts = Arc::new(Mutex::new(Counts::default()));
    let url = mock::start(endpoint, Arc::clone(&prompt), Arc::clone(&counts));
    write_settings(home.path(), Format::Chat, &url, window, &json!({}));
    let chat = crate::chat::start_chat(&project, home.path(), "--yes");
    chat.wait_idle(1);
    for number in 0..PROMPTS {
        *prompt.lock().unwrap() = number;
        chat.line(&format!(
            "prompt {number}: read both modules, run both builds, then tell me if it works"
        ));
        chat.wait_for(&format!("ANSWER-{number}:"));
        chat.wait_idle(number + 2);
    }
    let screen = chat.screen();
    let counts = std::mem::take(&mut *counts.lock().unwrap());
    let run = Run {
        answered: PROMPTS,
        counts,
        events: Vec::new(),
    };
    report("chat (tmux) with a 16k model", &run);
    assert!(!screen.contains("output token limit"), "{screen}");
    assert!(screen.contains("Compacted"), "{screen}");
    assert_eq!(run.counts.below_floor, 0, "{run:?}");
    assert_eq!(run.counts.summaries_below_floor, 0, "{run:?}");
    assert!(
        run.counts.refused + run.counts.refused_summaries <= 1,
        "{run:?}"
    );
}

/// `ctxkit chat` against a gateway refusing the threads and on-demand compaction betas, with a
/// priced model: the refusal is said once on screen with the setting that turns the feature off,
/// the status line shows the spend, and `/cost` breaks it down.
#[test]
fn chat_says_a_refused_beta_once_and_shows_what_the_session_spent() {
    // A terminal test that skipped would pass without having run: `.ci/run` installs tmux.
    assert!(
        crate::chat::Tmux::available(),
        "tmux is needed: apt-get install -y tmux"
    );
    let window = 16_384;
    let endpoint = Endpoint {
        format: Format::Anthropic,
        limit: window,
        floor: MAX_OUTPUT,
        refuse_betas: true,
    };
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    write_project(&project, window);
    let prompt = Arc::new(Mutex::new(0));
    let counts = Arc::new(Mutex::new(Counts::default()));
    let url = mock::start(endpoint, Arc::clone(&prompt), Arc::clone(&counts));
    let priced = json!({
        "llm": {
            "anthropic": {"supportsMessageThreads": true},
            "models": [{"provider": "mock", "id": MODEL_ID, "contextWindow": window,
                        "maxOutput": MAX_OUTPUT,
                        "cost": {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}}]
        },
        "compaction": {"provider": "on-demand"},
    });
    write_settings(home.path(), Format::Anthropic, &url, window, &priced);
    let chat = crate::chat::start_chat(&project, home.path(), "--yes");
    chat.wait_idle(1);
    for number in 0..2 {
        *prompt.lock().unwrap() = number;
        chat.line(&format!(
            "prompt {number}: read both modules, run both builds, then tell me if it works"
        ));
        chat.wait_for(&format!("ANSWER-{number}:"));
        chat.wait_idle(number + 2);
    }
    let screen = chat.wait_for("spent");
    let notice = "does not take the `message-threads-2026-08-12` beta";
    assert_eq!(screen.matches(notice).count(), 1, "{screen}");
    assert!(
        screen.contains("llm.anthropic.supportsMessageThreads: false"),
        "{screen}"
    );
    assert!(screen.contains("% cache reads"), "{screen}");
    chat.line("/cost");
    let screen = chat.wait_for("model calls");
    assert!(screen.contains("  requests "), "{screen}");
    let refused = &counts.lock().unwrap().beta_refused;
    assert_eq!(
        refused.get("message-threads-2026-08-12"),
        Some(&1),
        "{refused:?}"
    );
}

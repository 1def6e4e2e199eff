//! Model-view preparation per call (context + transforms + convertToLlm) on a 1000-message
//! context: `cargo bench -p ctxkit-engine --bench view`.

use std::sync::Arc;

use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use serde_json::json;

fn main() {
    divan::main();
}

fn message(value: serde_json::Value) -> AgentMessage {
    serde_json::from_value(value).unwrap_or_else(|error| panic!("bench message: {error}"))
}

/// A session of `count` messages: a user task, then tool-call/tool-result pairs with outputs of
/// a few hundred bytes to 20 KB, and a user message every 50 messages.
fn engine(count: usize) -> (tokio::runtime::Runtime, Engine) {
    engine_with(count, EngineSettings::default(), false)
}

/// [`engine`] under `settings`; with `writes`, every tenth call a `write` of a 60-line file.
fn engine_with(
    count: usize,
    settings: EngineSettings,
    writes: bool,
) -> (tokio::runtime::Runtime, Engine) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap_or_else(|error| panic!("runtime: {error}"));
    let engine = Engine::new(
        Session::in_memory("/bench"),
        EngineOptions {
            settings,
            model: Some(ModelInfo {
                provider: "bench".into(),
                id: "bench".into(),
                context_window: 1_000_000,
                cache: None,
            }),
            summarizer: Arc::new(OfflineSummarizer::default()),
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: None,
        },
    );
    runtime.block_on(async {
        let mut index = 0;
        while index < count {
            let value = if index % 50 == 0 {
                json!({"role": "user", "content": format!("step {index}: continue the refactoring of src/module_{index}.rs"), "timestamp": index})
            } else if writes && index % 20 == 1 {
                let content: String = (0..60).map(|line| format!("pub fn item_{line}() -> u64 {{ {line} }}\n")).collect();
                json!({"role": "assistant", "content": [
                    {"type": "toolCall", "id": format!("call-{index}"), "name": "write", "arguments": {"path": format!("src/module_{index}.rs"), "content": content}}
                ], "provider": "bench", "model": "bench", "stopReason": "toolUse",
                   "usage": {"input": 1000 + index, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050 + index},
                   "timestamp": index})
            } else if index % 2 == 1 {
                json!({"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "I should look at the file first. ".repeat(4)},
                    {"type": "toolCall", "id": format!("call-{index}"), "name": "read", "arguments": {"path": format!("src/module_{index}.rs")}}
                ], "provider": "bench", "model": "bench", "stopReason": "toolUse",
                   "usage": {"input": 1000 + index, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050 + index},
                   "timestamp": index})
            } else {
                let lines = if index % 20 == 0 { 400 } else { 8 };
                let text: String = (0..lines).map(|line| format!("{line:>4}  fn item_{line}() -> u64 {{ {line} }}\n")).collect();
                json!({"role": "toolResult", "toolCallId": format!("call-{}", index - 1), "toolName": "read",
                       "content": [{"type": "text", "text": text}], "isError": false, "timestamp": index})
            };
            engine
                .append(message(value))
                .await
                .unwrap_or_else(|error| panic!("append: {error}"));
            index += 1;
        }
    });
    (runtime, engine)
}

/// Times `Engine::model_view` on a built engine.
fn bench_model_view(bencher: divan::Bencher, (runtime, engine): (tokio::runtime::Runtime, Engine)) {
    bencher.bench_local(|| {
        runtime
            .block_on(engine.model_view())
            .unwrap_or_else(|error| panic!("view: {error}"))
    });
}

#[divan::bench(args = [100, 1000])]
fn model_view(bencher: divan::Bencher, count: usize) {
    bench_model_view(bencher, engine(count));
}

#[divan::bench(args = [1000])]
fn transcript_parsed_every_call(bencher: divan::Bencher, count: usize) {
    let (runtime, engine) = engine(count);
    bencher.bench_local(|| {
        runtime
            .block_on(engine.transcript())
            .unwrap_or_else(|error| panic!("transcript: {error}"))
    });
}

/// The pure part of `model_view`: transforms and the provider form over an already-read transcript.
#[divan::bench(args = [1000])]
fn build_view_only(bencher: divan::Bencher, count: usize) {
    let (runtime, engine) = engine(count);
    let transcript: Vec<std::sync::Arc<AgentMessage>> = runtime
        .block_on(engine.transcript())
        .unwrap_or_else(|error| panic!("transcript: {error}"))
        .into_iter()
        .map(std::sync::Arc::new)
        .collect();
    let settings = EngineSettings::default();
    bencher.bench_local(|| ctxkit_engine::build_view(&transcript, &settings, 1_000_000));
}

/// The recommended strategy's view (the defaults a user gets) over the context with writes: every
/// result but the latest cut with a digest, and the long arguments of those results' calls.
#[divan::bench(args = [1000])]
fn model_view_recommended(bencher: divan::Bencher, count: usize) {
    bench_model_view(
        bencher,
        engine_with(count, EngineSettings::recommended(), true),
    );
}

/// [`model_view_recommended`] with `transforms.pruneToolCalls` off: what cutting the calls costs.
#[divan::bench(args = [1000])]
fn model_view_recommended_calls_whole(bencher: divan::Bencher, count: usize) {
    let mut settings = EngineSettings::recommended();
    settings.transforms.prune_tool_calls = false;
    bench_model_view(bencher, engine_with(count, settings, true));
}

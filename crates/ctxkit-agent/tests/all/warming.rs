//! Cache warming over a model whose requests write a prompt cache: a refresh is sent between runs
//! only when Pi's rule says it pays, recorded as a `cache_warm` usage entry outside the context,
//! never for a model without caching or with warming off, and stopped by the next prompt and by a
//! compaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ctxkit_agent::testing::ScriptedModel;
use ctxkit_agent::{
    Agent, AgentOptions, CacheWarmer, CacheWarming, ChatModel, IgnoreEvents, PromptCache,
    ToolRegistry,
};
use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_llm::ChatRequest;
use ctxkit_models::ModelPrices;
use ctxkit_protocol::{AssistantMessage, EntryKind, Usage};
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use futures::future::BoxFuture;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The wait before each refresh in these tests.
const DELAY: Duration = Duration::from_millis(40);

/// A model whose every request reports `prompt_tokens` read from a prompt cache.
struct CachingModel {
    scripted: ScriptedModel,
    prompt_tokens: u64,
    caches: bool,
    refreshes: AtomicUsize,
}

impl CachingModel {
    fn new(prompt_tokens: u64, caches: bool) -> Arc<Self> {
        let info = ModelInfo {
            provider: "anthropic".into(),
            id: "claude-sonnet-4-5".into(),
            context_window: 1_000_000,
            cache: None,
        };
        Arc::new(Self {
            scripted: ScriptedModel::answering(info, &["Done."]),
            prompt_tokens,
            caches,
            refreshes: AtomicUsize::new(0),
        })
    }

    fn with_usage(&self, mut reply: AssistantMessage, usage: Usage) -> AssistantMessage {
        reply.usage = Some(usage);
        reply
    }
}

impl ChatModel for CachingModel {
    fn info(&self) -> ModelInfo {
        self.scripted.info()
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, AssistantMessage> {
        Box::pin(async move {
            let reply = self.scripted.chat(request, cancel).await;
            let usage = Usage {
                input: 5,
                cache_read: self.prompt_tokens - 5,
                output: 10,
                ..Usage::default()
            };
            self.with_usage(reply, usage)
        })
    }

    fn prompt_cache(&self, _request: &ChatRequest) -> Option<PromptCache> {
        self.caches.then_some(PromptCache {
            lifetime: Duration::from_secs(300),
            prices: Some(ModelPrices {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
                tiers: Vec::new(),
            }),
        })
    }

    fn refresh_cache<'a>(
        &'a self,
        request: &'a ChatRequest,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<AssistantMessage>> {
        Box::pin(async move {
            assert_eq!(request.max_tokens, Some(1024), "the request as it was sent");
            self.refreshes.fetch_add(1, Ordering::SeqCst);
            let reply = self.scripted.text("", 0);
            let usage = Usage {
                cache_read: self.prompt_tokens,
                output: 1,
                ..Usage::default()
            };
            Some(self.with_usage(reply, usage))
        })
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    engine: Engine,
    agent: Agent,
    warmer: Arc<CacheWarmer>,
}

async fn setup(model: Arc<CachingModel>, mode: CacheWarming) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::create("/work", &dir.path().join("sessions"));
    let engine = Engine::new(
        session,
        EngineOptions {
            settings: EngineSettings::from_settings(&ctxkit_settings::Settings::read(
                // The reference strategy: its threshold is the window's, so the large prompt
                // stays uncompacted and its cache is what the warming keeps.
                &json!({"contextStrategy": "reference", "compaction": {"keepRecentTokens": 1}}),
            )),
            model: None,
            summarizer: Arc::new(OfflineSummarizer::default()),
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: None,
        },
    );
    let mut agent = Agent::new(
        engine.clone(),
        model,
        ToolRegistry::coding(),
        AgentOptions {
            system_prompt: "You are a coding agent.".into(),
            max_tokens: Some(1024),
            reasoning: None,
            cwd: dir.path().to_owned(),
            bash_timeout: Duration::from_secs(10),
            shell: Default::default(),
            pass_env: Vec::new(),
            auto_resize_images: true,
            max_tool_output_bytes: None,
        },
    )
    .await;
    let warmer = Arc::new(CacheWarmer::new(mode, Some(DELAY)));
    agent.set_cache_warmer(Arc::clone(&warmer));
    Setup {
        _dir: dir,
        engine,
        agent,
        warmer,
    }
}

async fn prompt(setup: &mut Setup, text: &str) {
    setup
        .agent
        .prompt(text.into(), &mut ctxkit_agent::DenyAll, &IgnoreEvents)
        .await
        .unwrap();
}

/// The `cache_warm` usage entries of the session and the number of context messages.
async fn warm_entries(engine: &Engine) -> (usize, usize) {
    engine
        .with_session(|session| {
            let warms = session
                .entries()
                .iter()
                .filter(|entry| {
                    matches!(&entry.parse().unwrap().kind,
                        EntryKind::Usage(usage) if usage.kind == "cache_warm")
                })
                .count();
            (warms, session.build_context().messages.len())
        })
        .await
}

#[tokio::test]
async fn a_large_cached_prompt_is_kept_warm_between_runs_outside_the_context() {
    // 0.15 × (3.75 − 0.30) × 0.4 − 0.30 × 0.4 ≈ $0.087 ≥ $0.05.
    let model = CachingModel::new(400_000, true);
    let mut setup = setup(Arc::clone(&model), CacheWarming::Idle).await;
    prompt(&mut setup, "hello").await;
    // Waited for, not slept on: two refreshes written (a loaded machine may take longer than the
    // six delays an idle one needs), then, the warmer stopped, one entry per refresh sent.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while warm_entries(&setup.engine).await.0 < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "fewer than two refreshes"
        );
        tokio::time::sleep(DELAY).await;
    }
    setup.warmer.cancel();
    let (warms, context) = loop {
        let (warms, context) = warm_entries(&setup.engine).await;
        let sent = model.refreshes.load(Ordering::SeqCst);
        if warms == sent {
            break (warms, context);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{sent} refreshes sent, {warms} written"
        );
        tokio::time::sleep(DELAY).await;
    };
    assert!(warms >= 2, "{warms} refreshes");
    assert_eq!(context, 2, "usage entries are not in the context");
    let usage = setup
        .engine
        .with_session(|session| {
            let entry = session.entries().last().unwrap().parse().unwrap();
            let EntryKind::Usage(usage) = entry.kind else {
                panic!("the last entry is not a usage entry");
            };
            (usage.provider, usage.usage.cache_read, usage.usage.cost)
        })
        .await;
    assert_eq!(usage.0, "anthropic");
    assert_eq!(usage.1, 400_000);
    assert!(usage.2.is_some(), "a cost is always written");
}

#[tokio::test]
async fn a_refresh_that_would_not_pay_is_never_sent() {
    // 0.15 × 3.45 × 0.1 − 0.03 ≈ $0.022 < $0.05.
    let model = CachingModel::new(100_000, true);
    let mut setup = setup(Arc::clone(&model), CacheWarming::Idle).await;
    prompt(&mut setup, "hello").await;
    tokio::time::sleep(DELAY * 5).await;
    assert_eq!(model.refreshes.load(Ordering::SeqCst), 0);
    assert_eq!(warm_entries(&setup.engine).await.0, 0);
}

#[tokio::test]
async fn nothing_is_warmed_without_caching_or_with_warming_off_or_only_while_streaming() {
    for (caches, mode) in [
        (false, CacheWarming::Idle),
        (true, CacheWarming::Off),
        (true, CacheWarming::Streaming),
    ] {
        let model = CachingModel::new(900_000, caches);
        let mut setup = setup(Arc::clone(&model), mode).await;
        prompt(&mut setup, "hello").await;
        tokio::time::sleep(DELAY * 4).await;
        assert_eq!(
            model.refreshes.load(Ordering::SeqCst),
            0,
            "{caches} {mode:?}"
        );
    }
}

#[tokio::test]
async fn the_next_prompt_a_compaction_and_cancel_stop_the_warming() {
    let model = CachingModel::new(400_000, true);
    let mut setup = setup(Arc::clone(&model), CacheWarming::Idle).await;
    prompt(&mut setup, "hello").await;
    setup.warmer.cancel();
    tokio::time::sleep(DELAY * 4).await;
    assert_eq!(model.refreshes.load(Ordering::SeqCst), 0, "cancelled");

    prompt(&mut setup, "again").await;
    setup.engine.compact(None).await.unwrap();
    tokio::time::sleep(DELAY * 4).await;
    assert_eq!(
        model.refreshes.load(Ordering::SeqCst),
        0,
        "the compacted context is not the warmed request's"
    );
}

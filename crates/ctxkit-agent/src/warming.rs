//! Cache warming (`cacheWarming`: `off`, `streaming`, `idle`; Pi 1.5.1's names and default): after
//! each model request the [`CacheWarmer`] waits until shortly before the prompt cache entry it
//! wrote expires, and then, while the session's context still extends that request, re-sends it
//! with one output token when Pi's rule says the refresh pays (`ctxkit_llm::evaluate_cache_warming`:
//! at least $0.05 of expected miss cost saved). During a run (a long tool call) a next request is
//! certain; between runs (`idle`) it is weighed at Pi's 15% and kept up for 30 minutes at most.
//! Each refresh is recorded as a `usage` entry of kind `cache_warm`, outside the context. A refresh
//! never goes through the conversation's message thread, and nothing is warmed for a model without
//! prompt caching. The next prompt, a new request, and dropping the warmer cancel it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ctxkit_engine::Engine;
use ctxkit_llm::{
    ChatRequest, MAX_IDLE_AGE, MAX_STREAMING_AGE, WarmingPhase, evaluate_cache_warming,
};
use ctxkit_models::ModelPrices;
use tokio_util::sync::CancellationToken;

use crate::model::ChatModel;

/// `cacheWarming`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheWarming {
    Off,
    /// Only during a run.
    Streaming,
    /// During a run and between runs (Pi's default).
    #[default]
    Idle,
}

impl CacheWarming {
    /// `off`, `streaming` or `idle`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "off" => Some(Self::Off),
            "streaming" => Some(Self::Streaming),
            "idle" => Some(Self::Idle),
            _ => None,
        }
    }
}

/// What a model's requests write to a prompt cache.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptCache {
    /// How long an entry lives.
    pub lifetime: Duration,
    /// The model's prices; `None` when unknown (nothing is warmed then).
    pub prices: Option<ModelPrices>,
}

/// Keeps the prompt cache entry of an agent's last request warm (see the module's text). Share it
/// between the agents of one session (`Agent::set_cache_warmer`): a new request replaces the run.
#[derive(Debug)]
pub struct CacheWarmer {
    mode: CacheWarming,
    /// The wait before each refresh instead of the one derived from the cache's lifetime
    /// (tests, and gateways whose cache lives shorter).
    delay: Option<Duration>,
    run: Mutex<Option<Run>>,
}

/// The warming of one request.
#[derive(Debug)]
struct Run {
    cancel: CancellationToken,
    /// Set when the run that sent the request has ended.
    idle: Arc<AtomicBool>,
}

/// What a warming task needs.
struct Warming {
    engine: Engine,
    model: Arc<dyn ChatModel>,
    request: ChatRequest,
    /// The session's leaf when the request was sent.
    leaf: Option<String>,
    prices: Option<ModelPrices>,
    delay: Duration,
    idle: Arc<AtomicBool>,
    cancel: CancellationToken,
}

impl CacheWarmer {
    /// A warmer in `mode`; `delay` replaces the wait derived from the cache's lifetime.
    pub fn new(mode: CacheWarming, delay: Option<Duration>) -> Self {
        Self {
            mode,
            delay,
            run: Mutex::new(None),
        }
    }

    pub fn mode(&self) -> CacheWarming {
        self.mode
    }

    /// Starts warming the entry `request` is about to write (replacing any earlier run), when the
    /// mode, the model's caching and the request allow it. Needs a Tokio runtime.
    pub(crate) fn start(
        &self,
        engine: &Engine,
        model: &Arc<dyn ChatModel>,
        request: &ChatRequest,
        leaf: Option<String>,
    ) {
        self.cancel();
        if self.mode == CacheWarming::Off {
            return;
        }
        let Some(cache) = model.prompt_cache(request) else {
            tracing::debug!(
                "cache warming: the model's requests write no prompt cache ctxkit knows of"
            );
            return;
        };
        let Some(delay) = self
            .delay
            .or_else(|| ctxkit_llm::warming_delay(cache.lifetime))
        else {
            return;
        };
        let run = Run {
            cancel: CancellationToken::new(),
            idle: Arc::new(AtomicBool::new(false)),
        };
        let warming = Warming {
            engine: engine.clone(),
            model: Arc::clone(model),
            request: request.clone(),
            leaf,
            prices: cache.prices,
            delay,
            idle: Arc::clone(&run.idle),
            cancel: run.cancel.clone(),
        };
        tokio::spawn(warming.keep_warm());
        *self.lock() = Some(run);
    }

    /// The run that sent the last request ended: warming goes on between runs in `idle` mode
    /// and stops in `streaming` mode.
    pub(crate) fn settled(&self) {
        match self.mode {
            CacheWarming::Idle => {
                if let Some(run) = self.lock().as_ref() {
                    run.idle.store(true, Ordering::SeqCst);
                }
            }
            CacheWarming::Streaming | CacheWarming::Off => self.cancel(),
        }
    }

    /// Stops warming (a refresh in flight is dropped, nothing is recorded for it).
    pub fn cancel(&self) {
        if let Some(run) = self.lock().take() {
            run.cancel.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Run>> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for CacheWarmer {
    fn drop(&mut self) {
        self.cancel();
    }
}

impl Warming {
    async fn keep_warm(self) {
        let started = Instant::now();
        loop {
            let phase = self.phase();
            let max_age = match phase {
                WarmingPhase::Idle => MAX_IDLE_AGE,
                WarmingPhase::Streaming => MAX_STREAMING_AGE,
            };
            if started.elapsed() + self.delay > max_age {
                tracing::info!(?phase, "cache warming: stopped at its age limit");
                return;
            }
            tokio::select! {
                biased;
                () = self.cancel.cancelled() => return,
                () = tokio::time::sleep(self.delay) => {}
            }
            if !self.refresh().await {
                return;
            }
        }
    }

    fn phase(&self) -> WarmingPhase {
        if self.idle.load(Ordering::SeqCst) {
            WarmingPhase::Idle
        } else {
            WarmingPhase::Streaming
        }
    }

    /// One refresh, when it pays; whether warming goes on.
    async fn refresh(&self) -> bool {
        let phase = self.phase();
        let Some(tokens) = self.prompt_tokens().await else {
            tracing::info!("cache warming: stopped, the context changed since the request");
            return false;
        };
        let decision = evaluate_cache_warming(self.prices.as_ref(), tokens, phase);
        if !decision.warm {
            tracing::info!(
                ?phase,
                prompt_tokens = tokens,
                expected_savings = decision.expected_savings,
                economics_available = decision.economics_available,
                "cache warming: stopped, a refresh would not pay"
            );
            return false;
        }
        let reply = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return false,
            reply = self.model.refresh_cache(&self.request, &self.cancel) => reply,
        };
        if self.cancel.is_cancelled() {
            return false;
        }
        let Some(reply) = reply.filter(|reply| !reply.is_aborted_or_error()) else {
            tracing::info!("cache warming: the refresh failed; trying again at the next one");
            return true;
        };
        let info = self.model.info();
        let usage = reply.usage.unwrap_or_default();
        let appended = self.engine.record_usage("cache_warm", &info, usage).await;
        match appended {
            Ok(_) => tracing::info!(
                ?phase,
                prompt_tokens = tokens,
                expected_savings = decision.expected_savings,
                "cache warming: refreshed"
            ),
            Err(error) => {
                tracing::warn!(%error, "cache warming: the refresh could not be recorded")
            }
        }
        true
    }

    /// The prompt size of the last request on the branch as the provider counted it, while the
    /// context still extends the warmed request (no compaction, branch summary or model change
    /// since, and its leaf still on the branch); `None` otherwise.
    async fn prompt_tokens(&self) -> Option<u64> {
        let leaf = self.leaf.clone();
        self.engine
            .with_session(move |session| {
                let path = session.branch_path(None);
                let after = match &leaf {
                    Some(leaf) => &path[path.iter().position(|entry| entry.id() == leaf)? + 1..],
                    None => &path[..],
                };
                if after.iter().any(|entry| {
                    matches!(
                        entry.type_name(),
                        "compaction" | "branch_summary" | "model_change"
                    )
                }) {
                    return None;
                }
                path.iter().rev().find_map(|entry| {
                    if entry.role() != Some("assistant") {
                        return None;
                    }
                    let message = entry.parse_message()?.ok()?;
                    let usage = message.as_assistant()?.usage.as_ref()?;
                    Some(usage.input_tokens())
                })
            })
            .await
    }
}

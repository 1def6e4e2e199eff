//! Replaying the trace under one strategy through the engine, as an agent loop would:
//! `before_prompt` → append the task → for each call { `model_view` (the request) → measure it →
//! record it with the engine (`record_model_request`, as the agent does when the reply arrives) →
//! append the reply (usage = the provider's count of the request) → append its tool results →
//! `after_tool_batch` when the run goes on } → `after_run`.
//!
//! The provider's count of a request is ctxkit's estimate of it times the ratio the real session's
//! recorded usage shows (`provider_count`), or the estimate itself when it recorded none; the
//! engine learns its over-count from it as it does behind the real agent. Requests are billed on
//! ctxkit's estimate, every strategy alike (`docs/simulator.md`, eighteenth round).
//!
//! A request the provider counts above the window is an overflow. With compaction enabled the provider is taken to
//! reject it: an overflow error reply is appended, `after_run` compacts and the call is retried once,
//! as the reference's recovery does; a rejected request is not billed. Without compaction (or when
//! recovery fails) the request still goes out, and a real provider refuses it: it is counted as
//! *refused*, not billed (Anthropic and OpenAI bill nothing for a request they refuse), and its
//! tokens are not counted as sent. The session as recorded cannot go on from there, so the replay
//! goes on with the recorded reply to keep every strategy on the same calls, and the verdict never
//! takes a strategy with refused requests for the cheaper one (`verdict.rs`).

mod account;
mod clock;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ctxkit_compaction::Prompts;
use ctxkit_engine::{CheckReport, Engine, EngineError, EngineOptions, HookSet, ModelInfo};
use ctxkit_protocol::{AgentMessage, AssistantMessage, JsonObject, Usage};
use ctxkit_session::Session;
use ctxkit_summarizer::ConversationPrefix;
use ctxkit_summarizer_offline::OfflineSummarizer;
use ctxkit_tokens::estimate_tokens;
use ctxkit_transform::CacheLifetime;

use super::cache_rule::CacheState;
use super::cost::CostParts;
use super::ledger::{Ledger, compaction_tokens};
use super::meter::Request;
use super::named_recall::NamedTracker;
use super::native::NativeTracker;
use super::provider_count::ProviderCount;
use super::recall::{RecallBreakdown, RecallTracker};
use super::report::{Compactions, StrategyReport, Timing};
use super::trace::{IdentifierKind, MODEL, PROVIDER, Trace};
use super::{CheckPoint, SimulateError, SimulateOptions, Strategy};
use account::{Meter, Tracker, add};
use clock::{Clock, stamped_at};

const CWD: &str = "/home/dev/projects/simulated";
/// Retries of one call after overflow recoveries before it is sent anyway.
const MAX_ATTEMPTS: usize = 3;

/// The error reply of a provider that refused a request for its length (Anthropic's wording).
fn overflow_reply(tokens: u64, window: u64, at: i64) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: Vec::new(),
        api: Some("anthropic-messages".to_owned()),
        provider: Some(PROVIDER.to_owned()),
        model: Some(MODEL.to_owned()),
        usage: None,
        stop_reason: Some("error".to_owned()),
        error_message: Some(format!(
            "prompt is too long: {tokens} tokens > {window} maximum"
        )),
        timestamp: Some(at),
        extra: JsonObject::new(),
    })
}

/// What the provider does with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Answered,
    /// Above the window: refused, not billed.
    Refused,
}

struct Driver<'a> {
    engine: Engine,
    meter: Meter<'a>,
    clock: Clock,
    /// Provider tokens per estimated token (`ProviderCount::ratio`), `None`: the estimate.
    provider_ratio: Option<f64>,
}

impl Driver<'_> {
    /// `message` stamped with the replay's clock.
    fn stamped(&mut self, message: &AgentMessage) -> AgentMessage {
        let at = self.clock.advance(message.timestamp());
        stamped_at(message, at)
    }

    async fn append(&mut self, message: AgentMessage) -> Result<(), SimulateError> {
        let started = Instant::now();
        let error = self.meter.engine_error();
        self.meter.ledger.appended(estimate_tokens(&message));
        self.engine.append(message).await.map_err(error)?;
        self.meter
            .ledger
            .background_started(self.engine.background_summaries_started());
        add(&mut self.meter.timing.append_ms, started);
        Ok(())
    }

    /// Records the request about to be answered with the engine, as the agent does before it
    /// appends the reply: the engine compares the reply's usage with its estimate of it.
    async fn record(&mut self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        let started = Instant::now();
        let prefix = ConversationPrefix {
            provider: PROVIDER.to_owned(),
            model: MODEL.to_owned(),
            system_prompt: String::new(),
            request_messages: messages.len(),
            messages,
            tools: Vec::new(),
            reasoning: None,
            cache: ctxkit_summarizer::CacheHints::default(),
        };
        // The engine copies the messages only when a compaction may continue the request.
        self.engine.record_model_request_copied(&prefix).await;
        add(&mut self.meter.timing.append_ms, started);
        prefix.messages
    }

    /// The provider's count of a request ctxkit estimates at `tokens`.
    fn counted(&self, tokens: u64) -> u64 {
        ProviderCount::counted(self.provider_ratio, tokens)
    }

    /// Runs a check; after a compaction waits until the wall clock has moved past it, so every
    /// later message is newer than the compaction entry (as it always is with a real model).
    async fn check(
        &mut self,
        report: impl Future<Output = Result<CheckReport, EngineError>>,
    ) -> Result<CheckReport, SimulateError> {
        let started = Instant::now();
        let error = self.meter.engine_error();
        let report = report.await.map_err(error)?;
        if let Some(end) = self.meter.count_check(&report) {
            let entry_id = end.entry_id.clone().unwrap_or_default();
            let (span, output) = self
                .engine
                .with_session(|session| compaction_tokens(session, &entry_id))
                .await;
            let now = self.clock.request_time(0).map(|(at, _)| at);
            self.meter.ledger.compacted(&end, span, output, now);
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        add(&mut self.meter.timing.check_ms, started);
        Ok(report)
    }

    /// The next request, after any overflow recovery, and whether the provider answers it.
    async fn request(&mut self) -> Result<Asked, SimulateError> {
        let window = self.meter.options.context_window;
        let compacts = self.meter.settings.compaction.enabled;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let error = self.meter.engine_error();
            let view = self.engine.model_view().await.map_err(error)?;
            add(&mut self.meter.timing.view_ms, started);
            let windowed = usize::from(view.report.messages_dropped_by_window > 0);
            let started = Instant::now();
            let previous = self
                .meter
                .previous
                .as_ref()
                .map(|(messages, request)| (messages.as_slice(), request));
            let request = Request::measure_after(previous, &view.messages)?;
            add(&mut self.meter.timing.measure_ms, started);
            let tokens = self.counted(request.total_tokens());
            if tokens <= window {
                self.meter.windowed_requests += windowed;
                return Ok(Asked {
                    messages: view.messages,
                    request,
                    answer: Answer::Answered,
                    lifetime: view.cache_lifetime,
                });
            }
            self.meter.overflows += 1;
            if !compacts || attempt >= MAX_ATTEMPTS {
                self.meter.windowed_requests += windowed;
                return Ok(Asked {
                    messages: view.messages,
                    request,
                    answer: Answer::Refused,
                    lifetime: view.cache_lifetime,
                });
            }
            let messages = self.record(view.messages).await;
            let at = self.clock.advance(None);
            self.append(overflow_reply(tokens, window, at)).await?;
            let engine = self.engine.clone();
            let report = self.check(engine.after_run()).await?;
            if report.retry {
                self.meter.rejected += 1;
                continue;
            }
            // Recovery is exhausted or impossible: an agent would stop here; the simulation sends
            // the call anyway, and the provider refuses it.
            self.meter.recovery_failures += 1;
            self.meter.windowed_requests += windowed;
            return Ok(Asked {
                messages,
                request,
                answer: Answer::Refused,
                lifetime: view.cache_lifetime,
            });
        }
    }
}

/// A request as the engine built it, whether the provider answers it, and the cache lifetime it
/// asks for.
struct Asked {
    messages: Vec<AgentMessage>,
    request: Request,
    answer: Answer,
    lifetime: CacheLifetime,
}

/// Replays `trace` under `strategy`.
pub(crate) async fn replay(
    trace: &Trace,
    strategy: Strategy,
    options: &SimulateOptions,
) -> Result<StrategyReport, SimulateError> {
    let started = Instant::now();
    let settings = options.settings_of(strategy)?;
    let summary_size = options.summary_size_of(strategy)?;
    let every_call = options.check == CheckPoint::EveryCall || strategy.checks_every_call();
    let prices = options.price_table();
    let long_lived_prices = prices.clone().long_lived();
    let ledger = Ledger::new(
        strategy.summary_request(),
        prices.clone(),
        settings.compaction.keep_recent_tokens,
    );
    let engine = Engine::new(
        Session::in_memory(CWD),
        EngineOptions {
            settings: settings.clone(),
            model: Some(ModelInfo {
                provider: PROVIDER.to_owned(),
                id: MODEL.to_owned(),
                context_window: options.context_window,
                cache: prices.cache_terms(),
            }),
            summarizer: Arc::new(OfflineSummarizer::new(summary_size)),
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: None,
        },
    );
    let meter = Meter {
        strategy,
        options,
        settings,
        ledger,
        inputs: Vec::with_capacity(trace.calls()),
        shared_tokens: 0,
        hit_ratio_sum: 0.0,
        output_tokens: 0,
        cost_without_cache: 0.0,
        cost_with_cache: 0.0,
        cost_parts: CostParts::default(),
        overflows: 0,
        rejected: 0,
        recovery_failures: 0,
        refused: 0,
        compactions: Compactions::default(),
        previous: None,
        cache: CacheState::new(options.price_table().cache_rule),
        recall: if trace.real {
            Tracker::Named(NamedTracker::new(trace)?)
        } else {
            Tracker::Planted(RecallTracker::new(trace)?)
        },
        recall_sum: 0.0,
        stand_in_sum: 0.0,
        recall_samples: 0,
        last_recall: RecallBreakdown::default(),
        last_stand_in: RecallBreakdown::default(),
        calls_total: trace.real.then(|| {
            let empty = RecallBreakdown::empty(&IdentifierKind::NAMED);
            (empty.clone(), empty)
        }),
        windowed_requests: 0,
        misses: Vec::new(),
        timing: Timing::default(),
        native: NativeTracker::new(options.provider, options.price_table(), options.seed),
    };
    let mut driver = Driver {
        engine,
        meter,
        clock: Clock::of(trace),
        provider_ratio: ProviderCount::used_ratio(trace.provider_count),
    };
    let mut call = 0;
    for task in &trace.tasks {
        let engine = driver.engine.clone();
        // The prompt's time: a real session's recorded one, so the engine sees the user's pause.
        let prompt_at = driver
            .clock
            .advance(task.prompt.first().and_then(AgentMessage::timestamp));
        driver.check(engine.before_prompt_at(prompt_at)).await?;
        for message in &task.prompt {
            let message = driver.stamped(message);
            driver.append(message).await?;
        }
        for (step, planned) in task.calls.iter().enumerate() {
            let Asked {
                messages,
                request,
                answer,
                lifetime,
            } = driver.request().await?;
            let mut reply = planned.reply.clone();
            let output = estimate_tokens(&AgentMessage::Assistant(reply.clone()));
            let input = request.total_tokens();
            // A request asking for the hour-long cache writes at its price and lives an hour.
            let billed = match lifetime {
                CacheLifetime::Configured => &prices,
                CacheLifetime::Long => &long_lived_prices,
            };
            let time = driver.clock.request_time(billed.cache_lifetime_ms);
            driver.meter.ledger.sent_at(time);
            let messages = driver.record(messages).await;
            driver
                .meter
                .accept(messages, request, call, output, (time, billed), answer);
            let (input, output) = (driver.counted(input), driver.counted(output));
            reply.usage = Some(Usage {
                input,
                output,
                total_tokens: input + output,
                ..Usage::default()
            });
            let reply = driver.stamped(&AgentMessage::Assistant(reply));
            driver.append(reply).await?;
            for result in &planned.results {
                let result = driver.stamped(result);
                driver.append(result).await?;
            }
            call += 1;
            crate::Progress::call_done(options.progress.as_ref());
            if step + 1 < task.calls.len() {
                let engine = driver.engine.clone();
                if every_call {
                    driver.check(engine.after_run()).await?;
                } else if !planned.results.is_empty() {
                    // The run goes on: the agent loop checks the projected context after each
                    // tool batch (`ctxkit-agent`, as Pi 1.6.0 does before its next model call).
                    driver.check(engine.after_tool_batch()).await?;
                }
            }
        }
        let engine = driver.engine.clone();
        driver.check(engine.after_run()).await?;
        driver.meter.native.run_ended();
    }
    let stored_entries = driver
        .engine
        .with_session(|session| session.entries().len())
        .await;
    Ok(driver.meter.finish(stored_entries, started.elapsed()))
}

//! Replaying the trace under one strategy through the engine, as an agent loop would:
//! `before_prompt` → append the task → for each call { `model_view` (the request) → measure it →
//! append the reply (usage = the request's estimate) → append its tool results → `after_tool_batch`
//! when the run goes on } → `after_run`.
//!
//! A request above the window is an overflow. With compaction enabled the provider is taken to
//! reject it: an overflow error reply is appended, `after_run` compacts and the call is retried once,
//! as the reference's recovery does; a rejected request is not billed. Without compaction (or when
//! recovery fails) the request still goes out, and a real provider refuses it: it is counted as
//! *refused*, not billed (Anthropic and OpenAI bill nothing for a request they refuse), and its
//! tokens are not counted as sent. The session as recorded cannot go on from there, so the replay
//! goes on with the recorded reply to keep every strategy on the same calls, and the verdict never
//! takes a strategy with refused requests for the cheaper one (`verdict.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ctxkit_compaction::Prompts;
use ctxkit_engine::{
    CheckReport, CompactionEnd, CompactionReason, Engine, EngineError, EngineOptions,
    EngineSettings, HookSet, ModelInfo,
};
use ctxkit_protocol::{AgentMessage, AssistantMessage, JsonObject, Usage};
use ctxkit_session::Session;
use ctxkit_summarizer_offline::OfflineSummarizer;
use ctxkit_tokens::estimate_tokens;

use ctxkit_transform::CacheLifetime;

use super::cache_rule::CacheState;
use super::cost::{CostParts, PriceTable};
use super::ledger::{Ledger, compaction_tokens};
use super::meter::{Request, shared_prefix};
use super::named_recall::{NamedTracker, RecallMiss};
use super::native::{NativeTracker, Sent};
use super::recall::{RecallBreakdown, RecallTracker};
use super::report::{Compactions, StrategyReport, Timing, TokenStats};
use super::summary::SummaryRequest;
use super::trace::{IdentifierKind, MODEL, PROVIDER, Trace};
use super::{CheckPoint, SimulateError, SimulateOptions, Strategy};

const CWD: &str = "/home/dev/projects/simulated";
/// Retries of one call after overflow recoveries before it is sent anyway.
const MAX_ATTEMPTS: usize = 3;

/// Epoch milliseconds now. The engine's stale-usage guard compares message timestamps with the
/// wall-clock timestamps of compaction entries, so messages are stamped with the wall clock too.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX)
        })
}

/// `message` stamped `at` (epoch ms).
fn stamped_at(message: &AgentMessage, at: i64) -> AgentMessage {
    let mut message = message.clone();
    let now = Some(at);
    match &mut message {
        AgentMessage::User(message) => message.timestamp = now,
        AgentMessage::Assistant(message) => message.timestamp = now,
        AgentMessage::ToolResult(message) => message.timestamp = now,
        AgentMessage::BashExecution(message) => message.timestamp = now,
        AgentMessage::Custom(message) => message.timestamp = now,
        AgentMessage::BranchSummary(message) => message.timestamp = now,
        AgentMessage::CompactionSummary(message) => message.timestamp = now,
        AgentMessage::Unknown(fields) => {
            fields.insert("timestamp".to_owned(), serde_json::json!(at));
        }
    }
    message
}

/// The clock messages are stamped with: the wall clock for a generated trace (its calls are
/// seconds apart), the source's own times for a real session (so idle gaps are what the user's
/// were: the engine sees them in the messages, and the provider's cache expires over them).
#[derive(Debug, Clone, Copy)]
enum Clock {
    Wall,
    /// The latest source time seen (times never go back).
    Source(i64),
}

impl Clock {
    fn of(trace: &Trace) -> Self {
        let first = trace
            .tasks
            .iter()
            .flat_map(|task| {
                task.prompt
                    .iter()
                    .map(AgentMessage::timestamp)
                    .chain(task.calls.iter().map(|call| call.reply.timestamp))
            })
            .flatten()
            .next();
        match first {
            Some(first) if trace.real => Self::Source(first),
            Some(_) | None => Self::Wall,
        }
    }

    /// Now, after `message` (whose own time, if any, moves a source clock forward).
    fn advance(&mut self, message: Option<i64>) -> i64 {
        match self {
            Self::Wall => now_ms(),
            Self::Source(clock) => {
                if let Some(at) = message {
                    *clock = (*clock).max(at);
                }
                *clock
            }
        }
    }

    /// The request time and the cache lifetime, for the cache rule; `None` with the wall clock.
    fn request_time(self, lifetime_ms: i64) -> Option<(i64, i64)> {
        match self {
            Self::Wall => None,
            Self::Source(clock) => Some((clock, lifetime_ms)),
        }
    }
}

/// Everything measured for one strategy.
struct Meter<'a> {
    strategy: Strategy,
    options: &'a SimulateOptions,
    settings: EngineSettings,
    ledger: Ledger,
    inputs: Vec<u64>,
    shared_tokens: u64,
    hit_ratio_sum: f64,
    output_tokens: u64,
    cost_without_cache: f64,
    cost_with_cache: f64,
    cost_parts: CostParts,
    overflows: usize,
    rejected: usize,
    recovery_failures: usize,
    /// Requests above the window that went out anyway and were refused.
    refused: usize,
    compactions: Compactions,
    /// The last request sent (answered or refused), as sent and as measured: the next one reuses
    /// its measurements.
    previous: Option<(Vec<AgentMessage>, Request)>,
    /// The provider's prompt cache for this conversation.
    cache: CacheState,
    recall: Tracker<'a>,
    recall_sum: f64,
    stand_in_sum: f64,
    recall_samples: usize,
    last_recall: RecallBreakdown,
    last_stand_in: RecallBreakdown,
    /// A real session: the at-risk identifiers of every call, summed (as written, stand-in).
    calls_total: Option<(RecallBreakdown, RecallBreakdown)>,
    windowed_requests: usize,
    /// A real session: the at-risk identifiers requests did not hold.
    misses: Vec<RecallMiss>,
    timing: Timing,
    /// Threads, idle gaps and warming.
    native: NativeTracker,
}

/// How recall is measured: planted identifiers (a generated trace) or identifiers the assistant
/// named again (a real session).
enum Tracker<'a> {
    Planted(RecallTracker<'a>),
    Named(NamedTracker<'a>),
}

/// What one request showed: the breakdown its final-view numbers come from and the one the run
/// mean averages (equal for planted identifiers), each as written and with the stand-in.
struct Observed {
    view: (RecallBreakdown, RecallBreakdown),
    sample: (RecallBreakdown, RecallBreakdown),
    missed: Vec<RecallMiss>,
}

impl Tracker<'_> {
    fn observe(
        &mut self,
        messages: &[AgentMessage],
        serialized: &[String],
        call: usize,
    ) -> Observed {
        match self {
            Self::Planted(tracker) => {
                let view = tracker.observe(messages, serialized, call);
                Observed {
                    sample: view.clone(),
                    view,
                    missed: Vec::new(),
                }
            }
            Self::Named(tracker) => {
                let observation = tracker.observe(messages, serialized, call);
                Observed {
                    view: (observation.view, observation.view_stand_in),
                    sample: (observation.sample, observation.sample_stand_in),
                    missed: observation.missed,
                }
            }
        }
    }
}

fn add(total: &mut f64, since: Instant) {
    *total += since.elapsed().as_secs_f64() * 1000.0;
}

impl<'a> Meter<'a> {
    fn engine_error(&self) -> impl Fn(EngineError) -> SimulateError + use<> {
        let strategy = self.strategy.name();
        move |source| SimulateError::Engine { strategy, source }
    }

    /// Counts a check's compaction; the compaction when one was written.
    fn count_check(&mut self, report: &CheckReport) -> Option<CompactionEnd> {
        let end = report
            .compaction
            .as_ref()
            .filter(|end| end.entry_id.is_some())?;
        match end.reason {
            CompactionReason::Threshold => self.compactions.threshold += 1,
            CompactionReason::Overflow => self.compactions.overflow += 1,
            CompactionReason::Manual => self.compactions.manual += 1,
        }
        Some(end.clone())
    }

    /// Bills an answered request under the provider's cache rule.
    fn bill(
        &mut self,
        request: &Request,
        output_tokens: u64,
        time: Option<(i64, i64)>,
        prices: PriceTable,
    ) {
        let started = Instant::now();
        let input = request.total_tokens();
        let extends_previous = self.previous.as_ref().is_some_and(|(_, previous)| {
            shared_prefix(&previous.messages, request).messages == previous.messages.len()
        });
        let bill = self.cache.bill_at(request, &request.breakpoints(), time);
        let shared = bill.read;
        self.native.sent(Sent {
            input,
            output: output_tokens,
            shared,
            extends_previous,
        });
        self.inputs.push(input);
        self.shared_tokens += shared;
        if input > 0 {
            self.hit_ratio_sum += shared as f64 / input as f64;
        }
        self.output_tokens += output_tokens;
        self.cost_without_cache += prices.uncached_cost(input, output_tokens);
        let parts = prices.billed_parts(bill, output_tokens);
        self.cost_with_cache += parts.total();
        self.cost_parts.add(&parts);
        self.ledger.answered(input, bill.read, output_tokens);
        add(&mut self.timing.measure_ms, started);
    }

    /// Bills a request the model accepted, or counts one the provider refused (above the window:
    /// not billed, nothing written to its cache), and measures its prefix and recall.
    fn accept(
        &mut self,
        messages: Vec<AgentMessage>,
        request: Request,
        call: usize,
        output_tokens: u64,
        (time, prices): (Option<(i64, i64)>, PriceTable),
        answer: Answer,
    ) {
        match answer {
            Answer::Answered => self.bill(&request, output_tokens, time, prices),
            Answer::Refused => self.refused += 1,
        }
        let started = Instant::now();
        let observed = self.recall.observe(&messages, &request.messages, call);
        let (sample, sample_stand_in) = &observed.sample;
        if let Some(ratio) = sample.all.recall() {
            self.recall_sum += ratio;
            self.stand_in_sum += sample_stand_in.all.recall().unwrap_or(0.0);
            self.recall_samples += 1;
        }
        if let Some((total, stand_in_total)) = &mut self.calls_total {
            total.merge(sample);
            stand_in_total.merge(sample_stand_in);
        }
        self.misses.extend(observed.missed);
        (self.last_recall, self.last_stand_in) = observed.view;
        self.previous = Some((messages, request));
        add(&mut self.timing.recall_ms, started);
    }

    fn finish(self, stored_entries: usize, elapsed: Duration) -> StrategyReport {
        let input_tokens = TokenStats::of(&self.inputs);
        let requests = self.inputs.len();
        let summaries = self.ledger.finish();
        let on_demand = self.native.has_on_demand_compaction();
        let mut native = self.native.features;
        native.on_demand_summary_cost = match self.strategy.summary_request() {
            // The provider already summarizes on its side.
            SummaryRequest::ProviderSide => summaries.cost,
            SummaryRequest::FreshPrompt | SummaryRequest::CachePrefix if on_demand => {
                summaries.on_demand_cost
            }
            SummaryRequest::FreshPrompt | SummaryRequest::CachePrefix => summaries.cost,
        };
        StrategyReport {
            native,
            strategy: self.strategy,
            name: self.strategy.name(),
            summary_request: self.strategy.summary_request(),
            total_cost_with_cache: self.cost_with_cache + summaries.cost,
            summaries,
            requests,
            input_tokens,
            output_tokens: self.output_tokens,
            shared_prefix_tokens: self.shared_tokens,
            cache_hit_ratio: ratio(self.shared_tokens as f64, input_tokens.total as f64),
            mean_request_cache_hit_ratio: ratio(self.hit_ratio_sum, requests as f64),
            cost_without_cache: self.cost_without_cache,
            cost_with_cache: self.cost_with_cache,
            cost_parts: self.cost_parts,
            overflows: self.overflows,
            rejected_requests: self.rejected,
            recovery_failures: self.recovery_failures,
            refused_requests: self.refused,
            compactions: self.compactions,
            windowed_requests: self.windowed_requests,
            recall_final: self.last_recall,
            recall_mean: (self.recall_samples > 0)
                .then(|| self.recall_sum / self.recall_samples as f64),
            stand_in_final: self.last_stand_in,
            stand_in_mean: (self.recall_samples > 0)
                .then(|| self.stand_in_sum / self.recall_samples as f64),
            recall_calls: self.calls_total.as_ref().map(|(total, _)| total.clone()),
            stand_in_calls: self.calls_total.map(|(_, stand_in)| stand_in),
            recall_misses: self.misses,
            recall_samples: self.recall_samples,
            stored_entries,
            timing: Timing {
                total_ms: elapsed.as_secs_f64() * 1000.0,
                ..self.timing
            },
        }
    }
}

fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

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
            let tokens = request.total_tokens();
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
                messages: view.messages,
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
    let prices = options.provider.prices();
    let ledger = Ledger::new(
        strategy.summary_request(),
        prices,
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
            }),
            summarizer: Arc::new(OfflineSummarizer::new(summary_size)),
            prompts: Prompts::default(),
            hooks: HookSet::new(),
            thinking_level: None,
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
        cache: CacheState::new(options.provider.prices().cache_rule),
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
        native: NativeTracker::new(options.provider, options.seed),
    };
    let mut driver = Driver {
        engine,
        meter,
        clock: Clock::of(trace),
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
                CacheLifetime::Configured => prices,
                CacheLifetime::Long => prices.long_lived(),
            };
            let time = driver.clock.request_time(billed.cache_lifetime_ms);
            driver.meter.ledger.sent_at(time);
            driver
                .meter
                .accept(messages, request, call, output, (time, billed), answer);
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

//! What one strategy's replay sent, paid and showed: the requests billed under the provider's
//! cache rule, the compactions counted, recall observed, and the report they make.

use std::time::{Duration, Instant};

use ctxkit_engine::{CheckReport, CompactionEnd, CompactionReason, EngineError, EngineSettings};
use ctxkit_protocol::AgentMessage;

use crate::cache_rule::CacheState;
use crate::cost::{CostParts, PriceTable};
use crate::ledger::Ledger;
use crate::meter::{Request, shared_prefix};
use crate::named_recall::{NamedTracker, RecallMiss};
use crate::native::{NativeTracker, Sent};
use crate::recall::{RecallBreakdown, RecallTracker};
use crate::report::{Compactions, StrategyReport, Timing, TokenStats};
use crate::summary::SummaryRequest;
use crate::{SimulateError, SimulateOptions, Strategy};

use super::Answer;

/// Everything measured for one strategy.
pub(super) struct Meter<'a> {
    pub(super) strategy: Strategy,
    pub(super) options: &'a SimulateOptions,
    pub(super) settings: EngineSettings,
    pub(super) ledger: Ledger,
    pub(super) inputs: Vec<u64>,
    pub(super) shared_tokens: u64,
    pub(super) hit_ratio_sum: f64,
    pub(super) output_tokens: u64,
    pub(super) cost_without_cache: f64,
    pub(super) cost_with_cache: f64,
    pub(super) cost_parts: CostParts,
    pub(super) overflows: usize,
    pub(super) rejected: usize,
    pub(super) recovery_failures: usize,
    /// Requests above the window that went out anyway and were refused.
    pub(super) refused: usize,
    pub(super) compactions: Compactions,
    /// The last request sent (answered or refused), as sent and as measured: the next one reuses
    /// its measurements.
    pub(super) previous: Option<(Vec<AgentMessage>, Request)>,
    /// The provider's prompt cache for this conversation.
    pub(super) cache: CacheState,
    pub(super) recall: Tracker<'a>,
    pub(super) recall_sum: f64,
    pub(super) stand_in_sum: f64,
    pub(super) recall_samples: usize,
    pub(super) last_recall: RecallBreakdown,
    pub(super) last_stand_in: RecallBreakdown,
    /// A real session: the at-risk identifiers of every call, summed (as written, stand-in).
    pub(super) calls_total: Option<(RecallBreakdown, RecallBreakdown)>,
    pub(super) windowed_requests: usize,
    /// A real session: the at-risk identifiers requests did not hold.
    pub(super) misses: Vec<RecallMiss>,
    pub(super) timing: Timing,
    /// Threads, idle gaps and warming.
    pub(super) native: NativeTracker,
}

/// How recall is measured: planted identifiers (a generated trace) or identifiers the assistant
/// named again (a real session).
pub(super) enum Tracker<'a> {
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
        serialized: &[std::sync::Arc<str>],
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

pub(super) fn add(total: &mut f64, since: Instant) {
    *total += since.elapsed().as_secs_f64() * 1000.0;
}

impl<'a> Meter<'a> {
    pub(super) fn engine_error(&self) -> impl Fn(EngineError) -> SimulateError + use<> {
        let strategy = self.strategy.name();
        move |source| SimulateError::Engine { strategy, source }
    }

    /// Counts a check's compaction; the compaction when one was written.
    pub(super) fn count_check(&mut self, report: &CheckReport) -> Option<CompactionEnd> {
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
    pub(super) fn bill(
        &mut self,
        request: &Request,
        output_tokens: u64,
        time: Option<(i64, i64)>,
        prices: &PriceTable,
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
    pub(super) fn accept(
        &mut self,
        messages: Vec<AgentMessage>,
        request: Request,
        call: usize,
        output_tokens: u64,
        (time, prices): (Option<(i64, i64)>, &PriceTable),
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

    pub(super) fn finish(self, stored_entries: usize, elapsed: Duration) -> StrategyReport {
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

pub(super) fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

//! What the engine's lock guards: the session, its settings and model, and what the engine has
//! learnt about the provider and read of the session; the settings and budgets read for the
//! current model.

use std::collections::HashMap;
use std::sync::Arc;

use ctxkit_session::Session;
use ctxkit_transform::MeasuredMessage;

use crate::check::ModelInfo;
use crate::settings::{CompactionBudgets as _, EngineSettings};

/// The engine's state, behind its lock.
pub(crate) struct State {
    pub(crate) session: Session,
    pub(crate) settings: EngineSettings,
    pub(crate) model: Option<ModelInfo>,
    pub(crate) thinking_level: Option<String>,
    /// Overflow compactions since the last successful reply (a user message does not reset it, so
    /// an overflow after the next prompt keeps less instead of repeating the same compaction).
    pub(crate) overflow_attempts: u32,
    /// Where the previous overflow compaction of the streak cut (its first kept entry): the next
    /// one cuts later. Reset with `overflow_attempts`.
    pub(crate) overflow_cut: Option<ctxkit_session::EntryIndex>,
    /// Overflow compactions of the streak that were written: a recovery that gives up says what
    /// it left in the session (it claimed compactions it never wrote). Reset with
    /// `overflow_attempts`.
    pub(crate) overflow_written: u32,
    /// The provider's over-count: the largest ratio seen between what the provider counted (a
    /// reply's usage) and ctxkit's estimate of the request; 1 until seen. Overflow recovery plans
    /// with it as a margin. This and the next two are reset when the model changes.
    pub(crate) over_count: f64,
    /// The largest context the provider accepted (a successful reply's usage).
    pub(crate) accepted_max: u64,
    /// The provider refused a request it would have counted under the window.
    pub(crate) limit_below_window: bool,
    /// The provider's real limit, when below the window, as stated in its overflow error: the
    /// threshold, recovery and the output room plan with it.
    pub(crate) limit_tokens: Option<u64>,
    /// What the provider counted of the last request it refused, when its error said.
    pub(crate) refused_count: Option<u64>,
    /// ctxkit's estimate of the last model request recorded and not yet answered.
    pub(crate) last_request_estimate: Option<crate::recovery::RequestEstimate>,
    /// The system prompt and tools of the last recorded request (estimated tokens): what every
    /// request carries besides the messages.
    pub(crate) request_overhead: u64,
    /// What stands for `request_overhead` while it is unknown (0).
    pub(crate) unrecorded_overhead: crate::context_status::UnrecordedOverhead,
    /// Context messages already read, by entry id, one slot per context-message kind: entries never
    /// change, so a message is parsed once however many model calls see it. Looked up by `&str`, so a
    /// call allocates nothing for the messages it has seen. Cleared when the session is replaced
    /// (fork).
    pub(crate) messages: HashMap<Box<str>, [Option<Arc<MeasuredMessage>>; 5]>,
    /// The agent's last model request, continued by cache-prefix summaries.
    pub(crate) last_request: Option<crate::cache_prefix::RecordedRequest>,
    /// What the session's requests say about the hour-long prompt cache
    /// (`transforms.longCacheWhenItPays`).
    pub(crate) cache_lifetime: ctxkit_transform::LifetimeLearner,
    /// The last counted request and its view's estimate: what the next request is projected
    /// from (`projection`).
    pub(crate) calibration: crate::projection::Calibration,
}
impl State {
    /// Switches the model; what was learnt about the old one's provider is forgotten.
    pub(crate) fn replace_model(&mut self, model: Option<ModelInfo>) {
        if self.model != model {
            // What one model's provider counts says nothing about another's.
            self.over_count = 1.0;
            self.accepted_max = 0;
            self.limit_below_window = false;
            self.limit_tokens = None;
            self.refused_count = None;
            self.last_request_estimate = None;
            self.calibration.forget();
        }
        self.model = model;
        self.log_cache_terms();
    }

    /// Says in the log which prompt-cache terms the pruning rule weighs, and where they come from.
    pub(crate) fn log_cache_terms(&self) {
        let named = &self.settings.transforms;
        let from = if named.cache_read_percent.is_some()
            && named.cache_write_percent.is_some()
            && named.cache_reads_any_prefix.is_some()
        {
            "the settings"
        } else if self
            .model
            .as_ref()
            .is_some_and(|model| model.cache.is_some())
        {
            "the model's prices where the settings name none"
        } else {
            "Anthropic's where the settings name none: the model's prices are unknown"
        };
        let transforms = &self.model_settings().transforms;
        tracing::debug!(
            read_percent = transforms.cache_read_percent_or_default(),
            write_percent = transforms.cache_write_percent_or_default(),
            reads_any_prefix = transforms.cache_reads_any_prefix.unwrap_or(false),
            "the pruning rule weighs these prompt-cache terms, from {from}"
        );
    }

    /// Plans with `limit` from now on when it is below the window (the lowest one stated wins).
    pub(crate) fn note_stated_limit(&mut self, limit: u64) {
        let window = self.context_window();
        if limit == 0 || (window > 0 && limit >= window) {
            return;
        }
        self.limit_tokens = Some(self.limit_tokens.map_or(limit, |known| known.min(limit)));
        self.limit_below_window = true;
    }

    /// The model's context window, 0 when unknown.
    pub(crate) fn context_window(&self) -> u64 {
        self.model.as_ref().map_or(0, |model| model.context_window)
    }

    /// The window requests must fit: the model's, or the provider's real limit when lower (0 when
    /// unknown).
    pub(crate) fn limit_window(&self) -> u64 {
        let window = self.context_window();
        match self.limit_tokens {
            Some(limit) if window == 0 || limit < window => limit,
            Some(_) | None => window,
        }
    }

    /// The limit the threshold is measured against, when below the window: the stated one, else
    /// (after a refusal under the window that stated none) the largest request accepted, at least
    /// half the window.
    pub(crate) fn threshold_limit(&self) -> Option<u64> {
        let window = self.context_window();
        self.limit_tokens.or_else(|| {
            (self.limit_below_window && window > 0)
                .then(|| self.accepted_max.max(window / 2).min(window))
        })
    }

    /// What a request needs after its input (output floor and margin, `ctxkit_overflow`): the
    /// threshold is never above the limit minus this.
    pub(crate) fn output_reserve(&self) -> u64 {
        let window = self.limit_window();
        if window == 0 {
            0
        } else {
            ctxkit_overflow::output_room(window, 0)
        }
    }

    /// The compaction settings for the current model (its `compaction.modelOverrides` entry
    /// applied).
    pub(crate) fn compaction_config(
        &self,
    ) -> std::borrow::Cow<'_, ctxkit_settings::CompactionConfig> {
        match &self.model {
            Some(model) => self
                .settings
                .compaction
                .for_model(&model.provider, &model.id),
            None => std::borrow::Cow::Borrowed(&self.settings.compaction),
        }
    }

    /// The settings for the current model: its compaction overrides (see
    /// [`State::compaction_config`]) and its prompt cache's terms where the transform settings
    /// leave them out.
    pub(crate) fn model_settings(&self) -> std::borrow::Cow<'_, EngineSettings> {
        use std::borrow::Cow;
        let cache = self.model.as_ref().and_then(|model| model.cache.as_ref());
        let transforms = self.settings.transforms.with_cache_terms(cache);
        match (self.compaction_config(), transforms) {
            (Cow::Borrowed(_), Cow::Borrowed(_)) => Cow::Borrowed(&self.settings),
            (compaction, transforms) => Cow::Owned(EngineSettings {
                compaction: compaction.into_owned(),
                transforms: transforms.into_owned(),
                ..self.settings.clone()
            }),
        }
    }

    /// The compaction budgets for the current model and the window requests must fit (the
    /// provider's stated limit once it showed one below the model's window: the budgets follow it
    /// as they would a window configured that small, so a summary is sized for it). Under
    /// `compaction.thresholdTokens`, which is read against the provider's count, the keep budget is
    /// read in that count too: divided by the over-count learned so far. Kept in ctxkit's estimate
    /// it left the context closer to the threshold the more the provider counts, and at a ratio of
    /// 3 each compaction bought only a few requests (docs/simulator.md, twenty-seventh round).
    pub(crate) fn planning(&self) -> ctxkit_compaction::CompactionSettings {
        let config = self.compaction_config();
        let mut planning = config.planning(self.limit_window());
        if config.threshold_tokens > 0 && self.over_count > 1.0 {
            planning.keep_recent_tokens =
                (planning.keep_recent_tokens as f64 / self.over_count) as u64;
        }
        planning
    }

    /// The window's own reserve for the current model (in the window requests must fit, see
    /// [`State::limit_window`]): what `planning` reserves when
    /// `compaction.thresholdTokens` does not fold a threshold into it, and at least the reply's
    /// room. The threshold says when to compact; how long a summary runs and how much room a reply
    /// needs are the window's.
    pub(crate) fn window_reserve(&self) -> u64 {
        ctxkit_settings::CompactionConfig {
            threshold_tokens: 0,
            ..self.compaction_config().into_owned()
        }
        .planning(self.limit_window())
        .reserve_tokens
        .max(self.output_reserve())
    }
}

//! The protocol's own types (`docs/protocol.md`): the parameters, results and `event` notifications
//! that carry engine values, converted from and to the engine's types here, at the edge. The engine
//! may rename or regroup its types; the wire changes only when these do. Field order is the order
//! on the wire (`serde_json` keeps it).

use ctxkit_engine::{
    CompactionEnd, CompactionFailed, CompactionReason, ContextUsage, EngineEvent, ForgetOutcome,
    ForkOutcome, ForkPosition, ModelInfo, NavigateOptions, NavigateOutcome, Pin,
};
use serde::{Deserialize, Serialize};

/// A model, as `model.set` takes it.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object {provider, id, context_window}"
)]
pub(crate) struct Model {
    provider: String,
    id: String,
    /// Tokens the model accepts; 0 when unknown.
    context_window: u64,
}

impl From<Model> for ModelInfo {
    fn from(model: Model) -> Self {
        Self {
            cache: ctxkit_models::model_cache_terms(&model.provider, &model.id),
            provider: model.provider,
            id: model.id,
            context_window: model.context_window,
        }
    }
}

/// `tree.navigate`'s parameters: where to, and how it moves.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Navigate {
    pub(crate) target_id: String,
    #[serde(default)]
    summarize: bool,
    #[serde(default)]
    custom_instructions: Option<String>,
    #[serde(default)]
    replace_instructions: bool,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    keep_target: bool,
}

impl From<Navigate> for NavigateOptions {
    fn from(navigate: Navigate) -> Self {
        Self {
            summarize: navigate.summarize,
            custom_instructions: navigate.custom_instructions,
            replace_instructions: navigate.replace_instructions,
            label: navigate.label,
            keep_target: navigate.keep_target,
        }
    }
}

/// Where `fork` starts.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "snake_case", expecting = "`before` or `at`")]
pub(crate) enum Position {
    #[default]
    Before,
    At,
}

impl From<Position> for ForkPosition {
    fn from(position: Position) -> Self {
        match position {
            Position::Before => Self::Before,
            Position::At => Self::At,
        }
    }
}

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reason {
    Threshold,
    Overflow,
    Manual,
}

impl From<CompactionReason> for Reason {
    fn from(reason: CompactionReason) -> Self {
        match reason {
            CompactionReason::Threshold => Self::Threshold,
            CompactionReason::Overflow => Self::Overflow,
            CompactionReason::Manual => Self::Manual,
        }
    }
}

/// The end of a compaction: `compact`'s result, a check's `compaction`, the `compaction_end` event.
#[derive(Debug, Serialize)]
pub(crate) struct CompactionResult {
    reason: Reason,
    aborted: bool,
    will_retry: bool,
    tokens_before: Option<u64>,
    tokens_after: Option<u64>,
    first_kept_entry_id: Option<String>,
    entry_id: Option<String>,
    from_hook: bool,
    from_background: bool,
    fallback: bool,
    error: Option<String>,
    advice: Option<String>,
    files_read: usize,
    files_modified: usize,
}

impl From<CompactionEnd> for CompactionResult {
    fn from(end: CompactionEnd) -> Self {
        Self {
            reason: end.reason.into(),
            aborted: end.aborted,
            will_retry: end.will_retry,
            tokens_before: end.tokens_before,
            tokens_after: end.tokens_after,
            first_kept_entry_id: end.first_kept_entry_id,
            entry_id: end.entry_id,
            from_hook: end.from_hook,
            from_background: end.from_background,
            fallback: end.fallback,
            error: end.error,
            advice: end.advice,
            files_read: end.files_read,
            files_modified: end.files_modified,
        }
    }
}

/// A compaction that failed or was cancelled (the `compaction_failed` event).
#[derive(Debug, Serialize)]
pub(crate) struct CompactionFailure {
    reason: Reason,
    error_message: Option<String>,
    aborted: bool,
    will_retry: bool,
    from_hook: bool,
    fallback: bool,
}

impl From<CompactionFailed> for CompactionFailure {
    fn from(failed: CompactionFailed) -> Self {
        Self {
            reason: failed.reason.into(),
            error_message: failed.error_message,
            aborted: failed.aborted,
            will_retry: failed.will_retry,
            from_hook: failed.from_hook,
            fallback: failed.fallback,
        }
    }
}

/// Tokens in the model's view of a window (`context.usage`, the `context_usage` event).
#[derive(Debug, Serialize)]
pub(crate) struct Usage {
    tokens: Option<u64>,
    /// The window in force: the provider's stated limit when it is below the configured one.
    context_window: u64,
    configured_window: u64,
    /// `context_window` is the limit the provider stated in an overflow error.
    limit_learned: bool,
    percent: Option<f64>,
}

impl From<ContextUsage> for Usage {
    fn from(usage: ContextUsage) -> Self {
        Self {
            tokens: usage.tokens,
            context_window: usage.context_window,
            configured_window: usage.configured_window,
            limit_learned: usage.limit_learned,
            percent: usage.percent,
        }
    }
}

/// An `event` notification's parameters.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Event {
    CompactionStart {
        reason: Reason,
    },
    CompactionEnd(CompactionResult),
    CompactionFailed(CompactionFailure),
    BranchSummaryStart {
        target_id: String,
    },
    BranchSummaryEnd {
        target_id: String,
        aborted: bool,
        summary_entry_id: Option<String>,
        error: Option<String>,
    },
    ContextUsage(Usage),
    HookError {
        hook: String,
        event: String,
        error: String,
    },
}

impl From<EngineEvent> for Event {
    fn from(event: EngineEvent) -> Self {
        match event {
            EngineEvent::CompactionStart { reason } => Self::CompactionStart {
                reason: reason.into(),
            },
            EngineEvent::CompactionEnd(end) => Self::CompactionEnd(end.into()),
            EngineEvent::CompactionFailed(failed) => Self::CompactionFailed(failed.into()),
            EngineEvent::BranchSummaryStart { target_id } => Self::BranchSummaryStart { target_id },
            EngineEvent::BranchSummaryEnd {
                target_id,
                aborted,
                summary_entry_id,
                error,
            } => Self::BranchSummaryEnd {
                target_id,
                aborted,
                summary_entry_id,
                error,
            },
            EngineEvent::ContextUsage(usage) => Self::ContextUsage(usage.into()),
            EngineEvent::HookError { hook, event, error } => Self::HookError { hook, event, error },
        }
    }
}

/// What `tree.navigate` did.
#[derive(Debug, Serialize)]
pub(crate) struct Navigated {
    cancelled: bool,
    aborted: bool,
    editor_text: Option<String>,
    summary_entry_id: Option<String>,
    /// The session's leaf after the move: the summary entry, the navigation marker, or where the
    /// leaf landed when neither was written.
    new_leaf_id: Option<String>,
    nothing_to_summarize: bool,
    /// The navigation marker recording a move without a summary (`ctxkit.navigate`).
    marker_entry_id: Option<String>,
}

impl From<NavigateOutcome> for Navigated {
    fn from(outcome: NavigateOutcome) -> Self {
        Self {
            cancelled: outcome.cancelled,
            aborted: outcome.aborted,
            editor_text: outcome.editor_text,
            summary_entry_id: outcome.summary_entry_id,
            new_leaf_id: outcome.marker_entry_id.clone().or(outcome.new_leaf_id),
            nothing_to_summarize: outcome.nothing_to_summarize,
            marker_entry_id: outcome.marker_entry_id,
        }
    }
}

/// What `fork` and `clone` did.
#[derive(Debug, Serialize)]
pub(crate) struct Forked {
    cancelled: bool,
    selected_text: Option<String>,
    pub(crate) session_file: Option<String>,
    /// The new session's id (what a database session is opened by); none when cancelled.
    pub(crate) session_id: Option<String>,
}

impl Forked {
    /// The answer of a fork that left the engine on the session `session_id`.
    pub(crate) fn new(outcome: ForkOutcome, session_id: String) -> Self {
        let session_id = (!outcome.cancelled).then_some(session_id);
        Self {
            cancelled: outcome.cancelled,
            selected_text: outcome.selected_text,
            session_file: outcome.session_file,
            session_id,
        }
    }
}

/// What `forget` did.
#[derive(Debug, Serialize)]
pub(crate) struct Forgotten {
    summary_entry_id: String,
    reappended: usize,
    new_leaf_id: Option<String>,
    from_id: String,
    to_id: String,
    results_left_out: Vec<String>,
    carried: Vec<Carried>,
}

/// An entry appended again after a forgotten span, as `compaction.undo` lists its own.
#[derive(Debug, Serialize)]
struct Carried {
    #[serde(rename = "type")]
    entry_type: String,
    id: String,
    copy_id: String,
}

impl From<ForgetOutcome> for Forgotten {
    fn from(outcome: ForgetOutcome) -> Self {
        Self {
            summary_entry_id: outcome.summary_entry_id,
            reappended: outcome.reappended,
            new_leaf_id: outcome.new_leaf_id,
            from_id: outcome.from_id,
            to_id: outcome.to_id,
            results_left_out: outcome.results_left_out,
            carried: outcome
                .carried
                .into_iter()
                .map(|entry| Carried {
                    entry_type: entry.entry_type,
                    id: entry.original_id,
                    copy_id: entry.copy_id,
                })
                .collect(),
        }
    }
}

/// An active pin (`pin.add`, `pin.list`).
#[derive(Debug, Serialize)]
pub(crate) struct PinRecord {
    id: String,
    text: String,
    source_entry_id: Option<String>,
}

impl From<Pin> for PinRecord {
    fn from(pin: Pin) -> Self {
        Self {
            id: pin.id,
            text: pin.text,
            source_entry_id: pin.source_entry_id,
        }
    }
}

/// `view.get`'s answer, borrowed from the engine's view and written straight to JSON text.
#[derive(Debug, Serialize)]
pub(crate) struct ViewAnswer<'a> {
    system: &'a [String],
    messages: ProviderMessages<'a>,
    report: ViewReport,
}

/// The view's messages a provider takes in its message list: a system prompt Pi 1.6.0 recorded in
/// the session (`{"role":"system","content":"","sections":…}`, at a session's first prompt) is
/// left out. It describes Pi's harness and tools, not the client's; no provider takes it among
/// the messages (Anthropic refuses the role), and `agent.run` leaves it out of its requests too.
/// `transcript.get` still shows it.
#[derive(Debug)]
struct ProviderMessages<'a>(&'a [ctxkit_protocol::AgentMessage]);

impl Serialize for ProviderMessages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().filter(|message| message.role() != "system"))
    }
}

/// What the transforms did to the view.
#[derive(Debug, Serialize)]
struct ViewReport {
    tool_results_pruned: usize,
    tool_calls_cut: usize,
    chars_saved: u64,
    thinking_blocks_dropped: usize,
    messages_dropped_by_window: usize,
    orphans_repaired: usize,
    estimated_tokens_before: u64,
    estimated_tokens_after: u64,
}

impl<'a> From<&'a ctxkit_engine::ModelView> for ViewAnswer<'a> {
    fn from(view: &'a ctxkit_engine::ModelView) -> Self {
        let report = &view.report;
        Self {
            system: &view.system,
            messages: ProviderMessages(&view.messages),
            report: ViewReport {
                tool_results_pruned: report.tool_results_pruned,
                tool_calls_cut: report.tool_calls_cut,
                chars_saved: report.chars_saved,
                thinking_blocks_dropped: report.thinking_blocks_dropped,
                messages_dropped_by_window: report.messages_dropped_by_window,
                orphans_repaired: report.orphans_repaired,
                estimated_tokens_before: report.estimated_tokens_before,
                estimated_tokens_after: report.estimated_tokens_after,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{Model, ViewAnswer};
    use ctxkit_engine::ModelInfo;
    use serde_json::json;

    #[test]
    fn a_client_s_model_comes_with_its_cache_terms_from_the_table() {
        let model = |value| ModelInfo::from(serde_json::from_value::<Model>(value).unwrap());
        let gpt = model(json!({"provider": "openai", "id": "gpt-5", "context_window": 400000}));
        let terms = gpt.cache.unwrap();
        assert_eq!((terms.write_percent, terms.reads_any_prefix), (100, true));
        let own = model(json!({"provider": "me", "id": "mine", "context_window": 8000}));
        assert_eq!(own.cache, None);
    }

    /// `view.get` is written straight to text; the text is what the `Value` it replaced gave,
    /// unknown fields and their order included.
    #[test]
    fn the_view_as_text_is_the_view_as_a_value() {
        let messages: Vec<ctxkit_protocol::AgentMessage> = vec![
            serde_json::from_value(json!({"role": "user", "content": "fix \"it\"\n\u{7}",
                "timestamp": 1, "zeta": {"b": 1, "a": [1.5, null]}, "alpha": true}))
            .unwrap(),
            serde_json::from_value(json!({"role": "assistant", "stopReason": "toolUse",
                "content": [{"type": "toolCall", "id": "c1", "name": "bash",
                             "arguments": {"command": "ls", "z": 1, "a": 2}, "extra": "x"}],
                "usage": {"input": 3, "output": 4}, "custom": "kept"}))
            .unwrap(),
        ];
        let mut view = ctxkit_engine::build_view(
            &messages,
            &ctxkit_engine::EngineSettings::default(),
            200_000,
        );
        view.system.push("summary".to_owned());
        let report = view.report;
        let text = serde_json::value::to_raw_value(&ViewAnswer::from(&view)).unwrap();
        let value = json!({
            "system": view.system,
            "messages": serde_json::to_value(&view.messages).unwrap(),
            "report": {
                "tool_results_pruned": report.tool_results_pruned,
                "tool_calls_cut": report.tool_calls_cut,
                "chars_saved": report.chars_saved,
                "thinking_blocks_dropped": report.thinking_blocks_dropped,
                "messages_dropped_by_window": report.messages_dropped_by_window,
                "orphans_repaired": report.orphans_repaired,
                "estimated_tokens_before": report.estimated_tokens_before,
                "estimated_tokens_after": report.estimated_tokens_after,
            },
        });
        assert_eq!(text.get(), value.to_string());
    }
}

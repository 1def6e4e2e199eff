//! The model's view before each call: the branch's context, error and aborted replies left out (as
//! providers do), the context transforms applied, then the reference's `convertToLlm`. Summaries go
//! to the system text instead of user messages when `summaryRole` is `system`; pins a compaction
//! written elsewhere cut away are added after the summary. Stored history is never changed.

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};
use ctxkit_session::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX, to_llm_message,
};
use ctxkit_settings::TransformSettings;
use ctxkit_transform::{
    CacheLifetime, MeasuredMessage, TransformReport, transform_context, transform_measured,
};

use std::borrow::{Borrow, Cow};
use std::sync::Arc;

use crate::engine::Engine;
use crate::error::Result;
use crate::messages::shared_transcript;
use crate::settings::CompactionBudgets as _;
use ctxkit_settings::SummaryRole;

/// What the model is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelView {
    /// Text to add after the system prompt (summaries with `summaryRole: system`).
    pub system: Vec<String>,
    /// User, assistant and tool-result messages, in order.
    pub messages: Vec<AgentMessage>,
    /// What the transforms did.
    pub report: TransformReport,
    /// The prompt cache lifetime the request should ask for (`transforms.longCacheWhenItPays`;
    /// `Configured` when it is off or the view was built outside the engine).
    pub cache_lifetime: CacheLifetime,
    /// The tool call id of the last tool result the prune layer cut in `messages` (`None`: none),
    /// the end of the prefix that stays the same from request to request.
    pub last_cut_tool_result: Option<String>,
}

impl ModelView {
    /// The view for an agent that offers the model no `recall` (`defaultTools` with `-recall`):
    /// markers keep what they say was cut and the names they list, without the reference to
    /// fetch it, and summaries lose the line saying how to read their originals. The engine's own
    /// reading of the view (its markers' references) is unchanged: only the request loses them.
    pub fn without_recall(mut self) -> Self {
        let pointer = crate::recall::summary_pointer();
        let unpointed = |text: &mut String| {
            replace_all(text, &pointer, "");
            replace_all(
                text,
                crate::carried::CARRIED_LEAD_NAMING_RECALL,
                crate::carried::CARRIED_LEAD,
            );
        };
        self.system.iter_mut().for_each(unpointed);
        ctxkit_transform::strip_references(&mut self.messages);
        for message in &mut self.messages {
            if let AgentMessage::User(user) = message {
                match &mut user.content {
                    MessageContent::Text(text) => unpointed(text),
                    MessageContent::Blocks(blocks) => {
                        for block in blocks {
                            if let ContentBlock::Text(text) = block {
                                unpointed(&mut text.text);
                            }
                        }
                    }
                }
            }
        }
        self
    }
}

/// `text` with every occurrence of `part` replaced by `by`.
fn replace_all(text: &mut String, part: &str, by: &str) {
    if text.contains(part) {
        *text = text.replace(part, by);
    }
}

/// Builds a view from a transcript (pure). Only messages a transform changes are copied.
pub fn build_view<M: Borrow<AgentMessage>>(
    transcript: &[M],
    settings: &crate::settings::EngineSettings,
    context_window: u64,
) -> ModelView {
    let messages = transcript.iter().map(Borrow::borrow);
    assemble_view(messages, settings, context_window, |kept, transforms| {
        transform_context(kept, transforms, context_window)
    })
}

/// [`build_view`] of the branch's messages shared from the engine's cache, which keep what the
/// transforms measure of them from one request to the next.
pub(crate) fn build_measured_view(
    transcript: &[Arc<MeasuredMessage>],
    settings: &crate::settings::EngineSettings,
    context_window: u64,
) -> ModelView {
    let messages = transcript.iter().map(|message| &**message);
    assemble_view(messages, settings, context_window, |kept, transforms| {
        transform_measured(kept, transforms, context_window).into_output()
    })
}

/// The view of `transcript` with the transforms done by `transform`.
fn assemble_view<'a, M: Borrow<AgentMessage> + 'a>(
    transcript: impl Iterator<Item = &'a M>,
    settings: &crate::settings::EngineSettings,
    context_window: u64,
    transform: impl FnOnce(&[&'a M], &TransformSettings) -> ctxkit_transform::TransformOutput,
) -> ModelView {
    let summary_as_system = settings.summary_role == SummaryRole::System;
    let mut system = Vec::new();
    let kept: Vec<&M> = transcript
        .filter(|message| match (*message).borrow() {
            AgentMessage::Assistant(reply) => !reply.is_aborted_or_error(),
            AgentMessage::CompactionSummary(summary) if summary_as_system => {
                system.push(format!(
                    "{COMPACTION_SUMMARY_PREFIX}{}{}{COMPACTION_SUMMARY_SUFFIX}",
                    summary.summary,
                    crate::recall::summary_pointer()
                ));
                false
            }
            AgentMessage::BranchSummary(summary) if summary_as_system => {
                let pointer = if crate::forget::is_forgotten(&summary.summary) {
                    String::new()
                } else {
                    crate::recall::summary_pointer()
                };
                system.push(format!(
                    "{BRANCH_SUMMARY_PREFIX}{}{pointer}{BRANCH_SUMMARY_SUFFIX}",
                    summary.summary
                ));
                false
            }
            AgentMessage::User(_)
            | AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => true,
        })
        .collect();
    let transforms = last_resort_window(settings, context_window);
    let transformed = transform(&kept, &transforms);
    // The provider form, moving the roles that pass through unchanged instead of copying them.
    let mut messages: Vec<AgentMessage> = transformed
        .messages
        .into_iter()
        .filter_map(provider_message)
        .collect();
    if settings.block_images {
        for message in &mut messages {
            without_images(message);
        }
    }
    keep_a_user_message_first(&mut system, &mut messages);
    if let Some(note) = budget_note(
        settings,
        context_window,
        transformed.report.estimated_tokens_after,
    ) {
        add_note(&mut messages, note);
    }
    ModelView {
        system,
        messages,
        report: transformed.report,
        cache_lifetime: CacheLifetime::Configured,
        last_cut_tool_result: transformed.last_cut_tool_result,
    }
}

/// Summaries moved to the system text go back to the head of the messages, as the user message they
/// are under `summaryRole: user`, when what follows them is a reply (a compaction that split a
/// turn keeps the turn's tail from a reply on): Bedrock's Anthropic models and Gemini refuse a
/// conversation that opens with the model's turn.
fn keep_a_user_message_first(system: &mut Vec<String>, messages: &mut Vec<AgentMessage>) {
    if system.is_empty() || !matches!(messages.first(), Some(AgentMessage::Assistant(_))) {
        return;
    }
    let text = std::mem::take(system).join("\n\n");
    messages.insert(
        0,
        AgentMessage::User(ctxkit_protocol::UserMessage {
            content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
            timestamp: None,
            extra: ctxkit_protocol::JsonObject::new(),
        }),
    );
}

/// What a model is sent in place of an image under `images.blockImages` (Pi's words).
pub const IMAGE_BLOCKED: &str = "Image reading is disabled.";

/// `message` with each image of a user message or a tool result replaced by [`IMAGE_BLOCKED`],
/// once for a run of images, as Pi's request conversion does.
fn without_images(message: &mut AgentMessage) {
    let content = match message {
        AgentMessage::User(user) => &mut user.content,
        AgentMessage::ToolResult(result) => &mut result.content,
        AgentMessage::Assistant(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => return,
    };
    let MessageContent::Blocks(blocks) = content else {
        return;
    };
    if !blocks
        .iter()
        .any(|block| matches!(block, ContentBlock::Image(_)))
    {
        return;
    }
    let mut kept: Vec<ContentBlock> = Vec::with_capacity(blocks.len());
    for block in blocks.drain(..) {
        let block = match block {
            ContentBlock::Image(_) => ContentBlock::text(IMAGE_BLOCKED),
            block @ (ContentBlock::Text(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Unknown(_)) => block,
        };
        let repeated = matches!((&block, kept.last()), (ContentBlock::Text(this), Some(ContentBlock::Text(last)))
            if this.text == IMAGE_BLOCKED && last.text == IMAGE_BLOCKED);
        if !repeated {
            kept.push(block);
        }
    }
    *blocks = kept;
}

/// A message in the provider form (the reference's `convertToLlm`), moving the roles that pass
/// through unchanged instead of copying them. A compaction summary keeps its on-demand block (see
/// `on_demand`) for the request builders; both kinds of summary say where their originals are.
pub(crate) fn provider_message(message: AgentMessage) -> Option<AgentMessage> {
    match &message {
        AgentMessage::User(_) | AgentMessage::Assistant(_) | AgentMessage::ToolResult(_) => {
            Some(message)
        }
        AgentMessage::CompactionSummary(summary) => {
            // The view says where the summary's originals are (the stored summary is unchanged).
            let mut pointed = summary.clone();
            pointed.summary.push_str(&crate::recall::summary_pointer());
            let mut converted = to_llm_message(&AgentMessage::CompactionSummary(pointed))?;
            if let (AgentMessage::User(user), Some(block)) = (
                &mut converted,
                summary
                    .extra
                    .get(ctxkit_protocol::ON_DEMAND_COMPACTION_FIELD),
            ) {
                user.extra.insert(
                    ctxkit_protocol::ON_DEMAND_COMPACTION_FIELD.to_owned(),
                    block.clone(),
                );
            }
            Some(converted)
        }
        AgentMessage::BranchSummary(summary) if !crate::forget::is_forgotten(&summary.summary) => {
            // The branch it left behind stays in the session too.
            let mut pointed = summary.clone();
            pointed.summary.push_str(&crate::recall::summary_pointer());
            to_llm_message(&AgentMessage::BranchSummary(pointed))
        }
        AgentMessage::BashExecution(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::Custom(_)
        | AgentMessage::Unknown(_) => to_llm_message(&message),
    }
}

/// The note telling the model how full its context is, when `transforms.budgetNote` is on and the
/// view is over `budgetNotePercent` of the window.
fn budget_note(
    settings: &crate::settings::EngineSettings,
    context_window: u64,
    tokens: u64,
) -> Option<String> {
    let transforms = &settings.transforms;
    if !transforms.budget_note || context_window == 0 {
        return None;
    }
    let percent = tokens.saturating_mul(100) / context_window;
    if percent < transforms.budget_note_percent {
        return None;
    }
    let mut note =
        format!("[Context budget: about {tokens} of {context_window} tokens used ({percent}%).");
    if settings.compaction.enabled {
        let reserve = settings.compaction.planning(context_window).reserve_tokens;
        let threshold = ctxkit_tokens::threshold_percent(context_window, reserve);
        note.push_str(&format!(
            " Near {threshold}% older messages are replaced by a summary; write down anything you \
             must not lose (decisions, open work) before then."
        ));
    }
    note.push(']');
    Some(note)
}

/// Adds `note` as a text block to the last user message or tool result of the view.
fn add_note(messages: &mut [AgentMessage], note: String) {
    let content = match messages.last_mut() {
        Some(AgentMessage::User(user)) => &mut user.content,
        Some(AgentMessage::ToolResult(result)) => &mut result.content,
        Some(
            AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_),
        )
        | None => return,
    };
    let mut blocks = match std::mem::take(content) {
        ctxkit_protocol::MessageContent::Text(text) => {
            vec![ctxkit_protocol::ContentBlock::text(text)]
        }
        ctxkit_protocol::MessageContent::Blocks(blocks) => blocks,
    };
    blocks.push(ctxkit_protocol::ContentBlock::text(note));
    *content = ctxkit_protocol::MessageContent::Blocks(blocks);
}

/// The transform settings for this call. With compaction enabled the sliding window is the last
/// resort: it acts only above the midpoint between the compaction threshold (window − reserve) and
/// the window. Below the threshold it would hold every request under it, so the threshold, which
/// reads the provider's usage of those requests, would never be reached and compaction never run.
fn last_resort_window(
    settings: &crate::settings::EngineSettings,
    context_window: u64,
) -> Cow<'_, TransformSettings> {
    let transforms = &settings.transforms;
    if !settings.compaction.enabled || !transforms.window_enabled || context_window == 0 {
        return Cow::Borrowed(transforms);
    }
    let reserve_tokens = settings.compaction.planning(context_window).reserve_tokens;
    let floor_percent = ctxkit_tokens::sliding_window_floor_percent(context_window, reserve_tokens);
    if transforms.window_threshold_percent >= floor_percent {
        return Cow::Borrowed(transforms);
    }
    Cow::Owned(TransformSettings {
        window_threshold_percent: floor_percent,
        ..transforms.clone()
    })
}

impl Engine {
    /// The model's view now: call it before every model request.
    pub async fn model_view(&self) -> Result<ModelView> {
        let mut state = self.lock().await;
        let mut view = current_view(&mut state)?;
        // Kept for the request about to be recorded from this view (`projection`).
        crate::projection::view_estimate(&mut state, &view);
        if state.settings.transforms.long_cache_when_it_pays {
            // The request goes out right after the view's last message.
            let at = view.messages.last().and_then(AgentMessage::timestamp);
            view.cache_lifetime = state
                .cache_lifetime
                .request(at, view.report.estimated_tokens_after);
        }
        Ok(view)
    }
}

/// The model's view of the session's leaf now, before the cache lifetime is chosen.
pub(crate) fn current_view(state: &mut crate::state::State) -> Result<ModelView> {
    let settings = state.model_settings().into_owned();
    view_under(state, &settings)
}

/// [`current_view`] with every tool result longer than `pruneMinChars` cut to its marker, the most
/// recent ones and those of the turn in progress too (`recall` returns each as stored).
fn shortened_view(state: &mut crate::state::State) -> Result<ModelView> {
    let mut settings = state.model_settings().into_owned();
    settings.transforms = TransformSettings {
        prune_enabled: true,
        keep_recent_tool_results: 0,
        prune_when_it_pays: false,
        cache_aware: false,
        ..settings.transforms
    };
    view_under(state, &settings)
}

fn view_under(
    state: &mut crate::state::State,
    settings: &crate::settings::EngineSettings,
) -> Result<ModelView> {
    let window = state.model.as_ref().map_or(0, |model| model.context_window);
    let mut transcript = shared_transcript(state)?;
    // Pins a compaction written elsewhere cut away come back where ctxkit's would put them.
    if let Some(pinned) = crate::pins::missing_from_context(state) {
        let after_summary = transcript
            .iter()
            .position(|message| matches!(message.message(), AgentMessage::CompactionSummary(_)))
            .map_or(0, |position| position + 1);
        transcript.insert(after_summary, Arc::new(MeasuredMessage::new(pinned)));
    }
    Ok(build_measured_view(&transcript, settings, window))
}

impl Engine {
    /// The model's view now with the long output of every tool result cut to its marker, the
    /// turn in progress' included (the stored session is untouched; `recall` returns each
    /// output): the last resort for a request whose reply no compaction left room for, since what
    /// compaction keeps is that turn (QA long workday: six large reads in one turn left the
    /// session refusing every request). Its estimate stands for the next request recorded, as
    /// [`Engine::model_view`]'s does.
    pub async fn model_view_shortened(&self) -> Result<ModelView> {
        let mut state = self.lock().await;
        let view = shortened_view(&mut state)?;
        crate::projection::view_estimate(&mut state, &view);
        Ok(view)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With no `recall` offered, a summary keeps its text and the names it carried, without the
    /// line on reading its originals or the `recall` in the carried names' lead.
    #[test]
    fn a_view_without_recall_names_no_recall() {
        let summary = format!(
            "<summary>\nThe goal.\n\n{}`src/a.rs`{}\n</summary>",
            crate::carried::CARRIED_LEAD_NAMING_RECALL,
            crate::recall::summary_pointer()
        );
        let message: AgentMessage = serde_json::from_value(serde_json::json!({
            "role": "user", "content": [{"type": "text", "text": summary}]
        }))
        .unwrap();
        let view = ModelView {
            system: vec![summary.clone()],
            messages: vec![message],
            report: TransformReport::default(),
            cache_lifetime: CacheLifetime::default(),
            last_cut_tool_result: None,
        }
        .without_recall();
        let expected = format!(
            "<summary>\nThe goal.\n\n{}`src/a.rs`\n</summary>",
            crate::carried::CARRIED_LEAD
        );
        assert_eq!(view.system, std::slice::from_ref(&expected));
        let AgentMessage::User(user) = &view.messages[0] else {
            panic!("not a user message");
        };
        let MessageContent::Blocks(blocks) = &user.content else {
            panic!("not blocks");
        };
        let ContentBlock::Text(text) = &blocks[0] else {
            panic!("not text");
        };
        assert_eq!(text.text, expected);
    }
}

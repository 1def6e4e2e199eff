//! The default summarizer when no model is configured: deterministic and extractive. It reads the
//! serialized conversation of a request and writes what a careful engineer would hand over: the
//! user's requests (cleaned, the latest marked), standing instructions, progress grouped by file and
//! outcome, what is still open judged from the tail, decisions, and the exact strings worth keeping;
//! merged with the previous summary when updating, in the user's language, within the budget.

mod commands;
mod errors;
mod facts;
mod followups;
mod git;
mod history;
mod inspect;
mod items;
mod measures;
mod merge;
mod previous;
mod render;
mod tail;
mod text;
mod work;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_merge;
#[cfg(test)]
mod tests_outcomes;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::extract::{Conversation, Part};
use crate::summarizer::{
    Summarizer, SummarizerError, SummaryPurpose, SummaryRequest, SummaryResponse,
};
use facts::Facts;
use render::{Section, Style, render_within};
use text::{Language, clean_request, clip};
use work::Work;

/// The first line of every offline summary.
pub const OFFLINE_NOTICE: &str =
    "_Extractive summary written offline by ctxkit (no model was used)._";

/// The offline, extractive summarizer.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineSummarizer;

impl Summarizer for OfflineSummarizer {
    fn name(&self) -> String {
        "offline".to_owned()
    }

    fn supports_reasoning(&self) -> bool {
        false
    }

    fn summarize(
        &self,
        request: SummaryRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'_, Result<SummaryResponse, SummarizerError>> {
        let text = summarize_offline(&request);
        Box::pin(async move { Ok(SummaryResponse { text, usage: None }) })
    }
}

/// The user's own messages of a conversation (not shell runs, not carried summaries).
fn user_texts(parts: &[Part]) -> impl Iterator<Item = &str> {
    parts.iter().filter_map(|part| match part {
        Part::User(text) if !text.starts_with("Ran `") && previous::carried(text).is_none() => {
            Some(text.as_str())
        }
        Part::User(_)
        | Part::Assistant(_)
        | Part::Thinking(_)
        | Part::ToolCalls(_)
        | Part::ToolResult(_) => None,
    })
}

/// English or Chinese wording of one of the summary's own phrases.
pub(crate) fn say(language: Language, english: &str, chinese: &str) -> String {
    match language {
        Language::English => english.to_owned(),
        Language::Chinese => chinese.to_owned(),
    }
}

/// The offline summarizer's length limit for a request without one (every compaction and branch
/// request since Pi 1.6): the limits Pi 0.87 asked of a model with the default reserve of 16384
/// (80% and 50% of it, and 4096 for a branch), so offline summaries keep their size.
pub fn offline_default_limit(purpose: SummaryPurpose) -> u64 {
    match purpose {
        SummaryPurpose::History => 13_107,
        SummaryPurpose::TurnPrefix => 8_192,
        SummaryPurpose::Branch => 4_096,
    }
}

/// Builds the summary text for a request; it never exceeds `request.max_tokens`, or
/// [`offline_default_limit`] without one (counted as the largest of chars/4, ctxkit's estimator and
/// an exact cl100k count).
pub fn summarize_offline(request: &SummaryRequest) -> String {
    let conversation = Conversation::from_request(&request.user_text);
    let language = Language::detect(
        user_texts(&conversation.parts).chain(conversation.previous_summary.as_deref()),
    );
    let sections = match request.purpose {
        SummaryPurpose::TurnPrefix => turn_prefix_sections(&conversation, language),
        SummaryPurpose::History => {
            history::sections(&conversation, language, history::Span::History)
        }
        SummaryPurpose::Branch => history::sections(&conversation, language, history::Span::Branch),
    };
    let limit = request
        .max_tokens
        .unwrap_or_else(|| offline_default_limit(request.purpose));
    render_within(&sections, limit, OFFLINE_NOTICE, language)
}

fn turn_prefix_sections(conversation: &Conversation, language: Language) -> Vec<Section> {
    let mut request = Section::new("## Original Request", Style::Bullet);
    for text in user_texts(&conversation.parts) {
        if let Some(clean) = clean_request(text, 400) {
            request.push(clean, 90);
        }
    }
    let work = Work::from_parts(&conversation.parts);
    let modified: Vec<String> = work.files.iter().map(|file| file.path.clone()).collect();
    let mut early = Section::new("## Early Progress", Style::Bullet);
    for item in items::progress_items(&work, &[], language) {
        early.push(item.text, item.priority);
    }
    for decision in items::decisions(&conversation.parts) {
        early.push(decision, 50);
    }
    let mut context = Section::new("## Context for Suffix", Style::Bullet);
    for (index, run) in work.failing().into_iter().enumerate() {
        if let work::Outcome::Failed(error) = &run.last {
            context.push(
                format!(
                    "`{}` {}: {error}",
                    run.command,
                    say(language, "fails", "失败")
                ),
                90 - index as u32,
            );
        }
    }
    let facts = Facts::collect(&conversation.parts, &work, &modified);
    let said: Vec<render::Item> = request
        .items
        .iter()
        .chain(&early.items)
        .chain(&context.items)
        .cloned()
        .collect();
    for item in items::fact_items(&facts, &work, language, &said) {
        context.push(item.text, item.priority);
    }
    if let Some(pending) = work.pending.first() {
        context.push(
            format!(
                "{} `{}`",
                say(language, "Waiting for the result of", "等待结果："),
                clip(pending, 160)
            ),
            95,
        );
    }
    vec![request, early, context]
}

//! Running a planned compaction: assemble the requests in the reference's order and tags, run the
//! history summary and then (for a split turn) the turn-prefix summary, as Pi 1.6 does, merge, append
//! the file blocks. Cancellable; returns a result for the caller to append (nothing is written here).

use ctxkit_protocol::Usage;
use ctxkit_summarizer::{
    FailureKind, Summarizer, SummaryPurpose, SummaryRequest, SummaryResponse, SummarySpan,
};
use ctxkit_tokens::estimate_text_tokens;
use futures::future::{Either, select};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::continuation::{CachePrefix, RequestMode, answers_the_format, request_mode};
use crate::error::CompactionError;
use crate::prepare::{Preparation, SourcedMessage};
use crate::prompts::Prompts;
use crate::serialize::append_message;
use crate::span_window::{SpanGap, span_window};
use crate::verbatim_prefix::verbatim_turn_prefix;

/// Stand-in history summary when a split turn has nothing before it and no previous summary.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// Joins the history summary and the turn-prefix summary of a split turn.
pub const TURN_CONTEXT_SEPARATOR: &str = "\n\n---\n\n**Turn Context (split turn):**\n\n";

/// Between the previous summary, kept word for word, and the one added after it
/// (`compaction.appendSummaryTokens`).
pub const APPEND_SEPARATOR: &str =
    "\n\n---\n\n**Later work (added to the summary above, which stands as written):**\n\n";

/// Closes the history request of a summary added after the previous one: the model writes only
/// the span's part.
pub const APPEND_NOTE: &str = "An earlier summary covers the work before this span and stays as it is, word for word; yours is added after it. Summarize only the messages of this span, in the same format, and do not repeat what came before them.";

/// The previous summary (without its file blocks, which the new lists replace) this compaction's
/// summary is added after, when `append_below_tokens` allows it: a summary update re-writes the
/// whole summary, near its size cap after a few compactions, and output is the dearest token a
/// compaction pays for (docs/simulator.md, sixth round). Adding only the span's part keeps what the
/// earlier summaries said word for word, and writes a span's worth; once the previous summary is
/// at the limit the update consolidates it in full, as the reference does. `None` when off, when
/// there is no previous summary or no history span, or when the previous summary is at the limit
/// (tokens as characters / 4).
pub fn appended_to(preparation: &Preparation, append_below_tokens: u64) -> Option<&str> {
    if append_below_tokens == 0 || preparation.messages_to_summarize.is_empty() {
        return None;
    }
    let previous = preparation.previous_summary.as_deref()?;
    let body = crate::file_ops::FileLists::strip_blocks(previous);
    let tokens = (body.chars().count() as u64).div_ceil(4);
    (!body.trim().is_empty() && tokens < append_below_tokens).then_some(body)
}

/// Options of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactOptions {
    /// Extra instructions (`/compact <focus>`).
    pub focus: Option<String>,
    /// The session's reasoning level (`off` or absent: none).
    pub thinking_level: Option<String>,
    /// A `<file-context>` block (see `file_context_block`) placed before the instructions of the
    /// history request; empty for none (the default).
    pub file_context: String,
    /// Whether requests continue the conversation's last model request (`compaction.cachePrefix`);
    /// off by default.
    pub cache_prefix: CachePrefix,
    /// Add this compaction's summary after the previous one, kept word for word, while that is
    /// under this many tokens (`compaction.appendSummaryTokens`; 0, the default: every update
    /// rewrites the whole summary, as the reference does). See [`appended_to`].
    pub append_below_tokens: u64,
}

/// What a compaction produced, ready to append.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactionResult {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// `{readFiles, modifiedFiles}` as Pi writes them, plus `summarizer` and `usage` for inspection.
    pub details: Value,
    /// The requests sent, in order (history first).
    pub requests: Vec<SummaryRequest>,
}

fn reasoning(summarizer: &dyn Summarizer, options: &CompactOptions) -> Option<String> {
    options
        .thinking_level
        .as_deref()
        .filter(|level| summarizer.supports_reasoning() && *level != "off")
        .map(str::to_owned)
}

/// Messages as a provider receives them, serialized for the summarizer.
pub fn serialize_messages(messages: &[SourcedMessage]) -> String {
    let mut text = String::new();
    append_messages(&mut text, messages);
    text
}

/// Appends `messages` serialized to `text`. One message at a time: the span is not copied whole
/// (nor converted whole) to be serialized.
pub(crate) fn append_messages(text: &mut String, messages: &[SourcedMessage]) {
    for message in messages {
        for converted in ctxkit_session::convert_to_llm(std::slice::from_ref(&message.message)) {
            append_message(text, &converted);
        }
    }
}

/// The span's messages serialized for the summarizer, with a line where messages were left out of
/// a span too long to be carried whole (`gap`; see `Preparation`).
pub(crate) fn serialize_span(messages: &[SourcedMessage], gap: Option<SpanGap>) -> String {
    let Some(gap) = gap.filter(|gap| gap.at <= messages.len()) else {
        return serialize_messages(messages);
    };
    let mut text = serialize_messages(&messages[..gap.at]);
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&format!(
        "[{} messages left out here: the span is longer than a summary request carries]",
        gap.messages
    ));
    append_messages(&mut text, &messages[gap.at..]);
    text
}

/// The history request: conversation, previous summary when updating, instructions, focus.
pub fn history_request(
    preparation: &Preparation,
    prompts: &Prompts,
    summarizer: &dyn Summarizer,
    options: &CompactOptions,
) -> SummaryRequest {
    let conversation = serialize_span(&preparation.messages_to_summarize, preparation.history_gap);
    history_request_of(
        &HistoryPart {
            conversation: &conversation,
            messages: &preparation.messages_to_summarize,
            gap: preparation.history_gap,
            previous_summary: preparation.previous_summary.as_deref(),
        },
        preparation,
        prompts,
        summarizer,
        options,
    )
}

/// What one history request covers: the whole span, or one chunk of it (`crate::chunks`).
pub(crate) struct HistoryPart<'a> {
    /// The messages serialized.
    pub conversation: &'a str,
    pub messages: &'a [SourcedMessage],
    pub gap: Option<SpanGap>,
    /// The summary the request updates, if any.
    pub previous_summary: Option<&'a str>,
}

/// The history request of `part`: its conversation, the summary it updates, the instructions.
pub(crate) fn history_request_of(
    part: &HistoryPart<'_>,
    preparation: &Preparation,
    prompts: &Prompts,
    summarizer: &dyn Summarizer,
    options: &CompactOptions,
) -> SummaryRequest {
    let mut text = format!("<conversation>\n{}\n</conversation>\n\n", part.conversation);
    let instructions = match part.previous_summary {
        Some(previous) => {
            text.push_str(&format!(
                "<previous-summary>\n{previous}\n</previous-summary>\n\n"
            ));
            &prompts.update
        }
        None => &prompts.initial,
    };
    text.push_str(&options.file_context);
    text.push_str(instructions);
    push_focus(&mut text, options.focus.as_deref());
    SummaryRequest {
        purpose: SummaryPurpose::History,
        system_prompt: prompts.system.clone(),
        user_text: text,
        // Pi 1.6: no limit of its own; the provider fits the model's output limit.
        max_tokens: None,
        reasoning: reasoning(summarizer, options),
        source: SummarySpan {
            focus: options.focus.clone().filter(|focus| !focus.is_empty()),
            room_tokens: Some(preparation.settings.reserve_tokens * 4 / 5),
            ..source(
                part.messages,
                part.gap,
                part.previous_summary.map(str::to_owned),
                &preparation.file_operations,
            )
        },
    }
}

/// The structured side of a request: the messages (a bounded window of them, see `span_window`;
/// a span the plan already cut, `gap`, is its window), the earlier summary, the file lists.
pub(crate) fn source(
    messages: &[SourcedMessage],
    gap: Option<SpanGap>,
    previous_summary: Option<String>,
    files: &crate::file_ops::FileOperations,
) -> SummarySpan {
    let lists = files.lists();
    let (messages, omitted_messages) = match gap {
        Some(gap) => (
            messages
                .iter()
                .map(|message| message.message.clone())
                .collect(),
            gap.messages,
        ),
        None => span_window(messages),
    };
    SummarySpan {
        messages,
        omitted_messages,
        previous_summary,
        read_files: lists.read_files,
        modified_files: lists.modified_files,
        focus: None,
        room_tokens: None,
        continues_summary: false,
    }
}

/// The turn-prefix request of a split turn.
pub fn turn_prefix_request(
    preparation: &Preparation,
    prompts: &Prompts,
    summarizer: &dyn Summarizer,
    options: &CompactOptions,
) -> SummaryRequest {
    // Pi 0.87's layout: the conversation, then the instructions, under two headings; Pi 1.6 appends
    // the focus here too.
    let mut user_text = format!(
        "# Conversation\n{}\n\n# Instructions\n{}",
        serialize_span(
            &preparation.turn_prefix_messages,
            preparation.turn_prefix_gap
        ),
        prompts.turn_prefix
    );
    push_focus(&mut user_text, options.focus.as_deref());
    SummaryRequest {
        purpose: SummaryPurpose::TurnPrefix,
        system_prompt: prompts.system.clone(),
        user_text,
        max_tokens: None,
        reasoning: reasoning(summarizer, options),
        source: SummarySpan {
            room_tokens: Some(preparation.settings.reserve_tokens / 2),
            ..source(
                &preparation.turn_prefix_messages,
                preparation.turn_prefix_gap,
                None,
                &crate::file_ops::FileOperations::default(),
            )
        },
    }
}

/// Appends `Additional focus: <focus>` after a blank line, for a non-empty focus.
pub(crate) fn push_focus(text: &mut String, focus: Option<&str>) {
    if let Some(focus) = focus.filter(|focus| !focus.is_empty()) {
        text.push_str(&format!("\n\nAdditional focus: {focus}"));
    }
}

/// The requests of one run: fresh prompts, or instructions continuing the conversation.
fn requests_for(
    mode: &RequestMode<'_>,
    preparation: &Preparation,
    prompts: &Prompts,
    summarizer: &dyn Summarizer,
    options: &CompactOptions,
) -> (SummaryRequest, SummaryRequest) {
    let mut history = history_request(preparation, prompts, summarizer, options);
    let mut turn_prefix = turn_prefix_request(preparation, prompts, summarizer, options);
    match mode {
        RequestMode::Fresh | RequestMode::FreshBecause(_) => {}
        RequestMode::Continue(_) => {
            history.user_text = crate::continuation::history_instruction(
                preparation,
                prompts,
                &options.file_context,
                options.focus.as_deref(),
            );
            turn_prefix.user_text = crate::continuation::turn_prefix_instruction(
                preparation,
                prompts,
                options.focus.as_deref(),
            );
        }
    }
    (history, turn_prefix)
}

/// Runs one request, giving up as soon as `cancel` fires.
pub async fn run_request(
    summarizer: &dyn Summarizer,
    request: SummaryRequest,
    cancel: &CancellationToken,
) -> Result<SummaryResponse, CompactionError> {
    run_in_mode(summarizer, request, &RequestMode::Fresh, cancel).await
}

/// Runs one request fresh or continuing the conversation, giving up as soon as `cancel` fires.
async fn run_in_mode(
    summarizer: &dyn Summarizer,
    request: SummaryRequest,
    mode: &RequestMode<'_>,
    cancel: &CancellationToken,
) -> Result<SummaryResponse, CompactionError> {
    if cancel.is_cancelled() {
        return Err(CompactionError::Cancelled);
    }
    // A continued request's instruction, which its reply must answer in format.
    let instruction = match mode {
        RequestMode::Continue(_) => Some(request.user_text.clone()),
        RequestMode::Fresh | RequestMode::FreshBecause(_) => None,
    };
    let work = match mode {
        RequestMode::Fresh | RequestMode::FreshBecause(_) => {
            summarizer.summarize(request, cancel.clone())
        }
        RequestMode::Continue(prefix) => {
            summarizer.summarize_continuing(request, (*prefix).clone(), cancel.clone())
        }
    };
    let cancelled = Box::pin(cancel.cancelled());
    match select(work, cancelled).await {
        // An empty reply would replace the history with nothing: a failure, so nothing is written.
        Either::Left((Ok(response), _)) if response.text.trim().is_empty() => {
            Err(CompactionError::Summarizer {
                message: format!("{} returned an empty summary", summarizer.name()),
                kind: FailureKind::Request,
            })
        }
        // The conversation carried on instead of being summarized: its reply is no summary.
        Either::Left((Ok(response), _))
            if instruction
                .as_deref()
                .is_some_and(|asked| !answers_the_format(asked, &response.text)) =>
        {
            Err(CompactionError::Summarizer {
                message: format!(
                    "{} answered without the summary's headings",
                    summarizer.name()
                ),
                kind: FailureKind::Request,
            })
        }
        // Every summary a summarizer writes (history, turn prefix, branch; in the background or
        // not) is kept without the credentials it shows by their shape.
        Either::Left((Ok(response), _)) => Ok(SummaryResponse {
            text: crate::kept_summary(&response.text),
            ..response
        }),
        Either::Left((Err(error), _)) => Err(CompactionError::Summarizer {
            message: error.message,
            kind: error.kind,
        }),
        Either::Right(((), _)) => Err(CompactionError::Cancelled),
    }
}

fn usage_value(usage: Option<&Usage>) -> Value {
    usage
        .and_then(|usage| serde_json::to_value(usage).ok())
        .unwrap_or(Value::Null)
}

/// What a run of summary requests wrote: the summary (before the file blocks), the requests and
/// their usages.
pub(crate) struct Written {
    summary: String,
    requests: Vec<SummaryRequest>,
    usages: Vec<Value>,
}

/// One compaction's summary requests, sent in a mode.
pub(crate) struct Run<'a> {
    pub(crate) preparation: &'a Preparation,
    pub(crate) summarizer: &'a dyn Summarizer,
    pub(crate) prompts: &'a Prompts,
    pub(crate) options: &'a CompactOptions,
    /// The previous summary the new part is added after (`append_below_tokens`).
    pub(crate) appended: Option<&'a str>,
    pub(crate) cancel: &'a CancellationToken,
}

impl Run<'_> {
    async fn summarize(&self, mode: &RequestMode<'_>) -> Result<Written, CompactionError> {
        let (preparation, summarizer, cancel) = (self.preparation, self.summarizer, self.cancel);
        let (mut history, prefix_request) =
            requests_for(mode, preparation, self.prompts, summarizer, self.options);
        if self.appended.is_some() {
            history.user_text.push_str("\n\n");
            history.user_text.push_str(APPEND_NOTE);
            history.source.continues_summary = true;
        }
        let after_previous = |text: String| match self.appended {
            Some(body) => format!("{body}{APPEND_SEPARATOR}{text}"),
            None => text,
        };
        let mut written = Written {
            summary: String::new(),
            requests: Vec::new(),
            usages: Vec::new(),
        };
        written.summary =
            if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
                // History first, then the prefix; a failed history request ends the run. Without
                // history messages the previous summary stands for the history as it is (no request).
                let history_text = if preparation.messages_to_summarize.is_empty() {
                    // Its file blocks are not copied: the lists appended below hold those files too.
                    preparation.previous_summary.as_deref().map_or_else(
                        || NO_PRIOR_HISTORY.to_owned(),
                        |previous| crate::file_ops::FileLists::strip_blocks(previous).to_owned(),
                    )
                } else {
                    after_previous(self.send_history(&mut written, history, mode).await?)
                };
                let prefix = match verbatim_turn_prefix(preparation) {
                    Some(checkpoint) => checkpoint,
                    None => {
                        written
                            .send(summarizer, prefix_request, mode, cancel)
                            .await?
                    }
                };
                format!("{history_text}{TURN_CONTEXT_SEPARATOR}{prefix}")
            } else {
                after_previous(self.send_history(&mut written, history, mode).await?)
            };
        Ok(written)
    }
}

impl Written {
    /// Sends one request of the run, noting it and its usage; the answer's text.
    pub(crate) async fn send(
        &mut self,
        summarizer: &dyn Summarizer,
        request: SummaryRequest,
        mode: &RequestMode<'_>,
        cancel: &CancellationToken,
    ) -> Result<String, CompactionError> {
        self.requests.push(request.clone());
        let response = run_in_mode(summarizer, request, mode, cancel).await?;
        self.usages.push(usage_value(response.usage.as_ref()));
        Ok(response.text)
    }
}

/// The estimated tokens of the longest instruction a run continuing the conversation sends.
fn continuation_instruction_tokens(
    preparation: &Preparation,
    prompts: &Prompts,
    options: &CompactOptions,
    appended: bool,
) -> u64 {
    let focus = options.focus.as_deref();
    let mut history = crate::continuation::history_instruction(
        preparation,
        prompts,
        &options.file_context,
        focus,
    );
    if appended {
        history.push_str(APPEND_NOTE);
    }
    let prefix = crate::continuation::turn_prefix_instruction(preparation, prompts, focus);
    estimate_text_tokens(&history).max(estimate_text_tokens(&prefix))
}

/// Summarizes a prepared compaction.
pub async fn compact(
    preparation: &Preparation,
    summarizer: &dyn Summarizer,
    prompts: &Prompts,
    options: &CompactOptions,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let original = preparation;
    let appended = appended_to(original, options.append_below_tokens);
    // Appending: the span is summarized as a first summary would be, and added after the old one.
    let fresh;
    let preparation = if appended.is_some() {
        fresh = Preparation {
            previous_summary: None,
            ..original.clone()
        };
        &fresh
    } else {
        original
    };
    let instruction_tokens = match options.cache_prefix {
        CachePrefix::Conversation { .. } => {
            continuation_instruction_tokens(preparation, prompts, options, appended.is_some())
        }
        CachePrefix::Off | CachePrefix::Unavailable(_) => 0,
    };
    let continued = request_mode(
        &options.cache_prefix,
        summarizer,
        preparation,
        instruction_tokens,
    );
    let run = Run {
        preparation,
        summarizer,
        prompts,
        options,
        appended,
        cancel,
    };
    // A continued conversation the model answered with something else than a summary (a tool
    // call, nothing, a refusal, an answer that does not parse) is asked again as a fresh summary
    // prompt. A provider failing whatever it is sent (a 5xx, a 429, the network, after the
    // client's retries) is not: the fresh prompt went through the same retries again, and the
    // error said half the attempts and half the time (round 97).
    let (mode, written) = match run.summarize(&continued).await {
        Err(CompactionError::Summarizer {
            message,
            kind: FailureKind::Request,
        }) if matches!(continued, RequestMode::Continue(_)) => {
            let fresh = RequestMode::FreshBecause(format!(
                "the request continuing the conversation failed: {message}"
            ));
            let written = run.summarize(&fresh).await;
            (fresh, written)
        }
        other => (continued, other),
    };
    let Written {
        mut summary,
        requests,
        usages,
    } = written?;
    let lists = preparation.file_operations.lists();
    summary.push_str(&lists.blocks());
    let mut details = lists.details();
    if let Some(object) = details.as_object_mut() {
        object.insert("summarizer".to_owned(), json!(summarizer.name()));
        object.insert("usage".to_owned(), Value::Array(usages));
        if let Some(cache_prefix) = mode.details() {
            object.insert("cachePrefix".to_owned(), cache_prefix);
        }
        if let Some(body) = appended {
            // What the engine copied, not the summarizer's output.
            let kept = body.chars().count() + APPEND_SEPARATOR.chars().count();
            object.insert("appended".to_owned(), json!({"keptChars": kept}));
        }
    }
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details,
        requests,
    })
}

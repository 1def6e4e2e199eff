//! Cache-prefix summary requests (`compaction.cachePrefix`): instead of serializing the span into a
//! fresh prompt, a summary request continues the conversation's last model request, so the
//! provider reads everything but the instruction from its prompt cache (Codex's way; Pi sends fresh
//! prompts). The span is named in the instruction by quoting its last message. When no request can
//! be continued the fresh prompt is sent and the reason is recorded with the compaction.

use ctxkit_protocol::AgentMessage;
use ctxkit_summarizer::{ConversationPrefix, Summarizer};
use ctxkit_tokens::{estimate_context_tokens, estimate_text_tokens, estimate_tokens};

use crate::prepare::{Preparation, SourcedMessage};
use crate::serialize::truncate_for_summary;

/// The most UTF-16 units of a message quoted to name where a span ends.
const QUOTE_MAX_UNITS: usize = 300;

/// Whether summary requests continue the conversation (`compaction.cachePrefix`).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum CachePrefix {
    /// Off: fresh serialized prompts, as the reference sends.
    #[default]
    Off,
    /// On, but there is no conversation request to continue; why (recorded with the compaction).
    Unavailable(String),
    /// On: continue this conversation, in a context window of `context_window` tokens (0: unknown).
    Conversation {
        prefix: ConversationPrefix,
        context_window: u64,
    },
}

/// How one compaction's requests are sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RequestMode<'a> {
    Fresh,
    /// Fresh, although cache-prefix requests are on: why.
    FreshBecause(String),
    Continue(&'a ConversationPrefix),
}

impl RequestMode<'_> {
    /// What the compaction's details record under `cachePrefix` (nothing when the setting is off).
    pub(crate) fn details(&self) -> Option<serde_json::Value> {
        match self {
            Self::Fresh => None,
            Self::FreshBecause(reason) => {
                Some(serde_json::json!({"used": false, "reason": reason}))
            }
            Self::Continue(_) => Some(serde_json::json!({"used": true})),
        }
    }
}

/// Whether `reply`, the answer to a summary instruction sent on in the conversation, is in the
/// format `instruction` asked for: one of its headings (`## Goal`, `## Original Request`, … in
/// any case and at any level) heads a line of the reply. A model that carries on with the
/// conversation instead ("Sure! Next I will run the tests.") would have its reply stand for the
/// history; such an answer is asked again as a fresh prompt. Instructions without headings (a
/// user's own prompt files) accept any answer. The messages quoted to name the span
/// (`<span-start>`, `<span-end>`) are the conversation's, not the format.
pub(crate) fn answers_the_format(instruction: &str, reply: &str) -> bool {
    let mut quoting = false;
    let mut asked: Vec<String> = Vec::new();
    for line in instruction.lines() {
        match line.trim() {
            "<span-start>" | "<span-end>" => quoting = true,
            "</span-start>" | "</span-end>" => quoting = false,
            _ if quoting => {}
            text => asked.extend(heading(text)),
        }
    }
    asked.is_empty()
        || reply
            .lines()
            .filter_map(heading)
            .any(|line| asked.contains(&line))
}

/// A markdown heading's text, lower case, without its `#` marks and spaces.
fn heading(line: &str) -> Option<String> {
    let text = line
        .trim()
        .strip_prefix('#')?
        .trim_start_matches('#')
        .trim();
    (!text.is_empty()).then(|| text.to_lowercase())
}

/// The estimated tokens of sending `prefix` again (messages, system prompt, tool schemas).
pub fn estimate_prefix_tokens(prefix: &ConversationPrefix) -> u64 {
    let messages: u64 = prefix.messages.iter().map(estimate_tokens).sum();
    messages + estimate_overhead_tokens(prefix)
}

/// The estimated tokens of what `prefix` sends besides its messages: the system prompt and the
/// tool schemas.
pub fn estimate_overhead_tokens(prefix: &ConversationPrefix) -> u64 {
    let tools: u64 = prefix
        .tools
        .iter()
        .map(|tool| {
            estimate_text_tokens(&tool.name)
                + estimate_text_tokens(&tool.description)
                + estimate_text_tokens(&tool.parameters.to_string())
        })
        .sum();
    estimate_text_tokens(&prefix.system_prompt) + tools
}

/// The share of a request's input the model client keeps free after it, percent (as
/// `ctxkit-llm`'s output limit does: tokenizers count code and logs above the estimate).
const SAFETY_MARGIN_PERCENT: u64 = 15;

/// The tokens of sending `prefix` again: its last reply's usage (what the provider counted of the
/// request up to it) and the messages after it estimated (`estimate_context_tokens`), or the whole
/// prefix with its system prompt and tools estimated when no reply reports usage.
fn counted_prefix_tokens(prefix: &ConversationPrefix) -> u64 {
    let counted = estimate_context_tokens(&prefix.messages);
    match counted.last_usage_index {
        Some(_) => counted.tokens,
        None => estimate_prefix_tokens(prefix),
    }
}

/// Chooses how to send the requests of `preparation`.
/// `instruction_tokens`: the longest instruction a request of the run adds after the
/// conversation (the previous summary and the file context are part of it).
pub(crate) fn request_mode<'a>(
    cache_prefix: &'a CachePrefix,
    summarizer: &dyn Summarizer,
    preparation: &Preparation,
    instruction_tokens: u64,
) -> RequestMode<'a> {
    match cache_prefix {
        CachePrefix::Off => RequestMode::Fresh,
        CachePrefix::Unavailable(reason) => RequestMode::FreshBecause(reason.clone()),
        CachePrefix::Conversation {
            prefix,
            context_window,
        } => {
            if !summarizer.can_continue(prefix) {
                return RequestMode::FreshBecause(format!(
                    "summaries are written by {}, not by the conversation's model {}/{}",
                    summarizer.name(),
                    prefix.provider,
                    prefix.model
                ));
            }
            // Each request is the conversation and its instruction, the safety margin the model
            // client keeps after an input, and the answer, which gets at least the output floor
            // every request must leave. At a threshold compaction near the window (a small
            // window's, or the reference's) that does not fit, and the request goes fresh.
            let settings = &preparation.settings;
            let input = counted_prefix_tokens(prefix) + instruction_tokens;
            let margin = (input * SAFETY_MARGIN_PERCENT / 100)
                .max(ctxkit_overflow::output_margin(*context_window));
            let needed = input
                + margin
                + settings
                    .max_summary_tokens()
                    .max(settings.max_turn_prefix_tokens())
                    .max(ctxkit_overflow::output_floor(*context_window, 0));
            if *context_window > 0 && needed > *context_window {
                return RequestMode::FreshBecause(format!(
                    "the conversation, the instruction and the summary (about {needed} tokens) would not fit the window of {context_window} tokens"
                ));
            }
            RequestMode::Continue(prefix)
        }
    }
}

/// One message as the summarizer serialization shows it, cut to a quotable length.
fn quote(message: &AgentMessage) -> String {
    let serialized = crate::serialize::serialize_conversation(&ctxkit_session::convert_to_llm(
        std::slice::from_ref(message),
    ));
    truncate_for_summary(serialized.trim(), QUOTE_MAX_UNITS)
}

fn last_message(messages: &[SourcedMessage]) -> Option<&AgentMessage> {
    messages.last().map(|message| &message.message)
}

/// The instruction of a history request continuing the conversation: where the span ends, the
/// previous summary when updating, the file context, the format, the focus.
pub(crate) fn history_instruction(
    preparation: &Preparation,
    prompts: &crate::prompts::Prompts,
    file_context: &str,
    focus: Option<&str>,
) -> String {
    let mut text = format!("{}\n\n", prompts.continuation);
    // The history ends before the split turn's beginning, or where the kept messages start.
    match last_message(&preparation.messages_to_summarize) {
        Some(last) => text.push_str(&format!(
            "Summarize the conversation above from its start up to and including this message:\n<span-end>\n{}\n</span-end>\nEverything after that message stays in the context word for word: leave it out of the summary.\n\n",
            quote(last)
        )),
        None => text.push_str("Summarize the conversation above.\n\n"),
    }
    let instructions = match &preparation.previous_summary {
        Some(previous) => {
            text.push_str(&format!(
                "<previous-summary>\n{previous}\n</previous-summary>\n\n"
            ));
            &prompts.update
        }
        None => &prompts.initial,
    };
    text.push_str(file_context);
    text.push_str(instructions);
    crate::runner::push_focus(&mut text, focus);
    text
}

/// The instruction of a turn-prefix request continuing the conversation: the turn's beginning is
/// named by its first and last messages; the focus closes it, as in a fresh request.
pub(crate) fn turn_prefix_instruction(
    preparation: &Preparation,
    prompts: &crate::prompts::Prompts,
    focus: Option<&str>,
) -> String {
    let mut text = format!("{}\n\n", prompts.continuation);
    if let (Some(first), Some(last)) = (
        preparation.turn_prefix_messages.first(),
        last_message(&preparation.turn_prefix_messages),
    ) {
        text.push_str(&format!(
            "Summarize only the part of the conversation above from this message:\n<span-start>\n{}\n</span-start>\nup to and including this one:\n<span-end>\n{}\n</span-end>\n\n",
            quote(&first.message),
            quote(last)
        ));
    }
    text.push_str(&prompts.turn_prefix);
    crate::runner::push_focus(&mut text, focus);
    text
}

#[cfg(test)]
mod tests {
    use super::answers_the_format;

    const ASKED: &str = "Summarize the span.\n<span-end>\n## Plan\nrun it\n</span-end>\n\n## Goal\n[what]\n\n## Progress\n- [x]";

    #[test]
    fn a_reply_in_the_asked_format_answers_it() {
        assert!(answers_the_format(
            ASKED,
            "## Goal\nShip it.\n## Progress\n- done"
        ));
        // Any level and case: the heading is what counts.
        assert!(answers_the_format(ASKED, "Here it is.\n# goal\nShip it."));
    }

    #[test]
    fn a_reply_carrying_on_with_the_conversation_does_not() {
        assert!(!answers_the_format(
            ASKED,
            "Sure! Next I will run the tests."
        ));
        assert!(!answers_the_format(ASKED, "Goal: ship it"));
        // A heading of a quoted message is the conversation's, not the format's.
        assert!(!answers_the_format(ASKED, "## Plan\nrun the tests"));
    }

    #[test]
    fn an_instruction_without_headings_takes_any_reply() {
        assert!(answers_the_format(
            "Summarize in three lines.",
            "It went well."
        ));
    }
}

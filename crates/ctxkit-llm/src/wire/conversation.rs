//! The model's view flattened for the wire: user turns, replies and tool results in the order a
//! provider accepts them. Failed replies are left out; a tool result whose call is in an earlier
//! reply of its turn goes right after that reply's results (`ctxkit_protocol::paired_order`: old
//! Codex imports hold a reply per parallel call); a tool result that answers no open call of
//! the latest reply is dropped (`ctxkit_protocol::OpenToolCalls`, the rule the model's view follows
//! too); a call left without a result (an interrupted turn) is answered with
//! [`NO_RESULT`], since every provider refuses an unanswered call; a call whose id an earlier
//! call used is sent under a new one ([`super::unique_call_ids`]). Pure: no I/O.

use std::borrow::Cow;

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, MessageContent, OpenCall, OpenToolCalls,
    anthropic_document, foreign_block_text, paired_order,
};

use crate::config::ProviderConfig;

/// The text sent for a tool call that has no result in the conversation.
pub(crate) const NO_RESULT: &str = ctxkit_protocol::NO_TOOL_RESULT;

/// A part of a user turn or tool result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part<'a> {
    Text(Cow<'a, str>),
    Image {
        mime_type: &'a str,
        data: &'a str,
    },
    /// An Anthropic `document` (a PDF an imported Claude Code session holds): the block itself
    /// goes to an Anthropic model, the text naming it to every other.
    Document {
        text: Cow<'a, str>,
        block: &'a ctxkit_protocol::JsonObject,
    },
}

/// One step of the conversation as sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Turn<'a> {
    User(Vec<Part<'a>>),
    /// A reply, copied only when a call's id is sent under a new one
    /// ([`super::unique_call_ids`]); boxed, since the copy is large.
    Assistant(Box<Cow<'a, AssistantMessage>>),
    ToolResult {
        id: Cow<'a, str>,
        name: &'a str,
        parts: Vec<Part<'a>>,
        is_error: bool,
    },
}

pub(crate) fn turns(messages: &[AgentMessage]) -> Vec<Turn<'_>> {
    let ordered: Vec<&AgentMessage> = match paired_order(messages, |message| message) {
        Some(order) => order
            .into_iter()
            .filter_map(|at| messages.get(at))
            .collect(),
        None => messages.iter().collect(),
    };
    let mut out = Vec::new();
    let mut pending = OpenToolCalls::default();
    for message in ordered {
        match message {
            AgentMessage::User(user) => {
                answer_unanswered(&mut out, pending.close());
                out.push(Turn::User(parts(&user.content)));
            }
            AgentMessage::Assistant(reply) => {
                if reply.is_aborted_or_error() {
                    continue;
                }
                answer_unanswered(&mut out, pending.assistant(reply));
                // A reply that is only the provider's compaction (paused after it) still goes back.
                let mut useful = reply.provider_compaction().is_some();
                for block in &reply.content {
                    match block {
                        ContentBlock::ToolCall(_) => useful = true,
                        ContentBlock::Text(text) => useful |= !text.text.is_empty(),
                        ContentBlock::Thinking(thinking) => {
                            useful |= !thinking.thinking.is_empty()
                                || thinking.thinking_signature.is_some();
                        }
                        ContentBlock::Image(_) | ContentBlock::Unknown(_) => {}
                    }
                }
                if useful {
                    out.push(Turn::Assistant(Box::new(Cow::Borrowed(reply))));
                }
            }
            AgentMessage::ToolResult(result) => {
                if !pending.answer(&result.tool_call_id) {
                    continue;
                }
                out.push(Turn::ToolResult {
                    id: Cow::Borrowed(&result.tool_call_id),
                    name: &result.tool_name,
                    parts: parts(&result.content),
                    is_error: result.is_error,
                });
            }
            AgentMessage::Custom(custom) => {
                answer_unanswered(&mut out, pending.close());
                out.push(Turn::User(parts(&custom.content)));
            }
            AgentMessage::BranchSummary(summary) => {
                answer_unanswered(&mut out, pending.close());
                out.push(Turn::User(vec![Part::Text(Cow::Borrowed(
                    &summary.summary,
                ))]));
            }
            AgentMessage::CompactionSummary(summary) => {
                answer_unanswered(&mut out, pending.close());
                out.push(Turn::User(vec![Part::Text(Cow::Borrowed(
                    &summary.summary,
                ))]));
            }
            AgentMessage::BashExecution(bash) => {
                if bash.exclude_from_context == Some(true) {
                    continue;
                }
                answer_unanswered(&mut out, pending.close());
                let text = format!("Ran `{}`\n{}", bash.command, bash.output);
                out.push(Turn::User(vec![Part::Text(Cow::Owned(text))]));
            }
            AgentMessage::Unknown(_) => {}
        }
    }
    answer_unanswered(&mut out, pending.close());
    super::unique_call_ids::make_call_ids_unique(&mut out);
    out
}

/// Answers with [`NO_RESULT`] the calls that closed without a result.
fn answer_unanswered<'a>(out: &mut Vec<Turn<'a>>, closed: Vec<OpenCall<'a>>) {
    for (id, name) in closed {
        out.push(Turn::ToolResult {
            id: Cow::Borrowed(id),
            name,
            parts: vec![Part::Text(Cow::Borrowed(NO_RESULT))],
            is_error: true,
        });
    }
}

fn parts(content: &MessageContent) -> Vec<Part<'_>> {
    match content {
        MessageContent::Text(text) => vec![Part::Text(Cow::Borrowed(text))],
        MessageContent::Blocks(blocks) => blocks.iter().filter_map(part).collect(),
    }
}

/// A block as the part it is sent as; reasoning and calls are no part of a user turn.
fn part(block: &ContentBlock) -> Option<Part<'_>> {
    if let Some(document) = anthropic_document(block) {
        let text = match block {
            ContentBlock::Text(text) => Cow::Borrowed(text.text.as_str()),
            ContentBlock::Image(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Unknown(_) => Cow::Owned(foreign_block_text(document)),
        };
        return Some(Part::Document {
            text,
            block: document,
        });
    }
    match block {
        ContentBlock::Text(text) => Some(Part::Text(Cow::Borrowed(&text.text))),
        ContentBlock::Image(image) => Some(Part::Image {
            mime_type: &image.mime_type,
            data: &image.data,
        }),
        ContentBlock::Thinking(_) | ContentBlock::ToolCall(_) | ContentBlock::Unknown(_) => None,
    }
}

/// The parts' text joined by `\n`; images and documents are named.
pub(crate) fn joined_text(parts: &[Part<'_>]) -> String {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(text) | Part::Document { text, .. } => text.to_string(),
            Part::Image { mime_type, .. } => format!("[image: {mime_type}]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether a reply came from the same provider and API as the request goes to: a provider's
/// compaction item goes back only there.
pub(crate) fn same_source(reply: &AssistantMessage, provider: &str, api: &str) -> bool {
    reply.provider.as_deref() == Some(provider) && reply.api.as_deref() == Some(api)
}

/// Whether the provider, API and model of the request wrote `reply`: only then do its thinking and
/// signatures (signed thinking, encrypted reasoning items, thought signatures, reasoning fields) go
/// back, as Pi 1.6.0's `isSameModel` rules. They are bound to the model that made them: another
/// model of the same provider may refuse them, and their text would read as part of the visible
/// reply.
pub(crate) fn from_this_model(reply: &AssistantMessage, config: &ProviderConfig) -> bool {
    same_source(reply, &config.provider, config.api.as_str())
        && reply.model.as_deref() == Some(config.model.as_str())
}

/// Tool-call arguments as a JSON object value (text that was not JSON is wrapped unchanged).
pub(crate) fn arguments_object(arguments: &serde_json::Value) -> serde_json::Value {
    match arguments {
        serde_json::Value::Object(_) => arguments.clone(),
        serde_json::Value::Null => serde_json::json!({}),
        serde_json::Value::String(text) => serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .filter(serde_json::Value::is_object)
            .unwrap_or_else(|| serde_json::json!({ "input": text })),
        serde_json::Value::Bool(_) | serde_json::Value::Number(_) | serde_json::Value::Array(_) => {
            serde_json::json!({ "input": arguments })
        }
    }
}

/// A tool-call id as Anthropic and Gemini accept it: letters, digits, `_` and `-`, at most 64.
pub(crate) fn portable_id(id: &str) -> String {
    id_characters(id).chars().take(64).collect()
}

/// The longest tool-call id OpenAI's Chat Completions takes.
const CHAT_COMPLETIONS_ID_LIMIT: usize = 40;

/// A tool-call id as Chat Completions takes it, for calls and their results alike (Pi 1.6.0's
/// rule): a Responses id (`call_id|item id`, 65 characters and more) becomes `call_id_item id` with
/// every character but letters, digits, `_` and `-` as `_`, and when that is longer than 40, the
/// call id's start, `_` and a hash of the whole id (two calls of one turn may share a call id and
/// differ by item id); another id to `openai` is cut to 40; any other id goes as it is.
pub(crate) fn chat_completions_id<'a>(id: &'a str, provider: &str) -> Cow<'a, str> {
    let limit = CHAT_COMPLETIONS_ID_LIMIT;
    let Some((call_id, item_id)) = id.split_once('|') else {
        if provider == "openai" && id.chars().count() > limit {
            return Cow::Owned(id.chars().take(limit).collect());
        }
        return Cow::Borrowed(id);
    };
    let call_id = id_characters(call_id);
    let item_id = id_characters(item_id);
    let combined = if item_id.is_empty() {
        call_id.clone()
    } else {
        format!("{call_id}_{item_id}")
    };
    if combined.len() <= limit {
        return Cow::Owned(combined);
    }
    let hash = short_hash(id);
    let prefix: String = call_id
        .chars()
        .take(limit.saturating_sub(hash.len() + 1).max(1))
        .collect();
    Cow::Owned(format!("{prefix}_{hash}"))
}

/// `text` with every character but ASCII letters, digits, `_` and `-` as `_`.
fn id_characters(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Eight base-36 characters standing for `text` (the same text, the same characters).
fn short_hash(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    let mut number = digest
        .iter()
        .take(8)
        .fold(0u64, |number, byte| (number << 8) | u64::from(*byte));
    let mut characters = Vec::with_capacity(8);
    for _ in 0..8 {
        let digit = u32::try_from(number % 36).unwrap_or(0);
        characters.push(char::from_digit(digit, 36).unwrap_or('0'));
        number /= 36;
    }
    characters.into_iter().collect()
}

/// A parsed reply, without provider, model or timestamp (the client stamps them).
pub(crate) fn reply(
    content: Vec<ContentBlock>,
    usage: ctxkit_protocol::Usage,
    stop_reason: ctxkit_overflow::StopReason,
    error_message: Option<String>,
) -> AssistantMessage {
    AssistantMessage {
        content,
        api: None,
        provider: None,
        model: None,
        usage: Some(usage),
        stop_reason: Some(stop_reason.as_str().to_owned()),
        error_message,
        timestamp: None,
        extra: ctxkit_protocol::JsonObject::new(),
    }
}

/// A text block, with optional extra fields (signatures).
pub(crate) fn text_block(text: String, extra: ctxkit_protocol::JsonObject) -> ContentBlock {
    ContentBlock::Text(ctxkit_protocol::TextContent { text, extra })
}

/// A thinking block.
pub(crate) fn thinking_block(
    thinking: String,
    signature: Option<String>,
    extra: ctxkit_protocol::JsonObject,
) -> ContentBlock {
    ContentBlock::Thinking(ctxkit_protocol::ThinkingContent {
        thinking,
        thinking_signature: signature,
        extra,
    })
}

/// A tool-call block: its arguments an object, else `{}` with an `argumentsError` beside it.
pub(crate) fn tool_call_block(
    id: String,
    name: String,
    arguments: Result<serde_json::Value, String>,
    extra: ctxkit_protocol::JsonObject,
) -> ContentBlock {
    let mut call = ctxkit_protocol::ToolCall {
        id,
        name,
        arguments: serde_json::Value::Object(ctxkit_protocol::JsonObject::new()),
        extra,
    };
    super::arguments::set_arguments(
        &mut call,
        arguments.and_then(super::arguments::checked_arguments),
    );
    ContentBlock::ToolCall(call)
}

#[cfg(test)]
#[path = "conversation_tests.rs"]
mod tests;

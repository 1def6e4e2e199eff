//! Layer (a), lossless pruning: old tool results are cut to a head, a tail and a marker naming the
//! tool call id, which the engine resolves against the stored session to return the full output.
//!
//! - The `keepRecentToolResults` most recent tool results are always kept whole.
//! - Each older result whose text (its text blocks joined by `\n`) is longer than `pruneMinChars`
//!   characters is cut (see [`crate::cut`]); several text blocks become one.
//! - Image blocks of older results are replaced by a one-line text marker with the same reference.
//! - Results whose id cannot be written into a marker and read back (empty, whitespace, `]`) are
//!   kept whole, so every cut stays recoverable.
//! - With `pruneToolCalls`, the long string arguments of the calls of those results are cut too
//!   (see [`crate::calls`]); otherwise tool calls and their arguments are never touched.
//!
//! In cache-aware mode the number of older results is rounded down to a multiple of
//! `cacheBlockSize`, so the pruned prefix changes once per block instead of on every call.

use std::borrow::Cow;
use std::collections::HashMap;

use ctxkit_protocol::{
    AgentMessage, ContentBlock, JsonObject, MessageContent, TextContent, ToolResultMessage,
};

use crate::TransformSettings;
use crate::calls::CallsToCut;
use crate::cut::{Cut, chars_and_newlines, cut_text_seeing};
use crate::digest::VisibleNames;
use crate::marker::{Reference, image_marker, is_referenceable};
use crate::measured::{CutKey, PruneInputs};
use crate::pays::CutSaving;
use crate::view::Slot;
use ctxkit_tokens::estimate_tokens;

/// The oldest tool results the prune layer may cut, and where they end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PruneBlock {
    /// How many tool results, counted from the oldest, may be cut.
    pub tool_results: usize,
    /// The position just after the last of them (0 when there are none). In cache-aware mode thinking
    /// is dropped only before this position.
    pub end: usize,
}

/// The block of prunable tool results of a view under `settings`.
pub(crate) fn prune_block(slots: &[Slot<'_>], settings: &TransformSettings) -> PruneBlock {
    let total = slots
        .iter()
        .filter(|slot| matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)))
        .count();
    let mut tool_results = total.saturating_sub(settings.keep_recent_tool_results);
    if settings.prune_when_it_pays {
        let savings = cut_savings(slots, tool_results, settings);
        tool_results = crate::pays::paying_count(slots, &savings, settings);
    } else if settings.cache_aware {
        let block_size = settings.cache_block_size.max(1);
        tool_results = tool_results / block_size * block_size;
    }
    let end = if tool_results == 0 {
        0
    } else {
        slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| matches!(slot.message.as_ref(), AgentMessage::ToolResult(_)))
            .nth(tool_results - 1)
            .map_or(0, |(position, _)| position + 1)
    };
    PruneBlock { tool_results, end }
}

/// What cutting each of the first `count` tool results of the view saves, in tokens (0 for a result
/// that is not cut), with its call's arguments under `pruneToolCalls`.
fn cut_savings(slots: &[Slot<'_>], count: usize, settings: &TransformSettings) -> Vec<CutSaving> {
    let calls = if settings.prune_tool_calls {
        crate::calls::call_savings(slots, settings)
    } else {
        HashMap::new()
    };
    slots
        .iter()
        .filter_map(|slot| slot.message.as_tool_result().map(|result| (slot, result)))
        .take(count)
        .map(|(slot, result)| {
            let measure = || result_saving(result, slot.tokens, settings);
            CutSaving {
                result: match slot.memo() {
                    Some(memo) => memo.result_saving(CutKey::of(settings), measure),
                    None => measure(),
                },
                call: calls.get(result.tool_call_id.as_str()).copied(),
            }
        })
        .collect()
}

/// The tokens cutting `result` (estimated at `tokens`) saves, with no name taken as seen; 0 when it
/// is not cut.
fn result_saving(result: &ToolResultMessage, tokens: u64, settings: &TransformSettings) -> u64 {
    pruned_content(result, settings, &VisibleNames::default()).map_or(0, |(content, _)| {
        tokens.saturating_sub(content_tokens(content))
    })
}

/// What the prune layer did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PruneOutcome {
    pub tool_results_pruned: usize,
    pub tool_calls_cut: usize,
    pub chars_saved: u64,
    /// The tool call id of the last tool result it cut, in view order.
    pub last_cut_tool_result: Option<String>,
}

/// Cuts the first `block.tool_results` tool results of the view.
pub(crate) fn prune_tool_results(
    slots: &mut [Slot<'_>],
    block: PruneBlock,
    settings: &TransformSettings,
) -> PruneOutcome {
    let mut outcome = PruneOutcome::default();
    let mut remaining = block.tool_results;
    // Names the model reads before the next cut result; only a digest needs them.
    let mut visible = (settings.prune_digest_names > 0).then(VisibleNames::default);
    let calls = CallsToCut::of(slots, block.tool_results, settings);
    let cut_key = CutKey::of(settings);
    for (position, slot) in slots.iter_mut().enumerate() {
        if remaining == 0 {
            break;
        }
        let message = slot.message.as_ref();
        let is_result = matches!(message, AgentMessage::ToolResult(_));
        let prune = || prune_message(message, position, &calls, settings, visible.as_ref());
        let pruned = match slot.memo() {
            Some(memo) => {
                let inputs = PruneInputs {
                    cut: cut_key,
                    visible: visible.as_ref().map_or(0, VisibleNames::fingerprint),
                    calls: calls.selected(position, message, settings),
                };
                memo.pruned(inputs, prune).pruned.clone()
            }
            None => prune(),
        };
        match pruned.cut {
            Some(cut) => {
                if cut.result {
                    outcome.tool_results_pruned += 1;
                    outcome.last_cut_tool_result = message
                        .as_tool_result()
                        .map(|result| result.tool_call_id.clone());
                } else {
                    outcome.tool_calls_cut += 1;
                }
                outcome.chars_saved += cut.chars_saved as u64;
                if let Some(visible) = visible.as_mut() {
                    visible.extend(&cut.names);
                }
                slot.replace_estimated(cut.message, cut.tokens);
            }
            None => {
                if let Some(visible) = visible.as_mut() {
                    match slot.memo() {
                        Some(memo) => visible.extend(memo.names(|| names_shown(message))),
                        None => note_visible(message, visible),
                    }
                }
            }
        }
        if is_result {
            remaining -= 1;
        }
    }
    outcome
}

/// What the prune layer makes of one message of its block.
#[derive(Debug, Clone)]
pub(crate) struct PrunedMessage {
    /// The cut copy; `None` when nothing of the message is cut.
    pub cut: Option<CutMessage>,
}

/// A message with a result or a call's arguments cut.
#[derive(Debug, Clone)]
pub(crate) struct CutMessage {
    pub message: AgentMessage,
    /// Its estimate.
    pub tokens: u64,
    pub chars_saved: usize,
    /// A tool result (otherwise an assistant whose calls were cut).
    pub result: bool,
    /// The hashes of the names the cut copy shows (empty without a digest).
    pub names: Box<[u64]>,
}

/// [`PrunedMessage`] of the message at `position`, seeing `visible` before it.
fn prune_message(
    message: &AgentMessage,
    position: usize,
    calls: &CallsToCut,
    settings: &TransformSettings,
    visible: Option<&VisibleNames>,
) -> PrunedMessage {
    let cut = match calls.cut(position, message, settings, visible) {
        Some((cut, chars_saved)) => Some((cut, chars_saved, false)),
        None => message.as_tool_result().and_then(|result| {
            let nothing = VisibleNames::default();
            let (pruned, chars_saved) =
                prune_result(result, settings, visible.unwrap_or(&nothing))?;
            Some((AgentMessage::ToolResult(pruned), chars_saved, true))
        }),
    };
    let cut = cut.map(|(message, chars_saved, result)| CutMessage {
        tokens: estimate_tokens(&message),
        names: match visible {
            Some(_) => names_shown(&message),
            None => Box::default(),
        },
        message,
        chars_saved,
        result,
    });
    PrunedMessage { cut }
}

/// The hashes of the names `message` shows the model (see [`note_visible`]).
fn names_shown(message: &AgentMessage) -> Box<[u64]> {
    let mut names = VisibleNames::default();
    note_visible(message, &mut names);
    names.into_hashes()
}

/// Adds the names a message shows the model: its text, its tool calls and their arguments, never
/// its thinking (dropped behind the prune boundary).
fn note_visible(message: &AgentMessage, visible: &mut VisibleNames) {
    let note_blocks = |blocks: &[ContentBlock], visible: &mut VisibleNames| {
        for block in blocks {
            match block {
                ContentBlock::Text(text) => visible.note(&text.text),
                ContentBlock::ToolCall(call) => {
                    visible.note(&call.name);
                    visible.note_json(&call.arguments);
                }
                ContentBlock::Image(_) | ContentBlock::Thinking(_) | ContentBlock::Unknown(_) => {}
            }
        }
    };
    let note_content = |content: &MessageContent, visible: &mut VisibleNames| match content {
        MessageContent::Text(text) => visible.note(text),
        MessageContent::Blocks(blocks) => note_blocks(blocks, visible),
    };
    match message {
        AgentMessage::User(user) => note_content(&user.content, visible),
        AgentMessage::Assistant(assistant) => note_blocks(&assistant.content, visible),
        AgentMessage::ToolResult(result) => note_content(&result.content, visible),
        AgentMessage::BashExecution(bash) => {
            visible.note(&bash.command);
            visible.note(&bash.output);
        }
        AgentMessage::Custom(custom) => note_content(&custom.content, visible),
        AgentMessage::BranchSummary(summary) => visible.note(&summary.summary),
        AgentMessage::CompactionSummary(summary) => visible.note(&summary.summary),
        AgentMessage::Unknown(_) => {}
    }
}

/// The text of a result as the prune layer sees it.
fn result_text(content: &MessageContent) -> Option<Cow<'_, str>> {
    let blocks = match content {
        MessageContent::Text(text) => return Some(Cow::Borrowed(text)),
        MessageContent::Blocks(blocks) => blocks,
    };
    let mut texts = blocks.iter().filter_map(ContentBlock::as_text);
    let first = texts.next()?;
    match texts.next() {
        None => Some(Cow::Borrowed(first)),
        Some(second) => {
            let mut joined = format!("{first}\n{second}");
            for text in texts {
                joined.push('\n');
                joined.push_str(text);
            }
            Some(Cow::Owned(joined))
        }
    }
}

/// The pruned copy of `result` and the characters saved, or `None` when nothing is cut. Large
/// strings that are cut are sliced, never cloned.
fn prune_result(
    result: &ToolResultMessage,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Option<(ToolResultMessage, usize)> {
    let (content, chars_saved) = pruned_content(result, settings, visible)?;
    let ToolResultMessage {
        tool_call_id,
        tool_name,
        content: _,
        details: _,
        is_error,
        timestamp,
        extra,
    } = result;
    // The details describe the uncut output, for a user interface; the model is not sent them.
    let pruned = ToolResultMessage {
        tool_call_id: tool_call_id.clone(),
        tool_name: tool_name.clone(),
        content,
        details: None,
        is_error: *is_error,
        timestamp: *timestamp,
        extra: extra.clone(),
    };
    Some((pruned, chars_saved))
}

/// The content of the pruned copy of `result` and the characters saved, or `None` when nothing is
/// cut. Its details and extra fields (an imported result's can hold a whole file) are not copied.
fn pruned_content(
    result: &ToolResultMessage,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Option<(MessageContent, usize)> {
    let id = result.tool_call_id.as_str();
    if !is_referenceable(id) {
        return None;
    }
    let cut = result_text(&result.content)
        .and_then(|text| cut_text_seeing(&text, Reference::ToolResult(id), settings, visible));
    match &result.content {
        MessageContent::Text(_) => {
            let Cut {
                text,
                original_chars,
                chars,
            } = cut?;
            Some((MessageContent::Text(text), original_chars - chars))
        }
        MessageContent::Blocks(blocks) => pruned_blocks(blocks, cut, id),
    }
}

/// The estimated tokens of a tool result holding `content` (the estimate reads only the content).
fn content_tokens(content: MessageContent) -> u64 {
    estimate_tokens(&AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: String::new(),
        tool_name: String::new(),
        content,
        details: None,
        is_error: false,
        timestamp: None,
        extra: JsonObject::new(),
    }))
}

/// Blocks with the text cut (the cut text takes the first text block's place, the other text blocks
/// are merged into it) and images replaced by markers; `None` when nothing changes.
fn pruned_blocks(
    blocks: &[ContentBlock],
    cut: Option<Cut>,
    id: &str,
) -> Option<(MessageContent, usize)> {
    let has_image = blocks
        .iter()
        .any(|block| matches!(block, ContentBlock::Image(_)));
    if cut.is_none() && !has_image {
        return None;
    }
    let mut chars_saved = cut.as_ref().map_or(0, |cut| cut.original_chars - cut.chars);
    let mut cut_text = cut.map(|cut| cut.text);
    let cutting = cut_text.is_some();
    let mut pruned = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            ContentBlock::Text(text) if cutting => {
                if let Some(replacement) = cut_text.take() {
                    pruned.push(ContentBlock::Text(TextContent {
                        text: replacement,
                        extra: text.extra.clone(),
                    }));
                }
            }
            ContentBlock::Image(image) => {
                let marker = image_marker(&image.mime_type, id);
                // Base64 data is ASCII: its length is its character count.
                let marker_chars = chars_and_newlines(&marker).0;
                chars_saved += image.data.len().saturating_sub(marker_chars);
                pruned.push(ContentBlock::text(marker));
            }
            ContentBlock::Text(_)
            | ContentBlock::Thinking(_)
            | ContentBlock::ToolCall(_)
            | ContentBlock::Unknown(_) => pruned.push(block.clone()),
        }
    }
    Some((MessageContent::Blocks(pruned), chars_saved))
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;

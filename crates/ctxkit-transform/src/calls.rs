//! Layer (a) on the model's own side (`pruneToolCalls`): the long string arguments of old tool
//! calls, cut as their results are. A file written, a patch or a long command is most of what an
//! agent's own messages weigh (a quarter of the characters of real sessions, docs/simulator.md,
//! eleventh round); once the call's result is behind the prune boundary the model works from the
//! file on disk, not from its old call.
//!
//! - A call is cut only when its result is one of those the prune layer may cut (so the latest
//!   calls and pending ones never are), and its assistant message carries no thinking into the
//!   request: a thinking block is sent back with the turn it was written in, unchanged.
//! - Each string of the arguments longer than `pruneMinChars` keeps its head and tail around a
//!   marker (`[... 120 lines (4213 chars) omitted; full call: ctxkit://tool-call/<id>]`, with the
//!   digest of what it omitted when `pruneDigestNames` is set); keys, short values and the
//!   arguments' shape stay, so the call still reads as the call it was. `recall` takes the
//!   reference and returns the call as stored.

use std::collections::{HashMap, HashSet};

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock, ToolCall};
use serde_json::{Map, Value};

use crate::TransformSettings;
use crate::cut::cut_text_seeing;
use crate::digest::VisibleNames;
use crate::marker::{Reference, is_referenceable};
use crate::measured::{CallSavings, CutKey};
use crate::view::Slot;
use ctxkit_tokens::stringified_len;

/// The calls whose long arguments the prune layer cuts (`pruneToolCalls`): those of the results in
/// the block, in assistants that carry no thinking into the request.
pub(crate) struct CallsToCut {
    ids: HashSet<String>,
    latest_thinking: Option<usize>,
}

impl CallsToCut {
    /// The calls of the first `tool_results` results of the view.
    pub(crate) fn of(
        slots: &[Slot<'_>],
        tool_results: usize,
        settings: &TransformSettings,
    ) -> Self {
        if !settings.prune_tool_calls {
            return Self {
                ids: HashSet::new(),
                latest_thinking: None,
            };
        }
        let ids = slots
            .iter()
            .filter_map(|slot| slot.message.as_tool_result())
            .take(tool_results)
            .map(|result| result.tool_call_id.clone())
            .collect();
        Self {
            ids,
            latest_thinking: latest_thinking(slots),
        }
    }

    /// The content positions of the calls of the message at `position` that [`Self::cut`] may cut
    /// (empty for any other message).
    pub(crate) fn selected(
        &self,
        position: usize,
        message: &AgentMessage,
        settings: &TransformSettings,
    ) -> Vec<usize> {
        let Some(assistant) = message.as_assistant() else {
            return Vec::new();
        };
        if self.ids.is_empty()
            || !calls_cuttable(position, assistant, self.latest_thinking, settings)
        {
            return Vec::new();
        }
        let calls = assistant.content.iter().enumerate();
        calls
            .filter(|(_, block)| {
                block
                    .as_tool_call()
                    .is_some_and(|call| self.ids.contains(&call.id))
            })
            .map(|(block, _)| block)
            .collect()
    }

    /// The message at `position` with its calls cut, and the characters saved; `None` when it is
    /// not an assistant whose calls are cut or none of its arguments is long.
    pub(crate) fn cut(
        &self,
        position: usize,
        message: &AgentMessage,
        settings: &TransformSettings,
        visible: Option<&VisibleNames>,
    ) -> Option<(AgentMessage, usize)> {
        if self.ids.is_empty() {
            return None;
        }
        let assistant = message.as_assistant()?;
        if !calls_cuttable(position, assistant, self.latest_thinking, settings) {
            return None;
        }
        let nothing = VisibleNames::default();
        cut_calls(message, &self.ids, settings, visible.unwrap_or(&nothing))
    }
}

/// Whether the calls of the assistant at `position` may be cut: it holds no thinking, or the
/// thinking layer removes its thinking (every assistant's but the latest one with thinking).
pub(crate) fn calls_cuttable(
    position: usize,
    assistant: &AssistantMessage,
    latest_thinking: Option<usize>,
    settings: &TransformSettings,
) -> bool {
    let has_thinking = assistant
        .content
        .iter()
        .any(|block| block.as_thinking().is_some());
    !has_thinking || (settings.drop_old_thinking && latest_thinking != Some(position))
}

/// The position of the latest assistant message with a thinking block.
pub(crate) fn latest_thinking(slots: &[Slot<'_>]) -> Option<usize> {
    slots.iter().rposition(|slot| {
        slot.message.as_assistant().is_some_and(|assistant| {
            assistant
                .content
                .iter()
                .any(|block| block.as_thinking().is_some())
        })
    })
}

/// For every call of the view whose arguments would be cut: its assistant's position and the
/// tokens the cut saves, by call id.
pub(crate) fn call_savings<'a>(
    slots: &'a [Slot<'_>],
    settings: &TransformSettings,
) -> HashMap<&'a str, (usize, u64)> {
    let latest = latest_thinking(slots);
    // Weighed without the digest, the costly part of a cut: a few dozen characters over what the
    // cut the layer then makes saves.
    let settings = &TransformSettings {
        prune_digest_names: 0,
        ..settings.clone()
    };
    let mut savings = HashMap::new();
    for (position, slot) in slots.iter().enumerate() {
        let Some(assistant) = slot.message.as_assistant() else {
            continue;
        };
        if !calls_cuttable(position, assistant, latest, settings) {
            continue;
        }
        let measure = || assistant_savings(assistant, settings);
        let by_block = match slot.memo() {
            Some(memo) => memo.call_savings(CutKey::of(settings), measure),
            None => measure(),
        };
        for (block, saved) in by_block {
            if let Some(call) = assistant
                .content
                .get(block)
                .and_then(ContentBlock::as_tool_call)
            {
                savings.insert(call.id.as_str(), (position, saved));
            }
        }
    }
    savings
}

/// For each call of `assistant` whose arguments would be cut, its content position and the tokens
/// the cut saves.
fn assistant_savings(assistant: &AssistantMessage, settings: &TransformSettings) -> CallSavings {
    let calls = assistant
        .content
        .iter()
        .enumerate()
        .filter_map(|(block, content)| content.as_tool_call().map(|call| (block, call)));
    calls
        .filter_map(|(block, call)| {
            let (arguments, _) = cut_arguments(call, settings, &VisibleNames::default())?;
            let saved =
                stringified_len(&call.arguments).saturating_sub(stringified_len(&arguments));
            Some((block, (saved as u64).div_ceil(4)))
        })
        .collect()
}

/// `message` with the arguments of its calls named in `ids` cut, and the characters saved; `None`
/// when no argument is long enough to cut.
pub(crate) fn cut_calls(
    message: &AgentMessage,
    ids: &HashSet<String>,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Option<(AgentMessage, usize)> {
    let assistant = message.as_assistant()?;
    let mut chars_saved = 0;
    let mut changed = false;
    let content = assistant
        .content
        .iter()
        .map(|block| {
            let cut = block
                .as_tool_call()
                .filter(|call| ids.contains(&call.id))
                .and_then(|call| {
                    let (arguments, saved) = cut_arguments(call, settings, visible)?;
                    Some((call, arguments, saved))
                });
            match cut {
                Some((call, arguments, saved)) => {
                    changed = true;
                    chars_saved += saved;
                    ContentBlock::ToolCall(ToolCall {
                        arguments,
                        ..call.clone()
                    })
                }
                None => block.clone(),
            }
        })
        .collect();
    changed.then(|| {
        let cut = AssistantMessage {
            content,
            ..assistant.clone()
        };
        (AgentMessage::Assistant(cut), chars_saved)
    })
}

/// The arguments of `call` with every long string cut, and the characters saved; `None` when none
/// is cut or the call's id cannot be read back from a marker.
pub(crate) fn cut_arguments(
    call: &ToolCall,
    settings: &TransformSettings,
    visible: &VisibleNames,
) -> Option<(Value, usize)> {
    if !is_referenceable(&call.id) {
        return None;
    }
    let mut cutter = Cutter {
        reference: Reference::ToolCall(&call.id),
        settings,
        visible,
        chars_saved: 0,
    };
    let arguments = cutter.value(&call.arguments)?;
    Some((arguments, cutter.chars_saved))
}

/// Walks a JSON value and cuts its long strings.
struct Cutter<'a> {
    reference: Reference<'a>,
    settings: &'a TransformSettings,
    visible: &'a VisibleNames,
    chars_saved: usize,
}

impl Cutter<'_> {
    /// The value with its long strings cut; `None` when nothing in it changes.
    fn value(&mut self, value: &Value) -> Option<Value> {
        match value {
            Value::String(text) => {
                let cut = cut_text_seeing(text, self.reference, self.settings, self.visible)?;
                self.chars_saved += cut.original_chars - cut.chars;
                Some(Value::String(cut.text))
            }
            Value::Array(items) => {
                let cut: Vec<Option<Value>> = items.iter().map(|item| self.value(item)).collect();
                cut.iter().any(Option::is_some).then(|| {
                    let items = items.iter().zip(cut);
                    Value::Array(
                        items
                            .map(|(item, cut)| cut.unwrap_or_else(|| item.clone()))
                            .collect(),
                    )
                })
            }
            Value::Object(map) => {
                let cut: Vec<Option<Value>> = map.values().map(|item| self.value(item)).collect();
                cut.iter().any(Option::is_some).then(|| {
                    let entries = map.iter().zip(cut);
                    let map: Map<String, Value> = entries
                        .map(|((key, item), cut)| {
                            (key.clone(), cut.unwrap_or_else(|| item.clone()))
                        })
                        .collect();
                    Value::Object(map)
                })
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use crate::transform_context;
    use serde_json::json;

    /// A `write` call of a 200-line file, its short result, then a `read` and its long result.
    fn written_then_read(write_id: &str, read_id: &str) -> Vec<AgentMessage> {
        let file: String = (0..200)
            .map(|line| format!("fn step_{line}() {{}}\n"))
            .collect();
        let write = json!({"type": "toolCall", "id": write_id, "name": "write",
            "arguments": {"path": "src/steps.rs", "content": file, "mode": "create"}});
        vec![
            assistant(vec![text("writing"), write]),
            tool_result(write_id, "Wrote 200 lines to src/steps.rs"),
            assistant(vec![call(read_id)]),
            tool_result(read_id, &long_output(read_id, 100)),
        ]
    }

    fn settings() -> TransformSettings {
        TransformSettings {
            keep_recent_tool_results: 1,
            prune_tool_calls: true,
            prune_digest_names: 8,
            ..plain()
        }
    }

    fn arguments(message: &AgentMessage) -> Value {
        let assistant = message.as_assistant().unwrap();
        let call = assistant
            .content
            .iter()
            .find_map(ContentBlock::as_tool_call);
        call.unwrap().arguments.clone()
    }

    #[test]
    fn an_old_calls_long_argument_keeps_its_head_tail_and_a_reference() {
        let mut view = vec![user("add the steps")];
        view.extend(written_then_read("w1", "r1"));
        view.extend(written_then_read("w2", "r2"));
        let output = transform_context(&view, &settings(), 200_000);
        // Every result but the last is in the block: both writes and the first read are cut.
        assert_eq!(output.report.tool_calls_cut, 2);
        let cut = arguments(&output.messages[1]);
        assert_eq!(cut["path"], "src/steps.rs");
        assert_eq!(cut["mode"], "create");
        let content = cut["content"].as_str().unwrap();
        assert!(
            content.starts_with("fn step_0() {}\nfn step_1() {}\nfn step_2() {}\n[... 195 lines")
        );
        assert!(
            content.ends_with(
                "full call: ctxkit://tool-call/w1]\nfn step_198() {}\nfn step_199() {}\n"
            )
        );
        // The digest names what the cut omitted; the stored call is untouched.
        assert!(content.contains("; mentions: step_3"), "{content}");
        assert_eq!(
            arguments(&view[1]),
            arguments(&written_then_read("w1", "r1")[0])
        );
        assert!(output.report.estimated_tokens_after < output.report.estimated_tokens_before);
    }

    #[test]
    fn calls_whose_results_are_kept_or_pending_and_short_arguments_stay() {
        let mut view = vec![user("add the steps")];
        view.extend(written_then_read("w1", "r1"));
        // The latest result is kept whole, so its call stays; a pending call has no result.
        view.extend(written_then_read("w2", "r2")[..2].iter().cloned());
        view.push(assistant(vec![
            json!({"type": "toolCall", "id": "p1", "name": "write",
            "arguments": {"path": "a", "content": "x".repeat(5_000)}}),
        ]));
        let output = transform_context(&view, &settings(), 200_000);
        assert_eq!(output.report.tool_calls_cut, 1);
        assert_eq!(arguments(&output.messages[5]), arguments(&view[5]));
        assert_eq!(arguments(&output.messages[7]), arguments(&view[7]));
        // The read's own arguments are short: its message is left as it was.
        assert_eq!(output.messages[3], view[3]);
    }

    #[test]
    fn off_by_default_and_never_in_a_message_that_keeps_its_thinking() {
        let mut view = vec![user("add the steps")];
        view.extend(written_then_read("w1", "r1"));
        view.extend(written_then_read("w2", "r2"));
        let default = TransformSettings {
            prune_tool_calls: false,
            ..settings()
        };
        assert_eq!(
            transform_context(&view, &default, 200_000)
                .report
                .tool_calls_cut,
            0
        );
        // With old thinking kept, an assistant's thinking goes back with its calls unchanged.
        for position in [1, 5] {
            let AgentMessage::Assistant(write) = &mut view[position] else {
                unreachable!()
            };
            let plan = serde_json::from_value(thinking("plan")).unwrap();
            write.content.insert(0, plan);
        }
        let keep_thinking = TransformSettings {
            drop_old_thinking: false,
            ..settings()
        };
        let output = transform_context(&view, &keep_thinking, 200_000);
        assert_eq!(output.report.tool_calls_cut, 0);
        assert_eq!(output.messages[1], view[1]);
        // Old thinking dropped, the first write is cut; the latest assistant with thinking keeps
        // it, and its calls.
        let output = transform_context(&view, &settings(), 200_000);
        assert_eq!(output.report.tool_calls_cut, 1);
        assert_ne!(arguments(&output.messages[1]), arguments(&view[1]));
        assert_eq!(output.messages[5], view[5]);
    }

    #[test]
    fn strings_nested_in_arrays_and_objects_are_cut_in_place() {
        let long = "word ".repeat(300);
        let call = ToolCall {
            id: "c1".to_owned(),
            name: "multi_edit".to_owned(),
            arguments: json!({"edits": [{"old": long, "new": "short"}, {"old": "a", "new": long}],
                "count": 2, "dry": false}),
            extra: Map::new(),
        };
        let (cut, saved) = cut_arguments(&call, &settings(), &VisibleNames::default()).unwrap();
        assert_eq!(cut["count"], 2);
        assert_eq!(cut["edits"][0]["new"], "short");
        assert_eq!(cut["edits"][1]["old"], "a");
        let keys: Vec<&String> = cut["edits"][0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["old", "new"]);
        for text in [&cut["edits"][0]["old"], &cut["edits"][1]["new"]] {
            let text = text.as_str().unwrap();
            assert!(
                text.contains("omitted; full call: ctxkit://tool-call/c1]"),
                "{text}"
            );
        }
        assert!(saved > 2 * 1_000);
        // An id a marker cannot carry is never cut.
        let unreadable = ToolCall {
            id: "a b".to_owned(),
            ..call
        };
        assert!(cut_arguments(&unreadable, &settings(), &VisibleNames::default()).is_none());
    }
}

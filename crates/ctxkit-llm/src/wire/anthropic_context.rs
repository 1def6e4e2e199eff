//! Anthropic's context editing (beta `context-management-2025-06-27`): the `context_management`
//! request field with a `clear_tool_uses_20250919` edit and, when asked, `clear_thinking_20251015`;
//! and the `applied_edits` a response reports. The provider clears on its side only: the request
//! still carries the whole conversation, so the session file stays the source of truth. Pure.

use ctxkit_protocol::ProviderContextEdit;
use serde_json::{Value, json};

/// The beta the API requires for `context_management`.
pub(crate) const BETA: &str = "context-management-2025-06-27";

/// What to ask Anthropic to clear (`llm.anthropic.contextManagement`). `None` fields are left to
/// the API's defaults (trigger at 100,000 input tokens, keep 3 tool uses).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicContextEditing {
    /// Clear once the request's input passes this many tokens.
    pub trigger_input_tokens: Option<u64>,
    /// The most recent tool uses kept whole.
    pub keep_tool_uses: Option<u64>,
    /// Clear only when at least this many input tokens go (so a cache break is worth it).
    pub clear_at_least_input_tokens: Option<u64>,
    /// Tools whose uses are never cleared.
    pub exclude_tools: Vec<String>,
    /// Clear the calls' inputs too, not only their results.
    pub clear_tool_inputs: bool,
    /// Also clear thinking blocks of earlier turns (`clear_thinking_20251015`).
    pub clear_thinking: bool,
    /// With `clear_thinking`: the most recent assistant turns whose thinking is kept (the API's
    /// default is 1).
    pub keep_thinking_turns: Option<u64>,
}

impl AnthropicContextEditing {
    /// The `context_management` request field. The thinking edit goes first, as the API requires
    /// when both are sent.
    #[cfg(test)]
    pub(crate) fn request_field(&self) -> Value {
        json!({ "edits": self.edits() })
    }

    /// The edits, for `context_management.edits`, the thinking edit first.
    pub(crate) fn edits(&self) -> Vec<Value> {
        let mut edits = Vec::new();
        if self.clear_thinking {
            let mut edit = json!({"type": "clear_thinking_20251015"});
            if let Some(turns) = self.keep_thinking_turns {
                edit["keep"] = json!({"type": "thinking_turns", "value": turns});
            }
            edits.push(edit);
        }
        let mut edit = json!({"type": "clear_tool_uses_20250919"});
        if let Some(tokens) = self.trigger_input_tokens {
            edit["trigger"] = json!({"type": "input_tokens", "value": tokens});
        }
        if let Some(uses) = self.keep_tool_uses {
            edit["keep"] = json!({"type": "tool_uses", "value": uses});
        }
        if let Some(tokens) = self.clear_at_least_input_tokens {
            edit["clear_at_least"] = json!({"type": "input_tokens", "value": tokens});
        }
        if !self.exclude_tools.is_empty() {
            edit["exclude_tools"] = json!(self.exclude_tools);
        }
        if self.clear_tool_inputs {
            edit["clear_tool_inputs"] = json!(true);
        }
        edits.push(edit);
        edits
    }
}

/// The edits of a `context_management` object (a response's, or a stream event's); edits without
/// a `type` are skipped.
pub(crate) fn applied_edits(context_management: &Value) -> Vec<ProviderContextEdit> {
    context_management
        .get("applied_edits")
        .and_then(Value::as_array)
        .map(|edits| {
            edits
                .iter()
                .filter_map(|edit| {
                    let count = |key: &str| edit.get(key).and_then(Value::as_u64);
                    Some(ProviderContextEdit {
                        kind: edit.get("type").and_then(Value::as_str)?.to_owned(),
                        cleared_tool_uses: count("cleared_tool_uses"),
                        cleared_thinking_turns: count("cleared_thinking_turns"),
                        cleared_input_tokens: count("cleared_input_tokens").unwrap_or(0),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tool_edit_alone_leaves_the_api_defaults() {
        let field = AnthropicContextEditing::default().request_field();
        assert_eq!(
            field,
            json!({"edits": [{"type": "clear_tool_uses_20250919"}]})
        );
    }

    #[test]
    fn every_option_is_sent_with_the_thinking_edit_first() {
        let editing = AnthropicContextEditing {
            trigger_input_tokens: Some(30_000),
            keep_tool_uses: Some(2),
            clear_at_least_input_tokens: Some(5_000),
            exclude_tools: vec!["memory".into()],
            clear_tool_inputs: true,
            clear_thinking: true,
            keep_thinking_turns: Some(1),
        };
        assert_eq!(
            editing.request_field(),
            json!({"edits": [
                {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
                {"type": "clear_tool_uses_20250919",
                 "trigger": {"type": "input_tokens", "value": 30000},
                 "keep": {"type": "tool_uses", "value": 2},
                 "clear_at_least": {"type": "input_tokens", "value": 5000},
                 "exclude_tools": ["memory"],
                 "clear_tool_inputs": true},
            ]})
        );
    }

    #[test]
    fn applied_edits_are_read_and_untyped_ones_skipped() {
        let edits = applied_edits(&json!({"applied_edits": [
            {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 8, "cleared_input_tokens": 50000},
            {"cleared_input_tokens": 3},
        ]}));
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].cleared_tool_uses, Some(8));
        assert_eq!(edits[0].cleared_input_tokens, 50_000);
        assert!(applied_edits(&json!({})).is_empty());
    }
}

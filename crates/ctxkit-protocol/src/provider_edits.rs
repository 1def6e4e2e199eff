//! What a provider cleared from the request on its side before the model read it (Anthropic's
//! context editing). Recorded on the reply under `contextManagement.appliedEdits`, so the session
//! file keeps the whole conversation and still says what the model did not see.

use serde::{Deserialize, Serialize};

use crate::AssistantMessage;

/// The reply field that holds the edits.
pub const PROVIDER_EDITS_FIELD: &str = "contextManagement";

/// One edit the provider applied to a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderContextEdit {
    /// The provider's name of the edit: `clear_tool_uses_20250919`, `clear_thinking_20251015`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Tool uses whose results (and inputs, when asked) were cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared_tool_uses: Option<u64>,
    /// Assistant turns whose thinking was cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleared_thinking_turns: Option<u64>,
    /// Input tokens the edit removed.
    #[serde(default)]
    pub cleared_input_tokens: u64,
}

impl AssistantMessage {
    /// The edits recorded on this reply (none when the field is absent or unreadable).
    pub fn provider_context_edits(&self) -> Vec<ProviderContextEdit> {
        self.extra
            .get(PROVIDER_EDITS_FIELD)
            .and_then(|value| value.get("appliedEdits"))
            .and_then(|edits| serde_json::from_value(edits.clone()).ok())
            .unwrap_or_default()
    }

    /// Records `edits` on this reply (nothing is written when there are none).
    pub fn set_provider_context_edits(&mut self, edits: &[ProviderContextEdit]) {
        if edits.is_empty() {
            self.extra.remove(PROVIDER_EDITS_FIELD);
            return;
        }
        let edits = edits
            .iter()
            .filter_map(|edit| serde_json::to_value(edit).ok())
            .collect::<Vec<_>>();
        self.extra.insert(
            PROVIDER_EDITS_FIELD.to_owned(),
            serde_json::json!({ "appliedEdits": edits }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits_round_trip_through_the_stored_reply() {
        let mut reply: AssistantMessage = serde_json::from_value(json!({"content": []})).unwrap();
        assert!(reply.provider_context_edits().is_empty());
        let edits = vec![
            ProviderContextEdit {
                kind: "clear_thinking_20251015".into(),
                cleared_tool_uses: None,
                cleared_thinking_turns: Some(2),
                cleared_input_tokens: 900,
            },
            ProviderContextEdit {
                kind: "clear_tool_uses_20250919".into(),
                cleared_tool_uses: Some(5),
                cleared_thinking_turns: None,
                cleared_input_tokens: 41_000,
            },
        ];
        reply.set_provider_context_edits(&edits);
        let stored = serde_json::to_value(&reply).unwrap();
        assert_eq!(
            stored["contextManagement"]["appliedEdits"][1],
            json!({"type": "clear_tool_uses_20250919", "clearedToolUses": 5, "clearedInputTokens": 41000})
        );
        let read: AssistantMessage = serde_json::from_value(stored).unwrap();
        assert_eq!(read.provider_context_edits(), edits);
        reply.set_provider_context_edits(&[]);
        assert!(!reply.extra.contains_key(PROVIDER_EDITS_FIELD));
    }
}

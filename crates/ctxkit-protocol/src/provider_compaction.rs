//! A compaction the provider made on its side (Anthropic's `compact_20260112` edit, OpenAI
//! Responses' `compaction` item): the provider's block or item, kept raw on the reply that came
//! with it under `providerCompaction`, so the next request can send it back exactly as received.
//! The reply is the one place it is read from when requests are built; a compaction entry that
//! records it (Anthropic's readable summary) keeps a copy in its `details`.

use serde_json::Value;

use crate::AssistantMessage;

/// The reply field that holds the provider's block or item.
pub const PROVIDER_COMPACTION_FIELD: &str = "providerCompaction";

/// The key of a compaction entry's `details` that holds the provider's block.
pub const PROVIDER_COMPACTION_DETAILS: &str = "providerCompaction";

/// `details.providerCompaction.mode` of a compaction ctxkit asked the provider to write (Anthropic's
/// on-demand compaction, beta `compact-2026-09-04`): its block stands in for the summarized span
/// and is sent back in place of the summary, not with a reply.
pub const ON_DEMAND_MODE: &str = "on-demand";

/// The field of a model-view message (the compaction summary, as a user message) that carries an
/// on-demand compaction to the request builders: `{provider, api, model, block}`. Never written to
/// a session file.
pub const ON_DEMAND_COMPACTION_FIELD: &str = "onDemandCompaction";

impl AssistantMessage {
    /// The provider's compaction block or item this reply came with, raw (`None` when absent or
    /// not an object).
    pub fn provider_compaction(&self) -> Option<&Value> {
        self.extra
            .get(PROVIDER_COMPACTION_FIELD)
            .filter(|value| value.is_object())
    }

    /// Records the provider's compaction block or item on this reply.
    pub fn set_provider_compaction(&mut self, block: Value) {
        self.extra
            .insert(PROVIDER_COMPACTION_FIELD.to_owned(), block);
    }

    /// The readable summary of the provider's compaction (Anthropic's block `content`); `None`
    /// when there is no compaction or it is opaque (OpenAI's encrypted item).
    pub fn provider_compaction_summary(&self) -> Option<&str> {
        self.provider_compaction()?
            .get("content")
            .and_then(Value::as_str)
            .filter(|summary| !summary.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_block_round_trips_through_the_stored_reply() {
        let mut reply: AssistantMessage = serde_json::from_value(json!({"content": []})).unwrap();
        assert!(reply.provider_compaction().is_none());
        reply
            .set_provider_compaction(json!({"type": "compaction", "content": "Built the parser."}));
        let stored = serde_json::to_value(&reply).unwrap();
        assert_eq!(stored["providerCompaction"]["content"], "Built the parser.");
        let read: AssistantMessage = serde_json::from_value(stored).unwrap();
        assert_eq!(
            read.provider_compaction_summary(),
            Some("Built the parser.")
        );
    }

    #[test]
    fn an_opaque_item_has_no_summary() {
        let mut reply: AssistantMessage = serde_json::from_value(json!({"content": []})).unwrap();
        reply.set_provider_compaction(
            json!({"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA"}),
        );
        assert!(reply.provider_compaction().is_some());
        assert_eq!(reply.provider_compaction_summary(), None);
        reply.set_provider_compaction(json!("not an object"));
        assert!(reply.provider_compaction().is_none());
    }
}

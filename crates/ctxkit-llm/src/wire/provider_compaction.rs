//! Compaction on the provider's side: Anthropic's `compact_20260112` edit (beta
//! `compact-2026-01-12`) and OpenAI Responses' `context_management` `compaction` entry. The
//! request fields, and reading the compaction block or item a response comes with; the block is
//! kept raw on the reply (`providerCompaction`) and sent back by the request builders. Pure.

use serde_json::{Value, json};

/// The beta the Messages API requires for the `compact_20260112` edit.
pub(crate) const ANTHROPIC_BETA: &str = "compact-2026-01-12";

/// What to ask Anthropic for (`llm.anthropic.compaction`). `None` leaves the API's default
/// (a trigger at 150,000 input tokens, its own summary prompt).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicCompaction {
    /// Compact once the request's input passes this many tokens (the API's minimum is 50,000).
    pub trigger_input_tokens: Option<u64>,
    /// Ask the API to stop after writing the compaction block; the client then sends the
    /// continuation request itself, so the caller still gets one reply.
    pub pause_after_compaction: bool,
    /// A summary prompt that replaces the API's own.
    pub instructions: Option<String>,
}

impl AnthropicCompaction {
    /// The edit, for `context_management.edits`.
    pub(crate) fn edit(&self) -> Value {
        let mut edit = json!({"type": "compact_20260112"});
        if let Some(tokens) = self.trigger_input_tokens {
            edit["trigger"] = json!({"type": "input_tokens", "value": tokens});
        }
        if self.pause_after_compaction {
            edit["pause_after_compaction"] = json!(true);
        }
        if let Some(instructions) = self.instructions.as_deref().filter(|text| !text.is_empty()) {
            edit["instructions"] = json!(instructions);
        }
        edit
    }
}

/// What to ask OpenAI Responses for (`llm.openaiResponses.compaction`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenAiCompaction {
    /// Compact once the rendered input passes this many tokens; `None` leaves the server's choice.
    pub compact_threshold: Option<u64>,
}

impl OpenAiCompaction {
    /// The `context_management` request field (a list of entries).
    pub(crate) fn request_field(&self) -> Value {
        let mut entry = json!({"type": "compaction"});
        if let Some(tokens) = self.compact_threshold {
            entry["compact_threshold"] = json!(tokens);
        }
        json!([entry])
    }
}

/// A compaction block (Anthropic) or item (OpenAI Responses): an object of type `compaction`.
pub(crate) fn is_compaction(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("compaction")
}

/// The `anthropic-beta` header value: the configured betas, then each of `ours` not already there.
pub(crate) fn beta_header(configured: Option<&str>, ours: &[&str]) -> String {
    let mut betas: Vec<String> = configured
        .into_iter()
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .filter(|beta| !beta.is_empty())
        .map(str::to_owned)
        .collect();
    for beta in ours {
        if !betas.iter().any(|present| present == beta) {
            betas.push((*beta).to_owned());
        }
    }
    betas.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_anthropic_edit_sends_only_what_is_set() {
        assert_eq!(
            AnthropicCompaction::default().edit(),
            json!({"type": "compact_20260112"})
        );
        let compaction = AnthropicCompaction {
            trigger_input_tokens: Some(60_000),
            pause_after_compaction: true,
            instructions: Some("Keep file paths.".into()),
        };
        assert_eq!(
            compaction.edit(),
            json!({"type": "compact_20260112",
                   "trigger": {"type": "input_tokens", "value": 60000},
                   "pause_after_compaction": true,
                   "instructions": "Keep file paths."})
        );
    }

    #[test]
    fn the_openai_field_is_a_list_with_one_compaction_entry() {
        assert_eq!(
            OpenAiCompaction::default().request_field(),
            json!([{"type": "compaction"}])
        );
        let field = OpenAiCompaction {
            compact_threshold: Some(200_000),
        }
        .request_field();
        assert_eq!(
            field,
            json!([{"type": "compaction", "compact_threshold": 200000}])
        );
    }

    #[test]
    fn betas_join_configured_ones_once() {
        assert_eq!(beta_header(None, &[ANTHROPIC_BETA]), ANTHROPIC_BETA);
        assert_eq!(
            beta_header(Some("a, compact-2026-01-12"), &["x", ANTHROPIC_BETA]),
            "a,compact-2026-01-12,x"
        );
        assert!(is_compaction(&json!({"type": "compaction"})));
        assert!(!is_compaction(&json!({"type": "text"})));
    }
}

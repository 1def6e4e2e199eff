//! Agent messages, the `message` of a session entry: the roles Pi knows, and a lossless fallback for
//! roles it does not.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::content::{ContentBlock, MessageContent, tagged, untag};
use crate::lenient::{f64_or_zero, js_number, optional_i64, u64_or_zero};

/// A message from the user. `content` may be a plain string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    #[serde(default)]
    pub content: MessageContent,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Provider-reported token usage of one assistant reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub input: u64,
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub output: u64,
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub cache_read: u64,
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub cache_write: u64,
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub total_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<UsageCost>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Usage {
    /// Tokens the reply's context occupied: `totalTokens` when reported, else the sum of the parts.
    pub fn context_tokens(&self) -> u64 {
        if self.total_tokens != 0 {
            self.total_tokens
        } else {
            self.input + self.output + self.cache_read + self.cache_write
        }
    }
}

/// The cost of one reply, in the provider's currency unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageCost {
    #[serde(
        default,
        deserialize_with = "f64_or_zero",
        serialize_with = "js_number"
    )]
    pub input: f64,
    #[serde(
        default,
        deserialize_with = "f64_or_zero",
        serialize_with = "js_number"
    )]
    pub output: f64,
    #[serde(
        default,
        deserialize_with = "f64_or_zero",
        serialize_with = "js_number"
    )]
    pub cache_read: f64,
    #[serde(
        default,
        deserialize_with = "f64_or_zero",
        serialize_with = "js_number"
    )]
    pub cache_write: f64,
    #[serde(
        default,
        deserialize_with = "f64_or_zero",
        serialize_with = "js_number"
    )]
    pub total: f64,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A reply from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// `stop`, `length`, `toolUse`, `error` or `aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl AssistantMessage {
    /// `true` when the reply ended by abort or error, which makes its usage unreliable.
    pub fn is_aborted_or_error(&self) -> bool {
        matches!(self.stop_reason.as_deref(), Some("aborted" | "error"))
    }
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    #[serde(default)]
    pub tool_call_id: String,
    #[serde(default)]
    pub tool_name: String,
    #[serde(default)]
    pub content: MessageContent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A shell command the user ran directly (`!cmd` in Pi).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashExecutionMessage {
    #[serde(default)]
    pub command: String,

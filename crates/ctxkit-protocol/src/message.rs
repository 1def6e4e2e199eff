//! Agent messages, the `message` of a session entry: the roles Pi knows, and a lossless fallback for
//! roles it does not.

use serde::de::{self, MapAccess};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::content::{ContentBlock, MessageContent, tagged, untag};
use crate::from_str_repaired;
use crate::lenient::{f64_or_zero, js_number, null_as_default, optional_i64, u64_or_zero};
use crate::tagged::{Tagged, deserialize_tagged, rest};

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
    /// Usage of these parts, `total_tokens` their sum ([`Usage::part_tokens`]). Counts come from
    /// providers, session files and imported transcripts, any of them crafted: every sum of them
    /// saturates at `u64::MAX` rather than overflow (a panic in a debug build, a small number that
    /// picks the wrong price tier in a release one).
    pub fn from_parts(input: u64, output: u64, cache_read: u64, cache_write: u64) -> Self {
        let mut usage = Self {
            input,
            output,
            cache_read,
            cache_write,
            ..Self::default()
        };
        usage.total_tokens = usage.part_tokens();
        usage
    }

    /// The request's input: uncached, read from and written to the cache, summed saturating.
    pub fn input_tokens(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Every part (the input and the output), summed saturating.
    pub fn part_tokens(&self) -> u64 {
        self.input_tokens().saturating_add(self.output)
    }

    /// Tokens the reply's context occupied: `totalTokens` when reported, else the sum of the parts.
    pub fn context_tokens(&self) -> u64 {
        if self.total_tokens != 0 {
            self.total_tokens
        } else {
            self.part_tokens()
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

impl UsageCost {
    /// Adds `other`'s parts and total to these (its other fields are left out).
    pub fn add(&mut self, other: &UsageCost) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.total += other.total;
    }
}

/// A reply from the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    #[serde(default, deserialize_with = "null_as_default")]
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

    /// `true` when the reply stopped to have its tool calls run (`stopReason` `toolUse`) and holds
    /// at least one: an agent runs them. A reply cut at the output limit (`length`), failed or
    /// aborted keeps its calls, which are not run.
    pub fn asks_for_tools(&self) -> bool {
        self.stop_reason.as_deref() == Some("toolUse")
            && self
                .content
                .iter()
                .any(|block| block.as_tool_call().is_some())
    }

    /// Gives the reply the complete `usage` every assistant message Pi writes has, and Pi 1.6.0
    /// reads unguarded when it opens a session (its footer, `get_session_stats` and `-p` add up
    /// each reply's counts and its `cost.total`, and fail on a reply without them): the counts it
    /// has are kept, zeros stand where it has none, a zero `cost` where it has no price. An
    /// all-zero usage is no count: Pi's and ctxkit's token estimates pass over it, and a reply
    /// at $0 for the tokens it used is of unknown price to the spend, as one without a cost was.
    /// Every assistant message ctxkit writes from outside its own loop passes here (a session's
    /// appends, an import). A `totalTokens` of 0 (or none) beside counts is their sum, as every
    /// provider of Pi's computes it: a stored usage never says 0 tokens in all beside 5 read.
    pub fn complete_usage(&mut self) {
        let usage = self.usage.get_or_insert_with(Usage::default);
        usage.cost.get_or_insert_with(UsageCost::default);
        if usage.total_tokens == 0 {
            usage.total_tokens = usage.part_tokens();
        }
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
    #[serde(default)]
    pub output: String,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_code: Option<i64>,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(default)]
    pub truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    /// Set for `!!cmd`: shown to the user, never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A message injected by an extension; sent to the model as a user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomMessage {
    #[serde(default)]
    pub custom_type: String,
    #[serde(default)]
    pub content: MessageContent,
    #[serde(default)]
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The summary of a branch the conversation came back from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryMessage {
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub from_id: String,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The summary that stands in for compacted history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionSummaryMessage {
    #[serde(default)]
    pub summary: String,
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub tokens_before: u64,
    #[serde(
        default,
        deserialize_with = "optional_i64",
        skip_serializing_if = "Option::is_none"
    )]
    pub timestamp: Option<i64>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A message of any role, tagged by `role`.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "messages are materialized one at a time from stored lines; boxing would only burden construction"
)]
pub enum AgentMessage {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
    BashExecution(BashExecutionMessage),
    Custom(CustomMessage),
    BranchSummary(BranchSummaryMessage),
    CompactionSummary(CompactionSummaryMessage),
    /// A role this version does not know (or `hookMessage` of a v2 file before migration); kept whole.
    Unknown(JsonObject),
}

impl AgentMessage {
    /// The user message, when this is one.
    pub fn as_user(&self) -> Option<&UserMessage> {
        if let Self::User(message) = self {
            Some(message)
        } else {
            None
        }
    }

    /// The assistant message, when this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        if let Self::Assistant(message) = self {
            Some(message)
        } else {
            None
        }
    }

    /// The tool result, when this is one.
    pub fn as_tool_result(&self) -> Option<&ToolResultMessage> {
        if let Self::ToolResult(message) = self {
            Some(message)
        } else {
            None
        }
    }

    /// The `role` tag as written in files.
    pub fn role(&self) -> &str {
        match self {
            Self::User(_) => "user",
            Self::Assistant(_) => "assistant",
            Self::ToolResult(_) => "toolResult",
            Self::BashExecution(_) => "bashExecution",
            Self::Custom(_) => "custom",
            Self::BranchSummary(_) => "branchSummary",
            Self::CompactionSummary(_) => "compactionSummary",
            Self::Unknown(object) => object.get("role").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The epoch-millisecond timestamp, when the message has one.
    pub fn timestamp(&self) -> Option<i64> {
        match self {
            Self::User(message) => message.timestamp,
            Self::Assistant(message) => message.timestamp,
            Self::ToolResult(message) => message.timestamp,
            Self::BashExecution(message) => message.timestamp,
            Self::Custom(message) => message.timestamp,
            Self::BranchSummary(message) => message.timestamp,
            Self::CompactionSummary(message) => message.timestamp,
            Self::Unknown(object) => object
                .get("timestamp")
                .and_then(crate::lenient::value_as_i64),
        }
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::User(message) => tagged("role", "user", message).serialize(serializer),
            Self::Assistant(message) => tagged("role", "assistant", message).serialize(serializer),
            Self::ToolResult(message) => {
                tagged("role", "toolResult", message).serialize(serializer)
            }
            Self::BashExecution(message) => {
                tagged("role", "bashExecution", message).serialize(serializer)
            }
            Self::Custom(message) => tagged("role", "custom", message).serialize(serializer),
            Self::BranchSummary(message) => {
                tagged("role", "branchSummary", message).serialize(serializer)
            }
            Self::CompactionSummary(message) => {
                tagged("role", "compactionSummary", message).serialize(serializer)
            }
            Self::Unknown(object) => object.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = JsonObject::deserialize(deserializer)?;
        Self::from_object(object)
    }
}

impl Tagged for AgentMessage {
    const TAG: &'static str = "role";
    const MODELLED: &'static [&'static str] = &[
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
    ];

    fn variant<'de, A: MapAccess<'de>>(tag: &str, fields: A) -> Result<Self, A::Error> {
        match tag {
            "user" => rest(fields).map(Self::User),
            "assistant" => rest(fields).map(Self::Assistant),
            "toolResult" => rest(fields).map(Self::ToolResult),
            "bashExecution" => rest(fields).map(Self::BashExecution),
            "custom" => rest(fields).map(Self::Custom),
            "branchSummary" => rest(fields).map(Self::BranchSummary),
            "compactionSummary" => rest(fields).map(Self::CompactionSummary),
            other => Err(de::Error::custom(format!("no typed message `{other}`"))),
        }
    }

    fn from_object<E: de::Error>(object: JsonObject) -> Result<Self, E> {
        let role = object
            .get("role")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let message = match role.as_deref() {
            Some("user") => Self::User(untag(object, "role")?),
            Some("assistant") => Self::Assistant(untag(object, "role")?),
            Some("toolResult") => Self::ToolResult(untag(object, "role")?),
            Some("bashExecution") => Self::BashExecution(untag(object, "role")?),
            Some("custom") => Self::Custom(untag(object, "role")?),
            Some("branchSummary") => Self::BranchSummary(untag(object, "role")?),
            Some("compactionSummary") => Self::CompactionSummary(untag(object, "role")?),
            Some(_) | None => Self::Unknown(object),
        };
        Ok(message)
    }

    fn extra(&self) -> Option<&JsonObject> {
        match self {
            Self::User(message) => Some(&message.extra),
            Self::Assistant(message) => Some(&message.extra),
            Self::ToolResult(message) => Some(&message.extra),
            Self::BashExecution(message) => Some(&message.extra),
            Self::Custom(message) => Some(&message.extra),
            Self::BranchSummary(message) => Some(&message.extra),
            Self::CompactionSummary(message) => Some(&message.extra),
            Self::Unknown(_) => None,
        }
    }
}

/// An agent message read typed straight from its JSON when `role` comes first (see `tagged`).
struct DirectMessage(AgentMessage);

impl<'de> Deserialize<'de> for DirectMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_tagged(deserializer).map(Self)
    }
}

/// Parses an agent message from its JSON text, typed straight from the text when `role` comes first
/// (see `tagged`); the same message as `from_str_repaired::<AgentMessage>`, several times faster.
pub fn parse_agent_message(text: &str) -> Result<AgentMessage, serde_json::Error> {
    from_str_repaired::<DirectMessage>(text).map(|DirectMessage(message)| message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// QA r101 serve D1: a reply appended without a `cost` (or without a `usage`) was written as
    /// is, and Pi 1.6.0 crashed opening the session.
    #[test]
    fn a_completed_usage_keeps_the_counts_sums_a_missing_total_and_adds_a_zero_cost() {
        let cases = [
            (
                r#"{"role":"assistant","content":[],"usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15}}"#,
                r#"{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#,
            ),
            (
                r#"{"role":"assistant","content":[]}"#,
                r#"{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#,
            ),
            (
                r#"{"role":"assistant","content":[],"usage":{"input":7,"cost":{"total":0.5}}}"#,
                r#"{"input":7,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}}"#,
            ),
            (
                r#"{"role":"assistant","content":[],"usage":{"input":5,"output":2,"cacheRead":3,"totalTokens":0}}"#,
                r#"{"input":5,"output":2,"cacheRead":3,"cacheWrite":0,"totalTokens":10,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#,
            ),
        ];
        for (given, stored) in cases {
            let Ok(AgentMessage::Assistant(mut reply)) = serde_json::from_str(given) else {
                panic!("an assistant message: {given}");
            };
            reply.complete_usage();
            let usage = serde_json::to_string(&reply.usage).unwrap();
            assert_eq!(usage, stored, "{given}");
        }
    }

    #[test]
    fn costs_add_part_by_part_and_keep_their_own_fields() {
        let mut sum: UsageCost =
            serde_json::from_value(json!({"input": 1.0, "total": 1.5, "totalFromProvider": false}))
                .unwrap();
        let other = UsageCost {
            input: 0.25,
            output: 2.0,
            cache_read: 0.5,
            cache_write: 0.125,
            total: 2.875,
            extra: JsonObject::new(),
        };
        sum.add(&other);
        assert_eq!(
            (
                sum.input,
                sum.output,
                sum.cache_read,
                sum.cache_write,
                sum.total
            ),
            (1.25, 2.0, 0.5, 0.125, 4.375)
        );
        assert_eq!(sum.extra.get("totalFromProvider"), Some(&json!(false)));
    }

    /// Only a reply that stopped for its tools gets them run; one cut at the output limit (QA F12)
    /// or failed keeps its calls unrun.
    #[test]
    fn only_a_tool_use_stop_asks_for_tools() {
        let reply = |stop: &str, call: bool| {
            let mut content = vec![json!({"type": "text", "text": "x"})];
            if call {
                content.push(json!({"type": "toolCall", "id": "c1", "name": "bash",
                                    "arguments": {"command": "touch x"}}));
            }
            let value = json!({"role": "assistant", "content": content, "stopReason": stop,
                               "timestamp": 1});
            serde_json::from_value::<AssistantMessage>(value).unwrap()
        };
        assert!(reply("toolUse", true).asks_for_tools());
        assert!(!reply("toolUse", false).asks_for_tools());
        for stop in ["length", "error", "aborted", "stop"] {
            assert!(!reply(stop, true).asks_for_tools(), "{stop}");
        }
    }

    #[test]
    fn every_role_round_trips() {
        let inputs = [
            json!({"role": "user", "content": "hi", "timestamp": 1}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "x",
                   "provider": "p", "model": "m", "usage": {"input": 1, "output": 2, "cacheRead": 0,
                   "cacheWrite": 0, "totalTokens": 3, "cost": {"input": 0.5, "output": 0, "cacheRead": 0,
                   "cacheWrite": 0, "total": 0.5}}, "stopReason": "stop", "timestamp": 2}),
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "read",
                   "content": [{"type": "text", "text": "x"}], "isError": false, "timestamp": 3}),
            json!({"role": "bashExecution", "command": "ls", "output": "", "exitCode": 1,
                   "cancelled": false, "truncated": false, "timestamp": 4}),
            json!({"role": "custom", "customType": "t", "content": "c", "display": true, "timestamp": 5}),
            json!({"role": "branchSummary", "summary": "s", "fromId": "root", "timestamp": 6}),
            json!({"role": "compactionSummary", "summary": "s", "tokensBefore": 10, "timestamp": 7}),
            json!({"role": "futureRole", "payload": [1]}),
        ];
        for input in inputs {
            let message: AgentMessage = serde_json::from_value(input.clone()).unwrap();
            assert_eq!(serde_json::to_value(&message).unwrap(), input);
        }
    }

    /// The direct read and the general path agree on every input, plain or odd.
    #[test]
    fn direct_reading_agrees_with_the_general_path() {
        let texts = [
            r#"{"role":"user","content":"hi","timestamp":1}"#,
            r#"{"role":"assistant","content":[{"type":"text","text":"a\nb"},{"type":"thinking","thinking":"t","thinkingSignature":"s"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"x","b":1}},{"type":"image","data":"AA","mimeType":"image/png"},{"type":"future","x":1}],"api":"a","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.5,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.5}},"stopReason":"stop","timestamp":2,"later":true}"#,
            r#"{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"x"}],"details":{"k":[1]},"isError":false,"timestamp":3}"#,
            r#"{"role":"bashExecution","command":"ls","output":"","exitCode":1,"cancelled":false,"truncated":false,"timestamp":4}"#,
            r#"{"role":"custom","customType":"t","content":"c","display":true,"timestamp":5}"#,
            r#"{"role":"branchSummary","summary":"s","fromId":"root","timestamp":6}"#,
            r#"{"role":"compactionSummary","summary":"s","tokensBefore":10,"timestamp":7}"#,
            // Not plainly written: the general path decides.
            r#"{"content":"role later","role":"user"}"#,
            r#"{"role":"futureRole","payload":[1]}"#,
            r#"{"role":"user","role":"assistant","content":[]}"#,
            r#"{"role":"user","content":"first","content":"second"}"#,
            r#"{"role":"assistant","content":[{"type":"text","type":"thinking","thinking":"x"}]}"#,
            r#"{"role":"assistant","content":[{"text":"type later","type":"text"}]}"#,
            r#"{"role":"user","content":"lone \ud800 surrogate"}"#,
            r#"{"role":"user","timestamp":1.7e12,"content":[]}"#,
            r#"{}"#,
        ];
        for text in texts {
            let general: AgentMessage = crate::from_str_repaired(text).unwrap();
            let direct = parse_agent_message(text).unwrap();
            assert_eq!(direct, general, "{text}");
            assert_eq!(
                serde_json::to_string(&direct).unwrap(),
                serde_json::to_string(&general).unwrap(),
                "{text}"
            );
        }
        assert!(parse_agent_message(r#"{"role":"user","content":5}"#).is_err());
        assert!(parse_agent_message("[1]").is_err());
    }

    #[test]
    fn float_spellings_of_integers_load() {
        let message: AgentMessage =
            serde_json::from_value(json!({"role": "user", "content": "x", "timestamp": 1.7e12}))
                .unwrap();
        assert_eq!(message.timestamp(), Some(1_700_000_000_000));
    }

    /// Each accessor answers for its own role and for no other.
    #[test]
    fn accessors_answer_only_for_their_role() {
        let messages: Vec<AgentMessage> = [
            json!({"role": "user", "content": "question"}),
            json!({"role": "assistant", "content": [], "model": "m1"}),
            json!({"role": "toolResult", "toolCallId": "c7", "content": []}),
            json!({"role": "custom", "customType": "note", "content": "c"}),
            json!({"role": "bashExecution", "command": "ls"}),
            json!({"role": "futureRole"}),
        ]
        .into_iter()
        .map(|value| serde_json::from_value(value).unwrap())
        .collect();
        let answers = |message: &AgentMessage| {
            [
                message.as_user().is_some(),
                message.as_assistant().is_some(),
                message.as_tool_result().is_some(),
            ]
        };
        assert_eq!(answers(&messages[0]), [true, false, false]);
        assert_eq!(answers(&messages[1]), [false, true, false]);
        assert_eq!(answers(&messages[2]), [false, false, true]);
        assert_eq!(answers(&messages[3]), [false; 3]);
        assert_eq!(answers(&messages[4]), [false; 3]);
        assert_eq!(answers(&messages[5]), [false; 3]);
        let user = messages[0].as_user().unwrap();
        assert_eq!(user.content.joined_text(""), "question");
        assert_eq!(
            messages[1].as_assistant().unwrap().model.as_deref(),
            Some("m1")
        );
        assert_eq!(messages[2].as_tool_result().unwrap().tool_call_id, "c7");
        assert!(
            matches!(&messages[3], AgentMessage::Custom(custom) if custom.custom_type == "note")
        );
    }
}

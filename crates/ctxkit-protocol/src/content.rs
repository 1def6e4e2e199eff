//! Content blocks of messages: text, image, thinking and tool calls, plus blocks of a type this
//! version does not know, kept as they are.

use serde::de::{self, MapAccess};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::JsonObject;
use crate::tagged::{Tagged, deserialize_tagged, rest};

/// A plain text block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    #[serde(default)]
    pub text: String,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// An image block: base64 data and its MIME type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    #[serde(default)]
    pub data: String,
    #[serde(default)]
    pub mime_type: String,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Model reasoning, optionally with the provider's signature for replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    #[serde(default)]
    pub thinking: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A tool call made by the assistant. `arguments` keeps its key order, which is part of token
/// estimates and of the serialized conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub arguments: Value,
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ToolCall {
    /// The key beside `arguments` that says why the model's arguments could not be read (Pi
    /// 1.6.0's form: `arguments` is then `{}`); such a call is never run.
    pub const ARGUMENTS_ERROR_KEY: &'static str = "argumentsError";

    /// Why the model's arguments could not be read, when they could not.
    pub fn arguments_error(&self) -> Option<&str> {
        self.extra
            .get(Self::ARGUMENTS_ERROR_KEY)
            .and_then(Value::as_str)
    }
}

/// One block of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    Text(TextContent),
    Image(ImageContent),
    Thinking(ThinkingContent),
    ToolCall(ToolCall),
    /// A block whose `type` this version does not know; kept whole (including `type`).
    Unknown(JsonObject),
}

impl ContentBlock {
    /// A text block with no extra fields.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent {
            text: text.into(),
            extra: JsonObject::new(),
        })
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(block) => tagged("type", "text", block).serialize(serializer),
            Self::Image(block) => tagged("type", "image", block).serialize(serializer),
            Self::Thinking(block) => tagged("type", "thinking", block).serialize(serializer),
            Self::ToolCall(block) => tagged("type", "toolCall", block).serialize(serializer),
            Self::Unknown(object) => object.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_tagged(deserializer)
    }
}

impl Tagged for ContentBlock {
    const TAG: &'static str = "type";
    const MODELLED: &'static [&'static str] = &["text", "image", "thinking", "toolCall"];

    fn variant<'de, A: MapAccess<'de>>(tag: &str, fields: A) -> Result<Self, A::Error> {
        match tag {
            "text" => rest(fields).map(Self::Text),
            "image" => rest(fields).map(Self::Image),
            "thinking" => rest(fields).map(Self::Thinking),
            "toolCall" => rest(fields).map(Self::ToolCall),
            other => Err(de::Error::custom(format!("no typed block `{other}`"))),
        }
    }

    fn from_object<E: de::Error>(object: JsonObject) -> Result<Self, E> {
        let kind = object
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let block = match kind.as_deref() {
            Some("text") => Self::Text(untag(object, "type")?),
            Some("image") => Self::Image(untag(object, "type")?),
            Some("thinking") => Self::Thinking(untag(object, "type")?),
            Some("toolCall") => Self::ToolCall(untag(object, "type")?),
            Some(_) | None => Self::Unknown(object),
        };
        Ok(block)
    }

    fn extra(&self) -> Option<&JsonObject> {
        match self {
            Self::Text(block) => Some(&block.extra),
            Self::Image(block) => Some(&block.extra),
            Self::Thinking(block) => Some(&block.extra),
            Self::ToolCall(block) => Some(&block.extra),
            Self::Unknown(_) => None,
        }
    }
}

/// A message's content: a plain string (user and custom messages may use it) or blocks. `null`
/// reads as no blocks, as Pi reads it (Pi writes `content: null` for an empty one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The two shapes, named as the type so serde's error says which field failed to read
        /// ("… untagged enum MessageContent") as it did before `null` was read.
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum MessageContent {
            Text(String),
            Blocks(Vec<ContentBlock>),
        }
        Ok(match Option::<MessageContent>::deserialize(deserializer)? {
            Some(MessageContent::Text(text)) => Self::Text(text),
            Some(MessageContent::Blocks(blocks)) => Self::Blocks(blocks),
            None => Self::default(),
        })
    }
}

impl Default for MessageContent {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

impl ContentBlock {
    /// The text of a text block; `None` for images, thinking, tool calls and unknown blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(&text.text),
            Self::Image(_) | Self::Thinking(_) | Self::ToolCall(_) | Self::Unknown(_) => None,
        }
    }

    /// The thinking of a thinking block (its text and signature).
    pub fn as_thinking(&self) -> Option<&ThinkingContent> {
        if let Self::Thinking(thinking) = self {
            Some(thinking)
        } else {
            None
        }
    }

    /// The tool call of a tool-call block.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        if let Self::ToolCall(call) = self {
            Some(call)
        } else {
            None
        }
    }
}

impl MessageContent {
    /// The text blocks joined by `separator` (a plain string as it is); images, thinking and tool
    /// calls are left out.
    pub fn joined_text(&self, separator: &str) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks
                .iter()
                .filter_map(ContentBlock::as_text)
                .collect::<Vec<_>>()
                .join(separator),
        }
    }

    /// Whether this content gives a model nothing to read: no text but blanks, no image with data,
    /// no other block (a provider refuses a user message of it; Pi leaves it out of Anthropic
    /// requests).
    pub fn is_blank(&self) -> bool {
        match self {
            Self::Text(text) => text.trim().is_empty(),
            Self::Blocks(blocks) => blocks.iter().all(|block| match block {
                ContentBlock::Text(text) => text.text.trim().is_empty(),
                ContentBlock::Image(image) => image.data.trim().is_empty(),
                ContentBlock::Thinking(_)
                | ContentBlock::ToolCall(_)
                | ContentBlock::Unknown(_) => false,
            }),
        }
    }

    /// The blocks of this content; a plain string reads as one text block.
    pub fn blocks(&self) -> Vec<ContentBlock> {
        match self {
            Self::Text(text) => vec![ContentBlock::text(text.clone())],
            Self::Blocks(blocks) => blocks.clone(),
        }
    }
}

/// Serializes `value` (an object) with `key: tag` as its first field.
pub(crate) fn tagged<T: Serialize>(key: &'static str, tag: &str, value: &T) -> Value {
    let mut object = JsonObject::new();
    object.insert(key.to_owned(), Value::String(tag.to_owned()));
    match serde_json::to_value(value) {
        Ok(Value::Object(fields)) => object.extend(fields),
        Ok(other) => {
            object.insert("value".to_owned(), other);
        }
        Err(_) => {}
    }
    Value::Object(object)
}

/// Deserializes `object` into `T` after removing the tag field, which `T` does not model.
pub(crate) fn untag<T: serde::de::DeserializeOwned, E: serde::de::Error>(
    mut object: JsonObject,
    key: &str,
) -> Result<T, E> {
    object.shift_remove(key);
    serde_json::from_value(Value::Object(object)).map_err(E::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pi writes `content: null` for an empty message: read as no blocks, as Pi reads it; a
    /// content of another type is still refused, under its name.
    #[test]
    fn a_null_content_is_no_blocks() {
        let content: MessageContent = serde_json::from_str("null").unwrap();
        assert_eq!(content, MessageContent::Blocks(Vec::new()));
        let error = serde_json::from_str::<MessageContent>("7").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("data did not match any variant of untagged enum MessageContent"),
            "{error}"
        );
        let reply: crate::AgentMessage =
            serde_json::from_str(r#"{"role":"assistant","content":null,"timestamp":1}"#).unwrap();
        assert!(reply.as_assistant().unwrap().content.is_empty());
    }
    use serde_json::json;

    #[test]
    fn blocks_round_trip_with_unknown_fields_and_types() {
        let input = json!([
            {"type": "text", "text": "hi", "cacheControl": {"type": "ephemeral"}},
            {"type": "image", "data": "AAA", "mimeType": "image/png"},
            {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"z": 1, "a": [1, 2]}},
            {"type": "audio", "data": "x"}
        ]);
        let blocks: Vec<ContentBlock> = serde_json::from_value(input.clone()).unwrap();
        assert!(matches!(blocks[4], ContentBlock::Unknown(_)));
        let output = serde_json::to_value(&blocks).unwrap();
        assert_eq!(output, input);
        // Key order of tool arguments survives.
        let text = serde_json::to_string(&blocks[3]).unwrap();
        assert!(text.contains(r#"{"z":1,"a":[1,2]}"#), "{text}");
    }

    #[test]
    fn string_content_reads_as_text() {
        let content: MessageContent = serde_json::from_value(json!("hello")).unwrap();
        assert_eq!(content.blocks(), vec![ContentBlock::text("hello")]);
    }

    /// Each accessor answers for its own block type and for no other.
    #[test]
    fn accessors_answer_only_for_their_block_type() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "hi"},
            {"type": "image", "data": "AAA", "mimeType": "image/png"},
            {"type": "thinking", "thinking": "hmm"},
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {}},
            {"type": "audio", "data": "x"}
        ]))
        .unwrap();
        let answers = |block: &ContentBlock| {
            [
                block.as_text().is_some(),
                block.as_thinking().is_some(),
                block.as_tool_call().is_some(),
            ]
        };
        assert_eq!(answers(&blocks[0]), [true, false, false]);
        assert_eq!(answers(&blocks[1]), [false; 3]);
        assert_eq!(answers(&blocks[2]), [false, true, false]);
        assert_eq!(answers(&blocks[3]), [false, false, true]);
        assert_eq!(answers(&blocks[4]), [false; 3]);
        assert_eq!(blocks[0].as_text(), Some("hi"));
        assert_eq!(blocks[2].as_thinking().unwrap().thinking, "hmm");
        assert_eq!(blocks[3].as_tool_call().unwrap().name, "read");
    }
}

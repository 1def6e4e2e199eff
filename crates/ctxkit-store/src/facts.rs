//! An entry line's facts read in one pass over its JSON without building it: the few fields a store
//! indexes are kept, everything else (a 1 MiB tool output) is only checked to be JSON. A
//! `serde_json::Value` of every line was most of the cost of `sessions --grep` over a large folder.
//! What it reads is what [`crate::lines::entry_facts`] read from the line's `Value` (a test
//! compares the two on awkward lines); when this read fails, the `Value` is read for the error.

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A value kept only when it is a string (a repeated key keeps its last value, as in a `Value`).
struct Text(Option<String>);

/// A value kept only when it is a whole number that fits an `i64` (as `Value::as_i64`).
struct Whole(Option<i64>);

/// The fields of an entry line a store reads, `None` fields when absent or of another type.
#[derive(Default)]
pub(crate) struct LineFacts {
    pub(crate) kind: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) parent_id: Option<String>,
    pub(crate) timestamp: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) message: MessageFacts,
}

/// The fields of an entry's `message` a store reads; empty when it is not an object.
#[derive(Default)]
pub(crate) struct MessageFacts {
    pub(crate) role: Option<String>,
    pub(crate) timestamp: Option<i64>,
    /// The text of the content (a string, or its text blocks joined by a space), read only while
    /// the role is unknown or `user`; `None` when there is no `content`.
    pub(crate) content_text: Option<String>,
}

/// An entry line that is a JSON object, or `None` for any other JSON value.
pub(crate) struct EntryLine(pub(crate) Option<LineFacts>);

/// Drains the rest of a sequence, checking it is JSON.
fn drain_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Drains the rest of a map, checking it is JSON.
fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the visits of every JSON value but an object, yielding `$none` for them.
macro_rules! non_objects {
    ($none:expr) => {
        fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok($none)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            drain_seq(seq).map(|()| $none)
        }
    };
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Text, E> {
        Ok(Text(Some(value.to_owned())))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<Text, E> {
        Ok(Text(Some(value)))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Text, E> {
        Ok(Text(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text, A::Error> {
        drain_seq(seq).map(|()| Text(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
        drain_map(map).map(|()| Text(None))
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct WholeVisitor;

impl<'de> Visitor<'de> for WholeVisitor {
    type Value = Whole;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Whole, E> {
        Ok(Whole(Some(value)))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Whole, E> {
        Ok(Whole(i64::try_from(value).ok()))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Whole, E> {
        Ok(Whole(None))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Whole, E> {
        Ok(Whole(None))
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Whole, E> {
        Ok(Whole(None))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Whole, E> {
        Ok(Whole(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Whole, A::Error> {
        drain_seq(seq).map(|()| Whole(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Whole, A::Error> {
        drain_map(map).map(|()| Whole(None))
    }
}

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WholeVisitor)
    }
}

/// A key the facts read, or any other.
enum Key {
    Type,
    Id,
    ParentId,
    Timestamp,
    Name,
    Message,
    Role,
    Content,
    Text,
    Other,
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Key, E> {
        Ok(match key {
            "type" => Key::Type,
            "id" => Key::Id,
            "parentId" => Key::ParentId,
            "timestamp" => Key::Timestamp,
            "name" => Key::Name,
            "message" => Key::Message,
            "role" => Key::Role,
            "content" => Key::Content,
            "text" => Key::Text,
            _ => Key::Other,
        })
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = EntryLine;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EntryLine, A::Error> {
        let mut facts = LineFacts::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Type => facts.kind = map.next_value::<Text>()?.0,
                Key::Id => facts.id = map.next_value::<Text>()?.0,
                Key::ParentId => facts.parent_id = map.next_value::<Text>()?.0,
                Key::Timestamp => facts.timestamp = map.next_value::<Text>()?.0,
                Key::Name => facts.name = map.next_value::<Text>()?.0,
                Key::Message => facts.message = map.next_value::<MessageFacts>()?,
                Key::Role | Key::Content | Key::Text | Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(EntryLine(Some(facts)))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<EntryLine, E> {
        Ok(EntryLine(None))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<EntryLine, E> {
        Ok(EntryLine(None))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<EntryLine, E> {
        Ok(EntryLine(None))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<EntryLine, E> {
        Ok(EntryLine(None))
    }
    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<EntryLine, E> {
        Ok(EntryLine(None))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<EntryLine, E> {
        Ok(EntryLine(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<EntryLine, A::Error> {
        drain_seq(seq).map(|()| EntryLine(None))
    }
}

impl<'de> Deserialize<'de> for EntryLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntryVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = MessageFacts;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MessageFacts, A::Error> {
        let mut message = MessageFacts::default();
        let mut content_passed_over = false;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Role => message.role = map.next_value::<Text>()?.0,
                Key::Timestamp => message.timestamp = map.next_value::<Whole>()?.0,
                // The text is read only while it may be a user's message (a tool's output is not).
                Key::Content if message.role.as_deref().is_none_or(|role| role == "user") => {
                    message.content_text = Some(map.next_value::<ContentText>()?.0);
                }
                Key::Content => {
                    map.next_value::<IgnoredAny>()?;
                    message.content_text = Some(String::new());
                    content_passed_over = true;
                }
                Key::Type
                | Key::Id
                | Key::ParentId
                | Key::Name
                | Key::Message
                | Key::Text
                | Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if content_passed_over && message.role.as_deref() == Some("user") {
            // A repeated `role` made it a user's message after its content was passed over: the
            // line is read whole instead.
            return Err(serde::de::Error::custom(
                "the role changed after the content",
            ));
        }
        Ok(message)
    }

    non_objects!(MessageFacts::default());
}

impl<'de> Deserialize<'de> for MessageFacts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MessageVisitor)
    }
}

/// A message's content as text: a string, or its `text` blocks' texts joined by a space; empty
/// for anything else.
struct ContentText(String);

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = ContentText;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<ContentText, E> {
        Ok(ContentText(value.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, value: String) -> Result<ContentText, E> {
        Ok(ContentText(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ContentText, A::Error> {
        let mut texts = Vec::new();
        while let Some(block) = seq.next_element::<TextBlock>()? {
            if let Some(text) = block.0 {
                texts.push(text);
            }
        }
        Ok(ContentText(texts.join(" ")))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<ContentText, E> {
        Ok(ContentText(String::new()))
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<ContentText, E> {
        Ok(ContentText(String::new()))
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<ContentText, E> {
        Ok(ContentText(String::new()))
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<ContentText, E> {
        Ok(ContentText(String::new()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<ContentText, E> {
        Ok(ContentText(String::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ContentText, A::Error> {
        drain_map(map).map(|()| ContentText(String::new()))
    }
}

impl<'de> Deserialize<'de> for ContentText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// The text of a content block whose `type` is `text` and whose `text` is a string.
struct TextBlock(Option<String>);

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = TextBlock;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextBlock, A::Error> {
        let (mut kind, mut text) = (None, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Type => kind = map.next_value::<Text>()?.0,
                Key::Text => text = map.next_value::<Text>()?.0,
                Key::Id
                | Key::ParentId
                | Key::Timestamp
                | Key::Name
                | Key::Message
                | Key::Role
                | Key::Content
                | Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(TextBlock(text.filter(|_| kind.as_deref() == Some("text"))))
    }

    non_objects!(TextBlock(None));
}

impl<'de> Deserialize<'de> for TextBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BlockVisitor)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_one_pass_reads_what_the_value_read() {
        let lines = [
            r#"{"type":"message","id":"a","parentId":"b","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"fix"},{"type":"image"},7,{"text":"x"},{"type":"text","text":"it"}]}}"#,
            r#"{"type":"message","id":"a","message":{"content":"before the role","role":"user","timestamp":1700000000000}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"timestamp":1.5}}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"out"}],"timestamp":17}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":"x","role":"user"}}"#,
            r#"{"type":"message","message":{"role":"user","timestamp":18446744073709551615}}"#,
            r#"{"type":"message","message":[1,{"role":"user"}]}"#,
            r#"{"type":"message","message":"text"}"#,
            r#"{"type":"message","message":{"role":"user","content":{"text":"x"}}}"#,
            r#"{"type":"message","message":{"role":"user","content":"<environment_context>x</environment_context>"}}"#,
            r#"{"type":"session_info","name":"one","name":"two","id":5,"parentId":null}"#,
            r#"{"type":"session_info","name":{"a":[1,2]}}"#,
            r#"{"type":"x","type":"y","timestamp":"not a time","message":{"role":"user","content":"no"}}"#,
            r#"{"type":"a\u0062","i\u0064":"esc\"aped"}"#,
            r#"{"type":"message","message":{"role":"user","content":"\ud83d cut"}}"#,
            r#"{"type":"message","message":{"role":"toolResult","content":"\ud83d cut"}}"#,
            r#"{"type":7}"#,
            r#"{"type":"a","type":null}"#,
            r#"{"type":"message","message":{"role":"user","content":"x"}} trailing"#,
            r#"{"type":"message","message":{"role":"toolResult","content":[1,}}"#,
            r#"[1]"#,
            r#""text""#,
            r#"{"id":"a"}"#,
            "",
        ];
        for line in lines {
            assert_eq!(
                crate::lines::entry_facts(line),
                crate::lines::entry_facts_of_value(line),
                "{line}"
            );
        }
    }

    #[test]
    fn an_entry_line_is_not_built_as_a_value() {
        let output = "x".repeat(100_000);
        let lines = [
            format!(
                r#"{{"type":"message","id":"t","message":{{"role":"toolResult","content":[{{"type":"text","text":"{output}"}}]}}}}"#
            ),
            r#"{"type":"message","id":"u","message":{"role":"user","content":"fix it"}}"#
                .to_owned(),
            r#"{"type":"session_info","id":"n","name":"parser"}"#.to_owned(),
        ];
        let before = crate::lines::VALUE_READS.with(std::cell::Cell::get);
        for line in &lines {
            assert!(crate::lines::entry_facts(line).is_ok());
        }
        // Before, each line was read whole into a `serde_json::Value` (a 1 MiB output too).
        assert_eq!(crate::lines::VALUE_READS.with(std::cell::Cell::get), before);
    }
}

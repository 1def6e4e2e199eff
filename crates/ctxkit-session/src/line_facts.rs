//! The facts a store keeps of an entry line (its type, ids, time, a session name, a message's role
//! and time, a user's text), read in one pass over the line by the head reader (`head.rs`)
//! without building it: a 1 MiB tool output is only checked to be JSON.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::head::{EntryHead, Lax, read_facts_head};

/// What [`entry_line_facts`] reads of an entry line: each field `None` when absent or not of its
/// type (a repeated key takes its last value, as in a `serde_json::Value`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryLineFacts {
    /// `type`.
    pub kind: Option<String>,
    pub id: Option<String>,
    pub parent_id: Option<String>,
    /// The entry's `timestamp` text.
    pub timestamp: Option<String>,
    /// `name` (which a `session_info` entry sets).
    pub name: Option<String>,
    /// `message.role`, of any entry type.
    pub role: Option<String>,
    /// `message.timestamp` as `serde_json::Value::as_i64` reads it: a whole number written
    /// without a fraction or exponent that fits an `i64` (`1700000000000.0` is not one).
    pub message_timestamp: Option<i64>,
    /// When `message.role` is `user`: the content's text (a string, or its `text` blocks' texts
    /// joined by a space; nothing for another type) as a listing shows it
    /// ([`crate::listed_first_message`]); `None` when nothing is left or there is no content.
    pub user_text: Option<String>,
}

/// The facts of an entry line, read in one pass that keeps nothing else; an error when the line is
/// not one JSON object (nested deeper than 128 levels included, as `serde_json` refuses it). A lone
/// surrogate escape (Pi cuts a string inside an emoji) is read as U+FFFD, as
/// `ctxkit_protocol::from_str_repaired` reads it.
pub fn entry_line_facts(line: &str) -> Result<EntryLineFacts, serde_json::Error> {
    // The parser skips a value it does not keep without counting its depth: the nesting a `Value`
    // refuses is refused by a walk of the brackets.
    crate::scan::closes_as_one_object(line.as_bytes()).map_err(crate::head::unclosed)?;
    match read_facts_head(line).and_then(facts_of) {
        Ok(facts) => Ok(facts),
        Err(error) => match ctxkit_protocol::repair_lone_surrogates(line) {
            std::borrow::Cow::Owned(repaired) => read_facts_head(&repaired)
                .and_then(facts_of)
                .map_err(|_| error),
            std::borrow::Cow::Borrowed(_) => Err(error),
        },
    }
}

fn owned(field: Lax<'_>) -> Option<String> {
    field.0.map(std::borrow::Cow::into_owned)
}

/// The facts of a head; an error when the content's strings are not all text (a lone surrogate,
/// which the head's read skips over unchecked).
fn facts_of(head: EntryHead<'_>) -> Result<EntryLineFacts, serde_json::Error> {
    let message = head.message.unwrap_or_default();
    let role = owned(message.role);
    let user_text = match (role.as_deref(), &message.content) {
        (Some("user"), Some(content)) => crate::listed_first_message(content_text(content)?),
        _ => None,
    };
    Ok(EntryLineFacts {
        kind: owned(head.kind),
        id: owned(head.id),
        parent_id: owned(head.parent_id),
        timestamp: owned(head.timestamp),
        name: owned(head.name),
        role,
        message_timestamp: message.whole_timestamp,
        user_text,
    })
}

/// The text of a message's content (JSON the line's read checked): a string, or its `text` blocks'
/// texts joined by a space; empty for anything else.
fn content_text(content: &RawValue) -> Result<String, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(content.get());
    de::Deserializer::deserialize_any(&mut deserializer, ContentVisitor)
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = String;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<String, E> {
        Ok(value.to_owned())
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<String, E> {
        Ok(value)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        let mut texts = Vec::new();
        while let Some(block) = seq.next_element::<TextBlock<'de>>()? {
            texts.extend(block.0);
        }
        Ok(texts.join(" "))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(String::new())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Ok(String::new())
    }
}

/// The text of a content block whose `type` is `text` and whose `text` is a string; `None` for any
/// other block or value.
struct TextBlock<'a>(Option<std::borrow::Cow<'a, str>>);

#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum BlockField {
    Type,
    Text,
    #[serde(other)]
    Other,
}

impl<'de> de::Deserialize<'de> for TextBlock<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = TextBlock<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TextBlock<'de>, A::Error> {
        let (mut kind, mut text) = (Lax::default(), Lax::default());
        while let Some(field) = map.next_key::<BlockField>()? {
            match field {
                BlockField::Type => kind = map.next_value()?,
                BlockField::Text => text = map.next_value()?,
                BlockField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(TextBlock(
            text.0.filter(|_| kind.0.as_deref() == Some("text")),
        ))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TextBlock<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(TextBlock(None))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<TextBlock<'de>, E> {
        Ok(TextBlock(None))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<TextBlock<'de>, E> {
        Ok(TextBlock(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<TextBlock<'de>, E> {
        Ok(TextBlock(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<TextBlock<'de>, E> {
        Ok(TextBlock(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<TextBlock<'de>, E> {
        Ok(TextBlock(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<TextBlock<'de>, E> {
        Ok(TextBlock(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_user_message_and_a_name() {
        let facts = entry_line_facts(r#"{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{"content":[{"type":"text","text":"fix"},{"type":"image"},{"type":"text","text":"it"}],"role":"user","timestamp":17}}"#).unwrap();
        assert_eq!(facts.user_text.as_deref(), Some("fix it"));
        assert_eq!(facts.message_timestamp, Some(17));
        assert_eq!(facts.parent_id.as_deref(), Some("b"));
        let named = entry_line_facts(r#"{"type":"session_info","name":"p\u0061rser"}"#).unwrap();
        assert_eq!(named.name.as_deref(), Some("parser"));
    }

    #[test]
    fn a_decimal_or_huge_message_time_is_not_whole() {
        for (time, expected) in [
            ("1700000000000", Some(1_700_000_000_000)),
            ("-5", Some(-5)),
            ("1700000000000.0", None),
            ("1700000000000.5", None),
            ("1e3", None),
            ("-0", None),
            ("18446744073709551615", None),
            (r#""1700000000000""#, None),
            ("null", None),
        ] {
            let line =
                format!(r#"{{"type":"message","message":{{"role":"user","timestamp":{time}}}}}"#);
            let facts = entry_line_facts(&line).unwrap();
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(value["message"]["timestamp"].as_i64(), expected, "{time}");
            assert_eq!(facts.message_timestamp, expected, "{time}");
        }
    }

    #[test]
    fn nesting_is_refused_where_a_value_refuses_it() {
        for depth in 120..135 {
            let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            for line in [
                format!(r#"{{"type":"message","message":{{"role":"user","content":{nested}}}}}"#),
                format!(r#"{{"type":"x","other":{nested}}}"#),
                format!(r#"{{"type":"x","other":{nested} }} "#),
            ] {
                let value = serde_json::from_str::<serde_json::Value>(&line);
                assert_eq!(entry_line_facts(&line).is_ok(), value.is_ok(), "{depth}");
            }
        }
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_crash() {
        let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
        for line in [
            format!(r#"{{"type":"message","message":{{"role":"user","content":{deep}}}}}"#),
            format!(r#"{{"type":"x","other":{deep}}}"#),
        ] {
            assert!(entry_line_facts(&line).is_err());
            assert!(serde_json::from_str::<serde_json::Value>(&line).is_err());
        }
    }
}

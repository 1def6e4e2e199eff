//! The head of an entry line: the few fields the index needs, read in one pass without materializing
//! message content. Every field is read laxly (a wrong type reads as absent) because files come from
//! many writers and JavaScript does not check types.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A string field, or `None` when absent or of another type.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Lax(pub(crate) Option<String>);

impl<'de> Deserialize<'de> for Lax {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LaxVisitor)
    }
}

struct LaxVisitor;

impl<'de> Visitor<'de> for LaxVisitor {
    type Value = Lax;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Lax, E> {
        Ok(Lax(Some(value.to_owned())))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Lax, E> {
        Ok(Lax(Some(value)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Lax, E> {
        Ok(Lax(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Lax, E> {
        Ok(Lax(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Lax, E> {
        Ok(Lax(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Lax, E> {
        Ok(Lax(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Lax, E> {
        Ok(Lax(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Lax, E> {
        Ok(Lax(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Lax, D::Error> {
        deserializer.deserialize_any(LaxVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lax, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lax(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lax, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lax(None))
    }
}

/// A number field, or `None` when absent or of another type.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct LaxNumber(pub(crate) Option<f64>);

impl<'de> Deserialize<'de> for LaxNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Option::<&RawValue>::deserialize(deserializer)?;
        Ok(Self(
            value.and_then(|raw| raw.get().trim().parse::<f64>().ok()),
        ))
    }
}

/// The fields of an entry (or header) line that the index reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryHead<'a> {
    #[serde(default, rename = "type")]
    pub(crate) kind: Lax,
    #[serde(default)]
    pub(crate) id: Lax,
    #[serde(default)]
    pub(crate) parent_id: Lax,
    #[serde(default)]
    pub(crate) timestamp: Lax,
    #[serde(default, borrow)]
    pub(crate) message: Option<&'a RawValue>,
    #[serde(default)]
    pub(crate) thinking_level: Lax,
    #[serde(default)]
    pub(crate) provider: Lax,
    #[serde(default)]
    pub(crate) model_id: Lax,
    #[serde(default)]
    pub(crate) first_kept_entry_id: Lax,
    #[serde(default)]
    pub(crate) target_id: Lax,
    #[serde(default)]
    pub(crate) label: Lax,
    #[serde(default)]
    pub(crate) name: Lax,
    #[serde(default)]
    pub(crate) summary: Lax,
}

/// The fields of a message the index reads.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MessageHead {
    #[serde(default)]
    pub(crate) role: Lax,
    #[serde(default)]
    pub(crate) provider: Lax,
    #[serde(default)]
    pub(crate) model: Lax,
    #[serde(default)]
    pub(crate) timestamp: LaxNumber,
    #[serde(default)]
    pub(crate) content: Option<IgnoredAny>,
}

impl MessageHead {
    /// Reads the head of a message object; anything that is not an object reads as an empty head.
    pub(crate) fn read(raw: &RawValue) -> Self {
        serde_json::from_str(raw.get()).unwrap_or_default()
    }
}

/// A message's head read in place, inside the line's single pass; anything that is not an object
/// reads as an empty head.
#[derive(Debug, Default)]
pub(crate) struct LaxMessageHead(pub(crate) MessageHead);

impl<'de> Deserialize<'de> for LaxMessageHead {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LaxMessageVisitor)
    }
}

struct LaxMessageVisitor;

impl<'de> Visitor<'de> for LaxMessageVisitor {
    type Value = LaxMessageHead;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LaxMessageHead, A::Error> {
        MessageHead::deserialize(de::value::MapAccessDeserializer::new(map)).map(LaxMessageHead)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LaxMessageHead, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LaxMessageHead::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<LaxMessageHead, E> {
        Ok(LaxMessageHead::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<LaxMessageHead, E> {
        Ok(LaxMessageHead::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<LaxMessageHead, E> {
        Ok(LaxMessageHead::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<LaxMessageHead, E> {
        Ok(LaxMessageHead::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<LaxMessageHead, E> {
        Ok(LaxMessageHead::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<LaxMessageHead, E> {
        Ok(LaxMessageHead::default())
    }
}

/// What a session listing reads of an entry line, in one pass: unlike [`EntryHead`] it does not
/// keep the message's position, so the message is not scanned a second time.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListingHead {
    #[serde(default, rename = "type")]
    pub(crate) kind: Lax,
    #[serde(default)]
    pub(crate) timestamp: Lax,
    #[serde(default)]
    pub(crate) message: Option<LaxMessageHead>,
    #[serde(default)]
    pub(crate) name: Lax,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_read_laxly() {
        let line = r#"{"type":"message","id":7,"parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"provider":"p","model":["m"]},"extra":{"deep":[1,2,{"a":null}]}}"#;
        let head: EntryHead = serde_json::from_str(line).unwrap();
        assert_eq!(head.kind.0.as_deref(), Some("message"));
        assert_eq!(head.id.0, None);
        let message = MessageHead::read(head.message.unwrap());
        assert_eq!(message.role.0.as_deref(), Some("assistant"));
        assert_eq!(message.model.0, None);
        assert!(message.content.is_some());
        let not_object: &RawValue = serde_json::from_str("42").unwrap();
        assert_eq!(MessageHead::read(not_object).role.0, None);
    }

    #[test]
    fn listing_heads_read_the_message_in_one_pass_and_laxly() {
        let line = r#"{"type":"message","timestamp":"t","message":{"role":"user","content":"hi","timestamp":17},"name":5}"#;
        let head: ListingHead = serde_json::from_str(line).unwrap();
        let message = head.message.unwrap().0;
        assert_eq!(message.role.0.as_deref(), Some("user"));
        assert_eq!(message.timestamp.0, Some(17.0));
        assert!(message.content.is_some());
        assert_eq!(head.name.0, None);
        for odd in [r#""text""#, "[1, {}]", "null", "3", "true"] {
            let line = format!(r#"{{"type":"message","message":{odd}}}"#);
            let head: ListingHead = serde_json::from_str(&line).unwrap();
            assert_eq!(head.message.unwrap_or_default().0.role.0, None, "{odd}");
        }
    }
}

//! Lax reads of a line's fields: a field of the wrong type reads as absent (files come from many
//! writers, and JavaScript does not check types).

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A string field, or `None` when absent or of another type; borrowed from the line when it has no
/// escapes (most ids, names and timestamps), so reading a head allocates nothing for them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Lax<'a>(pub(crate) Option<Cow<'a, str>>);

impl Lax<'_> {
    pub(crate) fn into_owned(self) -> Lax<'static> {
        Lax(self.0.map(|text| Cow::Owned(text.into_owned())))
    }
}

impl<'de> Deserialize<'de> for Lax<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LaxVisitor)
    }
}

struct LaxVisitor;

impl<'de> Visitor<'de> for LaxVisitor {
    type Value = Lax<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, value: &'de str) -> Result<Lax<'de>, E> {
        Ok(Lax(Some(Cow::Borrowed(value))))
    }
    fn visit_str<E: de::Error>(self, value: &str) -> Result<Lax<'de>, E> {
        Ok(Lax(Some(Cow::Owned(value.to_owned()))))
    }
    fn visit_string<E: de::Error>(self, value: String) -> Result<Lax<'de>, E> {
        Ok(Lax(Some(Cow::Owned(value))))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Lax<'de>, E> {
        Ok(Lax(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Lax<'de>, E> {
        Ok(Lax(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Lax<'de>, E> {
        Ok(Lax(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Lax<'de>, E> {
        Ok(Lax(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Lax<'de>, E> {
        Ok(Lax(None))
    }
    fn visit_none<E: de::Error>(self) -> Result<Lax<'de>, E> {
        Ok(Lax(None))
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Lax<'de>, D::Error> {
        deserializer.deserialize_any(LaxVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Lax<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lax(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Lax<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lax(None))
    }
}

/// A number field, or `None` when absent or of another type.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(crate) struct LaxNumber(pub(crate) Option<f64>);

impl<'de> Deserialize<'de> for LaxNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<&RawValue>::deserialize(deserializer).map(Self::of)
    }
}

impl LaxNumber {
    /// The number a field's JSON holds, `None` for another type.
    pub(crate) fn of(raw: Option<&RawValue>) -> Self {
        Self(raw.and_then(|raw| raw.get().trim().parse::<f64>().ok()))
    }
}

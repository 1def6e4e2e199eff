//! Reading internally tagged objects (`{"role": "user", …}`, `{"type": "text", …}`) straight into
//! their typed variant when the tag is the first key, as every writer we know puts it. The general
//! path collects the object into a map first and converts it, which copies every value twice; it
//! stays the reference for anything else (tag later, unknown tag). A repeated key is an error here
//! (the typed structs refuse repeated fields; a repeated tag is refused too); `from_str_repaired` then
//! reads the text again through a `Value`, where the last value of a key wins, as in `JSON.parse`.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::JsonObject;

/// An internally tagged type whose known variants are typed structs.
pub(crate) trait Tagged: Sized {
    /// The tag's key (`role`, `type`).
    const TAG: &'static str;

    /// The tags with a typed variant.
    const MODELLED: &'static [&'static str];

    /// The variant named `tag` (one of [`Self::MODELLED`]), read from the object's other fields.
    fn variant<'de, A: MapAccess<'de>>(tag: &str, rest: A) -> Result<Self, A::Error>;

    /// The general path: a whole object, tag included.
    fn from_object<E: de::Error>(object: JsonObject) -> Result<Self, E>;

    /// The fields a variant did not model; `None` for the untyped variant.
    fn extra(&self) -> Option<&JsonObject>;
}

/// Deserializes a [`Tagged`] type: typed straight from the input when the tag comes first.
pub(crate) fn deserialize_tagged<'de, T: Tagged, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_map(TaggedVisitor(PhantomData))
}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut object = JsonObject::new();
        let Some(first) = map.next_key::<String>()? else {
            return T::from_object(object);
        };
        let first_value: Value = map.next_value()?;
        if first == T::TAG
            && let Some(tag) = first_value.as_str()
            && T::MODELLED.contains(&tag)
        {
            let typed = T::variant(tag, map)?;
            return match typed.extra() {
                // A repeated tag (the general path lets the last one win, and may pick another
                // variant): refused here, so the caller reads the text again the general way.
                Some(extra) if extra.contains_key(T::TAG) => Err(de::Error::custom(format!(
                    "repeated `{}` read directly",
                    T::TAG
                ))),
                Some(_) | None => Ok(typed),
            };
        }
        object.insert(first, first_value);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        T::from_object(object)
    }
}

/// Reads a typed variant from the remaining fields of a map.
pub(crate) fn rest<'de, T: Deserialize<'de>, A: MapAccess<'de>>(rest: A) -> Result<T, A::Error> {
    T::deserialize(MapAccessDeserializer::new(rest))
}

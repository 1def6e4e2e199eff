//! Lenient number readers: JavaScript writes every number as a double, so `1700000000000.0` or `3e3`
//! are valid spellings of integer fields and must load.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Reads an optional JSON number as `i64`, accepting floats with an integral value.
pub(crate) fn optional_i64<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(value.as_ref().and_then(value_as_i64))
}

/// Reads a JSON number as `u64` (tokens), accepting floats; anything else counts as 0.
/// `null` read as the type's default (Pi writes `content: null` for an empty reply).
pub(crate) fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

pub(crate) fn u64_or_zero<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(value.as_ref().and_then(value_as_u64).unwrap_or(0))
}

/// Reads a string; null (or anything else) counts as empty.
pub(crate) fn string_or_empty<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(match value {
        Some(Value::String(text)) => text,
        Some(_) | None => String::new(),
    })
}

/// Reads a JSON number as `f64`; anything else counts as 0.
pub(crate) fn f64_or_zero<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(value.as_ref().and_then(Value::as_f64).unwrap_or(0.0))
}

/// The integral value of a JSON number, a fraction cut off (a client's `time.time() * 1000` is
/// a timestamp with its sub-millisecond part, which JavaScript's `Date` drops too), if it fits
/// where a double still counts every integer.
pub fn value_as_i64(value: &Value) -> Option<i64> {
    if let Some(integer) = value.as_i64() {
        return Some(integer);
    }
    let float = value.as_f64()?;
    (float.is_finite() && float.abs() < 9.0e15).then_some(float.trunc() as i64)
}

/// The non-negative integral value of a JSON number, if it has one that fits: up to `u64::MAX`,
/// which a saturated sum of counts is written as and must read back as.
pub fn value_as_u64(value: &Value) -> Option<u64> {
    if let Some(integer) = value.as_u64() {
        return Some(integer);
    }
    value_as_i64(value).and_then(|integer| u64::try_from(integer).ok())
}

/// Writes a double as JavaScript's `JSON.stringify` does: integral values without a fraction.
pub(crate) fn js_number<S: serde::Serializer>(
    value: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

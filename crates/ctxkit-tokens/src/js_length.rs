//! The length of `JSON.stringify(arguments)` in UTF-16 units, computed without writing the text.
//!
//! The reference's token estimate counts a tool call as its name plus its stringified arguments
//! (`ctxkit_protocol::js_stringify`). Writing that text for every assistant message on every model
//! call dominated the transform's time, yet only its length is needed: key order does not change it,
//! strings are quoted with JSON's escapes, and integers up to 2^53 print as their digits. Other
//! numbers go through `js_number` itself. The unit tests check equality with `js_stringify`.

use ctxkit_protocol::js_number;
use serde_json::{Number, Value};

/// `js_stringify(value).encode_utf16().count()`.
pub fn stringified_len(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => number_len(number),
        Value::String(text) => quoted_len(text),
        Value::Array(items) => {
            2 + items.len().saturating_sub(1) + items.iter().map(stringified_len).sum::<usize>()
        }
        Value::Object(object) => {
            2 + object.len().saturating_sub(1)
                + object
                    .iter()
                    .map(|(key, item)| quoted_len(key) + 1 + stringified_len(item))
                    .sum::<usize>()
        }
    }
}

/// Integers up to this magnitude are exact doubles and print as their decimal digits.
const EXACT_INTEGER: u64 = 1 << 53;

fn number_len(number: &Number) -> usize {
    if let Some(value) = number.as_u64()
        && value <= EXACT_INTEGER
    {
        return decimal_digits(value);
    }
    if let Some(value) = number.as_i64()
        && value.unsigned_abs() <= EXACT_INTEGER
    {
        return usize::from(value < 0) + decimal_digits(value.unsigned_abs());
    }
    // `js_number` writes ASCII only: bytes are UTF-16 units.
    js_number(number.as_f64().unwrap_or(f64::NAN)).len()
}

fn decimal_digits(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |log| log as usize + 1)
}

/// Length of `text` as a JSON string literal (serde_json's escapes, which `js_stringify` uses): two
/// quotes; `"` `\` and the short-escaped controls (`\b \t \n \f \r`) take 2 units, other controls
/// below U+0020 take 6 (`\u00XX`); every other character its UTF-16 length (4-byte UTF-8 sequences
/// are surrogate pairs, continuation bytes add nothing).
fn quoted_len(text: &str) -> usize {
    let mut units = 2;
    for &byte in text.as_bytes() {
        units += match byte {
            b'"' | b'\\' | 0x08 | b'\t' | b'\n' | 0x0C | b'\r' => 2,
            0x00..=0x1F => 6,
            0x80..=0xBF => 0,
            0xF0..=0xFF => 2,
            _ => 1,
        };
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_protocol::js_stringify;
    use serde_json::json;

    fn reference(value: &Value) -> usize {
        js_stringify(value).encode_utf16().count()
    }

    #[test]
    fn matches_js_stringify() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(-0.0),
            json!(7),
            json!(-7),
            json!(10),
            json!(99),
            json!(100),
            json!(9_007_199_254_740_992_u64),
            json!(9_007_199_254_740_993_u64),
            json!(-9_007_199_254_740_992_i64),
            json!(-9_007_199_254_740_993_i64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(9_999_999_999_999_999_999_u64),
            json!(0.1),
            json!(1e21),
            json!(1e-7),
            json!(-1.5e300),
            json!(123_456.789),
            json!(""),
            json!("plain"),
            json!("quote \" backslash \\ slash /"),
            json!("\u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f} \u{7f}"),
            json!("ünïcödé ß € 😀 👩‍💻 \u{2028}\u{2029} 中文"),
            json!([]),
            json!([1]),
            json!([1, "two", [3, {}], null]),
            json!({}),
            json!({"10": 1, "2": 2, "b": {"1": null, "y": [1, 1000, 0]}, "01": "x", "é\"": "\n"}),
            json!({"path": "src/main.rs", "offset": 1, "limit": 400}),
        ];
        for value in &values {
            assert_eq!(stringified_len(value), reference(value), "{value}");
        }
    }

    #[test]
    fn digits_of_integers() {
        for (value, digits) in [(0, 1), (9, 1), (10, 2), (999, 3), (1000, 4), (u64::MAX, 20)] {
            assert_eq!(decimal_digits(value), digits, "{value}");
        }
    }
}

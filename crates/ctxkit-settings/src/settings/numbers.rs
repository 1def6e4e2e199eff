//! Numbers kept as written. A settings file may hold numbers a JSON value cannot carry exactly
//! (`123456789012345678901234567890`, a float with more digits than an `f64` holds); a
//! read-modify-write would print them changed (`1.2345678901234568e+29`). Such a literal is read as
//! a marked string and written back as the literal it was. Numbers that fit are untouched.

/// The mark of a kept literal inside the string that stands for it.
const MARK: &str = "\u{1}ctxkit:number:";
/// The mark as `serde_json` prints it inside a string.
const PRINTED_MARK: &str = "\"\\u0001ctxkit:number:";

/// The text with every number that would not survive a round trip turned into a marked string.
pub(crate) fn protect(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut in_string = false;
    let mut escaped = false;
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                (false, _) => {}
            }
            index += 1;
            continue;
        }
        if byte == b'"' {
            in_string = true;
            index += 1;
            continue;
        }
        if byte == b'-' || byte.is_ascii_digit() {
            let end = bytes[index..]
                .iter()
                .position(|byte| !matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                .map_or(bytes.len(), |length| index + length);
            let literal = &text[index..end];
            if is_lossy(literal) {
                out.push_str(&text[copied..index]);
                out.push('"');
                out.push_str(&MARK.replace('\u{1}', "\\u0001"));
                out.push_str(literal);
                out.push('"');
                copied = end;
            }
            index = end;
            continue;
        }
        index += 1;
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Serialized settings with every marked string printed as the number it was.
pub(crate) fn restore(text: String) -> String {
    if !text.contains(PRINTED_MARK) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(start) = rest.find(PRINTED_MARK) {
        out.push_str(&rest[..start]);
        let literal_start = start + PRINTED_MARK.len();
        match rest[literal_start..].find('"') {
            Some(length) => {
                out.push_str(&rest[literal_start..literal_start + length]);
                rest = &rest[literal_start + length + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The number a marked string stands for, as written.
fn kept_literal(value: &str) -> Option<&str> {
    value.strip_prefix(MARK)
}

/// A value to show or read: a kept literal as the nearest number JSON can carry, anything else
/// as it is.
pub(crate) fn as_number(value: &serde_json::Value) -> serde_json::Value {
    value
        .as_str()
        .and_then(kept_literal)
        .and_then(|literal| serde_json::from_str(literal).ok())
        .unwrap_or_else(|| value.clone())
}

/// The largest integer a double holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// The whole number `value` is, written as an integer or not: `16384.0` and `1e4` are integers
/// in JSON (JSON Schema's `"integer"`) and to Pi (`Number.isSafeInteger`), a file Python wrote
/// holds them, and Pi runs with them. `16384.5`, and a double beyond 2^53, are not.
pub(crate) fn whole_number(value: &serde_json::Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(integer) = number.as_i64() {
        return Some(integer);
    }
    if number.is_u64() {
        return None;
    }
    let double = number.as_f64()?;
    let exact = double.fract() == 0.0 && double.abs() <= MAX_SAFE_INTEGER;
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a safe integer, checked above"
    )]
    exact.then_some(double as i64)
}

/// `value` with every whole number written as a float (`16384.0`, `1e4`) written as the integer
/// it is, at any depth: the typed tree's integer fields read it (serde takes no `16384.0` into a
/// `u64`), and a float field reads an integer all the same.
pub(crate) fn with_whole_numbers(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(ref number) if number.is_f64() => {
            whole_number(&value).map_or(value, Value::from)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(with_whole_numbers).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, field)| (key, with_whole_numbers(field)))
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => value,
    }
}

/// An integer outside 64 bits, or a number with more significant digits than an `f64` keeps.
fn is_lossy(literal: &str) -> bool {
    let is_integer = !literal.contains(['.', 'e', 'E']);
    if is_integer {
        return literal.parse::<i64>().is_err() && literal.parse::<u64>().is_err();
    }
    let mantissa = literal
        .trim_start_matches('-')
        .split(['e', 'E'])
        .next()
        .unwrap_or_default();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    significant.len() > 17
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_that_do_not_fit_are_kept_as_written() {
        let text = r#"{"big": 123456789012345678901234567890, "neg": -99999999999999999999,
            "fine": 12, "float": 1.5, "long": 0.12345678901234567890123, "s": "1234567890123456789012345",
            "escaped": "a\"123456789012345678901234567890"}"#;
        let protected = protect(text);
        let value: serde_json::Value = serde_json::from_str(&protected).unwrap();
        assert_eq!(
            kept_literal(value["big"].as_str().unwrap()),
            Some("123456789012345678901234567890")
        );
        assert!(as_number(&value["big"]).is_number());
        assert_eq!(value["fine"], 12);
        assert_eq!(value["float"], 1.5);
        assert_eq!(value["s"], "1234567890123456789012345");
        let printed = restore(serde_json::to_string(&value).unwrap());
        for literal in [
            "123456789012345678901234567890",
            "-99999999999999999999",
            "0.12345678901234567890123",
        ] {
            assert!(printed.contains(&format!(":{literal}")), "{printed}");
        }
        assert!(printed.contains(r#""s":"1234567890123456789012345""#));
        let again: serde_json::Value = serde_json::from_str(&printed).unwrap();
        assert!(again["big"].is_number());
    }

    #[test]
    fn whole_numbers_written_as_floats_are_integers() {
        let number = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        assert_eq!(whole_number(&number("16384.0")), Some(16_384));
        assert_eq!(whole_number(&number("1e4")), Some(10_000));
        assert_eq!(whole_number(&number("-3.0")), Some(-3));
        assert_eq!(whole_number(&number("16384.5")), None);
        assert_eq!(whole_number(&number("1e300")), None);
        assert_eq!(whole_number(&number("18446744073709551615")), None);
        assert_eq!(whole_number(&number("\"3\"")), None);
        assert_eq!(
            with_whole_numbers(number(r#"{"a": [2.0, 2.5], "b": {"c": 1e3}}"#)),
            serde_json::json!({"a": [2, 2.5], "b": {"c": 1000}})
        );
    }
}

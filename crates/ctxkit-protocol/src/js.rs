//! JavaScript's view of JSON values, where the reference's results depend on it: `JSON.stringify`
//! output (integer-like keys first, numbers as doubles in JavaScript's spelling) and the key order of
//! `Object.entries`.

use serde_json::Value;

/// Whether `key` is an array index, which JavaScript objects order first, ascending.
fn is_array_index(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 10
        && key.bytes().all(|byte| byte.is_ascii_digit())
        && (key == "0" || !key.starts_with('0'))
        && key
            .parse::<u64>()
            .is_ok_and(|index| index < u64::from(u32::MAX))
}

/// The entries of an object in JavaScript's property order: array-index keys ascending, then the rest
/// in insertion order.
pub fn js_object_entries(object: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut indexed: Vec<(u64, (&String, &Value))> = object
        .iter()
        .filter(|(key, _)| is_array_index(key))
        .map(|entry| (entry.0.parse::<u64>().unwrap_or(0), entry))
        .collect();
    indexed.sort_by_key(|(index, _)| *index);
    indexed
        .into_iter()
        .map(|(_, entry)| entry)
        .chain(object.iter().filter(|(key, _)| !is_array_index(key)))
        .collect()
}

/// A double as JavaScript's `Number.prototype.toString` writes it (shortest round-trip digits).
pub fn js_number(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_owned();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let sign = if value < 0.0 { "-" } else { "" };
    // `{:e}` gives the shortest round-trip digits: `d[.ddd]e<exp>`.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i64 = exponent.parse().unwrap_or(0);
    let count = digits.len() as i64;
    let point = exponent + 1; // value = 0.digits × 10^point
    let body = if count <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - count) as usize))
    } else if 0 < point && point <= 21 {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let rest = if count > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let exponent_sign = if point > 0 { "+" } else { "-" };
        format!(
            "{}{rest}e{exponent_sign}{}",
            &digits[..1],
            (point - 1).abs()
        )
    };
    format!("{sign}{body}")
}

/// `JSON.stringify(value)` (compact).
pub fn js_stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(flag) => out.push_str(if *flag { "true" } else { "false" }),
        Value::Number(number) => out.push_str(&js_number(number.as_f64().unwrap_or(f64::NAN))),
        Value::String(text) => out.push_str(&Value::String(text.clone()).to_string()),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (index, (key, item)) in js_object_entries(object).into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_value(item, out);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_spelled_like_javascript() {
        let cases = [
            (1.0, "1"),
            (1000.0, "1000"),
            (-0.0, "0"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1e21, "1e+21"),
            (123456789012345678901234.0, "1.2345678901234569e+23"),
            (12345678901234567890.0, "12345678901234567000"),
            (-2.5e-8, "-2.5e-8"),
            (100.0, "100"),
        ];
        for (value, expected) in cases {
            assert_eq!(js_number(value), expected, "{value}");
        }
    }

    #[test]
    fn stringify_orders_index_keys_first() {
        let value: Value = serde_json::from_str(
            r#"{"path":"a\/b","z":1,"10":"ten","2":"two","01":"x","b":{"y":[1.0,1E3,-0.0,12345678901234567890],"1":null},"t":"tab\t\u2028"}"#,
        )
        .unwrap();
        assert_eq!(
            js_stringify(&value),
            "{\"2\":\"two\",\"10\":\"ten\",\"path\":\"a/b\",\"z\":1,\"01\":\"x\",\"b\":{\"1\":null,\"y\":[1,1000,0,12345678901234567000]},\"t\":\"tab\\t\u{2028}\"}"
        );
    }
}

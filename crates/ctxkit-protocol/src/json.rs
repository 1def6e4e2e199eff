//! JSON text from JavaScript writers may hold lone UTF-16 surrogate escapes (`"\ud83d"`), which
//! JavaScript accepts and Rust strings cannot hold. These helpers read such text with each lone
//! surrogate replaced by U+FFFD; everything else is read exactly.

use std::borrow::Cow;

/// `text` with every lone surrogate escape replaced by `\ufffd`; borrowed when there is none.
pub fn repair_lone_surrogates(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !text.contains("\\u") {
        return Cow::Borrowed(text);
    }
    let mut output: Option<String> = None;
    let mut copied_up_to = 0;
    let mut position = 0;
    while position < bytes.len() {
        if bytes[position] != b'\\' {
            position += 1;
            continue;
        }
        if bytes.get(position + 1) != Some(&b'u') {
            position += 2;
            continue;
        }
        let Some(unit) = hex_unit(bytes, position + 2) else {
            position += 2;
            continue;
        };
        let is_high = (0xD800..=0xDBFF).contains(&unit);
        let is_low = (0xDC00..=0xDFFF).contains(&unit);
        if is_high {
            let paired = bytes.get(position + 6) == Some(&b'\\')
                && bytes.get(position + 7) == Some(&b'u')
                && hex_unit(bytes, position + 8)
                    .is_some_and(|next| (0xDC00..=0xDFFF).contains(&next));
            if paired {
                position += 12;
                continue;
            }
        }
        if is_high || is_low {
            let buffer = output.get_or_insert_with(|| String::with_capacity(text.len()));
            buffer.push_str(&text[copied_up_to..position]);
            buffer.push_str("\\ufffd");
            copied_up_to = position + 6;
        }
        position += 6;
    }
    match output {
        Some(mut buffer) => {
            buffer.push_str(&text[copied_up_to..]);
            Cow::Owned(buffer)
        }
        None => Cow::Borrowed(text),
    }
}

fn hex_unit(bytes: &[u8], start: usize) -> Option<u32> {
    let digits = bytes.get(start..start + 4)?;
    let text = std::str::from_utf8(digits).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// `serde_json::from_str`, read as `JSON.parse` would when the first read fails: lone surrogates
/// repaired, and through a `Value`, in which a repeated key keeps its last value (typed structs
/// refuse repeated fields). The first error is the one reported when every read fails.
pub fn from_str_repaired<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, serde_json::Error> {
    let error = match serde_json::from_str(text) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    let repaired = repair_lone_surrogates(text);
    if let Cow::Owned(repaired) = &repaired
        && let Ok(value) = serde_json::from_str(repaired)
    {
        return Ok(value);
    }
    serde_json::from_str::<serde_json::Value>(&repaired)
        .and_then(serde_json::from_value)
        .map_err(|_| error)
}

/// Why a line nested deeper than the readers go is refused.
pub const TOO_DEEP: &str = "objects and arrays nest deeper than 127 levels";

/// A parser's error on one line, placed by its column: the parser counts the line as line 1,
/// which read beside the file's own line number as another line ("line 6: … at line 1 column
/// 133").
pub fn json_line_error(error: &serde_json::Error) -> String {
    // serde_json's bound on nesting, which keeps a hostile line from exhausting the stack, said
    // as the session reader says it (QA 2026-12-07: "recursion limit exceeded").
    let message = error
        .to_string()
        .replacen("recursion limit exceeded", TOO_DEEP, 1);
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&suffix) {
        Some(what) if error.line() == 1 => format!("{what} at column {}", error.column()),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_keep_their_last_value() {
        #[derive(Debug, serde::Deserialize, PartialEq)]
        struct Pair {
            a: u8,
            b: u8,
        }
        let pair: Pair = from_str_repaired(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(pair, Pair { a: 3, b: 2 });
        let error = from_str_repaired::<Pair>(r#"{"a":1}"#).unwrap_err();
        assert!(error.to_string().contains("missing field `b`"), "{error}");
    }

    #[test]
    fn repairs_only_lone_surrogates() {
        assert_eq!(repair_lone_surrogates(r#""a\ud83d""#), r#""a\ufffd""#);
        assert_eq!(repair_lone_surrogates(r#""\ude00x""#), r#""\ufffdx""#);
        assert_eq!(
            repair_lone_surrogates(r#""\ud83d\ude00""#),
            r#""\ud83d\ude00""#
        );
        assert_eq!(repair_lone_surrogates(r#""\\ud83d""#), r#""\\ud83d""#);
        assert!(matches!(
            repair_lone_surrogates(r#""\u0041""#),
            Cow::Borrowed(_)
        ));
        let value: serde_json::Value = from_str_repaired(r#"{"t":"x\ud83d"}"#).unwrap();
        assert_eq!(value["t"], "x\u{fffd}");
        assert!(serde_json::from_str::<serde_json::Value>(r#"{"t":"x\ud83d"}"#).is_err());
        assert!(serde_json::from_str::<serde::de::IgnoredAny>(r#"{"t":"x\ud83d"}"#).is_ok());
    }
}

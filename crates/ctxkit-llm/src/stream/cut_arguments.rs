//! The arguments of a tool call whose stream was cut before they were complete, stored as the
//! session format wants them: an object. What arrived is read as far as it goes (`{"command":
//! "echo ` → `{"command": "echo "}`, as Pi 1.6.0 stores Anthropic's cut calls from its partial
//! parse); text that yields no object is stored as `{}` with an `argumentsError` naming it, Pi's
//! form for arguments it cannot read. The call is never run: its reply is an error reply.

use serde_json::{Map, Value};

/// The deepest nesting closed: deeper text is reported rather than completed.
const DEEPEST: usize = 64;

/// The arguments object for `text`, cut short, and the error to store beside it when none could
/// be read from it.
pub(crate) fn cut_arguments(text: &str) -> (Value, Option<String>) {
    if text.trim().is_empty() {
        return (Value::Object(Map::new()), None);
    }
    if let Some(object) = completed(text) {
        return (object, None);
    }
    let reason = match serde_json::from_str::<Value>(text) {
        Ok(_) => "Tool arguments must be a JSON object".to_owned(),
        Err(error) => error.to_string(),
    };
    (
        Value::Object(Map::new()),
        Some(format!("{reason}\n\nReceived arguments:\n{text}")),
    )
}

/// `text` completed into an object: whole as it is, else with its open string and brackets
/// closed, else cut back to its last complete member and closed.
fn completed(text: &str) -> Option<Value> {
    let object = |candidate: &str| {
        serde_json::from_str::<Value>(candidate)
            .ok()
            .filter(Value::is_object)
    };
    if let Some(whole) = object(text) {
        return Some(whole);
    }
    let scan = Scan::of(text)?;
    let mut closed = text.to_owned();
    if scan.in_string {
        if scan.escaped {
            closed.pop();
        }
        closed.push('"');
    }
    closed.extend(scan.open.iter().rev());
    if let Some(value) = object(&closed) {
        return Some(value);
    }
    let (end, open) = scan.boundary?;
    let mut shorter = text.get(..end)?.to_owned();
    shorter.extend(open.iter().rev());
    object(&shorter)
}

/// What is open at the end of a JSON text.
struct Scan {
    in_string: bool,
    /// The text ends inside a string, just after a backslash.
    escaped: bool,
    /// The closers of the brackets open at the end, outermost first.
    open: Vec<char>,
    /// The last place the text may be cut to end on a complete member (before a `,`, after a
    /// `{` or `[`), and the closers open there.
    boundary: Option<(usize, Vec<char>)>,
}

impl Scan {
    fn of(text: &str) -> Option<Self> {
        let mut scan = Self {
            in_string: false,
            escaped: false,
            open: Vec::new(),
            boundary: None,
        };
        for (index, character) in text.char_indices() {
            if scan.in_string {
                match character {
                    _ if scan.escaped => scan.escaped = false,
                    '\\' => scan.escaped = true,
                    '"' => scan.in_string = false,
                    _ => {}
                }
                continue;
            }
            match character {
                '"' => scan.in_string = true,
                '{' | '[' => {
                    scan.open.push(if character == '{' { '}' } else { ']' });
                    if scan.open.len() > DEEPEST {
                        return None;
                    }
                    scan.boundary = Some((index + 1, scan.open.clone()));
                }
                '}' | ']' => {
                    scan.open.pop();
                }
                ',' => scan.boundary = Some((index, scan.open.clone())),
                _ => {}
            }
        }
        Some(scan)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cut_arguments_are_read_as_far_as_they_go() {
        let cases = [
            ("", json!({})),
            ("{\"command\": \"echo ", json!({"command": "echo "})),
            ("{\"command\": \"echo \\", json!({"command": "echo "})),
            ("{\"command\": ", json!({})),
            ("{\"a\": 1, \"b", json!({"a": 1})),
            ("{\"a\": [1, {\"b\": tr", json!({"a": [1, {}]})),
            (
                "{\"a\": {\"b\": \"x\"}, \"c\": 2}",
                json!({"a": {"b": "x"}, "c": 2}),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(cut_arguments(text), (expected, None), "{text}");
        }
    }

    #[test]
    fn text_that_yields_no_object_is_an_empty_object_with_the_reason() {
        for text in ["\"just a string", "[1, 2", "not json"] {
            let (arguments, error) = cut_arguments(text);
            assert_eq!(arguments, json!({}), "{text}");
            let error = error.unwrap_or_default();
            assert!(
                error.ends_with(&format!("\n\nReceived arguments:\n{text}")),
                "{error}"
            );
        }
    }
}

//! A method's parameters, decoded strictly: by name only (an object), every field known (the
//! structs deny unknown fields), and each error naming the field it is about
//! (`model.context_window`, through `serde_path_to_error`) in the protocol's words, never a Rust
//! type's name.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{MethodError, codes};

/// The methods that take no parameters: `params` left out, `null`, `{}` or `[]`.
/// (`initialize` takes any object and reads none of it, so a client may say who it is.)
const WITHOUT_PARAMS: &[&str] = &[
    "session.info",
    "view.get",
    "context.usage",
    "check.before_prompt",
    "check.after_run",
    "compact.cancel",
    "tree.get",
    "branch_summary.cancel",
    "clone",
    "pin.list",
    "compaction.list",
    "compaction.undo",
    "agent.cancel",
    "shutdown",
];

fn invalid(message: String) -> MethodError {
    MethodError::new(codes::INVALID_PARAMS, format!("invalid params: {message}"))
}

/// Refuses parameters given to a method that takes none (any other method: `Ok`).
pub(crate) fn none(method: &str, params: &Value) -> Result<(), MethodError> {
    if method == "initialize" {
        return any_object(method, params);
    }
    if !WITHOUT_PARAMS.contains(&method) {
        return Ok(());
    }
    match params {
        Value::Object(fields) => match fields.keys().next() {
            None => Ok(()),
            Some(field) => Err(invalid(format!(
                "unknown field `{field}`: `{method}` takes no parameters"
            ))),
        },
        Value::Array(items) if items.is_empty() => Ok(()),
        Value::Null => Ok(()),
        Value::Array(_) | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            Err(invalid(format!("`{method}` takes no parameters")))
        }
    }
}

/// `initialize`'s parameters: any object, read by no one (or none at all); positional ones
/// (a non-empty array) and other values are refused as for every other method.
fn any_object(method: &str, params: &Value) -> Result<(), MethodError> {
    match params {
        Value::Object(_) | Value::Null => Ok(()),
        Value::Array(items) if items.is_empty() => Ok(()),
        Value::Array(_) | Value::Bool(_) | Value::Number(_) | Value::String(_) => Err(invalid(
            format!("`{method}` takes an object (by name), if any parameters"),
        )),
    }
}

/// `params` as `T`: an object (`null`, `[]` or left out: the empty object).
pub(crate) fn decode<T: DeserializeOwned>(params: Value) -> Result<T, MethodError> {
    let params = match params {
        Value::Null => Value::Object(Map::new()),
        Value::Array(items) if items.is_empty() => Value::Object(Map::new()),
        Value::Object(fields) => Value::Object(fields),
        Value::Array(_) | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            return Err(invalid(
                "parameters are passed by name: `params` must be an object".to_owned(),
            ));
        }
    };
    serde_path_to_error::deserialize(params).map_err(|error| {
        let reason = plain(&error.inner().to_string());
        let path = error.path().to_string();
        // A field that is missing or unknown is named by the reason itself.
        if path == "." || reason.contains(&format!("`{path}`")) {
            invalid(reason)
        } else {
            invalid(format!("`{path}`: {reason}"))
        }
    })
}

/// `reason` with what serde expected in the protocol's words: "a non-negative integer", not
/// `u64`; "an object", not the name of the struct it was read into.
fn plain(reason: &str) -> String {
    let Some((head, expected)) = reason.rsplit_once("expected ") else {
        return reason.to_owned();
    };
    let words = match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "path string" => "a path (a string)",
        other if other.starts_with("struct ") => "an object",
        other if other.starts_with("enum ") => "one of the values `docs/protocol.md` lists",
        other => other,
    };
    format!("{head}expected {words}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        #[expect(dead_code, reason = "read by the decoder only")]
        window: u64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        #[expect(dead_code, reason = "read by the decoder only")]
        name: String,
        #[serde(default)]
        #[expect(dead_code, reason = "read by the decoder only")]
        inner: Option<Inner>,
    }

    fn message(params: Value) -> String {
        decode::<Outer>(params).unwrap_err().message
    }

    #[test]
    fn an_error_names_its_field_and_no_rust_type() {
        assert_eq!(
            message(json!({"name": 5})),
            "invalid params: `name`: invalid type: integer `5`, expected a string"
        );
        assert_eq!(
            message(json!({"name": "a", "inner": {"window": -1}})),
            "invalid params: `inner.window`: invalid value: integer `-1`, expected a non-negative integer"
        );
        assert_eq!(
            message(json!({"name": "a", "inner": "x"})),
            "invalid params: `inner`: invalid type: string \"x\", expected an object"
        );
        assert_eq!(message(json!({})), "invalid params: missing field `name`");
        let unknown = message(json!({"name": "a", "nmae": "b"}));
        assert!(
            unknown.starts_with("invalid params: unknown field `nmae`"),
            "{unknown}"
        );
        assert!(!unknown.contains("Outer"), "{unknown}");
    }

    #[test]
    fn params_are_by_name() {
        assert!(decode::<Outer>(json!({"name": "a"})).is_ok());
        let positional = decode::<Outer>(json!(["a"])).unwrap_err();
        assert_eq!(positional.code, codes::INVALID_PARAMS);
        assert!(
            positional.message.contains("must be an object"),
            "{}",
            positional.message
        );
    }

    #[test]
    fn a_method_without_params_refuses_any() {
        for empty in [Value::Null, json!({}), json!([])] {
            assert!(none("view.get", &empty).is_ok());
        }
        let refused = none("view.get", &json!({"x": 1})).unwrap_err();
        assert_eq!(refused.code, codes::INVALID_PARAMS);
        assert!(
            refused.message.contains("unknown field `x`"),
            "{}",
            refused.message
        );
        assert!(none("view.get", &json!([1])).is_err());
        assert!(none("initialize", &json!({"client": "me"})).is_ok());
    }

    /// QA r108: `initialize` took `[1]`, which the protocol refuses as positional parameters.
    #[test]
    fn initialize_takes_any_object_and_refuses_positional_params() {
        for taken in [Value::Null, json!({}), json!([]), json!({"client": "me"})] {
            assert!(none("initialize", &taken).is_ok(), "{taken}");
        }
        for refused in [json!([1]), json!("me"), json!(1), json!(true)] {
            let error = none("initialize", &refused).unwrap_err();
            assert_eq!(error.code, codes::INVALID_PARAMS, "{refused}");
        }
    }
}

//! How a Responses message item's id and `phase` are kept on its text block (`textSignature`),
//! as Pi 1.6.0 keeps them: `{"v":1,"id":"msg_…","phase":"commentary"}` (GPT-5 models mark their
//! messages `commentary` or `final_answer`, and OpenAI asks that the phase come back with the
//! item). A plain id, what ctxkit and older Pi versions stored, still reads as the id.

use serde_json::Value;

/// The phases a message item may carry back.
const PHASES: [&str; 2] = ["commentary", "final_answer"];

/// A message item's id and phase, read from a `textSignature`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextSignature {
    pub id: String,
    pub phase: Option<String>,
}

/// The `textSignature` of a message item: its id and phase, in Pi's key order (`v`, `id`,
/// `phase`), without spaces.
pub(crate) fn encode(id: &str, phase: Option<&str>) -> String {
    let id = Value::from(id);
    match phase {
        Some(phase) => format!(r#"{{"v":1,"id":{id},"phase":{}}}"#, Value::from(phase)),
        None => format!(r#"{{"v":1,"id":{id}}}"#),
    }
}

/// Reads a `textSignature`: the versioned object, else the whole text as a plain id.
pub(crate) fn decode(signature: &str) -> TextSignature {
    let versioned = signature
        .starts_with('{')
        .then(|| serde_json::from_str::<Value>(signature).ok())
        .flatten()
        .filter(|value| value.get("v").and_then(Value::as_u64) == Some(1));
    let id = versioned
        .as_ref()
        .and_then(|value| value.get("id").and_then(Value::as_str));
    match (versioned.as_ref(), id) {
        (Some(value), Some(id)) => TextSignature {
            id: id.to_owned(),
            phase: value
                .get("phase")
                .and_then(Value::as_str)
                .filter(|phase| PHASES.contains(phase))
                .map(str::to_owned),
        },
        (Some(_) | None, _) => TextSignature {
            id: signature.to_owned(),
            phase: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_written_as_pi_writes_them_and_plain_ids_still_read() {
        assert_eq!(
            encode("msg_MOCK", Some("commentary")),
            r#"{"v":1,"id":"msg_MOCK","phase":"commentary"}"#
        );
        assert_eq!(encode("msg_\"q", None), r#"{"v":1,"id":"msg_\"q"}"#);
        let cases = [
            (
                r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#,
                "msg_1",
                Some("final_answer"),
            ),
            (r#"{"v":1,"id":"msg_1","phase":"other"}"#, "msg_1", None),
            (r#"{"v":1,"id":"msg_1"}"#, "msg_1", None),
            ("msg_plain", "msg_plain", None),
            (r#"{"v":2,"id":"msg_1"}"#, r#"{"v":2,"id":"msg_1"}"#, None),
        ];
        for (signature, id, phase) in cases {
            let read = decode(signature);
            assert_eq!(read.id, id, "{signature}");
            assert_eq!(read.phase.as_deref(), phase, "{signature}");
        }
    }
}

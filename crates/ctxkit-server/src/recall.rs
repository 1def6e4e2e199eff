//! `recall`: what the built-in `recall` tool answers, for a client that runs its own loop. The
//! view it sends its model tells the model to call `recall` (a summary names
//! `ctxkit://summarized`, a pruned result `ctxkit://tool-result/<id>`), so such a client offers its
//! model a `recall` tool of the same schema and answers each call with this method. The answer is
//! bounded as the built-in tool's output is (its first lines, within `max_bytes`), so a recall of
//! everything summarized never sends the model a whole session.

use std::sync::Arc;

use ctxkit_agent::tools::limit;
use ctxkit_agent::tools::recalled::bound_recalled;
use ctxkit_engine::Recalled;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::methods::{engine, params};
use crate::{MethodError, Shared, codes};

/// The least `max_bytes` a client may ask for: below it a single message's head says nothing.
const MIN_BYTES: usize = 1024;

/// The tool's arguments, as the model writes them, and the client's bound.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecallParams {
    reference: String,
    #[serde(default)]
    query: Option<String>,
    /// The most bytes of text to answer with (the built-in tool's limit when absent).
    #[serde(default)]
    max_bytes: Option<usize>,
}

/// `recall {reference, query?, max_bytes?}` → `{text, is_error, truncated}`: the tool result to
/// send back, an error result (`is_error`) when nothing was found, worded as the tool words it.
pub(crate) async fn recall(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let params: RecallParams = params(raw)?;
    let max_bytes = checked_max_bytes(params.max_bytes)?;
    let engine = engine(shared).await?;
    Ok(
        match engine
            .recall(&params.reference, params.query.as_deref())
            .await
        {
            Recalled::Found(text) => bounded_answer(&text, max_bytes),
            Recalled::Missing(message) => {
                json!({"text": message, "is_error": true, "truncated": false})
            }
        },
    )
}

/// The bound asked for, the built-in tool's when absent; one below [`MIN_BYTES`] is refused, as
/// docs/protocol.md says (it was raised to the minimum without a word).
fn checked_max_bytes(asked: Option<usize>) -> Result<usize, MethodError> {
    match asked {
        None => Ok(limit::MAX_BYTES),
        Some(bytes) if bytes >= MIN_BYTES => Ok(bytes),
        Some(bytes) => Err(MethodError::new(
            codes::INVALID_PARAMS,
            format!("invalid params: `max_bytes` is at least {MIN_BYTES}, not {bytes}"),
        )),
    }
}

/// `text` within the tool output's line limit and `max_bytes`, its first lines kept, with a last
/// line saying what was left out and how to ask for less; that line is within `max_bytes` too. A
/// tool result stored cut keeps its note naming the full output ([`bound_recalled`]).
fn bounded_answer(text: &str, max_bytes: usize) -> Value {
    let bounded = bound_recalled(text, max_bytes, |cut| {
        // Every line shown, the last one cut (a long line read back is cut, not left out).
        let lines = if cut.shown_lines == cut.total_lines {
            format!("all {} lines, the last one cut", cut.total_lines)
        } else {
            format!("the first {} of {} lines", cut.shown_lines, cut.total_lines)
        };
        format!(
            "\n\n[recall: showing {lines} ({} of {} bytes); give a `query` of fewer or rarer \
             words to read only the parts that hold them]",
            cut.shown_bytes, cut.total_bytes
        )
    });
    json!({"text": bounded.text, "is_error": false, "truncated": bounded.cut.is_some()})
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA r101 serve: `max_bytes: 10` was taken, raised to 1,024 without a word.
    #[test]
    fn a_bound_below_the_minimum_is_refused_naming_it() {
        let refused = checked_max_bytes(Some(10)).err().unwrap();
        assert_eq!(refused.code, codes::INVALID_PARAMS);
        assert_eq!(
            refused.message,
            "invalid params: `max_bytes` is at least 1024, not 10"
        );
        assert_eq!(checked_max_bytes(Some(1024)).ok(), Some(1024));
        assert_eq!(checked_max_bytes(None).ok(), Some(limit::MAX_BYTES));
    }

    #[test]
    fn a_long_answer_keeps_its_head_and_says_how_to_ask_for_less() {
        let text = (0..400)
            .map(|line| format!("line {line} of the span"))
            .collect::<Vec<_>>()
            .join("\n");
        let answer = bounded_answer(&text, 1024);
        let shown = answer["text"].as_str().unwrap();
        assert_eq!(answer["truncated"], true);
        assert!(shown.starts_with("line 0 of the span\n"), "{shown}");
        assert!(shown.len() <= 1024, "{}", shown.len());
        assert!(shown.contains("of 400 lines"), "{shown}");
        assert!(
            shown.ends_with("read only the parts that hold them]"),
            "{shown}"
        );

        let short = bounded_answer("one line", 1024);
        assert_eq!(
            short,
            json!({"text": "one line", "is_error": false, "truncated": false})
        );
    }
    /// QA r99: a summarized message of one 86 KB line answered its header alone.
    #[test]
    fn a_long_line_after_a_header_is_cut_not_left_out() {
        let text = format!("[entry 0fc3d957] user:\n{}", "x".repeat(86_000));
        let answer = bounded_answer(&text, 2_000);
        let shown = answer["text"].as_str().unwrap();
        assert_eq!(answer["truncated"], true);
        assert!(shown.starts_with("[entry 0fc3d957] user:\nxxxx"), "{shown}");
        assert!(
            shown.contains("showing all 2 lines, the last one cut ("),
            "{shown}"
        );
        assert!(shown.len() <= 2_000, "{}", shown.len());
    }

    /// QA r101 S2: `max_bytes: 2000` answered 2,149 bytes, its closing note past the bound. The
    /// whole answer, note included, is within it, whatever the bound.
    #[test]
    fn the_closing_note_is_within_max_bytes() {
        let text = (0..3000)
            .map(|line| format!("[entry {line:08x}] tool result:\nSECRET_1_{line} = value"))
            .collect::<Vec<_>>()
            .join("\n");
        for max_bytes in [MIN_BYTES, 2_000, 10_000, limit::MAX_BYTES] {
            let answer = bounded_answer(&text, max_bytes);
            let shown = answer["text"].as_str().unwrap();
            assert_eq!(answer["truncated"], true);
            assert!(shown.len() <= max_bytes, "{max_bytes}: {}", shown.len());
            assert!(shown.ends_with("the parts that hold them]"), "{shown}");
        }
    }
}

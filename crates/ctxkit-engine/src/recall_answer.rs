//! `recall`'s answer for a reference, in one place: the agent's `recall` tool and the server's
//! `recall` method (a client that runs its own loop offers its model the same tool) give the same
//! text for the same arguments, and the same words when nothing is found.

use ctxkit_transform::{TOOL_CALL_REFERENCE_PREFIX, TOOL_RESULT_REFERENCE_PREFIX};

use crate::engine::Engine;
use crate::recall::{Place, SUMMARIZED_REFERENCE};
use crate::summarized::{Originals, SummarizedRange};

/// What `recall` answers the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recalled {
    /// The text read back from the session (whole: the caller bounds it as its tools' output).
    Found(String),
    /// Why nothing was read back (an unknown id, no compaction, no match, a session that could
    /// not be read), worded for the model: it is sent as an error result.
    Missing(String),
}

impl Engine {
    /// `recall {reference, query?}`: `ctxkit://tool-result/<id>` (or the bare id) reads a tool
    /// result back, `ctxkit://tool-call/<id>` a call's arguments, and [`SUMMARIZED_REFERENCE`] the
    /// messages behind the summaries: all of them, `…/<id>` one, `…/<id>..<id>` a range (with
    /// `query`, only the parts holding its words).
    pub async fn recall(&self, reference: &str, query: Option<&str>) -> Recalled {
        let reference = reference.trim();
        let read_error = |error| Recalled::Missing(format!("Cannot read the session: {error}"));
        if let Some(tail) = reference.strip_prefix(SUMMARIZED_REFERENCE) {
            let range = SummarizedRange::parse(tail);
            return match self.fetch_originals(range, query).await {
                Err(error) => read_error(error),
                Ok(originals) => summarized_answer(originals, range, query),
            };
        }
        let (fetched, what, id) = match reference.strip_prefix(TOOL_CALL_REFERENCE_PREFIX) {
            Some(id) => {
                let id = id.trim_end_matches(']');
                (self.find_tool_call(id).await, "tool call", id)
            }
            None => {
                let id = reference
                    .strip_prefix(TOOL_RESULT_REFERENCE_PREFIX)
                    .unwrap_or(reference)
                    .trim_end_matches(']');
                (self.find_pruned(id).await, "tool result", id)
            }
        };
        match fetched {
            Err(error) => read_error(error),
            // Other branches stay unread (see `recall.rs`): say which ones were read.
            Ok(None) => Recalled::Missing(format!(
                "No {what} `{id}` on the current branch, nor on a branch its summaries left \
                 behind: recall reads no other branch"
            )),
            Ok(Some((text, Place::CurrentBranch))) => Recalled::Found(text),
            Ok(Some((text, Place::LeftBehind))) => Recalled::Found(format!(
                "(This {what} is on a branch left behind, which a branch summary on the current \
                 branch stands for.)\n\n{text}"
            )),
        }
    }
}

/// The answer for the messages behind the summaries. When parts show only the lines around the
/// query's words, the answer ends with how to read one whole.
fn summarized_answer(
    originals: Originals,
    range: SummarizedRange<'_>,
    query: Option<&str>,
) -> Recalled {
    let query = query.map(str::trim).filter(|query| !query.is_empty());
    match originals {
        Originals::NoSummary => {
            Recalled::Missing("Nothing on this branch was summarized".to_owned())
        }
        Originals::NotSummarized(id) => Recalled::Missing(format!(
            "`{id}` is not one of the summarized messages; recall `{SUMMARIZED_REFERENCE}` with a \
             `query` to find their entry ids"
        )),
        Originals::Found { text, .. } if text.is_empty() => {
            let scope = match range {
                SummarizedRange::All => "summarized message",
                SummarizedRange::Entry(_) | SummarizedRange::Between(..) => "message of that range",
            };
            Recalled::Missing(format!(
                "No {scope} holds any of `{}`; try other words, or no query for all of them",
                query.unwrap_or_default()
            ))
        }
        Originals::Found { text, cut: true } => Recalled::Found(format!(
            "{text}\n\n(Only the lines around the words are shown; recall \
             `{SUMMARIZED_REFERENCE}/<entry id>` for one message whole, or \
             `{SUMMARIZED_REFERENCE}/<first id>..<last id>` for a range.)"
        )),
        Originals::Found { text, cut: false } => Recalled::Found(text),
    }
}

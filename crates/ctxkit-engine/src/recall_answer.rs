//! `recall`'s answer for a reference, in one place: the agent's `recall` tool and the server's
//! `recall` method (a client that runs its own loop offers its model the same tool) give the same
//! text for the same arguments, and the same words when nothing is found.

use ctxkit_transform::{TOOL_CALL_REFERENCE_PREFIX, TOOL_RESULT_REFERENCE_PREFIX};

use crate::engine::Engine;
use crate::recall::SUMMARIZED_REFERENCE;

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
    /// messages behind the summaries (with `query`, only the parts holding its words).
    pub async fn recall(&self, reference: &str, query: Option<&str>) -> Recalled {
        let reference = reference.trim();
        let read_error = |error| Recalled::Missing(format!("Cannot read the session: {error}"));
        if reference.starts_with(SUMMARIZED_REFERENCE) {
            return match self.fetch_summarized(query).await {
                Err(error) => read_error(error),
                Ok(None) => Recalled::Missing("Nothing on this branch was summarized".to_owned()),
                Ok(Some(text)) if text.is_empty() => Recalled::Missing(format!(
                    "No summarized message holds any of `{}`; try other words, or no query for \
                     all of them",
                    query.unwrap_or_default()
                )),
                Ok(Some(text)) => Recalled::Found(text),
            };
        }
        let (fetched, what, id) = match reference.strip_prefix(TOOL_CALL_REFERENCE_PREFIX) {
            Some(id) => {
                let id = id.trim_end_matches(']');
                (self.fetch_tool_call(id).await, "tool call", id)
            }
            None => {
                let id = reference
                    .strip_prefix(TOOL_RESULT_REFERENCE_PREFIX)
                    .unwrap_or(reference)
                    .trim_end_matches(']');
                (self.fetch_pruned(id).await, "tool result", id)
            }
        };
        match fetched {
            Err(error) => read_error(error),
            Ok(None) => Recalled::Missing(format!("No {what} `{id}` in this session")),
            Ok(Some(text)) => Recalled::Found(text),
        }
    }
}

//! The bound on the messages one answer carries: `view.get` of a context longer than it is refused
//! before a message is read (naming its length, how to compact it and how to page), and
//! `transcript.get` reads the branch a page at a time. A view of a million messages as JSON is a
//! few gigabytes of the server's memory and no model takes it.

use ctxkit_engine::Engine;
use serde::Deserialize;
use serde_json::Value;

use crate::errors::engine_error;
use crate::methods::params;
use crate::{Answer, MethodError, codes};

/// The most messages one `view.get` or `transcript.get` answer carries (the `ctxkit view` page's
/// bound, `MAX_VIEW_CONTEXT_MESSAGES`, for the same reason).
pub const MAX_ANSWER_MESSAGES: usize = 100_000;

/// How many messages the context at the leaf holds, read without parsing one.
async fn context_length(engine: &Engine) -> usize {
    engine
        .with_session(|session| session.leaf_context().messages.len())
        .await
}

/// The error for an answer of `length` messages, over [`MAX_ANSWER_MESSAGES`].
fn too_long(what: &str, length: usize) -> MethodError {
    MethodError {
        code: codes::ENGINE_ERROR,
        message: format!(
            "The {what} holds {length} messages, over the {MAX_ANSWER_MESSAGES} one answer carries; \
             compact it first (`compact`, or `check.before_prompt` with a model set, which compacts \
             a context this long), or read the branch a page at a time with `transcript.get` \
             {{\"offset\": 0, \"limit\": {MAX_ANSWER_MESSAGES}}}"
        ),
        kind: Some("too_many_messages"),
    }
}

/// Refuses a view of more than [`MAX_ANSWER_MESSAGES`] messages before it is built.
pub(crate) async fn check_view_length(engine: &Engine) -> Result<(), MethodError> {
    match context_length(engine).await {
        length if length > MAX_ANSWER_MESSAGES => Err(too_long("view", length)),
        _ => Ok(()),
    }
}

/// `transcript.get`'s parameters: a page of the branch's messages (all of them when neither is
/// given, if they are at most [`MAX_ANSWER_MESSAGES`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageParams {
    #[serde(default)]
    offset: Option<usize>,
    #[serde(default)]
    limit: Option<usize>,
}

/// `transcript.get`'s answer, written as JSON text straight from the messages (no `Value` tree).
#[derive(serde::Serialize)]
struct PageAnswer {
    messages: Vec<ctxkit_protocol::AgentMessage>,
    offset: usize,
    total: usize,
}

/// `transcript.get`: `{messages, offset, total}`, the messages of the page only parsed.
pub(crate) async fn transcript(engine: &Engine, raw: Value) -> Result<Answer, MethodError> {
    let page: PageParams = params(raw)?;
    if page.limit.is_some_and(|limit| limit > MAX_ANSWER_MESSAGES) {
        return Err(MethodError::new(
            codes::INVALID_PARAMS,
            format!("invalid params: `limit` is at most {MAX_ANSWER_MESSAGES}"),
        ));
    }
    let paged = page.offset.is_some() || page.limit.is_some();
    let offset = page.offset.unwrap_or(0);
    let read = engine
        .with_session(|session| {
            let context = session.leaf_context();
            let total = context.messages.len();
            if !paged && total > MAX_ANSWER_MESSAGES {
                return Ok(Err(total));
            }
            let start = offset.min(total);
            let end = start
                .saturating_add(page.limit.unwrap_or(MAX_ANSWER_MESSAGES))
                .min(total);
            session
                .messages(&context.messages[start..end])
                .map(|messages| Ok((messages, total)))
        })
        .await
        .map_err(|error| engine_error(error.into()))?;
    let (messages, total) = read.map_err(|total| too_long("transcript", total))?;
    let answer = PageAnswer {
        messages,
        offset,
        total,
    };
    serde_json::value::to_raw_value(&answer)
        .map(Answer::Text)
        .map_err(|error| MethodError::new(codes::ENGINE_ERROR, error.to_string()))
}

//! `recall`: what the built-in `recall` tool answers, for a client that runs its own loop. The
//! view it sends its model tells the model to call `recall` (a summary names
//! `ctxkit://summarized`, a pruned result `ctxkit://tool-result/<id>`), so such a client offers its
//! model a `recall` tool of the same schema and answers each call with this method.

use std::sync::Arc;

use ctxkit_engine::Recalled;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::methods::{engine, params};
use crate::{MethodError, Shared};

/// The tool's arguments, as the model writes them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecallParams {
    reference: String,
    #[serde(default)]
    query: Option<String>,
}

/// `recall {reference, query?}` → `{text, is_error}`: the tool result to send back, an error
/// result (`is_error`) when nothing was found, worded as the tool words it.
pub(crate) async fn recall(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let params: RecallParams = params(raw)?;
    let engine = engine(shared).await?;
    Ok(
        match engine
            .recall(&params.reference, params.query.as_deref())
            .await
        {
            Recalled::Found(text) => json!({"text": text, "is_error": false}),
            Recalled::Missing(message) => json!({"text": message, "is_error": true}),
        },
    )
}

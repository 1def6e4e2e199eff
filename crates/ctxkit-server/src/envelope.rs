//! The JSON-RPC 2.0 envelope: a request line read as one request or a batch and checked (`jsonrpc`
//! is `"2.0"`, `id` a string, a number or null, `method` a string, `params` an object or an array),
//! and the answers written back, a request's as one line, a batch's as one array in the batch's
//! order. Ids are kept as the JSON text the client wrote, so each comes back exactly as it was sent
//! (a number past 64 bits included).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::outgoing::Outgoing;
use crate::{Answer, MethodError, codes, input};

/// The bytes of a batch's answers held until its last member is answered: past it the members
/// not yet run are answered with an error instead (`batch_too_large`), so a batch holds no more of
/// the server's memory than the lines waiting for a client that reads slowly.
pub(crate) const MAX_BATCH_ANSWER_BYTES: usize = crate::outgoing::MAX_WAITING_BYTES;

/// A request's id as the client wrote it: a string, a number of any length, or null.
#[derive(Debug, Clone)]
pub(crate) enum Id {
    Null,
    Text(Box<RawValue>),
}

impl Id {
    /// The id `raw` is, or `None` when it is not a string, a number or null.
    fn read(raw: &RawValue) -> Option<Self> {
        match raw.get().as_bytes().first() {
            Some(b'"' | b'-' | b'0'..=b'9') => Some(Self::Text(raw.to_owned())),
            Some(b'n') => Some(Self::Null),
            _ => None,
        }
    }
}

impl Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => serializer.serialize_unit(),
            Self::Text(text) => text.serialize(serializer),
        }
    }
}

/// Where a request's answer goes.
pub(crate) enum Reply {
    /// A notification (no `id`): nowhere.
    Nothing,
    /// A line of its own.
    Line(Id),
    /// An entry of its batch's array.
    Member {
        id: Id,
        batch: Arc<Batch>,
        index: usize,
    },
}

impl Reply {
    /// Sends the answer (nothing for a notification).
    pub(crate) fn send(self, out: &Outgoing, outcome: Result<Answer, MethodError>) {
        match self {
            Self::Nothing => {}
            Self::Line(id) => {
                let _ = out.send_text(response_text(&id, outcome));
            }
            Self::Member { id, batch, index } => batch.add(index, &id, outcome),
        }
    }

    /// Whether this request is a member of a batch whose answers already hold
    /// [`MAX_BATCH_ANSWER_BYTES`].
    pub(crate) fn batch_is_full(&self) -> bool {
        match self {
            Self::Member { batch, .. } => {
                batch.bytes.load(Ordering::Acquire) > MAX_BATCH_ANSWER_BYTES
            }
            Self::Nothing | Self::Line(_) => false,
        }
    }
}

/// The error for a member of a batch that is full.
/// The answer to a request a WebSocket client queued before it disconnected (not sent: no one
/// reads it).
pub(crate) fn client_gone() -> MethodError {
    MethodError {
        code: codes::ENGINE_ERROR,
        message: "not run: the client disconnected".to_owned(),
        kind: Some("client_gone"),
    }
}

pub(crate) fn batch_too_large() -> MethodError {
    MethodError {
        code: codes::ENGINE_ERROR,
        message: format!(
            "not run: the answers of this batch passed {} MiB; send the rest in smaller batches \
             or one at a time",
            MAX_BATCH_ANSWER_BYTES >> 20
        ),
        kind: Some("batch_too_large"),
    }
}

/// The answers of a batch, written as one array once every member holding it has answered or
/// been dropped (a member after `shutdown` is never run and has no entry).
pub(crate) struct Batch {
    out: Outgoing,
    entries: Mutex<Vec<(usize, String)>>,
    bytes: AtomicUsize,
}

impl Batch {
    fn new(out: &Outgoing) -> Self {
        Self {
            out: out.clone(),
            entries: Mutex::new(Vec::new()),
            bytes: AtomicUsize::new(0),
        }
    }

    fn add(&self, index: usize, id: &Id, outcome: Result<Answer, MethodError>) {
        let text = response_text(id, outcome);
        self.bytes.fetch_add(text.len(), Ordering::AcqRel);
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((index, text));
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let entries = self
            .entries
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        // A batch of notifications only is answered with nothing.
        if entries.is_empty() {
            return;
        }
        entries.sort_by_key(|(index, _)| *index);
        let mut line =
            String::with_capacity(self.bytes.load(Ordering::Acquire) + entries.len() + 1);
        line.push('[');
        for (position, (_, entry)) in entries.iter().enumerate() {
            if position > 0 {
                line.push(',');
            }
            line.push_str(entry);
        }
        line.push(']');
        let _ = self.out.send_text(line);
    }
}

/// A response as one line of JSON text, its fields in the order `json!` wrote them.
fn response_text(id: &Id, outcome: Result<Answer, MethodError>) -> String {
    #[derive(Serialize)]
    struct Success<'a> {
        jsonrpc: &'static str,
        id: &'a Id,
        result: &'a Answer,
    }
    #[derive(Serialize)]
    struct Failure<'a> {
        jsonrpc: &'static str,
        id: &'a Id,
        error: ErrorBody,
    }
    #[derive(Serialize)]
    struct ErrorBody {
        code: i64,
        message: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<ErrorData>,
    }
    #[derive(Serialize)]
    struct ErrorData {
        kind: &'static str,
    }
    let failure = |error: MethodError| Failure {
        jsonrpc: "2.0",
        id,
        error: ErrorBody {
            code: error.code,
            message: error.message,
            data: error.kind.map(|kind| ErrorData { kind }),
        },
    };
    let written = match outcome {
        Ok(result) => serde_json::to_string(&Success {
            jsonrpc: "2.0",
            id,
            result: &result,
        }),
        Err(error) => serde_json::to_string(&failure(error)),
    };
    written.unwrap_or_else(|error| {
        // Not an answer the methods build; an error of strings and numbers is always written.
        let error = MethodError::new(
            codes::INTERNAL_ERROR,
            format!("the answer could not be written as JSON: {error}"),
        );
        serde_json::to_string(&failure(error)).unwrap_or_default()
    })
}

/// A request as read: where its answer goes, its method and its parameters (`null` when none).
pub(crate) struct Request {
    pub(crate) reply: Reply,
    pub(crate) method: String,
    pub(crate) params: Value,
    /// The bytes of its text (its share of the request queue's budget).
    pub(crate) length: usize,
    /// The `compact.cancel`s read before it (`Shared::compact_cancels`, set as it is read): one
    /// read after a `compact` cancels it even when it has not started yet.
    pub(crate) compact_cancels_before: u64,
    /// The error a line that is no request is answered with, in its turn: a client that
    /// pipelines pairs answers in order (QA 2026-12-07: a line that was not JSON was answered
    /// before the requests read ahead of it).
    pub(crate) refused: Option<MethodError>,
}

impl Request {
    /// A line answered with `error` in its turn, running nothing.
    fn refused(reply: Reply, error: MethodError) -> Self {
        Self {
            reply,
            method: String::new(),
            params: Value::Null,
            length: 0,
            compact_cancels_before: 0,
            refused: Some(error),
        }
    }
}

/// The requests of one line, in order: none when the line is blank, one refused (too long, not
/// UTF-8, not JSON, not a request, an empty batch: answered in its turn), one, or a batch's
/// members (its members that are not requests have their error entries in the batch already).
pub(crate) fn read_line(out: &Outgoing, line: input::Line, limit: usize) -> Vec<Request> {
    let refuse = |code, message: String| {
        vec![Request::refused(
            Reply::Line(Id::Null),
            MethodError::new(code, message),
        )]
    };
    let bytes = match line {
        input::Line::Text(bytes) => bytes,
        input::Line::TooLong(length) => {
            return refuse(
                codes::INVALID_REQUEST,
                format!(
                    "the request line of {length} bytes is longer than the limit of {limit} bytes \
                     (`server.maxRequestBytes`); it was discarded"
                ),
            );
        }
    };
    // A line that is not UTF-8 is answered like any unreadable request, not the end of input.
    let Ok(line) = String::from_utf8(bytes) else {
        return refuse(
            codes::PARSE_ERROR,
            "not JSON: the line is not UTF-8 text".to_owned(),
        );
    };
    let text = line.trim();
    if text.is_empty() {
        return Vec::new();
    }
    // A request is read in one pass: its envelope, then its parameters once.
    if !text.starts_with('[') {
        return match read_request(text) {
            Ok(Parts { id, method, params }) => vec![Request {
                reply: id.map_or(Reply::Nothing, Reply::Line),
                method,
                params,
                length: line.len(),
                compact_cancels_before: 0,
                refused: None,
            }],
            Err((id, error)) => vec![Request::refused(Reply::Line(id), error)],
        };
    }
    let members: Vec<&RawValue> = match serde_json::from_str(text) {
        Ok(members) => members,
        Err(error) if is_syntax(&error) => {
            return refuse(codes::PARSE_ERROR, format!("not JSON: {error}"));
        }
        Err(error) => return refuse(codes::INVALID_REQUEST, format!("invalid batch: {error}")),
    };
    if members.is_empty() {
        return refuse(
            codes::INVALID_REQUEST,
            "empty batch: a batch is an array of one request or more".to_owned(),
        );
    }
    let batch = Arc::new(Batch::new(out));
    let mut requests = Vec::with_capacity(members.len());
    for (index, member) in members.into_iter().enumerate() {
        match read_request(member.get()) {
            Ok(Parts { id, method, params }) => requests.push(Request {
                // A notification in a batch has no entry in its array.
                reply: id.map_or(Reply::Nothing, |id| Reply::Member {
                    id,
                    batch: Arc::clone(&batch),
                    index,
                }),
                method,
                params,
                length: member.get().len(),
                compact_cancels_before: 0,
                refused: None,
            }),
            Err((id, error)) => batch.add(index, &id, Err(error)),
        }
    }
    requests
}

/// The members of a request object, each as its JSON text (present and `null` told apart).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    /// Read as it will be used (a missing `params` and `null` alike mean none).
    #[serde(default)]
    params: Value,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// A request's id (`None` for a notification), method and params, or the error to answer it with
/// and the id to answer to (`null` when the id itself cannot be read).
fn read_request(text: &str) -> Result<Parts, (Id, MethodError)> {
    // JavaScript clients cut strings by UTF-16 length and send lone surrogate escapes (`\ud83d`),
    // as Pi writes them into files: read as the session reader reads them (U+FFFD in their place).
    let original = text;
    let repaired = ctxkit_protocol::repair_lone_surrogates(text);
    let text: &str = &repaired;
    let invalid = |id: Id, message: &str| {
        Err((
            id,
            MethodError::new(codes::INVALID_REQUEST, message.to_owned()),
        ))
    };
    let not_json = |error: serde_json::Error| {
        Err((
            Id::Null,
            MethodError::new(codes::PARSE_ERROR, format!("not JSON: {error}")),
        ))
    };
    if !text.starts_with('{') {
        return match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => invalid(
                Id::Null,
                "a request must be a JSON object (a batch: an array of them)",
            ),
            Err(error) => not_json(error),
        };
    }
    let envelope: Envelope = match serde_json::from_str(text) {
        Ok(envelope) => envelope,
        // JSON this reader cannot hold (a number past `f64`: `1e999`) is answered under its id.
        Err(error) if is_syntax(&error) => {
            return match lone_id(text) {
                Some(id) => Err((
                    id,
                    MethodError::new(
                        codes::PARSE_ERROR,
                        format!("the request holds JSON this server cannot read: {error}"),
                    ),
                )),
                None => not_json(error),
            };
        }
        // Wrong in its shape (a key written twice): still answered under its id when it has one.
        Err(error) => {
            let id = lone_id(text).unwrap_or(Id::Null);
            return invalid(id, &format!("invalid request: {error}"));
        }
    };
    let id = match envelope.id {
        None => None,
        Some(id) => match Id::read(id) {
            // The id comes back exactly as written, lone surrogates and all (the repair is for
            // reading the request, not for the client's own token).
            Some(id) if original != text => lone_id(original).or(Some(id)),
            Some(id) => Some(id),
            None => return invalid(Id::Null, "`id` must be a string, a number or null"),
        },
    };
    let answer_to = id.clone().unwrap_or(Id::Null);
    let version = envelope
        .jsonrpc
        .and_then(|version| serde_json::from_str::<String>(version.get()).ok());
    if version.as_deref() != Some("2.0") {
        return invalid(answer_to, "`jsonrpc` must be \"2.0\"");
    }
    let Some(method) = envelope
        .method
        .and_then(|method| serde_json::from_str::<String>(method.get()).ok())
    else {
        return invalid(answer_to, "a request needs a string `method`");
    };
    let params = match envelope.params {
        params @ (Value::Null | Value::Object(_) | Value::Array(_)) => params,
        Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            return invalid(
                answer_to,
                "`params` must be an object (or an array, or left out)",
            );
        }
    };
    Ok(Parts { id, method, params })
}

/// The id of a request object that names exactly one, readable as an id: a request refused for a
/// `method` written twice is still answered where its client waits. Two ids name none.
fn lone_id(text: &str) -> Option<Id> {
    struct Ids<'a>(Vec<&'a RawValue>);
    struct IdsVisitor;
    impl<'de> serde::de::Visitor<'de> for IdsVisitor {
        type Value = Ids<'de>;
        fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            formatter.write_str("a request object")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ids<'de>, A::Error> {
            let mut ids = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    ids.push(map.next_value::<&RawValue>()?);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(Ids(ids))
        }
    }
    impl<'de> Deserialize<'de> for Ids<'de> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_map(IdsVisitor)
        }
    }
    let ids: Ids = serde_json::from_str(text).ok()?;
    match ids.0.as_slice() {
        [only] => Id::read(only),
        _ => None,
    }
}

/// Whether `error` says the text is not JSON (rather than JSON of the wrong shape).
fn is_syntax(error: &serde_json::Error) -> bool {
    matches!(
        error.classify(),
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof
    )
}

/// A request object's parts.
struct Parts {
    id: Option<Id>,
    method: String,
    params: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA (2026-12-05): an id holding a lone surrogate escape came back as `"\ufffd"`; the
    /// protocol says an id comes back exactly as written. The rest is read repaired.
    #[test]
    fn an_id_with_a_lone_surrogate_comes_back_as_written() {
        let text =
            r#"{"jsonrpc":"2.0","id":"a\ud800","method":"initialize","params":{"x":"\udc00"}}"#;
        let Ok(parts) = read_request(text) else {
            panic!("read");
        };
        let id = serde_json::to_string(&parts.id).unwrap();
        assert_eq!(id, r#""a\ud800""#);
        assert_eq!(parts.params["x"], "\u{fffd}");
    }
}

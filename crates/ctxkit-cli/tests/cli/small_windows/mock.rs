//! The small-window endpoint: the scenario's scripted model over each wire format
//! (`serve_in_run::mock`'s streams), counting tokens from the request's bytes, holding every
//! request to its real limit as that provider does (Anthropic counts the input plus `max_tokens`),
//! recording each request's output limit, and, when asked, refusing the `anthropic-beta` values
//! of message threads and on-demand compaction as a gateway does.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::serve_in_run::mock::Format;

pub const FILE_MARKER: &str = "FILE-LINE";
pub const LOG_MARKER: &str = "LOG-LINE";
const REFUSABLE_BETAS: &[&str] = &["message-threads-2026-08-12", "compact-2026-09-04"];

/// One endpoint: its format, its real limit, the least output room a request should carry, and
/// whether it refuses the betas.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    pub format: Format,
    pub limit: usize,
    pub floor: u64,
    pub refuse_betas: bool,
}

/// What the endpoint saw.
#[derive(Debug, Default)]
pub struct Counts {
    pub chat_requests: usize,
    pub refused: usize,
    pub below_floor: usize,
    pub smallest_room: Option<u64>,
    pub summaries: usize,
    pub summaries_below_floor: usize,
    pub refused_summaries: usize,
    pub largest_accepted: usize,
    /// Requests refused for a beta (or the field it brings), by beta.
    pub beta_refused: BTreeMap<String, usize>,
    /// The reasoning parameter of each summary request (Chat Completions' `reasoning_effort`,
    /// Anthropic's `thinking`), null when absent.
    pub summary_reasoning: Vec<Value>,
    /// The same for the conversation's requests.
    pub chat_reasoning: Vec<Value>,
}

fn reasoning(body: &Value) -> Value {
    body.get("reasoning_effort")
        .or_else(|| body.get("thinking"))
        .or_else(|| body.get("reasoning"))
        .cloned()
        .unwrap_or(Value::Null)
}

fn max_tokens(format: Format, body: &Value) -> Option<u64> {
    match format {
        Format::Chat => body
            .get("max_completion_tokens")
            .or_else(|| body.get("max_tokens"))
            .and_then(Value::as_u64),
        Format::Anthropic => body.get("max_tokens").and_then(Value::as_u64),
        Format::Responses => body.get("max_output_tokens").and_then(Value::as_u64),
        Format::Gemini => body
            .pointer("/generationConfig/maxOutputTokens")
            .and_then(Value::as_u64),
    }
}

/// The format's overflow error, stating `limit` as the real APIs do.
fn overflow(format: Format, tokens: usize, max: u64, limit: usize) -> (u16, Value) {
    match format {
        Format::Chat | Format::Responses => (
            400,
            json!({"error": {"message": format!("This model's maximum context length is {limit} tokens. \
                However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        ),
        Format::Anthropic if tokens <= limit => (
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!(
                "input length and `max_tokens` exceed context limit: {tokens} + {max} > {limit}, \
                 decrease input length or `max_tokens` and try again")}}),
        ),
        Format::Anthropic => (
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("prompt is too long: {tokens} tokens > {limit} maximum")}}),
        ),
        Format::Gemini => (
            400,
            json!({"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": format!(
                "The input token count ({tokens}) exceeds the maximum number of tokens allowed ({limit}).")}}),
        ),
    }
}

fn refused_beta(endpoint: Endpoint, beta_header: &str, body: &Value) -> Option<(String, Value)> {
    if !endpoint.refuse_betas {
        return None;
    }
    let named = REFUSABLE_BETAS
        .iter()
        .find(|beta| beta_header.split(',').any(|sent| sent.trim() == **beta));
    if let Some(beta) = named {
        return Some((
            (*beta).to_owned(),
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": format!(
                "Unexpected value(s) `{beta}` for the `anthropic-beta` header. Please consult our \
                 documentation at docs.anthropic.com or try again without the header.")}}),
        ));
    }
    // Without the beta, the fields it brings are unknown.
    for (field, beta) in [
        ("thread", REFUSABLE_BETAS[0]),
        ("compaction", REFUSABLE_BETAS[1]),
    ] {
        if body.get(field).is_some() {
            return Some((
                beta.to_owned(),
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": format!("{field}: Extra inputs are not permitted")}}),
            ));
        }
    }
    None
}

fn respond(
    endpoint: Endpoint,
    beta_header: &str,
    body: &Value,
    prompt: usize,
    counts: &Mutex<Counts>,
) -> (u16, String, String) {
    let format = endpoint.format;
    let mut counts = counts.lock().unwrap();
    if let Some((beta, error)) = refused_beta(endpoint, beta_header, body) {
        *counts.beta_refused.entry(beta).or_default() += 1;
        return (400, "application/json".to_owned(), error.to_string());
    }
    // Bytes / 3.5: 14% more than ctxkit's estimate, as real tokenizers count code and logs.
    let tokens = (body.to_string().len() * 10).div_ceil(35);
    let max = max_tokens(format, body);
    let room = max.unwrap_or(endpoint.floor);
    // Anthropic refuses input plus `max_tokens` over the limit; the others the input alone.
    let over = match format {
        Format::Anthropic => tokens + room as usize > endpoint.limit,
        Format::Chat | Format::Responses | Format::Gemini => tokens > endpoint.limit,
    };
    let summary = body.get("tools").is_none();
    if summary {
        counts.summary_reasoning.push(reasoning(body));
        counts.summaries += 1;
        counts.summaries_below_floor += usize::from(room < endpoint.floor);
        if over {
            counts.refused_summaries += 1;
            let (status, error) = overflow(format, tokens, room, endpoint.limit);
            return (status, "application/json".to_owned(), error.to_string());
        }
        let text = format.summary("## Goal\nSUMMARY-FROM-MOCK of the earlier work");
        return (200, "application/json".to_owned(), text.to_string());
    }
    counts.chat_requests += 1;
    counts.chat_reasoning.push(reasoning(body));
    counts.below_floor += usize::from(room < endpoint.floor);
    counts.smallest_room = Some(counts.smallest_room.map_or(room, |least| least.min(room)));
    if over {
        counts.refused += 1;
        let (status, error) = overflow(format, tokens, room, endpoint.limit);
        return (status, "application/json".to_owned(), error.to_string());
    }
    counts.largest_accepted = counts.largest_accepted.max(tokens);
    let last = format.last_message(body);
    let stream = if last.contains(LOG_MARKER) {
        format.text(&format!("ANSWER-{prompt}: the build is fine."), tokens)
    } else if last.contains(FILE_MARKER) {
        let calls = [
            json!({"command": format!("cat logs/build-{prompt}-a.log")}),
            json!({"command": format!("cat logs/build-{prompt}-b.log")}),
        ];
        format.tool_calls("bash", &calls, tokens)
    } else {
        let calls = [
            json!({"path": format!("src/module-{prompt}-a.rs")}),
            json!({"path": format!("src/module-{prompt}-b.rs")}),
        ];
        format.tool_calls("read", &calls, tokens)
    };
    (200, "text/event-stream".to_owned(), stream)
}

/// Starts the endpoint; `prompt` is the number of the running prompt.
pub fn start(endpoint: Endpoint, prompt: Arc<Mutex<usize>>, counts: Arc<Mutex<Counts>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for socket in listener.incoming().flatten() {
            let (prompt, counts) = (Arc::clone(&prompt), Arc::clone(&counts));
            std::thread::spawn(move || {
                let (beta, body) = read_request(&socket);
                let Ok(body) = serde_json::from_slice::<Value>(&body) else {
                    return;
                };
                let number = *prompt.lock().unwrap();
                let (status, kind, text) = respond(endpoint, &beta, &body, number, &counts);
                let mut socket = socket;
                let reason = if status == 200 { "OK" } else { "Bad Request" };
                let _ = write!(
                    socket,
                    "HTTP/1.1 {status} {reason}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = socket.flush();
            });
        }
    });
    url
}

/// The request's `anthropic-beta` header (empty when absent) and body (the mocks of
/// `small_windows` and `on_demand` read requests alike).
pub(crate) fn read_request(socket: &std::net::TcpStream) -> (String, Vec<u8>) {
    let Ok(clone) = socket.try_clone() else {
        return (String::new(), Vec::new());
    };
    let mut reader = BufReader::new(clone);
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    let (mut length, mut beta) = (0, String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            } else if name.eq_ignore_ascii_case("anthropic-beta") {
                beta = value.trim().to_owned();
            }
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        body.clear();
    }
    (beta, body)
}

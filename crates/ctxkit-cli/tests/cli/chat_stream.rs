//! `ctxkit chat` streaming in a real terminal (tmux) against a mock server that sends each wire
//! format's event stream with pauses in it (Chat Completions, Anthropic Messages, OpenAI
//! Responses, Gemini): text shows before the reply ends, a tool call per format, Ctrl-C mid-stream
//! keeps the partial reply, and an overflow error inside a stream is compacted and retried.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::chat::{Tmux, tmux_missing};

const MODEL_ID: &str = "test-model";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Chat,
    Anthropic,
    Responses,
    Gemini,
}

/// A piece of a response: bytes to send, or a pause before the next piece.
#[derive(Debug)]
enum Step {
    Send(String),
    Pause(Duration),
    /// Holds the stream until the test sends on the channel (or 30 s pass), so what the test
    /// checks while the model works does not race a fixed pause.
    Until(std::sync::mpsc::Receiver<()>),
}

fn event(data: &Value) -> Step {
    match data.get("type").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => Step::Send(format!("event: {name}\ndata: {data}\n\n")),
        Some(_) | None => Step::Send(format!("data: {data}\n\n")),
    }
}

impl Format {
    fn api(self) -> &'static str {
        match self {
            Self::Chat => "openai-completions",
            Self::Anthropic => "anthropic-messages",
            Self::Responses => "openai-responses",
            Self::Gemini => "google-generative-ai",
        }
    }

    /// A text reply sent as `first`, then `rest` once the test sends on `held`'s channel.
    fn text_held(
        self,
        first: &str,
        rest: &str,
        held: std::sync::mpsc::Receiver<()>,
        input: u64,
    ) -> Vec<Step> {
        let mut held = Some(held);
        self.text(first, rest, Duration::ZERO, input)
            .into_iter()
            .map(|step| match step {
                Step::Pause(pause) => held.take().map_or(Step::Pause(pause), Step::Until),
                step @ (Step::Send(_) | Step::Until(_)) => step,
            })
            .collect()
    }

    /// A text reply sent as `first`, a pause, then `rest`.
    fn text(self, first: &str, rest: &str, pause: Duration, input: u64) -> Vec<Step> {
        let mut steps = Vec::new();
        match self {
            Self::Chat => {
                let chunk = |delta: Value, finish: Value| {
                    event(
                        &json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": MODEL_ID,
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                    )
                };
                steps.push(chunk(
                    json!({"role": "assistant", "content": first}),
                    Value::Null,
                ));
                steps.push(Step::Pause(pause));
                steps.push(chunk(json!({"content": rest}), Value::Null));
                steps.push(chunk(json!({}), json!("stop")));
                steps.push(event(&json!({"id": "c", "object": "chat.completion.chunk", "choices": [],
                    "usage": {"prompt_tokens": input, "completion_tokens": 20, "total_tokens": input + 20}})));
                steps.push(Step::Send("data: [DONE]\n\n".into()));
            }
            Self::Anthropic => {
                steps.push(event(&anthropic_start(input)));
                steps.push(event(&json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
                steps.push(event(&json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": first}})));
                steps.push(Step::Pause(pause));
                steps.push(event(&json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": rest}})));
                steps.push(event(&json!({"type": "content_block_stop", "index": 0})));
                steps.push(event(&json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 20}})));
                steps.push(event(&json!({"type": "message_stop"})));
            }
            Self::Responses => {
                steps.push(event(&json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}})));
                steps.push(event(&json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "in_progress", "content": [], "role": "assistant"}})));
                steps.push(event(&json!({"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": first})));
                steps.push(Step::Pause(pause));
                steps.push(event(&json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": rest})));
                steps.push(event(&json!({"type": "response.output_item.done", "sequence_number": 4, "output_index": 0, "item": {"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "annotations": [], "text": format!("{first}{rest}")}]}})));
                steps.push(event(&json!({"type": "response.completed", "sequence_number": 5, "response": {"id": "resp_1", "object": "response", "status": "completed", "usage": {"input_tokens": input, "output_tokens": 20, "total_tokens": input + 20}}})));
            }
            Self::Gemini => {
                steps.push(event(&json!({"candidates": [{"content": {"role": "model", "parts": [{"text": first}]}, "index": 0}]})));
                steps.push(Step::Pause(pause));
                steps.push(event(&json!({"candidates": [{"content": {"role": "model", "parts": [{"text": rest}]}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": input, "candidatesTokenCount": 20, "totalTokenCount": input + 20}})));
            }
        }
        steps
    }

    /// A `bash` call with `command`, its arguments in two pieces where the format splits them.
    fn bash(self, id: &str, command: &str) -> Vec<Step> {
        let arguments = json!({"command": command}).to_string();
        let (head, tail) = arguments.split_at(5);
        match self {
            Self::Chat => {
                let chunk = |delta: Value, finish: Value| {
                    event(
                        &json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
                    )
                };
                vec![
                    chunk(
                        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": "bash", "arguments": head}}]}),
                        Value::Null,
                    ),
                    chunk(
                        json!({"tool_calls": [{"index": 0, "function": {"arguments": tail}}]}),
                        Value::Null,
                    ),
                    chunk(json!({}), json!("tool_calls")),
                    Step::Send("data: [DONE]\n\n".into()),
                ]
            }
            Self::Anthropic => vec![
                event(&anthropic_start(200)),
                event(
                    &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
                ),
                event(
                    &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "I will run it."}}),
                ),
                event(
                    &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
                ),
                event(&json!({"type": "content_block_stop", "index": 0})),
                event(
                    &json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": id, "name": "bash", "input": {}}}),
                ),
                event(
                    &json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": head}}),
                ),
                event(
                    &json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": tail}}),
                ),
                event(&json!({"type": "content_block_stop", "index": 1})),
                event(
                    &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
                ),
                event(&json!({"type": "message_stop"})),
            ],
            Self::Responses => vec![
                event(
                    &json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
                ),
                event(
                    &json!({"type": "response.reasoning_summary_text.delta", "sequence_number": 2, "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "I will run it."}),
                ),
                event(
                    &json!({"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "I will run it."}], "encrypted_content": "gAAAAB-enc"}}),
                ),
                event(
                    &json!({"type": "response.output_item.added", "sequence_number": 4, "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": id, "name": "bash", "arguments": "", "status": "in_progress"}}),
                ),
                event(
                    &json!({"type": "response.function_call_arguments.delta", "sequence_number": 5, "item_id": "fc_1", "output_index": 1, "delta": head}),
                ),
                event(
                    &json!({"type": "response.function_call_arguments.delta", "sequence_number": 6, "item_id": "fc_1", "output_index": 1, "delta": tail}),
                ),
                event(
                    &json!({"type": "response.output_item.done", "sequence_number": 7, "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": id, "name": "bash", "arguments": arguments, "status": "completed"}}),
                ),
                event(
                    &json!({"type": "response.completed", "sequence_number": 8, "response": {"id": "resp_0", "status": "completed", "usage": {"input_tokens": 200, "output_tokens": 30, "total_tokens": 230}}}),
                ),
            ],
            Self::Gemini => vec![event(
                &json!({"candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": "bash", "args": {"command": command}}, "thoughtSignature": "c2lnLTE="}]},
                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 200, "candidatesTokenCount": 30, "totalTokenCount": 230}}),
            )],
        }
    }

    /// A whole (not streamed) summary answer, for the compaction's requests.
    fn summary(self, text: &str) -> Value {
        match self {
            Self::Chat => json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 300, "completion_tokens": 50, "total_tokens": 350}}),
            Self::Anthropic => {
                json!({"id": "msg_s", "type": "message", "role": "assistant", "model": MODEL_ID,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 300, "output_tokens": 50}})
            }
            Self::Responses => {
                json!({"id": "resp_s", "object": "response", "status": "completed", "output": [
                {"type": "message", "id": "msg_s", "status": "completed", "role": "assistant",
                 "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                "usage": {"input_tokens": 300, "output_tokens": 50, "total_tokens": 350}})
            }
            Self::Gemini => {
                json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 300, "candidatesTokenCount": 50, "totalTokenCount": 350}})
            }
        }
    }
}

fn anthropic_start(input: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
        "content": [], "model": MODEL_ID, "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 1}}})
}

/// The mock provider: chat requests (they carry tools) take the next scripted stream; summary
/// requests get a whole answer in the format's shape. Every request is recorded.
struct Server {
    url: String,
    streams: Arc<Mutex<VecDeque<Vec<Step>>>>,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Server {
    fn start(format: Format) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let streams: Arc<Mutex<VecDeque<Vec<Step>>>> = Arc::default();
        let requests: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let (scripted, recorded) = (Arc::clone(&streams), Arc::clone(&requests));
        std::thread::spawn(move || {
            for socket in listener.incoming().flatten() {
                let (scripted, recorded) = (Arc::clone(&scripted), Arc::clone(&recorded));
                std::thread::spawn(move || serve(socket, format, &scripted, &recorded));
            }
        });
        Self {
            url,
            streams,
            requests,
        }
    }

    fn answer(&self, steps: Vec<Step>) {
        self.streams.lock().unwrap().push_back(steps);
    }

    fn chat_requests(&self) -> Vec<(String, Value)> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, body)| !crate::chat::is_summary(body))
            .cloned()
            .collect()
    }
}

/// Reads one HTTP request from `socket`: the request target and the `content-length` body (empty
/// when the request cannot be read). The mock servers of the CLI tests share it.
pub(crate) fn read_http_request(socket: &std::net::TcpStream) -> (String, Vec<u8>) {
    let Ok(clone) = socket.try_clone() else {
        return (String::new(), Vec::new());
    };
    let mut reader = BufReader::new(clone);
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    let target = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_owned();
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        body.clear();
    }
    (target, body)
}

fn serve(
    socket: std::net::TcpStream,
    format: Format,
    streams: &Mutex<VecDeque<Vec<Step>>>,
    requests: &Mutex<Vec<(String, Value)>>,
) {
    let (target, body) = read_http_request(&socket);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let is_chat = !crate::chat::is_summary(&body);
    requests.lock().unwrap().push((target, body));
    let mut socket = socket;
    if !is_chat {
        let text = format
            .summary("## Goal\nSUMMARY-FROM-MOCK of the earlier work")
            .to_string();
        let _ = write!(
            socket,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        );
        return;
    }
    let steps = streams.lock().unwrap().pop_front().unwrap_or_else(|| {
        format.text("(the script has no more answers)", "", Duration::ZERO, 100)
    });
    let _ = write!(
        socket,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
    );
    for step in steps {
        match step {
            Step::Send(text) => {
                if socket.write_all(text.as_bytes()).is_err() {
                    return;
                }
                let _ = socket.flush();
            }
            Step::Pause(pause) => std::thread::sleep(pause),
            Step::Until(release) => {
                let _ = release.recv_timeout(Duration::from_secs(30));
            }
        }
    }
}

/// A temp home and project with settings pointing `ctxkit chat` at the mock in `format`.
struct World {
    server: Server,
    home: tempfile::TempDir,
    project: PathBuf,
}

impl World {
    fn new(format: Format, context_window: u64, compaction: Value) -> Self {
        let server = Server::start(format);
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let base_url = match format {
            Format::Anthropic => server.url.clone(),
            Format::Chat | Format::Responses | Format::Gemini => format!("{}/v1", server.url),
        };
        let settings = json!({
            "defaultProvider": "mock",
            "defaultModel": format!("mock/{MODEL_ID}"),
            "defaultThinkingLevel": "low",
            "llm": {
                "api": format.api(),
                "baseUrl": base_url,
                "apiKey": "mock-key",
                "models": [{"provider": "mock", "id": MODEL_ID, "contextWindow": context_window,
                            "maxOutput": 2048, "reasoning": true}]
            },
            "retry": {"enabled": false},
            "compaction": compaction,
        });
        std::fs::write(
            home.path().join("settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
        Self {
            server,
            home,
            project,
        }
    }

    fn start(&self, args: &str) -> Tmux {
        crate::chat::start_chat(&self.project, self.home.path(), args)
    }

    /// The entries of the one session file.
    fn entries(&self) -> Vec<Value> {
        let root = self.home.path().join("sessions");
        let file = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .flat_map(|dir| std::fs::read_dir(dir.path()).unwrap().flatten())
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .unwrap();
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .skip(1)
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

/// A tool call, then a reply that shows its first half while the second is still on its way.
fn streams_a_tool_call_and_text(format: Format) {
    if tmux_missing() {
        return;
    }
    let world = World::new(format, 100_000, json!({}));
    world
        .server
        .answer(format.bash("call_1", "echo streamed-tool-output"));
    let (release, held) = std::sync::mpsc::channel();
    world.server.answer(format.text_held(
        "The command printed",
        " streamed-tool-output.",
        held,
        400,
    ));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("run it");
    let screen = tmux.wait_for("The command printed");
    assert!(
        !screen.contains("The command printed streamed-tool-output."),
        "the first half shows before the reply ends:\n{screen}"
    );
    assert!(
        screen.contains("→ bash echo streamed-tool-output"),
        "{screen}"
    );
    release.send(()).unwrap();
    let screen = tmux.wait_for("The command printed streamed-tool-output.");
    assert_eq!(
        screen.matches("The command printed").count(),
        1,
        "the streamed text is not printed again:\n{screen}"
    );
    tmux.wait_idle(2);
    let requests = world.server.chat_requests();
    assert_eq!(requests.len(), 2);
    let (target, first) = &requests[0];
    match format {
        Format::Gemini => assert!(
            target.ends_with(":streamGenerateContent?alt=sse"),
            "{target}"
        ),
        Format::Chat | Format::Anthropic | Format::Responses => assert_eq!(first["stream"], true),
    }
    let sent = requests[1].1.to_string();
    assert!(
        sent.contains("streamed-tool-output\\n") || sent.contains("streamed-tool-output\""),
        "the tool result goes back: {sent}"
    );
    // The reasoning level asked for, and the provider's reasoning state passed back.
    match format {
        Format::Chat => assert_eq!(first["reasoning_effort"], "low"),
        Format::Anthropic => {
            assert_eq!(first["thinking"]["type"], "enabled");
            assert!(sent.contains("\"signature\":\"EqQBCgIYAhIM\""), "{sent}");
        }
        Format::Responses => {
            assert_eq!(first["reasoning"]["effort"], "low");
            assert!(
                sent.contains("\"encrypted_content\":\"gAAAAB-enc\""),
                "{sent}"
            );
        }
        Format::Gemini => {
            assert!(
                first["generationConfig"]["thinkingConfig"].is_object(),
                "{first}"
            );
            assert!(sent.contains("\"thoughtSignature\":\"c2lnLTE=\""), "{sent}");
        }
    }
    let entries = world.entries();
    let call = entries
        .iter()
        .find(|entry| entry["message"]["stopReason"] == "toolUse")
        .unwrap();
    let block = call["message"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "toolCall")
        .unwrap();
    assert_eq!(
        block["arguments"],
        json!({"command": "echo streamed-tool-output"})
    );
}

#[test]
fn chat_completions_streams_a_tool_call_and_text() {
    streams_a_tool_call_and_text(Format::Chat);
}

#[test]
fn anthropic_streams_a_tool_call_and_text() {
    streams_a_tool_call_and_text(Format::Anthropic);
}

#[test]
fn responses_streams_a_tool_call_and_text() {
    streams_a_tool_call_and_text(Format::Responses);
}

#[test]
fn gemini_streams_a_tool_call_and_text() {
    streams_a_tool_call_and_text(Format::Gemini);
}

#[test]
fn ctrl_c_mid_stream_keeps_the_partial_reply() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Anthropic, 100_000, json!({}));
    world.server.answer(Format::Anthropic.text(
        "A partial answer",
        " that never arrives",
        Duration::from_secs(60),
        300,
    ));
    world
        .server
        .answer(Format::Anthropic.text("Next answer.", "", Duration::ZERO, 300));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("explain");
    tmux.wait_for("A partial answer");
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("Interrupted");
    assert!(screen.contains("A partial answer"), "{screen}");
    tmux.wait_idle(2);
    let entries = world.entries();
    let reply = entries
        .iter()
        .find(|entry| entry["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(reply["message"]["stopReason"], "aborted");
    assert_eq!(reply["message"]["content"][0]["text"], "A partial answer");
    // The chat goes on; the aborted reply is not sent back.
    tmux.line("go on");
    tmux.wait_for("Next answer.");
    let sent = world.server.chat_requests()[1].1.to_string();
    assert!(!sent.contains("A partial answer"), "{sent}");
}

/// QA (r100 D1): closing the terminal (SIGHUP) mid-stream ended the chat at once and the streamed
/// text was lost: the session ended with the prompt. The signal now interrupts the turn as Ctrl-C
/// does, and the partial reply is stored as an aborted one before the chat ends (Pi 1.6.0 too).
#[test]
fn closing_the_terminal_mid_stream_keeps_the_partial_reply() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Anthropic, 100_000, json!({}));
    world.server.answer(Format::Anthropic.text(
        "A partial answer",
        " that never arrives",
        Duration::from_secs(60),
        300,
    ));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("explain");
    tmux.wait_for("A partial answer");
    // The terminal closes; the chat has ended once this returns.
    drop(tmux);
    let entries = world.entries();
    let reply = entries.last().unwrap();
    assert_eq!(reply["message"]["role"], "assistant", "{entries:?}");
    assert_eq!(reply["message"]["stopReason"], "aborted");
    assert_eq!(reply["message"]["content"][0]["text"], "A partial answer");
}

/// QA (r100 D1): SIGTERM while a `bash` call ran stored the call with no result (its output so
/// far lost), and after `chat -c` the next request left the call out. The result is now stored
/// with the output so far and why the command stopped, and goes with the next request.
#[test]
fn sigterm_during_a_command_keeps_its_output_so_far() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Anthropic, 100_000, json!({}));
    world
        .server
        .answer(Format::Anthropic.bash("call_1", "echo partial-output; touch started; sleep 60"));
    world
        .server
        .answer(Format::Anthropic.text("It was stopped.", "", Duration::ZERO, 300));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("run it");
    tmux.wait_for("Running bash");
    let started = std::time::Instant::now();
    while !world.project.join("started").exists() {
        assert!(started.elapsed() < Duration::from_secs(20), "never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    let chat = tmux.pane_process().unwrap();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &chat.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    while !crate::chat::process_ended(chat) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the chat went on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(tmux);
    let entries = world.entries();
    let result = entries
        .iter()
        .find(|entry| entry["message"]["role"] == "toolResult")
        .unwrap_or_else(|| panic!("no tool result: {entries:?}"));
    assert_eq!(
        result["message"]["content"][0]["text"],
        "partial-output\n\nCommand cancelled: the chat was closed"
    );
    // Continued, the call and its result go with the next request.
    let tmux = world.start("--continue --yes");
    tmux.wait_idle(1);
    tmux.line("what happened?");
    tmux.wait_for("It was stopped.");
    let sent = world.server.chat_requests()[1].1.to_string();
    assert!(sent.contains("\"tool_use\""), "{sent}");
    assert!(
        sent.contains("Command cancelled: the chat was closed"),
        "{sent}"
    );
}

#[test]
fn an_overflow_inside_a_stream_is_compacted_and_retried() {
    if tmux_missing() {
        return;
    }
    // A window with room for the system prompt and the seven tools' definitions beside the
    // smallest compaction (in 8,192 they no longer fit once `grep` documented `context`).
    let world = World::new(
        Format::Anthropic,
        12_288,
        json!({"reserveTokens": 2000, "keepRecentTokens": 100}),
    );
    let filler = "The parser reads tokens, builds the tree and reports errors with their spans. ";
    world.server.answer(Format::Anthropic.text(
        "Answer one. ",
        &filler.repeat(6),
        Duration::ZERO,
        1000,
    ));
    world.server.answer(Format::Anthropic.text(
        "Answer two. ",
        &filler.repeat(6),
        Duration::ZERO,
        1500,
    ));
    world.server.answer(vec![
        event(&anthropic_start(1)),
        event(
            &json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 213000 tokens > 200000 maximum"}}),
        ),
    ]);
    world.server.answer(Format::Anthropic.text(
        "Recovered after",
        " the overflow.",
        Duration::ZERO,
        900,
    ));
    let tmux = world.start("--yes");
    tmux.wait_idle(1);
    tmux.line("one");
    tmux.wait_idle(2);
    tmux.line("two");
    tmux.wait_idle(3);
    tmux.line("three");
    let screen = tmux.wait_for("Recovered after the overflow.");
    assert!(
        screen.contains("The request did not fit the model's context window"),
        "{screen}"
    );
    assert!(
        screen.contains("(context overflow; retrying)"),
        "no overflow compaction line:\n{screen}"
    );
    let requests = world.server.chat_requests();
    let retry = requests.last().unwrap().1.to_string();
    assert!(
        retry.contains("SUMMARY-FROM-MOCK"),
        "the retry carries the summary"
    );
    assert!(retry.contains("three"), "and the prompt: {retry}");
    let entries = world.entries();
    assert_eq!(
        entries
            .iter()
            .filter(|entry| entry["type"] == "compaction")
            .count(),
        1
    );
}

#[test]
fn replies_render_as_markdown_and_typing_shows_while_the_model_works() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Chat, 100_000, json!({}));
    let (release, held) = std::sync::mpsc::channel();
    let mut steps = vec![Step::Until(held)];
    steps.extend(Format::Chat.text(
        "## Plan\n\n- **first** step\n- second step\n\n",
        "| file | lines |\n|---|---|\n| main.rs | 12 |\n",
        Duration::ZERO,
        300,
    ));
    world.server.answer(steps);
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("plan it");
    tmux.wait_for("Thinking…");
    tmux.keys(&["-l", "next question"]);
    tmux.wait_for("› next question");
    release.send(()).unwrap();
    let screen = tmux.wait_for("main.rs");
    let screen = if screen.contains('│') {
        screen
    } else {
        tmux.wait_for("│")
    };
    assert!(!screen.contains("**first**"), "{screen}");
    assert!(!screen.contains("## Plan"), "{screen}");
    assert!(screen.contains("first step"), "{screen}");
    // The keys typed meanwhile start the next input line.
    tmux.wait_for("> next question");
}

#[test]
fn a_line_typed_with_enter_while_the_model_works_is_the_next_prompt() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Chat, 100_000, json!({}));
    let (release, held) = std::sync::mpsc::channel();
    let mut steps = vec![Step::Until(held)];
    steps.extend(Format::Chat.text("First answer.", "", Duration::ZERO, 300));
    world.server.answer(steps);
    world
        .server
        .answer(Format::Chat.text("Second answer.", "", Duration::ZERO, 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("first question");
    tmux.wait_for("Thinking…");
    // Typed ahead, Enter included: entered as soon as the turn ends, as if typed at the prompt.
    tmux.line("queued question");
    tmux.wait_for("› queued question ⏎");
    release.send(()).unwrap();
    tmux.wait_for("Second answer.");
    tmux.wait_for("> queued question");
    let requests = world.server.chat_requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests[1].1["messages"]
            .to_string()
            .contains("queued question"),
        "{:?}",
        requests[1].1
    );
}

/// QA (2026-12-05): a reply taller than the terminal stayed as it streamed, raw markdown, since a
/// block is rendered in place only while it fits on the screen. Paragraphs are now rendered as
/// they finish, so a long reply is formatted too, whether it streams in pieces or in one.
#[test]
fn a_reply_taller_than_the_screen_is_rendered_paragraph_by_paragraph() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Chat, 100_000, json!({}));
    let paragraphs: Vec<String> = (1..=15)
        .map(|n| format!("Paragraph {n} with **bold{n}** and `code{n}`.\n\n"))
        .collect();
    let (first, second) = paragraphs.split_at(7);
    world.server.answer(Format::Chat.text(
        &first.concat(),
        second.concat().trim_end(),
        Duration::ZERO,
        300,
    ));
    let tmux = world.start("");
    tmux.resize(100, 20);
    tmux.wait_idle(1);
    tmux.line("write a lot");
    let screen = tmux.wait_for("Paragraph 15");
    let screen = if screen.contains("**bold15**") {
        std::thread::sleep(Duration::from_millis(500));
        tmux.screen()
    } else {
        screen
    };
    assert!(screen.contains("Paragraph 14 with bold14"), "{screen}");
    assert!(!screen.contains("**bold"), "{screen}");
    assert!(!screen.contains("`code"), "{screen}");
}

/// QA: a streamed reply of wide characters (CJK, emoji) was partly printed twice: the streamed
/// text is erased before its rendering is printed, and the erase counted characters, not
/// columns, so it went back too few rows. An emoji joined by zero-width joiners is one
/// two-column character on the screen: counted as three, the erase would go back too far and
/// take the prompt above the reply with it.
#[test]
fn a_streamed_reply_of_wide_characters_is_shown_once() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Chat, 100_000, json!({}));
    let wide = "界".repeat(200);
    let (first, rest) = wide.split_at("界".len() * 70);
    world
        .server
        .answer(Format::Chat.text(first, rest, Duration::from_millis(100), 300));
    let family = "👨\u{200d}👩\u{200d}👧";
    let joined = format!("{}é", family.repeat(100));
    let (first, rest) = joined.split_at(family.len() * 30);
    world
        .server
        .answer(Format::Chat.text(first, rest, Duration::from_millis(100), 400));
    let tmux = world.start("");
    tmux.resize(120, 40);
    tmux.wait_idle(1);
    tmux.line("wide please");
    let screen = tmux.wait_idle(2);
    assert_eq!(screen.matches('界').count(), 200, "{screen}");
    tmux.line("joined please");
    let screen = tmux.wait_idle(3);
    assert_eq!(screen.matches(family).count(), 100, "{screen}");
    assert!(screen.contains("> joined please"), "{screen}");
    assert_eq!(screen.matches('界').count(), 200, "{screen}");
}

/// A local server without a reasoning parser streams the model's reasoning inside the content,
/// between `<think>` tags cut across chunks. The chat showed it as the answer (as Pi does); it is
/// the reply's thinking now, shown as thinking, and the answer alone is the answer.
#[test]
fn reasoning_streamed_between_think_tags_is_shown_as_thinking() {
    if tmux_missing() {
        return;
    }
    let world = World::new(Format::Chat, 100_000, json!({}));
    world.server.answer(Format::Chat.text(
        "<think>\nThe user asks for a sum; 2 and 2 make 4.\n</th",
        "ink>\n\nIt is FOUR-ANSWER.",
        Duration::from_millis(100),
        300,
    ));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("what is 2 + 2?");
    let screen = tmux.wait_idle(2);
    assert!(screen.contains("It is FOUR-ANSWER."), "{screen}");
    assert!(screen.contains("2 and 2 make 4"), "{screen}");
    assert!(!screen.contains("think>"), "{screen}");
    let reply = world
        .entries()
        .into_iter()
        .rev()
        .find(|entry| entry["message"]["role"] == "assistant")
        .unwrap();
    let content = &reply["message"]["content"];
    assert_eq!(content[0]["type"], "thinking", "{content}");
    assert_eq!(content[0]["thinkingSignature"], "think-tags", "{content}");
    assert_eq!(content[1]["text"], "It is FOUR-ANSWER.", "{content}");
}

//! Real sessions as traces: a Pi or ctxkit session file (any version `Session::open` reads), or any
//! file `ctxkit import` reads (Claude Code, Codex, OpenCode), becomes the trace the simulator
//! replays, and the identifiers whose recall it measures.
//!
//! The trace is the raw history on the path from the root to the leaf: every message entry (and
//! extension message) in order. Compaction and branch-summary entries of the source are skipped,
//! since each strategy compacts on its own. Messages are grouped into tasks at user messages
//! (consecutive user messages share a task; messages before the first one make a task without a
//! prompt); each assistant message is a call, and what follows it up to the next assistant or user
//! message (tool results, shell runs, extension messages) is that call's results. Replies are
//! replayed as the simulated model's (provider, model and API rewritten), since every strategy is
//! billed and checked as one model.
//!
//! An identifier (`identifiers`) is **at risk** at a call when a tool result showed it first (no
//! earlier user, assistant or other message held it) and the reply of that call names it again, in
//! its text or in a tool call's arguments (thinking is not read). The recall tracker counts it
//! recalled when the request of that call still holds it.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader};
use std::path::Path;

use ctxkit_protocol::{
    AgentMessage, ContentBlock, CustomMessage, EntryKind, MessageContent, SessionEntry,
};
use ctxkit_session::Session;

use super::SimulateError;
use super::identifiers::for_each_identifier;
use super::trace::{API, Call, IdentifierKind, MODEL, PROVIDER, Task, Trace};

/// An identifier of a real session that is at risk at one or more calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    pub identifier: String,
    pub kind: IdentifierKind,
    /// The tool call whose result showed it first.
    pub tool_call_id: String,
    /// The calls (0-based, ascending, no repeats) whose replies name it again.
    pub calls: Vec<usize>,
}

/// The most calls of a real session replayed: the replay's time grows with the square of the calls
/// (every request is built and measured whole), and a session of a million one-word entries
/// (500,000 calls) would take days. The calls after it are left out, and the report says how many.
/// The gathered real sessions have at most about 1,800 model replies (`eval/real-sessions.tsv`).
pub(crate) const MAX_REPLAYED_CALLS: usize = 5_000;

/// A real session read for replay.
#[derive(Debug, Clone)]
pub(crate) struct LoadedSession {
    /// `pi` for a session file, else the import format (`claude-code`, `codex`, `opencode`).
    pub format: &'static str,
    /// How its responses were written: as the source agent wrote them, for a session file
    /// imported from one too (its header's `importedFrom`).
    pub responses: Responses,
    /// The messages on the path from the root to the leaf, up to the calls replayed.
    pub messages: Vec<AgentMessage>,
    /// Compaction and branch-summary entries on that path, not replayed.
    pub skipped_summaries: usize,
    /// What the bound on calls left out.
    pub left_out: LeftOut,
    /// What of the source could not be read as written (a line skipped, a chain cut, bytes
    /// replaced), each problem as `ctxkit check` (a session file) or the importer (another agent's
    /// file: its skipped lines) words it, in file order.
    pub damage: Vec<String>,
}

/// The part of a session after [`MAX_REPLAYED_CALLS`] calls, not replayed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LeftOut {
    pub calls: usize,
    pub messages: usize,
}

/// The messages of the first `max_calls` calls (and what precedes them), and what is left out.
#[cfg(test)]
pub(crate) fn first_calls(
    messages: Vec<AgentMessage>,
    responses: Responses,
    max_calls: usize,
) -> (Vec<AgentMessage>, LeftOut) {
    let mut counter = CallCounter::new(responses, max_calls);
    let kept = messages
        .into_iter()
        .filter(|message| counter.keeps(message))
        .collect();
    (kept, counter.left_out)
}

/// Splits a session's messages at the bound on calls, as [`session_trace`] groups them into calls:
/// an assistant message starts a call, unless it continues a split response (`Responses::Split`,
/// right after another with nothing between) or is an error reply (not replayed).
#[derive(Debug)]
struct CallCounter {
    responses: Responses,
    max_calls: usize,
    calls: usize,
    /// The last call has had no result yet (a split response may continue it).
    call_open: bool,
    /// The last message kept started a call (counted in `calls`).
    last_started_call: bool,
    left_out: LeftOut,
}

impl CallCounter {
    fn new(responses: Responses, max_calls: usize) -> Self {
        Self {
            responses,
            max_calls,
            calls: 0,
            call_open: false,
            last_started_call: false,
            left_out: LeftOut::default(),
        }
    }

    /// Takes back the call the last kept message started (a reply found to be the source's
    /// compaction call once its compaction follows).
    fn forget_call(&mut self) {
        if self.last_started_call {
            self.calls = self.calls.saturating_sub(1);
        }
        self.last_started_call = false;
        // What follows the compaction is a new request.
        self.call_open = false;
    }

    /// Whether `message` is replayed (before the bound).
    fn keeps(&mut self, message: &AgentMessage) -> bool {
        let starts_call = match message {
            AgentMessage::Assistant(reply) if reply.stop_reason.as_deref() == Some("error") => {
                false
            }
            AgentMessage::Assistant(_) => {
                let continues = self.responses == Responses::Split && self.call_open;
                self.call_open = true;
                !continues
            }
            AgentMessage::User(_)
            | AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => {
                self.call_open = false;
                false
            }
        };
        self.last_started_call = false;
        if starts_call {
            if self.calls == self.max_calls {
                self.left_out.calls += 1;
            } else {
                self.calls += 1;
                self.last_started_call = true;
            }
        }
        if self.left_out.calls > 0 {
            self.left_out.messages += 1;
            return false;
        }
        true
    }
}

fn bad_input(path: &Path, reason: impl std::fmt::Display) -> SimulateError {
    SimulateError::Session {
        path: path.to_owned(),
        reason: reason.to_string().replace('\n', " "),
    }
}

/// Whether the first non-empty line of the file is a session header (`"type":"session"`).
fn is_session_file(path: &Path) -> Result<bool, SimulateError> {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        // `opencode.db#<session id>`: a session inside an OpenCode database (the importer's).
        Err(_) if ctxkit_import::is_opencode_path(path) => return Ok(false),
        Err(error) => return Err(bad_input(path, error)),
    };
    if !metadata.is_file() {
        // Directories are OpenCode stores (the importer decides); devices and FIFOs are refused
        // by the importer without opening them.
        return Ok(false);
    }
    let file = std::fs::File::open(path).map_err(|error| bad_input(path, error))?;
    let mut reader = BufReader::new(file);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return Ok(false),
            Ok(_) if line.trim().is_empty() => {}
            Ok(_) => break,
            // Not UTF-8: not a session; the importer says what it is not.
            Err(_) => return Ok(false),
        }
    }
    let header: Option<serde_json::Value> = serde_json::from_str(line.trim()).ok();
    Ok(header
        .as_ref()
        .and_then(|value| value.get("type"))
        .and_then(serde_json::Value::as_str)
        == Some("session"))
}

/// Reads `path`: a session file through `Session::open`, anything else through the importer (the
/// imported entries written to a temporary file and opened the same way, so the leaf and the path
/// are what `ctxkit` itself would show).
pub(crate) fn load_session(path: &Path) -> Result<LoadedSession, SimulateError> {
    let (format, session, damage, responses) = if is_session_file(path)? {
        let session = Session::open(path).map_err(|error| bad_input(path, error))?;
        let damage = session
            .diagnostics()
            .iter()
            .filter(|problem| problem.kind.is_damage())
            .map(ToString::to_string)
            .collect();
        // A Codex rollout imported earlier is replayed as the rollout is (QA 2026-12-07: each of
        // a response's records counted as a model call, 96 calls replayed as 224).
        let source = session
            .header()
            .extra
            .get("importedFrom")
            .and_then(|from| from.get("format"))
            .and_then(serde_json::Value::as_str)
            .map(Responses::of_format)
            .unwrap_or(Responses::OneMessageEach);
        ("pi", session, damage, source)
    } else {
        let imported =
            ctxkit_import::import_file(path, None).map_err(|error| bad_input(path, error))?;
        let format = imported.format.name();
        let damage = imported
            .report
            .issues
            .iter()
            .filter(|issue| matches!(issue.kind, ctxkit_import::IssueKind::MalformedLine { .. }))
            .map(ToString::to_string)
            .collect();
        // Written a line at a time, then let go: the opened session is what is replayed.
        let dir = ctxkit_session::private_temporary_folder("simulate")
            .map_err(|error| bad_input(path, error))?;
        let file = dir.path().join("imported.jsonl");
        imported
            .write_to(&file)
            .map_err(|error| bad_input(path, error))?;
        drop(imported);
        let session = Session::open(&file).map_err(|error| bad_input(path, error))?;
        (format, session, damage, Responses::of_format(format))
    };
    let mut loaded = LoadedSession {
        format,
        responses,
        messages: Vec::new(),
        skipped_summaries: 0,
        left_out: LeftOut::default(),
        damage,
    };
    let mut counter = CallCounter::new(responses, MAX_REPLAYED_CALLS);
    let mut replies = false;
    for stored in session.branch_path(None) {
        let entry: SessionEntry = match stored.parse() {
            Ok(entry) => entry,
            // JSON of the wrong shape (a number for a content): left out, and said as damage,
            // as a line that is no JSON is (QA 2026-12-07: the whole replay failed).
            Err(ctxkit_session::SessionError::InvalidEntry { line, source, .. }) => {
                loaded.damage.push(format!(
                    "line {line}: entry `{}` could not be read ({source}); it is left out",
                    stored.id()
                ));
                continue;
            }
            Err(error) => return Err(bad_input(path, error)),
        };
        if let EntryKind::Compaction(compaction) = &entry.kind
            && loaded.messages.last().is_some_and(|last| {
                ctxkit_import::wrote_compaction_summary(last, &compaction.summary)
            })
        {
            // The source's own compaction call (Codex records its reply): not replayed, as the
            // compaction it wrote is not.
            loaded.messages.pop();
            counter.forget_call();
        }
        if let Some(message) = push_entry(&mut loaded, entry.kind) {
            replies |= matches!(message, AgentMessage::Assistant(_));
            if counter.keeps(&message) {
                loaded.messages.push(message);
            }
        }
    }
    loaded.left_out = counter.left_out;
    if !replies {
        return Err(bad_input(
            path,
            "it holds no assistant message on the path to its leaf, so there is no call to replay",
        ));
    }
    Ok(loaded)
}

/// The message an entry on the path is replayed as, if any; summaries are counted, not replayed.
fn push_entry(loaded: &mut LoadedSession, kind: EntryKind) -> Option<AgentMessage> {
    match kind {
        EntryKind::Message(message) => match *message {
            AgentMessage::CompactionSummary(_) | AgentMessage::BranchSummary(_) => {
                loaded.skipped_summaries += 1;
                None
            }
            // A tool's details are for a user interface: the model's view leaves them out, and
            // the replay does not carry them (they are often most of a session's bytes).
            AgentMessage::ToolResult(mut result) => {
                result.details = None;
                Some(AgentMessage::ToolResult(result))
            }
            message @ (AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::Unknown(_)) => Some(message),
        },
        EntryKind::CustomMessage(custom) => Some(AgentMessage::Custom(CustomMessage {
            custom_type: custom.custom_type,
            content: custom.content,
            display: custom.display,
            details: custom.details,
            timestamp: None,
            extra: custom.extra,
        })),
        EntryKind::Compaction(_) | EntryKind::BranchSummary(_) => {
            loaded.skipped_summaries += 1;
            None
        }
        EntryKind::ThinkingLevelChange(_)
        | EntryKind::ModelChange(_)
        | EntryKind::Custom(_)
        | EntryKind::Label(_)
        | EntryKind::SessionInfo(_)
        | EntryKind::ContextEdit(_)
        | EntryKind::Usage(_)
        | EntryKind::Unknown { .. } => None,
    }
}

/// How the source wrote a model response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Responses {
    /// One assistant message per response (Pi, ctxkit, OpenCode, and Claude Code once imported:
    /// the importer joins the records of one `message.id`). Two assistant messages in a row are
    /// two requests (Pi writes a reply, then another after a retry or a queued message).
    OneMessageEach,
    /// A response split into consecutive assistant messages: Codex writes its reasoning, its text
    /// and each function call as items of their own (one `token_count` event per response).
    Split,
}

impl Responses {
    /// How sessions of `format` (`LoadedSession::format`) write responses.
    pub(crate) fn of_format(format: &str) -> Self {
        if format == "codex" {
            Self::Split
        } else {
            Self::OneMessageEach
        }
    }
}

/// Groups `messages` into tasks and calls and finds the identifiers at risk.
pub(crate) fn session_trace(messages: Vec<AgentMessage>, responses: Responses) -> Trace {
    let mut tasks: Vec<Task> = Vec::new();
    for message in messages {
        let open_task = tasks.last_mut().filter(|task| match &message {
            AgentMessage::User(_) => task.calls.is_empty(),
            AgentMessage::Assistant(_)
            | AgentMessage::ToolResult(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => true,
        });
        let task = match open_task {
            Some(task) => task,
            None => {
                tasks.push(Task {
                    prompt: Vec::new(),
                    calls: Vec::new(),
                });
                let Some(task) = tasks.last_mut() else {
                    continue;
                };
                task
            }
        };
        match (message, task.calls.last_mut()) {
            // The source's provider refused that request (an error reply, "prompt is too long"
            // among them): it says nothing of the simulated window, and replayed it would make the
            // engine recover from an overflow no simulated request had. Each strategy meets its own.
            (AgentMessage::Assistant(reply), _)
                if reply.stop_reason.as_deref() == Some("error") =>
            {
                continue;
            }
            // An assistant message right after another, with nothing between, where the source
            // splits responses: the same response. One request produced them, so they are one
            // call; replayed apart, each record would be a request ending in the model's own
            // message, which no agent sends.
            (AgentMessage::Assistant(reply), Some(call))
                if responses == Responses::Split && call.results.is_empty() =>
            {
                call.reply.content.extend(reply.content);
                if call.reply.stop_reason.as_deref() != Some("toolUse") {
                    call.reply.stop_reason = reply.stop_reason;
                }
            }
            (AgentMessage::Assistant(mut reply), _) => {
                // Replayed as the simulated model's replies, whoever wrote them.
                reply.api = Some(API.to_owned());
                reply.provider = Some(PROVIDER.to_owned());
                reply.model = Some(MODEL.to_owned());
                task.calls.push(Call {
                    reply,
                    results: Vec::new(),
                });
            }
            (other, Some(call)) => call.results.push(other),
            (other, None) => task.prompt.push(other),
        }
    }
    let mut trace = Trace {
        tasks,
        planted: Vec::new(),
        named: Vec::new(),
        real: true,
        provider_count: None,
    };
    trace.named = named_identifiers(&trace);
    trace.provider_count = super::provider_count::ProviderCount::of(&trace);
    trace
}

/// Calls `text` with every text of `message` that names identifiers: user and extension text,
/// assistant text and tool-call arguments (not thinking), tool results, shell commands and output.
fn texts_of(message: &AgentMessage, text: &mut impl FnMut(&str)) {
    let content = |content: &MessageContent, text: &mut dyn FnMut(&str)| match content {
        MessageContent::Text(value) => text(value),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(ContentBlock::as_text)
            .for_each(text),
    };
    match message {
        AgentMessage::User(user) => content(&user.content, text),
        AgentMessage::ToolResult(result) => content(&result.content, text),
        AgentMessage::Custom(custom) => content(&custom.content, text),
        AgentMessage::Assistant(reply) => {
            for block in &reply.content {
                match block {
                    ContentBlock::Text(block) => text(&block.text),
                    ContentBlock::ToolCall(call) => strings_of(&call.arguments, text),
                    ContentBlock::Image(_)
                    | ContentBlock::Thinking(_)
                    | ContentBlock::Unknown(_) => {}
                }
            }
        }
        AgentMessage::BashExecution(run) => {
            text(&run.command);
            text(&run.output);
        }
        AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => {}
    }
}

/// Every string inside a JSON value (tool-call arguments), keys excepted.
fn strings_of(value: &serde_json::Value, text: &mut impl FnMut(&str)) {
    match value {
        serde_json::Value::String(value) => text(value),
        serde_json::Value::Array(items) => items.iter().for_each(|item| strings_of(item, text)),
        serde_json::Value::Object(fields) => {
            fields.values().for_each(|item| strings_of(item, text))
        }
        serde_json::Value::Null | serde_json::Value::Bool(_) | serde_json::Value::Number(_) => {}
    }
}

/// Where an identifier was first seen.
enum FirstSeen {
    /// In the result of this tool call: at risk when named again.
    ToolResult(String),
    /// Anywhere else: the user or the model brought it in.
    Elsewhere,
}

/// The identifiers of `trace` at risk at some call, in order of first appearance.
fn named_identifiers(trace: &Trace) -> Vec<Named> {
    let mut first_seen: HashMap<String, (FirstSeen, IdentifierKind)> = HashMap::new();
    let mut named: Vec<Named> = Vec::new();
    let mut position: HashMap<String, usize> = HashMap::new();
    let see = |message: &AgentMessage, first_seen: &mut HashMap<_, _>| {
        let source = || match message {
            AgentMessage::ToolResult(result) => FirstSeen::ToolResult(result.tool_call_id.clone()),
            AgentMessage::User(_)
            | AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => FirstSeen::Elsewhere,
        };
        texts_of(message, &mut |text| {
            for_each_identifier(text, |identifier, kind| {
                if !first_seen.contains_key(identifier) {
                    first_seen.insert(identifier.to_owned(), (source(), kind));
                }
            });
        });
    };
    let mut call = 0;
    for task in &trace.tasks {
        for message in &task.prompt {
            see(message, &mut first_seen);
        }
        for planned in &task.calls {
            let reply = AgentMessage::Assistant(planned.reply.clone());
            texts_of(&reply, &mut |text| {
                for_each_identifier(text, |identifier, _| {
                    let Some((FirstSeen::ToolResult(tool_call_id), kind)) =
                        first_seen.get(identifier)
                    else {
                        return;
                    };
                    let index = *position.entry(identifier.to_owned()).or_insert_with(|| {
                        named.push(Named {
                            identifier: identifier.to_owned(),
                            kind: *kind,
                            tool_call_id: tool_call_id.clone(),
                            calls: Vec::new(),
                        });
                        named.len() - 1
                    });
                    if named[index].calls.last() != Some(&call) {
                        named[index].calls.push(call);
                    }
                });
            });
            see(&reply, &mut first_seen);
            for result in &planned.results {
                see(result, &mut first_seen);
            }
            call += 1;
        }
    }
    named
}

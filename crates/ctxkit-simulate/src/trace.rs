//! The agent trace the simulator replays, generated call by call from a seed: a user task, then
//! assistant turns that each call one tool (`read`, `grep`, `bash`, `edit`) and get a heavy-tailed
//! result, occasional thinking, a final answer that ends the run, and a new task every ~50 calls.
//!
//! Identifiers (file paths, function names, error codes, request ids) are planted deliberately in
//! task messages and tool outputs, each exactly once and each with a unique four-digit serial, so no
//! planted identifier is a substring of another and the list of what was planted where is exact.
//! The assistant never repeats them.

use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, TextContent,
    ThinkingContent, ToolCall, ToolResultMessage, UserMessage,
};
use serde_json::json;

use crate::rng::Rng;
use crate::text;

/// The model every reply comes from (and the engine's model, so overflow errors are "same model").
pub(crate) const PROVIDER: &str = "anthropic";
pub(crate) const MODEL: &str = "claude-sonnet-4-5";
pub(crate) const API: &str = "anthropic-messages";

const AREAS: &[&str] = &[
    "billing",
    "auth",
    "ingest",
    "scheduler",
    "storage",
    "render",
    "search",
    "notify",
];
const NOUNS: &[&str] = &[
    "ledger", "invoice", "token", "cursor", "batch", "shard", "quota", "webhook", "snapshot",
    "manifest", "replica", "bucket",
];
const VERBS: &[&str] = &[
    "reconcile",
    "flush",
    "resolve",
    "rebuild",
    "validate",
    "merge",
    "expire",
    "replay",
];

/// What a planted identifier looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentifierKind {
    /// `src/billing/ledger_0042.rs`
    FilePath,
    /// `reconcile_ledger_0042`
    FunctionName,
    /// `BILLING-E0042`
    ErrorCode,
    /// `req-3f9a2c71-0042`
    RequestId,
    /// A name in code found in a real session: `parse_header`, `readHeader`, `SessionEntry`.
    Symbol,
    /// A hexadecimal hash or id found in a real session: `9f2e358`, a UUID.
    HashOrId,
}

impl IdentifierKind {
    /// The kinds the generator plants.
    pub(crate) const ALL: [Self; 4] = [
        Self::FilePath,
        Self::FunctionName,
        Self::ErrorCode,
        Self::RequestId,
    ];

    /// The kinds found in a real session (`identifiers`).
    pub(crate) const NAMED: [Self; 4] = [
        Self::FilePath,
        Self::Symbol,
        Self::ErrorCode,
        Self::HashOrId,
    ];

    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::FilePath => "file paths",
            Self::FunctionName => "function names",
            Self::ErrorCode => "error codes",
            Self::RequestId => "request ids",
            Self::Symbol => "symbols",
            Self::HashOrId => "hashes and ids",
        }
    }
}

/// Where an identifier was planted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// The prompt of task `task`.
    Task { task: usize },
    /// The output of the tool call with this id.
    ToolResult { tool_call_id: String },
}

/// One planted identifier.
#[derive(Debug, Clone)]
pub(crate) struct Planted {
    pub identifier: String,
    pub kind: IdentifierKind,
    pub source: Source,
    /// The first request (0-based call index) whose input can hold it.
    pub first_request: usize,
}

/// One model call: the reply it gets and the messages that follow it before the next call (tool
/// results; in a real session also shell runs and extension messages). Messages carry no
/// timestamps that matter; the replay stamps them when it appends them.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// Its usage is replaced by the replay with the estimate of the request it measured.
    pub reply: AssistantMessage,
    pub results: Vec<AgentMessage>,
}

/// A user task and the agent run that works on it. The prompt is the messages before the first
/// call: the user's message (generated: exactly one; a real session: any, even none at its start).
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub prompt: Vec<AgentMessage>,
    pub calls: Vec<Call>,
}

/// The whole trace.
#[derive(Debug, Clone)]
pub(crate) struct Trace {
    pub tasks: Vec<Task>,
    /// Generated: the planted identifiers, in order of `first_request`. Empty for a real session.
    pub planted: Vec<Planted>,
    /// A real session: the identifiers a tool result showed first and the assistant named again
    /// (`session::named_identifiers`). Empty for a generated trace.
    pub named: Vec<super::session::Named>,
    /// Whether it is a real session (its recall follows `named`) or generated (`planted`).
    pub real: bool,
    /// A real session's recorded usage against ctxkit's estimate (`provider_count`): the replay
    /// gives the engine the provider's count of each request by it. `None` when generated or
    /// nothing was recorded.
    pub provider_count: Option<super::provider_count::ProviderCount>,
}

impl Trace {
    pub(crate) fn calls(&self) -> usize {
        self.tasks.iter().map(|task| task.calls.len()).sum()
    }

    /// Every message in the order an agent appends them.
    pub(crate) fn messages(&self) -> impl Iterator<Item = AgentMessage> + '_ {
        self.tasks.iter().flat_map(|task| {
            task.prompt
                .iter()
                .cloned()
                .chain(task.calls.iter().flat_map(|call| {
                    std::iter::once(AgentMessage::Assistant(call.reply.clone()))
                        .chain(call.results.iter().cloned())
                }))
        })
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TraceOptions {
    pub calls: usize,
    pub seed: u64,
}

struct Builder {
    rng: Rng,
    serial: usize,
    call: usize,
    planted: Vec<Planted>,
}

/// Generates the trace: equal options give equal traces.
pub(crate) fn generate_trace(options: TraceOptions) -> Trace {
    let mut builder = Builder {
        rng: Rng::fork(options.seed, 0x5133),
        serial: 0,
        call: 0,
        planted: Vec::new(),
    };
    let mut tasks = Vec::new();
    while builder.call < options.calls {
        let remaining = options.calls - builder.call;
        let length = builder.rng.range(30, 70).min(remaining);
        tasks.push(builder.task(tasks.len(), length));
    }
    builder.planted.sort_by_key(|planted| planted.first_request);
    Trace {
        tasks,
        planted: builder.planted,
        named: Vec::new(),
        real: false,
        provider_count: None,
    }
}

fn pick<'a>(rng: &mut Rng, table: &[&'a str]) -> &'a str {
    rng.pick(table).copied().unwrap_or("x")
}

impl Builder {
    fn log_uniform(&mut self, low: usize, high: usize) -> usize {
        self.rng.log_uniform(low, high)
    }

    /// A fresh identifier of `kind`, recorded as planted in `source`.
    fn plant(&mut self, kind: IdentifierKind, source: Source, first_request: usize) -> String {
        let serial = self.serial;
        self.serial += 1;
        let area = pick(&mut self.rng, AREAS);
        let noun = pick(&mut self.rng, NOUNS);
        let identifier = match kind {
            IdentifierKind::FilePath => format!("src/{area}/{noun}_{serial:04}.rs"),
            // The generator plants only `ALL`; the kinds of real sessions read as their nearest.
            IdentifierKind::FunctionName | IdentifierKind::Symbol => {
                let verb = pick(&mut self.rng, VERBS);
                format!("{verb}_{noun}_{serial:04}")
            }
            IdentifierKind::ErrorCode => format!("{}-E{serial:04}", area.to_uppercase()),
            IdentifierKind::RequestId | IdentifierKind::HashOrId => {
                format!("req-{:08x}-{serial:04}", self.rng.next_u64() as u32)
            }
        };
        self.planted.push(Planted {
            identifier: identifier.clone(),
            kind,
            source,
            first_request,
        });
        identifier
    }

    fn task(&mut self, index: usize, length: usize) -> Task {
        let source = || Source::Task { task: index };
        let first_request = self.call;
        let [path, function, code, request] =
            IdentifierKind::ALL.map(|kind| self.plant(kind, source(), first_request));
        let mut text = format!(
            "Task {}: users report {code} when the service calls `{function}`. The code is in \
             `{path}`; one failing request is {request}. Find the cause, fix it and keep the \
             tests green. ",
            index + 1
        );
        let size = self.log_uniform(100, 1_200);
        text::prose(&mut self.rng, &mut text, size);
        let prompt = vec![AgentMessage::User(UserMessage {
            content: MessageContent::Text(text),
            timestamp: None,
            extra: JsonObject::new(),
        })];
        let calls = (0..length)
            .map(|step| self.call(step + 1 == length))
            .collect();
        Task { prompt, calls }
    }

    fn call(&mut self, last: bool) -> Call {
        let mut content = Vec::new();
        if self.rng.chance(0.3) {
            let size = self.log_uniform(200, 6_000);
            let mut thinking = String::new();
            text::prose(&mut self.rng, &mut thinking, size);
            content.push(ContentBlock::Thinking(ThinkingContent {
                thinking,
                thinking_signature: Some("c2lnLXNpbXVsYXRlZA==".to_owned()),
                extra: JsonObject::new(),
            }));
        }
        if last || self.rng.chance(0.5) {
            let size = if last {
                self.log_uniform(300, 2_500)
            } else {
                self.log_uniform(60, 600)
            };
            let mut reply = String::new();
            text::prose(&mut self.rng, &mut reply, size);
            content.push(ContentBlock::text(reply));
        }
        let mut results = Vec::new();
        if !last {
            let id = format!(
                "toolu_{:016x}{:08x}",
                self.rng.next_u64(),
                self.rng.next_u64() as u32
            );
            let (name, arguments) = self.tool_arguments();
            results.push(AgentMessage::ToolResult(self.tool_result(&id, name)));
            content.push(ContentBlock::ToolCall(ToolCall {
                id,
                name: name.to_owned(),
                arguments,
                extra: JsonObject::new(),
            }));
        }
        self.call += 1;
        Call {
            reply: AssistantMessage {
                content,
                api: Some(API.to_owned()),
                provider: Some(PROVIDER.to_owned()),
                model: Some(MODEL.to_owned()),
                usage: None,
                stop_reason: Some(if last { "stop" } else { "toolUse" }.to_owned()),
                error_message: None,
                timestamp: None,
                extra: JsonObject::new(),
            },
            results,
        }
    }

    fn tool_arguments(&mut self) -> (&'static str, serde_json::Value) {
        let path = text::file_path(&mut self.rng);
        match self.rng.below(20) {
            0..=7 => ("read", json!({ "path": path })),
            8..=11 => ("grep", json!({ "pattern": "fn [a-z_]+", "path": path })),
            12..=16 => (
                "bash",
                json!({ "command": format!("cargo test -p {}", pick(&mut self.rng, AREAS)) }),
            ),
            _ => {
                let (mut old, mut new) = (String::new(), String::new());
                let (old_size, new_size) = (self.log_uniform(40, 600), self.log_uniform(40, 800));
                text::code(&mut self.rng, &mut old, old_size, false);
                text::code(&mut self.rng, &mut new, new_size, false);
                (
                    "edit",
                    json!({ "path": path, "oldText": old, "newText": new }),
                )
            }
        }
    }

    /// Most outputs are a few hundred characters, one in five is a few kilobytes and one in twenty
    /// is 20–80 KB.
    fn output_size(&mut self) -> usize {
        let roll = self.rng.unit();
        if roll < 0.75 {
            self.log_uniform(150, 1_500)
        } else if roll < 0.95 {
            self.log_uniform(1_500, 20_000)
        } else {
            self.log_uniform(20_000, 80_000)
        }
    }

    fn tool_result(&mut self, id: &str, name: &'static str) -> ToolResultMessage {
        let size = self.output_size();
        let mut output = String::with_capacity(size + 128);
        let kind = match name {
            "read" => {
                text::code(&mut self.rng, &mut output, size, true);
                Some(if self.rng.chance(0.5) {
                    IdentifierKind::FunctionName
                } else {
                    IdentifierKind::FilePath
                })
            }
            "grep" => {
                text::grep(&mut self.rng, &mut output, size);
                Some(IdentifierKind::FilePath)
            }
            "bash" => {
                text::log(&mut self.rng, &mut output, size);
                Some(if self.rng.chance(0.5) {
                    IdentifierKind::ErrorCode
                } else {
                    IdentifierKind::RequestId
                })
            }
            _ => {
                output.push_str("Successfully replaced text.");
                None
            }
        };
        if let Some(kind) = kind.filter(|_| self.rng.chance(0.2)) {
            let source = Source::ToolResult {
                tool_call_id: id.to_owned(),
            };
            let identifier = self.plant(kind, source, self.call + 1);
            let line = match kind {
                IdentifierKind::FilePath => {
                    format!("{identifier}:{}: let budget = 0;", self.rng.range(1, 900))
                }
                IdentifierKind::FunctionName | IdentifierKind::Symbol => {
                    format!("pub fn {identifier}(&self, batch: &Batch) -> Result<Summary> {{")
                }
                IdentifierKind::ErrorCode => format!(
                    "12:00:00.000 ERROR {identifier}: upstream rejected the write (code 409)"
                ),
                IdentifierKind::RequestId | IdentifierKind::HashOrId => {
                    format!("12:00:00.000 WARN  request {identifier} failed after 3 retries")
                }
            };
            insert_line(&mut self.rng, &mut output, &line);
        }
        ToolResultMessage {
            tool_call_id: id.to_owned(),
            tool_name: name.to_owned(),
            content: MessageContent::Blocks(vec![ContentBlock::Text(TextContent {
                text: output,
                extra: JsonObject::new(),
            })]),
            details: None,
            is_error: false,
            timestamp: None,
            extra: JsonObject::new(),
        }
    }
}

/// Inserts `line` before a uniformly drawn line of `output` (or at its end).
fn insert_line(rng: &mut Rng, output: &mut String, line: &str) {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(output.match_indices('\n').map(|(at, _)| at + 1))
        .filter(|at| *at < output.len())
        .collect();
    let at = starts.get(rng.below(starts.len() + 1)).copied();
    match at {
        Some(at) => output.insert_str(at, &format!("{line}\n")),
        None => {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(calls: usize) -> TraceOptions {
        TraceOptions { calls, seed: 7 }
    }

    #[test]
    fn traces_are_deterministic_and_exactly_as_long_as_asked() {
        let (a, b) = (generate_trace(options(300)), generate_trace(options(300)));
        assert_eq!(a.calls(), 300);
        let texts = |trace: &Trace| {
            trace
                .messages()
                .map(|message| serde_json::to_string(&message).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(texts(&a), texts(&b));
        for task in &a.tasks {
            let (last, rest) = task.calls.split_last().unwrap();
            assert!(last.results.is_empty());
            assert!(rest.iter().all(|call| call.results.len() == 1));
        }
    }

    #[test]
    fn every_planted_identifier_occurs_once_in_its_source() {
        let trace = generate_trace(options(400));
        assert!(trace.planted.len() > 4 * trace.tasks.len());
        let all: String = trace
            .messages()
            .map(|message| serde_json::to_string(&message).unwrap())
            .collect();
        for planted in &trace.planted {
            assert_eq!(
                all.matches(planted.identifier.as_str()).count(),
                1,
                "{planted:?}"
            );
        }
        for (one, other) in trace.planted.iter().zip(trace.planted.iter().skip(1)) {
            assert!(one.first_request <= other.first_request);
            assert!(!one.identifier.contains(other.identifier.as_str()));
        }
    }
}

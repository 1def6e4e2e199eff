//! `ctxkit serve` fed request lines from the bytes, as an agent in any language (or a broken
//! one) would send them: whatever they hold, the server ends within a time limit, every line it
//! writes is a JSON-RPC 2.0 message (or a batch of them), and each request with an id (a number
//! or a string, the object's only one; alone or in a batch) is answered exactly once, under that
//! id, up to the `shutdown` the server ends at.
//!
//! `@ROOT@` in the input stands for a temporary folder (the sessions are kept below it).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::OfflineSummarizer;
use ctxkit_compaction::Prompts;
use ctxkit_engine::EngineSettings;
use ctxkit_server::{DEFAULT_MAX_QUEUED_BYTES, ServerConfig, serve};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::AsyncReadExt as _;

/// The placeholder for the temporary folder.
const ROOT_PLACEHOLDER: &str = "@ROOT@";
/// The most request lines one input sends.
const MAX_LINES: usize = 24;
/// The longest request line the fuzzed server accepts (longer ones are answered with an error).
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// How long the server may take for one input.
const TIME_LIMIT: Duration = Duration::from_secs(20);

/// This input's folder, removed when dropped.
struct Folder(PathBuf);

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn folder() -> Folder {
    let root = crate::thread_temp_path("serve");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("sessions")).unwrap();
    Folder(root)
}

/// An object's members in the order written, each value as its text (`1e999` included), a key
/// written twice kept twice (a JSON value keeps the last one).
struct Members(Vec<(String, Box<RawValue>)>);

impl Members {
    /// The text of the member `key` when the object holds exactly one.
    fn only(&self, key: &str) -> Option<&str> {
        let mut found = self.0.iter().filter(|(name, _)| name == key);
        match (found.next(), found.next()) {
            (Some((_, value)), None) => Some(value.get()),
            _ => None,
        }
    }

    fn has(&self, key: &str) -> bool {
        self.0.iter().any(|(name, _)| name == key)
    }
}

impl<'de> serde::Deserialize<'de> for Members {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Members;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The requests of a line, as written: the line, or each element of a batch (an array). Space of
/// any kind around it is not part of it (the server reads `{…}` followed by a vertical tab).
fn requests_of(line: &str) -> Vec<Box<RawValue>> {
    let line = line.trim();
    if let Ok(batch) = serde_json::from_str::<Vec<Box<RawValue>>>(line) {
        return batch;
    }
    serde_json::from_str::<Box<RawValue>>(line)
        .map(|request| vec![request])
        .unwrap_or_default()
}

/// The id a request's answer must carry, as its text: the one `id` of an object, a number or a
/// string (an object naming two has none).
fn request_id(request: &RawValue) -> Option<String> {
    let members: Members = serde_json::from_str(request.get()).ok()?;
    let id = members.only("id")?;
    id.starts_with(['"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
        .then(|| id.to_owned())
}

fn is_shutdown(request: &RawValue) -> bool {
    let Ok(members) = serde_json::from_str::<Members>(request.get()) else {
        return false;
    };
    members
        .0
        .iter()
        .filter(|(key, _)| key == "method")
        .any(|(_, method)| {
            serde_json::from_str::<String>(method.get()).is_ok_and(|name| name == "shutdown")
        })
}

/// How many answers each id is owed.
type Owed = BTreeMap<String, usize>;

/// `line` with every `session_dir` it names moved below `root`: the client chooses where a session
/// is written, and a mutated one (`/A0z@ROOT@`) would write anywhere on this machine.
fn confined(line: &str, root: &str) -> String {
    fn confine(value: &mut Value, root: &str) -> bool {
        match value {
            Value::Object(map) => {
                let mut changed = false;
                for (key, value) in map.iter_mut() {
                    if key == "session_dir" {
                        *value = Value::String(format!("{root}/dirs/one"));
                        changed = true;
                    } else {
                        changed |= confine(value, root);
                    }
                }
                changed
            }
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, item| confine(item, root) | changed),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => false,
        }
    }
    let Ok(mut value) = serde_json::from_str::<Value>(line) else {
        return line.to_owned();
    };
    if confine(&mut value, root) {
        value.to_string()
    } else {
        line.to_owned()
    }
}

/// The lines sent, and what is owed if the server ends after each line holding a `shutdown` (it
/// may refuse one as malformed and go on) or at the end.
fn requests(input: &str, root: &str) -> (String, Vec<Owed>) {
    // A line over the limit is answered without its id (it is not read): not sent here.
    let lines: Vec<String> = input
        .split('\n')
        .filter(|line| line.len() <= MAX_REQUEST_BYTES / 2)
        .take(MAX_LINES)
        .map(|line| confined(line, root))
        .collect();
    let mut owed = Owed::new();
    let mut endings = Vec::new();
    for line in &lines {
        // The server reads a lone surrogate escape (`"\ud800"`, which a JSON object cannot hold
        // as a key) as U+FFFD, and so answers the request it is in: counted the same way here.
        let requests = requests_of(&ctxkit_protocol::repair_lone_surrogates(line));
        for id in requests.iter().filter_map(|request| request_id(request)) {
            *owed.entry(id).or_insert(0) += 1;
        }
        if requests.iter().any(|request| is_shutdown(request)) {
            endings.push(owed.clone());
        }
    }
    endings.push(owed);
    (lines.join("\n"), endings)
}

/// Serves the request lines of `data`; see the module's documentation.
pub fn serve_requests(data: &[u8]) {
    let folder = folder();
    let root = folder.0.to_string_lossy().into_owned();
    let text = String::from_utf8_lossy(data).replace(ROOT_PLACEHOLDER, &root);
    let (sent, endings) = requests(&text, &root);
    let answered = answers(&run_server(&sent, &folder));
    assert!(
        endings.contains(&answered),
        "requests answered other than once each: {answered:?}, owed {endings:?}"
    );
}

/// What the server writes for `sent`, its sessions below `folder`.
fn run_server(sent: &str, folder: &Folder) -> String {
    let config = ServerConfig {
        settings: EngineSettings::default(),
        summarizer: Arc::new(OfflineSummarizer::default()),
        prompts: Prompts::default(),
        model: None,
        sessions_root: folder.0.join("sessions"),
        agent: None,
        max_request_bytes: MAX_REQUEST_BYTES,
        max_queued_bytes: DEFAULT_MAX_QUEUED_BYTES,
        foreign_hint: None,
        store: None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (writer, mut reader) = tokio::io::duplex(64 * 1024);
        let mut output = String::new();
        let served = tokio::time::timeout(TIME_LIMIT, async {
            tokio::join!(
                serve(config, sent.as_bytes(), writer),
                reader.read_to_string(&mut output),
            )
        })
        .await;
        let (served, read) = served.expect("the server ends within the time limit");
        served.expect("the server ends without an I/O error");
        read.expect("its output is UTF-8");
        output
    })
}

/// How many answers each id got, every line checked as JSON-RPC 2.0 on the way.
fn answers(output: &str) -> Owed {
    let mut answered = Owed::new();
    let messages = output.lines().flat_map(|line| {
        let messages = requests_of(line);
        assert!(
            !messages.is_empty(),
            "a line written is no JSON message: {line}"
        );
        messages
    });
    for message in messages {
        let line = message.get();
        let members: Members = serde_json::from_str(line).expect("each message is an object");
        assert_eq!(
            members.only("jsonrpc"),
            Some("\"2.0\""),
            "not JSON-RPC 2.0: {line}"
        );
        let Some(id) = members.only("id") else {
            assert!(
                members.has("method"),
                "a message neither answer nor notice: {line}"
            );
            continue;
        };
        let outcomes = usize::from(members.has("result")) + usize::from(members.has("error"));
        assert_eq!(outcomes, 1, "an answer holds one outcome: {line}");
        if id != "null" {
            // An id comes back as written, a lone surrogate escape too; the ids owed are counted
            // as the server reads the request (repaired), so the answer's is compared the same way.
            let id = ctxkit_protocol::repair_lone_surrogates(id).into_owned();
            *answered.entry(id).or_insert(0) += 1;
        }
    }
    answered
}

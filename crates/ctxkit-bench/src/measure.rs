//! ctxkit's side of the side-by-side harness: one operation on one input, timed in this process,
//! with the process's peak resident memory.
//!
//! Each operation mirrors what `bench/side-by-side/pi-op.mjs` does with the reference: setup (such as
//! opening the session) is outside the timed span unless the operation *is* the setup.

use std::path::Path;

use anyhow::Context as _;
use std::time::Instant;

use ctxkit_compaction::{CompactionSettings, prepare_compaction};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::{Session, list_sessions};
use ctxkit_tokens::{Encoding, count_text_tokens};
use serde_json::json;

/// The operations both sides implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Operation {
    /// `Session::open` (read, parse, migrate, index).
    Open,
    /// `Session::open`, then `build_context` and every message as JSON, timed as one span.
    OpenContext,
    /// `build_context` on an open session.
    Context,
    /// `build_context` and materializing every message as JSON (what a provider call needs).
    ContextValues,
    /// `prepare_compaction` at the leaf with default settings.
    Prepare,
    /// `tree` of the whole session.
    Tree,
    /// `create_branched_session` at the leaf (writes a new file next to the input).
    Branch,
    /// 1000 `append_message` calls (user and assistant alternating) to the input file.
    Append,
    /// 10,000 `append_message` calls, each written and flushed (`Durability::Flush`, the default).
    #[value(name = "append10k")]
    Append10k,
    /// 10,000 `append_message` calls, each synced to the disk (`Durability::SyncEach`).
    #[value(name = "append10k-sync-each")]
    Append10kSyncEach,
    /// 10,000 `append_message` calls, synced every 64 appends (`Durability::SyncEvery(64)`).
    #[value(name = "append10k-sync-every-64")]
    Append10kSyncEvery64,
    /// 10,000 messages by `append_messages` in batches of 64, each batch synced (group commit).
    #[value(name = "append10k-group-64-sync-each")]
    Append10kGroup64SyncEach,
    /// `list_sessions` of the input directory.
    List,
    /// Exact `cl100k_base` token count of the input text file.
    Tokens,
}

/// One measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Wall-clock seconds of the timed span.
    pub seconds: f64,
    /// Peak resident set of the whole process (`VmHWM`), bytes; 0 where `/proc` is unavailable.
    pub peak_rss_bytes: u64,
    /// A short check value both sides should agree on (counts, ids).
    pub check: String,
}

impl Measurement {
    /// The JSON line the driver reads: `{"seconds", "peakRssBytes", "check"}`.
    pub fn to_json(&self) -> String {
        json!({"seconds": self.seconds, "peakRssBytes": self.peak_rss_bytes, "check": self.check})
            .to_string()
    }
}

/// The peak resident set of this process, from `/proc/self/status`.
pub fn peak_rss_bytes() -> u64 {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

fn timed<T>(work: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<(f64, T)> {
    let start = Instant::now();
    let value = work()?;
    Ok((start.elapsed().as_secs_f64(), value))
}

fn messages_to_append(count: usize) -> anyhow::Result<Vec<AgentMessage>> {
    (0..count)
        .map(|i| {
            let value = if i % 2 == 0 {
                json!({"role": "user", "content": format!("Appended prompt {i}: run the tests again."),
                    "timestamp": 1_750_000_000_000_i64 + i as i64})
            } else {
                json!({"role": "assistant", "content": [{"type": "text", "text": format!("Reply {i}: all tests pass.")}],
                    "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                    "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                    "stopReason": "stop", "timestamp": 1_750_000_000_000_i64 + i as i64})
            };
            Ok(serde_json::from_value(value)?)
        })
        .collect()
}

/// Runs `operation` on `input` (a session file, a directory for `List`, a text file for `Tokens`).
pub fn run_operation(operation: Operation, input: &Path) -> anyhow::Result<Measurement> {
    let (seconds, check) = match operation {
        Operation::Open => {
            let (seconds, session) = timed(|| Ok(Session::open(input)?))?;
            (seconds, format!("{} entries", session.entries().len()))
        }
        Operation::OpenContext => {
            // The session is dropped after the clock stops, as for `Open` (and as Pi's is left to
            // its garbage collector): freeing it is not part of opening it.
            let (seconds, (_session, count)) = timed(|| {
                let session = Session::open(input)?;
                let count = materialize_context(&session)?;
                Ok((session, count))
            })?;
            (seconds, format!("{count} messages"))
        }
        Operation::List => {
            let (seconds, (records, skipped)) = timed(|| Ok(list_sessions(input)?))?;
            (
                seconds,
                format!("{} sessions, {} skipped", records.len(), skipped.len()),
            )
        }
        Operation::Tokens => {
            let text = std::fs::read_to_string(input)?;
            count_text_tokens("warm up the vocabulary", Encoding::Cl100kBase);
            let (seconds, tokens) = timed(|| Ok(count_text_tokens(&text, Encoding::Cl100kBase)))?;
            (seconds, format!("{tokens} tokens"))
        }
        Operation::Context
        | Operation::ContextValues
        | Operation::Prepare
        | Operation::Tree
        | Operation::Branch
        | Operation::Append
        | Operation::Append10k
        | Operation::Append10kSyncEach
        | Operation::Append10kSyncEvery64
        | Operation::Append10kGroup64SyncEach => return run_on_open_session(operation, input),
    };
    Ok(Measurement {
        seconds,
        peak_rss_bytes: peak_rss_bytes(),
        check,
    })
}

/// Builds the leaf's context and parses every message in it; the number of messages parsed.
fn materialize_context(session: &Session) -> anyhow::Result<usize> {
    let context = session.build_context();
    let values = session.message_values(&context.messages)?;
    Ok(values.iter().filter(|value| value.is_object()).count())
}

fn run_on_open_session(operation: Operation, input: &Path) -> anyhow::Result<Measurement> {
    let mut session = Session::open(input)?;
    let (seconds, check) = match operation {
        Operation::Context => {
            let (seconds, context) = timed(|| Ok(session.build_context()))?;
            (seconds, format!("{} messages", context.messages.len()))
        }
        Operation::ContextValues => {
            let (seconds, count) = timed(|| materialize_context(&session))?;
            (seconds, format!("{count} messages"))
        }
        Operation::Prepare => {
            let (seconds, outcome) = timed(|| {
                Ok(prepare_compaction(
                    &session,
                    None,
                    CompactionSettings::default(),
                )?)
            })?;
            let check = match outcome {
                Ok(plan) => format!(
                    "keep from {}, {} tokens before",
                    plan.first_kept_entry_id, plan.tokens_before
                ),
                Err(reason) => format!("no plan: {reason:?}"),
            };
            (seconds, check)
        }
        Operation::Tree => {
            let (seconds, nodes) = timed(|| Ok(session.tree()))?;
            (seconds, format!("{} nodes", nodes.len()))
        }
        Operation::Branch => {
            let leaf = session.leaf_id().map(str::to_owned).unwrap_or_default();
            let (seconds, path) = timed(|| Ok(session.create_branched_session(&leaf)?))?;
            (seconds, format!("written: {}", path.is_some()))
        }
        Operation::Append => {
            let messages = messages_to_append(1000)?;
            let (seconds, ()) = timed(|| {
                for message in messages {
                    session.append_message(message)?;
                }
                Ok(())
            })?;
            (seconds, format!("{} entries", session.entries().len()))
        }
        Operation::Append10k | Operation::Append10kSyncEach | Operation::Append10kSyncEvery64 => {
            let durability = if operation == Operation::Append10kSyncEach {
                ctxkit_session::Durability::SyncEach
            } else if operation == Operation::Append10kSyncEvery64 {
                ctxkit_session::Durability::SyncEvery(
                    std::num::NonZeroU32::new(64).context("64 is not zero")?,
                )
            } else {
                ctxkit_session::Durability::Flush
            };
            session.set_durability(durability);
            let messages = messages_to_append(10_000)?;
            let (seconds, ()) = timed(|| {
                for message in messages {
                    session.append_message(message)?;
                }
                Ok(())
            })?;
            (seconds, format!("{} entries", session.entries().len()))
        }
        Operation::Append10kGroup64SyncEach => {
            session.set_durability(ctxkit_session::Durability::SyncEach);
            let messages = messages_to_append(10_000)?;
            let (seconds, ()) = timed(|| {
                for batch in messages.chunks(64) {
                    session.append_messages(batch.to_vec())?;
                }
                Ok(())
            })?;
            (seconds, format!("{} entries", session.entries().len()))
        }
        Operation::Open | Operation::OpenContext | Operation::List | Operation::Tokens => {
            anyhow::bail!("Operation `{operation:?}` does not start from an open session")
        }
    };
    Ok(Measurement {
        seconds,
        peak_rss_bytes: peak_rss_bytes(),
        check,
    })
}

//! `ctxkit-crash-writer`: appends messages and compactions to a session through
//! `ctxkit_session::Session` and prints `ack <id> <kind>` on stdout right after each append returned.
//! `ctxkit-crash` runs it, kills it, and checks the file against the acknowledgements.
//!
//! It prints `ready` once the session is open. Entries held back by the deferred first write (a new session is written with its first assistant
//! message) are acknowledged when that write returns.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ctxkit_bench::crash::{Ack, AppendKind, parse_durability, payload};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::{Durability, NewCompaction, Session, SessionError, SummarySource};
use ctxkit_simulate::Rng;
use serde_json::json;

/// Append entries to a session and acknowledge each one on stdout.
#[derive(Debug, Parser)]
struct Args {
    /// Continue the most recent session in this directory, or create one there.
    #[arg(long, conflicts_with = "file", required_unless_present = "file")]
    dir: Option<PathBuf>,
    /// Open this session file.
    #[arg(long)]
    file: Option<PathBuf>,
    /// Seed of the entry kinds and sizes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// `flush`, `sync` or `every:N`.
    #[arg(long, default_value = "flush", value_parser = parse_durability)]
    durability: Durability,
    /// Stop after this many appends (default: run until killed).
    #[arg(long)]
    count: Option<u64>,
    /// Close and reopen the session after this many appends (each reopen takes the writer lock
    /// again, so concurrent writers take turns).
    #[arg(long)]
    reopen_every: Option<u64>,
    /// When another process holds the session, wait and retry instead of failing.
    #[arg(long)]
    retry_locked: bool,
    /// Largest payload, characters.
    #[arg(long, default_value_t = 1 << 20)]
    max_payload: usize,
    /// Share of large entries (64k characters up to `--max-payload`), percent: the writes a kill
    /// can cut in the middle.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=100))]
    large_percent: u8,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let code = match &error {
                SessionError::Locked { .. }
                | SessionError::ChangedOnDisk { .. }
                | SessionError::FileChanged { .. }
                | SessionError::LineChanged { .. } => 5,
                SessionError::Io { .. }
                | SessionError::TailUnrepaired { .. }
                | SessionError::NotARegularFile { .. }
                | SessionError::TooLarge { .. }
                | SessionError::CannotMigrate { .. }
                | SessionError::NewerVersion { .. }
                | SessionError::NotASession { .. }
                | SessionError::EntryNotFound { .. }
                | SessionError::NotEditable { .. }
                | SessionError::ResultWithoutCall { .. }
                | SessionError::InvalidEntry { .. }
                | SessionError::Serialize(_) => 4,
            };
            let _ = writeln!(std::io::stderr(), "error: {error}");
            ExitCode::from(code)
        }
    }
}

fn open(args: &Args) -> Result<Session, SessionError> {
    let mut session = match (&args.file, &args.dir) {
        (Some(file), _) => Session::open(file)?,
        (None, Some(dir)) => Session::continue_recent("/crash", dir)?,
        (None, None) => Session::continue_recent("/crash", Path::new("."))?,
    };
    session.set_durability(args.durability);
    Ok(session)
}

fn run(args: &Args) -> Result<(), SessionError> {
    let mut rng = Rng::new(args.seed);
    let mut stdout = std::io::stdout().lock();
    let mut session = open(args)?;
    // The harness times its kill from here (or, sometimes, from the start).
    let _ = writeln!(stdout, "ready");
    let _ = stdout.flush();
    let mut held_back: Vec<Ack> = Vec::new();
    let mut since_open = 0;
    let mut retries = 0u64;
    let mut appended = 0;
    while args.count.is_none_or(|count| appended < count) {
        if args.reopen_every.is_some_and(|every| since_open >= every) {
            drop(session);
            session = open(args)?;
            since_open = 0;
        }
        let kind = choose_kind(&mut rng, &session);
        let length = choose_length(&mut rng, args.max_payload, usize::from(args.large_percent));
        let key = format!("{}-{appended}-{}", args.seed, rng.next_u64() % 1_000_000);
        match append(&mut session, kind, &key, length, &mut rng) {
            Ok((id, key)) => {
                held_back.push(Ack { id, kind, key });
                if session.index().has_conversation() {
                    for ack in held_back.drain(..) {
                        let _ = writeln!(stdout, "{}", ack.line());
                    }
                    let _ = stdout.flush();
                }
                appended += 1;
                since_open += 1;
            }
            Err(SessionError::Locked { .. } | SessionError::ChangedOnDisk { .. })
                if args.retry_locked =>
            {
                retries += 1;
                drop(session);
                std::thread::sleep(Duration::from_micros(200 + rng.below(2_000) as u64));
                session = open(args)?;
                since_open = 0;
            }
            Err(error) => return Err(error),
        }
    }
    let _ = writeln!(stdout, "retries {retries}");
    Ok(())
}

fn choose_kind(rng: &mut Rng, session: &Session) -> AppendKind {
    let roll = rng.below(100);
    if session.leaf_id().is_some() && roll < 8 {
        AppendKind::Compaction
    } else if roll < 35 {
        AppendKind::User
    } else if roll < 75 {
        AppendKind::Assistant
    } else {
        AppendKind::ToolResult
    }
}

/// Mostly short entries, some tool-output sized, `large_percent` large ones (large writes are the
/// ones a kill can cut in the middle).
fn choose_length(rng: &mut Rng, max: usize, large_percent: usize) -> usize {
    let roll = rng.below(100);
    let (low, high) = if roll < large_percent {
        (64_000, max)
    } else if roll < large_percent + (100 - large_percent) * 85 / 100 {
        (0, 2_000)
    } else {
        (2_000, 64_000)
    };
    rng.range(low.min(max), high.min(max))
}

fn append(
    session: &mut Session,
    kind: AppendKind,
    key: &str,
    length: usize,
    rng: &mut Rng,
) -> Result<(String, String), SessionError> {
    let text = payload(key, length);
    let id = match kind {
        AppendKind::Compaction => {
            let path = session.branch_path(None);
            let kept = path[rng.below(path.len())].id().to_owned();
            session.append_compaction(NewCompaction {
                summary: text,
                first_kept_entry_id: kept,
                tokens_before: rng.below(200_000) as u64,
                details: None,
                source: SummarySource::Ctxkit,
            })
        }
        AppendKind::User | AppendKind::Assistant | AppendKind::ToolResult => {
            session.append_message(message(kind, &text))
        }
    }?;
    Ok((id, key.to_owned()))
}

fn message(kind: AppendKind, text: &str) -> AgentMessage {
    let value = match kind {
        AppendKind::User => json!({"role": "user", "content": text, "timestamp": 1}),
        AppendKind::Assistant => json!({
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "stopReason": "stop", "timestamp": 2
        }),
        AppendKind::ToolResult | AppendKind::Compaction => json!({
            "role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
            "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 3
        }),
    };
    serde_json::from_value(value).unwrap_or_else(|_| {
        AgentMessage::Unknown(serde_json::Map::from_iter([(
            "role".to_owned(),
            json!("unreadable"),
        )]))
    })
}

//! `ctxkit-durability`: the cost of each durability mode. Appends the same messages to a new session
//! in each mode and prints entries per second and per-append latencies as a Markdown table.
//!
//! Run it on the disk that will hold sessions (not a tmpfs, where `fsync` costs nothing).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use clap::Parser;
use ctxkit_bench::crash::{durability_name, parse_durability, payload};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::{Durability, Session};
use serde_json::json;

/// Measure appends per second in each durability mode.
#[derive(Debug, Parser)]
struct Args {
    /// Directory to write the sessions in (a temporary directory inside it is removed at the end).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Appends per mode.
    #[arg(long, default_value_t = 10_000)]
    entries: usize,
    /// Characters of text per message.
    #[arg(long, default_value_t = 400)]
    payload: usize,
    /// Modes to measure, in order.
    #[arg(long, value_delimiter = ',', default_value = "flush,sync,every:10,every:100", value_parser = parse_durability)]
    modes: Vec<Durability>,
}

fn main() -> std::process::ExitCode {
    match run(&Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<()> {
    let work = tempfile::tempdir_in(&args.dir)
        .with_context(|| format!("cannot create a directory in {}", args.dir.display()))?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} appends of ~{} characters per mode, in {}\n",
        args.entries,
        args.payload,
        args.dir.display()
    )?;
    writeln!(
        out,
        "| mode | entries/s | mean µs | p50 µs | p99 µs | max µs | total s |"
    )?;
    writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
    for (number, mode) in args.modes.iter().enumerate() {
        let dir = work.path().join(format!("mode-{number}"));
        let (mut latencies, total) = measure(&dir, *mode, args.entries, args.payload)?;
        latencies.sort_unstable();
        let micros = |duration: Duration| duration.as_secs_f64() * 1e6;
        let at = |fraction: f64| {
            latencies
                .get(((latencies.len() as f64 - 1.0) * fraction).round() as usize)
                .copied()
                .unwrap_or_default()
        };
        writeln!(
            out,
            "| {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |",
            durability_name(*mode),
            args.entries as f64 / total.as_secs_f64(),
            micros(total) / args.entries as f64,
            micros(at(0.5)),
            micros(at(0.99)),
            micros(at(1.0)),
            total.as_secs_f64()
        )?;
    }
    Ok(())
}

/// Appends `entries` messages (after a first user/assistant pair that creates the file) and returns
/// each append's latency and the total.
fn measure(
    dir: &Path,
    mode: Durability,
    entries: usize,
    length: usize,
) -> Result<(Vec<Duration>, Duration)> {
    let mut session = Session::create("/bench", dir);
    session.set_durability(mode);
    session.append_message(message("user", &payload("first", length))?)?;
    session.append_message(message("assistant", &payload("reply", length))?)?;
    let messages: Vec<AgentMessage> = (0..entries)
        .map(|number| {
            let role = if number % 2 == 0 { "user" } else { "assistant" };
            message(role, &payload(&number.to_string(), length))
        })
        .collect::<Result<_>>()?;
    let mut latencies = Vec::with_capacity(entries);
    let started = Instant::now();
    for message in messages {
        let before = Instant::now();
        session.append_message(message)?;
        latencies.push(before.elapsed());
    }
    drop(session);
    Ok((latencies, started.elapsed()))
}

fn message(role: &str, text: &str) -> Result<AgentMessage> {
    let value = match role {
        "user" => json!({"role": "user", "content": text, "timestamp": 1}),
        _ => json!({
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "stopReason": "stop", "timestamp": 2
        }),
    };
    Ok(serde_json::from_value(value)?)
}

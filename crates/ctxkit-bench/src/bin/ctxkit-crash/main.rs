//! `ctxkit-crash`: the crash and concurrency harness of `docs/reliability.md`.
//!
//! `kill`: runs `ctxkit-crash-writer` on a session directory, SIGKILLs it at a random moment (seeded),
//! and checks after every kill that the file opens, every acknowledged entry is there and intact, at
//! most the in-flight append is missing or torn, `ctxkit check` reports exactly the torn lines, and
//! the next run's first append starts on its own line.
//!
//! `concurrent`: several writer processes on one session (taking turns, or refused with the PID of
//! the holder), several `ctxkit name` and `ctxkit config set` processes at once.

mod concurrent;
mod kill;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use clap::{Parser, Subcommand};
use ctxkit_bench::crash::Ack;

/// Crash-safety and concurrency harness for the session store.
#[derive(Debug, Parser)]
struct Args {
    #[command(subcommand)]
    command: Mode,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Kill a writer at random moments and check the file after each kill.
    Kill {
        /// How many kills.
        #[arg(long, default_value_t = 1000)]
        kills: u64,
        /// Seed of the kill moments, durability modes and writer seeds.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Kill at a uniform random moment up to this long after the writer starts, ms.
        #[arg(long, default_value_t = 40)]
        max_delay_ms: u64,
        /// Start a new session directory after this many kills (so new-file creation is killed too,
        /// and files stay small enough to reload after every kill).
        #[arg(long, default_value_t = 25)]
        kills_per_file: u64,
        /// Largest payload of one entry, characters.
        #[arg(long, default_value_t = 1 << 20)]
        max_payload: usize,
        /// Share of large entries, percent (kills during their writes tear lines).
        #[arg(long, default_value_t = 5)]
        large_percent: u8,
        /// Work directory (default: a temporary directory, removed at the end).
        #[arg(long)]
        work: Option<PathBuf>,
        /// The `ctxkit` binary for `ctxkit check` (default: beside this program).
        #[arg(long)]
        ctxkit: Option<PathBuf>,
    },
    /// Several writers at once on one session, and several `ctxkit` processes at once.
    Concurrent {
        /// Writer processes per scenario.
        #[arg(long, default_value_t = 8)]
        writers: u64,
        /// Appends per writer.
        #[arg(long, default_value_t = 200)]
        appends: u64,
        /// Seed of the writers.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The `ctxkit` binary (default: beside this program).
        #[arg(long)]
        ctxkit: Option<PathBuf>,
    },
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Mode::Kill {
            kills,
            seed,
            max_delay_ms,
            kills_per_file,
            max_payload,
            large_percent,
            work,
            ctxkit,
        } => kill::kill_mode(&kill::KillOptions {
            kills,
            seed,
            max_delay: Duration::from_millis(max_delay_ms),
            kills_per_file: kills_per_file.max(1),
            max_payload,
            large_percent,
            work,
            ctxkit,
        }),
        Mode::Concurrent {
            writers,
            appends,
            seed,
            ctxkit,
        } => concurrent::concurrent_mode(writers, appends, seed, ctxkit),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "FAILED: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn say(text: &str) {
    let _ = writeln!(std::io::stdout(), "{text}");
}

fn sibling(name: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let path = exe.with_file_name(name);
    ensure!(
        path.exists(),
        "`{}` not found; build it first (`cargo build --release -p ctxkit-bench -p ctxkit-cli`)",
        path.display()
    );
    Ok(path)
}

fn ctxkit_binary(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(path) => Ok(path),
        None => sibling("ctxkit"),
    }
}

/// A child whose stdout is read on a thread (so a full pipe never stalls it); each line is also
/// sent on `lines` as it arrives.
struct Running {
    child: Child,
    stdout: JoinHandle<String>,
    stderr: JoinHandle<String>,
    lines: Receiver<String>,
}

fn spawn(mut command: Command) -> Result<Running> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {command:?}"))?;
    let (sender, lines) = std::sync::mpsc::channel();
    let stdout = reader(child.stdout.take(), Some(sender));
    let stderr = reader(child.stderr.take(), None);
    Ok(Running {
        child,
        stdout,
        stderr,
        lines,
    })
}

fn reader(
    pipe: Option<impl Read + Send + 'static>,
    lines: Option<Sender<String>>,
) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = pipe {
            let mut pipe = BufReader::new(pipe);
            let mut line = String::new();
            while pipe.read_line(&mut line).is_ok_and(|read| read > 0) {
                if let Some(lines) = &lines {
                    let _ = lines.send(line.clone());
                }
                text.push_str(&line);
                line.clear();
            }
        }
        text
    })
}

fn finish(mut running: Running) -> Result<(ExitStatus, String, String)> {
    let status = running.child.wait().context("cannot wait for a child")?;
    let stdout = running.stdout.join().unwrap_or_default();
    let stderr = running.stderr.join().unwrap_or_default();
    Ok((status, stdout, stderr))
}

fn acks_of(stdout: &str) -> Vec<Ack> {
    stdout.lines().filter_map(Ack::parse).collect()
}

fn session_files(dir: &Path) -> Result<(Vec<PathBuf>, usize)> {
    let mut sessions = Vec::new();
    let mut others = 0;
    if !dir.exists() {
        return Ok((sessions, others));
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "jsonl")
        {
            sessions.push(path);
        } else {
            others += 1;
        }
    }
    Ok((sessions, others))
}

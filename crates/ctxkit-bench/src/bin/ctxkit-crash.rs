//! `ctxkit-crash`: the crash and concurrency harness of `docs/reliability.md`.
//!
//! `kill`: runs `ctxkit-crash-writer` on a session directory, SIGKILLs it at a random moment (seeded),
//! and checks after every kill that the file opens, every acknowledged entry is there and intact, at
//! most the in-flight append is missing or torn, `ctxkit check` reports exactly the torn lines, and
//! the next run's first append starts on its own line.
//!
//! `concurrent`: several writer processes on one session (taking turns, or refused with the PID of
//! the holder), several `ctxkit name` and `ctxkit config set` processes at once.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use clap::{Parser, Subcommand};
use ctxkit_bench::crash::{Ack, check_entry, check_run};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use ctxkit_simulate::Rng;
use serde_json::Value;

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
        } => kill_mode(&KillOptions {
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
        } => concurrent_mode(writers, appends, seed, ctxkit),
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

// ----- kill --------------------------------------------------------------------------------------

#[derive(Debug)]
struct KillOptions {
    kills: u64,
    seed: u64,
    max_delay: Duration,
    kills_per_file: u64,
    max_payload: usize,
    large_percent: u8,
    work: Option<PathBuf>,
    ctxkit: Option<PathBuf>,
}

#[derive(Debug, Default)]
struct Totals {
    kills: u64,
    acknowledged: u64,
    lost: u64,
    torn_tails: u64,
    unterminated_tails: u64,
    in_flight_whole: u64,
    terminated: u64,
    killed_before_first_write: u64,
    stray_temporary_files: usize,
    files: u64,
    bytes: u64,
    check_runs: u64,
}

/// What the harness knows about one session directory.
#[derive(Debug, Default)]
struct FileState {
    dir: PathBuf,
    bytes: Vec<u8>,
    acked: Vec<Ack>,
    /// Line numbers of torn fragments (they stay in the file, terminated).
    torn_lines: BTreeSet<usize>,
}

const MODES: [&str; 4] = ["flush", "sync", "every:8", "flush"];

fn kill_mode(options: &KillOptions) -> Result<()> {
    let writer = sibling("ctxkit-crash-writer")?;
    let ctxkit = ctxkit_binary(options.ctxkit.clone())?;
    let temporary = tempfile::tempdir_in(std::env::current_dir()?)?;
    let work = options
        .work
        .clone()
        .unwrap_or_else(|| temporary.path().to_owned());
    let mut rng = Rng::new(options.seed);
    let mut totals = Totals::default();
    let mut state = FileState::default();
    let started = Instant::now();
    for kill in 0..options.kills {
        if kill % options.kills_per_file == 0 {
            if kill > 0 {
                close_file(&state, &mut totals)?;
            }
            state = FileState {
                dir: work.join(format!("file-{}", kill / options.kills_per_file)),
                ..FileState::default()
            };
        }
        one_kill(
            options,
            &writer,
            &ctxkit,
            &mut rng,
            kill,
            &mut state,
            &mut totals,
        )
        .with_context(|| format!("kill {kill} in `{}`", state.dir.display()))?;
        if (kill + 1) % 100 == 0 {
            say(&format!(
                "{} kills, {} acknowledged entries checked, {} torn tails, {:.0?}",
                kill + 1,
                totals.acknowledged,
                totals.torn_tails,
                started.elapsed()
            ));
        }
    }
    close_file(&state, &mut totals)?;
    let elapsed = started.elapsed();
    say(&format!(
        "kills: {}\nacknowledged entries: {}\nacknowledged entries lost or damaged: {}\n\
         torn last lines (reported by `ctxkit check`, terminated by the next append): {}\n\
         whole JSON last lines without newline: {}\n\
         in-flight whole lines (written, not acknowledged): {}\n\
         torn tails terminated by the next run: {}\n\
         kills before a new file's first write: {}\n\
         temporary files left beside sessions by kills: {}\n\
         session files: {}, bytes written: {}\n`ctxkit check` runs: {}\nelapsed: {:.1?}",
        totals.kills,
        totals.acknowledged,
        totals.lost,
        totals.torn_tails,
        totals.unterminated_tails,
        totals.in_flight_whole,
        totals.terminated,
        totals.killed_before_first_write,
        totals.stray_temporary_files,
        totals.files,
        totals.bytes,
        totals.check_runs,
        elapsed
    ));
    ensure!(totals.lost == 0, "acknowledged entries were lost");
    Ok(())
}

fn one_kill(
    options: &KillOptions,
    writer: &Path,
    ctxkit: &Path,
    rng: &mut Rng,
    kill: u64,
    state: &mut FileState,
    totals: &mut Totals,
) -> Result<()> {
    let mode = MODES[rng.below(MODES.len())];
    let delay = Duration::from_micros(rng.below(options.max_delay.as_micros() as usize + 1) as u64);
    let mut command = Command::new(writer);
    command
        .arg("--dir")
        .arg(&state.dir)
        .args(["--durability", mode])
        .args(["--max-payload", &options.max_payload.to_string()])
        .args(["--large-percent", &options.large_percent.to_string()])
        .args(["--seed", &(options.seed * 1_000_000 + kill).to_string()]);
    let mut running = spawn(command)?;
    // Most kills are timed from the moment the session is open (so they land among appends); one in
    // ten from the start (so opening, and the termination of a torn tail, are killed too).
    if rng.below(10) != 0 {
        let ready = running.lines.recv_timeout(Duration::from_secs(30));
        ensure!(
            ready.as_deref() == Ok("ready\n"),
            "the writer did not report ready: {ready:?}"
        );
    }
    std::thread::sleep(delay);
    // `Child::kill` sends SIGKILL on Unix.
    running.child.kill().context("cannot kill the writer")?;
    let (status, stdout, stderr) = finish(running)?;
    if status.code().is_some() {
        bail!("the writer exited by itself ({status}): {stderr}");
    }
    totals.kills += 1;
    let acks = acks_of(&stdout);

    let (sessions, _) = session_files(&state.dir)?;
    ensure!(sessions.len() <= 1, "several session files: {sessions:?}");
    let Some(path) = sessions.first() else {
        ensure!(acks.is_empty(), "entries acknowledged but no file exists");
        totals.killed_before_first_write += 1;
        return Ok(());
    };
    let after = std::fs::read(path)?;
    ensure!(
        after.get(..state.bytes.len()) == Some(&state.bytes[..]),
        "bytes written before this run changed"
    );
    let previous_unterminated = state.bytes.last().is_some_and(|byte| *byte != b'\n');
    let report = check_run(&after, state.bytes.len(), previous_unterminated, &acks)
        .map_err(|violation| anyhow::anyhow!("{violation}"))?;
    totals.in_flight_whole += report.unacknowledged.min(1) as u64;
    totals.terminated += u64::from(report.terminated_previous);
    totals.unterminated_tails += u64::from(report.unterminated_tail);
    if report.torn_tail {
        totals.torn_tails += 1;
        let last_line = after.iter().filter(|byte| **byte == b'\n').count() + 1;
        state.torn_lines.insert(last_line);
    }

    // The file opens; every acknowledged entry of this run is there, whole.
    let session = Session::open(path).context("the file does not open")?;
    for ack in &acks {
        let entry = session
            .entry(&ack.id)
            .with_context(|| format!("acknowledged entry `{}` not loaded", ack.id))?;
        check_entry(&entry.raw()?, ack).map_err(anyhow::Error::msg)?;
    }
    let problem_lines: BTreeSet<usize> = session
        .diagnostics()
        .iter()
        .filter_map(|diagnostic| diagnostic.line)
        .collect();
    ensure!(
        problem_lines == state.torn_lines && session.diagnostics().iter().all(|d| d.line.is_some()),
        "loader problems {:?} differ from the torn lines {:?}",
        session.diagnostics(),
        state.torn_lines
    );
    check_with_cli(ctxkit, path, &state.torn_lines, report.torn_tail)?;
    totals.check_runs += 1;
    totals.acknowledged += acks.len() as u64;
    state.acked.extend(acks);
    state.bytes = after;
    Ok(())
}

/// `ctxkit check --json` reports exactly the torn lines; a torn tail as cut off.
fn check_with_cli(
    ctxkit: &Path,
    path: &Path,
    torn_lines: &BTreeSet<usize>,
    torn_tail: bool,
) -> Result<()> {
    let output = Command::new(ctxkit)
        .args(["check", "--json"])
        .arg(path)
        .output()
        .context("cannot run `ctxkit check`")?;
    let expected_code = if torn_lines.is_empty() { 0 } else { 1 };
    ensure!(
        output.status.code() == Some(expected_code),
        "`ctxkit check` exited with {} (expected {expected_code}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout)?;
    let problems = report["problems"].as_array().cloned().unwrap_or_default();
    let lines: BTreeSet<usize> = problems
        .iter()
        .filter_map(|problem| problem["line"].as_u64())
        .map(|line| line as usize)
        .collect();
    ensure!(
        &lines == torn_lines,
        "`ctxkit check` reports lines {lines:?}, torn lines are {torn_lines:?}"
    );
    if torn_tail {
        let last = torn_lines.last().copied();
        ensure!(
            problems.iter().any(|problem| {
                problem["line"].as_u64().map(|line| line as usize) == last
                    && problem["message"]
                        .as_str()
                        .is_some_and(|message| message.contains("last line is cut off"))
            }),
            "`ctxkit check` does not report the torn last line: {report}"
        );
    }
    Ok(())
}

/// After the last kill on a file: every acknowledged entry is there exactly once and intact, and an
/// append lands on its own line.
fn close_file(state: &FileState, totals: &mut Totals) -> Result<()> {
    let (sessions, others) = session_files(&state.dir)?;
    totals.stray_temporary_files += others;
    let Some(path) = sessions.first() else {
        return Ok(());
    };
    totals.files += 1;
    totals.bytes += state.bytes.len() as u64;
    let session = Session::open(path)?;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for entry in session.entries() {
        *seen.entry(entry.id()).or_default() += 1;
    }
    for ack in &state.acked {
        let ok = seen.get(ack.id.as_str()) == Some(&1)
            && session
                .entry(&ack.id)
                .is_some_and(|entry| entry.raw().is_ok_and(|raw| check_entry(&raw, ack).is_ok()));
        if !ok {
            totals.lost += 1;
        }
    }
    drop(session);
    let mut session = Session::open(path)?;
    let message: AgentMessage = serde_json::from_value(serde_json::json!({
        "role": "user", "content": "after the last kill", "timestamp": 1
    }))?;
    let id = session.append_message(message)?;
    drop(session);
    let text = std::fs::read(path)?;
    ensure!(
        text.ends_with(b"\n"),
        "the final append did not end its line"
    );
    let last_line = text[..text.len() - 1]
        .rsplit(|byte| *byte == b'\n')
        .next()
        .unwrap_or_default();
    let value: Value = serde_json::from_slice(last_line)?;
    ensure!(
        value["id"] == id,
        "the final append is not on a line of its own"
    );
    let reopened = Session::open(path)?;
    let problem_lines: BTreeSet<usize> = reopened
        .diagnostics()
        .iter()
        .filter_map(|diagnostic| diagnostic.line)
        .collect();
    ensure!(
        problem_lines == state.torn_lines,
        "after the final append, problems {:?} differ from the torn lines {:?}",
        reopened.diagnostics(),
        state.torn_lines
    );
    Ok(())
}

// ----- concurrent --------------------------------------------------------------------------------

fn concurrent_mode(writers: u64, appends: u64, seed: u64, ctxkit: Option<PathBuf>) -> Result<()> {
    let writer = sibling("ctxkit-crash-writer")?;
    let ctxkit = ctxkit_binary(ctxkit)?;
    let work = tempfile::tempdir_in(std::env::current_dir()?)?;
    for reopen_every in [1, 10] {
        serialized_writers(&writer, work.path(), writers, appends, seed, reopen_every)?;
    }
    refused_writers(&writer, work.path(), writers, appends, seed)?;
    cli_names(&ctxkit, work.path(), writers * 2)?;
    cli_config_set(&ctxkit, work.path(), writers * 2)?;
    Ok(())
}

/// A fresh session file with a user message and a reply.
fn new_session(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let mut session = Session::create("/crash", dir);
    for value in [
        serde_json::json!({"role": "user", "content": "start", "timestamp": 1}),
        serde_json::json!({"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 2}),
    ] {
        session.append_message(serde_json::from_value(value)?)?;
    }
    session
        .path()
        .map(Path::to_owned)
        .context("the session has no file")
}

/// Checks that `path` holds its header, `initial` entries and exactly the acknowledged ones, whole,
/// with no problem at all.
fn check_exact(path: &Path, initial: usize, acks: &[Ack]) -> Result<()> {
    let text = std::fs::read(path)?;
    ensure!(
        text.ends_with(b"\n"),
        "the file does not end with a newline"
    );
    for (number, line) in text[..text.len() - 1]
        .split(|byte| *byte == b'\n')
        .enumerate()
    {
        serde_json::from_slice::<Value>(line)
            .with_context(|| format!("line {} is not JSON (interleaved?)", number + 1))?;
    }
    let session = Session::open(path)?;
    ensure!(
        session.diagnostics().is_empty(),
        "problems: {:?}",
        session.diagnostics()
    );
    ensure!(
        session.entries().len() == initial + acks.len(),
        "{} entries, expected {} + {} acknowledged",
        session.entries().len(),
        initial,
        acks.len()
    );
    for ack in acks {
        let entry = session
            .entry(&ack.id)
            .with_context(|| format!("acknowledged entry `{}` lost", ack.id))?;
        check_entry(&entry.raw()?, ack).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

fn serialized_writers(
    writer: &Path,
    work: &Path,
    writers: u64,
    appends: u64,
    seed: u64,
    reopen_every: u64,
) -> Result<()> {
    let path = new_session(&work.join(format!("serialized-{reopen_every}")))?;
    let started = Instant::now();
    let mut running = Vec::new();
    for number in 0..writers {
        let mut command = Command::new(writer);
        command
            .arg("--file")
            .arg(&path)
            .args(["--count", &appends.to_string()])
            .args(["--reopen-every", &reopen_every.to_string()])
            .arg("--retry-locked")
            .args(["--max-payload", "4000"])
            .args(["--seed", &(seed * 1000 + number).to_string()]);
        running.push(spawn(command)?);
    }
    let mut acks = Vec::new();
    let mut retries = 0u64;
    for child in running {
        let (status, stdout, stderr) = finish(child)?;
        ensure!(status.success(), "a writer failed ({status}): {stderr}");
        let mine = acks_of(&stdout);
        ensure!(
            mine.len() as u64 == appends,
            "a writer acknowledged {} of {appends}",
            mine.len()
        );
        retries += stdout
            .lines()
            .find_map(|line| line.strip_prefix("retries "))
            .and_then(|count| count.parse::<u64>().ok())
            .unwrap_or(0);
        acks.extend(mine);
    }
    check_exact(&path, 2, &acks)?;
    say(&format!(
        "serialized: {writers} writers x {appends} appends, reopening every {reopen_every}: \
         {} entries, all present and whole, no interleaving, {retries} waits for the lock, {:.1?}",
        acks.len(),
        started.elapsed()
    ));
    Ok(())
}

fn refused_writers(
    writer: &Path,
    work: &Path,
    writers: u64,
    appends: u64,
    seed: u64,
) -> Result<()> {
    let path = new_session(&work.join("refused"))?;
    let mut running = Vec::new();
    for number in 0..writers {
        let mut command = Command::new(writer);
        command
            .arg("--file")
            .arg(&path)
            .args(["--count", &appends.to_string()])
            .args(["--max-payload", "4000"])
            .args(["--seed", &(seed * 1000 + 500 + number).to_string()]);
        running.push(spawn(command)?);
    }
    let pids: Vec<u32> = running.iter().map(|child| child.child.id()).collect();
    let mut acks = Vec::new();
    let (mut completed, mut refused, mut stale) = (0, 0, 0);
    for (child, pid) in running.into_iter().zip(&pids) {
        let (status, stdout, stderr) = finish(child)?;
        if status.success() {
            completed += 1;
            acks.extend(acks_of(&stdout));
            continue;
        }
        ensure!(
            status.code() == Some(5),
            "a writer failed otherwise ({status}): {stderr}"
        );
        ensure!(
            acks_of(&stdout).is_empty(),
            "a refused writer acknowledged entries"
        );
        // A writer that loaded the file before another one wrote and released it is refused as
        // stale instead: just as correct, and no lock holder to name.
        if stderr.contains("was changed by another process since it was read") {
            stale += 1;
            continue;
        }
        let holder = stderr
            .split("in use by PID ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|pid| pid.parse::<u32>().ok())
            .with_context(|| format!("the refusal names no PID: {stderr}"))?;
        ensure!(
            pids.contains(&holder) && holder != *pid,
            "the refusal names PID {holder}, not another writer ({pids:?})"
        );
        refused += 1;
    }
    ensure!(completed >= 1, "no writer completed");
    check_exact(&path, 2, &acks)?;
    say(&format!(
        "refused: {writers} writers holding the session for {appends} appends each: {completed} \
         completed, {refused} refused with \"in use by PID <holder>\", {stale} refused as \
         \"changed by another process\", {} entries all present",
        acks.len()
    ));
    Ok(())
}

fn cli_names(ctxkit: &Path, work: &Path, processes: u64) -> Result<()> {
    let path = new_session(&work.join("names"))?;
    let mut running = Vec::new();
    for number in 0..processes {
        let mut command = Command::new(ctxkit);
        command
            .arg("name")
            .arg(&path)
            .arg(format!("name {number}"))
            .env("CTXKIT_HOME", work.join("home-names"));
        running.push(spawn(command)?);
    }
    let (mut succeeded, mut refused, mut stale) = (0, 0, 0);
    for child in running {
        let (status, _, stderr) = finish(child)?;
        match status.code() {
            Some(0) => succeeded += 1,
            Some(5) if stderr.contains("in use by PID") => refused += 1,
            Some(5) if stderr.contains("was changed by another process") => stale += 1,
            _ => bail!("`ctxkit name` failed otherwise ({status}): {stderr}"),
        }
    }
    let session = Session::open(&path)?;
    ensure!(
        session.diagnostics().is_empty(),
        "{:?}",
        session.diagnostics()
    );
    let names = session
        .entries()
        .iter()
        .filter(|entry| entry.type_name() == "session_info")
        .count();
    ensure!(
        names == succeeded,
        "{succeeded} `ctxkit name` succeeded but {names} names are in the file"
    );
    say(&format!(
        "ctxkit name: {processes} at once on one session: {succeeded} written, {refused} refused \
         with \"in use by PID\", {stale} refused as \"changed by another process since it was \
         read\", file clean"
    ));
    Ok(())
}

fn cli_config_set(ctxkit: &Path, work: &Path, processes: u64) -> Result<()> {
    let home = work.join("home-config");
    let started = Instant::now();
    let mut running = Vec::new();
    for number in 0..processes {
        let mut command = Command::new(ctxkit);
        command
            .args([
                "config",
                "set",
                // Keys of no setting ctxkit knows: `--force` writes them (a foreign tool's keys).
                "--force",
                &format!("crash.key{number}"),
                &number.to_string(),
            ])
            .env("CTXKIT_HOME", &home);
        running.push(spawn(command)?);
    }
    let mut refused = 0;
    let mut succeeded = Vec::new();
    for (number, child) in running.into_iter().enumerate() {
        let (status, _, stderr) = finish(child)?;
        match status.code() {
            Some(0) => succeeded.push(number),
            Some(5) => refused += 1,
            _ => bail!("`ctxkit config set` failed ({status}): {stderr}"),
        }
    }
    let text = std::fs::read_to_string(home.join("settings.json"))?;
    let settings: Value = serde_json::from_str(&text).context("settings.json does not parse")?;
    for number in &succeeded {
        ensure!(
            settings["crash"][format!("key{number}")] == *number,
            "`crash.key{number}` lost: {text}"
        );
    }
    ensure!(
        settings["crash"].as_object().map(serde_json::Map::len) == Some(succeeded.len()),
        "unexpected keys: {text}"
    );
    say(&format!(
        "ctxkit config set: {processes} at once on one settings file: {} written, {refused} \
         refused, every written key present, file parses, {:.1?}",
        succeeded.len(),
        started.elapsed()
    ));
    Ok(())
}

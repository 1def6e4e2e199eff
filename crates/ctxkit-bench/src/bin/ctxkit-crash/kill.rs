//! `kill` mode: SIGKILL a writer at random moments and check the file after each kill.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use ctxkit_bench::crash::{Ack, check_entry, check_run};
use ctxkit_protocol::AgentMessage;
use ctxkit_session::Session;
use ctxkit_simulate::Rng;
use serde_json::Value;

use super::{acks_of, ctxkit_binary, finish, say, session_files, sibling, spawn};

#[derive(Debug)]
pub(super) struct KillOptions {
    pub(super) kills: u64,
    pub(super) seed: u64,
    pub(super) max_delay: Duration,
    pub(super) kills_per_file: u64,
    pub(super) max_payload: usize,
    pub(super) large_percent: u8,
    pub(super) work: Option<PathBuf>,
    pub(super) ctxkit: Option<PathBuf>,
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

pub(super) fn kill_mode(options: &KillOptions) -> Result<()> {
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

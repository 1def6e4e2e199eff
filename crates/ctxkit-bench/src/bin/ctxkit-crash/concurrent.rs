//! `concurrent` mode: several writers on one session, and several `ctxkit` processes at once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context as _, Result, bail, ensure};
use ctxkit_bench::crash::{Ack, check_entry};
use ctxkit_session::Session;
use serde_json::Value;

use super::{acks_of, ctxkit_binary, finish, say, sibling, spawn};

pub(super) fn concurrent_mode(
    writers: u64,
    appends: u64,
    seed: u64,
    ctxkit: Option<PathBuf>,
) -> Result<()> {
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

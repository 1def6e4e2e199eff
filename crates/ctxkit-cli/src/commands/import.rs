//! `ctxkit import` (Claude Code / Codex files → a ctxkit session) and `ctxkit sessions --from`
//! (those agents' sessions, listed from their own directories).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use ctxkit_import::{
    ImportedSession, SourceFormat, WriteOutcome, default_sessions_root, find_subagents,
    import_file, import_opencode, import_subagent, is_opencode_path, list_foreign_sessions,
};
use ctxkit_protocol::SessionInfoRecord;
use ctxkit_session::default_session_dir;

use super::{Locations, print_json};
use crate::Outcome;
use crate::render::counted;

/// `--from auto|claude-code|codex|opencode` as a format (`None`: detect).
fn parse_format(from: &str) -> Result<Option<SourceFormat>> {
    match from {
        "auto" => Ok(None),
        other => other
            .parse::<SourceFormat>()
            .map(Some)
            .map_err(anyhow::Error::msg),
    }
}

/// Converts `file` and writes it to `out_file`, or into ctxkit's session directory of the session's
/// cwd. Stdout gets the written path; the summary and every issue go to stderr.
pub fn import(
    locations: &Locations,
    file: &Path,
    from: &str,
    out_file: Option<&Path>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let format = parse_format(from)?;
    if format == Some(SourceFormat::OpenCode) || format.is_none() && is_opencode_path(file) {
        return import_opencode_sessions(locations, file, out_file, out);
    }
    if file.is_dir() {
        anyhow::bail!(
            "`{}` is a directory; name one session file in it (`ctxkit sessions --from {} --dir {}` \
             lists them)",
            file.display(),
            format.map_or("claude-code|codex|opencode", |format| format.name()),
            file.display()
        );
    }
    let session = import_file(file, format)?;
    // Subagent transcripts come along as child sessions beside the parent; they are found (and a
    // FIFO or a device among them refused) before anything is written.
    let source_id = session
        .header
        .extra
        .get("importedFrom")
        .and_then(|origin| origin.get("sessionId"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or(&session.header.id);
    let subagents = find_subagents(session.format, file, source_id)?;
    let target = target_of(locations, &session, out_file);
    write_session(&session, &target, out)?;
    let target_dir = target.parent().unwrap_or(Path::new("."));
    for subagent in subagents {
        let child = import_subagent(session.format, &subagent, &target)
            .with_context(|| format!("cannot import subagent `{}`", subagent.path.display()))?;
        write_session(&child, &target_dir.join(child.file_name()), out)?;
    }
    Ok(Outcome::Success)
}

/// An OpenCode session and its subagent sessions: the session goes to `out_file` (or the session
/// directory of its cwd), each subagent beside it with `parentSession` naming its parent's file.
fn import_opencode_sessions(
    locations: &Locations,
    file: &Path,
    out_file: Option<&Path>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let mut sessions = import_opencode(file)?.into_iter();
    let Some(session) = sessions.next() else {
        return Ok(Outcome::Success);
    };
    let target = target_of(locations, &session, out_file);
    write_session(&session, &target, out)?;
    let target_dir = target.parent().unwrap_or(Path::new(".")).to_owned();
    // Keyed by the source's ids (a file name may use a hash of one).
    let source_id = |session: &ImportedSession| {
        session
            .header
            .extra
            .get("importedFrom")
            .and_then(|origin| origin.get("sessionId"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or(&session.header.id)
            .to_owned()
    };
    let mut written: HashMap<String, PathBuf> = HashMap::new();
    written.insert(source_id(&session), target.clone());
    for mut child in sessions {
        let parent = child
            .header
            .extra
            .get("importedFrom")
            .and_then(|origin| origin.get("parentSessionId"))
            .and_then(serde_json::Value::as_str)
            .and_then(|parent| written.get(parent))
            .unwrap_or(&target);
        child.header.parent_session = Some(parent.display().to_string());
        let path = target_dir.join(child.file_name());
        write_session(&child, &path, out)?;
        written.insert(source_id(&child), path);
    }
    Ok(Outcome::Success)
}

/// Where an imported session goes: `out_file`, or ctxkit's session directory of its cwd. The path
/// is absolute, as the `parentSession` of its subagents must be wherever they are opened from.
fn target_of(locations: &Locations, session: &ImportedSession, out_file: Option<&Path>) -> PathBuf {
    let target = match out_file {
        Some(path) => path.to_owned(),
        None => default_session_dir(&locations.sessions_root, &session.header.cwd)
            .join(session.file_name()),
    };
    std::path::absolute(&target).unwrap_or(target)
}

/// Writes one imported session; stdout gets its path, stderr the summary and every issue.
fn write_session(session: &ImportedSession, target: &Path, out: &mut dyn Write) -> Result<()> {
    if target.is_dir() {
        anyhow::bail!(
            "`{}` is a folder; name the new session file for --out (e.g. `{}`)",
            target.display(),
            target.join("session.jsonl").display()
        );
    }
    // Every error of `write_to` names the file.
    let outcome = session.write_to(target)?;
    writeln!(out, "{}", target.display())?;
    let mut stderr = crate::redact::stderr();
    let report = &session.report;
    let done = match outcome {
        WriteOutcome::Created => "Imported".to_owned(),
        WriteOutcome::UpToDate => "Already imported, nothing written:".to_owned(),
        WriteOutcome::Appended(count) => format!("Appended {}:", counted(count, "new entry")),
        WriteOutcome::AppendedCompleted {
            appended,
            completed,
        } => {
            let ids: Vec<String> = completed.iter().map(|id| format!("`{id}`")).collect();
            let appended_again = if completed.len() == 1 {
                "it was appended again, complete, beside the partial one, which stays as a branch"
            } else {
                "they were appended again, complete, beside the partial ones, which stay as branches"
            };
            writeln!(
                stderr,
                "The earlier import caught {} unfinished, a reply being written or a tool \
                 running ({}): {appended_again} (`ctxkit tree` shows both)",
                counted(completed.len(), "entry"),
                ids.join(", "),
            )?;
            format!("Appended {}:", counted(appended, "new entry"))
        }
        WriteOutcome::AppendedBeside {
            appended,
            continued_at,
        } => {
            writeln!(
                stderr,
                "The session was continued after its import: {} appended beside the continued \
                 turns; it stays at `{continued_at}` (`ctxkit tree` shows both branches)",
                counted(appended, "new entry"),
            )?;
            format!("Appended {}:", counted(appended, "new entry"))
        }
    };
    writeln!(
        stderr,
        "{done} {} from {} into {}, {}",
        counted(report.records, "record"),
        session.format.name(),
        counted(report.entries, "entry"),
        counted(report.issues.len(), "issue"),
    )?;
    for warning in report.warning_lines() {
        writeln!(stderr, "warning: {warning}")?;
    }
    Ok(())
}

/// Lists another agent's sessions (default root under the home directory, or `dir`).
pub fn sessions(
    from: &str,
    dir: Option<PathBuf>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let format = parse_format(from)?.context(
        "`--from auto` cannot list sessions; name the agent: `claude-code`, `codex` or `opencode`",
    )?;
    let root = match dir {
        // A folder named that is not there is a mistake, not an empty list (as `sessions --dir`).
        Some(dir) => {
            std::fs::read_dir(&dir)
                .with_context(|| format!("cannot read directory `{}`", dir.display()))?;
            dir
        }
        None => {
            let home =
                std::env::home_dir().context("cannot find the home directory; pass `--dir`")?;
            default_sessions_root(format, &home, &crate::cli::agent_directory_variable)
        }
    };
    let (sessions, skipped) = list_foreign_sessions(format, &root)?;
    if json {
        print_json(out, &sessions)?;
    } else if sessions.is_empty() {
        writeln!(
            out,
            "No {} sessions in `{}`.",
            format.name(),
            root.display()
        )?;
    } else {
        print_with_subagents(&sessions, out)?;
    }
    super::warn_skipped(
        skipped
            .iter()
            .map(|file| (file.path.as_path(), &file.error as &dyn std::fmt::Display)),
    )?;
    Ok(Outcome::Success)
}

/// Session rows, subagents indented under the parent listed just before them.
fn print_with_subagents(sessions: &[SessionInfoRecord], out: &mut dyn Write) -> Result<()> {
    for session in sessions {
        if session.parent_session_path.is_none() {
            super::sessions::print_session_rows(std::slice::from_ref(session), out)?;
            continue;
        }
        let mut row = Vec::new();
        // Listed under its parent: the row names it by its place.
        super::sessions::print_session_row(session, &mut row)?;
        for (index, line) in String::from_utf8_lossy(&row).lines().enumerate() {
            let prefix = if index == 0 { "  └ " } else { "    " };
            writeln!(out, "{prefix}{line}")?;
        }
    }
    Ok(())
}

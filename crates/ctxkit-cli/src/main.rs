//! The `ctxkit` binary: parses arguments, runs one command, and maps errors to exit codes in one place.

mod cli;
mod commands;
mod render;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use ctxkit_session::SessionError;

use crate::cli::Cli;

/// How a command ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// `ctxkit check` found problems.
    ProblemsFound,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut stdout = std::io::stdout().lock();
    match commands::run(cli, &mut stdout) {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::ProblemsFound) => ExitCode::from(1),
        Err(error) => report(&error),
    }
}

/// Prints `error` as one line and a hint on stderr; returns its exit code.
fn report(error: &anyhow::Error) -> ExitCode {
    if let Some(io) = error.downcast_ref::<std::io::Error>()
        && io.kind() == std::io::ErrorKind::BrokenPipe
    {
        return ExitCode::SUCCESS;
    }
    let (code, hint) = classify(error);
    let mut stderr = std::io::stderr().lock();
    let mut message = format!("error: {error}");
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(&format!(": {cause}"));
        }
    }
    let _ = writeln!(stderr, "{message}");
    if let Some(hint) = hint {
        let _ = writeln!(stderr, "hint: {hint}");
    }
    ExitCode::from(code)
}

fn classify(error: &anyhow::Error) -> (u8, Option<String>) {
    let Some(session_error) = error
        .chain()
        .find_map(|cause| cause.downcast_ref::<SessionError>())
    else {
        return (3, None);
    };
    match session_error {
        SessionError::NotASession { path, .. } => (
            3,
            Some(format!("run `ctxkit check {}` for details; the file was left untouched", path.display())),
        ),
        SessionError::InvalidEntry { path, .. } => {
            (3, Some(format!("run `ctxkit check {}` to list every problem in the file", path.display())))
        }
        SessionError::EntryNotFound { .. } => (3, Some("list entry ids with `ctxkit tree FILE`".to_owned())),
        SessionError::Locked { .. } => {
            (5, Some("another process is writing this session; retry when it is done, or `ctxkit fork` it".to_owned()))
        }
        SessionError::Io { .. } => (4, None),
        SessionError::Serialize(_) => (4, Some("this is a bug in ctxkit; please report it".to_owned())),
    }
}

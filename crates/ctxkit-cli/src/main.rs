//! The `ctxkit` binary: parses arguments, runs one command, and maps errors to exit codes in one
//! place (`classify`).

mod classify;
mod cli;
mod commands;
mod foreign;
mod redact;
mod render;
mod usage;

use std::io::Write;
use std::process::ExitCode;

/// How a command ended, when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// `ctxkit check` found problems.
    ProblemsFound,
    /// Some items of a batch failed (each reported on stderr as it failed, with
    /// [`report_failure`]), the others were done: exits with `code`, the first failure's.
    PartlyFailed {
        code: u8,
    },
    /// Failed, and said why on stderr as it happened (a `chat` in print mode whose last model
    /// request failed: the reply's error line was its report): exits with `code`, nothing printed
    /// again.
    FailedAsSaid {
        code: u8,
    },
    /// Ended by the signal numbered `number` (after it cleaned up): exits with 128 + `number`, as a
    /// shell reports a process the signal killed.
    Signalled {
        number: u8,
    },
}

fn main() -> ExitCode {
    // Before any thread starts (no runtime, no logging yet): provider keys leave the process
    // environment, so no child can read them from `/proc/<ctxkit pid>/environ`.
    if let Err(error) = ctxkit_secrets::take_secret_environment() {
        return report(&anyhow::Error::new(error));
    }
    // Nor its memory (the keys it holds) or its terminal through `/proc/<ctxkit pid>/`.
    ctxkit_secrets::keep_process_private();
    catch_file_size_signal();
    let cli = cli::parse_command_line();
    if let Err(error) = init_logging(&cli.global) {
        return report(&error);
    }
    // The chat is interactive (partial lines); `serve`'s stream is data, kept exact; everything
    // else prints through the redacting layer.
    let stdout = std::io::stdout().lock();
    let mut output: Box<dyn Write> = if matches!(cli.command, cli::Command::Chat(_)) {
        Box::new(stdout)
    } else if matches!(cli.command, cli::Command::Serve { .. }) {
        Box::new(redact::RedactingWriter::protocol(stdout))
    } else {
        Box::new(redact::RedactingWriter::new(stdout))
    };
    let result = commands::run(cli, &mut output).and_then(|outcome| {
        output.flush()?;
        Ok(outcome)
    });
    drop(output);
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::ProblemsFound) => ExitCode::from(1),
        Ok(Outcome::PartlyFailed { code } | Outcome::FailedAsSaid { code }) => ExitCode::from(code),
        Ok(Outcome::Signalled { number }) => ExitCode::from(number.saturating_add(128)),
        Err(error) => report(&error),
    }
}

/// Under a file-size limit (`ulimit -f`), a write past it raises `SIGXFSZ`, whose default action
/// kills the process: a tool's `write` of a large file or a long session line ended the whole chat,
/// with a temporary file left in the project and a cut line in the session. With the signal caught
/// the write fails with `EFBIG` instead, which the tools (the file is left unchanged) and the
/// session store (the cut tail is repaired) already handle. Caught by a handler that does nothing,
/// not ignored: `exec` resets a caught signal to its default but keeps an ignored one, so every
/// child (`bash` commands, hooks, git, npm, the editor) meets the limit as it would in a shell.
fn catch_file_size_signal() {
    let noticed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Without the handler (it cannot fail for this signal on a Unix system) a write past the
    // limit stops the process as it always did.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, noticed);
}

/// Starts logging when `--log`/`CTXKIT_LOG` asks for it: to stderr, or appended to `--log-file`.
fn init_logging(global: &cli::GlobalArgs) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let Some(filter) = global.log.as_deref().filter(|filter| !filter.is_empty()) else {
        return Ok(());
    };
    // A value the flag cannot use is a usage error (2), as `--store`'s and `--redact`'s are.
    let filter = tracing_subscriber::EnvFilter::try_new(filter).map_err(|_| usage::UsageError {
        message: format!("`--log {filter}` is not a log filter"),
        hint: "give a level or a filter, e.g. `--log debug` or `--log ctxkit_engine=debug`"
            .to_owned(),
    })?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match &global.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file `{}`", path.display()))?;
            builder
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .init();
        }
        None => {
            use std::io::IsTerminal as _;
            let color = std::io::stderr().is_terminal() && cli::color_allowed();
            builder.with_ansi(color).with_writer(std::io::stderr).init();
        }
    }
    Ok(())
}

/// Prints `error` as one line and a hint on stderr; returns its exit code.
fn report(error: &anyhow::Error) -> ExitCode {
    // A closed pipe (`ctxkit … | head`) is not an error.
    let broken_pipe = error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            == Some(std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind)
                == Some(std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    ExitCode::from(report_failure(error))
}

/// Prints `error` as one line and a hint on stderr; returns its exit code. A batch command
/// reports each failed item with it and goes on ([`Outcome::PartlyFailed`]).
pub(crate) fn report_failure(error: &anyhow::Error) -> u8 {
    let (code, hint) = classify::classify(error);
    let mut stderr = std::io::stderr().lock();
    let message = format!("error: {}", render::error_chain(error));
    let message = ctxkit_secrets::redact_credentials(&message);
    let message = redact::shown_names(&message);
    let _ = writeln!(stderr, "{}", render::terminal_safe(&message));
    if let Some(hint) = hint {
        let hint = redact::shown_names(&hint);
        let _ = writeln!(stderr, "hint: {}", render::terminal_safe(&hint));
    }
    code
}

//! Running `npm` and `git`: a narrow [`CommandRunner`] trait so tests can record or script
//! commands, and [`ProcessRunner`], which starts real child processes from argument vectors
//! (never through a shell) and captures their output so failures can show the tool's stderr.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::PackageError;

/// One command: a program and its arguments, the directory to run it in, extra environment
/// variables and an optional time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The program (`npm`, `git`, or the first element of `npmCommand`).
    pub program: String,
    /// Its arguments, passed as they are.
    pub args: Vec<String>,
    /// Working directory (`None`: the runner's own).
    pub cwd: Option<PathBuf>,
    /// Variables added to the inherited environment.
    pub env: Vec<(String, String)>,
    /// Kill the process and fail after this long (network checks use 10 s).
    pub timeout: Option<Duration>,
    /// git configuration given as `-c key=value` before the arguments (command-line scope, which
    /// wins over a repository's own config); left out of [`Self::display`].
    pub config: Vec<(String, String)>,
}

impl CommandLine {
    /// A command without cwd, environment or time limit.
    pub fn new(program: impl Into<String>, args: impl IntoIterator<Item = String>) -> Self {
        Self {
            program: program.into(),
            args: args.into_iter().collect(),
            cwd: None,
            env: Vec::new(),
            timeout: None,
            config: Vec::new(),
        }
    }

    /// Runs with the git configuration `key=value` in command-line scope.
    #[must_use]
    pub fn with_config(mut self, key: &str, value: &str) -> Self {
        self.config.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Runs in `cwd`.
    #[must_use]
    pub fn in_dir(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds an environment variable.
    #[must_use]
    pub fn with_env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets a time limit.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Program and arguments joined by spaces, for messages and logs.
    pub fn display(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What a successful command printed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
}

/// Runs commands for the package manager. Implementations must not use a shell.
pub trait CommandRunner: Send + Sync {
    /// Runs `command` to completion. A non-zero exit is [`PackageError::CommandFailed`] (with the
    /// process's stderr, or stdout when stderr is empty); a program that cannot be started is
    /// [`PackageError::Spawn`]; an exceeded time limit is [`PackageError::TimedOut`].
    fn run(&self, command: &CommandLine) -> Result<CommandOutput, PackageError>;
}

/// The longest stderr excerpt kept in an error message.
const MAX_ERROR_OUTPUT: usize = 4000;

/// Starts real processes with `std::process::Command` (argument vectors, no shell), standard
/// input closed, output captured.
#[derive(Debug, Clone, Default)]
pub struct ProcessRunner {
    extra_env: Vec<(String, String)>,
}

impl ProcessRunner {
    /// A runner passing the inherited environment through.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a variable to every command this runner starts (tests point npm's cache and global
    /// prefix into a temp dir this way).
    #[must_use]
    pub fn with_env(mut self, name: &str, value: impl Into<String>) -> Self {
        self.extra_env.push((name.to_owned(), value.into()));
        self
    }
}

fn read_all(mut reader: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buffer = Vec::new();
        // A read error just truncates what we can show; the exit status still decides.
        let _ = reader.read_to_end(&mut buffer);
        buffer
    })
}

fn wait_with_deadline(
    child: &mut Child,
    timeout: Option<Duration>,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let Some(timeout) = timeout else {
        return child.wait().map(Some);
    };
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn excerpt(text: &str) -> String {
    let trimmed = text.trim();
    if trimmed.len() <= MAX_ERROR_OUTPUT {
        return trimmed.to_owned();
    }
    let mut start = trimmed.len() - MAX_ERROR_OUTPUT;
    while !trimmed.is_char_boundary(start) {
        start += 1;
    }
    format!("…{}", &trimmed[start..])
}

impl CommandRunner for ProcessRunner {
    fn run(&self, command: &CommandLine) -> Result<CommandOutput, PackageError> {
        let mut process = Command::new(&command.program);
        for (key, value) in &command.config {
            process.arg("-c").arg(format!("{key}={value}"));
        }
        process
            .args(&command.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(cwd) = &command.cwd {
            process.current_dir(cwd);
        }
        for (name, value) in self.extra_env.iter().chain(&command.env) {
            process.env(name, value);
        }
        let spawn_error = |source| PackageError::Spawn {
            program: command.program.clone(),
            source,
        };
        let mut child = process.spawn().map_err(spawn_error)?;
        let stdout = child.stdout.take().map(read_all);
        let stderr = child.stderr.take().map(read_all);
        let status = wait_with_deadline(&mut child, command.timeout).map_err(spawn_error)?;
        let collect = |handle: Option<std::thread::JoinHandle<Vec<u8>>>| {
            handle
                .and_then(|handle| handle.join().ok())
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_default()
        };
        let output = CommandOutput {
            stdout: collect(stdout),
            stderr: collect(stderr),
        };
        match status {
            None => Err(PackageError::TimedOut {
                command: command.display(),
                milliseconds: command.timeout.map_or(0, |timeout| {
                    u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)
                }),
            }),
            Some(status) if status.success() => Ok(output),
            Some(status) => {
                let shown = if output.stderr.trim().is_empty() {
                    &output.stdout
                } else {
                    &output.stderr
                };
                Err(PackageError::CommandFailed {
                    command: command.display(),
                    code: status.code().unwrap_or(-1),
                    stderr: excerpt(shown),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_carries_stderr() {
        let command = CommandLine::new(
            "git",
            ["rev-parse".to_owned(), "--not-an-option-ever".to_owned()],
        )
        .in_dir(std::env::temp_dir());
        let error = ProcessRunner::new().run(&command).unwrap_err();
        let PackageError::CommandFailed { command, code, .. } = error else {
            panic!("unexpected {error:?}");
        };
        assert_eq!(command, "git rev-parse --not-an-option-ever");
        assert_ne!(code, 0);
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let command = CommandLine::new("ctxkit-no-such-program", Vec::new());
        let error = ProcessRunner::new().run(&command).unwrap_err();
        assert!(matches!(error, PackageError::Spawn { .. }), "{error:?}");
    }

    #[test]
    fn excerpt_keeps_the_tail() {
        let long = "x".repeat(MAX_ERROR_OUTPUT + 10);
        assert!(excerpt(&long).starts_with('…'));
        assert_eq!(excerpt("  short \n"), "short");
    }
}

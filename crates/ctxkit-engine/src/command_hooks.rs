//! Command hooks for users who do not write Rust: an executable (no shell) gets
//! `{"event": <name>, "payload": <event>}` as one JSON document on stdin and may answer one JSON
//! document on stdout (empty output: no answer). A hook that cannot start, exits non-zero, answers
//! something unreadable or runs past its timeout is reported and ignored, never fatal. A hook runs
//! in its own process group, killed whole when it times out, when the operation waiting for it is
//! cancelled (`compact.cancel`, Escape in the chat, `shutdown`), or when that operation is dropped.

use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::events::CompactionFailed;
use crate::hooks::{
    AfterCompact, AfterTree, BeforeCompact, BeforeCompactResult, BeforeFork, BeforeForkResult,
    BeforeTree, BeforeTreeResult, HookError, HookFuture, Hooks,
};
use crate::project::ProjectDir;
use ctxkit_settings::CommandHookConfig;

/// The longest answer read from a hook; a longer one is refused as soon as it is seen.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// How much of a failing hook's stderr is kept for its error line; the rest is read and dropped.
const MAX_STDERR_BYTES: usize = 8 * 1024;

/// One configured command hook.
#[derive(Debug, Clone)]
pub struct CommandHook {
    config: CommandHookConfig,
    /// The project the user or client chose, never the session's recorded `cwd`: a trusted
    /// project's `["sh", "scripts/after.sh"]` run in a folder a session file names would run
    /// that folder's script.
    project: ProjectDir,
}

impl CommandHook {
    /// A hook running `config.command` in `project`.
    pub fn new(config: CommandHookConfig, project: ProjectDir) -> Self {
        Self { config, project }
    }

    /// A trusted project's hook runs only the scripts the user trusted: one rewritten since (by
    /// the model's `write`, a `git pull` in another terminal) stops it, as it would at the next
    /// start. Each is checked by the name the command gives it, in the project the hook runs in:
    /// `serve` runs the hooks of the project it started in for a client's run in another project,
    /// where `scripts/after.sh` is that project's file, which nobody trusted.
    fn check_pinned_scripts(&self) -> Result<(), HookError> {
        let project = self.project.get();
        for script in &self.config.pinned_scripts {
            let here = project.join(&script.named);
            // Nothing there now is what an absent script's pin (an empty digest) expects.
            if ctxkit_settings::script_digest(&here).unwrap_or_default() == script.digest {
                continue;
            }
            let same_file = std::fs::canonicalize(&here).is_ok_and(|real| real == script.path);
            return Err(HookError::new(if same_file {
                format!(
                    "`{}` changed since the project was trusted, so the hook was not run; run \
                     `ctxkit trust` to trust it as it is now",
                    script.path.display()
                )
            } else {
                format!(
                    "`{}` is not the script trusted (`{}`): the hook runs in `{}`, whose files \
                     are not the trusted project's, so it was not run",
                    here.display(),
                    script.path.display(),
                    project.display()
                )
            }));
        }
        Ok(())
    }

    fn wants(&self, event: &str) -> bool {
        self.config.events.is_empty() || self.config.events.iter().any(|name| name == event)
    }

    /// Runs the hook on one event until it answers, fails, times out or `cancel` fires.
    async fn run(
        &self,
        event: &str,
        payload: &impl Serialize,
        cancel: Option<&CancellationToken>,
    ) -> Result<Ran, HookError> {
        let Some((program, arguments)) = self.config.command.split_first() else {
            return Err(HookError::new("the hook's `command` is empty"));
        };
        self.check_pinned_scripts()?;
        let input = serde_json::to_vec(&json!({ "event": event, "payload": payload }))
            .map_err(|error| HookError::new(format!("cannot encode the event: {error}")))?;
        let mut command = tokio::process::Command::new(program);
        // Provider keys and other credentials stay with ctxkit unless the hook is given them.
        let variables = std::env::vars_os().filter_map(|(name, value)| {
            Some((
                name.into_string().ok()?,
                value.to_string_lossy().into_owned(),
            ))
        });
        for name in ctxkit_secrets::secret_variables_for_child(variables, &self.config.pass_env) {
            command.env_remove(name);
        }
        // Those passed on purpose, from where ctxkit keeps them once out of its own environment.
        command.envs(ctxkit_secrets::passed_secret_variables(
            &self.config.pass_env,
        ));
        command
            .args(arguments)
            .current_dir(self.project.get())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // Its own group, so a cancel or a timeout kills what the hook started too.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command
            .spawn()
            .map_err(|error| HookError::new(format!("cannot start `{program}`: {error}")))?;
        let mut group = Group(child.id());
        if let Some(mut stdin) = child.stdin.take() {
            // Written concurrently with reading, so a hook that answers before reading all of a
            // large event cannot deadlock; a hook that never reads only loses the broken pipe.
            tokio::spawn(async move {
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            });
        }
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let cancelled = async {
            match cancel {
                Some(cancel) => cancel.cancelled().await,
                None => std::future::pending().await,
            }
        };
        // Leaving early drops `group`, which kills the hook's process group.
        let answer = tokio::select! {
            answer = tokio::time::timeout(timeout, collect(&mut child, program)) => answer,
            () = cancelled => return Ok(Ran::Cancelled),
        };
        match answer {
            Ok(Ok(answer)) => {
                group.disarm();
                Ok(Ran::Answered(answer))
            }
            Ok(Err(error)) => Err(error),
            Err(_) => Err(HookError::new(format!(
                "`{program}` timed out after {} ms and was killed",
                self.config.timeout_ms
            ))),
        }
    }

    /// The hook's answer to `event`; none when it answered nothing or `cancel` fired first (the
    /// caller sees the cancel itself).
    async fn decide<T: DeserializeOwned>(
        &self,
        event: &str,
        payload: &impl Serialize,
        cancel: Option<&CancellationToken>,
    ) -> Result<Option<T>, HookError> {
        if !self.wants(event) {
            return Ok(None);
        }
        let answer = match self.run(event, payload, cancel).await? {
            Ran::Answered(answer) => answer,
            Ran::Cancelled => return Ok(None),
        };
        let text = String::from_utf8_lossy(&answer);
        if text.trim().is_empty() {
            return Ok(None);
        }
        serde_json::from_str(text.trim())
            .map(Some)
            .map_err(|error| {
                HookError::new(format!(
                    "answered something that is not a `{event}` result: {error}"
                ))
            })
    }

    async fn notify(&self, event: &str, payload: &impl Serialize) -> Result<(), HookError> {
        if self.wants(event) {
            self.run(event, payload, None).await?;
        }
        Ok(())
    }
}

/// How a hook's run ended, when it did not fail.
enum Ran {
    /// It exited successfully with this on stdout.
    Answered(Vec<u8>),
    /// The operation waiting for it was cancelled; the hook was killed.
    Cancelled,
}

/// A running hook's process group (its id is the hook's pid), killed when dropped unless the hook
/// answered: a timeout, a cancel, a failure or the caller's future dropped all end here, so
/// nothing the hook started outlives it unless it answered first.
struct Group(Option<u32>);

impl Group {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let Some(leader) = self.0.take() else {
            return;
        };
        // Through `kill(1)`: no `unsafe` here. When it cannot run, `kill_on_drop` still kills the
        // hook itself.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{leader}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Reads a running hook's answer (bounded) and its stderr (only the start kept), then its exit
/// status. Memory stays bounded however much a hook writes.
async fn collect(child: &mut tokio::process::Child, program: &str) -> Result<Vec<u8>, HookError> {
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let read_answer = async move {
        let mut answer = Vec::new();
        if let Some(stdout) = stdout {
            let limit = u64::try_from(MAX_ANSWER_BYTES)
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            stdout.take(limit).read_to_end(&mut answer).await?;
        }
        Ok::<_, std::io::Error>(answer)
    };
    let read_stderr = async move {
        let mut kept = Vec::new();
        if let Some(mut stderr) = stderr {
            let mut chunk = [0_u8; 4096];
            loop {
                let read = stderr.read(&mut chunk).await?;
                if read == 0 {
                    break;
                }
                let room = MAX_STDERR_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..read.min(room)]);
            }
        }
        Ok::<_, std::io::Error>(kept)
    };
    let failed = |error: std::io::Error| HookError::new(format!("`{program}` failed: {error}"));
    // Stderr is drained on its own task, so a hook blocked on a full stderr pipe still answers.
    let stderr = tokio::spawn(read_stderr);
    let answer = read_answer.await.map_err(failed)?;
    if answer.len() > MAX_ANSWER_BYTES {
        let _ = child.start_kill();
        stderr.abort();
        return Err(HookError::new(format!(
            "`{program}` answered more than {MAX_ANSWER_BYTES} bytes and was killed"
        )));
    }
    let stderr = stderr
        .await
        .map_err(|error| HookError::new(format!("`{program}` failed: {error}")))?
        .map_err(failed)?;
    let status = child.wait().await.map_err(failed)?;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&stderr);
        let first_line = stderr.lines().find(|line| !line.trim().is_empty());
        return Err(HookError::new(format!(
            "`{program}` exited with {status}{}",
            first_line
                .map(|line| format!(": {line}"))
                .unwrap_or_default()
        )));
    }
    Ok(answer)
}

impl Hooks for CommandHook {
    fn name(&self) -> String {
        self.config.command.join(" ")
    }

    fn before_compact<'a>(
        &'a self,
        event: &'a BeforeCompact,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeCompactResult>> {
        Box::pin(self.decide("before_compact", event, Some(cancel)))
    }

    fn after_compact<'a>(&'a self, event: &'a AfterCompact) -> HookFuture<'a, ()> {
        Box::pin(self.notify("after_compact", event))
    }

    fn compaction_failed<'a>(&'a self, event: &'a CompactionFailed) -> HookFuture<'a, ()> {
        Box::pin(self.notify("compaction_failed", event))
    }

    fn before_tree<'a>(
        &'a self,
        event: &'a BeforeTree,
        cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeTreeResult>> {
        Box::pin(self.decide("before_tree", event, Some(cancel)))
    }

    fn after_tree<'a>(&'a self, event: &'a AfterTree) -> HookFuture<'a, ()> {
        Box::pin(self.notify("after_tree", event))
    }

    fn before_fork<'a>(
        &'a self,
        event: &'a BeforeFork,
    ) -> HookFuture<'a, Option<BeforeForkResult>> {
        Box::pin(self.decide("before_fork", event, None))
    }
}

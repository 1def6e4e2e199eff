//! Command hooks for users who do not write Rust: an executable (no shell) gets
//! `{"event": <name>, "payload": <event>}` as one JSON document on stdin and may answer one JSON
//! document on stdout (empty output: no answer). A hook that cannot start, exits non-zero, answers
//! something unreadable or runs past its timeout is reported and ignored, never fatal.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::hooks::{
    AfterCompact, AfterTree, BeforeCompact, BeforeCompactResult, BeforeFork, BeforeForkResult,
    BeforeTree, BeforeTreeResult, HookError, HookFuture, Hooks,
};
use crate::settings::CommandHookConfig;

/// The longest answer read from a hook.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// One configured command hook.
#[derive(Debug, Clone)]
pub struct CommandHook {
    config: CommandHookConfig,
    cwd: PathBuf,
}

impl CommandHook {
    /// A hook running `config.command` in `cwd`.
    pub fn new(config: CommandHookConfig, cwd: PathBuf) -> Self {
        Self { config, cwd }
    }

    fn wants(&self, event: &str) -> bool {
        self.config.events.is_empty() || self.config.events.iter().any(|name| name == event)
    }

    async fn run(&self, event: &str, payload: &impl Serialize) -> Result<Vec<u8>, HookError> {
        let Some((program, arguments)) = self.config.command.split_first() else {
            return Err(HookError::new("the hook's `command` is empty"));
        };
        let input = serde_json::to_vec(&json!({ "event": event, "payload": payload }))
            .map_err(|error| HookError::new(format!("cannot encode the event: {error}")))?;
        let mut child = tokio::process::Command::new(program)
            .args(arguments)
            .current_dir(&self.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| HookError::new(format!("cannot start `{program}`: {error}")))?;
        if let Some(mut stdin) = child.stdin.take() {
            // Written concurrently with reading, so a hook that answers before reading all of a
            // large event cannot deadlock; a hook that never reads only loses the broken pipe.
            tokio::spawn(async move {
                let _ = stdin.write_all(&input).await;
                let _ = stdin.shutdown().await;
            });
        }
        let timeout = Duration::from_millis(self.config.timeout_ms);
        let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(error)) => {
                return Err(HookError::new(format!("`{program}` failed: {error}")));
            }
            Err(_) => {
                return Err(HookError::new(format!(
                    "`{program}` timed out after {} ms and was killed",
                    self.config.timeout_ms
                )));
            }
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let first_line = stderr.lines().find(|line| !line.trim().is_empty());
            return Err(HookError::new(format!(
                "`{program}` exited with {}{}",
                output.status,
                first_line
                    .map(|line| format!(": {line}"))
                    .unwrap_or_default()
            )));
        }
        if output.stdout.len() > MAX_ANSWER_BYTES {
            return Err(HookError::new(format!(
                "`{program}` answered {} bytes, more than {MAX_ANSWER_BYTES}",
                output.stdout.len()
            )));
        }
        Ok(output.stdout)
    }

    async fn decide<T: DeserializeOwned>(
        &self,
        event: &str,
        payload: &impl Serialize,
    ) -> Result<Option<T>, HookError> {
        if !self.wants(event) {
            return Ok(None);
        }
        let answer = self.run(event, payload).await?;
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
            self.run(event, payload).await?;
        }
        Ok(())
    }
}

impl Hooks for CommandHook {
    fn name(&self) -> String {
        self.config.command.join(" ")
    }

    fn before_compact<'a>(
        &'a self,
        event: &'a BeforeCompact,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeCompactResult>> {
        Box::pin(self.decide("before_compact", event))
    }

    fn after_compact<'a>(&'a self, event: &'a AfterCompact) -> HookFuture<'a, ()> {
        Box::pin(self.notify("after_compact", event))
    }

    fn before_tree<'a>(
        &'a self,
        event: &'a BeforeTree,
        _cancel: &'a CancellationToken,
    ) -> HookFuture<'a, Option<BeforeTreeResult>> {
        Box::pin(self.decide("before_tree", event))
    }

    fn after_tree<'a>(&'a self, event: &'a AfterTree) -> HookFuture<'a, ()> {
        Box::pin(self.notify("after_tree", event))
    }

    fn before_fork<'a>(
        &'a self,
        event: &'a BeforeFork,
    ) -> HookFuture<'a, Option<BeforeForkResult>> {
        Box::pin(self.decide("before_fork", event))
    }
}

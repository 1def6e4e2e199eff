//! Running one tool call: the paths it would touch judged (ctxkit's own files refused, places
//! outside the project and guarded ones put to the approver), the tool's own approval, the call
//! run off the async threads in a workspace that may read the session's saved outputs, and its
//! output redacted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctxkit_engine::EngineError;
use ctxkit_protocol::{
    AgentMessage, AssistantMessage, ContentBlock, JsonObject, MessageContent, ToolCall,
    ToolResultMessage,
};
use tokio_util::sync::CancellationToken;

use super::{Agent, AgentEvent, AgentObserver, now_ms};
use crate::approve::{Approval, Approver};
use crate::tool::{Approved, Tool, ToolContext, ToolOutcome, ToolProgress};
use crate::workspace::{Place, Workspace};

impl Agent {
    /// Runs a reply's calls in order and appends each result; once the turn is cancelled, the
    /// calls left get a result saying they were not run (every call keeps its result).
    pub(super) async fn run_batch(
        &mut self,
        calls: Vec<ToolCall>,
        cancel: &CancellationToken,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<(), EngineError> {
        for call in calls {
            let outcome = if cancel.is_cancelled() {
                ToolOutcome::error(self.engine.interrupt_cause().call_not_run())
            } else {
                observer
                    .event(AgentEvent::ToolStart { call: call.clone() })
                    .await;
                self.run_call(&call, cancel, approver, observer).await
            };
            observer
                .event(AgentEvent::ToolEnd {
                    call: call.clone(),
                    outcome: outcome.clone(),
                })
                .await;
            let result = ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: MessageContent::Blocks(
                    std::iter::once(ContentBlock::text(outcome.text))
                        .chain(outcome.images.into_iter().map(ContentBlock::Image))
                        .collect(),
                ),
                details: outcome.details,
                is_error: outcome.is_error,
                timestamp: Some(now_ms()),
                extra: JsonObject::new(),
            };
            self.engine.append(AgentMessage::ToolResult(result)).await?;
        }
        Ok(())
    }

    pub(super) async fn run_call(
        &mut self,
        call: &ToolCall,
        cancel: &CancellationToken,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> ToolOutcome {
        let Some(tool) = self.tools.get(&call.name) else {
            return ToolOutcome::error(self.tools.unknown(&call.name));
        };
        // Arguments the model sent that are no JSON object are stored as `{}` with the reason:
        // never run with `{}` (an `ls` of the project the model did not ask for), as Pi does not.
        if let Some(error) = call.arguments_error() {
            return ToolOutcome::error(format!("Invalid arguments for `{}`: {error}", call.name));
        }
        let (output_dir, session_file) = self.output_dir().await;
        let mut workspace = (*self.workspace).clone();
        workspace.allow_reading_outputs(&output_dir);
        for dir in self.forked_output_dirs().await {
            workspace.allow_reading_outputs(&dir);
        }
        // The live session file, when it lies in the project, is written only with approval.
        if let Some(file) = &session_file {
            workspace.guard(file);
        }
        let workspace = Arc::new(workspace);
        let approved = match self
            .approve_paths(&workspace, tool.as_ref(), call, cancel, approver)
            .await
        {
            Ok(approved) => approved,
            Err(refusal) => return ToolOutcome::error(workspace.redact(&refusal)),
        };
        if !self.always_allowed.contains(&call.name)
            && let Some(question) = tool.approval(&call.arguments)
        {
            match approver.approve(&call.name, &question).await {
                Approval::Once => {}
                Approval::Always => self.allow_always(&call.name),
                Approval::Deny => return ToolOutcome::error("The user declined to run this call"),
                Approval::Unanswered => return ToolOutcome::error(crate::tool::UNANSWERED),
                Approval::Stop => {
                    cancel.cancel();
                    return ToolOutcome::error("The user declined to run this call");
                }
            }
        }
        let (progress, reports) = ToolProgress::channel();
        let context = ToolContext {
            cwd: self.options.cwd.clone(),
            output_dir,
            bash_timeout: self.options.bash_timeout,
            shell: self.options.shell.clone(),
            pass_env: self.options.pass_env.clone(),
            cancel: cancel.clone(),
            engine: Some(self.engine.clone()),
            workspace: Arc::clone(&workspace),
            approved,
            auto_resize_images: self.options.auto_resize_images,
            max_output_bytes: self.max_output_bytes(),
            progress: Some(progress),
        };
        let (arguments, id) = (call.arguments.clone(), call.id.clone());
        let started = std::time::Instant::now();
        let running = tokio::task::spawn_blocking(move || tool.run(&arguments, &id, &context));
        let report = |output| {
            let call_id = call.id.clone();
            observer.event(AgentEvent::ToolOutput { call_id, output })
        };
        let mut outcome = watch_progress(running, reports, &workspace, report)
            .await
            .unwrap_or_else(|error| ToolOutcome::error(format!("The tool failed: {error}")));
        // No secret this process knows reaches the session or the model.
        outcome.text = workspace.redact(&outcome.text);
        tracing::debug!(
            tool = %call.name,
            is_error = outcome.is_error,
            chars = outcome.text.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "tool call"
        );
        outcome
    }

    /// Judges the paths `call` would touch: ctxkit's own files are refused; each access outside
    /// the project not yet allowed is put to the approver. The accesses approved for this call, or
    /// why it does not run.
    async fn approve_paths(
        &mut self,
        workspace: &Workspace,
        tool: &dyn Tool,
        call: &ToolCall,
        cancel: &CancellationToken,
        approver: &mut dyn Approver,
    ) -> Result<Approved, String> {
        // Approved everywhere (a caller without a person to ask); a folder's "always" is per path,
        // and what is approved is the resolved path each question named.
        let mut approved = Approved {
            outside_everywhere: self.outside_allowed.iter().copied().collect(),
            ..Approved::default()
        };
        for (argument, access) in tool.paths(&call.arguments) {
            let place = workspace
                .locate(&self.options.cwd, &argument, access)
                .map_err(|refusal| refusal.of(&format!("{} {argument}", call.name)))?;
            let path = match place {
                Place::Allowed(_) => continue,
                Place::Guarded(path) => {
                    // Each guarded path of the call is approved, by the user now or by an
                    // "always" whose scope holds it.
                    let scope = workspace.guarded_scope(&path);
                    let covered = self
                        .guarded_allowed_under
                        .iter()
                        .any(|allowed| Workspace::guarded_scope_covers(allowed, &path));
                    if !covered {
                        self.approve_guarded(&argument, &path, &scope, call, cancel, approver)
                            .await?;
                    }
                    approved.guarded.push(path);
                    continue;
                }
                Place::Outside(path) => path,
            };
            if approved.outside_everywhere.contains(&access) {
                continue;
            }
            if self.outside_approved_for(access, &path) {
                approved.outside.push((access, path));
                continue;
            }
            // "Always" covers the folder the path is in, and says so.
            let folder = if path.is_dir() {
                path.clone()
            } else {
                path.parent()
                    .map_or_else(|| path.clone(), Path::to_path_buf)
            };
            let question = format!(
                "{} `{}`, outside the project? (always: anything under `{}`)",
                capitalized(access.verb()),
                crate::names::shown_path(&path),
                crate::names::shown_path(&folder)
            );
            match approver.approve_outside(&call.name, &question).await {
                Approval::Once => approved.outside.push((access, path)),
                Approval::Always => {
                    self.allow_outside_under(access, &folder);
                    approved.outside.push((access, path));
                }
                Approval::Deny | Approval::Unanswered => {
                    return Err(crate::tool::outside_refusal(
                        &call.name, &argument, &path, workspace,
                    ));
                }
                Approval::Stop => {
                    cancel.cancel();
                    return Err(crate::tool::outside_refusal(
                        &call.name, &argument, &path, workspace,
                    ));
                }
            }
        }
        Ok(approved)
    }

    /// Asks, as for `bash`, whether the model may write `path`, a guarded place of the project,
    /// saying what "always" covers: `scope` ([`Workspace::guarded_scope`]); the refusal unless
    /// approved.
    async fn approve_guarded(
        &mut self,
        argument: &str,
        path: &Path,
        scope: &Path,
        call: &ToolCall,
        cancel: &CancellationToken,
        approver: &mut dyn Approver,
    ) -> Result<(), String> {
        let always = if scope == path {
            "this file only".to_owned()
        } else {
            format!("anything under `{}`", crate::names::shown_path(scope))
        };
        let question = format!(
            "Write `{}`? ctxkit guards it ({}) (always: {always})",
            crate::names::shown_path(path),
            crate::GUARDED_KINDS
        );
        match approver.approve_guarded(&call.name, &question).await {
            Approval::Once => Ok(()),
            Approval::Always => {
                if !self
                    .guarded_allowed_under
                    .iter()
                    .any(|known| known == scope)
                {
                    self.guarded_allowed_under.push(scope.to_path_buf());
                }
                Ok(())
            }
            Approval::Deny | Approval::Unanswered => {
                Err(crate::tool::guarded_refusal(&call.name, argument, path))
            }
            Approval::Stop => {
                cancel.cancel();
                Err(crate::tool::guarded_refusal(&call.name, argument, path))
            }
        }
    }

    /// Where full outputs of cut tool results go: next to the session file, or under ctxkit's
    /// home for sessions in memory (never a folder others share).
    /// The session file, when there is one, comes second.
    pub(super) async fn output_dir(&self) -> (PathBuf, Option<PathBuf>) {
        let (dir, id, file) = self
            .engine
            .with_session(|session| {
                (
                    session.session_dir().map(std::path::Path::to_owned),
                    session.id().to_owned(),
                    session.path().map(std::path::Path::to_owned),
                )
            })
            .await;
        // The id comes from the session file's header: `/`, `..` or `a/b` must not name a folder
        // other than one of its own under `tool-output`.
        let id = safe_folder_name(&id);
        let dir = match (dir, self.workspace.home()) {
            (Some(dir), _) => dir.join("tool-output").join(id),
            (None, Some(home)) => home.join("tool-output").join(id),
            // No home at all: a folder of this user's own (made `0700` when first used).
            (None, None) => std::env::temp_dir()
                .join(format!(
                    "ctxkit-tool-output-{}",
                    ctxkit_session::current_user_id().unwrap_or(0)
                ))
                .join(id),
        };
        (dir, file)
    }
}

/// The tool calls of a reply, in order.
pub(super) fn calls_of(reply: &AssistantMessage) -> Vec<ToolCall> {
    reply
        .content
        .iter()
        .filter_map(ContentBlock::as_tool_call)
        .cloned()
        .collect()
}

/// `id` as one folder name: letters, digits, `-`, `_` and `.` kept, anything else `_`; a name
/// of dots only (`.`, `..`) or an empty one is `session`.
pub(super) fn safe_folder_name(id: &str) -> String {
    let name: String = id
        .chars()
        .take(128)
        .map(|character| {
            if character.is_ascii_alphanumeric() || matches!(character, '-' | '_' | '.') {
                character
            } else {
                '_'
            }
        })
        .collect();
    if name.chars().all(|character| character == '.') {
        "session".to_owned()
    } else {
        name
    }
}

/// `word` with a capital first letter.
fn capitalized(word: &str) -> String {
    let mut characters = word.chars();
    characters
        .next()
        .map(|first| first.to_uppercase().chain(characters).collect())
        .unwrap_or_default()
}

/// Waits for `running` (a tool call, a user's command), handing each of its progress reports,
/// redacted as its result will be, to `report` while it runs.
pub(super) async fn watch_progress<T, Reported: std::future::Future<Output = ()>>(
    mut running: tokio::task::JoinHandle<T>,
    mut reports: tokio::sync::watch::Receiver<String>,
    workspace: &Workspace,
    mut report: impl FnMut(String) -> Reported,
) -> Result<T, tokio::task::JoinError> {
    loop {
        tokio::select! {
            biased;
            ended = &mut running => return ended,
            changed = reports.changed() => {
                if changed.is_err() {
                    // The call dropped its handle: it is ending.
                    return running.await;
                }
                let output = workspace.redact(&reports.borrow_and_update());
                report(output).await;
            }
        }
    }
}

#[cfg(test)]
mod folder_name_tests {
    use super::safe_folder_name;

    /// Issue 42: a session header `id` of `/` made the saved-outputs folder `/`, so `read` of any
    /// file was allowed as a saved output.
    #[test]
    fn a_path_like_session_id_names_one_folder_of_its_own() {
        for (id, name) in [
            ("/", "_"),
            ("..", "session"),
            (".", "session"),
            ("", "session"),
            ("../../etc", ".._.._etc"),
            ("a/b", "a_b"),
            ("019a-uuid_ok.1", "019a-uuid_ok.1"),
        ] {
            assert_eq!(safe_folder_name(id), name, "{id}");
            let joined = std::path::Path::new("/sessions/tool-output").join(safe_folder_name(id));
            assert_eq!(
                joined.parent(),
                Some(std::path::Path::new("/sessions/tool-output"))
            );
        }
    }
}

//! A shell command the user typed (`!cmd` and `!!cmd` in the chat): run as the `bash` tool runs
//! its commands (in the project, without secret variables, within the time limit, stopped by the
//! turn's interrupt, its output redacted and bounded, the whole saved when cut) and recorded as
//! Pi records it, a `bashExecution` message; `!!` marks it `excludeFromContext`, so the model
//! never sees it.

use std::sync::Arc;

use ctxkit_engine::EngineError;
use ctxkit_protocol::{AgentMessage, BashExecutionMessage, JsonObject};

use super::{Agent, now_ms};
use crate::tool::ToolContext;
use crate::tools::limit::{self, Keep};
use crate::tools::{BashEnd, execute_bash};

impl Agent {
    /// Runs `command` for the user and appends its `bashExecution` message at the leaf. The user
    /// typed the command, which is the approval the `bash` tool asks for. Esc or Ctrl-C
    /// (`Engine::interrupt_turn`) stops it; the message then says it was cancelled.
    pub async fn run_user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
    ) -> Result<BashExecutionMessage, EngineError> {
        self.run_user_bash_watched(command, exclude_from_context, &|_| {})
            .await
    }

    /// [`Self::run_user_bash`], telling `on_output` the command's last lines while it runs
    /// (redacted as its message will be; each report replaces the one before), as a running
    /// `bash` call reports them ([`crate::AgentEvent::ToolOutput`]).
    pub async fn run_user_bash_watched(
        &self,
        command: &str,
        exclude_from_context: bool,
        on_output: &(dyn Fn(&str) + Sync),
    ) -> Result<BashExecutionMessage, EngineError> {
        let guard = self.engine.begin_turn();
        let (progress, reports) = crate::ToolProgress::channel();
        let (output_dir, _) = self.output_dir().await;
        let workspace = Arc::new(self.workspace.clone());
        let context = ToolContext {
            cwd: self.options.cwd.clone(),
            output_dir: output_dir.clone(),
            bash_timeout: self.options.bash_timeout,
            shell: self.options.shell.clone(),
            pass_env: self.options.pass_env.clone(),
            cancel: guard.cancel_token(),
            engine: None,
            workspace: Arc::clone(&workspace),
            approved: crate::tool::Approved::default(),
            auto_resize_images: true,
            max_output_bytes: self.max_output_bytes(),
            progress: Some(progress),
        };
        let owned = command.to_owned();
        let running = tokio::task::spawn_blocking(move || execute_bash(&owned, None, &context));
        let report = |output: String| {
            on_output(&output);
            std::future::ready(())
        };
        let run = super::tool_calls::watch_progress(running, reports, &workspace, report).await;
        drop(guard);
        let run = match run {
            Ok(Ok(run)) => run,
            Ok(Err(error)) => crate::tools::BashRun {
                output: error,
                trailing_newlines: 0,
                dropped_bytes: 0,
                end: BashEnd::Exited(None),
            },
            Err(error) => crate::tools::BashRun {
                output: format!("The command failed: {error}"),
                trailing_newlines: 0,
                dropped_bytes: 0,
                end: BashEnd::Exited(None),
            },
        };
        let timestamp = now_ms();
        let mut output = workspace.redact(&run.output);
        if let BashEnd::TimedOut(_) = run.end
            && let Some(status) = run.end.status()
        {
            output.push_str(&format!("\n\n{status}"));
        }
        let bounded = limit::bound_within(&output, Keep::Tail, self.max_output_bytes());
        let full_output_path = bounded.cut.as_ref().and_then(|_| {
            crate::tools::saved_output::save_full_output(
                &output_dir,
                &format!("user-bash-{timestamp}"),
                &output,
            )
            .ok()
            .map(|path| path.display().to_string())
        });
        let message = BashExecutionMessage {
            command: workspace.redact(command),
            output: bounded.text,
            exit_code: match run.end {
                BashEnd::Exited(code) => code.map(i64::from),
                BashEnd::TimedOut(_) | BashEnd::Cancelled => None,
            },
            cancelled: matches!(run.end, BashEnd::Cancelled | BashEnd::TimedOut(_)),
            truncated: bounded.cut.is_some(),
            full_output_path,
            exclude_from_context: exclude_from_context.then_some(true),
            timestamp: Some(timestamp),
            extra: JsonObject::new(),
        };
        self.engine
            .append(AgentMessage::BashExecution(message.clone()))
            .await?;
        Ok(message)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
    use ctxkit_protocol::AgentMessage;

    use crate::testing::ScriptedModel;
    use crate::{Agent, AgentOptions, OfflineSummarizer, Prompts, Session, ToolRegistry};

    async fn agent(project: &std::path::Path) -> Agent {
        let engine = Engine::new(
            Session::in_memory(&project.display().to_string()),
            EngineOptions {
                settings: EngineSettings::from_settings(
                    ctxkit_settings::SettingsManager::in_memory(Default::default()).settings(),
                ),
                model: None,
                summarizer: Arc::new(OfflineSummarizer::default()),
                prompts: Prompts::default(),
                hooks: HookSet::new(),
                thinking_level: None,
                project: None,
            },
        );
        let info = ModelInfo {
            provider: "mock".into(),
            id: "m".into(),
            context_window: 100_000,
            cache: None,
        };
        Agent::new(
            engine,
            Arc::new(ScriptedModel::answering(info, &["ok"])),
            ToolRegistry::coding(),
            AgentOptions {
                system_prompt: String::new(),
                max_tokens: None,
                reasoning: None,
                pass_env: Vec::new(),
                auto_resize_images: true,
                max_tool_output_bytes: None,
                cwd: project.to_owned(),
                bash_timeout: std::time::Duration::from_secs(10),
                shell: Default::default(),
            },
        )
        .await
    }

    #[tokio::test]
    async fn a_user_command_is_recorded_as_pi_records_it() {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("a.txt"), "x").unwrap();
        let agent = agent(project.path()).await;
        let message = agent.run_user_bash("ls; exit 3", false).await.unwrap();
        assert_eq!(message.output, "a.txt");
        assert_eq!(message.exit_code, Some(3));
        assert_eq!(message.exclude_from_context, None);
        let excluded = agent.run_user_bash("echo hidden", true).await.unwrap();
        assert_eq!(excluded.exclude_from_context, Some(true));
        let transcript = agent.engine().transcript().await.unwrap();
        assert!(matches!(transcript[0], AgentMessage::BashExecution(_)));
        let json = serde_json::to_value(&transcript[1]).unwrap();
        assert_eq!(json["role"], "bashExecution");
        assert_eq!(json["excludeFromContext"], true);
        assert_eq!(json["exitCode"], 0);
    }

    #[tokio::test]
    async fn a_configured_key_printed_by_a_command_never_reaches_the_session() {
        let project = tempfile::tempdir().unwrap();
        std::fs::write(
            project.path().join("env.txt"),
            "KEY=sk-user-bash-0123456789",
        )
        .unwrap();
        let mut agent = agent(project.path()).await;
        let mut workspace = crate::Workspace::new(project.path());
        workspace.add_secret("sk-user-bash-0123456789");
        agent.set_workspace(workspace);
        // While it runs, the watcher sees its last lines redacted too.
        let seen = std::sync::Mutex::new(Vec::new());
        let message = agent
            .run_user_bash_watched("cat env.txt; sleep 0.4", false, &|output| {
                seen.lock().unwrap().push(output.to_owned());
            })
            .await
            .unwrap();
        assert_eq!(message.output, "KEY=<redacted>");
        assert_eq!(*seen.lock().unwrap(), ["KEY=<redacted>"]);
        let transcript =
            serde_json::to_string(&agent.engine().transcript().await.unwrap()).unwrap();
        assert!(!transcript.contains("sk-user-bash"), "{transcript}");
    }

    #[tokio::test]
    async fn a_long_output_keeps_its_tail_and_saves_the_whole() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let mut agent = agent(project.path()).await;
        let mut workspace = crate::Workspace::new(project.path());
        workspace.set_home(home.path());
        agent.set_workspace(workspace);
        let message = agent.run_user_bash("seq 1 5000", false).await.unwrap();
        assert!(message.truncated);
        assert!(message.output.ends_with("5000"), "{}", message.output);
        assert!(!message.output.starts_with("1\n"));
        let path = message.full_output_path.unwrap();
        assert!(
            path.starts_with(&home.path().display().to_string()),
            "{path}"
        );
        assert!(std::fs::read_to_string(path).unwrap().starts_with("1\n2\n"));
    }
}

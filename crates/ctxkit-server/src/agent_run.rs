//! `agent.run`: the agent loop of `ctxkit-agent` on the open session with a configured model, its
//! progress sent as `agent_event` notifications; `agent.cancel` interrupts it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::{
    Access, Agent, AgentEvent, AgentObserver, AgentOptions, ApproveAll, CacheWarmer, ChatModel,
    DenyAll, PromptOutcome, ToolRegistry, Workspace,
};
use ctxkit_llm::{ChatDelta, RetryNotice};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::errors::engine_error;
use crate::methods::{engine, params};
use crate::{MethodError, Shared, codes};

/// Where `agent.run` gets its model from.
pub trait ModelSource: Send + Sync {
    /// The model for `spec` (`provider/id`), or the configured default for `None`; the error is
    /// shown to the client as is.
    fn chat_model(&self, spec: Option<&str>) -> Result<Arc<dyn ChatModel>, String>;

    /// The model for `spec` in the session `session_id`: a source that keeps per-session state
    /// (Anthropic message threads) binds it here. By default, [`ModelSource::chat_model`].
    fn chat_model_for_session(
        &self,
        spec: Option<&str>,
        session_id: &str,
    ) -> Result<Arc<dyn ChatModel>, String> {
        let _ = session_id;
        self.chat_model(spec)
    }
}

/// The system prompt of a run that gives none, for the project the session works in: each
/// session has its own `cwd`, so its own context files (`AGENTS.md`) and project skills.
#[derive(Clone)]
pub struct SystemPrompt(Arc<dyn Fn(&std::path::Path) -> String + Send + Sync>);

impl std::fmt::Debug for SystemPrompt {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("SystemPrompt")
    }
}

impl SystemPrompt {
    /// The same text for every project.
    pub fn fixed(text: impl Into<String>) -> Self {
        let text: String = text.into();
        Self(Arc::new(move |_| text.clone()))
    }

    /// Built for the session's project when a run starts (`ctxkit serve`: what `ctxkit prompt`
    /// prints there).
    pub fn per_project(build: impl Fn(&std::path::Path) -> String + Send + Sync + 'static) -> Self {
        Self(Arc::new(build))
    }

    /// The prompt for a run in `cwd`, built off the async workers (it reads files).
    async fn for_project(&self, cwd: &std::path::Path) -> String {
        let build = Arc::clone(&self.0);
        let cwd = cwd.to_path_buf();
        tokio::task::spawn_blocking(move || build(&cwd))
            .await
            .unwrap_or_default()
    }
}

/// What `agent.run` needs besides the session: models, the default system prompt and tool limits.
pub struct AgentConfig {
    pub models: Arc<dyn ModelSource>,
    /// Used when a run gives none.
    pub system_prompt: SystemPrompt,
    /// The default time limit of the `bash` tool.
    pub bash_timeout: Duration,
    /// The shell the `bash` tool runs (`shellPath`, `shellCommandPrefix` of the user's settings).
    pub shell: ctxkit_agent::tools::Shell,
    /// Secret variables the tools' commands may see (`chat.passEnv` of the user's settings).
    pub pass_env: Vec<String>,
    /// Images `read` returns are fitted to 2000 × 2000 pixels and 4.5 MB (`images.autoResize`).
    pub auto_resize_images: bool,
    /// The tools of a run, a copy each (what the server's `defaultTools` selects in ctxkit; tests
    /// add their own).
    pub tools: ToolRegistry,
    /// ctxkit's home, which no tool may read or write (`None`: `CTXKIT_HOME`, else `~/.ctxkit`);
    /// the server's sessions directory is protected too.
    pub home: Option<PathBuf>,
    /// Paths outside the project tools may read (`chat.readablePaths` of the user's settings).
    pub readable_paths: Vec<PathBuf>,
    /// Secret values (settings' keys and headers) redacted from tool results, besides the secret
    /// environment variables.
    pub secrets: Vec<String>,
    /// Files and folders a tool writes only with approval, besides the guarded places every
    /// project has (`.git/`, `.ctxkit/`, `.pi/`, the live session file): the hook scripts the
    /// settings name and local package folders, wherever they are (without a person to ask,
    /// `approve: "none"`, such a write is refused).
    pub guarded: Vec<PathBuf>,
    /// The folders of the loaded skills: read without a question although ctxkit's home holds
    /// them, never written (`WorkspaceLimits::skill_folders`).
    pub skill_folders: Vec<PathBuf>,
    /// Keeps the prompt cache of the runs' requests warm between `agent.run` calls
    /// (`cacheWarming`); stopped when another session is opened and at the end. `None`: no warming.
    pub warmer: Option<Arc<CacheWarmer>>,
    /// `steeringMode: "all"`: the messages `agent.steer` queued go to the model all at once;
    /// otherwise one a request (Pi's `one-at-a-time`).
    pub steering_all: bool,
    /// `followUpMode: "all"`: the same for `agent.follow_up`'s messages.
    pub follow_ups_all: bool,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AgentConfig")
            .field("bash_timeout", &self.bash_timeout)
            .finish_non_exhaustive()
    }
}

/// Which risky tool calls (`bash`) run without a person to ask.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(try_from = "String")]
enum ApprovePolicy {
    /// Declined; the model is told so (the default).
    #[default]
    None,
    All,
}

impl TryFrom<String> for ApprovePolicy {
    type Error = String;

    /// `"none"` or `"all"`; anything else is named with the two (`true` was refused with serde's
    /// "expected string or map", which spoke of a form there is not).
    fn try_from(text: String) -> Result<Self, Self::Error> {
        match text.as_str() {
            "none" => Ok(Self::None),
            "all" => Ok(Self::All),
            other => Err(format!("`approve` is \"none\" or \"all\", not `{other}`")),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunParams {
    text: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    system_prompt: Option<String>,
    #[serde(default)]
    approve: ApprovePolicy,
    #[serde(default)]
    max_tokens: Option<u64>,
    /// Tools may read and write outside the project (no person is there to ask).
    #[serde(default, alias = "allowOutsideProject")]
    allow_outside_project: bool,
    /// The project the tools work in; without it, the session's recorded `cwd` when this client
    /// chose it (`projects::of_run`).
    #[serde(default)]
    cwd: Option<String>,
}

/// Refuses a run that could not do what it asks before any model is called (sweep 9: an empty
/// prompt was sent and stored; `max_tokens: 0` went out as 1).
fn check_run(params: &RunParams) -> Result<(), MethodError> {
    let refused = |reason: &str| {
        Err(MethodError::new(
            codes::INVALID_PARAMS,
            format!("invalid params: {reason}"),
        ))
    };
    if params.text.trim().is_empty() {
        return refused("`text` is empty");
    }
    if params.max_tokens == Some(0) {
        return refused("`max_tokens` is 0; leave it out for the model's own limit");
    }
    Ok(())
}

/// Sends the loop's events as `agent_event` notifications, and follows what the run is doing.
struct Notifier(crate::outgoing::Outgoing, crate::activity::Tracker);

impl AgentObserver for Notifier {
    fn event<'a>(&'a self, event: AgentEvent) -> BoxFuture<'a, ()> {
        self.1.agent_event(&event);
        let params = match event {
            // The engine's own events (compactions) are forwarded as `event` notifications.
            AgentEvent::Checked(_) => None,
            AgentEvent::ModelCall => Some(json!({"type": "model_call"})),
            // The protocol sends replies whole (`reply`); streamed pieces are not forwarded.
            AgentEvent::Delta(delta) => Some(match delta {
                ChatDelta::Text(text) => json!({"type": "delta", "kind": "text", "text": text}),
                ChatDelta::Thinking(text) => {
                    json!({"type": "delta", "kind": "thinking", "text": text})
                }
                ChatDelta::ToolCall { name } => {
                    json!({"type": "delta", "kind": "tool_call", "name": name})
                }
                ChatDelta::BlockEnd => json!({"type": "delta", "kind": "block_end"}),
                ChatDelta::Retrying(notice) => provider_retry(&notice),
            }),
            AgentEvent::Reply { reply, overflow } => {
                Some(json!({"type": "reply", "message": reply, "overflow": overflow}))
            }
            // The call as a content block (`"type": "toolCall"`), as the reply holds it.
            AgentEvent::ToolStart { call } => Some(json!({
                "type": "tool_start",
                "call": ctxkit_protocol::ContentBlock::ToolCall(call),
            })),
            // A running call's last lines so far, each replacing the one before.
            AgentEvent::ToolOutput { call_id, output } => Some(json!({
                "type": "tool_output",
                "tool_call_id": call_id,
                "text": output,
            })),
            AgentEvent::ToolEnd { call, outcome } => Some(json!({
                "type": "tool_end",
                "tool_call_id": call.id,
                "tool_name": call.name,
                "text": outcome.text,
                "is_error": outcome.is_error,
            })),
            AgentEvent::Retry => Some(json!({"type": "retry"})),
            AgentEvent::ProviderRetry(notice) => Some(provider_retry(&notice)),
            // The engine's `compaction_failed` says the cancel; the run's next event, or its
            // outcome (`interrupted`, `failed` with the reason, `not_sent`), what followed.
            AgentEvent::CompactionCancelled(_) => None,
            // The run stops (`failed`, or a prompt `not_sent`): why, before its outcome.
            AgentEvent::NoOutputRoom(stop) => Some(json!({
                "type": "no_output_room",
                "tokens": stop.tokens,
                "window": stop.window,
                "floor": stop.floor,
                "message": stop.reason(),
            })),
            AgentEvent::Steered { text, follow_up } => Some(json!({
                "type": if follow_up { "follow_up" } else { "steered" },
                "text": text,
            })),
        };
        if let Some(params) = params {
            let _ = self
                .0
                .send(&json!({"jsonrpc": "2.0", "method": "agent_event", "params": params}));
        }
        Box::pin(async {})
    }
}

/// A `provider_retry` event: the model request failed and is sent again after `delay_ms`.
fn provider_retry(notice: &RetryNotice) -> Value {
    json!({
        "type": "provider_retry",
        "attempt": notice.attempt,
        "max_retries": notice.max_retries,
        "delay_ms": u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
        "status": notice.status,
        "error": notice.reason,
        "message": notice.describe(),
        "restarted": notice.restarted,
    })
}

pub(crate) async fn run(shared: &Arc<Shared>, raw: Value) -> Result<Value, MethodError> {
    let params: RunParams = params(raw)?;
    check_run(&params)?;
    let Some(config) = &shared.config.agent else {
        return Err(MethodError::new(
            codes::NO_MODEL,
            "no model is configured for `agent.run`: set `defaultModel` (or pass `model`)",
        ));
    };
    let engine = engine(shared).await?;
    let session_id = engine.with_session(|session| session.id().to_owned()).await;
    let model = config
        .models
        .chat_model_for_session(params.model.as_deref(), &session_id)
        .map_err(|error| MethodError::new(codes::NO_MODEL, error))?;
    let recorded = engine
        .with_session(|session| session.cwd().to_owned())
        .await;
    let cwd = crate::projects::of_run(shared, &recorded, params.cwd.as_deref())?;
    let workspace = workspace(config, &shared.config.sessions_root, &cwd);
    if let Some(refusal) = workspace.project_refusal() {
        return Err(MethodError::new(
            codes::INVALID_PARAMS,
            format!("invalid params: the run's project {refusal}"),
        ));
    }
    engine.set_project(cwd.clone());
    let system_prompt = match params.system_prompt {
        Some(text) => text,
        None => config.system_prompt.for_project(&cwd).await,
    };
    // Pi's `defaultThinkingLevel`, as chat sends it (a model that does not reason gets none).
    let reasoning = shared
        .config
        .settings
        .default_thinking_level
        .as_deref()
        .and_then(ctxkit_llm::ReasoningLevel::parse);
    let mut agent = Agent::new(
        engine,
        model,
        config.tools.clone(),
        AgentOptions {
            system_prompt,
            max_tokens: params.max_tokens,
            reasoning,
            cwd: cwd.clone(),
            bash_timeout: config.bash_timeout,
            shell: config.shell.clone(),
            pass_env: config.pass_env.clone(),
            auto_resize_images: config.auto_resize_images,
            max_tool_output_bytes: None,
        },
    )
    .await;
    agent.set_workspace(workspace);
    if let Some(warmer) = &config.warmer {
        agent.set_cache_warmer(Arc::clone(warmer));
    }
    shared
        .steered
        .set_modes(config.steering_all, config.follow_ups_all);
    agent.set_steering(Arc::clone(&shared.steered) as Arc<dyn ctxkit_agent::Steering>);
    if params.allow_outside_project {
        agent.allow_outside(Access::Read);
        agent.allow_outside(Access::Write);
    }
    let notifier = Notifier(shared.out.clone(), shared.activity.clone());
    let outcome = match params.approve {
        ApprovePolicy::None => agent.prompt(params.text, &mut DenyAll, &notifier).await,
        ApprovePolicy::All => agent.prompt(params.text, &mut ApproveAll, &notifier).await,
    };
    // A run that did not end answered takes back what was queued for it, as `agent.cancel` does
    // (QA: a steer sent during a run that failed went in after the next run's prompt).
    let (steering, follow_ups) = if matches!(outcome, Ok(PromptOutcome::Answered)) {
        (Vec::new(), Vec::new())
    } else {
        shared.steered.drain()
    };
    let mut answer = match outcome.map_err(engine_error)? {
        PromptOutcome::Answered => json!({"outcome": "answered"}),
        PromptOutcome::Interrupted => json!({"outcome": "interrupted"}),
        PromptOutcome::NotSent(text) => json!({"outcome": "not_sent", "text": text}),
        PromptOutcome::Failed(message) => json!({"outcome": "failed", "message": message}),
    };
    if !steering.is_empty() || !follow_ups.is_empty() {
        answer["dropped_steering"] = json!(steering);
        answer["dropped_follow_ups"] = json!(follow_ups);
    }
    Ok(answer)
}

/// The tools' boundary for a run in the project at `cwd`.
fn workspace(
    config: &AgentConfig,
    sessions_root: &std::path::Path,
    cwd: &std::path::Path,
) -> Workspace {
    Workspace::with_limits(
        cwd,
        ctxkit_agent::WorkspaceLimits {
            home: config.home.as_deref(),
            sessions_root,
            readable_paths: &config.readable_paths,
            secrets: &config.secrets,
            guarded: &config.guarded,
            skill_folders: &config.skill_folders,
        },
    )
}

/// `agent.cancel`: interrupts the running model call or tool, and takes back the steering and
/// follow-up messages still waiting (answered as `dropped_steering` and `dropped_follow_ups`, for
/// the client to send again if it wants): they were for the run it stops, and a steer for a
/// cancelled run reached the model after the next run's prompt (QA).
pub(crate) async fn cancel(shared: &Arc<Shared>) -> Result<Value, MethodError> {
    let engine = engine(shared).await?;
    engine.interrupt_turn();
    let (steering, follow_ups) = shared.steered.drain();
    Ok(json!({"dropped_steering": steering, "dropped_follow_ups": follow_ups}))
}

/// Stops warming the prompt cache of the last run (another session is opened, or the server ends).
pub(crate) fn stop_warming(shared: &Shared) {
    if let Some(warmer) = shared
        .config
        .agent
        .as_ref()
        .and_then(|agent| agent.warmer.as_ref())
    {
        warmer.cancel();
    }
}

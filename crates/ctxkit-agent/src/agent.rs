//! The agent: an engine (the session), a model, tools and options, with what a surface sets on it
//! (the workspace, approvals, the model and its limits). The loop itself is in `turn`; what it
//! tells its caller in `events`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_engine::{Engine, EngineError};
use ctxkit_llm::ReasoningLevel;

use crate::model::ChatModel;
use crate::tool::ToolRegistry;
use crate::warming::CacheWarmer;
use crate::workspace::{Access, Workspace};

mod call_ids;
mod cancelled_compaction;
mod events;
mod forked_outputs;
mod model_call;
mod no_room;
mod prompt_room;
mod steering;
mod tool_calls;
mod turn;
mod user_bash;

pub use cancelled_compaction::AfterCancelledCompaction;
pub use events::{AgentEvent, AgentObserver, IgnoreEvents, PromptOutcome};
pub use no_room::{NoOutputRoom, NoRoomCause};
pub use steering::Steering;

use turn::TurnEnd;

/// How an agent runs, apart from its engine, model and tools.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The system prompt; the engine's system texts (summaries, pins) are appended to it.
    pub system_prompt: String,
    /// Output tokens for each reply; `None` leaves the provider's default.
    pub max_tokens: Option<u64>,
    /// The reasoning ("thinking") level requested; `None` asks for none.
    pub reasoning: Option<ReasoningLevel>,
    /// Where tools run.
    pub cwd: PathBuf,
    /// The default `bash` time limit.
    pub bash_timeout: Duration,
    /// The shell `bash` commands run in (`shellPath`, `shellCommandPrefix`).
    pub shell: crate::tools::Shell,
    /// Secret environment variables (provider keys, tokens) `bash` commands may see
    /// (`chat.passEnv`); every other one is removed from their environment.
    pub pass_env: Vec<String>,
    /// Images `read` returns are fitted to 2000 × 2000 pixels and 4.5 MB (`images.autoResize`).
    pub auto_resize_images: bool,
    /// The most bytes one tool output keeps (the rest is saved and named). `None`: Pi's 50 KB,
    /// cut to about a quarter of a small model's window (`tools::limit::output_bytes_for_window`:
    /// 8 KB for an 8,000-token model, which a 50 KB output would overflow).
    pub max_tool_output_bytes: Option<usize>,
}

/// An agent: an engine (the session), a model, tools and options.
pub struct Agent {
    engine: Engine,
    model: Arc<dyn ChatModel>,
    tools: ToolRegistry,
    options: AgentOptions,
    /// Tools the user approved for the rest of the agent's life.
    always_allowed: HashSet<String>,
    /// Where the tools may go, and the secrets their results must not show.
    workspace: Arc<Workspace>,
    /// Accesses outside the project approved everywhere for the rest of the agent's life (a
    /// caller without a person to ask, [`Agent::allow_outside`]).
    outside_allowed: HashSet<Access>,
    /// Accesses outside the project the user answered "always" to, each under the folder of the
    /// path asked about (QA: "always" on a note written to `/tmp/x/` let the model overwrite
    /// `~/.bashrc` unasked).
    outside_allowed_under: Vec<(Access, std::path::PathBuf)>,
    /// Guarded places of the project the user answered "always" to a write in, each the scope
    /// [`Workspace::guarded_scope`] names (QA: "always" to a prompt template let the model write
    /// `.git/hooks/pre-commit` unasked).
    guarded_allowed_under: Vec<std::path::PathBuf>,
    /// Keeps the prompt cache of the last request warm (`cacheWarming`); none by default.
    warmer: Option<Arc<CacheWarmer>>,
    /// Messages typed while the agent works, delivered after each tool batch; none by default.
    steering: Option<Arc<dyn Steering>>,
    /// The session's tool call ids, so a reply that reuses one gets its own.
    call_ids: call_ids::CallIds,
    /// The output folders of the sessions the current one was forked from, with what they were
    /// read for (its folder and parent): read once, not at every tool call.
    forked_outputs: Option<forked_outputs::ForkedOutputs>,
    /// The next request is built from the shortened view: the last room check found that only
    /// it leaves the reply room ([`Agent::without_room`]).
    shorten_next_view: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Agent")
            .field("model", &self.model.info())
            .field("tools", &self.tools)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// The model as the engine is told it: its configured window, and the limit the provider stated
/// below it, when one was learned (a surface's agents come and go, serve's one a run: a model told
/// with the stated limit as its window would lose the configured one, which the engine's
/// `context_usage` reports beside the limit in force).
fn engine_model(model: &dyn ChatModel) -> (ctxkit_engine::ModelInfo, Option<u64>) {
    let mut info = model.info();
    let stated = info.context_window;
    match model.configured_window() {
        Some(configured) if stated > 0 && stated < configured => {
            info.context_window = configured;
            (info, Some(stated))
        }
        Some(_) | None => (info, None),
    }
}

/// Tells `engine` the model it works with ([`engine_model`]).
async fn tell_engine(engine: &Engine, model: &dyn ChatModel) {
    let (info, stated_limit) = engine_model(model);
    engine.set_model(Some(info)).await;
    if let Some(limit) = stated_limit {
        engine.note_stated_limit(limit).await;
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Agent {
    /// An agent over `engine`; the engine is told the model (its window drives compaction).
    pub async fn new(
        engine: Engine,
        model: Arc<dyn ChatModel>,
        tools: ToolRegistry,
        options: AgentOptions,
    ) -> Self {
        tell_engine(&engine, model.as_ref()).await;
        let workspace = Arc::new(Workspace::new(&options.cwd));
        Self {
            engine,
            model,
            tools,
            options,
            always_allowed: HashSet::new(),
            workspace,
            outside_allowed: HashSet::new(),
            outside_allowed_under: Vec::new(),
            guarded_allowed_under: Vec::new(),
            warmer: None,
            steering: None,
            call_ids: call_ids::CallIds::default(),
            forked_outputs: None,
            shorten_next_view: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Judges the tools' paths against `workspace` from now on (by default: the project at the
    /// options' `cwd`, ctxkit's home of this process protected).
    pub fn set_workspace(&mut self, workspace: Workspace) {
        self.workspace = Arc::new(workspace);
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// Lets tools `access` paths outside the project without asking (a caller without a person
    /// to ask that allows it up front, or the user's "always" answer).
    pub fn allow_outside(&mut self, access: Access) {
        self.outside_allowed.insert(access);
    }

    /// Lets tools `access` paths under `folder`, outside the project, without asking (the user's
    /// "always" to a question about a path in it).
    pub fn allow_outside_under(&mut self, access: Access, folder: &std::path::Path) {
        let entry = (access, folder.to_owned());
        if !self.outside_allowed_under.contains(&entry) {
            self.outside_allowed_under.push(entry);
        }
    }

    /// The most bytes one tool output keeps: [`AgentOptions::max_tool_output_bytes`], else Pi's
    /// 50 KB cut to about a quarter of a small model's window.
    pub(crate) fn max_output_bytes(&self) -> usize {
        self.options.max_tool_output_bytes.unwrap_or_else(|| {
            crate::tools::limit::output_bytes_for_window(self.model.info().context_window)
        })
    }

    /// Whether `access` to `path`, outside the project, was approved for good.
    fn outside_approved_for(&self, access: Access, path: &std::path::Path) -> bool {
        self.outside_allowed.contains(&access)
            || self
                .outside_allowed_under
                .iter()
                .any(|(allowed, folder)| *allowed == access && path.starts_with(folder))
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Works on another engine (another session) from now on.
    pub async fn set_engine(&mut self, engine: Engine) {
        tell_engine(&engine, self.model.as_ref()).await;
        self.engine = engine;
        self.call_ids.reset();
    }

    pub fn model(&self) -> &Arc<dyn ChatModel> {
        &self.model
    }

    /// Talks to another model from now on; the engine measures against its window.
    pub async fn set_model(&mut self, model: Arc<dyn ChatModel>) {
        tell_engine(&self.engine, model.as_ref()).await;
        self.model = model;
    }

    /// Talks to another model from now on and records the switch in the session (a
    /// `model_change` entry, as Pi's `/model` does): the user's switch, where
    /// [`Agent::set_model`] is a surface's own. Nothing changes when the entry cannot be written.
    pub async fn switch_model(&mut self, model: Arc<dyn ChatModel>) -> Result<String, EngineError> {
        let (info, stated_limit) = engine_model(model.as_ref());
        let id = self.engine.switch_model(info).await?;
        if let Some(limit) = stated_limit {
            self.engine.note_stated_limit(limit).await;
        }
        self.model = model;
        Ok(id)
    }

    /// The output tokens asked for each reply from the next request on (`None`: the provider's
    /// default): a surface that switches models sets the new model's.
    pub fn set_max_tokens(&mut self, tokens: Option<u64>) {
        self.options.max_tokens = tokens;
    }

    /// The reasoning level asked for from the next request on (`None`: none).
    pub fn set_reasoning(&mut self, level: Option<ReasoningLevel>) {
        self.options.reasoning = level;
    }

    /// The system prompt from the next request on (the chat's `/reload`).
    pub fn set_system_prompt(&mut self, prompt: String) {
        self.options.system_prompt = prompt;
    }

    /// The `bash` tool's default time limit and whether images are fitted, from the next tool
    /// call on (the chat's `/reload`).
    pub fn set_tool_limits(&mut self, bash_timeout: std::time::Duration, auto_resize_images: bool) {
        self.options.bash_timeout = bash_timeout;
        self.options.auto_resize_images = auto_resize_images;
    }

    /// The shell `bash` commands and the user's `!cmd` run in, and the secret variables they
    /// are given, from the next command on (the chat's `/reload`).
    pub fn set_shell(&mut self, shell: crate::tools::Shell, pass_env: Vec<String>) {
        self.options.shell = shell;
        self.options.pass_env = pass_env;
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Keeps the prompt cache of each request warm with `warmer` from now on (shared with the
    /// session's later agents, so a new request replaces the warming of the last one).
    pub fn set_cache_warmer(&mut self, warmer: Arc<CacheWarmer>) {
        self.warmer = Some(warmer);
    }

    /// Stops asking before `tool` runs.
    pub fn allow_always(&mut self, tool: &str) {
        self.always_allowed.insert(tool.to_owned());
    }

    /// Asks before `tool` runs again, whatever was allowed always before (the chat's
    /// `chat.confirmBash` turned on by `/reload`).
    pub fn ask_again(&mut self, tool: &str) {
        self.always_allowed.remove(tool);
    }
}

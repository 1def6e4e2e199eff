//! `ctxkit chat`: an interactive coding agent over the context engine. The configured model (an
//! OpenAI-compatible Chat Completions server) gets the engine's view of the session and the coding
//! tools; the engine compacts automatically and recovers overflows; slash commands reach the
//! session tree, compaction history and pins.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod agent;
mod escape;
mod interrupts;
mod repl;
mod setup;
mod slash;
pub mod tools;
mod ui;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_compaction::{Prompts, Summarizer};
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_llm::{LlmOptions, ModelClient, ToolDefinition};
use ctxkit_resources::LoadedResources;
use ctxkit_session::Session;

use super::Locations;
use crate::Outcome;
use crate::cli::{ChatArgs, GlobalArgs};
use interrupts::Interrupts;
use ui::{EventView, Ui};

/// `ctxkit chat`.
pub fn chat(global: &GlobalArgs, locations: &Locations, args: &ChatArgs) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut chat = runtime.block_on(async { setup::build(global, locations, args) })?;
    let outcome = repl::run(&runtime, &mut chat);
    drop(chat);
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome
}

/// Everything a new engine is built from, kept for `/new`, `/resume` and `/model`.
struct EngineParts {
    settings: EngineSettings,
    summarizer: Arc<dyn Summarizer>,
    prompts: Prompts,
}

/// The state of one chat.
struct Chat {
    engine: Engine,
    events: EventView,
    client: Arc<ModelClient>,
    /// Model options from settings, for `/model`.
    llm_options: LlmOptions,
    parts: EngineParts,
    system_prompt: String,
    tools: Vec<ToolDefinition>,
    resources: LoadedResources,
    cwd: PathBuf,
    /// Where new sessions of this directory go.
    session_dir: PathBuf,
    /// `--no-session`.
    in_memory: bool,
    confirm_bash: bool,
    bash_timeout: Duration,
    ui: Ui,
    interrupts: Interrupts,
}

impl Chat {
    /// The engine's view of the current model.
    fn model_info(&self) -> ModelInfo {
        model_info(&self.client)
    }

    /// Switches to another session: a new engine over it, its events shown.
    fn install(&mut self, session: Session) {
        let (engine, events) = start_engine(
            &self.parts,
            self.model_info(),
            session,
            &self.ui,
            &self.interrupts,
        );
        // The old view stops before the new one starts showing events.
        self.events = events;
        self.engine = engine;
    }

    /// A new session for the working directory (in memory with `--no-session`).
    fn new_session(&self) -> Session {
        let cwd = self.cwd.display().to_string();
        if self.in_memory {
            Session::in_memory(&cwd)
        } else {
            Session::create(&cwd, &self.session_dir)
        }
    }

    /// Where full outputs of cut tool results go: next to the session file, or in the temp
    /// directory for sessions in memory.
    async fn output_dir(&self) -> PathBuf {
        let (dir, id) = self
            .engine
            .with_session(|session| {
                (
                    session.session_dir().map(std::path::Path::to_owned),
                    session.id().to_owned(),
                )
            })
            .await;
        match dir {
            Some(dir) => dir.join("tool-output").join(id),
            None => std::env::temp_dir().join("ctxkit-tool-output").join(id),
        }
    }
}

/// An engine over `session` with its events shown and Ctrl-C wired to it.
fn start_engine(
    parts: &EngineParts,
    model: ModelInfo,
    session: Session,
    ui: &Ui,
    interrupts: &Interrupts,
) -> (Engine, EventView) {
    let engine = Engine::new(
        session,
        EngineOptions {
            settings: parts.settings.clone(),
            model: Some(model),
            summarizer: Arc::clone(&parts.summarizer),
            prompts: parts.prompts.clone(),
            hooks: HookSet::new(),
            thinking_level: None,
        },
    );
    let events = EventView::start(&engine, ui.clone());
    interrupts.set_engine(&engine);
    (engine, events)
}

fn model_info(client: &ModelClient) -> ModelInfo {
    let config = client.config();
    ModelInfo {
        provider: config.provider.clone(),
        id: config.model.clone(),
        context_window: client.context_window().unwrap_or(0),
    }
}

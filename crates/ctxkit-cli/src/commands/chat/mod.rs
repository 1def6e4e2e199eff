//! `ctxkit chat`: an interactive coding agent over the context engine. The configured model (any of
//! the four wire formats, streamed) gets the engine's view of the session and the coding tools; the engine compacts automatically and recovers overflows; slash commands reach the
//! session tree, compaction history and pins.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod agent;
mod attach;
mod banner;
mod clipboard;
mod code_blocks;
mod cursor_keys;
mod enter_key;
mod escape;
mod export;
mod external_editor;
mod file_checkpoints;
mod first_session;
mod fork;
mod import;
mod input;
mod interrupts;
mod key_question;
mod large_input;
mod login;
mod markdown;
mod model_flag;
mod model_picker;
mod model_scope;
mod modified_keys;
mod moves;
mod notes;
mod palette;
mod picker;
mod print;
mod progress;
mod prompt_history;
mod question;
mod refused_flags;
mod reload;
mod repl;
mod restore;
mod rewind;
mod scoped_models_picker;
mod session_file;
mod session_info;
mod settings_picker;
mod setup;
mod share;
mod shell;
mod slash;
pub(super) mod slash_completion;
mod status;
mod store_health;
mod thinking;
mod tool_preview;
mod tree_view;
mod trust;
mod type_ahead;
mod ui;

pub(super) use moves::{RESUME_QUESTION, resume_rows};
pub use print::PromptNotSent;
pub use repl::LastRequestFailed;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_agent::{Agent, ChatModel};
use ctxkit_compaction::Prompts;
use ctxkit_engine::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};
use ctxkit_llm::{LlmOptions, ModelClient};
use ctxkit_resources::LoadedResources;
use ctxkit_session::Session;
use ctxkit_summarizer::Summarizer;

use super::Locations;
use super::settings::ProcessSettings;
use crate::Outcome;
use crate::cli::ChatArgs;
use interrupts::Interrupts;
use print::ChatMode;
use ui::{EventView, Ui};

/// `ctxkit chat`.
pub fn chat(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    args: &ChatArgs,
) -> Result<Outcome> {
    refused_flags::refuse_pi_only_flags(args)?;
    let mode = ChatMode::of(args);
    // Read before anything may ask a question: in print mode the pipe is the prompt, never an
    // answer.
    let piped = match mode {
        ChatMode::Print => print::read_piped()?,
        ChatMode::Interactive | ChatMode::Script => None,
    };
    if mode == ChatMode::Print {
        if args.resume {
            return Err(crate::usage::UsageError {
                message: "`--resume` lists sessions to pick from, which print mode cannot do"
                    .to_owned(),
                hint: "name the session: `--session FILE|ID`, or `--continue` for the last one"
                    .to_owned(),
            }
            .into());
        }
        if piped.is_none() && args.messages.is_empty() {
            return Err(print::nothing_to_send());
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut chat = runtime.block_on(setup::build(process, locations, args))?;
    let outcome =
        print::starting_prompts(&chat, piped, &args.messages).and_then(|prompts| match mode {
            ChatMode::Print => print::run(&runtime, &mut chat, prompts),
            ChatMode::Interactive | ChatMode::Script => repl::run(&runtime, &mut chat, prompts),
        });
    chat.warmer.cancel();
    drop(chat);
    runtime.shutdown_timeout(Duration::from_millis(200));
    outcome
}

/// Everything a new engine is built from, kept for `/new`, `/resume` and `/model`.
struct EngineParts {
    settings: EngineSettings,
    summarizer: Arc<dyn Summarizer>,
    prompts: Prompts,
    /// Where the chat runs: hooks run there, whatever `cwd` the session records.
    project: PathBuf,
}

/// The state of one chat.
struct Chat {
    /// The agent loop; it holds the engine and the model.
    agent: Agent,
    /// The agent's engine, for slash commands.
    engine: Engine,
    events: EventView,
    client: Arc<ModelClient>,
    /// The message threads of the chat's sessions; `client` is bound to the current one's.
    threads: ctxkit_llm::MessageThreads,
    /// The session whose thread `client` continues.
    thread_session: String,
    /// Keeps the prompt cache warm between prompts (`cacheWarming`).
    warmer: Arc<ctxkit_agent::CacheWarmer>,
    /// Model options from settings, for `/model`.
    llm_options: LlmOptions,
    /// `--models`, else `enabledModels`: the patterns of the models Ctrl-P steps through (all
    /// offered when empty).
    enabled_models: Vec<String>,
    /// `--models`, which `/reload` keeps over the setting.
    models_flag: Option<Vec<String>>,
    /// `--use-theme`, which `/reload` keeps over the setting until `/settings` changes the theme.
    theme_flag: Option<String>,
    /// `doubleEscapeAction`: what Esc twice at an empty input line does.
    double_escape: rewind::DoubleEscapeAction,
    /// `externalEditor`: the command Ctrl-G and `/edit` open (else `$VISUAL`, `$EDITOR`, `vi`).
    external_editor: Option<String>,
    parts: EngineParts,
    resources: LoadedResources,
    /// The command names Tab completes after `/` (the resources' too).
    slash_commands: slash_completion::SlashCommands,
    cwd: PathBuf,
    /// Where new sessions of this directory go.
    session_dir: PathBuf,
    /// `session_dir` is `--session-dir`'s, which the way back to a session must name.
    session_dir_chosen: bool,
    /// The sessions root when `--sessions-dir` (or `CTXKIT_SESSIONS_DIR`) chose it, which the
    /// way back to a session kept under it must name too.
    sessions_root_chosen: Option<PathBuf>,
    /// `--no-session`: new sessions (`/new`, the first) stay in memory. What the chat says of the
    /// session open follows the session itself: `/resume` and `/import` open a file.
    in_memory: bool,
    /// `--resume`: the session list is shown before the first prompt.
    resume_at_start: bool,
    /// `quietStartup`: the banner is not shown when the chat starts (a continued session's
    /// conversation and status still are), or only its header (`"header"`).
    quiet_startup: ctxkit_settings::QuietStartup,
    /// No model was configured: the default model of the provider whose key is set.
    keyed_model: Option<crate::commands::summary_setup::KeyedModel>,
    /// A database session's private copy, and how the screen names it instead.
    shown_as: Option<(PathBuf, String)>,
    /// A database session's storing, and what the chat said of it last.
    store: store_health::StoreWatch,
    /// Where the settings and resources were read from (`/reload` reads them again).
    environment: ctxkit_settings::Environment,
    ui: Ui,
    interrupts: Interrupts,
    /// The session file last recorded as this directory's session used last.
    remembered: Option<PathBuf>,
    /// Snapshots of the files the agent writes, for rewinds.
    checkpoints: file_checkpoints::FileCheckpoints,
    /// What the tools may touch, as the settings last read say (`/reload` reads it again).
    boundary: crate::commands::tool_boundary::ToolBoundary,
    /// `--yes`: no `bash` command is asked about, whatever `chat.confirmBash` says.
    yes_flag: bool,
    /// What the command line gives the resource loader (`--system-prompt`,
    /// `--append-system-prompt`, `--no-skills`, …): kept for `/reload`, as Pi keeps them.
    loader_options: ctxkit_resources::LoaderOptions,
    /// Whether `bash` commands are asked about now (`chat.confirmBash`, as last applied).
    confirm_bash: bool,
    /// The prompts of a session just opened, for the input line's history (`prompt_history`).
    prompts_for_history: std::sync::Mutex<Vec<String>>,
    /// The spend counted for the status line, counted on after each turn (`status::SpendCache`).
    spend_cache: std::sync::Mutex<Option<status::SpendCache>>,
}

impl Chat {
    /// The engine's view of the current model.
    fn model_info(&self) -> ModelInfo {
        self.client.info()
    }

    /// Switches to another session: a new engine over it, its events shown.
    async fn install(&mut self, session: Session) -> Result<()> {
        // The thinking level carries over to the next session, as Pi's does.
        let thinking_level = self.engine.thinking_level().await;
        let (engine, events) = start_engine(
            &self.parts,
            self.model_info(),
            session,
            &self.ui,
            &self.interrupts,
        )?;
        // The old view stops before the new one starts showing events.
        self.events = events;
        // The old session's cache is not kept warm for a session no longer open.
        self.warmer.cancel();
        self.agent.set_engine(engine.clone()).await;
        engine.set_thinking_level(thinking_level).await;
        self.engine = engine;
        self.share_request_overhead().await;
        Ok(())
    }

    /// Tells the engine what every request adds to its messages (the system prompt and tools),
    /// so a compaction before the first request reports the context after it as the status line
    /// shows it.
    async fn share_request_overhead(&self) {
        self.engine
            .set_request_overhead(self.request_overhead())
            .await;
    }

    /// `client` bound to the message thread of the session `session_id`.
    fn bound(&self, client: ModelClient, session_id: &str) -> ModelClient {
        client.with_message_threads(&self.threads, session_id)
    }

    /// Binds the model to the message thread of the session the engine holds now, before a
    /// prompt: `/new` and `/resume` install another session, `/fork` and `/save` change it inside
    /// the engine. The session left keeps no thread, so no thread is ever continued by another
    /// session.
    async fn follow_session(&mut self) {
        let current = self
            .engine
            .with_session(|session| session.id().to_owned())
            .await;
        if current == self.thread_session {
            return;
        }
        self.threads.forget(&self.thread_session);
        let client = Arc::new(self.bound((*self.client).clone(), &current));
        self.thread_session = current;
        self.client = Arc::clone(&client);
        self.agent.set_model(client).await;
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
}

/// An engine over `session` with its events shown and Ctrl-C wired to it. The session file is
/// locked for writing from now on (other writers are refused while the chat has it open).
fn start_engine(
    parts: &EngineParts,
    model: ModelInfo,
    mut session: Session,
    ui: &Ui,
    interrupts: &Interrupts,
) -> Result<(Engine, EventView)> {
    session.hold_lock()?;
    let engine = Engine::new(
        session,
        EngineOptions {
            settings: parts.settings.clone(),
            model: Some(model),
            summarizer: Arc::clone(&parts.summarizer),
            prompts: parts.prompts.clone(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: Some(parts.project.clone()),
        },
    );
    let events = EventView::start(&engine, ui.clone());
    interrupts.set_engine(&engine);
    Ok((engine, events))
}

//! Building a chat: the model from `--model` or the settings, the engine's settings and summarizer
//! (as `ctxkit serve`), the system prompt and resources from the resource loader, and the session
//! from `--continue`, `--session` or `--no-session`.

use std::sync::Arc;

use anyhow::Result;
use ctxkit_agent::{Agent, AgentOptions, ChatModel};
use ctxkit_session::{Session, default_session_dir};

use super::first_session::StartNote;
use super::interrupts::Interrupts;
use super::rewind::DoubleEscapeAction;
use super::slash_completion::SlashCommands;
use super::ui::Ui;
use super::{Chat, EngineParts};
use crate::cli::ChatArgs;
use crate::commands::Locations;
use crate::commands::resources;
use crate::commands::settings::ProcessSettings;
use crate::commands::summary_setup::{self, SummaryFlags};
use crate::commands::tool_boundary::ToolBoundary;

/// The chat's output for its mode, styled by the settings and the theme chosen (a theme that
/// could not be used is said).
fn chat_ui(
    settings: &ctxkit_settings::SettingsManager,
    args: &ChatArgs,
    loaded: &ctxkit_resources::LoadedResources,
) -> Ui {
    let ui = Ui::for_mode(super::print::ChatMode::of(args));
    ui.set_thinking_hidden(settings.settings().hide_thinking_block);
    ui.set_terminal_progress(settings.settings().terminal.show_terminal_progress);
    ui.set_code_block_indent(&settings.settings().markdown.code_block_indent);
    let (palette, theme_warning) =
        super::palette::chosen_palette(settings, args.use_theme.as_deref(), &loaded.themes.themes);
    ui.set_palette(palette);
    if let Some(warning) = theme_warning {
        ui.notice(&warning);
    }
    if args.tui_mode.as_deref() == Some("fullscreen") {
        ui.notice(
            "`--tui-mode fullscreen`: ctxkit's chat has no full-screen mode; it draws in the \
             terminal's scrollback, as Pi's `regular` mode does",
        );
    }
    ui
}

/// The engine talks at `level` from now on. A level asked on the command line of a session that
/// recorded another, or its recorded level clamped, is recorded, so the session continues at it (a
/// session without one records it with its first prompt).
async fn set_starting_level(
    engine: &ctxkit_engine::Engine,
    level: Option<&str>,
    recorded: &super::thinking::Recorded,
) -> Result<()> {
    engine.set_thinking_level(level.map(str::to_owned)).await;
    if let Some(level) = level
        && recorded
            .thinking
            .as_deref()
            .is_some_and(|recorded| recorded != level)
    {
        engine.change_thinking_level(level).await?;
    }
    Ok(())
}

/// The agent's tools work inside the project's jail; the file checkpoints of `/rewind` see what
/// they change through it.
fn jail_tools(
    agent: &mut Agent,
    boundary: &ToolBoundary,
    cwd: &std::path::Path,
    checkpoint_max_bytes: u64,
) -> super::file_checkpoints::FileCheckpoints {
    let workspace = boundary.workspace(cwd);
    agent.set_workspace(workspace.clone());
    super::file_checkpoints::FileCheckpoints::new(
        workspace,
        cwd.to_path_buf(),
        checkpoint_max_bytes,
    )
}

/// The thinking levels' names, as `--thinking` takes them.
const THINKING_LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// The level a session starts at when nothing names one, as Pi 1.6.0's: a new session's is the
/// model's `modelThinkingLevels` entry (`spec`: `provider/id`), else `defaultThinkingLevel`; a
/// continued one that recorded none takes `defaultThinkingLevel`.
fn default_level_of<'a>(
    typed: &'a ctxkit_settings::Settings,
    recorded: &super::thinking::Recorded,
    spec: &str,
) -> Option<&'a str> {
    let per_model = typed
        .model_thinking_levels
        .as_ref()
        .and_then(|levels| levels.get(spec))
        .map(String::as_str)
        .filter(|level| THINKING_LEVELS.contains(level) && !recorded.continued);
    per_model.or(typed.default_thinking_level.as_deref())
}

/// The level the chat starts at: `--thinking`, else `--model`'s suffix, else the level the session
/// recorded, else Pi's `defaultThinkingLevel`; clamped to the model's levels as Pi's. A level asked
/// on the command line that was clamped is said; a recorded or default one is clamped quietly (a
/// note at every start the user cannot act on would be noise).
fn starting_level(
    client: &ctxkit_llm::ModelClient,
    flag_level: Option<String>,
    recorded: &super::thinking::Recorded,
    default_level: Option<&str>,
    ui: &Ui,
) -> Option<String> {
    let asked_now = flag_level.is_some();
    let level = flag_level
        .or_else(|| recorded.thinking.clone())
        .or_else(|| default_level.map(str::to_owned))?;
    let (clamped, note) = super::thinking::clamped_level(client, &level);
    if let Some(note) = note.filter(|_| asked_now) {
        ui.notice(&note);
    }
    Some(clamped)
}

/// The summarizer and the engine's settings: summaries by `compaction.model` when set, else by
/// the chat's own model `spec`.
fn summaries(
    process: &ProcessSettings<'_>,
    args: &ChatArgs,
    typed: &ctxkit_settings::Settings,
    spec: &str,
) -> Result<summary_setup::SummarySetup> {
    let compaction_model = typed
        .compaction
        .model
        .clone()
        .unwrap_or_else(|| spec.to_owned());
    let mut setup = summary_setup::resolve(
        process,
        SummaryFlags {
            model: Some(&compaction_model),
            ..SummaryFlags::default()
        },
    )?;
    if super::print::ChatMode::of(args) == super::print::ChatMode::Print {
        // A summary written ahead is kept in memory for the compaction at the threshold; print
        // mode ends with its run, so one started there was paid for and thrown away.
        setup.engine_settings.compaction.background = false;
    }
    Ok(setup)
}

pub async fn build(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    args: &ChatArgs,
) -> Result<Chat> {
    let environment = process.environment()?;
    let settings = process.settings()?;
    let llm_options = summary_setup::llm_options(settings)?;
    let loader_options = loader_options(args);
    let (loaded, cwd) = resources::load_for_chat(process, &loader_options)?;
    resources::warn_of_resources(&loaded)?;
    let tool_flags = crate::commands::default_tools::tool_flags(args);
    let tools = crate::commands::default_tools::chat_tools(settings.settings(), &tool_flags)?;
    let system_prompt = resources::system_prompt(&loaded, &cwd);
    let cwd_text = cwd.display().to_string();
    let session_dir = match &args.session_dir {
        Some(folder) => super::first_session::chosen_folder(folder, &cwd)?,
        None => default_session_dir(&locations.sessions_root, &cwd_text),
    };
    let (session, note) =
        super::first_session::first_session(args, locations, &cwd_text, &session_dir)?;
    let ui = chat_ui(settings, args, &loaded);
    say_start_note(&ui, &note, environment, locations, &cwd_text);
    for note in super::session_file::opening_notes(&session) {
        ui.notice(&note);
    }
    let recorded = super::thinking::recorded(&session);
    let flag_model = flag_model(args, &llm_options)?;
    let (client, keyed_model) = chat_client(
        environment,
        &llm_options,
        args,
        flag_model.as_ref().map(|model| model.spec.as_str()),
        locations,
        Opened {
            session: &session,
            recorded: &recorded,
        },
        &ui,
    )?;
    let spec = client.config().display_name();
    let typed = settings.settings();
    let setup = summaries(process, args, typed, &spec)?;
    let confirm_bash = !args.yes && typed.chat.confirm_bash;

    let flag_level = args
        .thinking
        .clone()
        .or_else(|| flag_model.and_then(|model| model.thinking));
    let default_level = default_level_of(typed, &recorded, &spec);
    let thinking_level = starting_level(&client, flag_level, &recorded, default_level, &ui);
    let reasoning = thinking_level
        .as_deref()
        .and_then(|level| super::thinking::reasoning_for(&client, level));
    remove_leftover_temporaries(&ui, &cwd);
    let interrupts = Interrupts::default();
    ui.interrupt_on_escape(&interrupts);
    let parts = EngineParts {
        // Budgets nobody set follow the model's window, in the engine (the same on every surface).
        settings: setup.engine_settings,
        summarizer: Arc::from(setup.summarizer),
        prompts: setup.prompts,
        project: cwd.clone(),
    };
    let threads = ctxkit_llm::MessageThreads::new();
    let thread_session = session.id().to_owned();
    let client = client.with_message_threads(&threads, &thread_session);
    let (engine, events) = super::start_engine(&parts, client.info(), session, &ui, &interrupts)?;
    set_starting_level(&engine, thinking_level.as_deref(), &recorded).await?;
    if let Some(name) = &args.name {
        // Pi's `--name`: the session's display name, recorded as `/name` records it.
        engine.name_session(name).await?;
    }
    let client = Arc::new(client);
    let limit = output_limit(&client);
    let mut agent = Agent::new(
        engine.clone(),
        Arc::clone(&client) as Arc<dyn ChatModel>,
        tools,
        agent_options(typed, system_prompt, limit, reasoning, &cwd, environment),
    )
    .await;
    if !confirm_bash {
        agent.allow_always("bash");
    }
    // Idle between prompts, the cache stays warm while a refresh pays; the next prompt, another
    // session and the end of the chat stop it.
    let warmer = summary_setup::cache_warmer(process)?;
    agent.set_cache_warmer(Arc::clone(&warmer));
    agent.set_steering(typed_ahead(&ui, typed));
    let mut boundary = ToolBoundary::new(environment, settings, &locations.sessions_root);
    boundary.set_skills(&loaded.skills.skills);
    if args.session_dir.is_some() {
        boundary.session_dir = Some(session_dir.clone());
    }
    let checkpoints = jail_tools(&mut agent, &boundary, &cwd, typed.chat.checkpoint_max_bytes);
    let chat = Chat {
        agent,
        engine,
        events,
        client,
        threads,
        thread_session,
        warmer,
        llm_options,
        enabled_models: args
            .models
            .clone()
            .or_else(|| typed.enabled_models.clone())
            .unwrap_or_default(),
        models_flag: args.models.clone(),
        theme_flag: args.use_theme.clone(),
        double_escape: DoubleEscapeAction::from_setting(&typed.double_escape_action),
        external_editor: typed.external_editor.clone(),
        parts,
        slash_commands: SlashCommands::of(&loaded, typed.enable_skill_commands),
        resources: loaded,
        environment: environment.clone(),
        cwd,
        session_dir,
        session_dir_chosen: args.session_dir.is_some(),
        sessions_root_chosen: locations
            .sessions_root_chosen
            .then(|| locations.sessions_root.clone()),
        in_memory: args.no_session,
        resume_at_start: args.resume,
        quiet_startup: if args.verbose {
            ctxkit_settings::QuietStartup::Off
        } else {
            typed.quiet_startup
        },
        keyed_model,
        shown_as: args.shown_as.clone(),
        store: super::store_health::StoreWatch::new(args.store_sync.clone()),
        ui,
        interrupts,
        remembered: None,
        checkpoints,
        boundary,
        yes_flag: args.yes,
        loader_options,
        confirm_bash,
        prompts_for_history: std::sync::Mutex::default(),
        spend_cache: std::sync::Mutex::default(),
    };
    chat.share_request_overhead().await;
    Ok(chat)
}

/// What the command line gives the resource loader: Pi's `--skill`, `--prompt-template` and
/// `--theme` paths (made absolute against the current directory, loaded last),
/// `--no-context-files`, `--no-skills`, `--no-prompt-templates`, `--no-themes`,
/// `--no-extensions`, `--system-prompt` (in place of `SYSTEM.md`) and `--append-system-prompt`
/// values (in place of `APPEND_SYSTEM.md`), each a file read when one of that name is there
/// (relative to the session's folder), else the text itself.
/// The user's own command line: no project trust is asked of it.
fn loader_options(args: &ChatArgs) -> ctxkit_resources::LoaderOptions {
    ctxkit_resources::LoaderOptions {
        skill_paths: args.skill_paths.clone(),
        prompt_template_paths: args.prompt_template_paths.clone(),
        theme_paths: args.theme_paths.clone(),
        system_prompt: args.system_prompt.clone(),
        append_system_prompt: args.append_system_prompt.clone(),
        switches: ctxkit_resources::ResourceSwitches {
            no_skills: args.no_skills,
            no_prompt_templates: args.no_prompt_templates,
            no_themes: args.no_themes,
            no_extensions: args.no_extensions,
            no_context_files: args.no_context_files,
        },
        ..ctxkit_resources::LoaderOptions::default()
    }
}

/// What the chat says about the session it starts in ([`StartNote`]).
fn say_start_note(
    ui: &Ui,
    note: &StartNote,
    environment: &ctxkit_settings::Environment,
    locations: &Locations,
    cwd: &str,
) {
    if let Some(line) = note.line() {
        ui.notice(&line);
    }
    if *note == StartNote::NothingToContinue {
        ui.notice("No earlier session in this folder to continue: starting a new one");
        let pi = crate::commands::pi_sessions::hint(environment, &locations.sessions_root, cwd);
        if let Some(hint) = pi {
            ui.notice(&format!("hint: {hint}"));
        }
    }
}

/// The agent's options: the system prompt, the output limit and reasoning asked for, and what
/// its tools read from the settings.
fn agent_options(
    typed: &ctxkit_settings::Settings,
    system_prompt: String,
    max_tokens: Option<u64>,
    reasoning: Option<ctxkit_llm::ReasoningLevel>,
    cwd: &std::path::Path,
    environment: &ctxkit_settings::Environment,
) -> AgentOptions {
    AgentOptions {
        system_prompt,
        max_tokens,
        reasoning,
        cwd: cwd.to_owned(),
        bash_timeout: std::time::Duration::from_secs(typed.chat.bash_timeout_seconds),
        shell: crate::commands::settings::shell_of(typed, environment),
        pass_env: typed.chat.pass_env.clone().unwrap_or_default(),
        auto_resize_images: typed.images.auto_resize,
        max_tool_output_bytes: None,
    }
}

/// The session the chat opened and what it recorded to be talked to with.
struct Opened<'a> {
    session: &'a Session,
    recorded: &'a super::thinking::Recorded,
}

/// The chat's model client. A continued session is talked to with the model it recorded last (as
/// Pi restores it), unless `--model` picks one, or the file comes from outside the sessions
/// folder: a session shipped in a cloned repository would choose where the conversation goes
/// (`ollama/…` on a port any local user may hold, a paid model on the user's key).
fn chat_client(
    environment: &ctxkit_settings::Environment,
    llm_options: &ctxkit_llm::LlmOptions,
    args: &ChatArgs,
    flag_model: Option<&str>,
    locations: &Locations,
    opened: Opened<'_>,
    ui: &Ui,
) -> Result<(ctxkit_llm::ModelClient, Option<summary_setup::KeyedModel>)> {
    let Opened { session, recorded } = opened;
    let from_elsewhere = args.session.is_some()
        && !super::thinking::in_sessions_folder(session, &locations.sessions_root);
    let restored = recorded
        .model
        .as_deref()
        .filter(|_| args.model.is_none() && !from_elsewhere);
    let chosen = match restored {
        Some(spec) => match restorable_client(llm_options, spec) {
            Ok(client) => (client, None),
            Err(reason) => {
                let chosen = summary_setup::agent_model_client(llm_options, None)?;
                ui.notice(&format!(
                    "Could not restore the session's model {spec} ({reason}); using {}",
                    chosen.0.config().display_name()
                ));
                chosen
            }
        },
        None => first_client(
            environment,
            llm_options,
            flag_model,
            super::print::ChatMode::of(args) == super::print::ChatMode::Interactive,
        )?,
    };
    let spec = chosen.0.config().display_name();
    if let Some(recorded) = recorded.model.as_deref().filter(|_| from_elsewhere)
        && args.model.is_none()
        && recorded != spec
    {
        ui.notice(&super::thinking::model_not_restored(recorded, &spec));
    }
    Ok(chosen)
}

/// The model `--model` names, resolved among the known models as Pi's `--model` resolves it
/// ([`super::model_flag`]); `None` without the flag.
fn flag_model(
    args: &ChatArgs,
    llm_options: &ctxkit_llm::LlmOptions,
) -> Result<Option<super::model_flag::FlagModel>> {
    let Some(model) = args.model.as_deref() else {
        return Ok(None);
    };
    // Pi's `--provider`: the model looked up among that provider's, as `provider/model` is.
    let text = match &args.provider {
        Some(provider) => format!("{}/{}", provider.trim(), model.trim()),
        None => model.to_owned(),
    };
    let keyed = summary_setup::llm_environment()
        .unwrap_or_else(|_| summary_setup::variables_environment())
        .api_keys;
    let usable = |provider: &str| {
        keyed.contains_key(provider) || llm_options.providers_with_keys().any(|own| own == provider)
    };
    let table = super::model_picker::known_models(llm_options);
    super::model_flag::resolve_model_flag(&text, &table, &usable)
        .map(Some)
        .map_err(anyhow::Error::msg)
}

/// The client for a session's recorded model `spec`, when requests to it can be sent (its
/// provider is known and has its key); else why not.
pub(super) fn restorable_client(
    options: &ctxkit_llm::LlmOptions,
    spec: &str,
) -> Result<ctxkit_llm::ModelClient, String> {
    summary_setup::model_client(options, Some(spec)).map_err(|error| format!("{error:#}"))
}

/// The output limit asked of `client`'s model: its table's, none when unknown.
pub(super) fn output_limit(client: &ctxkit_llm::ModelClient) -> Option<u64> {
    client
        .config()
        .model_info
        .as_ref()
        .map(|model| model.max_output)
        .filter(|tokens| *tokens > 0)
}

/// Lines typed while the agent works steer it, as `steeringMode` says.
fn typed_ahead(ui: &Ui, typed: &ctxkit_settings::Settings) -> Arc<super::agent::TypedAhead> {
    Arc::new(super::agent::TypedAhead {
        ui: ui.clone(),
        all: typed.steering_mode == "all",
    })
}

/// A `write` killed before its rename (a crash, a kill) left its temporary file beside the
/// target: removed, and said.
fn remove_leftover_temporaries(ui: &Ui, cwd: &std::path::Path) {
    let removed = ctxkit_agent::tools::remove_leftover_temporaries(cwd);
    if removed > 0 {
        ui.info(&format!(
            "Removed {removed} temporary file(s) a killed write left in the project"
        ));
    }
}

/// The chat's model client; with no model configured and no key anywhere, on a terminal, the
/// user is offered to save a key first (`login::offer_first_key`) and the chat starts on it; an
/// interactive chat whose model has no key is offered to save that provider's
/// (`login::offer_key_of`).
fn first_client(
    environment: &ctxkit_settings::Environment,
    llm_options: &ctxkit_llm::LlmOptions,
    spec: Option<&str>,
    interactive: bool,
) -> Result<(ctxkit_llm::ModelClient, Option<summary_setup::KeyedModel>)> {
    let error = match summary_setup::agent_model_client(llm_options, spec) {
        Err(error) => error,
        chosen => return chosen,
    };
    let offered = if error.is::<summary_setup::NoModelConfigured>() {
        crate::commands::login::offer_first_key(environment)?
    } else if let Some(ctxkit_llm::LlmError::MissingApiKey { provider, .. }) =
        error.downcast_ref::<ctxkit_llm::LlmError>()
        && interactive
    {
        crate::commands::login::offer_key_of(environment, provider)?
    } else {
        false
    };
    if offered {
        summary_setup::agent_model_client(llm_options, spec)
    } else {
        Err(error)
    }
}

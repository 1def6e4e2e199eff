//! One function per command. Each takes resolved arguments and the output stream and returns an
//! [`Outcome`]; errors go back to `main`, which reports them.

mod auth;
mod awaiting_key;
mod chat;
mod check_warnings;
pub(crate) mod checkpoints;
pub(crate) mod compaction;
mod config;
mod config_import;
mod default_tools;
mod edit;
mod engine_run;
mod held_settings;
mod import;
mod inspect;
mod leftovers;
pub(crate) mod login;
mod missing_entry;
pub(crate) mod models;
mod navigate;
mod offline_size;
mod packages;
mod pi_sessions;
mod resources;
mod serve;
pub(crate) mod sessions;
mod settings;
mod signals;
pub(crate) mod simulate;
mod spend;
mod store;
mod store_copy;
mod store_fork;
mod store_reimport;
mod store_simulate;
mod store_sync;

pub(crate) use store_sync::SyncStatus;
mod summary_setup;
mod themes_in_use;
mod tokens;
mod tool_boundary;
mod tree_text;
mod trust;
mod undo;
mod web;

pub use chat::{LastRequestFailed, PromptNotSent};
pub use missing_entry::MissingEntry;
pub use store_reimport::NotContinued;
pub use summary_setup::NoModelConfigured;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::Outcome;
use crate::cli::{Cli, Command, GlobalArgs};

/// Where ctxkit keeps its data, resolved from flags, environment and defaults.
#[derive(Debug)]
pub struct Locations {
    pub sessions_root: PathBuf,
    /// `sessions_root` is `--sessions-dir`'s (or `CTXKIT_SESSIONS_DIR`'s), which a way back to a
    /// session kept there must name.
    pub sessions_root_chosen: bool,
    /// The database store, when `--store` names one (`serve` keeps its sessions there).
    pub database: Option<ctxkit_store::StoreUrl>,
}

impl Locations {
    fn resolve(global: &GlobalArgs) -> Result<Self> {
        if let Some(dir) = &global.sessions_dir {
            // A file there would list as "No sessions." and new sessions would fail later.
            if dir.exists() && !dir.is_dir() {
                anyhow::bail!(
                    "`--sessions-dir {}` is not a directory; name the directory sessions are kept in",
                    dir.display()
                );
            }
            return Ok(Self {
                sessions_root: dir.clone(),
                sessions_root_chosen: true,
                database: None,
            });
        }
        let home = match &global.home {
            Some(home) => home.clone(),
            None => std::env::home_dir()
                .context("cannot find the home directory; set `CTXKIT_HOME`")?
                .join(".ctxkit"),
        };
        let sessions_root =
            configured_sessions_root(&home).unwrap_or_else(|| home.join("sessions"));
        Ok(Self {
            sessions_root,
            sessions_root_chosen: false,
            database: None,
        })
    }
}

/// The user's `sessionDir` (`~` and `~/…` expanded, a relative path taken from the working
/// directory), read from the user's own settings file alone: where sessions are kept is not a
/// project's to choose. A file that does not load names no folder here; the commands that read
/// the settings say why.
fn configured_sessions_root(home: &Path) -> Option<PathBuf> {
    // Read as the settings are: a regular file only, never waiting on a FIFO, within the size
    // limit, a byte order mark taken off (QA 2026-12-07: a FIFO here hung every command, and a
    // file with a BOM lost its `sessionDir`).
    let path = home.join("settings.json");
    let text = ctxkit_jail::read_regular_to_string(&path, ctxkit_jail::MAX_RESOURCE_BYTES).ok()?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let settings: serde_json::Value = serde_json::from_str(text).ok()?;
    let value = settings.get("sessionDir")?.as_str()?.trim();
    if value.is_empty() {
        return None;
    }
    let user_home = std::env::home_dir()?;
    let expanded = ctxkit_settings::expand_tilde_loose(value, &user_home);
    ctxkit_session::resolved_cwd(&expanded).ok()
}

pub fn run(cli: Cli, out: &mut dyn Write) -> Result<Outcome> {
    let Cli {
        global,
        mut command,
    } = cli;
    let mut locations = Locations::resolve(&global)?;
    // Read at most once, on first use; every surface gets this one value.
    let unloaded = if refuses_unloaded_settings(&command) {
        settings::UnloadedFiles::LeftToTheRefusal
    } else {
        settings::UnloadedFiles::Warn
    };
    // `config` and `resources` list the settings' problems themselves.
    let unknown_keys = if matches!(command, Command::Config(_) | Command::Resources { .. }) {
        settings::UnknownKeys::LeftToTheCommand
    } else {
        settings::UnknownKeys::Warn
    };
    // Pi's `--approve` and `--no-approve`: the chat's own decision on the project's trust.
    let trust_override = if let Command::Chat(args) = &command {
        (args.approve || args.no_approve).then_some(args.approve)
    } else {
        None
    };
    let process = settings::ProcessSettings::new(&global, unloaded, unknown_keys)
        .with_trust_override(trust_override);
    let url = store::choose(&process, &mut command, &mut locations)?;
    let lease = store::lease(&url, &process);
    // Named as the user named it (a database session is read through a temporary file).
    let session = missing_entry::session_of(&mut command);
    store::run(&url, lease, command, out, move |command, out| {
        dispatch(command, locations, process, out)
    })
    .map_err(|error| missing_entry::name_session(error, session.as_deref()))
}

/// The commands that refuse to start while a settings file could not be loaded (they compact or
/// run a model: `summary_setup::resolve` checks first; a page hides the settings' credentials),
/// so the refusal is the one report of it.
fn refuses_unloaded_settings(command: &Command) -> bool {
    match command {
        Command::Chat(_)
        | Command::Serve { .. }
        | Command::Compact { .. }
        | Command::Branch { .. }
        | Command::Export { .. }
        | Command::View { .. } => true,
        Command::Sessions { .. }
        | Command::Store(_)
        | Command::Import { .. }
        | Command::Info { .. }
        | Command::Tree { .. }
        | Command::Context { .. }
        | Command::Check { .. }
        | Command::Fork { .. }
        | Command::ForkFrom { .. }
        | Command::Label { .. }
        | Command::Name { .. }
        | Command::EditContext { .. }
        | Command::Migrate { .. }
        | Command::Tokens { .. }
        | Command::Compactions { .. }
        | Command::UndoCompact { .. }
        | Command::Checkpoints(_)
        | Command::Simulate(_)
        | Command::Models { .. }
        | Command::Config(_)
        | Command::Resources { .. }
        | Command::Trust { .. }
        | Command::Login { .. }
        | Command::Logout { .. }
        | Command::Auth { .. }
        | Command::Prompt
        | Command::Install { .. }
        | Command::Remove { .. }
        | Command::Update { .. }
        | Command::List { .. }
        | Command::Mcp { .. } => false,
    }
}

/// Why the key saved for `provider` (`auth.json`, Pi's format) is not used, when one is saved and
/// ctxkit passes it over (an account login, a `!command` or a `$VAR` in place of the key), so a
/// missing key is not reported as never saved.
pub fn unused_saved_entry(provider: &str) -> Option<&'static str> {
    let saved = summary_setup::saved_keys().ok()?;
    saved
        .skipped
        .iter()
        .find(|(name, _)| name == provider)
        .map(|(_, why)| *why)
}

/// Pi's `mcp …` commands: ctxkit has no MCP client.
fn no_mcp_client() -> crate::usage::UsageError {
    crate::usage::UsageError {
        message: "ctxkit connects to no MCP server".to_owned(),
        hint: "the chat's tools are its own (`read`, `bash`, `edit`, `write`, `grep`, `find`, \
               `ls`, `recall`); a Pi `mcp.json` is left as it is"
            .to_owned(),
    }
}

/// Runs one command on session files.
fn dispatch(
    command: Command,
    locations: Locations,
    process: settings::ProcessSettings<'_>,
    out: &mut dyn Write,
) -> Result<Outcome> {
    match command {
        Command::Sessions {
            from: Some(from),
            dir,
            json,
            ..
        } => import::sessions(&from, dir, json, out),
        Command::Sessions {
            dir,
            all,
            json,
            from: None,
            name: None,
            grep: None,
        } => sessions::sessions(&locations, process.environment().ok(), dir, all, json, out),
        Command::Sessions { .. } | Command::Store(_) => {
            anyhow::bail!("this command runs on the store, not on files")
        }
        Command::Import {
            file,
            from,
            out: out_file,
        } => import::import(&locations, &file, &from, out_file.as_deref(), out),
        Command::Info { file, json } => inspect::info(&file, json, &free_models(&process), out),
        Command::Tree { file, json } => inspect::tree(&file, json, out),
        Command::Context {
            file,
            leaf,
            llm,
            json,
        } => inspect::context(&file, leaf.as_deref(), llm, json, out),
        Command::Check { file, json } => inspect::check(&file, json, out),
        Command::Fork { file, at } => edit::fork(&file, at.as_deref(), out),
        Command::ForkFrom { file, cwd } => edit::fork_from(&locations, &file, &cwd, out),
        Command::Label {
            file,
            id,
            text,
            clear,
        } => edit::label(&file, &id, text.as_deref().filter(|_| !clear), out),
        Command::Name { file, text, .. } => edit::name(&file, text.as_deref(), out),
        Command::EditContext {
            file,
            id,
            replace,
            omit: _,
        } => edit::edit_context(&file, &id, replace.as_deref(), out),
        Command::Migrate { file } => edit::migrate(&file, out),
        Command::Tokens {
            file,
            leaf,
            estimator,
            json,
        } => {
            let estimator = estimator.parse::<ctxkit_tokens::Estimator>()?;
            tokens::tokens(&file, leaf.as_deref(), estimator, json, out)
        }
        Command::Compact {
            file,
            focus,
            keep_recent_tokens,
            reserve_tokens,
            file_context,
            model,
            context_window,
            out: out_file,
            preview,
            dry_run,
            json,
        } => {
            let flags = summary_setup::SummaryFlags {
                keep_recent_tokens,
                reserve_tokens,
                file_context,
                model: model.as_deref(),
                summary_use: summary_setup::SummaryUse::plans_only_if(dry_run),
            };
            let setup = summary_setup::resolve(&process, flags)?;
            let args = compaction::CompactArgs {
                file: &file,
                out_file: out_file.as_deref(),
                preview,
                focus: focus.as_deref(),
                context_window,
                dry_run,
                json,
            };
            compaction::compact_command(args, setup, out)
        }
        Command::Branch {
            file,
            to,
            summarize,
            focus,
            model,
            replace_instructions,
            context_window,
            json,
        } => {
            let setup = summary_setup::resolve(
                &process,
                summary_setup::SummaryFlags {
                    model: model.as_deref(),
                    summary_use: summary_setup::SummaryUse::plans_only_if(!summarize),
                    ..Default::default()
                },
            )?;
            let args = navigate::BranchArgs {
                file: &file,
                to: &to,
                summarize,
                focus: focus.as_deref(),
                replace_instructions,
                context_window,
                json,
            };
            navigate::branch(args, setup, out)
        }
        Command::Compactions { file, json } => compaction::compactions(&file, json, out),
        Command::Checkpoints(args) => checkpoints::run(&process, &locations, args, out),
        Command::Serve { listen, .. } => serve::serve(&process, &locations, listen, out),
        Command::Chat(args) => chat::chat(&process, &locations, &args),
        Command::Simulate(args) => simulate::simulate_command(&locations, args, out),
        Command::Models { search, json } => models::models(&process, &search, json, out),
        Command::UndoCompact { file } => undo::undo_compact(&file, out),
        Command::Config(action) => config::config(process, action, out),
        Command::Resources { json } => resources::resources(&process, json, out),
        Command::Prompt => resources::prompt(&process, out),
        Command::Login { provider } => login::login(process.environment()?, provider, out),
        Command::Logout { provider } => login::logout(process.environment()?, provider, out),
        Command::Auth { command } => auth::run(&process, command, out),
        Command::Trust { revoke, yes } => trust(&process, revoke, yes, out),
        Command::Install { source, local } => packages::install(&process, &source, local, out),
        Command::Remove { source, local } => packages::remove(&process, &source, local, out),
        Command::Update { source } => packages::update(&process, source.as_deref(), out),
        Command::List { json } => packages::list(&process, json, out),
        Command::Export { web, out: page, .. } => {
            web::export(&process, &locations, &web, &page, out)
        }
        Command::View { web, port } => web::view(&process, &locations, &web, port, out),
        Command::Mcp { .. } => Err(no_mcp_client().into()),
    }
}

/// `ctxkit trust [--revoke] [--yes]`.
fn trust(
    process: &settings::ProcessSettings<'_>,
    revoke: bool,
    yes: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    trust::trust(process, trust::TrustDecision::from_flags(revoke, yes), out)
}

/// Opens a session for a read-only command and, when loading found problems, says so on stderr in
/// one line naming `ctxkit check`, before the command shows what could be read.
pub(crate) fn open_for_reading(file: &std::path::Path) -> Result<ctxkit_session::Session> {
    let session = ctxkit_session::Session::open(file)?;
    report_damage(&session, file)?;
    Ok(session)
}

/// A folder named where a session file belongs fails as `ctxkit info` says it (exit 3, with the
/// hint to name a session file), before a command that reads the file another way says less
/// (`view`, `simulate`, `checkpoints`).
pub(crate) fn refuse_folder(path: &std::path::Path) -> Result<()> {
    if path.is_dir() {
        return Err(ctxkit_session::SessionError::NotARegularFile {
            path: path.to_owned(),
            kind: "a directory",
        }
        .into());
    }
    Ok(())
}

/// The leaf a `--leaf ID` option names (the current one without it); an id the session does not
/// hold is an error.
pub(crate) fn leaf_selector<'a>(
    session: &ctxkit_session::Session,
    leaf: Option<&'a str>,
) -> Result<ctxkit_session::LeafSelector<'a>> {
    match leaf {
        Some(id) if session.entry(id).is_none() => {
            Err(ctxkit_session::SessionError::EntryNotFound { id: id.to_owned() }.into())
        }
        Some(id) => Ok(ctxkit_session::LeafSelector::Entry(id)),
        None => Ok(ctxkit_session::LeafSelector::Current),
    }
}

/// Says on stderr, a line each, which files a listing skipped and why.
pub(crate) fn warn_skipped<'a>(
    skipped: impl IntoIterator<Item = (&'a std::path::Path, &'a dyn std::fmt::Display)>,
) -> Result<()> {
    let mut stderr = crate::redact::stderr();
    for (path, error) in skipped {
        writeln!(stderr, "warning: skipped `{}`: {error}", path.display())?;
    }
    Ok(())
}

/// The one-line damage report of [`open_for_reading`].
pub(crate) fn report_damage(
    session: &ctxkit_session::Session,
    file: &std::path::Path,
) -> Result<()> {
    warn_of_damage(session, file, "showing what could be read")
}

/// The one line saying a session is damaged: its first problem, how many more, what is done with
/// what could be read (`doing`) and `ctxkit check`; `None` when nothing is damaged.
pub(crate) fn damage_line(session: &ctxkit_session::Session, doing: &str) -> Option<String> {
    let file = session.path()?;
    let problems: Vec<String> = session
        .diagnostics()
        .iter()
        .filter(|problem| problem.kind.is_damage())
        .map(ToString::to_string)
        .collect();
    damaged_text(
        file,
        &problems,
        doing,
        &format!("ctxkit check {}", file.display()),
    )
}

/// Opens the session `file` a command is about to copy under a new id (`fork-from`, `chat
/// --fork`, the chat's `/import`): refused when a newer version wrote it; the line saying it is
/// damaged, when it is, for the caller to show (the copy holds what could be read).
pub(crate) fn check_copy_source(file: &std::path::Path) -> Result<Option<String>> {
    let source = ctxkit_session::Session::open(file)?;
    refuse_newer_version(&source, file)?;
    Ok(damage_line(&source, "copying what could be read"))
}

/// Refuses to copy a session a newer ctxkit or Pi wrote: the copy's header would call entries it
/// cannot read v3 (QA 2026-12-07: `fork-from` of a v4 file wrote a v3 header over its entries).
pub(crate) fn refuse_newer_version(
    session: &ctxkit_session::Session,
    file: &std::path::Path,
) -> Result<()> {
    for problem in session.diagnostics() {
        if let ctxkit_session::DiagnosticKind::NewerVersion { version } = problem.kind {
            anyhow::bail!(
                "`{}` was written by a newer version (session format v{version}); this ctxkit \
                 copies only sessions it can read whole: use the version that wrote it",
                file.display()
            );
        }
    }
    Ok(())
}

/// Says on stderr that `file` is damaged (its first problem, how many more) and what the command
/// does with what could be read: `doing`.
pub(crate) fn warn_of_damage(
    session: &ctxkit_session::Session,
    file: &std::path::Path,
    doing: &str,
) -> Result<()> {
    // A newer format version is not damage, but said in its own words.
    let mut problems: Vec<&ctxkit_session::Diagnostic> = Vec::new();
    for problem in session.diagnostics() {
        if let ctxkit_session::DiagnosticKind::NewerVersion { version } = problem.kind {
            writeln!(
                crate::redact::stderr(),
                "note: `{}` was written by a newer version (session format v{version}); showing \
                 what this ctxkit can read, and it will not write to it",
                file.display()
            )?;
        }
        if problem.kind.is_damage() {
            problems.push(problem);
        }
    }
    let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
    let check = format!("ctxkit check {}", file.display());
    warn_damaged(file, &problems, doing, &check)
}

/// The one `warning:` line of a damaged session, the same words for every command: the file, its
/// first problem and how many more, what the command does with what could be read (`doing`), and
/// the command that lists every problem (`lister`). Nothing when `problems` is empty.
pub(crate) fn warn_damaged(
    file: &std::path::Path,
    problems: &[String],
    doing: &str,
    lister: &str,
) -> Result<()> {
    if let Some(text) = damaged_text(file, problems, doing, lister) {
        writeln!(crate::redact::stderr(), "warning: {text}")?;
    }
    Ok(())
}

/// The words of [`warn_damaged`], without its `warning:`.
fn damaged_text(
    file: &std::path::Path,
    problems: &[String],
    doing: &str,
    lister: &str,
) -> Option<String> {
    let first = problems.first()?;
    let more = match problems.len() {
        1 => String::new(),
        count => format!(" and {} more", count - 1),
    };
    Some(format!(
        "`{}` is damaged ({}{more}); {doing}, run `{lister}` for every problem",
        file.display(),
        crate::render::one_line(first, 160),
    ))
}

/// Says on stderr, before a command writes to a file: that it is damaged, or that it is in an older
/// format and the write rewrites it as v3 (Pi does the same on open; ctxkit only when it writes).
pub(crate) fn note_rewrite(
    session: &ctxkit_session::Session,
    file: &std::path::Path,
) -> Result<()> {
    note_damage_before_writing(session, file)?;
    if let Some(version) = older_format(session) {
        writeln!(
            crate::redact::stderr(),
            "note: `{}` is in session format v{version}; this write rewrites it as v3 (entry ids as \
             `ctxkit tree` shows them)",
            file.display()
        )?;
    }
    Ok(())
}

/// Says on stderr, before a command may write to a file, that it is damaged: the lines that could
/// not be read stay as they are, and the write goes after the others.
pub(crate) fn note_damage_before_writing(
    session: &ctxkit_session::Session,
    file: &std::path::Path,
) -> Result<()> {
    warn_of_damage(
        session,
        file,
        "writing after what could be read (unreadable lines are kept as they are)",
    )
}

/// The format version of a session in an older format, which its next write rewrites as v3.
pub(crate) fn older_format(session: &ctxkit_session::Session) -> Option<u64> {
    session
        .migrated_from()
        .filter(|_| session.needs_migration())
}

/// Writes `value` as pretty JSON and a newline.
/// The models the settings declare free, for the spend a command shows.
fn free_models(process: &settings::ProcessSettings<'_>) -> ctxkit_session::FreeModels {
    spend::configured_free_models(process)
}

pub fn print_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

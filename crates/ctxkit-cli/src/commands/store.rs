//! The session store (`--store`, `CTXKIT_STORE`, setting `store.url`): which one, `ctxkit store
//! import`/`export`, `ctxkit sessions` on it, and the routing of every command that takes a session
//! FILE to a session id of a database store (`store_copy`, `store_fork`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_protocol::SessionInfoRecord;
use ctxkit_store::{AnyStore, ListQuery, SessionStore, StoreUrl, StoredSession};

use super::settings::ProcessSettings;
use super::store_copy::{on_database_session, session_argument};
use super::{Locations, print_json};
use crate::Outcome;
use crate::cli::{Command, StoreAction};

/// The store of this process: `--store`/`CTXKIT_STORE`, else setting `store.url` (read only for
/// commands that use the store, so other commands never read the settings for it), else the
/// sessions directory. A directory store becomes the sessions root.
pub fn choose(
    process: &ProcessSettings<'_>,
    command: &mut Command,
    locations: &mut Locations,
) -> Result<StoreUrl> {
    if !touches_sessions(command) {
        // `config`, `models`, the package commands…: a bad `CTXKIT_STORE` must not stop them
        // (`config list` shows it, with what is wrong with it).
        return Ok(StoreUrl::Directory(locations.sessions_root.clone()));
    }
    let flag = process.args().store.clone();
    let text = match flag.clone().or_else(crate::cli::store_from_environment) {
        Some(text) => Some(text),
        None if uses_store(command) => setting(process)?,
        None => None,
    };
    let Some(text) = text else {
        return Ok(StoreUrl::Directory(locations.sessions_root.clone()));
    };
    let url = StoreUrl::parse(&text)?;
    if flag.is_some() && url.has_password() {
        warn_of_password_on_command_line();
    }
    match &url {
        StoreUrl::Directory(root) => locations.sessions_root.clone_from(root),
        StoreUrl::Postgres(_) => locations.database = Some(url.clone()),
    }
    Ok(url)
}

/// A password in `--store` is in the process's command line, which every user of the machine may
/// read (`ps`, `/proc/PID/cmdline`) while the command runs: said once, on stderr.
fn warn_of_password_on_command_line() {
    let _ = writeln!(
        crate::redact::stderr(),
        "warning: the password in `--store` can be read by every user of this machine while \
         ctxkit runs (the process list); set the URL in `{}` or `store.url` instead",
        crate::cli::CTXKIT_STORE
    );
}

/// Setting `store.url` of the trusted view (an untrusted project cannot choose the store).
fn setting(process: &ProcessSettings<'_>) -> Result<Option<String>> {
    Ok(process.settings()?.settings().store.url.clone())
}

/// How long this process holds a database session without renewing it: `store.leaseSeconds`, as
/// `serve` reads it (the default when the settings do not load: the command that needs them says
/// why). Nothing to hold in a sessions folder.
pub fn lease(url: &StoreUrl, process: &ProcessSettings<'_>) -> Duration {
    if !url.is_database() {
        return ctxkit_store::DEFAULT_LEASE;
    }
    process
        .settings()
        .map_or(ctxkit_store::DEFAULT_LEASE, |settings| {
            Duration::from_secs(settings.settings().store.lease_seconds)
        })
}

/// Whether the command reads or writes sessions at all, so that the store matters to it.
fn touches_sessions(command: &Command) -> bool {
    match command {
        Command::Config(_)
        | Command::Models { .. }
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
        | Command::Compact { .. }
        | Command::Compactions { .. }
        | Command::Branch { .. }
        | Command::UndoCompact { .. }
        | Command::Serve { .. }
        | Command::Chat(_)
        | Command::Export { .. }
        | Command::View { .. }
        | Command::Checkpoints(_)
        | Command::Simulate(_) => true,
    }
}

fn uses_store(command: &mut Command) -> bool {
    let names_a_missing_file = session_argument(command).is_some_and(|(file, _)| !file.exists());
    let views_a_missing_file = matches!(command, Command::View { web, .. }
        if web.file.as_ref().is_some_and(|file| !file.exists()));
    let simulates_a_missing_file = if let Command::Simulate(args) = command {
        args.session_names_mut()
            .any(|name| !std::path::Path::new(name.as_str()).exists())
    } else {
        false
    };
    names_a_missing_file
        || views_a_missing_file
        || simulates_a_missing_file
        || matches!(
            command,
            Command::Sessions { from: None, .. }
                | Command::Store(_)
                | Command::Chat(_)
                | Command::Serve { .. }
                // Only to say how to store the file it writes (a database store lists no file).
                | Command::Import { out: None, .. }
        )
}

/// Runs `command`: on the store when it is about the store or names a database session, else
/// through `dispatch` as before.
pub fn run(
    url: &StoreUrl,
    lease: Duration,
    mut command: Command,
    out: &mut dyn Write,
    dispatch: impl FnOnce(Command, &mut dyn Write) -> Result<Outcome>,
) -> Result<Outcome> {
    if let Command::Store(action) = command {
        return store_action(url, lease, action, out);
    }
    if let Command::Sessions {
        from: None,
        all,
        json,
        ref dir,
        ref name,
        ref grep,
    } = command
        && (url.is_database() || name.is_some() || grep.is_some())
    {
        let query = ListQuery {
            project: (!all && dir.is_none()).then(current_project).transpose()?,
            name: name.clone(),
            text: grep.clone(),
            ..ListQuery::default()
        };
        return match dir {
            Some(folder) => list_folder(url, folder, &query, json, out),
            None => list(url, &query, json, out),
        };
    }
    if url.is_database()
        && let Command::Chat(args) = &mut command
    {
        super::store_fork::chat_in_store(url, args)?;
    }
    if url.is_database()
        && let Command::Simulate(args) = &mut command
    {
        let copies = super::store_simulate::copy_stored_sessions(url, args.session_names_mut())?;
        let outcome = dispatch(command, out);
        match copies {
            Some(copies) if outcome.is_err() => copies.keep_names_for_the_error(),
            copies => drop(copies),
        }
        return outcome;
    }
    if url.is_database()
        && let Command::Import { out: None, .. } = &command
    {
        // An import writes session files (it appends to them when run again); the database is
        // one command away.
        let outcome = dispatch(command, out)?;
        writeln!(
            crate::redact::stderr(),
            "hint: the store is a database: `ctxkit store import FILE` stores the file written above there"
        )?;
        return Ok(outcome);
    }
    // A name that is a path (`./missing.jsonl`) is a file that is missing, said as such, not an id
    // looked for in the store (QA 2026-12-07: "no session `./missing.jsonl` in the store").
    let on_database = url.is_database()
        && session_argument(&mut command)
            .is_some_and(|(file, _)| !file.exists() && !super::sessions::names_a_file(file));
    if !on_database {
        return dispatch(command, out);
    }
    on_database_session(url, lease, command, out, dispatch)
}

pub(super) fn current_project() -> Result<String> {
    Ok(std::env::current_dir()
        .context("cannot read the current directory")?
        .display()
        .to_string())
}

/// A runtime for the store's calls (the CLI's commands are synchronous).
pub(super) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(super) fn open(runtime: &tokio::runtime::Runtime, url: &StoreUrl) -> Result<AnyStore> {
    runtime
        .block_on(AnyStore::open(url))
        .with_context(|| format!("cannot open the store `{}`", url.redacted()))
}

fn store_action(
    url: &StoreUrl,
    lease: Duration,
    action: StoreAction,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let runtime = runtime()?;
    let store = open(&runtime, url)?;
    match action {
        StoreAction::Import { files } => {
            return import_files(&runtime, &store, lease, &files, out);
        }
        StoreAction::Export { id, out: file } => {
            let id = runtime.block_on(store.resolve(&id))?;
            let lines = runtime.block_on(store.export(&id))?;
            write_new_file(&file, &lines.to_jsonl())?;
            writeln!(
                out,
                "Exported {id} ({}) to {}",
                crate::render::counted(lines.entries.len(), "entry"),
                file.display()
            )?;
        }
    }
    Ok(Outcome::Success)
}

/// `ctxkit store import FILE...`: each file on its own, a failure reported (stderr) as it happens
/// and the others imported; the first failure's exit code when any failed.
fn import_files(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    lease: Duration,
    files: &[PathBuf],
    out: &mut dyn Write,
) -> Result<Outcome> {
    let mut failures = Vec::new();
    for file in files {
        match import_file(runtime, store, lease, file) {
            Ok(line) => writeln!(out, "{line}")?,
            Err(error) => failures.push(crate::report_failure(&error)),
        }
    }
    let Some(&code) = failures.first() else {
        return Ok(Outcome::Success);
    };
    // Sweep 9: one file that failed was reported as "1 of 1 file not imported; the others were",
    // and a batch's sentence stopped at "the others were": it says how many were imported.
    let summary = if files.len() == 1 {
        "The file was not imported (named above)".to_owned()
    } else if failures.len() == files.len() {
        format!(
            "None of the {} files was imported (each named above)",
            files.len()
        )
    } else {
        let imported = files.len() - failures.len();
        let others = if imported == 1 {
            "the other one was".to_owned()
        } else {
            format!("the other {imported} were")
        };
        format!(
            "{} of {} not imported (each named above); {others} imported",
            failures.len(),
            crate::render::counted(files.len(), "file")
        )
    };
    writeln!(crate::redact::stderr(), "{summary}")?;
    Ok(Outcome::PartlyFailed { code })
}

/// Imports `file`, or, when its session is stored already, appends the entries it gained since
/// (`ctxkit import` run again grows a file already stored); the line saying what was stored.
fn import_file(
    runtime: &tokio::runtime::Runtime,
    store: &AnyStore,
    lease: Duration,
    file: &Path,
) -> Result<String> {
    importable(file)?;
    let stored = match runtime.block_on(store.import_file(file)) {
        Ok(stored) => stored,
        Err(ctxkit_store::StoreError::Exists { .. }) => {
            let appended = super::store_reimport::append_gained(runtime, store, lease, file)
                .with_context(|| format!("cannot import `{}`", file.display()))?;
            return Ok(match appended.added {
                0 => format!(
                    "Nothing new in {}: the store holds all {} of {}",
                    file.display(),
                    crate::render::counted(appended.entries, "entry"),
                    appended.id
                ),
                added => format!(
                    "Appended {} to {} ({} now) from {}",
                    crate::render::counted(added, "entry"),
                    appended.id,
                    appended.entries,
                    file.display()
                ),
            });
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot import `{}`", file.display()));
        }
    };
    Ok(format!(
        "Imported {} ({}) from {}",
        stored.id,
        crate::render::counted(stored.entries, "entry"),
        file.display()
    ))
}

/// Refuses a session file the store cannot take as it is: one in an older format. Every line
/// must be an entry too (a torn or unreadable line is refused by the store as it reads the file a
/// line at a time); what the tree makes of them (orphans, dangling references) is kept as in the
/// file.
fn importable(file: &Path) -> Result<()> {
    // The index is dropped before the store reads the lines.
    let needs_migration = ctxkit_session::Session::open(file)?.needs_migration();
    if needs_migration {
        anyhow::bail!(
            "`{}` is in an older session format; run `ctxkit migrate {}` first",
            file.display(),
            file.display()
        );
    }
    Ok(())
}

/// Writes `bytes` to a new file (never over an existing one): a temporary file beside it, then a
/// rename that fails when the name is taken.
fn write_new_file(file: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temporary = ctxkit_jail::temporary_beside(file)
        .with_context(|| format!("cannot write in `{}`", dir.display()))?;
    temporary
        .write_all(bytes)
        .and_then(|()| temporary.as_file().sync_all())
        .with_context(|| format!("cannot write `{}`", file.display()))?;
    temporary.persist_noclobber(file).map_err(|error| {
        anyhow::anyhow!(
            "cannot write `{}`: {}; name a new file",
            file.display(),
            error.error
        )
    })?;
    Ok(())
}

fn list(url: &StoreUrl, query: &ListQuery, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    if let StoreUrl::Directory(root) = url {
        // Each file read once: its row comes from the pass that filtered it.
        let found = ctxkit_store::list_store_records(root, query)
            .with_context(|| format!("cannot list `{}`", root.display()))?;
        return print_records(
            found.into_iter().map(|(_, record)| record).collect(),
            json,
            out,
        );
    }
    let runtime = runtime()?;
    let store = open(&runtime, url)?;
    let sessions = runtime.block_on(store.list(query))?;
    print_listing(sessions, json, out)
}

fn print_listing(sessions: Vec<StoredSession>, json: bool, out: &mut dyn Write) -> Result<Outcome> {
    print_records(sessions.into_iter().map(listed_record).collect(), json, out)
}

fn print_records(
    records: Vec<SessionInfoRecord>,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    if json {
        print_json(out, &records)?;
    } else if records.is_empty() {
        writeln!(out, "No sessions.")?;
    } else {
        super::sessions::print_session_rows(&records, out)?;
    }
    Ok(Outcome::Success)
}

/// `ctxkit sessions --dir FOLDER` with a filter: the folder's session files that match. A
/// database has no folders, so `--dir` there is refused rather than ignored.
fn list_folder(
    url: &StoreUrl,
    folder: &Path,
    query: &ListQuery,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome> {
    if url.is_database() {
        anyhow::bail!(
            "`--dir` lists a folder of session files, and the store is a database `{}` (hint: drop `--dir`, or pass `--store DIR`)",
            url.redacted()
        );
    }
    // Each file read once: its row comes from the pass that filtered it.
    let found = ctxkit_store::list_folder_records(folder, query)
        .with_context(|| format!("cannot list `{}`", folder.display()))?;
    print_records(
        found.into_iter().map(|(_, record)| record).collect(),
        json,
        out,
    )
}

/// A session found by a filter, as `ctxkit sessions` without one shows it: a file as the file
/// listing reads it (its `modified` the last activity, as Pi's, even before the header's time),
/// a database session from the store's row.
fn listed_record(session: StoredSession) -> SessionInfoRecord {
    if session.location == "postgres" {
        return record_of(session);
    }
    ctxkit_session::read_session_info(Path::new(&session.location))
        .unwrap_or_else(|_| record_of(session))
}

/// A stored session as `ctxkit sessions` shows it; `path` is what to pass to other commands (the
/// file, or the id of a database session).
pub(super) fn record_of(session: StoredSession) -> SessionInfoRecord {
    let database = session.location == "postgres";
    let modified = ctxkit_session::iso_from_ms(session.shown_modified_ms());
    SessionInfoRecord {
        path: if database {
            session.id.clone()
        } else {
            session.location
        },
        id: session.id,
        cwd: session.cwd,
        name: session.name,
        parent_session_path: None,
        created: session.created,
        modified,
        message_count: session.message_count,
        first_message: session
            .first_message
            .unwrap_or_else(|| "(no messages)".to_owned()),
        format_version: None,
    }
}

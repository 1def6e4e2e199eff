//! The session store (`--store`, `CTXKIT_STORE`, setting `store.url`): which one, `ctxkit store
//! import`/`export`, `ctxkit sessions` on it, and every command that takes a session FILE run on
//! a session id of a database store: the session is exported to a private temporary file, the
//! command runs on it as on any file, and the entries it appended go back to the database under
//! the session's lease (a second writer is refused with `session_in_use`; a writer taken over is
//! refused its late append).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use ctxkit_protocol::SessionInfoRecord;
use ctxkit_store::{AnyStore, ListQuery, SessionStore, StoreUrl, StoredSession};

use super::settings::ProcessSettings;
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

fn uses_store(command: &mut Command) -> bool {
    let names_a_missing_file = session_argument(command).is_some_and(|(file, _)| !file.exists());
    let views_a_missing_file = matches!(command, Command::View { web, .. }
        if web.file.as_ref().is_some_and(|file| !file.exists()));
    names_a_missing_file
        || views_a_missing_file
        || matches!(
            command,
            Command::Sessions { from: None, .. }
                | Command::Store(_)
                | Command::Chat(_)
                | Command::Serve { .. }
        )
}

/// What a command does with its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    /// Appends entries to it.
    Append,
    /// Makes a new session of it (`fork`, `fork-from`): on a database, a new stored session.
    NewSession,
}

/// The session FILE argument of a command, and what the command does with it.
fn session_argument(command: &mut Command) -> Option<(&mut PathBuf, Access)> {
    match command {
        Command::Info { file, .. }
        | Command::Tree { file, .. }
        | Command::Context { file, .. }
        | Command::Tokens { file, .. }
        | Command::Compactions { file, .. }
        | Command::Check { file, .. } => Some((file, Access::Read)),
        // `export --html` reads its session once; `view` follows a database session itself
        // (`commands::web`), polling the database for what was appended.
        Command::Export { web, .. } => web.file.as_mut().map(|file| (file, Access::Read)),
        Command::View { .. } => None,
        // `--out` writes the compacted copy to the file it names, as `store export` writes one.
        Command::Compact {
            file,
            out,
            preview,
            dry_run,
            ..
        } => {
            let access = if out.is_some() || *preview || *dry_run {
                Access::Read
            } else {
                Access::Append
            };
            Some((file, access))
        }
        Command::Label { file, .. }
        | Command::Name { file, .. }
        | Command::EditContext { file, .. }
        | Command::Branch { file, .. }
        | Command::UndoCompact { file } => Some((file, Access::Append)),
        // `chat --session ID` continues a database session (a session another surface wrote).
        Command::Chat(args) => args.session.as_mut().map(|file| (file, Access::Append)),
        Command::Fork { file, .. } | Command::ForkFrom { file, .. } => {
            Some((file, Access::NewSession))
        }
        // A stored session is in the current format (the store takes no other): it says so.
        Command::Migrate { file } => Some((file, Access::Read)),
        Command::Sessions { .. }
        | Command::Store(_)
        | Command::Import { .. }
        | Command::Serve { .. }
        | Command::Checkpoints(_)
        | Command::Simulate(_)
        | Command::Models { .. }
        | Command::Config(_)
        | Command::Resources { .. }
        | Command::Trust { .. }
        | Command::Prompt
        | Command::Install { .. }
        | Command::Remove { .. }
        | Command::Update { .. }
        | Command::List { .. } => None,
    }
}

/// Runs `command`: on the store when it is about the store or names a database session, else
/// through `dispatch` as before.
pub fn run(
    url: &StoreUrl,
    mut command: Command,
    out: &mut dyn Write,
    dispatch: impl FnOnce(Command, &mut dyn Write) -> Result<Outcome>,
) -> Result<Outcome> {
    if let Command::Store(action) = command {
        return store_action(url, action, out);
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
    let on_database =
        url.is_database() && session_argument(&mut command).is_some_and(|(file, _)| !file.exists());
    if !on_database {
        return dispatch(command, out);
    }
    on_database_session(url, command, out, dispatch)
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

fn store_action(url: &StoreUrl, action: StoreAction, out: &mut dyn Write) -> Result<Outcome> {
    let runtime = runtime()?;
    let store = open(&runtime, url)?;
    match action {
        StoreAction::Import { files } => return import_files(&runtime, &store, &files, out),
        StoreAction::Export { id, out: file } => {
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
    files: &[PathBuf],
    out: &mut dyn Write,
) -> Result<Outcome> {
    let mut failures = Vec::new();
    for file in files {
        let imported = importable(file).and_then(|()| {
            runtime
                .block_on(store.import_file(file))
                .with_context(|| format!("cannot import `{}`", file.display()))
        });
        match imported {
            Ok(stored) => writeln!(
                out,
                "Imported {} ({}) from {}",
                stored.id,
                crate::render::counted(stored.entries, "entry"),
                file.display()
            )?,
            Err(error) => failures.push(crate::report_failure(&error)),
        }
    }
    let Some(&code) = failures.first() else {
        return Ok(Outcome::Success);
    };
    writeln!(
        crate::redact::stderr(),
        "{} of {} not imported (each named above); the others were",
        failures.len(),
        crate::render::counted(files.len(), "file")
    )?;
    Ok(Outcome::PartlyFailed { code })
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
    let mut temporary = tempfile::NamedTempFile::new_in(dir)
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
fn record_of(session: StoredSession) -> SessionInfoRecord {
    let database = session.location == "postgres";
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
        modified: ctxkit_session::iso_from_ms(session.modified_ms),
        message_count: session.message_count,
        first_message: session
            .first_message
            .unwrap_or_else(|| "(no messages)".to_owned()),
        format_version: None,
    }
}

/// Runs a FILE command on database session `id`: exported to a private temporary file, the
/// command run on it, and what it appended stored under the session's lease.
fn on_database_session(
    url: &StoreUrl,
    mut command: Command,
    out: &mut dyn Write,
    dispatch: impl FnOnce(Command, &mut dyn Write) -> Result<Outcome>,
) -> Result<Outcome> {
    let (id, access) = match session_argument(&mut command) {
        Some((file, access)) => (file.display().to_string(), access),
        None => return dispatch(command, out),
    };
    let runtime = runtime()?;
    let store = open(&runtime, url)?;
    if access == Access::NewSession {
        return super::store_fork::fork_in_store(&runtime, &store, &id, command, out);
    }
    let lease = match access {
        Access::Append => Some(runtime.block_on(store.acquire(
            &id,
            &writer_name(),
            ctxkit_store::DEFAULT_LEASE,
        ))?),
        Access::Read | Access::NewSession => None,
    };
    // `compact --out FILE`: the new file's parent is the stored session, not its temporary copy.
    let compacted_to = if let Command::Compact {
        out: Some(file), ..
    } = &command
        && !file.exists()
    {
        Some(file.clone())
    } else {
        None
    };
    let copy = Copy {
        runtime: &runtime,
        url,
        store: &store,
        id: &id,
        lease: lease.as_ref(),
    };
    let result = copy.run(command, out, dispatch).and_then(|outcome| {
        match compacted_to.filter(|file| file.exists()) {
            Some(file) => super::store_fork::name_parent(&file, &id).map(|()| outcome),
            None => Ok(outcome),
        }
    });
    if let Some(lease) = &lease {
        // A lease taken over is not ours to release; the error above already says so.
        let _ = runtime.block_on(store.release(lease));
    }
    result
}

/// A database session worked on as a file.
struct Copy<'a> {
    runtime: &'a tokio::runtime::Runtime,
    url: &'a StoreUrl,
    store: &'a AnyStore,
    id: &'a str,
    lease: Option<&'a ctxkit_store::Lease>,
}

impl Copy<'_> {
    fn run(
        &self,
        mut command: Command,
        out: &mut dyn Write,
        dispatch: impl FnOnce(Command, &mut dyn Write) -> Result<Outcome>,
    ) -> Result<Outcome> {
        let lines = self.runtime.block_on(self.store.export(self.id))?;
        let directory = ctxkit_session::private_temporary_folder("session")
            .context("cannot create a private temporary directory")?;
        let path = ctxkit_session::private_copy_path(directory.path(), self.id);
        let before = lines.to_jsonl();
        ctxkit_session::write_private_file(&path, &before)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
        if let Some((argument, _)) = session_argument(&mut command) {
            argument.clone_from(&path);
        }
        if let Command::Chat(args) = &mut command {
            let shown = format!("{} in {}", self.id, self.url.redacted());
            args.shown_as = Some((path.clone(), shown));
        }
        // What it appends is committed as it goes (a chat lasts), under the lease it renews.
        let syncer = self.lease.map(|lease| {
            super::store_sync::Syncer::start(self.url, lease, &path, before.len() as u64)
        });
        // What the command prints names the session by its id, not by the temporary copy: on
        // stderr (warnings, hints) through the output layer, on stdout here too (the chat's is
        // not that layer's).
        let shown = crate::redact::show_path_as(&path, self.id);
        let mut printed = Vec::new();
        let result = dispatch(command, &mut printed);
        drop(shown);
        let committed = syncer.map_or(Ok(()), super::store_sync::Syncer::finish);
        // A chat's `/fork`, `/new` or `/save` wrote new sessions beside the copy.
        let made = super::store_fork::store_new_sessions(
            self.runtime,
            self.store,
            directory,
            &path,
            self.id,
        );
        let printed = String::from_utf8_lossy(&printed);
        out.write_all(
            printed
                .replace(&path.display().to_string(), self.id)
                .as_bytes(),
        )?;
        let outcome = result?;
        committed?;
        for stored in made? {
            writeln!(
                crate::redact::stderr(),
                "Stored the session {stored}, made in this chat (`ctxkit chat --session {stored}` \
                 continues it)"
            )?;
        }
        Ok(outcome)
    }
}

/// Who writes: this process, named so `session_in_use` tells the user which one.
fn writer_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned());
    format!("ctxkit {} (pid {}) on {host}", "cli", std::process::id())
}

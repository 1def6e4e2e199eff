//! A FILE command on a session id of a database store: the session is exported to a private
//! temporary file, the command runs on it as on any file, and the entries it appended go back to the
//! database under the session's lease (a second writer is refused with `session_in_use`; a writer
//! taken over is refused its late append).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result};
use ctxkit_store::{AnyStore, SessionStore as _, StoreUrl};

use super::store::{open, runtime};
use super::store_sync::Finished;
use crate::Outcome;
use crate::cli::Command;

/// What a command does with its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    Read,
    /// Appends entries to it.
    Append,
    /// Makes a new session of it (`fork`, `fork-from`): on a database, a new stored session.
    NewSession,
}

/// The session FILE argument of a command, and what the command does with it.
pub(super) fn session_argument(command: &mut Command) -> Option<(&mut PathBuf, Access)> {
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
        // A chat on a database session keeps its file checkpoints beside the private copy it
        // works on, which goes when the chat ends: a stored session lists none (a tester's
        // `checkpoints ID` said there was no such file).
        Command::Checkpoints(args) => args.file.as_mut().map(|file| (file, Access::Read)),
        Command::Sessions { .. }
        | Command::Store(_)
        | Command::Import { .. }
        | Command::Serve { .. }
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
        | Command::Mcp { .. } => None,
    }
}

/// Runs a FILE command on database session `id`: exported to a private temporary file, the
/// command run on it, and what it appended stored under the session's lease.
pub(super) fn on_database_session(
    url: &StoreUrl,
    lease_duration: Duration,
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
    // The session's id, or the start of one.
    let id = runtime.block_on(store.resolve(&id))?;
    if access == Access::NewSession {
        return super::store_fork::fork_in_store(&runtime, &store, &id, command, out);
    }
    let lease = match access {
        Access::Append => {
            Some(runtime.block_on(store.acquire(&id, &writer_name(), lease_duration))?)
        }
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
        lease_duration,
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
    /// How long the lease lasts unrenewed (`store.leaseSeconds`).
    lease_duration: Duration,
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
        // What it appends is committed as it goes (a chat lasts), under the lease it renews.
        let syncer = self.lease.map(|lease| {
            super::store_sync::Syncer::start(
                self.url,
                (lease, self.lease_duration),
                &path,
                before.len() as u64,
            )
        });
        let chat = if let Command::Chat(args) = &mut command {
            let shown = format!("{} in {}", self.id, self.url.redacted());
            args.shown_as = Some((path.clone(), shown));
            args.store_sync = syncer.as_ref().map(super::store_sync::Syncer::status);
            true
        } else {
            false
        };
        // What the command prints names the session by its id, not by the temporary copy: on
        // stderr (warnings, hints) through the output layer, on stdout here too (the chat's is
        // not that layer's).
        let shown = crate::redact::show_path_as(&path, self.id);
        let mut printed = Vec::new();
        let result = dispatch(command, &mut printed);
        if result.is_err() {
            shown.keep_for_the_error();
        } else {
            drop(shown);
        }
        let committed = syncer.map(super::store_sync::Syncer::finish);
        let printed = String::from_utf8_lossy(&printed);
        out.write_all(
            printed
                .replace(&path.display().to_string(), self.id)
                .as_bytes(),
        )?;
        if let Some(Finished {
            result: Err(error),
            unstored,
        }) = committed
        {
            if !unstored {
                return Err(error.context(format!(
                    "this command stopped writing session `{}` (everything it wrote before is \
                     stored)",
                    self.id
                )));
            }
            // Nothing the command wrote is lost: kept as a new session, or in a folder of its own.
            return Err(self.keep_unstored(directory, &path, error));
        }
        // A chat's `/fork`, `/new` or `/save` wrote new sessions beside the copy.
        let made = super::store_fork::store_new_sessions(
            self.runtime,
            self.store,
            directory,
            &path,
            self.id,
        );
        let outcome = result?;
        if chat && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            // The URL is shown as the banner shows it (its password already hidden).
            writeln!(
                std::io::stderr(),
                "Session saved: {} in {}",
                self.id,
                self.url.redacted()
            )?;
        }
        for stored in made? {
            writeln!(
                crate::redact::stderr(),
                "Stored the session {stored}, made in this chat (`ctxkit chat --session {stored}` \
                 continues it)"
            )?;
        }
        Ok(outcome)
    }

    /// After the last commit failed: when the session was taken over, what the command wrote is
    /// stored as a new session (a fork of the copy, its parent the session); when the database
    /// does not answer (or that fork cannot be stored), the copy's folder is kept where no later
    /// run removes it. The error says which, and how to go on.
    fn keep_unstored(
        &self,
        directory: tempfile::TempDir,
        copy: &std::path::Path,
        error: anyhow::Error,
    ) -> anyhow::Error {
        if super::store_sync::is_lost(&error) {
            match super::store_fork::store_fork_of_copy(self.runtime, self.store, copy, self.id) {
                Ok(new_id) => {
                    return error.context(format!(
                        "this chat could not store its last turns in session `{}`; they are kept \
                         as the new session {new_id}, a fork of it (`ctxkit chat --session \
                         {new_id}` continues it)",
                        self.id
                    ));
                }
                Err(fork_error) => {
                    tracing::debug!(error = %format!("{fork_error:#}"), "cannot store the fork");
                }
            }
        }
        let kept = super::store_fork::keep_unstored(directory, self.id);
        let file = kept.join(copy.file_name().unwrap_or_default());
        error.context(format!(
            "what this command wrote to session `{}` is not all stored; the session is kept in \
             `{}`: `ctxkit store import FILE` stores what it gained once the database answers",
            self.id,
            file.display()
        ))
    }
}

/// Who writes: this process, named so `session_in_use` tells the user which one.
pub(super) fn writer_name() -> String {
    process_writer("cli")
}

/// The lease owner of this process as `kind` (`cli`, `serve`): its pid and host to read, and an
/// instance id drawn at random once per process, so that two processes with the same pid and
/// host name (pid 1 in two containers of one image) are two owners: a lease is taken again at
/// once by its own owner only, and names alike let one container take another's live session.
pub(super) fn process_writer(kind: &str) -> String {
    static INSTANCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let instance = INSTANCE.get_or_init(|| {
        // A version 7 UUID ends in random bits: its last 8 hex digits.
        let id: Vec<char> = ctxkit_session::new_session_id()
            .chars()
            .filter(char::is_ascii_hexdigit)
            .collect();
        id[id.len().saturating_sub(8)..].iter().collect()
    });
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned());
    owner_text(kind, std::process::id(), instance, &host)
}

fn owner_text(kind: &str, pid: u32, instance: &str, host: &str) -> String {
    format!("ctxkit {kind} (pid {pid}, instance {instance}) on {host}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn two_processes_with_one_pid_and_host_are_two_owners() {
        assert_eq!(
            owner_text("serve", 1, "3f9a1c2e", "app"),
            "ctxkit serve (pid 1, instance 3f9a1c2e) on app"
        );
        let first = process_writer("serve");
        assert_eq!(first, process_writer("serve"), "one process, one owner");
        let instance = |owner: &str| owner.split("instance ").nth(1).map(str::to_owned);
        let instance = instance(&first).unwrap_or_default();
        assert!(
            instance.starts_with(|c: char| c.is_ascii_hexdigit()),
            "{first}"
        );
        assert!(
            instance[..8].chars().all(|c| c.is_ascii_hexdigit()),
            "{first}"
        );
        assert_eq!(&instance[8..10], ") ", "{first}");
    }
}

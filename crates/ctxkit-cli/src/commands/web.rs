//! `ctxkit export --html` and `ctxkit view`: a session as a web page (`ctxkit-web`), from a
//! ctxkit/Pi session file or another agent's session imported on the fly (never written into the
//! sessions folder: a temporary copy that lives as long as the command).

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context as _, Result};
use ctxkit_import::{SourceFormat, import_file};
use ctxkit_session::{Session, SessionError};
use ctxkit_web::{
    ImportCache, OpenedSession, PageOptions, Redactor, SessionLoader, ViewConfig, WebError,
    export_page, new_token, serve_view, watched_version,
};

use super::Locations;
use super::settings::ProcessSettings;
use super::summary_setup::{self, SummaryFlags};
use super::tool_boundary::ToolBoundary;
use crate::Outcome;
use crate::cli::WebArgs;

/// Whether `file` starts with a v3 session header (else it is imported). It is opened as every
/// command opens a session (`ctxkit_session::open_session_file`), so a FIFO, a device or a socket
/// is refused at once as `ctxkit info` refuses it (a plain open of a FIFO with no writer hung
/// `export` and `view` forever). A file that cannot be opened is left to the session reader's
/// error, unless it is `opencode.db#<session id>`: a session inside OpenCode's database, imported
/// as `ctxkit import` imports it (a bulk sweep found `export` refusing the names `import` and
/// `simulate` take).
fn is_session_file(file: &Path) -> Result<bool, WebError> {
    let mut opened = match ctxkit_session::open_session_file(file) {
        Ok(opened) => opened,
        Err(refused @ (SessionError::NotARegularFile { .. } | SessionError::TooLarge { .. })) => {
            return Err(refused.into());
        }
        Err(_) => return Ok(!ctxkit_import::is_opencode_path(file)),
    };
    let mut head = Vec::new();
    let _ = std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut opened, MAX_HEAD_BYTES),
        &mut head,
    );
    if starts_with_session_header(&head) {
        return Ok(true);
    }
    // The importer's own reading has the last word: a file it would refuse as a Pi session
    // already (a header past the first bytes read here) is read as one, never "imported".
    Ok(matches!(
        ctxkit_import::detect_file_format(file),
        Err(ctxkit_import::ImportError::AlreadyPiSession { .. })
    ))
}

/// How much of a file's start is read to find its header line.
const MAX_HEAD_BYTES: u64 = 64 << 10;

/// Whether `head` (a file's first bytes) starts with a session header, blank lines and
/// whitespace before it skipped as every session reader skips them (a session whose first line
/// was blank was taken for another agent's and refused as "nothing to import").
fn starts_with_session_header(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let first = text.trim_start().lines().next().unwrap_or("");
    first.contains("\"type\":\"session\"") || first.contains("\"type\": \"session\"")
}

/// Where another agent's sessions are imported to: the private folder, a serial that names each
/// copy (a new version of the source is imported while a request still reads the older copy), and
/// the copy of the source's last version ([`ImportCache`]: imported once, however many requests
/// read it).
struct Imports {
    scratch: PathBuf,
    serial: AtomicU64,
    cache: ImportCache,
    /// The import warnings already said: a live transcript imported again as it grows says each
    /// once (QA 2026-12-07: `view` printed the same two warnings at every append).
    said: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Imports {
    fn new(scratch: &Path) -> Self {
        Self {
            scratch: scratch.to_owned(),
            serial: AtomicU64::new(0),
            cache: ImportCache::new(),
            said: std::sync::Mutex::default(),
        }
    }

    /// Says each warning of `file`'s import not said before, as `ctxkit import` says them.
    fn warn(&self, file: &Path, report: &ctxkit_import::ImportReport) {
        let mut said = self
            .said
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut stderr = crate::redact::stderr();
        for warning in report.warning_lines() {
            let line = format!("warning: `{}`: {warning}", file.display());
            if said.insert(line.clone()) {
                let _ = writeln!(stderr, "{line}");
            }
        }
    }
}

/// Opens a session of any format ctxkit reads; another agent's session is converted into a file
/// under `imports`' folder once per version of its files (the returned session reads its lines
/// from there; the copy is removed when no session reads it and a newer one replaced it). The file
/// is looked at first whatever `from` says, so a FIFO is refused alike with `--from`.
fn open_any(file: &Path, from: &str, imports: &Imports) -> Result<OpenedSession, WebError> {
    let reload_error = |reason: String| WebError::Reload {
        path: file.to_owned(),
        reason,
    };
    let session_file = is_session_file(file)?;
    if from == "auto" && session_file {
        return Ok(OpenedSession::new(Session::open(file)?));
    }
    let format = match from {
        "auto" => None,
        name => Some(name.parse::<SourceFormat>().map_err(reload_error)?),
    };
    if let (Some(format), true) = (format, session_file) {
        // Said in the page's words, not the importer's ("nothing to import").
        return Err(reload_error(format!(
            "it is a Pi session, not {}; leave out `--from {from}` to show it as it is",
            format.described()
        )));
    }
    // Read before the import: a change made during it is imported again by the next request.
    let version = watched_version(&watched_files(file));
    imports.cache.open(version, || {
        let imported =
            import_file(file, format).map_err(|error| reload_error(error.to_string()))?;
        // What the import skipped or repaired, said as `ctxkit import` says it (QA 2026-12-07:
        // the page of a transcript with a malformed line said nothing of it).
        imports.warn(file, &imported.report);
        let serial = imports.serial.fetch_add(1, Ordering::SeqCst);
        let target = imports.scratch.join(format!("imported-{serial}.jsonl"));
        match imported.write_to(&target) {
            Ok(_) => Ok(target),
            Err(error) => {
                let _ = std::fs::remove_file(&target);
                Err(reload_error(error.to_string()))
            }
        }
    })
}

/// The page options the flags and settings give: the secrets tool output hides redacted (the
/// agent's own list, `Workspace::secrets`: every secret variable of the environment and the
/// settings' credentials), the engine's transform settings, the model's window. Settings that do
/// not load are refused (`docs/settings.md`).
fn page_options(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    args: &WebArgs,
    session: &Session,
    title: String,
) -> Result<PageOptions> {
    // A settings file that does not load is refused, not read as empty: the credentials it
    // holds (`llm.apiKey`, headers) are among the secrets the page hides.
    let environment = process.environment()?;
    let settings = process.settings()?;
    summary_setup::refuse_invalid_settings(settings)?;
    let boundary = ToolBoundary::new(environment, settings, &locations.sessions_root);
    let secrets = boundary.workspace(&environment.cwd).secrets().to_vec();
    // The page calls no model: the transforms need neither its key nor its settings.
    let flags = SummaryFlags {
        summary_use: summary_setup::SummaryUse::PlansOnly,
        ..SummaryFlags::default()
    };
    let transforms = summary_setup::resolve(process, flags)
        .map(|setup| setup.engine_settings.transforms)
        .unwrap_or_default();
    let redactor = Redactor::new(secrets, &args.redact)?;
    let mut options = PageOptions::new(title, redactor);
    options.no_thinking = args.no_thinking;
    options.free_models = super::spend::configured_free_models(process);
    options.transform = transforms;
    options.context_window = match args.context_window {
        Some(window) => window,
        None => session
            .build_context()
            .model
            .and_then(|model| {
                let table = ctxkit_llm::ModelTable::builtin();
                let id = model.model_id?;
                let limits = match &model.provider {
                    Some(provider) => table.find(provider, &id),
                    None => table.find_by_id(&id),
                };
                limits.map(|limits| limits.context_window)
            })
            .unwrap_or(0),
    };
    Ok(options)
}

fn title_of(session: &Session, file: &Path) -> String {
    session.session_name().unwrap_or_else(|| {
        file.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| "session".to_owned())
    })
}

/// `ctxkit export --html FILE -o OUT`.
pub fn export(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    args: &WebArgs,
    output: &Path,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let file = args.file.as_deref().context("name the session to export")?;
    // A page is a file to open in a browser (and stdout here is text, made safe for a terminal):
    // `-` would otherwise make a file of that name.
    if output == Path::new("-") {
        return Err(crate::usage::UsageError {
            message: "`-o -`: the page is written to a file, not to standard output".to_owned(),
            hint: "name the page's file: `-o session.html`".to_owned(),
        }
        .into());
    }
    refuse_other_formats(output)?;
    refuse_to_replace(output, "export -o")?;
    let scratch = ctxkit_session::private_temporary_folder("export")
        .context("cannot create a private temporary directory")?;
    let _scratch_left = super::leftovers::remove_folder_on_stop(scratch.path());
    let session = open_any(file, &args.from, &Imports::new(scratch.path()))?;
    super::report_damage(&session, file)?;
    let options = page_options(process, locations, args, &session, title_of(&session, file))?;
    // Written as a stream: a session of a million entries is never held as one document. Its
    // temporary file beside `output` goes if a signal ends the export (QA: 13 MB left behind).
    let _temporaries = super::leftovers::temporaries_beside(output);
    let mut stats = None;
    let bytes = write_page(output, |file| {
        stats = Some(export_page(&session, &options, file)?);
        Ok(())
    })?;
    writeln!(out, "{}", output.display())?;
    let entries = session.entries().len();
    let compactions = stats.map_or(0, |stats| stats.compactions);
    // Through the terminal-safe layer: the path is the user's, and may hold escape sequences.
    writeln!(
        crate::redact::stderr(),
        "Exported {}, {} ({bytes} bytes) to `{}`",
        crate::render::counted(entries, "entry"),
        crate::render::counted(compactions, "compaction"),
        output.display()
    )?;
    Ok(Outcome::Success)
}

/// Refuses an output named for another format: the page is HTML, and `-o copy.jsonl` wrote one
/// under a session file's name (the chat's `/export copy.jsonl` copies the session; QA r98).
fn refuse_other_formats(output: &Path) -> Result<()> {
    let extension = output
        .extension()
        .map(|extension| extension.to_string_lossy().to_lowercase());
    let hint = match extension.as_deref() {
        Some("jsonl" | "json") => {
            "to copy the session, `cp` it (or `ctxkit import FILE --out COPY.jsonl` for another \
             agent's), or name the page `.html`"
        }
        Some("md" | "markdown" | "txt") => {
            "`ctxkit export` writes a web page; name it `.html` (`ctxkit context FILE` prints the \
             conversation as text)"
        }
        _ => return Ok(()),
    };
    Err(crate::usage::UsageError {
        message: format!(
            "`-o {}`: `ctxkit export` writes a web page (HTML), not that format",
            output.display()
        ),
        hint: hint.to_owned(),
    }
    .into())
}

/// Writes the page atomically (a temporary file beside it, then a rename): a failed export never
/// leaves half a page where an older one was. Returns the page's size in bytes.
pub(crate) fn write_page(
    output: &Path,
    write: impl FnOnce(&mut std::fs::File) -> Result<(), WebError>,
) -> Result<u64> {
    let dir = output
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // The I/O error stays in the chain (exit 4), its text without the temporary file's name.
    let mut temporary = ctxkit_jail::temporary_beside(output).map_err(|error| {
        anyhow::Error::new(std::io::Error::new(
            error.kind(),
            without_temporary_path(&error),
        ))
        .context(format!("cannot write into `{}`", dir.display()))
    })?;
    // Only a failed write is said as one: a session that cannot be read is the reader's error.
    write(temporary.as_file_mut()).map_err(|error| match error {
        WebError::Write { .. } => {
            anyhow::Error::new(error).context(format!("cannot write `{}`", output.display()))
        }
        other @ (WebError::Session(_)
        | WebError::Compaction(_)
        | WebError::Pattern { .. }
        | WebError::UnknownEntry { .. }
        | WebError::ContextTooLong { .. }
        | WebError::Serve { .. }
        | WebError::Reload { .. }) => anyhow::Error::new(other),
    })?;
    let bytes = temporary
        .as_file()
        .metadata()
        .map_or(0, |metadata| metadata.len());
    // The page holds the conversation as the session does, and stays as private as the session
    // file (`0600`, as the temporary file starts): sharing it is sending it, not letting every local
    // user read it (QA: pages were written `0644` into the project, sessions `0600`).
    temporary.persist(output).map_err(|error| {
        anyhow::Error::new(error.error).context(format!("cannot write `{}`", output.display()))
    })?;
    Ok(bytes)
}

/// The reason of a failed temporary file, without the temporary file's name that `tempfile`
/// appends (`… at path "/dir/.tmpXXXX"`): the user never named that file.
fn without_temporary_path(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" at path \"") {
        Some((reason, _)) => reason.to_owned(),
        None => text,
    }
}

/// An export replaces only an earlier page: never the session it reads, a folder or any other
/// file a mistyped name names. `command` is how the page's file was named (`export -o`,
/// `/export`), for the refusal's example. A link, a FIFO or a device is refused too: the page is
/// written beside it and renamed over it, so `-o /dev/stdout` replaced the system's link with a
/// file (QA 2026-12-07, as root), and an empty FIFO or device passed as an empty file.
pub(crate) fn refuse_to_replace(output: &Path, command: &str) -> Result<()> {
    let Ok(metadata) = std::fs::symlink_metadata(output) else {
        return Ok(());
    };
    if metadata.is_symlink() {
        anyhow::bail!(
            "`{}` is a link; {command} writes a page to a file of its own and would replace the \
             link: name the file itself, or another",
            output.display()
        );
    }
    if !metadata.is_dir() && !metadata.is_file() {
        anyhow::bail!(
            "`{}` is not a file (a FIFO, a socket or a device); {command} writes a page to a \
             file: name one",
            output.display()
        );
    }
    if metadata.is_dir() {
        anyhow::bail!(
            "`{}` is a folder; name the page's file (e.g. `{command} {}`)",
            output.display(),
            output.join("session.html").display()
        );
    }
    if metadata.len() == 0 || is_an_earlier_page(output) {
        return Ok(());
    }
    anyhow::bail!(
        "`{}` exists and is not a page ctxkit wrote; {command} replaces only an earlier page: name \
         another file",
        output.display()
    )
}

/// Whether `file` is a page ctxkit wrote: an HTML document whose head names ctxkit as its
/// generator, or ends its title with ` — ctxkit` (the pages written before the generator was
/// named). Any other HTML file, a hand-written one or Pi's, is not replaced (QA 2026-12-07: an
/// export to `mine.html` replaced the user's own page).
pub(crate) fn is_an_earlier_page(file: &Path) -> bool {
    let Ok(opened) = std::fs::File::open(file) else {
        return false;
    };
    let mut head = Vec::with_capacity(PAGE_HEAD_BYTES);
    if std::io::Read::read_to_end(
        &mut std::io::Read::take(opened, PAGE_HEAD_BYTES as u64),
        &mut head,
    )
    .is_err()
    {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    let start = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_ascii_lowercase();
    let html = start.starts_with("<!doctype html") || start.starts_with("<html");
    html && (text.contains(r#"<meta name="generator" content="ctxkit">"#)
        || text.contains(" — ctxkit</title>"))
}

/// How much of a file [`is_an_earlier_page`] reads: a page's head, before its style.
const PAGE_HEAD_BYTES: usize = 4096;

/// `ctxkit view [FILE]`: serves the page on loopback until interrupted.
pub fn view(
    process: &ProcessSettings<'_>,
    locations: &Locations,
    args: &WebArgs,
    port: u16,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let file: PathBuf = match &args.file {
        Some(file) => file.clone(),
        None => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let dir = ctxkit_session::default_session_dir(
                &locations.sessions_root,
                &cwd.to_string_lossy(),
            );
            ctxkit_session::find_most_recent_session(&dir).with_context(|| {
                format!(
                    "no session in `{}`\nhint: name one: `ctxkit view SESSION.jsonl`",
                    dir.display()
                )
            })?
        }
    };
    super::refuse_folder(&file)?;
    let scratch = ctxkit_session::private_temporary_folder("view")
        .context("cannot create a private temporary directory")?;
    // A session of a database store (`--store postgres://…`, an id that is no file): a copy that
    // follows the database, which the page follows as it follows a file.
    let mut shown = file.display().to_string();
    let file = match &locations.database {
        Some(url) if !file.exists() => {
            let (copy, id) = follow_database(url, &shown, scratch.path())?;
            shown = id;
            copy
        }
        Some(_) | None => file,
    };
    let loader: SessionLoader = {
        let file = file.clone();
        let from = args.from.clone();
        // The folder outlives the server and its loader (dropped as this function returns), so
        // the copies in it are removed before it.
        let imports = Imports::new(scratch.path());
        Arc::new(move || open_any(&file, &from, &imports))
    };
    // The page's data and every context read one copy of the source's version: the import made
    // for this first read serves the page too.
    let first = loader()?;
    super::report_damage(&first, &file)?;
    let options = page_options(process, locations, args, &first, title_of(&first, &file))?;
    drop(first);
    let config = ViewConfig {
        watched: watched_files(&file),
        loader,
        options,
        token: new_token(),
    };
    let token = config.token.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        // Ctrl-C, SIGTERM or SIGHUP (its terminal closed) stop it as it returns, so its private
        // copies are removed; caught from here on, before the page's address is printed.
        let stop = super::signals::stop_signal(super::signals::Stops::OnTerminateAndHangup);
        let (bound, server) = serve_view(address, config, stop).await?;
        writeln!(out, "http://{bound}/?token={token}")?;
        out.flush()?;
        // A database session's id comes from a header someone else wrote: shown as text.
        writeln!(
            crate::redact::stderr(),
            "Serving `{shown}` on loopback, following it as it grows; Ctrl-C stops"
        )?;
        server.await;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(Outcome::Success)
}

/// The files `view` follows for `file`: the file itself, or for a session inside OpenCode's
/// database (`opencode.db#<id>`, no file of that name) the database and its write-ahead log,
/// where SQLite writes first.
fn watched_files(file: &Path) -> Vec<PathBuf> {
    if file.exists() || !ctxkit_import::is_opencode_path(file) {
        return vec![file.to_owned()];
    }
    let text = file.to_string_lossy();
    let Some((database, _)) = text.rsplit_once('#') else {
        return vec![file.to_owned()];
    };
    vec![
        PathBuf::from(database),
        PathBuf::from(format!("{database}-wal")),
    ]
}

/// How often `view` asks the database whether a session grew.
const DATABASE_POLL: std::time::Duration = std::time::Duration::from_millis(500);

/// Exports database session `id` to a file under `scratch` and keeps it current: a thread asks
/// the database every [`DATABASE_POLL`] and replaces the file (atomically) when the session grew.
/// Returns the file once its first copy is written, and the session's id (`id` may be its start).
fn follow_database(
    url: &ctxkit_store::StoreUrl,
    id: &str,
    scratch: &Path,
) -> Result<(PathBuf, String)> {
    use ctxkit_store::SessionStore as _;
    let file = ctxkit_session::private_copy_path(scratch, id);
    let (first, first_written) = std::sync::mpsc::channel::<Result<String>>();
    let (url, id, target) = (url.clone(), id.to_owned(), file.clone());
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = first.send(Err(anyhow::anyhow!("cannot start the async runtime")));
            return;
        };
        runtime.block_on(async move {
            let store = match ctxkit_store::AnyStore::open(&url).await {
                Ok(store) => store,
                Err(error) => {
                    let _ = first.send(Err(error.into()));
                    return;
                }
            };
            // The session's id, or the start of one.
            let id = match store.resolve(&id).await {
                Ok(id) => id,
                Err(error) => {
                    let _ = first.send(Err(error.into()));
                    return;
                }
            };
            let mut written = 0;
            let mut first = Some(first);
            loop {
                let copied = match store.export(&id).await {
                    Ok(lines) if lines.entries.len() == written => Ok(()),
                    Ok(lines) => {
                        written = lines.entries.len();
                        replace_file(&target, &lines.to_jsonl())
                    }
                    Err(error) => Err(error.into()),
                };
                if let Some(first) = first.take() {
                    let failed = copied.is_err();
                    let _ = first.send(copied.map(|()| id.clone()));
                    if failed {
                        return;
                    }
                }
                tokio::time::sleep(DATABASE_POLL).await;
            }
        });
    });
    let id = first_written
        .recv()
        .context("the database reader stopped")??;
    Ok((file, id))
}

/// Writes `bytes` to `file` through a temporary file and a rename (a reader sees the old or the new).
fn replace_file(file: &Path, bytes: &[u8]) -> Result<()> {
    let mut temporary = ctxkit_jail::temporary_beside(file)?;
    temporary.write_all(bytes)?;
    temporary
        .persist(file)
        .map_err(|error| anyhow::anyhow!("cannot write `{}`: {}", file.display(), error.error))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    /// A session whose first lines are blank (CRLF blank lines too) is a session, read as it is:
    /// it was taken for another agent's and refused as "nothing to import".
    #[test]
    fn a_header_after_blank_lines_is_a_session_header() {
        let header = r#"{"type":"session","version":3,"id":"s","cwd":"/p"}"#;
        for head in [
            format!("{header}\n"),
            format!("\n{header}\n"),
            format!("\r\n \t\r\n{header}\r\n"),
            "{\"type\": \"session\", \"id\": \"s\"}\n".to_owned(),
        ] {
            assert!(starts_with_session_header(head.as_bytes()), "{head:?}");
        }
        for head in [
            "",
            "\n\n",
            "{\"type\":\"user\",\"sessionId\":\"x\"}\n{\"type\":\"session\"}",
        ] {
            assert!(!starts_with_session_header(head.as_bytes()), "{head:?}");
        }
    }

    /// `export`/`view` read a Pi session whose header follows a blank line as a session, and one
    /// named with `--from` is refused in the page's words, not the importer's.
    #[test]
    fn a_session_after_a_blank_line_opens_as_a_session() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        std::fs::write(
            &file,
            "\n{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n\
             {\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"hello\",\"timestamp\":1}}\n",
        )
        .unwrap();
        let imports = Imports::new(dir.path());
        let opened = open_any(&file, "auto", &imports).unwrap();
        assert_eq!(opened.entries().len(), 1);
        let refused = open_any(&file, "claude-code", &imports)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("it is a Pi session, not a Claude Code transcript"),
            "{refused}"
        );
        assert!(!refused.contains("nothing to import"), "{refused}");
    }
}

//! What an error means for the user: its exit code (as `ctxkit --help` lists them) and the `hint:`
//! line saying what to do, by the error's kind (store, session, import, provider, package,
//! settings).

use ctxkit_packages::{PackageError, SourceError};
use ctxkit_session::SessionError;
use ctxkit_settings::SettingsError;

/// What `ctxkit simulate` reads, when it cannot read a session.
const SIMULATE_HINT: &str = "`simulate` reads Pi and ctxkit session files and what `ctxkit import` \
    reads (Claude Code, Codex, OpenCode); try `ctxkit import FILE --out /tmp/check.jsonl` or \
    `ctxkit check FILE`";

/// What to do when print mode could not send its prompt.
const PROMPT_NOT_SENT_HINT: &str = "send less (a shorter piped input, fewer `@FILE`s), pick a model \
    with a larger context window with `--model` (`ctxkit models` lists them), or start a new session \
    instead of `--continue`";

pub(crate) fn classify(error: &anyhow::Error) -> (u8, Option<String>) {
    for cause in error.chain() {
        if let Some(usage) = cause.downcast_ref::<crate::usage::UsageError>() {
            return (2, Some(usage.hint.clone()));
        }
        // Transparent over the session's error, which the chain then skips.
        if let Some(ctxkit_web::WebError::Session(session_error)) = cause.downcast_ref() {
            return classify_session(session_error);
        }
        if let Some(ctxkit_web::WebError::Pattern { .. }) = cause.downcast_ref() {
            return (
                2,
                Some("`--redact` takes a regular expression (Rust's `regex` syntax): escape `(`, `[`, `.` and `*` as `\\(` to match them, e.g. `--redact 'sk-[A-Za-z0-9]+'`".to_owned()),
            );
        }
        if let Some(store_error) = cause.downcast_ref::<ctxkit_store::StoreError>() {
            return classify_store(store_error);
        }
        // `--listen` on an address other machines reach, without a token: a value ctxkit cannot
        // use as configured, as an address that is not one is (the message says what to set).
        if let Some(ctxkit_server::ListenError::TokenRequired { .. }) = cause.downcast_ref() {
            return (2, None);
        }
        if let Some(package_error) = cause.downcast_ref::<PackageError>() {
            return classify_package(package_error);
        }
        if let Some(settings_error) = cause.downcast_ref::<SettingsError>() {
            return classify_settings(settings_error);
        }
        if let Some(import_error) = cause.downcast_ref::<ctxkit_import::ImportError>() {
            return classify_import(import_error);
        }
        if let Some(ctxkit_simulate::SimulateError::Session { .. }) = cause.downcast_ref() {
            return (3, Some(SIMULATE_HINT.to_owned()));
        }
        if cause.is::<crate::commands::sessions::NoSuchSession>() {
            return (4, Some(NO_SUCH_SESSION_HINT.to_owned()));
        }
        if let Some(refused) = cause.downcast_ref::<crate::commands::NotContinued>() {
            return (3, Some(refused.hint()));
        }
        if let Some(missing) = cause.downcast_ref::<crate::commands::MissingEntry>() {
            return (3, Some(missing.hint()));
        }
        if cause.is::<crate::commands::NoModelConfigured>() {
            return (3, Some(crate::commands::NoModelConfigured::hint()));
        }
        if let Some(llm_error) = cause.downcast_ref::<ctxkit_llm::LlmError>() {
            return classify_llm(llm_error);
        }
        // A piped chat whose last request failed: the provider failed, as for any command.
        if let Some(failed) = cause.downcast_ref::<crate::commands::LastRequestFailed>() {
            return (7, failed.0.hint.clone());
        }
        // Print mode's prompt that does not fit the model's window: the input is the problem.
        if cause.is::<crate::commands::PromptNotSent>() {
            return (3, Some(PROMPT_NOT_SENT_HINT.to_owned()));
        }
        let engine_error = cause.downcast_ref::<ctxkit_engine::EngineError>();
        if let Some(ctxkit_engine::EngineError::Session(session_error)) = engine_error {
            return classify_session(session_error);
        }
        let summary_failed = matches!(
            cause.downcast_ref::<ctxkit_compaction::CompactionError>(),
            Some(ctxkit_compaction::CompactionError::Summarizer { .. })
        ) || matches!(
            engine_error,
            Some(ctxkit_engine::EngineError::Summarization(_))
        );
        if summary_failed {
            return (
                7,
                Some(
                    "the session was not changed; retry, or pick another model with `--model`"
                        .to_owned(),
                ),
            );
        }
    }
    match error
        .chain()
        .find_map(|cause| cause.downcast_ref::<SessionError>())
    {
        Some(session_error) => classify_session(session_error),
        // A file the command could not read or write (`--out` in a missing folder): I/O, not input.
        None if error
            .chain()
            .any(|cause| cause.downcast_ref::<std::io::Error>().is_some()) =>
        {
            (4, None)
        }
        None => (3, None),
    }
}

fn classify_store(store_error: &ctxkit_store::StoreError) -> (u8, Option<String>) {
    use ctxkit_store::StoreError;
    match store_error {
        StoreError::InvalidUrl { .. } => (
            2,
            Some(format!(
                "set `CTXKIT_STORE`, `store.url` or `--store` to a database URL `{}` or a directory \
                 (`./NAME` for a name with a colon)",
                ctxkit_store::DATABASE_URL_FORM
            )),
        ),
        // As a session file that is not there (`NO_SUCH_SESSION_HINT`).
        StoreError::NotFound { .. } => (4, Some("list the stored sessions with `ctxkit sessions --all`".to_owned())),
        StoreError::AmbiguousId { .. } => (2, Some("list the stored sessions with `ctxkit sessions --all`".to_owned())),
        StoreError::Exists { .. } | StoreError::InvalidSession { .. } => (3, None),
        StoreError::NotUtf8 { what, .. } => (
            3,
            Some(format!("a store keeps each line as text; `ctxkit check {what}` names the line (read commands show its bytes as U+FFFD): fix it in a copy and import the copy")),
        ),
        StoreError::DamagedLine { what, .. } => (
            3,
            Some(format!("`ctxkit check {what}` lists every damaged line; a store takes whole entries only: fix or remove the line in a copy and import the copy")),
        ),
        StoreError::SessionInUse { .. } => (
            5,
            Some("wait for the other writer to finish (a writer that died is taken over when its lease expires)".to_owned()),
        ),
        StoreError::Fenced { .. } => (5, Some("another writer took the session over; run the command again (what a chat could not store is kept where its message says)".to_owned())),
        StoreError::Session(session_error) => classify_session(session_error),
        // PostgreSQL 14 and later say "no encryption" where a server takes TLS connections only;
        // earlier versions "SSL off".
        StoreError::Connect { reason } if reason.contains("no encryption") || reason.contains("SSL off") => (
            4,
            Some("the server takes encrypted connections only: add `?sslmode=require` to the store URL (and `sslrootcert=/path/ca.pem` for a private CA; docs/deployment.md, \"TLS\")".to_owned()),
        ),
        StoreError::Connect { .. } => (
            4,
            Some("check that PostgreSQL runs and takes connections at the URL's host and port, for its user and database (the URL comes from `--store`, `CTXKIT_STORE` or setting `store.url`)".to_owned()),
        ),
        StoreError::Tls { .. } => (
            4,
            Some("the server's certificate must chain to a trusted root and name the URL's host: name its CA's PEM file with `sslrootcert=/path/ca.pem` in the store URL (docs/deployment.md, \"TLS\")".to_owned()),
        ),
        StoreError::TlsFile { parameter, .. } => (4, Some(tls_file_hint(parameter))),
        StoreError::Database { .. } if store_error.is_schema_unusable() => (
            4,
            Some("the role may not use the schema the store URL's `search_path` names (or it does not exist): check `options=-c search_path=…` in the URL and the role's grants (docs/deployment.md, \"Several teams on one database\")".to_owned()),
        ),
        StoreError::Io { .. } | StoreError::Database { .. } | StoreError::Unresponsive { .. } => (4, None),
    }
}

/// What the file a TLS parameter of the store URL names must hold.
fn tls_file_hint(parameter: &str) -> String {
    let holds = match parameter {
        "sslrootcert" => "the certificate of the CA that signed the database server's certificate",
        "sslcert" => "the client's certificate chain",
        _ => "the client's private key, readable by its owner only",
    };
    format!(
        "`{parameter}` in the store URL names a PEM file holding {holds}: fix the file, or name \
         the right one by its absolute path (docs/deployment.md, \"TLS\")"
    )
}

fn classify_session(session_error: &SessionError) -> (u8, Option<String>) {
    match session_error {
        // Another agent's session is no damaged file: `check` would only say it again.
        SessionError::NotASession { path, .. } => (
            3,
            Some(crate::foreign::import_hint(path).unwrap_or_else(|| {
                format!("run `ctxkit check {}` for details; the file was left untouched", path.display())
            })),
        ),
        SessionError::InvalidEntry { path, .. } => {
            (3, Some(format!("run `ctxkit check {}` to list every problem in the file", path.display())))
        }
        SessionError::EntryNotFound { .. } => (3, Some("list entry ids with `ctxkit tree FILE`".to_owned())),
        SessionError::NotEditable { .. } => {
            (3, Some("pick a message on the current path: `ctxkit tree FILE` lists the entry ids".to_owned()))
        }
        SessionError::ResultWithoutCall { .. } => (
            3,
            Some("edit the reply that made the call instead, or `--omit` leaves the result out".to_owned()),
        ),
        SessionError::Locked { .. } => {
            (5, Some("another process is writing this session; retry when it is done, or `ctxkit fork` it".to_owned()))
        }
        SessionError::ChangedOnDisk { path } => {
            (5, Some(format!("another process wrote `{}` meanwhile; run the command again", path.display())))
        }
        SessionError::FileChanged { path, .. } => {
            (5, Some(format!("nothing was appended to `{}`, which changed while the command ran; run the command again", path.display())))
        }
        SessionError::LineChanged { path, .. } => {
            (5, Some(format!("another program rewrote `{}` in place; run the command again", path.display())))
        }
        SessionError::TailUnrepaired { path, .. } => {
            (4, Some(format!("free space, then run `ctxkit check {}` and open the session again", path.display())))
        }
        SessionError::NotARegularFile { .. } | SessionError::TooLarge { .. } => {
            (3, Some("name a session file (`ctxkit sessions` lists them)".to_owned()))
        }
        SessionError::CannotMigrate { path, .. } => {
            (3, Some(format!("run `ctxkit check {}` to find the damaged lines; the file was left untouched", path.display())))
        }
        SessionError::NewerVersion { .. } => (3, Some("use a newer ctxkit to write this session".to_owned())),
        // A session named that is not there: as a database's unknown id (`StoreError::NotFound`),
        // every command that takes a session says so alike, with one hint.
        SessionError::Io { action: "open", source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            (4, Some(NO_SUCH_SESSION_HINT.to_owned()))
        }
        SessionError::Io { path, source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
            (4, Some(permission_hint(path)))
        }
        SessionError::Io { .. } => (4, None),
        SessionError::Serialize(_) => (4, Some("this is a bug in ctxkit; please report it".to_owned())),
    }
}

/// How to see who may read and write `path`: the file's own mode, or its folder's when it is not
/// there yet (a file that could not be created: QA 2026-12-07 was pointed at a missing file).
fn permission_hint(path: &std::path::Path) -> String {
    match path.parent().filter(|_| !path.exists()) {
        Some(folder) => {
            let folder = if folder.as_os_str().is_empty() {
                std::path::Path::new(".")
            } else {
                folder
            };
            format!(
                "`ls -ld {}` shows who may create files in it",
                folder.display()
            )
        }
        None => format!("`ls -l {}` shows who may read and write it", path.display()),
    }
}

/// What a command that names a session which is not there says (the file or the stored id).
const NO_SUCH_SESSION_HINT: &str =
    "`ctxkit sessions` lists this directory's sessions (`--all` every one)";

fn classify_import(error: &ctxkit_import::ImportError) -> (u8, Option<String>) {
    use ctxkit_import::ImportError;
    match error {
        ImportError::Io { .. } | ImportError::TooLarge { .. } => (4, None),
        ImportError::UnknownFormat { .. } => (
            3,
            Some(
                "name the format with `--from claude-code`, `--from codex` or `--from opencode`"
                    .to_owned(),
            ),
        ),
        ImportError::NotThisFormat {
            looks_like: Some(looks_like),
            ..
        } => (
            3,
            Some(format!(
                "try `--from {}` or `--from auto`; nothing was written",
                looks_like.name()
            )),
        ),
        ImportError::NotThisFormat {
            format,
            looks_like: None,
            ..
        } => (3, Some(other_formats_hint(*format))),
        ImportError::HeaderlessPiSession { path } => (
            3,
            Some(format!(
                "there is nothing to import; `ctxkit check {}` shows what is wrong with it",
                path.display()
            )),
        ),
        ImportError::Database { .. } => (
            4,
            Some("the database was only read; check it is OpenCode's `opencode.db`".to_owned()),
        ),
        ImportError::SessionNotFound { path, .. } => {
            // The folder OpenCode keeps its data in: the database's, or the storage folder named.
            let folder = if path.is_dir() {
                path.as_path()
            } else {
                path.parent().unwrap_or(path.as_path())
            };
            let hint = format!(
                "list its sessions with `ctxkit sessions --from opencode --dir {}`",
                folder.display()
            );
            (3, Some(hint))
        }
        ImportError::AlreadyPiSession { path, .. } => (
            3,
            Some(format!(
                "read it as it is: `ctxkit info {}`, `ctxkit chat --session {}`",
                path.display(),
                path.display()
            )),
        ),
        ImportError::Empty { .. } => (
            3,
            Some("the file holds no records; nothing was written".to_owned()),
        ),
        ImportError::Conflict { .. } => (
            3,
            Some("choose another `--out`; the file was left as it was".to_owned()),
        ),
        ImportError::InUse(session_error) => classify_session(session_error),
        ImportError::Serialize(_) => (
            4,
            Some("this is a bug in ctxkit; please report it".to_owned()),
        ),
    }
}

/// The hint for a file that holds none of the records of the format named: the other formats.
fn other_formats_hint(named: ctxkit_import::SourceFormat) -> String {
    use ctxkit_import::SourceFormat;
    let others: Vec<String> = [
        SourceFormat::ClaudeCode,
        SourceFormat::Codex,
        SourceFormat::OpenCode,
    ]
    .into_iter()
    .filter(|format| *format != named)
    .map(|format| format!("`--from {}`", format.name()))
    .collect();
    format!(
        "if another agent wrote it, name that one: {}; nothing was written",
        others.join(" or ")
    )
}

/// What to do about an unknown provider: the built-in one it most likely meant (the local
/// servers included, which no model table lists), else how to name a model.
fn unknown_provider_hint(provider: &str) -> String {
    let meant = crate::commands::models::providers_meant(provider);
    if meant.is_empty() {
        return "name a model as `provider/id`, e.g. `--model anthropic/claude-sonnet-4-5` \
                (`ctxkit models` lists them, and the local servers)"
            .to_owned();
    }
    let named: Vec<String> = meant.iter().map(|name| format!("`{name}`")).collect();
    format!(
        "did you mean {}? (`ctxkit models` lists the providers, the local servers included)",
        named.join(" or ")
    )
}

/// What to do when Pi's `models.json` routes a provider elsewhere: set `llm.baseUrl` (for the
/// settings' provider) or `llm.providers.<provider>.baseUrl` (for any other) to Pi's route, or to
/// the public URL on purpose, or for `openai` set `OPENAI_BASE_URL`.
fn routed_elsewhere_hint(
    provider: &str,
    default_url: &str,
    route_url: &str,
    owns_settings: bool,
) -> String {
    // `llm.baseUrl` is the settings' provider's; any other gets an endpoint of its own.
    let key = if owns_settings {
        "llm.baseUrl".to_owned()
    } else {
        format!("llm.providers.{provider}.baseUrl")
    };
    let variable = if provider == "openai" {
        " (or set `OPENAI_BASE_URL`)"
    } else {
        ""
    };
    format!(
        "`ctxkit config set {key} {route_url}` to follow Pi's route, or set `{key}` to \
         {default_url} to go to {} on purpose{variable}",
        ctxkit_llm::host_of(default_url)
    )
}

fn classify_llm(error: &ctxkit_llm::LlmError) -> (u8, Option<String>) {
    use ctxkit_llm::LlmError;
    match error {
        LlmError::MissingApiKey { provider, .. } => {
            let hint = "set the key, or pick another model with `--model provider/id` (`ctxkit models` lists them)";
            let hint = match crate::commands::unused_saved_entry(provider) {
                Some(why) => format!("the saved entry of `{provider}` is not used: {why}; {hint}"),
                None => hint.to_owned(),
            };
            (3, Some(hint))
        }
        LlmError::InvalidHeader { .. } => (
            3,
            Some("a header name is letters, digits and `-` (no spaces), and a value is one line: fix it in `llm.headers` or `llm.providers.<provider>.headers` (`ctxkit config list` shows them, values masked)".to_owned()),
        ),
        LlmError::EndpointOfAnotherProvider { provider, .. } => (
            3,
            Some(format!("`llm.baseUrl` is the settings' provider's: give `{provider}` an endpoint of its own with `ctxkit config set llm.providers.{provider}.baseUrl URL`")),
        ),
        LlmError::TwoEndpoints { provider } => (
            3,
            Some(format!("keep one: `ctxkit config unset llm.providers.{provider}`, or unset `llm.baseUrl`, `llm.apiKey` and `llm.headers`")),
        ),
        LlmError::UnownedEndpoint { provider } => (
            3,
            Some(format!("if they are for `{provider}`, name it: `ctxkit config set defaultProvider {provider}`; else unset them (`ctxkit config unset llm.baseUrl`)")),
        ),
        LlmError::RoutedElsewhere {
            provider,
            default_url,
            route_url,
            owns_settings,
            ..
        } => (3, Some(routed_elsewhere_hint(provider, default_url, route_url, *owns_settings))),
        LlmError::PiRoutesUnknown { provider, file, .. } => (
            3,
            Some(format!("fix `{}` (Pi reads JSON with `//` comments and trailing commas), or say where `{provider}` goes: `ctxkit config set llm.baseUrl URL`", file.display())),
        ),
        LlmError::UnknownProvider { provider } => (3, Some(unknown_provider_hint(provider))),
        LlmError::InvalidModel { .. } => {
            (3, Some("name a model as `provider/id`, e.g. `--model anthropic/claude-sonnet-4-5` (`ctxkit models` lists them)".to_owned()))
        }
        LlmError::Http { status: 401 | 403, provider, .. } => (
            7,
            Some(format!("{}; the session was not changed", ctxkit_llm::credentials_hint(provider))),
        ),
        LlmError::Http { .. } if error.is_context_overflow() => (
            7,
            Some("the request is larger than the model's window: compact with a smaller `--keep-recent-tokens`, or pick a model with a larger window; the session was not changed".to_owned()),
        ),
        LlmError::Redirected { .. } => (
            7,
            Some("a model request never follows a redirect; if the provider moved, set its new address with `ctxkit config set llm.baseUrl URL`; the session was not changed".to_owned()),
        ),
        LlmError::Http { .. }
        | LlmError::Network { .. }
        | LlmError::StreamFailed { .. }
        | LlmError::Timeout { .. }
        | LlmError::RetryDelayTooLong { .. }
        | LlmError::Cancelled { .. }
        | LlmError::InvalidResponse { .. }
        | LlmError::ReplyFailed { .. }
        | LlmError::UnusableSummary { .. }
        | LlmError::SilentOverflow { .. }
        | LlmError::Client { .. }
        | LlmError::BetaRefused { .. } => (7, Some("the session was not changed".to_owned())),
    }
}

fn classify_package(error: &PackageError) -> (u8, Option<String>) {
    match error {
        PackageError::Source(source) => match source {
            SourceError::Empty
            | SourceError::ControlCharacter { .. }
            | SourceError::LeadingDash { .. }
            | SourceError::ParentComponent { .. }
            | SourceError::InvalidNpmSpec { .. } => (
                3,
                Some(
                    "sources look like `npm:name@1.2.3`, `git:github.com/user/repo@v1` or `./path`"
                        .to_owned(),
                ),
            ),
            SourceError::TarballWithoutName { suggestion, .. } => (
                3,
                Some(format!(
                    "install it as `ctxkit install {suggestion}` (with the name in its \
                     `package.json` if it is another)"
                )),
            ),
            SourceError::NotAGitUrl { .. } => (
                3,
                Some(
                    "git sources look like `https://host/owner/repo@v1` or `git:git@host:owner/repo`"
                        .to_owned(),
                ),
            ),
        },
        PackageError::Settings(settings) => classify_settings(settings),
        PackageError::PathDoesNotExist { .. } => (
            3,
            Some("local packages are used in place; check the path".to_owned()),
        ),
        PackageError::NotAFileOrFolder { .. } => (
            3,
            Some("a local package is a folder, or one extension file; nothing was written".to_owned()),
        ),
        PackageError::Spawn { program, .. } => {
            (6, Some(format!("is `{program}` installed and on `PATH`?")))
        }
        PackageError::CommandFailed { .. } => (
            6,
            Some("the message above ends with the tool's own error output".to_owned()),
        ),
        PackageError::TimedOut { .. } => (
            6,
            Some("check the network, or set `CTXKIT_OFFLINE=1`".to_owned()),
        ),
        PackageError::UnexpectedOutput { .. } => (6, None),
        PackageError::NothingInstalled { .. } => (
            6,
            Some(
                "check `npmCommand` in your settings (`ctxkit config get npmCommand`) and that the \
                 package exists on the registry"
                    .to_owned(),
            ),
        ),
        PackageError::Offline { .. } => (
            2,
            Some("installing needs the network: unset `CTXKIT_OFFLINE` and drop `--offline`".to_owned()),
        ),
        PackageError::NotInstalled { source_text, .. } => {
            (3, Some(format!("run `ctxkit install {source_text}`")))
        }
        PackageError::IncompleteCheckout { source_text, .. } => {
            (3, Some(format!("run `ctxkit update {source_text}`")))
        }
        PackageError::InvalidNpmCommand => (
            3,
            Some("fix it with `ctxkit config set npmCommand '[\"npm\"]'`".to_owned()),
        ),
        PackageError::NoMatchingPackage { .. } => (
            3,
            Some("`ctxkit list` shows the configured packages".to_owned()),
        ),
        PackageError::UntrustedSource { source_text, .. } => (
            3,
            Some(format!(
                "read the project's settings, then run `ctxkit trust` to apply it, or add it to \
                 your own settings: `ctxkit install {source_text}`"
            )),
        ),
        PackageError::UntrustedNpmRoot { root } => (
            3,
            Some(format!(
                "read what `{}` holds, then run `ctxkit trust` (it lists the folder), or install \
                 for yourself (without `-l`)",
                root.display()
            )),
        ),
        PackageError::PathNotText { .. } => (
            3,
            Some("move the project (or ctxkit's home) to a folder whose path is UTF-8 text".to_owned()),
        ),
        PackageError::UnsafeCheckout { path, .. } => (
            3,
            Some(format!(
                "remove `{}` and run `ctxkit install` again",
                path.display()
            )),
        ),
        PackageError::Refused { .. } => (
            3,
            Some(
                "a package folder leads out of its place (a symlink the project committed under \
                 `.ctxkit/`?); remove it and try again"
                    .to_owned(),
            ),
        ),
        PackageError::Io { .. } => (4, None),
    }
}

/// What to do about a settings file that did not load, when a command refused to start for it.
fn not_loaded_hint(error: &SettingsError) -> String {
    match error {
        SettingsError::Refused { path, reason } => refused_hint(path, reason),
        SettingsError::Read { path, .. }
        | SettingsError::Parse { path, .. }
        | SettingsError::NotAnObject { path }
        | SettingsError::InvalidValue { path, .. }
        | SettingsError::RefusedValue { path, .. }
        | SettingsError::Write { path, .. }
        | SettingsError::ScopeNotWritable { path, .. }
        | SettingsError::LockTimeout { path } => format!(
            "fix `{}` by hand, or check it with `ctxkit config list`",
            path.display()
        ),
        SettingsError::NotLoaded { source }
        | SettingsError::InvalidValues { first: source, .. } => not_loaded_hint(source),
        SettingsError::Credentials { path, .. } => credentials_hint(path),
        SettingsError::SectionUnread { section } => unread_section_hint(section),
        SettingsError::UnknownKey { .. } | SettingsError::InvalidKey { .. } => {
            "fix the settings file by hand, or check it with `ctxkit config list`".to_owned()
        }
    }
}

/// What to do about a settings section the check passed and the typed settings could not hold.
fn unread_section_hint(section: &str) -> String {
    format!(
        "`ctxkit config list` shows what `{section}` holds; unset its settings one by one \
         (`ctxkit config unset {section}.<key>`) to find the one ctxkit cannot hold"
    )
}

/// What to do about a saved-keys file ctxkit cannot read.
fn credentials_hint(path: &std::path::Path) -> String {
    format!(
        "fix `{}` by hand (an object of providers, each `{{\"type\": \"api_key\", \"key\": …}}`), or remove it and save the keys again with `ctxkit login`",
        path.display()
    )
}

/// What to do about a settings file (or lock) ctxkit would not read or write.
pub(crate) fn refused_hint(
    path: &std::path::Path,
    reason: &ctxkit_settings::FileRefusal,
) -> String {
    use ctxkit_settings::FileRefusal;
    let path = path.display();
    match reason {
        FileRefusal::NotRegular => {
            format!("replace `{path}` with a regular JSON file; nothing was read from it")
        }
        FileRefusal::TooLarge { .. } => {
            format!("shorten `{path}`: settings files are read only up to that size")
        }
        FileRefusal::NotText => format!("save `{path}` as UTF-8 JSON"),
        // The folder itself a link (`.ctxkit` → `../elsewhere`): "put the file itself there"
        // pointed back into the link (QA 2026-12-07).
        FileRefusal::LeadsOutOf { folder } if ctxkit_jail::is_link(folder) => format!(
            "`{}` is a link: make it a folder of its own in the project, then put the files there",
            folder.display()
        ),
        FileRefusal::LeadsOutOf { folder } => format!(
            "a project's settings stay inside `{}`: put the file itself there instead of a link",
            folder.display()
        ),
        FileRefusal::SymlinkedLock => {
            format!("remove the link `{path}`; ctxkit makes its lock file itself")
        }
    }
}

fn classify_settings(error: &SettingsError) -> (u8, Option<String>) {
    match error {
        SettingsError::Read { .. } | SettingsError::Write { .. } => (4, None),
        SettingsError::NotLoaded { source } => (3, Some(not_loaded_hint(source))),
        SettingsError::InvalidValues { first, .. } => classify_settings(first),
        SettingsError::Credentials { path, .. } => (3, Some(credentials_hint(path))),
        SettingsError::SectionUnread { section } => (3, Some(unread_section_hint(section))),
        SettingsError::Parse { path, .. }
        | SettingsError::NotAnObject { path }
        | SettingsError::ScopeNotWritable { path, .. } => (
            3,
            Some(format!(
                "fix `{}` by hand; ctxkit never overwrites a file it cannot read",
                path.display()
            )),
        ),
        SettingsError::InvalidValue { .. }
        | SettingsError::RefusedValue { .. }
        | SettingsError::InvalidKey { .. } => (
            3,
            Some("`ctxkit config list` shows every setting and its current value".to_owned()),
        ),
        // Pi's own keys are no typos (QA 2026-12-07: `config set tuiMode regular` read as one).
        SettingsError::UnknownKey { key, .. } if ctxkit_settings::is_pi_key_not_read(key) => (
            3,
            Some(format!(
                "`{key}` is Pi's setting, which ctxkit does not read; `config set --force {key} …` \
                 writes it for Pi"
            )),
        ),
        SettingsError::UnknownKey { .. } => (
            3,
            Some(
                "`ctxkit config list` shows every setting; `config set --force` writes a key ctxkit \
                 does not know (another tool's)"
                    .to_owned(),
            ),
        ),
        SettingsError::Refused { path, reason } => (3, Some(refused_hint(path, reason))),
        SettingsError::LockTimeout { path } => (
            5,
            Some(format!(
                "another process holds `{}`; retry when it is done",
                path.display()
            )),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use ctxkit_session::SessionError;

    /// QA (2026-12-07): a write refused by permissions was the one session error without a hint.
    #[test]
    fn a_file_the_user_may_not_write_says_how_to_see_who_may() {
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("ro.jsonl");
        std::fs::write(&there, "").unwrap();
        let missing = dir.path().join("new.jsonl");
        for (path, expected) in [
            (&there, format!("`ls -l {}`", there.display())),
            (&missing, format!("`ls -ld {}`", dir.path().display())),
        ] {
            let error = SessionError::Io {
                action: "open for writing",
                path: path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
            };
            let (code, hint) = super::classify(&anyhow::Error::from(error));
            assert_eq!(code, 4);
            assert!(
                hint.as_deref().is_some_and(|hint| hint.contains(&expected)),
                "{hint:?}"
            );
        }
    }
}

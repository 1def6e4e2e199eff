//! Command-line arguments (clap), and where each environment variable ctxkit reads is declared:
//! - the flags' variables (`CTXKIT_HOME`, `CTXKIT_SESSIONS_DIR`, `CTXKIT_OFFLINE`, `CTXKIT_LOG`,
//!   `CTXKIT_LOG_FILE`, on [`GlobalArgs`]), [`CTXKIT_STORE`], [`NO_COLOR`] and the chat's
//!   [`EDITOR_VARIABLES`] and [`CLIPBOARD_VARIABLES`], the other agents'
//!   [`AGENT_DIRECTORY_VARIABLES`]: here, and this module is the only one
//!   of the binary that reads the process environment;
//! - the providers' keys and `OPENAI_BASE_URL`: `ctxkit_llm::EnvSettings::variable_names`, moved out
//!   of the process environment first thing in `main` (`ctxkit_secrets::take_secret_environment`)
//!   and read from there by `commands::summary_setup::llm_environment`;
//! - `HOME` (through `std::env::home_dir`), and `CTXKIT_HOME`/`CTXKIT_OFFLINE` for the settings
//!   files: `ctxkit_settings::Environment`, built from the process once, in `commands::settings`;
//!   `ctxkit-agent` reads `CTXKIT_HOME` for the default workspace of an agent whose embedder names
//!   none.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser};

pub use arguments::{ChatArgs, CheckpointsArgs, ConfigAction, StoreAction, WebArgs};
pub use auth::{AuthCommand, AuthTarget};
pub use command::Command;

/// ctxkit — context engine for LLM coding agents: inspect, branch and repair Pi-compatible sessions.
#[derive(Debug, Parser)]
#[command(name = "ctxkit", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Parses the command line, exiting as clap does on `--help`, `--version` or a usage error.
pub fn parse_command_line() -> Cli {
    let arguments = with_pi_short_forms(std::env::args_os());
    let cli = Cli::try_parse_from(arguments.clone())
        .unwrap_or_else(|error| usage_error(error, arguments).exit());
    with_pi_one_shots(cli)
}

/// Pi's flags that do one thing and exit, as the commands that do it: `ctxkit chat --list-models
/// [SEARCH]` is `ctxkit models SEARCH`, and `ctxkit chat --export FILE [OUTPUT]` is `ctxkit export
/// FILE --out OUTPUT` (by default `ctxkit-session-<name>.html` here, as Pi names it). The chat does
/// not start.
pub fn with_pi_one_shots(mut cli: Cli) -> Cli {
    let Command::Chat(args) = &cli.command else {
        return cli;
    };
    if let Some(search) = &args.list_models {
        cli.command = Command::Models {
            search: search.split_whitespace().map(str::to_owned).collect(),
            json: false,
        };
    } else if let Some(file) = &args.export {
        let out = args.messages.first().map_or_else(
            || {
                let name = file.file_stem().unwrap_or_default().to_string_lossy();
                PathBuf::from(format!("ctxkit-session-{name}.html"))
            },
            PathBuf::from,
        );
        cli.command = Command::Export {
            web: arguments::WebArgs {
                file: Some(file.clone()),
                from: "auto".to_owned(),
                no_thinking: false,
                redact: Vec::new(),
                context_window: None,
            },
            html: true,
            out,
        };
    }
    cli
}

/// Pi's short forms of more than one letter, which clap cannot declare (its short options are
/// one letter: `-nt` would read as `-n t`), each with the long form it stands for.
const PI_SHORT_FORMS: [(&str, &str); 8] = [
    ("-na", "--no-approve"),
    ("-ne", "--no-extensions"),
    ("-nt", "--no-tools"),
    ("-nbt", "--no-builtin-tools"),
    ("-xt", "--exclude-tools"),
    ("-nc", "--no-context-files"),
    ("-ns", "--no-skills"),
    ("-np", "--no-prompt-templates"),
];

/// `arguments` with each of Pi's short forms of more than one letter ([`PI_SHORT_FORMS`]) that
/// stands alone after `chat` and before `--` written as its long form, as Pi takes it.
pub fn with_pi_short_forms(arguments: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut in_chat = false;
    let mut options_ended = false;
    let mut rewritten = Vec::new();
    for argument in arguments {
        let long_form = PI_SHORT_FORMS
            .iter()
            .find(|(short, _)| in_chat && !options_ended && argument == *short)
            .map(|(_, long)| OsString::from(long));
        options_ended |= in_chat && argument == "--";
        in_chat |= argument == "chat";
        rewritten.push(long_form.unwrap_or(argument));
    }
    rewritten
}

/// `error` as it reads without the environment: clap puts an argument a variable filled in the
/// usage line of the error, as if the user had typed it (`Usage: ctxkit branch --home <DIR> …`
/// under `CTXKIT_HOME`), so the arguments are parsed again with no variable read and that error is
/// the one shown. Help and the version are left as they are (their text names the variables).
pub fn usage_error(
    error: clap::Error,
    arguments: impl IntoIterator<Item = OsString>,
) -> clap::Error {
    if !error.use_stderr() {
        return error;
    }
    Cli::command()
        .mut_args(|argument| argument.env(None::<&'static str>))
        .try_get_matches_from(arguments)
        .err()
        .unwrap_or(error)
}

/// Set to anything (<https://no-color.org>), ctxkit writes no colours or styles: not the log on
/// stderr, not the chat's spinner and prompts, not its rendered markdown.
pub const NO_COLOR: &str = "NO_COLOR";

/// The store URL when `--store` is not given (see `GlobalArgs::store`). Secret: it may hold a
/// database password, so `main` takes it out of the environment with the provider keys and no
/// child process sees it; read from there.
pub const CTXKIT_STORE: &str = "CTXKIT_STORE";

/// The token `serve --listen` requires (`Authorization: Bearer …`); secret like the keys.
pub const CTXKIT_SERVER_TOKEN: &str = "CTXKIT_SERVER_TOKEN";

/// The token of [`CTXKIT_SERVER_TOKEN`].
pub fn server_token_from_environment() -> Option<String> {
    ctxkit_secrets::environment_variable(CTXKIT_SERVER_TOKEN).filter(|token| !token.is_empty())
}

/// The proxy variables (either case): `HTTP_PROXY` for `http://` requests, `HTTPS_PROXY` for
/// `https://` ones, `ALL_PROXY` for both when the first is unset.
const HTTP_PROXY_VARIABLES: [&str; 2] = ["HTTP_PROXY", "http_proxy"];
const HTTPS_PROXY_VARIABLES: [&str; 2] = ["HTTPS_PROXY", "https_proxy"];
const ALL_PROXY_VARIABLES: [&str; 2] = ["ALL_PROXY", "all_proxy"];
/// The hosts a proxy is not used for.
const NO_PROXY_VARIABLES: [&str; 2] = ["NO_PROXY", "no_proxy"];

/// The proxies requests go through: the environment's, and the user's `httpProxy` setting
/// applied as Pi 1.6 applies it, as `HTTP_PROXY` and `HTTPS_PROXY` each only where the
/// environment sets none (an empty variable counts as unset), with the environment's `NO_PROXY`.
/// The environment's are read here, not left to the HTTP client: a proxy URL holding a user and
/// password is a secret `main` takes out of the environment before any client reads it (QA
/// 2026-12-07: `HTTP_PROXY=http://u:pw@proxy` was skipped without a word, and requests went
/// direct).
pub fn proxies_with_setting(http_proxy: Option<&str>) -> ctxkit_llm::Proxies {
    let first_set = |names: [&str; 2]| {
        names.iter().find_map(|name| {
            ctxkit_secrets::environment_variable(name).filter(|value| !value.is_empty())
        })
    };
    let setting = http_proxy
        .map(str::trim)
        .filter(|proxy| !proxy.is_empty())
        .map(str::to_owned);
    let all = first_set(ALL_PROXY_VARIABLES);
    let proxy_of = |names| {
        first_set(names)
            .or_else(|| setting.clone())
            .or_else(|| all.clone())
    };
    ctxkit_llm::Proxies {
        http: proxy_of(HTTP_PROXY_VARIABLES),
        https: proxy_of(HTTPS_PROXY_VARIABLES),
        no_proxy: first_set(NO_PROXY_VARIABLES),
    }
}

/// The store URL of [`CTXKIT_STORE`].
pub fn store_from_environment() -> Option<String> {
    ctxkit_secrets::environment_variable(CTXKIT_STORE).filter(|url| !url.is_empty())
}

/// The sessions root when `--sessions-dir` is not given (see `GlobalArgs::sessions_dir`).
pub const CTXKIT_SESSIONS_DIR: &str = "CTXKIT_SESSIONS_DIR";

/// Where the sessions root `dir` came from: [`CTXKIT_SESSIONS_DIR`] when the variable holds it,
/// else the flag `--sessions-dir` (which wins over the variable).
pub fn sessions_dir_origin(dir: &std::path::Path) -> &'static str {
    match std::env::var_os(CTXKIT_SESSIONS_DIR) {
        Some(value) if std::path::Path::new(&value) == dir => CTXKIT_SESSIONS_DIR,
        Some(_) | None => "--sessions-dir",
    }
}

/// The width text output is fitted to when standard output is not a terminal (a terminal's own
/// width wins): most shells keep it unexported, so a pipe or a file gets whole lines.
pub const COLUMNS: &str = "COLUMNS";

/// The terminal's width in columns, when standard output is one.
pub fn terminal_columns() -> Option<usize> {
    use std::io::IsTerminal as _;
    std::io::stdout()
        .is_terminal()
        .then(termimad::crossterm::terminal::size)
        .and_then(Result::ok)
        .map(|(columns, _)| usize::from(columns))
        .filter(|&columns| columns > 0)
}

/// The width to fit text output to: the terminal's, else [`COLUMNS`] when set, else none.
pub fn output_columns() -> Option<usize> {
    terminal_columns().or_else(|| {
        std::env::var(COLUMNS)
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .filter(|&columns| columns > 0)
    })
}

/// How long the chat's line editor waits after an Esc for the rest of a key's sequence, in
/// milliseconds (Pi's 10 ms, 100 ms over SSH, where the bytes of one key may arrive apart).
pub const CTXKIT_ESC_TIMEOUT: &str = "CTXKIT_ESC_TIMEOUT";

/// What the escape timeout is chosen from: [`CTXKIT_ESC_TIMEOUT`], `SSH_CONNECTION`, `SSH_TTY`.
pub fn escape_timeout_variable(name: &str) -> Option<String> {
    matches!(name, CTXKIT_ESC_TIMEOUT | "SSH_CONNECTION" | "SSH_TTY")
        .then(|| std::env::var(name).ok())
        .flatten()
}

/// Whether colours are allowed ([`NO_COLOR`] is not set); whether the output is a terminal is the
/// caller's question.
pub fn color_allowed() -> bool {
    std::env::var_os(NO_COLOR).is_none()
}

/// Whether the terminal says it takes 24-bit colour (`COLORTERM` is `truecolor` or `24bit`).
pub fn truecolor_terminal() -> bool {
    std::env::var("COLORTERM").is_ok_and(|value| {
        let value = value.to_ascii_lowercase();
        value == "truecolor" || value == "24bit"
    })
}

/// The terminal's colours as `COLORFGBG` gives them (`15;0`: foreground, background), if set.
pub fn terminal_colors() -> Option<String> {
    std::env::var("COLORFGBG").ok()
}

/// The editor `/edit` and Ctrl-G open in `ctxkit chat`, the first set of these (else `vi`).
pub const EDITOR_VARIABLES: [&str; 2] = ["VISUAL", "EDITOR"];

/// The user's editor command ([`EDITOR_VARIABLES`]), `None` when neither is set.
pub fn editor_from_environment() -> Option<String> {
    EDITOR_VARIABLES
        .into_iter()
        .filter_map(std::env::var_os)
        .find(|value| !value.is_empty())
        .and_then(|value| value.into_string().ok())
}

/// What `/copy` in `ctxkit chat` decides its route by: a desktop (`WAYLAND_DISPLAY`, `DISPLAY`,
/// `TERMUX_VERSION`), a remote login (`SSH_CONNECTION`, `SSH_CLIENT`, `MOSH_CONNECTION`), and
/// [`CLIPBOARD_OSC52`], the user's request for OSC 52 (a multiplexer attached from elsewhere).
pub const CLIPBOARD_VARIABLES: [&str; 7] = [
    "WAYLAND_DISPLAY",
    "DISPLAY",
    "TERMUX_VERSION",
    "SSH_CONNECTION",
    "SSH_CLIENT",
    "MOSH_CONNECTION",
    CLIPBOARD_OSC52,
];

/// `1`: `/copy` sends the terminal's OSC 52 sequence as over SSH (Pi's `PI_CLIPBOARD_OSC52`).
pub const CLIPBOARD_OSC52: &str = "CTXKIT_CLIPBOARD_OSC52";

/// Whether one of [`CLIPBOARD_VARIABLES`] is set and not empty (`CTXKIT_CLIPBOARD_OSC52`: is
/// `1`); false for any other name.
pub fn clipboard_variable_set(name: &str) -> bool {
    if !CLIPBOARD_VARIABLES.contains(&name) {
        return false;
    }
    match std::env::var_os(name) {
        Some(value) if name == CLIPBOARD_OSC52 => value == "1",
        Some(value) => !value.is_empty(),
        None => false,
    }
}

/// Where other agents keep their sessions when set, as the agents themselves read them
/// (`sessions --from` without `--dir`): Claude Code's, Codex's and OpenCode's (XDG) directories.
pub const AGENT_DIRECTORY_VARIABLES: [&str; 3] =
    ["CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"];

/// The value of one of [`AGENT_DIRECTORY_VARIABLES`]; `None` for any other name.
pub fn agent_directory_variable(name: &str) -> Option<std::ffi::OsString> {
    AGENT_DIRECTORY_VARIABLES
        .contains(&name)
        .then(|| std::env::var_os(name))
        .flatten()
}

pub const EXIT_CODES: &str = "Exit codes:
  0  success
  1  `ctxkit check` found problems; `ctxkit config get`: the key is not set
  2  usage error (bad arguments, or a value ctxkit cannot use: `--store`, `--listen`, `--redact`)
  3  invalid input (not a session file, unknown entry id)
  4  I/O error (no such session file or stored id, a file that cannot be written)
  5  the session (or settings file) is in use by another writer
  6  an external tool (`npm`, `git`) failed
  7  the model provider failed (the session was not changed; `chat` reading a pipe or file:
     its last request failed)";

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// ctxkit's home directory (sessions live in `<home>/sessions`).
    #[arg(long, global = true, env = "CTXKIT_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Root of the per-project session directories (default `<home>/sessions`; `~/.pi/agent/sessions`
    /// works too).
    #[arg(long, global = true, env = "CTXKIT_SESSIONS_DIR", value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
    /// Where sessions are stored: a sessions directory (the default, `<home>/sessions`), or a
    /// PostgreSQL URL `postgres://user@host/db` (`CTXKIT_STORE`; setting `store.url`: there, not
    /// here, for a URL with a password, which a command line shows to every local user).
    /// With a database, commands that take a session FILE take a session id (or its start) too.
    #[arg(long, global = true, value_name = "URL")]
    pub store: Option<String>,
    /// Offline mode: no package is fetched (`CTXKIT_OFFLINE=1`). Resolving installs nothing,
    /// `update` checks nothing, `install` refuses npm and git sources; `remove` still runs.
    #[arg(
        long,
        global = true,
        env = "CTXKIT_OFFLINE",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub offline: bool,
    /// Log what the engine and the agent loop do, at this level or with a filter such as
    /// `ctxkit_engine=debug` (`CTXKIT_LOG`); to stderr, or to `--log-file`.
    #[arg(long, global = true, env = "CTXKIT_LOG", value_name = "FILTER")]
    pub log: Option<String>,
    /// Append the log to this file instead of stderr (`CTXKIT_LOG_FILE`; use it with `chat`).
    #[arg(long, global = true, env = "CTXKIT_LOG_FILE", value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// A test hook: the wait before each prompt-cache refresh (`cacheWarming`) in milliseconds,
    /// instead of 90% of the cache's lifetime (`CTXKIT_CACHE_WARMING_DELAY_MS`).
    #[arg(
        long,
        global = true,
        hide = true,
        env = "CTXKIT_CACHE_WARMING_DELAY_MS",
        value_name = "MS"
    )]
    pub cache_warming_delay_ms: Option<u64>,
}

mod arguments;
mod auth;
mod command;

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests;

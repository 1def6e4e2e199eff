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

use clap::{Args, CommandFactory, Parser, Subcommand};

pub use arguments::{ChatArgs, CheckpointsArgs, ConfigAction, StoreAction, WebArgs};

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
    Cli::try_parse().unwrap_or_else(|error| usage_error(error, std::env::args_os()).exit())
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

/// The store URL of [`CTXKIT_STORE`].
pub fn store_from_environment() -> Option<String> {
    ctxkit_secrets::environment_variable(CTXKIT_STORE).filter(|url| !url.is_empty())
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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List sessions, newest first.
    Sessions {
        /// List the session files in this sessions folder (one project's folder under the sessions
        /// root, e.g. `~/.ctxkit/sessions/--home-me-app--`), not a project folder; default: the
        /// current project's sessions folder. With `--from`: the other agent's folder.
        #[arg(long, value_name = "SESSIONS_DIR", conflicts_with = "all")]
        dir: Option<PathBuf>,
        /// List every project's sessions.
        #[arg(long)]
        all: bool,
        /// Print the sessions as JSON records instead of text.
        #[arg(long)]
        json: bool,
        /// List another agent's sessions (`~/.claude/projects`, `~/.codex/sessions`,
        /// `~/.local/share/opencode`, or where `CLAUDE_CONFIG_DIR`, `CODEX_HOME` or
        /// `XDG_DATA_HOME` point, or `--dir`); subagents are listed under their parent.
        #[arg(long, value_name = "AGENT", value_parser = ["claude-code", "codex", "opencode"], conflicts_with = "all")]
        from: Option<String>,
        /// Only sessions whose name contains this (case-insensitive).
        #[arg(long, conflicts_with = "from")]
        name: Option<String>,
        /// Only sessions with an entry holding all these words.
        #[arg(long, value_name = "WORDS", conflicts_with = "from")]
        grep: Option<String>,
    },
    /// Move sessions into and out of the store (`--store`): JSONL files stay the interchange format.
    #[command(subcommand)]
    Store(StoreAction),
    /// Convert a Claude Code transcript, a Codex rollout or an OpenCode session into a session,
    /// with its subagents as linked sessions (the source is only read).
    Import {
        /// The transcript, rollout, OpenCode session file, or `opencode.db[#SESSION_ID]`.
        file: PathBuf,
        /// The agent that wrote FILE.
        #[arg(long, default_value = "auto", value_parser = ["auto", "claude-code", "codex", "opencode"])]
        from: String,
        /// Write here (default: the session directory of the imported session's cwd).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Show a session's metadata.
    Info {
        file: PathBuf,
        /// Print the metadata as one JSON record instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show the entry tree with roles, labels and the leaf.
    Tree {
        file: PathBuf,
        /// Print the tree as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show what the model sees at a leaf.
    Context {
        file: PathBuf,
        /// Entry to build the context at (default: the session's leaf).
        #[arg(long)]
        leaf: Option<String>,
        /// Render the stored context in the provider's message form (summaries and shell runs as
        /// user messages), without the engine's transforms (pruning, old-thinking removal, the
        /// sliding window) or the recall note it adds to summaries; `ctxkit serve`'s `view.get`
        /// returns the view a model is sent.
        #[arg(long)]
        llm: bool,
        /// Print the messages as JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the root→entry path into a new session file next to this one.
    Fork {
        file: PathBuf,
        /// Entry to fork at (default: the leaf).
        #[arg(long)]
        at: Option<String>,
    },
    /// Copy a session into another project's session directory.
    ForkFrom {
        file: PathBuf,
        /// The target project directory.
        #[arg(long)]
        cwd: PathBuf,
    },
    /// Set or clear an entry's label.
    #[command(override_usage = "ctxkit label <FILE> <ID> (<TEXT> | --clear)")]
    Label {
        file: PathBuf,
        id: String,
        /// The label text.
        #[arg(required_unless_present = "clear")]
        text: Option<String>,
        /// Remove the label.
        #[arg(long, conflicts_with = "text")]
        clear: bool,
    },
    /// Set the session's display name.
    Name { file: PathBuf, text: String },
    /// Change what later contexts show of a message on the current path (a Pi 0.87 `context_edit`;
    /// the message itself stays in the file).
    EditContext {
        file: PathBuf,
        /// A user, assistant, tool-result or extension message on the current path.
        id: String,
        /// The text to show instead.
        #[arg(long, required_unless_present = "omit")]
        replace: Option<String>,
        /// Leave the message out of later contexts.
        #[arg(long, conflicts_with = "replace")]
        omit: bool,
    },
    /// Count the tokens of the context at a leaf (the reference's estimate; provider usage when known).
    Tokens {
        file: PathBuf,
        /// Entry to count at (default: the session's leaf).
        #[arg(long)]
        leaf: Option<String>,
        /// `pi` (the reference's chars/4, default), `ctxkit` (closer to real tokenizers, CJK included),
        /// or an exact tokenizer: `cl100k`, `o200k`.
        #[arg(long, default_value = "pi", value_parser = ["pi", "ctxkit", "cl100k", "o200k"])]
        estimator: String,
        /// Print the counts as one JSON record instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Replace old history by a structured summary (offline, extractive summarizer by default).
    Compact {
        file: PathBuf,
        /// Extra instructions for the summary.
        #[arg(long)]
        focus: Option<String>,
        /// Roughly how many tokens of recent messages stay verbatim (default: the session model's
        /// `compaction.modelOverrides` entry, else setting `compaction.keepRecentTokens`: 10000
        /// under the default `contextStrategy`, 20000 under `reference`; a quarter of a small
        /// --context-window).
        #[arg(long)]
        keep_recent_tokens: Option<u64>,
        /// Tokens kept free for replies: when to compact (a model's summary gets its own output
        /// limit, as in Pi 1.6; the offline one 80% of this) (default: the session model's
        /// `compaction.modelOverrides` entry, else setting `compaction.reserveTokens`, 16384, or an
        /// eighth of a small --context-window).
        #[arg(long)]
        reserve_tokens: Option<u64>,
        /// The summarizing model, `provider/id` (default: setting `compaction.model`, else
        /// `defaultProvider`/`defaultModel`, else the offline summarizer).
        #[arg(long)]
        model: Option<String>,
        /// Include the current contents of the most important touched files in the summary request
        /// (setting `compaction.fileContext`).
        #[arg(long)]
        file_context: bool,
        /// The model's context window, for the check that compaction made enough room (0: unknown).
        #[arg(long, default_value_t = 0)]
        context_window: u64,
        /// Write the compacted session to this new file and leave FILE untouched.
        #[arg(long, value_name = "NEW_FILE", conflicts_with = "preview")]
        out: Option<PathBuf>,
        /// Compact a temporary copy and show the result; nothing is written.
        #[arg(long, conflicts_with = "dry_run")]
        preview: bool,
        /// Show the plan without summarizing or writing.
        #[arg(long)]
        dry_run: bool,
        /// Print the result (or the plan) as one JSON record instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List the file snapshots `ctxkit chat` keeps for rewinds (turn, file, size, time) and their
    /// total size; without SESSION, the current directory's most recent session.
    Checkpoints(CheckpointsArgs),
    /// List the compactions on the current path: what each covers and saved.
    Compactions {
        file: PathBuf,
        /// Print the compactions as JSON records instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Move the leaf to another entry, optionally summarizing the branch left behind. To a user
    /// message, the leaf goes before it and its text is printed to send again (as Pi's /tree).
    Branch {
        file: PathBuf,
        /// The entry to continue from.
        #[arg(long)]
        to: String,
        /// Leave a summary of the branch being left (offline summarizer).
        #[arg(long)]
        summarize: bool,
        /// Extra instructions for the summary.
        #[arg(long, requires = "summarize")]
        focus: Option<String>,
        /// The summarizing model, `provider/id` (as for `compact`).
        #[arg(long, requires = "summarize")]
        model: Option<String>,
        /// Use --focus instead of the built-in instructions.
        #[arg(long, requires = "focus")]
        replace_instructions: bool,
        /// The summarizing model's context window, bounding how much of the branch is read (0: all).
        #[arg(long, default_value_t = 0)]
        context_window: u64,
        /// Print where the leaf went as JSON: `movedTo`, `leafId`, `editorText` (the text of the
        /// user message targeted), `summaryEntryId`, `summary`, `leftBehind`.
        #[arg(long)]
        json: bool,
    },
    /// Serve the context engine to agents in any language: JSON-RPC 2.0, one message per line
    /// (see docs/protocol.md).
    #[command(group(clap::ArgGroup::new("mode").required(true).args(["stdio", "listen"])))]
    Serve {
        /// Speak the protocol on stdin/stdout.
        #[arg(long)]
        stdio: bool,
        /// Speak it over WebSocket at ws://HOST:PORT/rpc (one connection is one client), with
        /// `GET /health`; HOST is an IP address or `localhost` (127.0.0.1); any address but
        /// loopback needs a token (`CTXKIT_SERVER_TOKEN`, setting `server.token`). SIGTERM or
        /// Ctrl-C drains: requests read are answered, then it exits.
        #[arg(long, value_name = "HOST:PORT")]
        listen: Option<String>,
    },
    /// Chat with the configured model as a coding agent: tools, compaction, the session tree.
    Chat(ChatArgs),
    /// Replay sessions (or a generated one) under each context strategy, billed as the provider
    /// bills: cost, cache reads, overflows and recall beside no management and the reference's
    /// compaction, and the settings that would have cost least (docs/simulator.md).
    Simulate(crate::commands::simulate::SimulateArgs),
    /// List the known models with their context windows, output limits and prices.
    Models {
        /// Only the models whose `provider/id` holds every word (any case): `opus`, `openai gpt-5`.
        search: Vec<String>,
        /// Print the models as JSON records instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Undo the last compaction on the current path (append-only: the summary stays in the tree).
    UndoCompact { file: PathBuf },
    /// Rewrite an older (v1/v2) session file in the current format.
    Migrate { file: PathBuf },
    /// Report bad lines, orphans, cycles and dangling references; never modifies the file.
    Check {
        file: PathBuf,
        /// Print the report as one JSON record instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show or change settings (`<home>/settings.json`, `.ctxkit/settings.json`).
    #[command(subcommand)]
    Config(ConfigAction),
    /// List extensions, skills, prompt templates, themes and context files with their origin
    /// and every diagnostic. Installs nothing.
    Resources {
        /// Print the resources, hooks, ignored project settings and diagnostics as one JSON
        /// document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Trust this project's `.ctxkit/settings.json`: the settings an untrusted project may not
    /// change (hooks, `llm.baseUrl`, `chat.confirmBash`, `npmCommand`, …) apply only once trusted,
    /// and a change to them needs trusting again. Shows them first.
    Trust {
        /// Forget the trust instead.
        #[arg(long)]
        revoke: bool,
        /// Trust without asking (for scripts); on a terminal ctxkit shows the settings and asks.
        #[arg(long, conflicts_with = "revoke")]
        yes: bool,
    },
    /// Save a provider's API key in `<home>/auth.json` (Pi's file: readable by you only), used by
    /// every command in place of the provider's environment variable. Typed without echo; a
    /// script pipes it in (`printf %s "$KEY" | ctxkit login anthropic`).
    Login {
        /// The provider: `anthropic`, `openai`, `google`, `openrouter`, … (`ctxkit models` lists
        /// them).
        provider: Option<String>,
    },
    /// Remove a key `ctxkit login` saved; environment variables and `llm.apiKey` stay.
    Logout {
        /// The provider whose saved key to remove.
        provider: Option<String>,
    },
    /// Print the assembled system prompt (base, appended parts, context files, skills list).
    Prompt,
    /// Install a package (`npm:name[@version]`, a git URL or `git:host/path[@ref]`, or a local
    /// path) and add it to settings.
    Install {
        /// The package source.
        source: String,
        /// Install into the project (`.ctxkit/`) instead of the user home.
        #[arg(short = 'l', long)]
        local: bool,
    },
    /// Remove a package and its settings entry.
    #[command(visible_alias = "uninstall")]
    Remove {
        /// The package source, as installed (any spelling of the same package).
        source: String,
        /// Remove from the project settings instead of the user settings.
        #[arg(short = 'l', long)]
        local: bool,
    },
    /// Update installed packages (pinned and local ones are skipped).
    Update {
        /// Update only this configured package.
        source: Option<String>,
    },
    /// List the packages of the user and project settings.
    List {
        /// Print the packages as JSON records instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a session as one self-contained web page: the tree, what the model saw, each
    /// compaction beside what it replaced, the context size over time (no network; secrets
    /// redacted).
    #[command(mut_arg("file", |file| file.required(true).help(
        "The session: a ctxkit/Pi file, or a Claude Code, Codex or OpenCode session (imported on \
         the fly; nothing is written to the sessions folder)"
    )))]
    Export {
        #[command(flatten)]
        web: WebArgs,
        /// Write HTML (the only format, and the default: the flag may be left out).
        #[arg(long)]
        html: bool,
        /// The page to write (an earlier page is replaced; any other file is left alone).
        #[arg(short = 'o', long = "out", value_name = "PAGE")]
        out: PathBuf,
    },
    /// Serve a session's page on loopback (a printed URL with a random token), following the
    /// session as an agent appends; Ctrl-C, SIGTERM or SIGHUP stops (its private copy removed).
    View {
        #[command(flatten)]
        web: WebArgs,
        /// The port on 127.0.0.1 (default: a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
}

mod arguments;

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests;

//! The arguments of the subcommands that take a group of their own: `export`/`view` ([`WebArgs`]),
//! `checkpoints`, `chat`, `store` and `config`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// What `export --html` and `view` show.
#[derive(Debug, Args)]
pub struct WebArgs {
    /// The session: a ctxkit/Pi file, or a Claude Code, Codex or OpenCode session (imported on the
    /// fly; nothing is written to the sessions folder). Default: the current project's most
    /// recent session.
    pub file: Option<PathBuf>,
    /// The agent that wrote FILE.
    #[arg(long, default_value = "auto", value_parser = ["auto", "claude-code", "codex", "opencode"])]
    pub from: String,
    /// Leave thinking blocks out of the page.
    #[arg(long)]
    pub no_thinking: bool,
    /// Also redact text matching this regular expression (repeatable); known keys and
    /// credential-shaped tokens are always redacted.
    #[arg(long, value_name = "PATTERN")]
    pub redact: Vec<String>,
    /// The model's context window for the sliding window of the model's view (default: the
    /// session model's, when known).
    #[arg(long, value_name = "TOKENS")]
    pub context_window: Option<u64>,
}

/// `ctxkit checkpoints`.
#[derive(Debug, Args)]
pub struct CheckpointsArgs {
    /// The session file (default: the current directory's most recent session).
    pub file: Option<PathBuf>,
    /// Print the snapshots as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `ctxkit chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// Continue the most recent session of the current directory.
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["session", "no_session"])]
    pub continue_recent: bool,
    /// Pick one of the current directory's sessions to open (the list `/resume` shows).
    #[arg(short = 'r', long, conflicts_with_all = ["continue_recent", "session", "no_session"])]
    pub resume: bool,
    /// Open this session: a file, or a session id (or its start) from the sessions folder.
    #[arg(long, value_name = "FILE|ID", conflicts_with = "no_session")]
    pub session: Option<PathBuf>,
    /// Keep the conversation in memory only.
    #[arg(long)]
    pub no_session: bool,
    /// Go on in a copy of this session (Pi's `--fork`): a file, or a session id or its start from
    /// any project's sessions; the copy gets a new id (or `--session-id`'s) and this directory, and
    /// the session named stays as it was. A Claude Code transcript or Codex rollout is imported
    /// as `/import` imports it.
    #[arg(
        long,
        value_name = "FILE|ID",
        conflicts_with_all = ["session", "continue_recent", "resume", "no_session"]
    )]
    pub fork: Option<PathBuf>,
    /// The id of the session (Pi's `--session-id`): this directory's session of that id is opened,
    /// else a new one is started under it; with `--fork`, the copy's id. Letters, digits, `-`, `_`
    /// and `.`, starting and ending with a letter or digit.
    #[arg(
        long,
        value_name = "ID",
        value_parser = parse_session_id,
        conflicts_with_all = ["session", "continue_recent", "resume"]
    )]
    pub session_id: Option<String>,
    /// The folder this chat's sessions are kept in and looked up in (Pi's `--session-dir`): a new
    /// session, `--continue`, `--resume`, `--session-id` and `/resume` use it in place of this
    /// directory's folder under the sessions root; `--session ID` looks there first. The model's
    /// writes into it ask first.
    #[arg(long, value_name = "DIR", conflicts_with = "no_session")]
    pub session_dir: Option<PathBuf>,
    /// The provider whose models `--model` is looked up among (Pi's `--provider`), as if
    /// `--model` were `PROVIDER/MODEL`.
    #[arg(long, value_name = "PROVIDER", requires = "model")]
    pub provider: Option<String>,
    /// The model, as Pi's `--model`: `provider/id`, an id, or a part of one, with an optional
    /// `:<level>` suffix for the starting thinking level (`--model sonnet:high`; default:
    /// settings `defaultProvider`/`defaultModel`).
    #[arg(long, value_name = "MODEL[:LEVEL]")]
    pub model: Option<String>,
    /// The starting thinking level (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`, `max`), in
    /// place of a `--model` suffix, the session's level and `defaultThinkingLevel`.
    #[arg(long, value_name = "LEVEL", value_parser = ["off", "minimal", "low", "medium", "high", "xhigh", "max"])]
    pub thinking: Option<String>,
    /// The models Ctrl-P steps through, comma-separated patterns (`provider/id`, an id, a glob,
    /// a part of a name, each with an optional `:level`), in place of the setting `enabledModels`.
    #[arg(long, value_name = "PATTERNS", value_delimiter = ',')]
    pub models: Option<Vec<String>>,
    /// Trust this project's settings and resources for this run only (Pi's `--approve`, `-a`):
    /// what `ctxkit trust` would let apply applies now, and nothing is recorded.
    #[arg(short = 'a', long, conflicts_with = "no_approve")]
    pub approve: bool,
    /// Leave this project's settings and resources that need trust out of this run, even if it is
    /// trusted (Pi's `--no-approve`, `-na`).
    #[arg(long)]
    pub no_approve: bool,
    /// Run `bash` tool calls without asking first (setting `chat.confirmBash: false`).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// The colour theme of this chat (`dark`, `light`, a loaded theme's name, `light/dark`,
    /// `system`), in place of the setting `theme`, which stays as it is (Pi's `--use-theme`).
    #[arg(long, value_name = "NAME")]
    pub use_theme: Option<String>,
    /// Only these tools (Pi's `--tools`, `-t`): comma-separated names or `*` patterns, `recall`
    /// only when named or matched; a list of only `+name`/`-name` entries adds to or removes from
    /// the `defaultTools` selection instead. Overrides the setting `defaultTools` for this run.
    #[arg(short = 't', long, value_name = "TOOLS", value_parser = parse_tool_list)]
    pub tools: Option<ToolList>,
    /// No tools at all, `recall` included, unless `--tools` names some (Pi's `--no-tools`, `-nt`).
    #[arg(long)]
    pub no_tools: bool,
    /// None of the built-in tools unless `--tools` names some; `recall` stays (Pi's
    /// `--no-builtin-tools`, `-nbt`).
    #[arg(long)]
    pub no_builtin_tools: bool,
    /// Never these tools, `recall` included: comma-separated names or `*` patterns, applied last
    /// (Pi's `--exclude-tools`, `-xt`).
    #[arg(long, value_name = "TOOLS", value_parser = parse_tool_names)]
    pub exclude_tools: Option<ToolList>,
    /// The system prompt in place of ctxkit's and `SYSTEM.md` (Pi's `--system-prompt`): a file's
    /// text when a file of that name is there (relative to the session's folder), else the text.
    #[arg(long, value_name = "TEXT|FILE")]
    pub system_prompt: Option<String>,
    /// Text added to the system prompt in place of `APPEND_SYSTEM.md`, repeatable (Pi's
    /// `--append-system-prompt`): a file's text when a file of that name is there, else the text.
    #[arg(long, value_name = "TEXT|FILE")]
    pub append_system_prompt: Vec<String>,
    /// The session's display name, as `/name` sets it (Pi's `--name`, `-n`).
    #[arg(short = 'n', long, value_name = "NAME", value_parser = parse_session_name)]
    pub name: Option<String>,
    /// Leave out the instruction files `AGENTS.md`/`CLAUDE.md` (Pi's `--no-context-files`, `-nc`).
    #[arg(long)]
    pub no_context_files: bool,
    /// Load no configured skills (Pi's `--no-skills`, `-ns`).
    #[arg(long)]
    pub no_skills: bool,
    /// Load no configured prompt templates (Pi's `--no-prompt-templates`, `-np`).
    #[arg(long)]
    pub no_prompt_templates: bool,
    /// Load no configured extensions (Pi's `--no-extensions`, `-ne`). ctxkit runs no extension
    /// code: its extensions are only listed, and this leaves them out of the list.
    #[arg(long)]
    pub no_extensions: bool,
    /// Pi's `--no-mcp`: ctxkit connects to no MCP server, so it changes nothing; taken so a Pi
    /// user's command lines run.
    #[arg(long)]
    pub no_mcp: bool,
    /// Load no configured themes (Pi's `--no-themes`); `--theme` paths still load.
    #[arg(long)]
    pub no_themes: bool,
    /// Pi's `--api-key`: refused, and never shown or used (a command line is visible to every
    /// local user; `ctxkit login` or the provider's variable holds a key).
    #[arg(long, value_name = "KEY", hide = true, value_parser = key_argument)]
    pub api_key: Option<ctxkit_secrets::ApiKey>,
    /// Pi's `--mode text|json|rpc`: `text` is how the chat prints; `json` and `rpc` are refused
    /// with `ctxkit serve`, which speaks JSON-RPC.
    #[arg(long, value_name = "MODE", hide = true, value_parser = ["text", "json", "rpc"])]
    pub mode: Option<String>,
    /// Pi's `--extension`/`-e`: refused, as ctxkit runs no extension code.
    #[arg(short = 'e', long = "extension", value_name = "PATH", hide = true)]
    pub extension_paths: Vec<String>,
    /// Show the whole startup banner, whatever the setting `quietStartup` says (Pi's `--verbose`).
    #[arg(long)]
    pub verbose: bool,
    /// Pi's `--tui-mode regular|fullscreen`. ctxkit's chat always draws in the terminal's own
    /// scrollback, as Pi's `regular` mode does; `fullscreen` is taken and says so.
    #[arg(long, value_name = "MODE", value_parser = ["regular", "fullscreen"])]
    pub tui_mode: Option<String>,
    /// A skill file, or a folder of skills, for this run, repeatable (Pi's `--skill`): loaded
    /// after the configured ones, whose names win, and with `--no-skills` too.
    #[arg(long = "skill", value_name = "PATH")]
    pub skill_paths: Vec<String>,
    /// A prompt template file, or a folder of them, for this run, repeatable (Pi's
    /// `--prompt-template`): loaded after the configured ones, whose names win.
    #[arg(long = "prompt-template", value_name = "PATH")]
    pub prompt_template_paths: Vec<String>,
    /// A theme file, or a folder of themes, for this run, repeatable (Pi's `--theme`): its themes
    /// can be picked by name (`--use-theme`, `/settings`) after the configured ones.
    #[arg(long = "theme", value_name = "PATH")]
    pub theme_paths: Vec<String>,
    /// List the known models, or those whose `provider/id` holds every word of SEARCH, and exit
    /// (Pi's `--list-models [search]`; `ctxkit models` lists them the same way).
    #[arg(long, value_name = "SEARCH", num_args = 0..=1, default_missing_value = "")]
    pub list_models: Option<String>,
    /// Write the session FILE as a page and exit (Pi's `--export <file> [output]`): to the first
    /// MESSAGE as its path, else `ctxkit-session-<name>.html` here; `ctxkit export` does the same.
    #[arg(long, value_name = "FILE", conflicts_with = "list_models")]
    pub export: Option<PathBuf>,
    /// Print mode (Pi's `-p`): send one prompt (piped input, then the first MESSAGE), run the agent
    /// to its end, print the final answer on stdout and exit; nothing in the prompt is run as
    /// `!command` or `/command`. The default when standard input is not a terminal.
    #[arg(short = 'p', long = "print", conflicts_with_all = ["script", "resume"])]
    pub print: bool,
    /// Read standard input as lines typed at the prompt, one prompt per line, `!command` and
    /// `/command` lines run as typed (a scripted chat); without it, piped input is one prompt.
    #[arg(long, conflicts_with = "messages")]
    pub script: bool,
    /// The first prompt, as Pi's message arguments: piped input goes before the first, each
    /// further MESSAGE is sent as a prompt of its own after it (an `@file` argument attaches a file
    /// as `@path` in a prompt does).
    #[arg(value_name = "MESSAGE")]
    pub messages: Vec<String>,
    /// Set with `--store postgres://…`: the private copy `session` names, and how the screen names
    /// the session instead (its id and the store, without a password).
    #[arg(skip)]
    pub shown_as: Option<(PathBuf, String)>,
    /// Set with `--store postgres://…`: whether what the chat writes is stored, which the chat
    /// reads before each prompt.
    #[arg(skip)]
    pub store_sync: Option<crate::commands::SyncStatus>,
}

/// A `--session-id` value, checked as Pi checks it: letters, digits, `-`, `_` and `.`, starting and
/// ending with a letter or digit (it names the session's file too).
fn parse_session_id(text: &str) -> Result<String, String> {
    let plain = |character: char| character.is_ascii_alphanumeric();
    let fits = text
        .chars()
        .all(|character| plain(character) || "-_.".contains(character))
        && text.starts_with(plain)
        && text.ends_with(plain);
    if !fits {
        return Err(
            "a session id is letters, digits, `-`, `_` and `.`, starting and ending with \
                    a letter or digit"
                .to_owned(),
        );
    }
    Ok(text.to_owned())
}

/// A `--name` value, trimmed; a blank one is refused, as Pi refuses it.
fn parse_session_name(text: &str) -> Result<String, String> {
    let name = text.trim();
    if name.is_empty() {
        return Err("the session name is blank".to_owned());
    }
    Ok(name.to_owned())
}

/// A comma-separated list of tool names, patterns or `+name`/`-name` entries, each trimmed,
/// blank ones left out (as Pi splits it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolList(pub Vec<String>);

fn parse_tool_names(text: &str) -> Result<ToolList, String> {
    Ok(ToolList(
        text.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(str::to_owned)
            .collect(),
    ))
}

/// `--api-key`'s value, held as a key from the start so nothing prints it.
fn key_argument(text: &str) -> Result<ctxkit_secrets::ApiKey, std::convert::Infallible> {
    Ok(ctxkit_secrets::ApiKey::new(text.to_owned()))
}

/// A `--tools` list, refused as Pi refuses it: names mixed with `+name`/`-name` entries, or a
/// pattern in one of those.
fn parse_tool_list(text: &str) -> Result<ToolList, String> {
    let list = parse_tool_names(text)?;
    match ctxkit_agent::tool_list_problem(&list.0) {
        Some(problem) => Err(problem.to_string()),
        None => Ok(list),
    }
}

#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Copy session files into the store, byte for byte (each keeps its id).
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Write a stored session to a new JSONL file, byte for byte as stored.
    Export {
        /// The session id, or its start (one session's only).
        id: String,
        /// The file to write (never overwritten).
        #[arg(short = 'o', long = "out", value_name = "FILE")]
        out: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print a setting's value: a string as it is (as JSON when it would read as another value,
    /// `"true"`, or as nothing), anything else as JSON; `--json` adds where it comes from.
    Get {
        /// Dotted key, e.g. `compaction.reserveTokens`, `llm.headers.X-Team` or
        /// `compaction.modelOverrides["openai/gpt-4.1"].reserveTokens` (the form `config list`
        /// prints).
        key: String,
        /// Read the project settings file only.
        #[arg(long)]
        project: bool,
        /// Print `{key, value, origin, known, actedOn}` as JSON (the value masked as in the text).
        #[arg(long)]
        json: bool,
    },
    /// Change a setting (strings as typed, other values as JSON).
    Set {
        /// Dotted key, e.g. `compaction.reserveTokens`, `llm.headers.X-Team` or
        /// `compaction.modelOverrides["openai/gpt-4.1"].reserveTokens` (the form `config list`
        /// prints).
        key: String,
        /// The value, e.g. `8192`, `dark`, `["npm"]` (a negative number is a value too, and the
        /// setting's check says whether it is allowed).
        #[arg(allow_negative_numbers = true)]
        value: String,
        /// Write the project settings file instead of the user one.
        #[arg(long)]
        project: bool,
        /// Write a key ctxkit does not know (another tool's setting); without it an unknown key is
        /// refused, naming the known key it most likely meant.
        #[arg(long)]
        force: bool,
    },
    /// Remove a setting from a settings file.
    Unset {
        /// Dotted key, as `config get` takes it.
        key: String,
        /// Edit the project settings file instead of the user one.
        #[arg(long)]
        project: bool,
    },
    /// List every setting with its effective value and origin.
    List {
        /// Only what the project settings file sets.
        #[arg(long)]
        project: bool,
        /// Print every setting as a JSON record `{key, value, origin, known, actedOn}` instead of
        /// text.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON schema of the settings files (draft 2020-12), derived from the settings tree.
    Schema,
    /// Carry a Pi `models.json` into the user's settings: each provider routed to a host of its
    /// own becomes an `llm.providers` entry, each model it declares an `llm.models` entry; what
    /// the settings already hold is kept, and what they cannot hold is listed with why.
    ImportPi {
        /// The Pi `models.json` to read (default: ctxkit's home's, else `~/.pi/agent/models.json`).
        #[arg(long, value_name = "FILE")]
        from: Option<PathBuf>,
        /// Print what would be written, and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

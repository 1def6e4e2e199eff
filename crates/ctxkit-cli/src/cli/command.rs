//! The subcommands (`ctxkit COMMAND`), their arguments and help.

use std::path::PathBuf;

use clap::Subcommand;

use super::arguments::{ChatArgs, CheckpointsArgs, ConfigAction, StoreAction, WebArgs};

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
    /// Set or clear the session's display name.
    #[command(override_usage = "ctxkit name <FILE> (<TEXT> | --clear)")]
    Name {
        file: PathBuf,
        /// The name (one line, not empty).
        #[arg(required_unless_present = "clear")]
        text: Option<String>,
        /// Remove the name.
        #[arg(long, conflicts_with = "text")]
        clear: bool,
    },
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
        /// `defaultProvider`/`defaultModel`, else the offline summarizer); `offline`: the offline
        /// summarizer whatever is configured, nothing sent.
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
        /// Leave a summary of the branch being left, written by the summarizing model as for
        /// `compact` (`--model`, else setting `compaction.model`, else
        /// `defaultProvider`/`defaultModel`, else the offline summarizer).
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
    Chat(Box<ChatArgs>),
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
    /// Pi's `auth` commands: `login`, `logout`, `check` (is a provider ready?) and
    /// `print-api-key` (its key, for another program).
    Auth {
        #[command(subcommand)]
        command: super::auth::AuthCommand,
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
        /// The page to write (a page ctxkit wrote earlier is replaced; any other file, another HTML
        /// page included, is left alone).
        #[arg(short = 'o', long = "out", value_name = "PAGE")]
        out: PathBuf,
    },
    /// Pi 1.6.0's `pi mcp …`: ctxkit connects to no MCP server, and says so (hidden).
    #[command(hide = true, disable_help_flag = true)]
    Mcp {
        /// Whatever followed `mcp`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
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

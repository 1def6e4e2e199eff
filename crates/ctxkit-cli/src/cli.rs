//! Command-line arguments (clap). Every environment variable ctxkit reads is declared here.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// ctxkit — context engine for LLM coding agents: inspect, branch and repair Pi-compatible sessions.
#[derive(Debug, Parser)]
#[command(name = "ctxkit", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

pub const EXIT_CODES: &str = "Exit codes:
  0  success
  1  `ctxkit check` found problems
  2  usage error (bad arguments)
  3  invalid input (not a session file, unknown entry id)
  4  I/O error
  5  the session is in use by another writer";

#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// ctxkit's home directory (sessions live in `<home>/sessions`).
    #[arg(long, global = true, env = "CTXKIT_HOME", value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Root of the per-project session directories (default `<home>/sessions`; `~/.pi/agent/sessions`
    /// works too).
    #[arg(long, global = true, env = "CTXKIT_SESSIONS_DIR", value_name = "DIR")]
    pub sessions_dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List sessions, newest first.
    Sessions {
        /// List this directory instead of the current project's.
        #[arg(long, conflicts_with = "all")]
        dir: Option<PathBuf>,
        /// List every project's sessions.
        #[arg(long)]
        all: bool,
        #[arg(long)]
        json: bool,
    },
    /// Show a session's metadata.
    Info {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Show the entry tree with roles, labels and the leaf.
    Tree {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Show what the model sees at a leaf.
    Context {
        file: PathBuf,
        /// Entry to build the context at (default: the session's leaf).
        #[arg(long)]
        leaf: Option<String>,
        /// Render as sent to a provider (summaries and shell runs as user messages).
        #[arg(long)]
        llm: bool,
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
    /// Rewrite an older (v1/v2) session file in the current format.
    Migrate { file: PathBuf },
    /// Report bad lines, orphans, cycles and dangling references; never modifies the file.
    Check {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

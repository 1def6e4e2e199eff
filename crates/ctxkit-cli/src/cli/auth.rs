//! `ctxkit auth …`: Pi 1.6.0's `pi auth` commands, so a Pi user's scripts run unchanged.

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Save a provider's API key, as `ctxkit login` does (Pi's `auth login`).
    Login {
        /// The provider: `anthropic`, `openai`, `google`, `openrouter`, …
        provider: Option<String>,
        /// Save an API key (Pi's flag; ctxkit saves API keys only, so it changes nothing).
        #[arg(long)]
        api_key: bool,
    },
    /// Remove a saved key, as `ctxkit logout` does (Pi's `auth logout`).
    Logout {
        /// The provider whose saved key to remove.
        provider: Option<String>,
    },
    /// Say whether a provider (or a model's provider) can be asked now: prints `ready`,
    /// `not_ready` or `invalid` and exits 0, 1 or 2 (Pi's `auth check`). Only the settings, the
    /// keys `ctxkit login` saved and the environment are read; nothing is sent.
    Check {
        #[command(flatten)]
        target: AuthTarget,
        /// Print the result as JSON: `status`, `provider`, and `reason` or `authType`.
        #[arg(long)]
        json: bool,
        /// When ready, print the key instead of `ready` (with `--json`, as `credentials`).
        #[arg(long)]
        credentials: bool,
        /// Pi's flag for account logins, which ctxkit has none of: changes nothing.
        #[arg(long)]
        no_refresh: bool,
    },
    /// Print the provider's API key as ctxkit would send it (a saved key, else the provider's
    /// variable, else `llm.apiKey`), for another program (Pi's `auth print-api-key`).
    PrintApiKey {
        #[command(flatten)]
        target: AuthTarget,
    },
    /// Pi's `auth print-bearer-token` prints an account login's token; ctxkit has no account
    /// logins, so it is refused with what to use instead.
    PrintBearerToken {
        #[command(flatten)]
        target: AuthTarget,
        /// The least time the token must still be valid (Pi's flag).
        #[arg(long, value_name = "DURATION")]
        min_expiry: Option<String>,
    },
}

/// Which provider: named, or the provider of a model (`provider/id`, or an id of `--provider`).
#[derive(Debug, Clone, Args)]
#[group(required = true, multiple = true)]
pub struct AuthTarget {
    /// The provider.
    #[arg(long)]
    pub provider: Option<String>,
    /// A model: `provider/id`, or an id of `--provider` (or of `defaultProvider`).
    #[arg(long)]
    pub model: Option<String>,
}

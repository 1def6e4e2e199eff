//! The smaller sections: branch summaries, pins, retries, the terminal, images, thinking budgets,
//! markdown, warnings, `chat`, `server`, `store`, and a `packages` entry.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `branchSummary.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct BranchSummaryConfig {
    /// The summary's input budget is the window minus this (when this is as large as the window,
    /// the reserve compaction would take for that window: an eighth of it, at least 512).
    pub reserve_tokens: u64,
    /// Move in the chat's `/tree` without asking whether to summarize the branch left behind,
    /// and without a summary (Pi's meaning; `/tree <id> --summarize` still summarizes).
    pub skip_prompt: bool,
}

impl Default for BranchSummaryConfig {
    fn default() -> Self {
        Self {
            reserve_tokens: 16_384,
            skip_prompt: false,
        }
    }
}

/// `pinned.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct PinnedConfig {
    /// The most tokens pinned context may take; pins beyond it are refused.
    pub max_tokens: u64,
}

impl Default for PinnedConfig {
    fn default() -> Self {
        Self { max_tokens: 4_000 }
    }
}

/// `retry.*`: the agent's retries of failed model requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct RetryConfig {
    /// Retry failed requests.
    pub enabled: bool,
    /// Attempts after the first.
    pub max_retries: u64,
    /// The delay before attempt n is this × 2^(n−1), in milliseconds.
    pub base_delay_ms: u64,
    /// The longest of those delays, in milliseconds (Pi 1.6's cap on its own backoff; a delay the
    /// server asks for is capped by `provider.maxRetryDelayMs` instead).
    pub max_agent_delay_ms: u64,
    /// The provider client's own retries and limits.
    pub provider: ProviderRetryConfig,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2_000,
            max_agent_delay_ms: 60_000,
            provider: ProviderRetryConfig::default(),
        }
    }
}

/// `retry.provider.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ProviderRetryConfig {
    /// The time limit, in milliseconds, of a request whose answer is not streamed (a summary from
    /// a server that answers whole); streamed replies are bounded by `llm.timeouts`. Unset leaves
    /// the provider client's.
    pub timeout_ms: Option<u64>,
    /// The provider client's retries. ctxkit has one retry loop: these are added to
    /// `retry.maxRetries`'s (and kept when `retry.enabled` is false, as Pi's SDK retries are);
    /// unset adds none.
    pub max_retries: Option<u64>,
    /// The longest server-requested retry delay honoured, in milliseconds (0: no cap).
    pub max_retry_delay_ms: u64,
}

impl Default for ProviderRetryConfig {
    fn default() -> Self {
        Self {
            timeout_ms: None,
            max_retries: None,
            max_retry_delay_ms: 60_000,
        }
    }
}

/// `terminal.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct TerminalConfig {
    /// Show images inline.
    pub show_images: bool,
    /// The width of an inline image, in cells.
    #[schemars(range(min = 1))]
    pub image_width_cells: u64,
    /// Clear the screen when the content shrinks.
    pub clear_on_shrink: bool,
    /// Tell the terminal while the chat's agent works (a run, a compaction, a branch summary) with
    /// OSC 9;4, a progress state terminals show on the tab.
    pub show_terminal_progress: bool,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        Self {
            show_images: true,
            image_width_cells: 60,
            clear_on_shrink: false,
            show_terminal_progress: false,
        }
    }
}

/// `images.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ImagesConfig {
    /// Fit the images `read` returns and `@path` attaches to 2000 × 2000 pixels and 4.5 MB
    /// (base64) before they are sent: the smaller of PNG and JPEG, then lower JPEG qualities, then
    /// smaller sizes; the model is told the original size. Off: sent as they are.
    pub auto_resize: bool,
    /// Never send images to a model: each image of a prompt or a tool result is sent as the
    /// line `Image reading is disabled.` (once for several in a row), as Pi sends it; the
    /// session keeps the image.
    pub block_images: bool,
}

impl Default for ImagesConfig {
    fn default() -> Self {
        Self {
            auto_resize: true,
            block_images: false,
        }
    }
}

/// `thinkingBudgets.*`: tokens per thinking level; unset leaves the provider's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ThinkingBudgets {
    /// The reasoning tokens asked at `minimal` of Anthropic (`budget_tokens`) and Gemini
    /// (`thinkingBudget`) models, in place of the default (1,024 on Anthropic, 128 on Gemini).
    pub minimal: Option<u64>,
    /// The reasoning tokens asked at `low` of Anthropic (`budget_tokens`) and Gemini
    /// (`thinkingBudget`) models, in place of the default (2,048).
    pub low: Option<u64>,
    /// The reasoning tokens asked at `medium` of Anthropic (`budget_tokens`) and Gemini
    /// (`thinkingBudget`) models, in place of the default (8,192).
    pub medium: Option<u64>,
    /// The reasoning tokens asked at `high` of Anthropic (`budget_tokens`) and Gemini
    /// (`thinkingBudget`) models, in place of the default (16,384 on Anthropic, 24,576 on Gemini; `xhigh` takes it too).
    pub high: Option<u64>,
}

/// `markdown.*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct MarkdownConfig {
    /// The indentation of code blocks in the chat's replies (its width: a tab counts four
    /// columns).
    pub code_block_indent: String,
}

impl Default for MarkdownConfig {
    fn default() -> Self {
        Self {
            code_block_indent: "  ".to_owned(),
        }
    }
}

/// `warnings.*`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct WarningsConfig {
    /// Warn when Anthropic bills usage beyond the plan.
    pub anthropic_extra_usage: Option<bool>,
}

/// `chat.*`: `ctxkit chat` and the agent's tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ChatConfig {
    /// Ask before each `bash` command.
    pub confirm_bash: bool,
    /// The `bash` tool's default time limit, in seconds (at least 1: 0 killed every command as it
    /// started, and Pi refuses a time limit of 0 too).
    #[schemars(range(min = 1))]
    pub bash_timeout_seconds: u64,
    /// Secret environment variables `bash` commands may see (read from the user's settings only).
    #[schemars(extend("x-user-only" = true))]
    pub pass_env: Option<Vec<String>>,
    /// Paths outside the project the agent's tools may read without asking (read from the user's
    /// settings only).
    #[schemars(extend("x-user-only" = true))]
    pub readable_paths: Option<Vec<String>>,
    /// The most bytes of file snapshots kept beside one session for rewinds (64 MiB).
    pub checkpoint_max_bytes: u64,
}

impl Default for ChatConfig {
    fn default() -> Self {
        Self {
            confirm_bash: true,
            bash_timeout_seconds: 120,
            pass_env: None,
            readable_paths: None,
            checkpoint_max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// `server.*`: `ctxkit serve --stdio` and `--listen`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ServerConfig {
    /// The bearer token `serve --listen` requires (`CTXKIT_SERVER_TOKEN` wins); without one it
    /// listens on loopback only.
    #[schemars(extend("x-secret" = true))]
    pub token: Option<String>,
    /// The longest request line accepted (64 MiB); a longer one is discarded and answered with an
    /// error.
    #[schemars(range(min = 1024))]
    pub max_request_bytes: u64,
    /// The bytes of request lines waiting behind the running request (256 MiB); past it the server
    /// stops reading its input until the queue drains.
    #[schemars(range(min = 1024))]
    pub max_queued_bytes: u64,
    /// The connections `serve --listen` keeps open at once (256), WebSocket clients and requests
    /// still sending their headers alike; one more is answered 503 and closed.
    #[schemars(range(min = 1))]
    pub max_connections: u64,
    /// The bytes all `serve --listen` clients together may hold in messages being received, and
    /// again in requests waiting to run (1 GiB each; never less than one message at its limit);
    /// past it a message waits its turn before it is read, and a queued request before it is
    /// queued.
    #[schemars(range(min = 1024))]
    pub max_buffered_bytes: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            token: None,
            max_request_bytes: 64 * 1024 * 1024,
            max_queued_bytes: 256 * 1024 * 1024,
            max_connections: 256,
            max_buffered_bytes: 1 << 30,
        }
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ServerConfig")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_queued_bytes", &self.max_queued_bytes)
            .field("max_connections", &self.max_connections)
            .field("max_buffered_bytes", &self.max_buffered_bytes)
            .finish()
    }
}

/// `store.*`: where sessions are stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct StoreConfig {
    /// A sessions directory or a `postgres://` URL (its credentials are never printed;
    /// `?sslmode=require` for TLS, verified: docs/deployment.md).
    #[schemars(extend("x-secret" = true))]
    pub url: Option<String>,
    /// How long a database session's writer holds it without renewing, in seconds: how long a
    /// session of a `serve` or a `ctxkit chat` that died waits before another writer may take it
    /// over.
    #[schemars(range(min = 1, max = 3600))]
    pub lease_seconds: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            url: None,
            lease_seconds: 30,
        }
    }
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("StoreConfig")
            .field("url", &self.url.as_ref().map(|_| "<redacted>"))
            .field("lease_seconds", &self.lease_seconds)
            .finish()
    }
}

/// One `packages` entry: a source (`npm:…`, `git:…`, a path), or a source with the resources to
/// take from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PackageSetting {
    /// Everything the package offers.
    Source(String),
    /// Only the resources the patterns select.
    Filtered {
        /// The package source.
        source: String,
        /// Extension patterns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extensions: Option<Vec<String>>,
        /// Skill patterns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skills: Option<Vec<String>>,
        /// Prompt template patterns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompts: Option<Vec<String>>,
        /// Theme patterns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        themes: Option<Vec<String>>,
        /// `false`: start empty and take only what the patterns name (Pi 1.6's `autoload`); a
        /// project's such entry filters the user's entry of the same package.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        autoload: Option<bool>,
    },
}

impl PackageSetting {
    /// The package source.
    pub fn source(&self) -> &str {
        match self {
            Self::Source(source) | Self::Filtered { source, .. } => source,
        }
    }

    /// Whether the entry is the object form: a source with the resources it picks.
    pub fn is_filtered(&self) -> bool {
        matches!(self, Self::Filtered { .. })
    }

    /// Whether the entry says `autoload: false`: only the resources its patterns name load, and
    /// a kind without patterns loads nothing.
    pub fn autoload_disabled(&self) -> bool {
        matches!(
            self,
            Self::Filtered {
                autoload: Some(false),
                ..
            }
        )
    }

    /// The patterns of one kind: `None` takes every resource of that kind.
    pub fn patterns(&self, kind: crate::kind::ResourceKind) -> Option<&[String]> {
        use crate::kind::ResourceKind;
        let Self::Filtered {
            extensions,
            skills,
            prompts,
            themes,
            ..
        } = self
        else {
            return None;
        };
        match kind {
            ResourceKind::Extensions => extensions.as_deref(),
            ResourceKind::Skills => skills.as_deref(),
            ResourceKind::Prompts => prompts.as_deref(),
            ResourceKind::Themes => themes.as_deref(),
        }
    }
}

/// `quietStartup`, as Pi 1.6 takes it: `false`, `true` (no banner at all) or `"header"` (the
/// banner's header stays: the model, the session and the key hints; the list of loaded
/// instruction files goes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QuietStartup {
    /// The whole banner.
    #[default]
    Off,
    /// No banner.
    All,
    /// The banner without the loaded resources.
    Header,
}

impl QuietStartup {
    /// The word `quietStartup` takes for [`QuietStartup::Header`].
    const HEADER: &'static str = "header";
}

impl Serialize for QuietStartup {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Off => serializer.serialize_bool(false),
            Self::All => serializer.serialize_bool(true),
            Self::Header => serializer.serialize_str(Self::HEADER),
        }
    }
}

impl<'de> Deserialize<'de> for QuietStartup {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Flag(bool),
            Word(String),
        }
        match Either::deserialize(deserializer)? {
            Either::Flag(false) => Ok(Self::Off),
            Either::Flag(true) => Ok(Self::All),
            Either::Word(word) if word == Self::HEADER => Ok(Self::Header),
            Either::Word(word) => Err(serde::de::Error::custom(format!(
                "expected `true`, `false` or \"header\", found {word:?}"
            ))),
        }
    }
}

impl JsonSchema for QuietStartup {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QuietStartup".into()
    }

    fn json_schema(_generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [{"type": "boolean"}, {"const": Self::HEADER}],
            "default": false,
            "x-check": "boolOr",
            "x-words": [Self::HEADER],
        })
    }
}

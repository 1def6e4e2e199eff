//! The table of known settings: their types, defaults and validation. Unknown keys are not an
//! error (other tools and newer versions write them); they are kept and reported as warnings.

use serde_json::Value;

/// The type a setting accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `true` / `false`.
    Bool,
    /// A whole number within `min..=max`.
    Integer {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// Any string.
    String,
    /// One of a fixed list of strings.
    Enum(&'static [&'static str]),
    /// An array of strings.
    StringList,
    /// The `packages` array: strings or `{source, extensions?, skills?, prompts?, themes?}`.
    PackageList,
    /// An object whose values are all strings (`llm.headers`).
    StringMap,
    /// An array of `{provider, id, contextWindow, maxOutput?, reasoning?}` (`llm.models`).
    ModelList,
    /// An array of `{command: [program, args…], events?: [names], timeoutMs?}` (`hooks`).
    HookList,
    /// An object of `{reserveTokens?, keepRecentTokens?}` keyed `provider/modelId`
    /// (`compaction.modelOverrides`, Pi 1.6).
    ModelBudgets,
    /// An object with known fields.
    Object(&'static [Field]),
}

/// A default value of the schema table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// No default: the getter reports "unset".
    Unset,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Integer(i64),
    /// A string.
    Str(&'static str),
    /// `[]`.
    EmptyList,
}

impl DefaultValue {
    /// As JSON, `None` for [`DefaultValue::Unset`].
    pub fn to_json(self) -> Option<Value> {
        match self {
            Self::Unset => None,
            Self::Bool(value) => Some(Value::Bool(value)),
            Self::Integer(value) => Some(Value::from(value)),
            Self::Str(value) => Some(Value::from(value)),
            Self::EmptyList => Some(Value::Array(Vec::new())),
        }
    }
}

/// One known setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The key within its parent object.
    pub key: &'static str,
    /// What it accepts.
    pub kind: ValueKind,
    /// Its default.
    pub default: DefaultValue,
}

const fn field(key: &'static str, kind: ValueKind, default: DefaultValue) -> Field {
    Field { key, kind, default }
}

const NON_NEGATIVE: ValueKind = ValueKind::Integer {
    min: 0,
    max: i64::MAX,
};
/// Compaction budgets: Pi 1.6's `nonNegativeSafeInteger` (at most `Number.MAX_SAFE_INTEGER`).
const TOKEN_BUDGET: ValueKind = ValueKind::Integer {
    min: 0,
    max: 9_007_199_254_740_991,
};
const MODES: &[&str] = &["all", "one-at-a-time"];

const COMPACTION: &[Field] = &[
    field("enabled", ValueKind::Bool, DefaultValue::Bool(true)),
    field("reserveTokens", TOKEN_BUDGET, DefaultValue::Integer(16384)),
    field(
        "keepRecentTokens",
        TOKEN_BUDGET,
        DefaultValue::Integer(20000),
    ),
    // Pi 1.6: budgets per model, keyed `provider/modelId` exactly; they win over the two above.
    field(
        "modelOverrides",
        ValueKind::ModelBudgets,
        DefaultValue::Unset,
    ),
    // ctxkit: include the current contents of the most important touched files in summary requests.
    field("fileContext", ValueKind::Bool, DefaultValue::Bool(false)),
    // ctxkit: write the summary in the background from `backgroundPercent` of the window on.
    field("background", ValueKind::Bool, DefaultValue::Bool(false)),
    field(
        "backgroundPercent",
        ValueKind::Integer { min: 1, max: 100 },
        DefaultValue::Integer(75),
    ),
    // ctxkit: compact once the context passes this many tokens, whatever the window (0: off).
    field("thresholdTokens", NON_NEGATIVE, DefaultValue::Integer(0)),
    // ctxkit: send summary requests as a continuation of the last model request (prompt cache).
    field("cachePrefix", ValueKind::Bool, DefaultValue::Bool(false)),
    // ctxkit: who writes summaries: the summarizer, or the conversation's Anthropic model on demand.
    field(
        "provider",
        ValueKind::Enum(&["summarizer", "on-demand"]),
        DefaultValue::Str("summarizer"),
    ),
    // ctxkit: a separate (usually cheaper) model for summaries, `provider/id`.
    field("model", ValueKind::String, DefaultValue::Unset),
    // ctxkit: what to do when summarization fails (threshold and manual compaction).
    field("fallback", FALLBACK, DefaultValue::Str("error")),
    // ctxkit: the same for overflow recovery.
    field("overflowFallback", FALLBACK, DefaultValue::Str("truncate")),
    // ctxkit: the share of the context the `truncate` fallback keeps.
    field(
        "truncateKeepPercent",
        ValueKind::Integer { min: 1, max: 100 },
        DefaultValue::Integer(30),
    ),
    // ctxkit: the offline summary's size, a share of the span's tokens within two bounds.
    field(
        "offlineSummaryPercent",
        ValueKind::Integer { min: 1, max: 100 },
        DefaultValue::Integer(8),
    ),
    field(
        "offlineSummaryMinTokens",
        NON_NEGATIVE,
        DefaultValue::Integer(2000),
    ),
    field(
        "offlineSummaryMaxTokens",
        ValueKind::Integer {
            min: 1,
            max: i64::MAX,
        },
        DefaultValue::Integer(6000),
    ),
];
const FALLBACK: ValueKind = ValueKind::Enum(&["error", "truncate"]);
/// ctxkit: context transforms applied to the model's view before each call.
const TRANSFORMS: &[Field] = &[
    field("pruneEnabled", ValueKind::Bool, DefaultValue::Bool(true)),
    field(
        "keepRecentToolResults",
        NON_NEGATIVE,
        DefaultValue::Integer(6),
    ),
    field("pruneMinChars", NON_NEGATIVE, DefaultValue::Integer(500)),
    field("headLines", NON_NEGATIVE, DefaultValue::Integer(3)),
    field("tailLines", NON_NEGATIVE, DefaultValue::Integer(2)),
    field("headChars", NON_NEGATIVE, DefaultValue::Integer(200)),
    field("tailChars", NON_NEGATIVE, DefaultValue::Integer(100)),
    // ctxkit: names of the omitted text listed in a cut result's marker (0: none).
    field("pruneDigestNames", NON_NEGATIVE, DefaultValue::Integer(0)),
    field("pruneDigestChars", NON_NEGATIVE, DefaultValue::Integer(160)),
    field("dropOldThinking", ValueKind::Bool, DefaultValue::Bool(true)),
    field("windowEnabled", ValueKind::Bool, DefaultValue::Bool(true)),
    field(
        "windowThresholdPercent",
        ValueKind::Integer { min: 1, max: 100 },
        DefaultValue::Integer(75),
    ),
    field("keepLastMessages", NON_NEGATIVE, DefaultValue::Integer(20)),
    field("cacheAware", ValueKind::Bool, DefaultValue::Bool(false)),
    field(
        "cacheBlockSize",
        ValueKind::Integer {
            min: 1,
            max: i64::MAX,
        },
        DefaultValue::Integer(8),
    ),
    // ctxkit: move the prune boundary only when it pays under the prompt cache's prices.
    field("pruneWhenItPays", ValueKind::Bool, DefaultValue::Bool(true)),
    field("cacheReadPercent", NON_NEGATIVE, DefaultValue::Integer(10)),
    field(
        "cacheWritePercent",
        NON_NEGATIVE,
        DefaultValue::Integer(125),
    ),
    // ctxkit: tell the model how full its context is, from a share of the window on.
    field("budgetNote", ValueKind::Bool, DefaultValue::Bool(false)),
    field(
        "budgetNotePercent",
        ValueKind::Integer { min: 1, max: 100 },
        DefaultValue::Integer(50),
    ),
];
/// ctxkit: pinned context.
/// ctxkit: how session files are written.
const SESSION: &[Field] = &[
    field(
        "durability",
        ValueKind::Enum(&["flush", "sync", "batch"]),
        DefaultValue::Str("flush"),
    ),
    field(
        "syncEvery",
        ValueKind::Integer {
            min: 1,
            max: 1_000_000,
        },
        DefaultValue::Integer(100),
    ),
];
const PINNED: &[Field] = &[field(
    "maxTokens",
    NON_NEGATIVE,
    DefaultValue::Integer(4000),
)];
const BRANCH_SUMMARY: &[Field] = &[
    field("reserveTokens", NON_NEGATIVE, DefaultValue::Integer(16384)),
    field("skipPrompt", ValueKind::Bool, DefaultValue::Bool(false)),
];
const PROVIDER_RETRY: &[Field] = &[
    field("timeoutMs", NON_NEGATIVE, DefaultValue::Unset),
    field("maxRetries", NON_NEGATIVE, DefaultValue::Unset),
    field(
        "maxRetryDelayMs",
        NON_NEGATIVE,
        DefaultValue::Integer(60000),
    ),
];
const RETRY: &[Field] = &[
    field("enabled", ValueKind::Bool, DefaultValue::Bool(true)),
    field("maxRetries", NON_NEGATIVE, DefaultValue::Integer(3)),
    field("baseDelayMs", NON_NEGATIVE, DefaultValue::Integer(2000)),
    field(
        "provider",
        ValueKind::Object(PROVIDER_RETRY),
        DefaultValue::Unset,
    ),
];
const TERMINAL: &[Field] = &[
    field("showImages", ValueKind::Bool, DefaultValue::Bool(true)),
    field(
        "imageWidthCells",
        ValueKind::Integer {
            min: 1,
            max: i64::MAX,
        },
        DefaultValue::Integer(60),
    ),
    field("clearOnShrink", ValueKind::Bool, DefaultValue::Bool(false)),
    field(
        "showTerminalProgress",
        ValueKind::Bool,
        DefaultValue::Bool(false),
    ),
];
const IMAGES: &[Field] = &[
    field("autoResize", ValueKind::Bool, DefaultValue::Bool(true)),
    field("blockImages", ValueKind::Bool, DefaultValue::Bool(false)),
];
const THINKING_BUDGETS: &[Field] = &[
    field("minimal", NON_NEGATIVE, DefaultValue::Unset),
    field("low", NON_NEGATIVE, DefaultValue::Unset),
    field("medium", NON_NEGATIVE, DefaultValue::Unset),
    field("high", NON_NEGATIVE, DefaultValue::Unset),
];
const MARKDOWN: &[Field] = &[field(
    "codeBlockIndent",
    ValueKind::String,
    DefaultValue::Str("  "),
)];
/// ctxkit: the model provider used for summaries.
const LLM: &[Field] = &[
    field("baseUrl", ValueKind::String, DefaultValue::Unset),
    field("apiKey", ValueKind::String, DefaultValue::Unset),
    field("api", ValueKind::String, DefaultValue::Unset),
    field("headers", ValueKind::StringMap, DefaultValue::Unset),
    field("models", ValueKind::ModelList, DefaultValue::Unset),
    field(
        "anthropic",
        ValueKind::Object(LLM_ANTHROPIC),
        DefaultValue::Unset,
    ),
    field(
        "openaiResponses",
        ValueKind::Object(LLM_OPENAI_RESPONSES),
        DefaultValue::Unset,
    ),
    field(
        "timeouts",
        ValueKind::Object(LLM_TIMEOUTS),
        DefaultValue::Unset,
    ),
    // ctxkit: the bytes one model answer may take as it arrives (64 MiB); a longer one is cut.
    field(
        "maxReplyBytes",
        ValueKind::Integer {
            min: 1024,
            max: i64::MAX,
        },
        DefaultValue::Integer(64 * 1024 * 1024),
    ),
];
/// ctxkit: time limits of model requests, in seconds: opening a connection, waiting for the
/// response headers, silence between two pieces of a streamed answer.
const LLM_TIMEOUTS: &[Field] = &[
    field("connectSeconds", TIMEOUT_SECONDS, DefaultValue::Integer(10)),
    field(
        "firstByteSeconds",
        TIMEOUT_SECONDS,
        DefaultValue::Integer(300),
    ),
    field("idleSeconds", TIMEOUT_SECONDS, DefaultValue::Integer(300)),
];
/// A time limit in seconds: at least one, at most a day.
const TIMEOUT_SECONDS: ValueKind = ValueKind::Integer {
    min: 1,
    max: 86_400,
};
/// ctxkit: provider-side options of Anthropic Messages requests.
const LLM_ANTHROPIC: &[Field] = &[
    field(
        "cacheRetention",
        ValueKind::Enum(&["none", "short", "long"]),
        DefaultValue::Str("short"),
    ),
    // Pi's `compat.supportsMessageThreads`: unset is on for `api.anthropic.com` only.
    field(
        "supportsMessageThreads",
        ValueKind::Bool,
        DefaultValue::Unset,
    ),
    field(
        "contextManagement",
        ValueKind::Object(ANTHROPIC_CONTEXT_MANAGEMENT),
        DefaultValue::Unset,
    ),
    field(
        "compaction",
        ValueKind::Object(ANTHROPIC_COMPACTION),
        DefaultValue::Unset,
    ),
];
/// ctxkit: Anthropic's server-side compaction (`compact_20260112`) of the agent's requests (off by
/// default); unset values leave the API's defaults.
const ANTHROPIC_COMPACTION: &[Field] = &[
    field("enabled", ValueKind::Bool, DefaultValue::Bool(false)),
    field("triggerInputTokens", NON_NEGATIVE, DefaultValue::Unset),
    field(
        "pauseAfterCompaction",
        ValueKind::Bool,
        DefaultValue::Bool(false),
    ),
    field("instructions", ValueKind::String, DefaultValue::Unset),
];
/// ctxkit: provider-side options of OpenAI Responses requests.
const LLM_OPENAI_RESPONSES: &[Field] = &[field(
    "compaction",
    ValueKind::Object(OPENAI_RESPONSES_COMPACTION),
    DefaultValue::Unset,
)];
/// ctxkit: OpenAI Responses' server-side compaction of the agent's requests (off by default).
const OPENAI_RESPONSES_COMPACTION: &[Field] = &[
    field("enabled", ValueKind::Bool, DefaultValue::Bool(false)),
    field("compactThreshold", NON_NEGATIVE, DefaultValue::Unset),
];
/// ctxkit: Anthropic's context editing of the agent's requests (off by default); unset numbers
/// leave the API's defaults.
const ANTHROPIC_CONTEXT_MANAGEMENT: &[Field] = &[
    field("enabled", ValueKind::Bool, DefaultValue::Bool(false)),
    field("triggerInputTokens", NON_NEGATIVE, DefaultValue::Unset),
    field("keepToolUses", NON_NEGATIVE, DefaultValue::Unset),
    field("clearAtLeastInputTokens", NON_NEGATIVE, DefaultValue::Unset),
    field("excludeTools", ValueKind::StringList, DefaultValue::Unset),
    field(
        "clearToolInputs",
        ValueKind::Bool,
        DefaultValue::Bool(false),
    ),
    field("clearThinking", ValueKind::Bool, DefaultValue::Bool(false)),
    field("keepThinkingTurns", NON_NEGATIVE, DefaultValue::Unset),
];
/// ctxkit: `ctxkit chat`.
const CHAT: &[Field] = &[
    field("confirmBash", ValueKind::Bool, DefaultValue::Bool(true)),
    field(
        "bashTimeoutSeconds",
        NON_NEGATIVE,
        DefaultValue::Integer(120),
    ),
    // Secret environment variables `bash` commands may see (read from the user's settings only).
    field("passEnv", ValueKind::StringList, DefaultValue::Unset),
    // Paths outside the project the agent's tools may read without asking (user's settings only).
    field("readablePaths", ValueKind::StringList, DefaultValue::Unset),
    // The most bytes of file snapshots kept beside one session for rewinds (64 MiB).
    field(
        "checkpointMaxBytes",
        NON_NEGATIVE,
        DefaultValue::Integer(64 * 1024 * 1024),
    ),
];
const WARNINGS: &[Field] = &[field(
    "anthropicExtraUsage",
    ValueKind::Bool,
    DefaultValue::Unset,
)];

/// Every top-level setting Pi 0.73.1 knows, in its documentation order, with the keys of later
/// versions ctxkit reads (such as 1.6.0's `compaction.modelOverrides`) and ctxkit's own.
pub const TOP_LEVEL: &[Field] = &[
    field(
        "lastChangelogVersion",
        ValueKind::String,
        DefaultValue::Unset,
    ),
    field("defaultProvider", ValueKind::String, DefaultValue::Unset),
    field("defaultModel", ValueKind::String, DefaultValue::Unset),
    field(
        "defaultThinkingLevel",
        ValueKind::Enum(&["off", "minimal", "low", "medium", "high", "xhigh"]),
        DefaultValue::Unset,
    ),
    field(
        "transport",
        ValueKind::Enum(&["sse", "websocket", "websocket-cached", "auto"]),
        DefaultValue::Str("auto"),
    ),
    // Pi 1.5.1: keeps a prompt cache warm between runs when a refresh pays; global only.
    field(
        "cacheWarming",
        ValueKind::Enum(&["off", "streaming", "idle"]),
        DefaultValue::Str("idle"),
    ),
    field(
        "steeringMode",
        ValueKind::Enum(MODES),
        DefaultValue::Str("one-at-a-time"),
    ),
    field(
        "followUpMode",
        ValueKind::Enum(MODES),
        DefaultValue::Str("one-at-a-time"),
    ),
    field("theme", ValueKind::String, DefaultValue::Unset),
    field(
        "compaction",
        ValueKind::Object(COMPACTION),
        DefaultValue::Unset,
    ),
    field(
        "branchSummary",
        ValueKind::Object(BRANCH_SUMMARY),
        DefaultValue::Unset,
    ),
    field("retry", ValueKind::Object(RETRY), DefaultValue::Unset),
    field(
        "hideThinkingBlock",
        ValueKind::Bool,
        DefaultValue::Bool(false),
    ),
    field("shellPath", ValueKind::String, DefaultValue::Unset),
    field("quietStartup", ValueKind::Bool, DefaultValue::Bool(false)),
    field("shellCommandPrefix", ValueKind::String, DefaultValue::Unset),
    field("npmCommand", ValueKind::StringList, DefaultValue::Unset),
    field(
        "collapseChangelog",
        ValueKind::Bool,
        DefaultValue::Bool(false),
    ),
    field(
        "enableInstallTelemetry",
        ValueKind::Bool,
        DefaultValue::Bool(true),
    ),
    field("packages", ValueKind::PackageList, DefaultValue::EmptyList),
    field("extensions", ValueKind::StringList, DefaultValue::EmptyList),
    field("skills", ValueKind::StringList, DefaultValue::EmptyList),
    field("prompts", ValueKind::StringList, DefaultValue::EmptyList),
    field("themes", ValueKind::StringList, DefaultValue::EmptyList),
    field(
        "enableSkillCommands",
        ValueKind::Bool,
        DefaultValue::Bool(true),
    ),
    field("terminal", ValueKind::Object(TERMINAL), DefaultValue::Unset),
    field("images", ValueKind::Object(IMAGES), DefaultValue::Unset),
    field("enabledModels", ValueKind::StringList, DefaultValue::Unset),
    field(
        "doubleEscapeAction",
        ValueKind::Enum(&["fork", "tree", "none"]),
        DefaultValue::Str("tree"),
    ),
    field(
        "treeFilterMode",
        ValueKind::Enum(&["default", "no-tools", "user-only", "labeled-only", "all"]),
        DefaultValue::Str("default"),
    ),
    field(
        "thinkingBudgets",
        ValueKind::Object(THINKING_BUDGETS),
        DefaultValue::Unset,
    ),
    field(
        "editorPaddingX",
        ValueKind::Integer { min: 0, max: 3 },
        DefaultValue::Integer(0),
    ),
    field(
        "autocompleteMaxVisible",
        ValueKind::Integer { min: 3, max: 20 },
        DefaultValue::Integer(5),
    ),
    field(
        "showHardwareCursor",
        ValueKind::Bool,
        DefaultValue::Bool(false),
    ),
    field("markdown", ValueKind::Object(MARKDOWN), DefaultValue::Unset),
    field("warnings", ValueKind::Object(WARNINGS), DefaultValue::Unset),
    field("sessionDir", ValueKind::String, DefaultValue::Unset),
    field("llm", ValueKind::Object(LLM), DefaultValue::Unset),
    field("chat", ValueKind::Object(CHAT), DefaultValue::Unset),
    // ctxkit: a named set of context settings the engine starts from (`recommended`: see
    // docs/simulator.md); keys set explicitly still win.
    field(
        "contextStrategy",
        ValueKind::Enum(&["default", "recommended"]),
        DefaultValue::Str("default"),
    ),
    field(
        "transforms",
        ValueKind::Object(TRANSFORMS),
        DefaultValue::Unset,
    ),
    field("pinned", ValueKind::Object(PINNED), DefaultValue::Unset),
    field("session", ValueKind::Object(SESSION), DefaultValue::Unset),
    field(
        "summaryRole",
        ValueKind::Enum(&["user", "system"]),
        DefaultValue::Str("user"),
    ),
    field("hooks", ValueKind::HookList, DefaultValue::EmptyList),
    field("server", ValueKind::Object(SERVER), DefaultValue::Unset),
    field("store", ValueKind::Object(STORE), DefaultValue::Unset),
];

/// ctxkit: where sessions are stored (`--store`, `CTXKIT_STORE`): a sessions directory or a
/// `postgres://` URL. Not in `PROJECT_SAFE_KEYS`: an untrusted project cannot choose it.
const STORE: &[Field] = &[
    field("url", ValueKind::String, DefaultValue::Unset),
    // How long a database session's writer holds it without renewing (30 s): how long a session
    // of a `serve` that died waits before another instance may take it over.
    field(
        "leaseSeconds",
        ValueKind::Integer { min: 1, max: 3600 },
        DefaultValue::Integer(30),
    ),
];

/// ctxkit: `ctxkit serve --stdio` and `--listen`.
const SERVER: &[Field] = &[
    // The bearer token `serve --listen` requires (`CTXKIT_SERVER_TOKEN` wins); without one it
    // listens on loopback only.
    field("token", ValueKind::String, DefaultValue::Unset),
    // The longest request line accepted (64 MiB); a longer one is discarded and answered with an error.
    field(
        "maxRequestBytes",
        ValueKind::Integer {
            min: 1024,
            max: i64::MAX,
        },
        DefaultValue::Integer(64 * 1024 * 1024),
    ),
    // The bytes of request lines waiting behind the running request (256 MiB); past it the server
    // stops reading its input until the queue drains (backpressure).
    field(
        "maxQueuedBytes",
        ValueKind::Integer {
            min: 1024,
            max: i64::MAX,
        },
        DefaultValue::Integer(256 * 1024 * 1024),
    ),
];

/// What a project's `.ctxkit/settings.json` may change before the user trusts the project
/// (`ctxkit trust`): settings that can neither run code nor send a key or the conversation
/// somewhere the user did not choose. An entry covers its key and every key below it. This is an
/// allowlist: a key not listed here is held back until the project is trusted, whether the schema
/// knows it or not (`defaultProvider`, `defaultModel`, `enabledModels`, `compaction.model`,
/// `compaction.fileContext`, `llm.baseUrl`, `llm.apiKey`, `llm.api`, `llm.headers`, `chat.confirmBash`,
/// `chat.passEnv`, `npmCommand`, `hooks`, `shellPath`, `shellCommandPrefix`, `sessionDir`,
/// `enableInstallTelemetry`, a setting added later, a misspelt one). `docs/security.md` has the
/// reasons.
pub const PROJECT_SAFE_KEYS: &[&str] = &[
    // How the user's own model thinks, and what the user's own provider settings say about it.
    // Which provider and model answer (`defaultProvider`, `defaultModel`, `enabledModels`) and
    // which one writes summaries (`compaction.model`) are held back: `ollama/…` sends the whole
    // conversation to a port any local user can listen on. So is `compaction.fileContext` (it
    // sends file contents to the summary model).
    "defaultThinkingLevel",
    "thinkingBudgets",
    "compaction.enabled",
    "compaction.reserveTokens",
    "compaction.keepRecentTokens",
    "compaction.modelOverrides",
    "compaction.background",
    "compaction.backgroundPercent",
    "compaction.thresholdTokens",
    "compaction.cachePrefix",
    "compaction.provider",
    "compaction.fallback",
    "compaction.overflowFallback",
    "compaction.truncateKeepPercent",
    "compaction.offlineSummaryPercent",
    "compaction.offlineSummaryMinTokens",
    "compaction.offlineSummaryMaxTokens",
    "llm.models",
    "llm.anthropic",
    "llm.openaiResponses",
    // The context: budgets, transforms, pins, how summaries are placed.
    "branchSummary",
    "contextStrategy",
    "transforms",
    "pinned",
    "summaryRole",
    "session",
    "retry",
    "transport",
    "chat.bashTimeoutSeconds",
    // The project's own resources (read, never run) and how things look.
    "packages",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "enableSkillCommands",
    "theme",
    "terminal",
    "images",
    "markdown",
    "warnings",
    "hideThinkingBlock",
    "quietStartup",
    "collapseChangelog",
    "lastChangelogVersion",
    "steeringMode",
    "followUpMode",
    "doubleEscapeAction",
    "treeFilterMode",
    "editorPaddingX",
    "autocompleteMaxVisible",
    "showHardwareCursor",
];

/// Whether an untrusted project may set the key at `segments` ([`PROJECT_SAFE_KEYS`]).
pub fn project_may_set(segments: &[&str]) -> bool {
    PROJECT_SAFE_KEYS.iter().any(|entry| {
        let mut parts = entry.split('.');
        segments.len() >= entry.split('.').count()
            && segments.iter().all(|segment| match parts.next() {
                Some(part) => part == *segment,
                None => true,
            })
    })
}

/// Whether some key below `segments` is on [`PROJECT_SAFE_KEYS`] (an object to look into).
pub fn project_may_set_below(segments: &[&str]) -> bool {
    let prefix = segments.join(".") + ".";
    PROJECT_SAFE_KEYS
        .iter()
        .any(|entry| entry.starts_with(&prefix))
}

/// Looks a dotted key up in the schema; `None` when any segment is unknown.
pub fn lookup(segments: &[String]) -> Option<&'static Field> {
    let mut fields = TOP_LEVEL;
    let mut found = None;
    for segment in segments {
        if found.is_some_and(|field: &Field| !matches!(field.kind, ValueKind::Object(_))) {
            return None;
        }
        let field = fields.iter().find(|field| field.key == segment)?;
        if let ValueKind::Object(children) = field.kind {
            fields = children;
        }
        found = Some(field);
    }
    found
}

/// Every leaf key of the schema (dotted) with its field, depth first in table order.
pub fn leaves() -> Vec<(String, &'static Field)> {
    fn walk(prefix: &str, fields: &'static [Field], out: &mut Vec<(String, &'static Field)>) {
        for field in fields {
            let key = if prefix.is_empty() {
                field.key.to_owned()
            } else {
                format!("{prefix}.{}", field.key)
            };
            match field.kind {
                ValueKind::Object(children) => walk(&key, children, out),
                ValueKind::Bool
                | ValueKind::Integer { .. }
                | ValueKind::String
                | ValueKind::Enum(_)
                | ValueKind::StringList
                | ValueKind::PackageList
                | ValueKind::StringMap
                | ValueKind::ModelList
                | ValueKind::HookList
                | ValueKind::ModelBudgets => out.push((key, field)),
            }
        }
    }
    let mut out = Vec::new();
    walk("", TOP_LEVEL, &mut out);
    out
}

/// A problem found by [`check_value`]: the dotted key and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Dotted key (array elements as `key[i]`).
    pub key: String,
    /// Human description of the accepted values.
    pub expected: String,
    /// The offending value as JSON.
    pub found: String,
}

/// Result of walking a document against the schema.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// Keys the schema does not know (dotted).
    pub unknown_keys: Vec<String>,
    /// Values of the wrong type or range.
    pub violations: Vec<Violation>,
}

/// Checks `value` against `kind`; nested unknown keys and violations go into `report`.
pub fn check_value(key: &str, kind: ValueKind, value: &Value, report: &mut CheckReport) {
    let mut violation = |expected: String| {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected,
            found: value.to_string(),
        });
    };
    match kind {
        ValueKind::Bool => {
            if !value.is_boolean() {
                violation("a boolean (`true` or `false`)".to_owned());
            }
        }
        ValueKind::Integer { min, max } => {
            let in_range = value
                .as_i64()
                .is_some_and(|number| number >= min && number <= max);
            if !in_range {
                if max == i64::MAX {
                    violation(format!("an integer ≥ {min}"));
                } else {
                    violation(format!("an integer from {min} to {max}"));
                }
            }
        }
        ValueKind::String => {
            if !value.is_string() {
                violation("a string".to_owned());
            }
        }
        ValueKind::Enum(allowed) => {
            if !value.as_str().is_some_and(|text| allowed.contains(&text)) {
                violation(format!("one of {}", allowed.join(", ")));
            }
        }
        ValueKind::StringList => {
            let valid = value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string));
            if !valid {
                violation("an array of strings".to_owned());
            }
        }
        ValueKind::PackageList => check_packages(key, value, report),
        ValueKind::StringMap => {
            let valid = value
                .as_object()
                .is_some_and(|object| object.values().all(Value::is_string));
            if !valid {
                violation("an object of strings".to_owned());
            }
        }
        ValueKind::ModelList => super::model_list::check_models(key, value, report),
        ValueKind::HookList => {
            let hook_valid = |hook: &Value| {
                hook.get("command")
                    .and_then(Value::as_array)
                    .is_some_and(|command| {
                        !command.is_empty() && command.iter().all(Value::is_string)
                    })
                    && hook.get("events").is_none_or(|events| {
                        events
                            .as_array()
                            .is_some_and(|events| events.iter().all(Value::is_string))
                    })
                    && hook
                        .get("timeoutMs")
                        .is_none_or(|timeout| timeout.as_u64().is_some())
            };
            if !value
                .as_array()
                .is_some_and(|hooks| hooks.iter().all(hook_valid))
            {
                violation(
                    "an array of {command: [program, args…], events?, timeoutMs?}".to_owned(),
                );
            }
        }
        ValueKind::ModelBudgets => check_model_budgets(key, value, report),
        ValueKind::Object(fields) => check_object(key, fields, value, report),
    }
}

/// `compaction.modelOverrides`: each entry an object whose known budgets are safe integers ≥ 0 (as
/// Pi 1.6 requires); other keys inside an entry are reported as unknown.
fn check_model_budgets(key: &str, value: &Value, report: &mut CheckReport) {
    const BUDGETS: &[Field] = &[
        field("reserveTokens", TOKEN_BUDGET, DefaultValue::Unset),
        field("keepRecentTokens", TOKEN_BUDGET, DefaultValue::Unset),
    ];
    let Some(entries) = value.as_object() else {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected: "an object keyed `provider/modelId`".to_owned(),
            found: value.to_string(),
        });
        return;
    };
    for (model, entry) in entries {
        check_object(&format!("{key}[{model:?}]"), BUDGETS, entry, report);
    }
}

fn check_object(key: &str, fields: &'static [Field], value: &Value, report: &mut CheckReport) {
    let Some(object) = value.as_object() else {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected: "an object".to_owned(),
            found: value.to_string(),
        });
        return;
    };
    for (name, nested) in object {
        let nested_key = format!("{key}.{name}");
        match fields.iter().find(|field| field.key == name) {
            Some(_) if nested.is_null() => {}
            Some(field) => check_value(&nested_key, field.kind, nested, report),
            None => report.unknown_keys.push(nested_key),
        }
    }
}

fn check_packages(key: &str, value: &Value, report: &mut CheckReport) {
    let Some(items) = value.as_array() else {
        report.violations.push(Violation {
            key: key.to_owned(),
            expected: "an array of package sources".to_owned(),
            found: value.to_string(),
        });
        return;
    };
    for (index, item) in items.iter().enumerate() {
        let item_key = format!("{key}[{index}]");
        let valid = match item {
            Value::String(_) => true,
            Value::Object(object) => {
                object.get("source").is_some_and(Value::is_string)
                    && ["extensions", "skills", "prompts", "themes"]
                        .iter()
                        .all(|kind| {
                            object.get(*kind).is_none_or(|filter| {
                                filter
                                    .as_array()
                                    .is_some_and(|patterns| patterns.iter().all(Value::is_string))
                            })
                        })
            }
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => false,
        };
        if !valid {
            report.violations.push(Violation {
                key: item_key,
                expected: "a source string or {\"source\": …, \"extensions\"?: [..], \"skills\"?: [..], \"prompts\"?: [..], \"themes\"?: [..]}".to_owned(),
                found: item.to_string(),
            });
        }
    }
}

/// Checks a whole document: unknown keys and violations, in document order. `null` values are
/// treated as unset (the reference's getters do the same).
pub fn check_document(document: &serde_json::Map<String, Value>) -> CheckReport {
    let mut report = CheckReport::default();
    for (key, value) in document {
        match TOP_LEVEL.iter().find(|field| field.key == key) {
            Some(_) if value.is_null() => {}
            Some(field) => check_value(key, field.kind, value, &mut report),
            None => report.unknown_keys.push(key.clone()),
        }
    }
    report
}

/// Interprets the text of `ctxkit config set KEY VALUE` for `kind`: strings and enums are taken
/// verbatim, everything else (and unknown keys) is parsed as JSON, unknown keys falling back to
/// a plain string when the text is not JSON.
pub fn parse_raw_value(kind: Option<ValueKind>, raw: &str) -> Value {
    match kind {
        Some(ValueKind::String | ValueKind::Enum(_)) => Value::from(raw),
        Some(
            ValueKind::Bool
            | ValueKind::Integer { .. }
            | ValueKind::StringList
            | ValueKind::PackageList
            | ValueKind::StringMap
            | ValueKind::ModelList
            | ValueKind::HookList
            | ValueKind::ModelBudgets
            | ValueKind::Object(_),
        )
        | None => serde_json::from_str(raw).unwrap_or_else(|_| Value::from(raw)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lookup_nested() {
        let key = [
            "retry".to_owned(),
            "provider".to_owned(),
            "maxRetryDelayMs".to_owned(),
        ];
        assert_eq!(
            lookup(&key).map(|field| field.default),
            Some(DefaultValue::Integer(60000))
        );
        assert!(lookup(&["theme".to_owned(), "x".to_owned()]).is_none());
        assert!(lookup(&["nope".to_owned()]).is_none());
    }

    #[test]
    fn check_reports_unknown_and_invalid() {
        let document = json!({"theme": 3, "compaction": {"enabled": "yes", "extra": 1}, "mine": true, "packages": ["npm:x", {"source": "y", "skills": ["a"]}, 4]});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(report.unknown_keys, vec!["compaction.extra", "mine"]);
        let keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        assert_eq!(keys, vec!["theme", "compaction.enabled", "packages[2]"]);
    }

    #[test]
    fn compaction_model_overrides_are_known_and_checked() {
        let document = json!({"compaction": {"modelOverrides": {
            "anthropic/claude-sonnet-4-5": {"reserveTokens": 1000, "keepRecentTokens": 0},
            "openai/gpt-4.1": {"reserveTokens": -1, "other": 1},
            "x/y": 5,
        }}});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(
            report.unknown_keys,
            [r#"compaction.modelOverrides["openai/gpt-4.1"].other"#]
        );
        let keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                r#"compaction.modelOverrides["openai/gpt-4.1"].reserveTokens"#,
                r#"compaction.modelOverrides["x/y"]"#,
            ]
        );
        let report = check_document(
            json!({"compaction": {"modelOverrides": []}})
                .as_object()
                .unwrap(),
        );
        assert_eq!(report.violations.len(), 1);
        assert!(project_may_set(&["compaction", "modelOverrides"]));
    }

    #[test]
    fn anthropic_context_management_is_known_and_checked() {
        let key = |dotted: &str| dotted.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            lookup(&key("llm.anthropic.contextManagement.enabled")).map(|field| field.default),
            Some(DefaultValue::Bool(false))
        );
        assert!(lookup(&key("llm.anthropic.contextManagement.keepToolUses")).is_some());
        assert_eq!(
            lookup(&key("llm.anthropic.cacheRetention")).map(|field| field.default),
            Some(DefaultValue::Str("short"))
        );
        assert!(lookup(&key("llm.anthropic.contextManagement.keep")).is_none());
        assert_eq!(
            lookup(&key("llm.anthropic.compaction.enabled")).map(|field| field.default),
            Some(DefaultValue::Bool(false))
        );
        assert!(lookup(&key("llm.anthropic.compaction.pauseAfterCompaction")).is_some());
        assert_eq!(
            lookup(&key("llm.openaiResponses.compaction.enabled")).map(|field| field.default),
            Some(DefaultValue::Bool(false))
        );
        assert!(lookup(&key("llm.openaiResponses.compaction.compactThreshold")).is_some());
        let document = json!({"llm": {"anthropic": {"contextManagement": {
            "enabled": true, "triggerInputTokens": -1, "excludeTools": ["memory", 3],
            "clearThinking": true, "keepThinkingTurns": 2, "trigger": 5},
            "cacheRetention": "1h"}}});
        let report = check_document(document.as_object().unwrap());
        assert_eq!(
            report.unknown_keys,
            vec!["llm.anthropic.contextManagement.trigger"]
        );
        let keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        assert_eq!(
            keys,
            vec![
                "llm.anthropic.contextManagement.triggerInputTokens",
                "llm.anthropic.contextManagement.excludeTools",
                "llm.anthropic.cacheRetention"
            ]
        );
    }

    #[test]
    fn context_strategy_and_its_keys_are_known_and_checked() {
        let key = |dotted: &str| dotted.split('.').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            lookup(&key("contextStrategy")).map(|field| field.default),
            Some(DefaultValue::Str("default"))
        );
        assert_eq!(
            lookup(&key("compaction.thresholdTokens")).map(|field| field.default),
            Some(DefaultValue::Integer(0))
        );
        assert_eq!(
            lookup(&key("transforms.pruneDigestNames")).map(|field| field.default),
            Some(DefaultValue::Integer(0))
        );
        let good = json!({"contextStrategy": "recommended",
            "compaction": {"thresholdTokens": 40000},
            "transforms": {"pruneDigestNames": 8, "pruneDigestChars": 160}});
        let report = check_document(good.as_object().unwrap());
        assert!(report.violations.is_empty() && report.unknown_keys.is_empty());
        let bad = json!({"contextStrategy": "cheapest",
            "compaction": {"thresholdTokens": -1},
            "transforms": {"pruneDigestNames": "many"}});
        let report = check_document(bad.as_object().unwrap());
        let mut keys: Vec<&str> = report
            .violations
            .iter()
            .map(|violation| violation.key.as_str())
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            vec![
                "compaction.thresholdTokens",
                "contextStrategy",
                "transforms.pruneDigestNames"
            ]
        );
    }

    #[test]
    fn cache_prefix_is_a_known_boolean_off_by_default() {
        let key = ["compaction".to_owned(), "cachePrefix".to_owned()];
        assert_eq!(
            lookup(&key).map(|field| (field.kind, field.default)),
            Some((ValueKind::Bool, DefaultValue::Bool(false)))
        );
        let document = json!({"compaction": {"cachePrefix": "yes"}});
        let report = check_document(document.as_object().unwrap());
        assert!(report.unknown_keys.is_empty());
        assert_eq!(report.violations.len(), 1);
        assert_eq!(report.violations[0].key, "compaction.cachePrefix");
    }

    #[test]
    fn raw_values() {
        assert_eq!(
            parse_raw_value(Some(ValueKind::String), "123"),
            json!("123")
        );
        assert_eq!(
            parse_raw_value(Some(ValueKind::Bool), "false"),
            json!(false)
        );
        assert_eq!(parse_raw_value(None, "hello"), json!("hello"));
        assert_eq!(parse_raw_value(None, "[1]"), json!([1]));
    }
}

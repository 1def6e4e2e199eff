//! The typed settings tree: every key ctxkit reads, one field each, with its doc comment, its
//! default and, by `x-project`, whether an untrusted project may set it. The schema table, the
//! defaults, `ctxkit config list`, validation, the trust gate, the docs table and
//! `ctxkit config schema` are all derived from these types (`crate::settings::schema`).
//!
//! Markers (schemars `extend`): `x-project` — an untrusted project's settings may set this key and
//! everything below it (it neither runs code, nor sends data elsewhere, nor shapes a model
//! request: what a request carries, how big it is, how often it is sent or retried all wait for
//! trust); `x-check` — a value checked by its own rule (`packages`, `models`, `hooks`,
//! `modelBudgets`, `stringMap`); `x-secret` — masked by `config list` and refused in project
//! settings; `x-after-trust` — a project's entries are kept
//! untrusted, but the resources they name load only once the project is trusted
//! (`crate::protected`).

mod compaction;
mod llm;
mod sections;
mod transforms;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use compaction::{
    AdaptiveBudgets, CommandHookConfig, CompactionConfig, CompactionModelOverride, ContextStrategy,
    DurabilityMode, FallbackPolicy, MAX_TOKEN_BUDGET, PinnedScript, SessionConfig, SummaryProvider,
    SummaryRole, model_override_key,
};
pub(crate) use llm::THINKING_FORMATS;
pub use llm::{
    AnthropicCompactionConfig, AnthropicConfig, AnthropicContextManagementConfig, LlmConfig,
    LlmTimeouts, ModelCompat, ModelPrices, OpenAiResponsesCompactionConfig, OpenAiResponsesConfig,
    PriceTier, ProviderEndpoint, UserModel,
};
pub use sections::{
    BranchSummaryConfig, ChatConfig, ImagesConfig, MarkdownConfig, PackageSetting, PinnedConfig,
    ProviderRetryConfig, QuietStartup, RetryConfig, ServerConfig, StoreConfig, TerminalConfig,
    ThinkingBudgets, WarningsConfig,
};
pub use transforms::TransformSettings;

/// Every setting of `~/.ctxkit/settings.json` and `.ctxkit/settings.json`: Pi 0.73.1's keys in its
/// documentation order, the keys of later versions ctxkit reads, then ctxkit's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
#[schemars(title = "ctxkit settings")]
pub struct Settings {
    /// The last version whose changelog was shown.
    #[schemars(extend("x-project" = true))]
    pub last_changelog_version: Option<String>,
    /// The agent's provider (`anthropic`, `openai`, …).
    pub default_provider: Option<String>,
    /// The agent's model id (or `provider/id`).
    pub default_model: Option<String>,
    /// The reasoning level for models that reason; also the level summaries are asked at. Unset,
    /// no thinking is asked for (`off`; Pi 1.6.0's default is `medium`).
    #[schemars(extend("enum" = ["off", "minimal", "low", "medium", "high", "xhigh", "max"]))]
    pub default_thinking_level: Option<String>,
    /// The thinking level a new session starts at on a model, per `provider/id` (Pi 1.6.0's), in
    /// place of `defaultThinkingLevel`; `--thinking`, a `--model` suffix and a continued
    /// session's recorded level come first. A value that names no level is passed over.
    #[schemars(extend("x-check" = "stringMap"))]
    pub model_thinking_levels: Option<std::collections::BTreeMap<String, String>>,
    /// How streamed answers arrive.
    #[schemars(extend("enum" = ["sse", "websocket", "websocket-cached", "auto"]))]
    pub transport: String,
    /// Keep a prompt cache warm between runs when a refresh pays (Pi 1.5.1). Read from the global
    /// settings only: each refresh spends the user's money.
    #[schemars(extend("x-user-only" = true, "enum" = ["off", "streaming", "idle"]))]
    pub cache_warming: String,
    /// How lines typed with Enter while the chat's agent works (and `serve`'s `agent.steer`
    /// messages) reach the model: with the run's next request, after a tool batch or as one more
    /// turn after the last reply, the first one (`one-at-a-time`) or every one (`all`), each as a
    /// user message, as Pi's steering.
    #[schemars(extend("x-project" = true, "enum" = ["all", "one-at-a-time"]))]
    pub steering_mode: String,
    /// How `serve`'s `agent.follow_up` messages reach the model once it stops with no steering
    /// left: the first one (`one-at-a-time`) or every one (`all`), each as a user message, as Pi's
    /// follow-ups (the chat has no follow-up queue: Alt-Enter is a newline there).
    #[schemars(extend("x-project" = true, "enum" = ["all", "one-at-a-time"]))]
    pub follow_up_mode: String,
    /// The chat's colour theme: `system` (the terminal's own colours, as without the setting),
    /// `dark`, `light`, a theme the resource loader found (`ctxkit resources` lists them), or
    /// `light/dark`, a pair chosen by the terminal's background (`COLORFGBG`). Not from an
    /// untrusted project: its colours could hide the chat's warnings and questions.
    pub theme: Option<String>,
    /// When and how the conversation is compacted.
    pub compaction: CompactionConfig,
    /// Summaries of a branch left by `tree` navigation.
    pub branch_summary: BranchSummaryConfig,
    /// Retries of failed model requests.
    pub retry: RetryConfig,
    /// Show each reasoning block of a reply in the chat as one line, `Thinking...`, instead of in
    /// full; the chat's Ctrl-T toggles it and saves the choice in the user's settings, as Pi's.
    #[schemars(extend("x-project" = true))]
    pub hide_thinking_block: bool,
    /// The shell the `bash` tool and the chat's `!cmd` run commands in (with `-c`), instead of the
    /// default: `/bin/bash`, else `bash` on `PATH`, else `sh`, as Pi finds it. A leading `~` is the
    /// user's home. A path that does not exist fails each command with one line saying so.
    pub shell_path: Option<String>,
    /// Start the chat without its banner (`true`: model, session, instruction files, help line)
    /// or, with `"header"`, without only the line naming the instruction files (Pi 1.6 keeps its
    /// header and hides the loaded resources).
    #[schemars(extend("x-project" = true))]
    pub quiet_startup: QuietStartup,
    /// A line run before every command of the `bash` tool and `!cmd` (`shopt -s
    /// expand_aliases`, `source ~/.bash_aliases`), as Pi runs it.
    pub shell_command_prefix: Option<String>,
    /// The program and arguments run instead of `npm`.
    pub npm_command: Option<Vec<String>>,
    /// Show the changelog collapsed.
    #[schemars(extend("x-project" = true))]
    pub collapse_changelog: bool,
    /// Report installs (Pi's telemetry; ctxkit sends nothing).
    pub enable_install_telemetry: bool,
    /// Packages of skills, prompts, themes and extensions: a source string or
    /// `{source, extensions?, skills?, prompts?, themes?, autoload?}`; with `autoload: false` only
    /// what the patterns name loads, and a project's such entry filters the user's entry of the
    /// same package (Pi 1.6).
    #[schemars(extend("x-project" = true, "x-after-trust" = true, "x-check" = "packages"))]
    pub packages: Vec<PackageSetting>,
    /// Extension paths.
    #[schemars(extend("x-project" = true, "x-after-trust" = true))]
    pub extensions: Vec<String>,
    /// Skill paths.
    #[schemars(extend("x-project" = true, "x-after-trust" = true))]
    pub skills: Vec<String>,
    /// Prompt template paths.
    #[schemars(extend("x-project" = true, "x-after-trust" = true))]
    pub prompts: Vec<String>,
    /// Theme paths.
    #[schemars(extend("x-project" = true, "x-after-trust" = true))]
    pub themes: Vec<String>,
    /// Offer each skill as a `/skill:name` command in the chat's Tab completion (it runs either way).
    #[schemars(extend("x-project" = true))]
    pub enable_skill_commands: bool,
    /// The terminal's display.
    #[schemars(extend("x-project" = true))]
    pub terminal: TerminalConfig,
    /// Images sent to the model.
    pub images: ImagesConfig,
    /// The models the chat's Ctrl-P steps through, in order: `provider/id`, a bare id, a glob
    /// (`anthropic/*sonnet*`) or a part of a name, each with an optional `:level`
    /// (`openai/gpt-5:high`) set on the switch. Only models that can be asked now (a key set, or
    /// declared in `llm.models`) are stepped to; a pattern naming none is said when Ctrl-P is
    /// pressed. Unset, Ctrl-P steps through every model `/model` offers.
    pub enabled_models: Option<Vec<String>>,
    /// The tools the model is offered (Pi 1.6): plain names replace the default selection (every
    /// tool: `read`, `write`, `edit`, `bash`, `ls`, `grep`, `find`), then `+name` adds a tool and
    /// `-name` removes one, in list order; a project's list of only `+name`/`-name` entries changes
    /// the user's selection. `recall` is offered unless `-recall` removes it. A name ctxkit has no
    /// tool for is warned about when the chat or server starts, and skipped. Read at startup.
    pub default_tools: Option<Vec<String>>,
    /// The command Ctrl-G and `/edit` open the prompt in, as Pi 1.6's: run through `sh -c` with
    /// the prompt's temporary file as its argument (`code --wait` takes its own). Unset: `$VISUAL`,
    /// then `$EDITOR`, then `vi`. It runs a command, so an untrusted project's does not apply.
    pub external_editor: Option<String>,
    /// What Esc twice at the chat's empty input line does: `tree` rewinds to an earlier prompt
    /// of the branch (the files the agent changed too), `fork` opens `/fork`'s list, `none` nothing.
    #[schemars(extend("x-project" = true, "enum" = ["fork", "tree", "none"]))]
    pub double_escape_action: String,
    /// Which entries the chat's `/tree` lists first (`f` steps to the next): `default` every
    /// entry but the bookkeeping ones (labels, model and thinking changes, custom entries, session
    /// info), `no-tools` those without tool results, `user-only` the user's messages,
    /// `labeled-only` the labelled entries, `all` every entry; the leaf is always listed.
    #[schemars(extend("x-project" = true, "enum" = ["default", "no-tools", "user-only", "labeled-only", "all"]))]
    pub tree_filter_mode: String,
    /// Thinking budgets per level, in tokens.
    pub thinking_budgets: ThinkingBudgets,
    /// Columns of padding beside the editor.
    #[schemars(extend("x-project" = true), range(max = 3))]
    pub editor_padding_x: u64,
    /// Completions shown at once.
    #[schemars(extend("x-project" = true), range(min = 3, max = 20))]
    pub autocomplete_max_visible: u64,
    /// Show the terminal's own cursor.
    #[schemars(extend("x-project" = true))]
    pub show_hardware_cursor: bool,
    /// Markdown rendering.
    #[schemars(extend("x-project" = true))]
    pub markdown: MarkdownConfig,
    /// Warnings that can be switched off.
    #[schemars(extend("x-project" = true))]
    pub warnings: WarningsConfig,
    /// The folder the per-project session folders are kept in instead of `~/.ctxkit/sessions`
    /// (`~` expanded; `--sessions-dir` and `CTXKIT_SESSIONS_DIR` come first). Read from the
    /// user's own settings file only. Unlike Pi's `sessionDir`, which holds every project's
    /// files side by side, ctxkit keeps a `--<path>--` folder per project inside it.
    #[schemars(extend("x-user-only" = true))]
    pub session_dir: Option<String>,
    /// The proxy model requests go through, as `HTTP_PROXY` and `HTTPS_PROXY` (Pi 1.6): each
    /// applies only when that variable is unset, and `NO_PROXY` still names the hosts reached
    /// directly. Read from the user's own settings file only: it decides where the conversation
    /// is sent.
    #[schemars(extend("x-user-only" = true))]
    pub http_proxy: Option<String>,
    /// The model provider: endpoint, key, headers, user models, provider-side options.
    pub llm: LlmConfig,
    /// `ctxkit chat`.
    pub chat: ChatConfig,
    /// A named set of context settings the engine starts from (`recommended`, what an empty
    /// settings file gets: see docs/simulator.md; `reference`: every key at its own default); keys
    /// set explicitly still win.
    #[serde(default)]
    pub context_strategy: ContextStrategy,
    /// Context transforms applied to the model's view before each call.
    pub transforms: TransformSettings,
    /// Pinned context.
    pub pinned: PinnedConfig,
    /// How session files are written.
    pub session: SessionConfig,
    /// Where summaries are shown to the model (`system`: in the system text, but the first user
    /// message when the kept messages open with a reply, which some providers refuse).
    pub summary_role: SummaryRole,
    /// Command hooks: `{command: [program, args…], events?: [names], timeoutMs?}`; the events are
    /// `before_compact`, `after_compact`, `compaction_failed`, `before_tree`, `after_tree` and
    /// `before_fork` (none: every one).
    #[schemars(extend("x-check" = "hooks"))]
    pub hooks: Vec<CommandHookConfig>,
    /// `ctxkit serve --stdio` and `--listen`.
    pub server: ServerConfig,
    /// Where sessions are stored (`--store`, `CTXKIT_STORE`).
    pub store: StoreConfig,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            last_changelog_version: None,
            default_provider: None,
            default_model: None,
            default_thinking_level: None,
            model_thinking_levels: None,
            transport: "auto".to_owned(),
            cache_warming: "idle".to_owned(),
            steering_mode: "one-at-a-time".to_owned(),
            follow_up_mode: "one-at-a-time".to_owned(),
            theme: None,
            compaction: CompactionConfig::default(),
            branch_summary: BranchSummaryConfig::default(),
            retry: RetryConfig::default(),
            hide_thinking_block: false,
            shell_path: None,
            quiet_startup: QuietStartup::Off,
            shell_command_prefix: None,
            npm_command: None,
            collapse_changelog: false,
            enable_install_telemetry: true,
            packages: Vec::new(),
            extensions: Vec::new(),
            skills: Vec::new(),
            prompts: Vec::new(),
            themes: Vec::new(),
            enable_skill_commands: true,
            terminal: TerminalConfig::default(),
            images: ImagesConfig::default(),
            enabled_models: None,
            default_tools: None,
            external_editor: None,
            double_escape_action: "tree".to_owned(),
            tree_filter_mode: "default".to_owned(),
            thinking_budgets: ThinkingBudgets::default(),
            editor_padding_x: 0,
            autocomplete_max_visible: 5,
            show_hardware_cursor: false,
            markdown: MarkdownConfig::default(),
            warnings: WarningsConfig::default(),
            session_dir: None,
            http_proxy: None,
            llm: LlmConfig::default(),
            chat: ChatConfig::default(),
            // Every key at its own default is the reference strategy; reading settings (even an
            // empty document) starts from the recommended one instead (`Settings::read`).
            context_strategy: ContextStrategy::Reference,
            transforms: TransformSettings::default(),
            pinned: PinnedConfig::default(),
            session: SessionConfig::default(),
            summary_role: SummaryRole::User,
            hooks: Vec::new(),
            server: ServerConfig::default(),
            store: StoreConfig::default(),
        }
    }
}

/// The compaction threshold of the recommended strategy, tokens (window-independent): 60,000
/// since the simulator checks after each tool batch as the agent loop does (40,000 until then;
/// docs/simulator.md, seventh round).
pub const RECOMMENDED_THRESHOLD_TOKENS: u64 = 60_000;

/// How long the recommended strategy lets a summary grow by appended updates, tokens: four times
/// the offline summary's largest size, 40% of the recommended threshold. Twice (12,000, from the
/// sixth round of docs/simulator.md until the twenty-eighth) consolidated every few compactions of
/// a long session, and each consolidation re-wrote the summary and lost names: 24,000 is cheaper
/// on the real sessions and keeps more of them (docs/simulator.md, twenty-eighth round).
pub const RECOMMENDED_APPEND_SUMMARY_TOKENS: u64 = 24_000;

/// The most names the recommended strategy's prune markers list (8 until the eighth round of
/// docs/simulator.md).
pub const RECOMMENDED_DIGEST_NAMES: usize = 32;

/// The characters the recommended strategy's prune markers give their names for an omitted text
/// up to 12,000 characters (longer ones get 4% of theirs, as with the default 160).
pub const RECOMMENDED_DIGEST_CHARS: usize = 480;

impl Settings {
    /// A settings document read as the settings files are (SDK and tests): every value checked,
    /// a wrong one replaced by its default, unknown keys left out, the context strategy applied.
    /// Not an object: the defaults.
    pub fn read(document: &Value) -> Self {
        let document = document.as_object().cloned().unwrap_or_default();
        crate::SettingsManager::in_memory(document)
            .settings()
            .clone()
    }

    /// A settings file holding only `"contextStrategy": "recommended"`, read: the strategy
    /// `docs/simulator.md` measures as "ctxkit recommended" (its layer below).
    pub fn recommended() -> Self {
        crate::SettingsManager::in_memory(Self::recommended_layer())
            .settings()
            .clone()
    }

    /// The layer a context strategy puts beneath the settings files (none for the default): what
    /// the typed read merges under the files and what `config get` reports as `contextStrategy`.
    pub(crate) fn strategy_layer(strategy: ContextStrategy) -> Map<String, Value> {
        match strategy {
            ContextStrategy::Reference => Map::new(),
            ContextStrategy::Recommended => Self::recommended_layer(),
        }
    }

    /// The layer `"contextStrategy": "recommended"` puts beneath the settings files: the strategy
    /// `docs/simulator.md` measures as "ctxkit recommended". Every tool result but the latest cut
    /// to a head, a tail and a marker naming up to 32 of what it omitted, in at least 480
    /// characters (docs/simulator.md, eighth round), and the long arguments of those results' calls
    /// with them (`transforms.pruneToolCalls`, eleventh round); compaction once the
    /// context passes 60,000 tokens whatever the window (the window's own threshold when lower),
    /// keeping 10,000; the summary written in the background from 90% of that threshold (80% until
    /// docs/simulator.md's twenty-sixth round) and sent as a continuation of the cached conversation; the hour-long prompt cache asked for request
    /// by request where the session's own pauses make it pay (`transforms.longCacheWhenItPays`,
    /// docs/simulator.md, fifth round); a summary update added after the previous summary, kept
    /// word for word, until that reaches 24,000 tokens (`compaction.appendSummaryTokens`: the
    /// summarizer writes only the new span's part; docs/simulator.md, sixth and twenty-eighth rounds). Everything
    /// else is the default (`compaction.idleThresholdTokens` is not set: it did not pay on the
    /// blind split).
    pub(crate) fn recommended_layer() -> Map<String, Value> {
        let layer = json!({
            "transforms": {
                "keepRecentToolResults": 1,
                "pruneDigestNames": RECOMMENDED_DIGEST_NAMES,
                "pruneDigestChars": RECOMMENDED_DIGEST_CHARS,
                "pruneToolCalls": true,
                "longCacheWhenItPays": true,
            },
            "compaction": {
                "thresholdTokens": RECOMMENDED_THRESHOLD_TOKENS,
                "keepRecentTokens": 10_000,
                "background": true,
                "backgroundPercent": 90,
                "cachePrefix": true,
                "appendSummaryTokens": RECOMMENDED_APPEND_SUMMARY_TOKENS,
            },
        });
        match layer {
            Value::Object(map) => map,
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_) => Map::new(),
        }
    }
}

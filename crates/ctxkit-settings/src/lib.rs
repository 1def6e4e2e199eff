//! ctxkit's settings: the global (`~/.ctxkit/settings.json`) and project (`.ctxkit/settings.json`)
//! documents with key order kept, a merged view, the schema of every setting with its default,
//! locked atomic writes that keep foreign keys, and project trust for hooks. Also the
//! [`Environment`] (home, working directory, variables) every ctxkit resource crate takes instead
//! of reading the process's, and the path helpers they share.
//!
//! The library never prints: problems that do not stop work are [`SettingsDiagnostic`]s and errors
//! are [`SettingsError`]s.

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod credentials;
mod env;
mod error;
mod json;
mod kind;
mod npm_folder;
mod pi_files;
mod pi_import;
mod protected;
mod settings;
mod tree;
mod trust;

pub use credentials::{
    CREDENTIALS_FILE_NAME, SavedKeys, credential_strings, credentials_path, remove_key, save_key,
    saved_keys,
};
pub use env::{
    CTXKIT_HOME_VAR, CTXKIT_OFFLINE_VAR, Environment, HOME_DIR_NAME, PROJECT_DIR_NAME,
    SETTINGS_FILE_NAME, canonical_or_raw, expand_tilde_loose, expand_tilde_strict, relative_path,
    resolve_against, to_slash,
};
pub use error::{FileRefusal, SettingsError, SettingsScope};
pub use json::string_items;
pub use kind::ResourceKind;
pub use npm_folder::{NPM_FOLDER_MANIFEST, npm_folder_is_fresh};
pub use pi_files::{
    PI_MODELS_FILE_NAME, PiRoute, PiRoutes, UnreadablePiModels, pi_agent_dir, pi_models_paths,
    pi_routes, pi_secrets,
};
pub use pi_import::{LeftOut, PiImport, import_pi_models};
pub use protected::{ProtectedResource, project_agent_skill_dirs, protected_resources};
pub use settings::schema::{description_of, json_schema, markdown_table, secret_keys, user_only};
pub use settings::{
    Document, HeldEntry, HeldReason, ImportStep, KeyPath, SettingEntry, SettingLookup,
    SettingOrigin, SettingValue, SettingsDiagnostic, SettingsManager, add_package_source,
    check_known_key, held_until_trusted, holds_credentials, is_pi_key_not_acted_on,
    is_pi_key_not_read, looks_local, remove_package_sources, shell_files,
};
pub use tree::{
    AdaptiveBudgets, AnthropicCompactionConfig, AnthropicConfig, AnthropicContextManagementConfig,
    BranchSummaryConfig, ChatConfig, CommandHookConfig, CompactionConfig, CompactionModelOverride,
    ContextStrategy, DurabilityMode, FallbackPolicy, ImagesConfig, LlmConfig, LlmTimeouts,
    MAX_TOKEN_BUDGET, MarkdownConfig, ModelCompat, ModelPrices, OpenAiResponsesCompactionConfig,
    OpenAiResponsesConfig, PackageSetting, PinnedConfig, PinnedScript, PriceTier, ProviderEndpoint,
    ProviderRetryConfig, QuietStartup, RECOMMENDED_DIGEST_CHARS, RECOMMENDED_DIGEST_NAMES,
    RECOMMENDED_THRESHOLD_TOKENS, RetryConfig, ServerConfig, SessionConfig, Settings, StoreConfig,
    SummaryProvider, SummaryRole, TerminalConfig, ThinkingBudgets, TransformSettings, UserModel,
    WarningsConfig, model_override_key,
};
pub use trust::{
    HeldSetting, HookReview, ProjectTrust, TRUST_FILE_NAME, hook_review, pin_project_files,
    project_trust, script_digest, set_project_trust,
};

//! ctxkit's resource loader: skills, prompt templates, themes, extension paths, context files
//! (`AGENTS.md`/`CLAUDE.md`) and the system prompt, compatible with Pi's behaviour, over the
//! settings of `ctxkit-settings` and the resolved packages of `ctxkit-packages`. Both crates'
//! public items are re-exported here, so a binary can use one import.
//!
//! The library never prints: problems that do not stop work are returned as diagnostics
//! ([`ResourceDiagnostic`], [`SettingsDiagnostic`]) and errors are typed enums
//! ([`SettingsError`], [`SourceError`], [`PackageError`], [`FrontmatterError`]).

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod context;
mod error;
mod frontmatter;
mod loader;
mod prompts;
mod skills;
mod themes;

pub use context::{
    ContextFile, SystemPromptParts, assemble_system_prompt, discover_context_files,
    migrate_legacy_directories, resolve_prompt_value,
};
pub use ctxkit_packages::{
    AvailableUpdate, CommandLine, CommandOutput, CommandRunner, ConfiguredPackage, MissingPackages,
    NoProgress, PackageManager, ProcessRunner, ProgressAction, ProgressEvent, ProgressReporter,
    ProgressStage, TEMPORARY_INSTALL_DIR_NAME, UpdateOutcome,
};
pub use ctxkit_packages::{CollisionKind, ResourceDiagnostic};
pub use ctxkit_packages::{
    GitSource, NpmSource, PackageSource, has_credentials, looks_local, parse_git_url,
    redact_credentials,
};
pub use ctxkit_packages::{
    LocalPackagesOnly, PackageProvider, PathMetadata, ResolvedResource, ResolvedResources,
    SourceOrigin, SourceScope, resolve_configured, resolve_package_sources,
};
pub use ctxkit_packages::{PackageError, SourceError};
pub use ctxkit_settings::ResourceKind;
pub use ctxkit_settings::{
    AnthropicContextManagementSettings, BranchSummarySettings, Document, KeyPath, LlmSettings,
    LlmTimeoutSettings, ProviderCompactionSettings, ProviderRetrySettings, RetrySettings,
    SettingEntry, SettingLookup, SettingOrigin, SettingsDiagnostic, SettingsManager,
    StoredCompactionSettings,
};
pub use ctxkit_settings::{
    CTXKIT_HOME_VAR, CTXKIT_OFFLINE_VAR, Environment, HOME_DIR_NAME, PROJECT_DIR_NAME,
    SETTINGS_FILE_NAME,
};
pub use ctxkit_settings::{
    ProjectTrust, TRUST_FILE_NAME, project_trust, runnable_settings, set_project_trust,
};
pub use ctxkit_settings::{SettingsError, SettingsScope};
pub use error::FrontmatterError;
pub use frontmatter::{ParsedMarkdown, parse_frontmatter, strip_frontmatter};
pub use loader::{
    ExtensionConflicts, ExtensionContribution, ExtensionEntry, ExtensionRegistration,
    LoadedResources, LoaderOptions, LoaderOverrides, ResourceSwitches, load_resources,
    resolve_extension_conflicts,
};
pub use prompts::{
    PromptSet, PromptTemplate, expand_prompt_template, load_prompt_file, load_prompt_templates,
    parse_command_args, substitute_args,
};
pub use skills::{
    Skill, SkillSet, expand_skill_command, format_skills_for_prompt, load_skill_file, load_skills,
};
pub use themes::{
    REQUIRED_COLOR_TOKENS, Theme, ThemeSet, load_theme_file, load_themes, validate_theme,
};

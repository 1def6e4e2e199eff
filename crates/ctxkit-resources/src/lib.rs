//! ctxkit's resources subsystem: settings (global + project, merged, safely written), package
//! sources and the package manager, and the resource loader (skills, prompt templates, themes,
//! context files, system prompt), compatible with Pi's behaviour.
//!
//! The library never prints: problems that do not stop work are returned as diagnostics
//! ([`ResourceDiagnostic`], [`SettingsDiagnostic`]) and errors are typed enums
//! ([`SettingsError`], [`SourceError`], [`PackageError`], [`FrontmatterError`]).

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod context;
mod diagnostics;
mod env;
mod error;
mod frontmatter;
mod json;
mod kind;
mod loader;
mod packages;
mod prompts;
mod resolve;
mod settings;
mod skills;
mod source;
mod themes;
mod trust;

pub use context::{
    ContextFile, SystemPromptParts, assemble_system_prompt, discover_context_files,
    migrate_legacy_directories, resolve_prompt_value,
};
pub use diagnostics::{CollisionKind, ResourceDiagnostic};
pub use env::{
    CTXKIT_HOME_VAR, CTXKIT_OFFLINE_VAR, Environment, HOME_DIR_NAME, PROJECT_DIR_NAME,
    SETTINGS_FILE_NAME,
};
pub use error::{FrontmatterError, PackageError, SettingsError, SettingsScope, SourceError};
pub use frontmatter::{ParsedMarkdown, parse_frontmatter, strip_frontmatter};
pub use kind::ResourceKind;
pub use loader::{
    ExtensionConflicts, ExtensionContribution, ExtensionEntry, ExtensionRegistration,
    LoadedResources, LoaderOptions, LoaderOverrides, ResourceSwitches, load_resources,
    resolve_extension_conflicts,
};
pub use packages::{
    AvailableUpdate, CommandLine, CommandOutput, CommandRunner, ConfiguredPackage, MissingPackages,
    NoProgress, PackageManager, ProcessRunner, ProgressAction, ProgressEvent, ProgressReporter,
    ProgressStage, TEMPORARY_INSTALL_DIR_NAME, UpdateOutcome,
};
pub use prompts::{
    PromptSet, PromptTemplate, expand_prompt_template, load_prompt_file, load_prompt_templates,
    parse_command_args, substitute_args,
};
pub use resolve::{
    LocalPackagesOnly, PackageProvider, PathMetadata, ResolvedResource, ResolvedResources,
    SourceOrigin, SourceScope, resolve_configured, resolve_package_sources,
};
pub use settings::{
    BranchSummarySettings, CompactionSettings, Document, KeyPath, LlmSettings,
    ProviderRetrySettings, RetrySettings, SettingEntry, SettingLookup, SettingOrigin,
    SettingsDiagnostic, SettingsManager,
};
pub use skills::{
    Skill, SkillSet, expand_skill_command, format_skills_for_prompt, load_skill_file, load_skills,
};
pub use source::{
    GitSource, NpmSource, PackageSource, has_credentials, looks_local, parse_git_url,
    redact_credentials,
};
pub use themes::{
    REQUIRED_COLOR_TOKENS, Theme, ThemeSet, load_theme_file, load_themes, validate_theme,
};
pub use trust::{
    ProjectTrust, TRUST_FILE_NAME, project_trust, runnable_settings, set_project_trust,
};

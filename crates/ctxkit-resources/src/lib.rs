//! ctxkit's resource loader: skills, prompt templates, themes, extension paths, context files
//! (`AGENTS.md`/`CLAUDE.md`) and the system prompt, compatible with Pi's behaviour, over the
//! settings of `ctxkit-settings` and the resolved packages of `ctxkit-packages` (use those crates for
//! their own items).
//!
//! The library never prints: problems that do not stop work are returned as diagnostics
//! ([`ctxkit_packages::ResourceDiagnostic`], [`ctxkit_settings::SettingsDiagnostic`]) and errors
//! are typed enums ([`ctxkit_settings::SettingsError`], [`ctxkit_packages::SourceError`],
//! [`ctxkit_packages::PackageError`], [`FrontmatterError`]).

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod context;
mod error;
mod frontmatter;
mod loader;
mod prompts;
mod skills;
mod template_args;
mod theme_choice;
mod theme_colors;
mod themes;

pub use context::{
    ContextFile, SystemPromptParts, assemble_system_prompt, discover_context_files,
    migrate_legacy_directories, resolve_prompt_value,
};
pub use error::FrontmatterError;
pub use frontmatter::{ParsedMarkdown, parse_frontmatter, strip_frontmatter};
pub use loader::{
    ExtensionConflicts, ExtensionContribution, ExtensionEntry, ExtensionRegistration,
    LoadedResources, LoaderOptions, LoaderOverrides, ResourceSwitches, load_resources,
    resolve_extension_conflicts,
};
pub use prompts::{
    PromptSet, PromptTemplate, expand_prompt_template, load_prompt_file, load_prompt_templates,
};
pub use skills::{
    Skill, SkillSet, expand_skill_command, format_skills_for_prompt, load_skill_file, load_skills,
};
pub use template_args::{parse_command_args, substitute_args};
pub use theme_choice::{
    Appearance, SYSTEM_THEME, ThemeChoice, ThemeSources, builtin_theme, builtin_theme_names,
    choose_theme,
};
pub use theme_colors::{Color, TerminalColor, ThemeColors, parse_color, theme_colors};
pub use themes::{
    REQUIRED_COLOR_TOKENS, Theme, ThemeSet, load_theme_file, load_themes, validate_theme,
};

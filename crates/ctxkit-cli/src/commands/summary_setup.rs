//! Resolving what compaction and branch summaries run with: flags, then the settings files, then
//! defaults adapted to the model's context window; prompt overrides from `<home>/prompts/compaction/`;
//! and the optional file context read from the session's working directory.

use std::path::Path;

use anyhow::{Context as _, Result};
use ctxkit_compaction::{
    CompactionSettings, ContextFile, FileContextLimits, Preparation, Prompts, file_context_block,
    rank_context_files,
};
use ctxkit_resources::SettingOrigin;

use super::config::{load_settings, resource_environment};
use crate::cli::GlobalArgs;

/// Everything a summary run needs besides the session.
#[derive(Debug)]
pub struct SummarySetup {
    pub settings: CompactionSettings,
    pub prompts: Prompts,
    pub file_context: bool,
    /// `branchSummary.reserveTokens`.
    pub branch_reserve_tokens: u64,
}

/// Flags given on the command line (`None`: not given).
#[derive(Debug, Clone, Copy, Default)]
pub struct SummaryFlags {
    pub keep_recent_tokens: Option<u64>,
    pub reserve_tokens: Option<u64>,
    /// The model's context window; 0 when unknown.
    pub context_window: u64,
    pub file_context: bool,
}

pub fn resolve(global: &GlobalArgs, flags: SummaryFlags) -> Result<SummarySetup> {
    let environment = resource_environment(global)?;
    let settings = load_settings(&environment)?;
    let configured = settings.compaction();
    let explicitly_set = |key: &str| {
        settings
            .get(key)
            .ok()
            .and_then(|lookup| lookup.origin)
            .is_some_and(|origin| match origin {
                SettingOrigin::Project | SettingOrigin::Global | SettingOrigin::Override => true,
                SettingOrigin::Default => false,
            })
    };
    // Unset values adapt to the window, so a small model neither compacts every turn nor keeps more
    // than it can hold.
    let adapted = CompactionSettings::for_context_window(flags.context_window);
    let pick = |flag: Option<u64>, key: &str, configured: u64, adapted: u64| match flag {
        Some(value) => value,
        None if explicitly_set(key) => configured,
        None => adapted,
    };
    let compaction = CompactionSettings {
        enabled: configured.enabled,
        reserve_tokens: pick(
            flags.reserve_tokens,
            "compaction.reserveTokens",
            configured.reserve_tokens,
            adapted.reserve_tokens,
        ),
        keep_recent_tokens: pick(
            flags.keep_recent_tokens,
            "compaction.keepRecentTokens",
            configured.keep_recent_tokens,
            adapted.keep_recent_tokens,
        ),
    };
    let prompts_dir = environment.agent_dir().join("prompts").join("compaction");
    let prompts = Prompts::with_overrides(&prompts_dir)?;
    Ok(SummarySetup {
        settings: compaction,
        prompts,
        file_context: flags.file_context || settings.compaction_file_context(),
        branch_reserve_tokens: settings.branch_summary().reserve_tokens,
    })
}

/// The `<file-context>` block for a preparation: the ranked files read from `cwd` (relative paths) or
/// as given (absolute); files that cannot be read are skipped.
pub fn read_file_context(preparation: &Preparation, cwd: &Path) -> Result<String> {
    let limits = FileContextLimits::default();
    let mut files = Vec::new();
    for path in rank_context_files(preparation, &limits) {
        let full = if Path::new(&path).is_absolute() {
            Path::new(&path).to_owned()
        } else {
            cwd.join(&path)
        };
        if let Ok(text) = std::fs::read_to_string(&full) {
            files.push(ContextFile { path, text });
        }
    }
    Ok(file_context_block(&files, &limits))
}

/// The session's working directory, for reading context files.
pub fn session_cwd(cwd: &str) -> Result<std::path::PathBuf> {
    let path = Path::new(cwd);
    if path.as_os_str().is_empty() {
        return std::env::current_dir().context("cannot read the current directory");
    }
    Ok(path.to_owned())
}

//! The offline summary's size from the settings: `compaction.offlineSummaryPercent` of the span's
//! tokens, at least `compaction.offlineSummaryMinTokens` and at most
//! `compaction.offlineSummaryMaxTokens` (`docs/summaries.md`). A bad value would size every
//! summary wrongly without a word, so it stops the command, naming the file and the key.

use ctxkit_settings::{
    SettingOrigin, SettingsDiagnostic, SettingsError, SettingsManager, SettingsScope,
};
use ctxkit_summarizer_offline::SummarySize;

const PERCENT: &str = "compaction.offlineSummaryPercent";
const MIN_TOKENS: &str = "compaction.offlineSummaryMinTokens";
const MAX_TOKENS: &str = "compaction.offlineSummaryMaxTokens";

/// The size the settings give, or the first bad value among its three keys.
pub fn offline_summary_size(settings: &SettingsManager) -> Result<SummarySize, SettingsError> {
    for diagnostic in settings.diagnostics() {
        if let SettingsDiagnostic::InvalidValue {
            path,
            line,
            key,
            expected,
            found,
            ..
        } = diagnostic
            && [PERCENT, MIN_TOKENS, MAX_TOKENS].contains(&key.as_str())
        {
            return Err(SettingsError::InvalidValue {
                path,
                line,
                key,
                expected,
                found,
            });
        }
    }
    let compaction = &settings.settings().compaction;
    SummarySize::from_settings(
        compaction.offline_summary_percent,
        compaction.offline_summary_min_tokens,
        compaction.offline_summary_max_tokens,
    )
    .ok_or_else(|| SettingsError::InvalidValue {
        path: origin_path(settings, MIN_TOKENS),
        line: None,
        key: MIN_TOKENS.to_owned(),
        expected: format!(
            "at most `{MAX_TOKENS}` ({})",
            compaction.offline_summary_max_tokens
        ),
        found: compaction.offline_summary_min_tokens.to_string(),
    })
}

/// The settings file the effective value of `key` comes from (empty when none does).
fn origin_path(settings: &SettingsManager, key: &str) -> std::path::PathBuf {
    let scope = match settings.get(key).ok().and_then(|lookup| lookup.origin) {
        Some(SettingOrigin::Project) => Some(SettingsScope::Project),
        Some(SettingOrigin::Global) => Some(SettingsScope::Global),
        Some(SettingOrigin::Strategy | SettingOrigin::Default) | None => None,
    };
    scope
        .and_then(|scope| settings.path(scope))
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(compaction: serde_json::Value) -> SettingsManager {
        let directory = tempfile::tempdir().unwrap();
        let global = directory.path().join("settings.json");
        std::fs::write(&global, json!({ "compaction": compaction }).to_string()).unwrap();
        let manager = SettingsManager::from_paths(global, directory.path().join("project.json"));
        // The files are read at load; the directory may go.
        drop(directory);
        manager
    }

    #[test]
    fn the_settings_set_the_share_and_the_bounds() {
        let size = offline_summary_size(&settings(json!({
            "offlineSummaryPercent": 2,
            "offlineSummaryMinTokens": 300,
            "offlineSummaryMaxTokens": 9000
        })))
        .unwrap();
        assert_eq!(
            size,
            SummarySize {
                ratio: 0.02,
                min_tokens: 300,
                max_tokens: 9_000
            }
        );
        assert_eq!(
            offline_summary_size(&settings(json!({}))).unwrap(),
            SummarySize::default()
        );
    }

    #[test]
    fn a_bad_value_is_an_error_naming_the_file_and_the_key() {
        for (compaction, key) in [
            (json!({"offlineSummaryPercent": 0}), PERCENT),
            (json!({"offlineSummaryPercent": 150}), PERCENT),
            (json!({"offlineSummaryPercent": 2.5}), PERCENT),
            (json!({"offlineSummaryPercent": "5%"}), PERCENT),
            (json!({"offlineSummaryMinTokens": -1}), MIN_TOKENS),
            (json!({"offlineSummaryMaxTokens": 0}), MAX_TOKENS),
            (
                json!({"offlineSummaryMinTokens": 8000, "offlineSummaryMaxTokens": 6000}),
                MIN_TOKENS,
            ),
        ] {
            let error = offline_summary_size(&settings(compaction.clone()))
                .unwrap_err()
                .to_string();
            assert!(error.contains(key), "{compaction}: {error}");
            assert!(error.contains("settings.json"), "{compaction}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }
}

//! Whether a dotted key is one ctxkit knows, and the known key a mistyped one most likely meant:
//! `ctxkit config set` refuses a key it does not know unless told to keep it (`--force`), so a typo
//! is not written silently.

use super::schema::{self, ValueKind};
use crate::SettingsError;

/// `Ok` when `key` is a known setting, or lies inside a known map (`llm.headers.X-Team`,
/// `compaction.modelOverrides.anthropic/claude`); otherwise [`SettingsError::UnknownKey`] with the
/// closest known key when one is near enough to be a typo.
pub fn check_known_key(key: &str) -> Result<(), SettingsError> {
    match known_or_why(key)? {
        true => Ok(()),
        false => Err(SettingsError::UnknownKey {
            key: key.to_owned(),
            suggestion: closest_known_key(key),
        }),
    }
}

/// Whether `key` is known, as [`check_known_key`] says, without looking for the key a typo meant
/// (an edit distance to every known key: `ctxkit trust` of a cloned project's 20,000 unknown keys
/// spent most of a minute on suggestions nobody read, QA 2026-12-07).
pub fn is_known_key(key: &str) -> bool {
    matches!(known_or_why(key), Ok(true))
}

/// `Ok(true)` for a known key, `Ok(false)` for an unknown one, the error for a malformed key or one
/// below a known scalar.
fn known_or_why(key: &str) -> Result<bool, SettingsError> {
    // A malformed key (`a..b`) or one below a known scalar (`theme.x`) is refused for what it is.
    let path = super::document::KeyPath::parse(key)?;
    let segments = path.segments();
    for length in 1..=segments.len() {
        let Some(field) = segments.get(..length).and_then(schema::lookup) else {
            break;
        };
        let inside_map = matches!(
            &field.kind,
            ValueKind::StringMap | ValueKind::EntryMap { .. }
        );
        if length == segments.len() || inside_map {
            return Ok(true);
        }
        if !matches!(&field.kind, ValueKind::Object(_)) {
            return Err(SettingsError::InvalidKey {
                key: key.to_owned(),
                reason: format!("`{}` is not an object", segments[..length].join(".")),
            });
        }
    }
    Ok(false)
}

/// Keys of Pi's settings that ctxkit does not read: a settings file shared with Pi, or copied from
/// it, holds them, and they are no typo. Pi's settings manager (the `Settings` interface of
/// `settings-manager.ts`, and the keys its older versions wrote: `/work/shared/spec/resources.md`
/// SM-5 migrates `queueMode`, `websockets`, `retry.maxDelayMs` and the object form of `skills`).
const PI_KEYS_NOT_READ: [&str; 26] = [
    "showCacheMissNotices",
    "defaultProjectTrust",
    "enableAnalytics",
    "trackingId",
    "outputPad",
    "httpIdleTimeoutMs",
    "websocketConnectTimeoutMs",
    "toolTimeoutMs",
    "tuiMode",
    "fullscreenExitOutput",
    "fullscreenScrollbar",
    "fullscreenCopyOnSelect",
    "terminal.hyperlinks",
    "terminal.images",
    "terminal.trueColor",
    "markdown.mermaid",
    "lastSeenChangelogVersion",
    "streamingTools",
    "queueMode",
    // `/share` always makes a secret gist: Radius is Pi's own service.
    "sessionShareDestination",
    // Pi 1.6's schema (`schemas/settings.schema.json`): `$schema` is what Pi's docs tell users to
    // add for their editor; the rest are its self-update, codemode tool, full-screen scrolling,
    // extension changelogs and telemetry id (QA r98: warned about on every command).
    "$schema",
    "selfUpdateCommand",
    "codemode",
    "fullscreenWheelScrollLines",
    "extensionChangelogVersions",
    "deviceId",
];

/// Whether the dotted `key` (or a section it lies in) is one of Pi's settings that ctxkit does
/// not read: never warned about as unknown.
pub fn is_pi_key_not_read(key: &str) -> bool {
    PI_KEYS_NOT_READ.iter().any(|pi_key| {
        key.strip_prefix(pi_key)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// Pi's settings that ctxkit knows and checks (a wrong value is named) but does not act on: the
/// look and keys of Pi's full-screen interface, which ctxkit's line-based chat does not have,
/// its changelog and install telemetry, the follow-up queue of Pi's editor, and Anthropic's
/// subscription warning. `config list` says so beside each.
const PI_KEYS_NOT_ACTED_ON: [&str; 10] = [
    "collapseChangelog",
    "lastChangelogVersion",
    "enableInstallTelemetry",
    "terminal.showImages",
    "terminal.imageWidthCells",
    "terminal.clearOnShrink",
    "editorPaddingX",
    "autocompleteMaxVisible",
    "showHardwareCursor",
    "warnings.anthropicExtraUsage",
];

/// Whether the dotted `key` is a setting ctxkit checks but does not act on
/// (`PI_KEYS_NOT_ACTED_ON`).
pub fn is_pi_key_not_acted_on(key: &str) -> bool {
    PI_KEYS_NOT_ACTED_ON.contains(&key)
}

/// The known key (a setting or a section) nearest to `key` by edit distance (case-insensitive), if
/// it is a plausible typo.
pub(crate) fn closest_known_key(key: &str) -> Option<String> {
    let wanted = key.to_lowercase();
    schema::all_keys()
        .into_iter()
        .map(|known| {
            let distance = strsim::damerau_levenshtein(&wanted, &known.to_lowercase());
            (distance, known)
        })
        .filter(|(distance, known)| *distance <= (known.len() / 4).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, known)| known)
}

#[cfg(test)]
mod tests {

    #[test]
    fn keys_not_acted_on_are_known_settings() {
        for key in PI_KEYS_NOT_ACTED_ON {
            assert!(check_known_key(key).is_ok(), "{key}");
            assert!(!is_pi_key_not_read(key), "{key}");
        }
    }
    use super::*;

    /// `is_known_key` says what `check_known_key` says, without a suggestion to look for.
    #[test]
    fn is_known_key_agrees_with_the_check() {
        for key in [
            "compaction.reserveTokens",
            "llm.headers.X-Team",
            "compactoin",
            "theme.x",
            "a..b",
        ] {
            assert_eq!(is_known_key(key), check_known_key(key).is_ok(), "{key}");
        }
    }

    #[test]
    fn known_keys_and_keys_inside_maps_pass() {
        for key in [
            "compaction.reserveTokens",
            "llm.headers.X-Team",
            "compaction.modelOverrides",
        ] {
            assert!(check_known_key(key).is_ok(), "{key}");
        }
    }

    #[test]
    fn pis_own_keys_are_told_from_typos() {
        for key in [
            "tuiMode",
            "terminal.hyperlinks",
            "outputPad",
            "$schema",
            "codemode.mode",
            "deviceId",
        ] {
            assert!(is_pi_key_not_read(key), "{key}");
            assert!(check_known_key(key).is_err(), "{key}");
        }
        for key in ["compacton", "terminal.hyperlinksx", "tuiModes", "theme"] {
            assert!(!is_pi_key_not_read(key), "{key}");
        }
    }

    #[test]
    fn a_typo_is_refused_with_the_key_it_meant() {
        let error = check_known_key("compactoin.reserveTokens").unwrap_err();
        assert!(matches!(
            &error,
            SettingsError::UnknownKey { suggestion: Some(suggestion), .. }
                if suggestion == "compaction.reserveTokens"
        ));
        let error = check_known_key("somethingElseEntirely").unwrap_err();
        assert!(matches!(
            error,
            SettingsError::UnknownKey {
                suggestion: None,
                ..
            }
        ));
    }
}

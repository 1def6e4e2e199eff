//! `/settings`: the chat's settings in a list, as Pi's settings selector. Enter steps the setting
//! under the cursor to its next value and saves it in the user's settings (as `ctxkit config set`
//! would); the display settings apply at once, the others after `/reload` (those it applies) or
//! from the next chat. Esc leaves.

use anyhow::Result;
use ctxkit_settings::SettingsManager;

use super::Chat;
use super::picker::{List, Picked, pick};
use crate::commands::settings::settings_of_project;

/// A setting `/settings` offers: its key, its name in the list, the values Enter steps through,
/// and whether the chat applies a change at once.
struct Offered {
    key: &'static str,
    label: &'static str,
    values: &'static [&'static str],
    live: bool,
}

impl Offered {
    /// When a change of the setting applies.
    fn applies(&self) -> &'static str {
        if self.live {
            "at once"
        } else if super::reload::reload_applies(self.key) {
            "after /reload, or in the next chat"
        } else {
            "from the next chat"
        }
    }
}

const BOOLEANS: &[&str] = &["true", "false"];

/// The settings the chat acts on that take one of a few values (Pi's selector's, where ctxkit has
/// them, and the context strategy).
const OFFERED: &[Offered] = &[
    Offered {
        key: "compaction.enabled",
        label: "Auto-compact",
        values: BOOLEANS,
        live: false,
    },
    Offered {
        key: "contextStrategy",
        label: "Context strategy",
        values: &["recommended", "reference"],
        live: false,
    },
    Offered {
        key: "defaultThinkingLevel",
        label: "Default thinking level",
        values: &["off", "minimal", "low", "medium", "high", "xhigh", "max"],
        live: false,
    },
    Offered {
        key: "steeringMode",
        label: "Steering mode",
        values: &["one-at-a-time", "all"],
        live: false,
    },
    Offered {
        key: "transport",
        label: "Transport",
        values: &["auto", "sse", "websocket", "websocket-cached"],
        live: false,
    },
    Offered {
        key: "cacheWarming",
        label: "Cache warming",
        values: &["off", "streaming", "idle"],
        live: false,
    },
    Offered {
        key: "hideThinkingBlock",
        label: "Hide thinking",
        values: BOOLEANS,
        live: true,
    },
    Offered {
        key: "doubleEscapeAction",
        label: "Double-escape action",
        values: &["tree", "fork", "none"],
        live: true,
    },
    Offered {
        key: "treeFilterMode",
        label: "Tree filter mode",
        values: &["default", "no-tools", "user-only", "labeled-only", "all"],
        live: true,
    },
    Offered {
        key: "quietStartup",
        label: "Quiet startup",
        values: &["true", "header", "false"],
        live: false,
    },
    Offered {
        key: "images.autoResize",
        label: "Resize images",
        values: BOOLEANS,
        live: true,
    },
    Offered {
        key: "images.blockImages",
        label: "Block images",
        values: BOOLEANS,
        live: false,
    },
    Offered {
        key: "terminal.showTerminalProgress",
        label: "Terminal progress",
        values: BOOLEANS,
        live: true,
    },
    Offered {
        key: "theme",
        label: "Theme",
        // And every theme the resource loader found (`Chat::values_of`).
        values: &["system", "dark", "light"],
        live: true,
    },
    Offered {
        key: "enableSkillCommands",
        label: "Skill commands",
        values: BOOLEANS,
        live: false,
    },
];

/// A setting's value as the list shows it, and where it comes from.
fn current(settings: &SettingsManager, key: &str) -> (String, &'static str) {
    let Ok(lookup) = settings.get(key) else {
        return ("-".to_owned(), "unset");
    };
    let value = lookup
        .value
        .map_or_else(|| "-".to_owned(), |value| value.display_text());
    // Named as `ctxkit config list` names it.
    (value, crate::commands::config::origin_name(lookup.origin))
}

/// The value after `value` in `values` (the first when `value` is none of them).
fn next_value<'a>(values: &[&'a str], value: &str) -> &'a str {
    let at = values.iter().position(|candidate| *candidate == value);
    let next = at.map_or(0, |at| (at + 1) % values.len());
    values.get(next).copied().unwrap_or_default()
}

impl Chat {
    /// The values Enter steps `offered` through: its own, and for `theme` the themes loaded too
    /// (an untrusted project's left out, as the chat would not paint with them).
    fn values_of<'a>(&'a self, offered: &'a Offered, project_trusted: bool) -> Vec<&'a str> {
        let mut values = offered.values.to_vec();
        if offered.key == "theme" {
            let sources = ctxkit_resources::ThemeSources {
                loaded: &self.resources.themes.themes,
                project_trusted,
            };
            for theme in sources.usable_themes() {
                if !values.contains(&theme.name.as_str()) {
                    values.push(&theme.name);
                }
            }
        }
        values
    }

    /// `/settings`.
    pub(super) fn pick_settings(&mut self) -> Result<()> {
        let mut cursor = 0;
        loop {
            let settings = settings_of_project(&self.environment);
            let rows: Vec<(String, &'static str)> = OFFERED
                .iter()
                .map(|offered| current(&settings, offered.key))
                .collect();
            let row = |index: usize| match (OFFERED.get(index), rows.get(index)) {
                (Some(offered), Some((value, origin))) => {
                    format!("{:<24}{value:<16}({origin})", offered.label)
                }
                _ => String::new(),
            };
            let detail = |index: usize| {
                OFFERED.get(index).map_or_else(String::new, |offered| {
                    let description = ctxkit_settings::description_of(offered.key).unwrap_or("");
                    let when = offered.applies();
                    format!("`{}`: {description} (a change applies {when})", offered.key)
                })
            };
            let list = List {
                title: "Settings (Enter steps to the next value and saves it in your settings)",
                help: "Enter next value · Esc leave",
                count: OFFERED.len(),
                row: &row,
                detail: &detail,
                keys: "",
            };
            let Ok(picked) = pick(&list, cursor) else {
                for index in 0..OFFERED.len() {
                    self.ui.line(&format!("  {}", row(index)));
                }
                self.ui.info(
                    "/settings changes them at a terminal; `ctxkit config set KEY VALUE` anywhere",
                );
                return Ok(());
            };
            let Picked::Chosen(index) = picked else {
                return Ok(());
            };
            cursor = index;
            let (Some(offered), Some((value, _))) = (OFFERED.get(index), rows.get(index)) else {
                continue;
            };
            // No theme set is the terminal's palette, `system`: Enter goes on to the next.
            let value = match (offered.key, value.as_str()) {
                ("theme", "-") => ctxkit_resources::SYSTEM_THEME,
                (_, value) => value,
            };
            let values = self.values_of(offered, settings.project_trusted());
            let next = next_value(&values, value).to_owned();
            self.save_user_setting(offered.key, Some(&next))?;
            if offered.key == "theme" {
                // The theme chosen here is the one wanted now, over `--use-theme`'s.
                self.theme_flag = None;
            }
            if offered.live {
                self.apply_display_settings();
            }
            let (_, origin) = current(&settings_of_project(&self.environment), offered.key);
            if origin == "project" {
                self.ui.say(&format!(
                    "{} saved as {next} in your settings; the project's settings set it too, and win",
                    offered.key
                ));
            } else {
                // When it applies, as the list said: "set" alone read as done for a change
                // that waits for `/reload` (QA r97).
                self.ui.say(&format!(
                    "{} set to {next} (applies {})",
                    offered.key,
                    offered.applies()
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_says_when_it_applies() {
        let applies = |key: &str| {
            OFFERED
                .iter()
                .find(|offered| offered.key == key)
                .map(Offered::applies)
        };
        assert_eq!(
            applies("compaction.enabled"),
            Some("after /reload, or in the next chat")
        );
        assert_eq!(applies("hideThinkingBlock"), Some("at once"));
        assert_eq!(applies("quietStartup"), Some("from the next chat"));
    }

    #[test]
    fn enter_steps_to_the_next_value_and_wraps() {
        assert_eq!(next_value(BOOLEANS, "true"), "false");
        assert_eq!(next_value(BOOLEANS, "false"), "true");
        assert_eq!(next_value(&["tree", "fork", "none"], "none"), "tree");
        assert_eq!(next_value(&["off", "low"], "-"), "off");
    }

    #[test]
    fn every_offered_setting_is_known_with_the_values_the_schema_takes() {
        let settings = SettingsManager::in_memory(ctxkit_settings::Document::new());
        for offered in OFFERED {
            assert!(
                ctxkit_settings::description_of(offered.key).is_some(),
                "{}",
                offered.key
            );
            for value in offered.values {
                let mut settings = SettingsManager::in_memory(ctxkit_settings::Document::new());
                let set = settings.set_from_text(
                    ctxkit_settings::SettingsScope::Global,
                    offered.key,
                    value,
                );
                assert!(set.is_ok(), "{} = {value}: {set:?}", offered.key);
            }
            let (value, origin) = current(&settings, offered.key);
            assert!(
                value == "-" || offered.values.contains(&value.as_str()),
                "{}: {value}",
                offered.key
            );
            assert!(
                origin == "default" || origin == "unset" || origin == "contextStrategy",
                "{origin}"
            );
        }
    }
}

//! `/scoped-models`: the models Ctrl-P steps through, picked in a list, as Pi 1.6's scoped-models
//! selector. Enter turns the model under the cursor on or off, `a` turns all on, `c` all off; `s`
//! saves the choice as `enabledModels` in the user's settings, Esc keeps it for this chat only.

use std::collections::HashMap;

use anyhow::{Context as _, Result};

use super::Chat;
use super::model_picker::Offered;
use super::picker::{List, Picked, pick};

/// What the list ended with.
enum Ending {
    /// `s`: kept and saved.
    Save,
    /// Esc: kept for this chat.
    Keep,
}

impl Chat {
    /// `/scoped-models`.
    pub(super) fn pick_scoped_models(&mut self) -> Result<()> {
        let offered = self.offered_now();
        let (scope, _) = self.scope_of(&offered);
        let levels: HashMap<String, String> = scope
            .iter()
            .filter_map(|model| Some((model.spec.clone(), model.thinking.clone()?)))
            .collect();
        let mut enabled: Vec<String> = scope.into_iter().map(|model| model.spec).collect();
        let Some(ending) = choose(&offered, &mut enabled) else {
            for model in &offered {
                let mark = if enabled.contains(&model.spec) {
                    "[x]"
                } else {
                    "[ ]"
                };
                self.ui.line(&format!("  {mark} {}", model.row));
            }
            self.ui.info(
                "/scoped-models picks at a terminal; `ctxkit config set enabledModels '[…]'` sets \
                 them anywhere",
            );
            return Ok(());
        };
        // Every model, in `/model`'s order, is what no setting gives; none on steps nowhere, so it
        // is read as every model too.
        let every =
            enabled.is_empty() || enabled.iter().eq(offered.iter().map(|model| &model.spec));
        self.enabled_models = if every {
            Vec::new()
        } else {
            enabled
                .iter()
                .map(|spec| match levels.get(spec) {
                    Some(level) => format!("{spec}:{level}"),
                    None => spec.clone(),
                })
                .collect()
        };
        let what = if every {
            "every model that can be asked".to_owned()
        } else {
            enabled.join(", ")
        };
        match ending {
            Ending::Keep => self.ui.say(&format!(
                "Ctrl-P steps through {what} in this chat (`s` in /scoped-models saves it)"
            )),
            Ending::Save => {
                self.save_enabled_models()?;
                self.ui.say(&format!(
                    "Ctrl-P steps through {what}; saved as enabledModels in the user's settings"
                ));
            }
        }
        Ok(())
    }

    /// Writes `enabled_models` as `enabledModels` in the user's settings (removed when empty:
    /// every model).
    fn save_enabled_models(&self) -> Result<()> {
        let patterns = serde_json::to_string(&self.enabled_models)?;
        let value = (!self.enabled_models.is_empty()).then_some(patterns.as_str());
        self.save_user_setting("enabledModels", value)
    }

    /// Sets `key` to the value `text` spells (removes it on `None`) in the user's settings file,
    /// as `ctxkit config set` does; the project's file is left as it is.
    pub(super) fn save_user_setting(&self, key: &str, text: Option<&str>) -> Result<()> {
        let mut settings = crate::commands::settings::settings_of_project(&self.environment);
        let scope = ctxkit_settings::SettingsScope::Global;
        let changed = match text {
            Some(text) => settings.set_from_text(scope, key, text).map(|_| ()),
            None => settings.unset(scope, key).map(|_| ()),
        };
        changed
            .and_then(|()| settings.flush())
            .with_context(|| format!("could not save `{key}` in the user's settings"))
    }
}

/// The list until `s` or Esc, with `enabled` changed as the keys say; `None` off a terminal.
fn choose(offered: &[Offered], enabled: &mut Vec<String>) -> Option<Ending> {
    let mut cursor = 0;
    loop {
        let marked = enabled.clone();
        let row = |index: usize| {
            offered.get(index).map_or_else(String::new, |model| {
                let mark = if marked.contains(&model.spec) {
                    "[x]"
                } else {
                    "[ ]"
                };
                format!("{mark} {}", model.row)
            })
        };
        let detail = |index: usize| {
            offered
                .get(index)
                .map_or_else(String::new, |model| model.spec.clone())
        };
        let title = format!(
            "Models Ctrl-P steps through: {} of {} on",
            marked.len(),
            offered.len()
        );
        let list = List {
            title: &title,
            help: "Enter on/off · a all · c none · s save to settings · Esc keep for this chat",
            count: offered.len(),
            row: &row,
            detail: &detail,
            keys: "acs",
        };
        match pick(&list, cursor).ok()? {
            Picked::Chosen(index) => {
                cursor = index;
                if let Some(model) = offered.get(index) {
                    toggle(enabled, &model.spec);
                }
            }
            Picked::Key('a', index) => {
                cursor = index;
                for model in offered {
                    if !enabled.contains(&model.spec) {
                        enabled.push(model.spec.clone());
                    }
                }
            }
            Picked::Key('c', index) => {
                cursor = index;
                enabled.clear();
            }
            Picked::Key('s', _) => return Some(Ending::Save),
            Picked::Key(_, _) | Picked::Left => return Some(Ending::Keep),
        }
    }
}

/// `spec` off when on, else on at the end of the order.
fn toggle(enabled: &mut Vec<String>, spec: &str) {
    match enabled.iter().position(|on| on == spec) {
        Some(index) => {
            enabled.remove(index);
        }
        None => enabled.push(spec.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_turned_on_goes_last_and_off_leaves_the_order() {
        let mut enabled = vec!["a/one".to_owned(), "a/two".to_owned()];
        toggle(&mut enabled, "b/three");
        toggle(&mut enabled, "a/one");
        assert_eq!(enabled, ["a/two", "b/three"]);
    }
}

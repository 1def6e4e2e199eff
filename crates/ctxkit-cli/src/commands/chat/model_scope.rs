//! Ctrl-P: the next model, as Pi's model cycling. It steps through the models `enabledModels`
//! names (each pattern `provider/id`, a bare id, a glob such as `anthropic/*sonnet*`, or a part of
//! a name, with an optional `:level` that sets the thinking level on the switch), else through
//! every model `/model` offers. Only models that can be asked now are stepped to. `/scoped-models`
//! picks them in a list ([`super::scoped_models_picker`]).

use anyhow::{Result, bail};
use globset::GlobBuilder;

use super::Chat;
use super::model_picker::{Offered, offered_models};
use super::thinking::{LEVELS, reasons};
use crate::commands::summary_setup::{llm_environment, variables_environment};

/// A model in the cycle, with the thinking level its pattern asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Scoped {
    pub spec: String,
    pub thinking: Option<String>,
}

/// The models `patterns` name among `offered`, in the patterns' order without repeats, and a
/// warning for each pattern that names none (or cannot be read).
pub(super) fn scoped_models(
    patterns: &[String],
    offered: &[Offered],
) -> (Vec<Scoped>, Vec<String>) {
    let mut scoped: Vec<Scoped> = Vec::new();
    let mut warnings = Vec::new();
    for pattern in patterns {
        let (base, thinking) = split_level(pattern);
        let matched = match matching(base, offered) {
            Ok(matched) => matched,
            Err(reason) => {
                warnings.push(format!("enabledModels: `{pattern}` {reason}"));
                continue;
            }
        };
        if matched.is_empty() {
            warnings.push(format!(
                "enabledModels: no model that can be asked now matches `{pattern}`"
            ));
        }
        for spec in matched {
            if !scoped.iter().any(|model| model.spec == spec) {
                scoped.push(Scoped {
                    spec,
                    thinking: thinking.map(str::to_owned),
                });
            }
        }
    }
    (scoped, warnings)
}

/// `pattern` without a trailing `:level` naming a thinking level, and that level (`--models`'
/// and `--model`'s one reading of the suffix).
pub(super) fn split_level(pattern: &str) -> (&str, Option<&str>) {
    match pattern.rsplit_once(':') {
        Some((base, level)) if LEVELS.contains(&level) => (base, Some(level)),
        _ => (pattern, None),
    }
}

/// The specs of `offered` that `pattern` names: the model it spells out (as `provider/id` or
/// `id`, case aside), else for a glob every match of `provider/id` or of `id`, else every model
/// whose `provider/id` holds it.
fn matching(pattern: &str, offered: &[Offered]) -> Result<Vec<String>, String> {
    let id_of = |spec: &str| spec.split_once('/').map_or(spec, |(_, id)| id).to_owned();
    let select = |keep: &dyn Fn(&str) -> bool| -> Vec<String> {
        offered
            .iter()
            .filter(|model| keep(&model.spec))
            .map(|model| model.spec.clone())
            .collect()
    };
    let exact = select(&|spec| {
        spec.eq_ignore_ascii_case(pattern) || id_of(spec).eq_ignore_ascii_case(pattern)
    });
    if !exact.is_empty() {
        return Ok(exact);
    }
    if pattern.contains(['*', '?', '[']) {
        let glob = GlobBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .map_err(|error| format!("is not a glob ({})", error.kind()))?
            .compile_matcher();
        return Ok(select(&|spec| {
            glob.is_match(spec) || glob.is_match(id_of(spec))
        }));
    }
    let lowered = pattern.to_lowercase();
    Ok(select(&|spec| spec.to_lowercase().contains(&lowered)))
}

/// The model after `current` in `scope`; `None` when there is no other to go to.
fn next_in_scope<'a>(scope: &'a [Scoped], current: &str) -> Option<&'a Scoped> {
    let next = match scope.iter().position(|model| model.spec == current) {
        Some(index) => scope.get((index + 1) % scope.len())?,
        None => scope.first()?,
    };
    (next.spec != current).then_some(next)
}

impl Chat {
    /// The models Ctrl-P steps through now, among `offered`: those `enabled_models` names (with
    /// a warning per pattern that names none), else every one offered.
    pub(super) fn scope_of(&self, offered: &[Offered]) -> (Vec<Scoped>, Vec<String>) {
        if self.enabled_models.is_empty() {
            let all = offered
                .iter()
                .map(|model| Scoped {
                    spec: model.spec.clone(),
                    thinking: None,
                })
                .collect();
            return (all, Vec::new());
        }
        scoped_models(&self.enabled_models, offered)
    }

    /// The models `/model` and Ctrl-P offer now.
    pub(super) fn offered_now(&self) -> Vec<Offered> {
        // A saved-keys file broken since the chat started offers the variables' keys alone.
        // With the providers `llm.providers` gives a key of their own.
        let keyed: Vec<String> = llm_environment()
            .unwrap_or_else(|_| variables_environment())
            .api_keys
            .into_keys()
            .chain(self.llm_options.providers_with_keys().map(str::to_owned))
            .collect();
        offered_models(&self.llm_options, &keyed, &self.client.config().provider)
    }

    /// Ctrl-P.
    pub(super) async fn cycle_model(&mut self) -> Result<()> {
        let current = self.client.config().display_name();
        let (scope, warnings) = self.scope_of(&self.offered_now());
        for warning in warnings {
            self.ui.notice(&warning);
        }
        let Some(next) = next_in_scope(&scope, &current).cloned() else {
            if self.enabled_models.is_empty() {
                bail!("Only one model can be asked now (set a provider's key for more)");
            }
            bail!("Only one model in scope (enabledModels)");
        };
        self.model(&next.spec).await?;
        match next.thinking {
            Some(level) if level == "off" || reasons(&self.client) => self.thinking(&level).await,
            Some(_) | None => Ok(()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    fn offered(specs: &[&str]) -> Vec<Offered> {
        specs
            .iter()
            .map(|spec| Offered {
                spec: (*spec).to_owned(),
                row: String::new(),
            })
            .collect()
    }

    fn specs(scope: &[Scoped]) -> Vec<&str> {
        scope.iter().map(|model| model.spec.as_str()).collect()
    }

    #[test]
    fn patterns_name_models_exactly_by_glob_or_by_part() {
        let offered = offered(&[
            "anthropic/claude-haiku-4-5",
            "anthropic/claude-sonnet-4-5",
            "openai/gpt-5",
            "openrouter/openai/gpt-5",
        ]);
        let patterns = [
            "*sonnet*:high",
            "openai/gpt-5",
            "haiku",
            "GPT-5",
            "nothing-like-it",
        ]
        .map(str::to_owned);
        let (scope, warnings) = scoped_models(&patterns, &offered);
        assert_eq!(
            specs(&scope),
            [
                "anthropic/claude-sonnet-4-5",
                "openai/gpt-5",
                "openrouter/openai/gpt-5",
                "anthropic/claude-haiku-4-5",
            ]
        );
        assert_eq!(scope[0].thinking.as_deref(), Some("high"));
        assert_eq!(scope[1].thinking, None);
        assert_eq!(
            warnings,
            ["enabledModels: no model that can be asked now matches `nothing-like-it`"]
        );
        let (scope, warnings) = scoped_models(&["[oops".to_owned()], &offered);
        assert!(scope.is_empty());
        assert!(
            warnings[0].starts_with("enabledModels: `[oops` is not a glob"),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_pattern_ending_in_a_colon_word_that_is_no_level_keeps_it() {
        assert_eq!(split_level("ollama/llama3:8b"), ("ollama/llama3:8b", None));
        assert_eq!(
            split_level("openai/gpt-5:low"),
            ("openai/gpt-5", Some("low"))
        );
    }

    #[test]
    fn the_cycle_wraps_and_starts_at_the_first_for_a_model_outside_it() {
        let scope: Vec<Scoped> = ["a/one", "a/two", "b/three"]
            .iter()
            .map(|spec| Scoped {
                spec: (*spec).to_owned(),
                thinking: None,
            })
            .collect();
        assert_eq!(next_in_scope(&scope, "a/one").unwrap().spec, "a/two");
        assert_eq!(next_in_scope(&scope, "b/three").unwrap().spec, "a/one");
        assert_eq!(next_in_scope(&scope, "c/other").unwrap().spec, "a/one");
        assert_eq!(next_in_scope(&scope[..1], "a/one"), None);
        assert_eq!(next_in_scope(&[], "a/one"), None);
    }
}

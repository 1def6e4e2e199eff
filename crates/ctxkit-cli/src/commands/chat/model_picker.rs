//! `/model` with no argument: the models that can be asked now, in the picker, the current one
//! selected, as Pi 1.6's model selector; Enter switches to the one picked. Offered: the models
//! of a provider whose key is set, the user's own `llm.models`, and the current model's provider's.
//! Off a terminal, the list is printed for `/model <provider/id>`. `/model <provider/id>` takes a
//! model of the table (built in, or the user's `llm.models`) only: a typo is refused with the
//! nearest known ids rather than recorded and sent (QA r97).

use anyhow::Result;
use ctxkit_llm::{LlmOptions, ModelLimits, ModelTable};

use super::Chat;
use super::picker::{List, Picked, pick};
use crate::commands::models::{price_of, text_line};
use crate::commands::settings::settings_of_project;
use crate::commands::summary_setup::model_client;

/// How many offered models a `/model` off a terminal prints.
const PRINTED_MODELS: usize = 40;

impl Chat {
    /// `/model [provider/id]`: switches to the model named, or to the one picked.
    pub(super) async fn model(&mut self, rest: &str) -> Result<()> {
        let spec = if rest.is_empty() {
            self.picked_model()
        } else {
            Some(rest.to_owned())
        };
        // The model in use again records no switch.
        if let Some(spec) = spec.filter(|spec| *spec != self.client.config().display_name()) {
            let client = model_client(&self.llm_options, Some(&spec))?;
            let config = client.config();
            if known_models(&self.llm_options)
                .find(&config.provider, &config.model)
                .is_none()
            {
                self.refuse_unknown(&spec);
                return Ok(());
            }
            let client = self.bound(client, &self.thread_session);
            let client = std::sync::Arc::new(client);
            self.agent.switch_model(client.clone()).await?;
            // Each reply may be as long as the new model allows (the first model's limit cut a
            // larger model's replies).
            self.agent
                .set_max_tokens(super::setup::output_limit(&client));
            self.client = client;
            self.follow_thinking_level().await;
            self.follow_summary_model(&settings_of_project(&self.environment));
        }
        let window = self
            .client
            .context_window()
            .map_or_else(|| "unknown".to_owned(), |window| window.to_string());
        self.ui.say(&format!(
            "Model: {} (context window {window})",
            self.client.config().display_name()
        ));
        Ok(())
    }

    /// At startup, a model the table does not know (`--model`, `defaultModel`) is sent to the
    /// provider as a custom id: the chat would run with automatic compaction off and prices
    /// unknown, said only in the banner's parenthesis (QA r101, r104). It still starts, as an id
    /// the table lacks may be one the provider takes, with a warning naming the known models near
    /// it (a typo, likely), if any.
    pub(super) fn warn_of_a_near_miss(&self) {
        if self.client.context_window().is_some() {
            return;
        }
        let spec = self.client.config().display_name();
        let provider = self.client.config().provider.as_str();
        if ctxkit_llm::find_provider(provider).is_some_and(|known| known.key_env.is_none()) {
            self.warn_of_a_local_window(&spec, provider);
            return;
        }
        let nearest = nearest_models(&known_models(&self.llm_options), &spec);
        let guess = if nearest.is_empty() {
            String::new()
        } else {
            format!(" (did you mean `{}`?)", nearest.join("`, `"))
        };
        self.ui.error(&format!(
            "warning: `{spec}` is no known model{guess}: it is sent to the provider as a custom \
             id; its window and prices are unknown, so automatic compaction is off"
        ));
        // Print mode has no `/model` to type: the flag is what picks the model there.
        self.ui.notice(if self.ui.has_input_line() {
            "hint: `/model` switches to a known one; to keep this id, add it to `llm.models` with \
             its `contextWindow`"
        } else {
            "hint: `--model` takes a known one (`ctxkit models` lists them); to keep this id, add it \
             to `llm.models` with its `contextWindow`"
        });
    }

    /// A model of a local server (Ollama, LM Studio, llama.cpp, vLLM) runs with the window the
    /// server gives it, which no table knows: the warning says how to state it, not to pick a
    /// known model (QA: the README's own `ollama/…` example was told "`--model` takes a known
    /// one").
    fn warn_of_a_local_window(&self, spec: &str, provider: &str) {
        self.ui.error(&format!(
            "warning: `{spec}` runs with the window its server gives it, which ctxkit does not \
             know: automatic compaction is off until it is stated"
        ));
        let id = spec.strip_prefix(&format!("{provider}/")).unwrap_or(spec);
        let model = serde_json::json!({"provider": provider, "id": id, "contextWindow": 32768});
        self.ui.notice(&format!(
            "hint: add it to `llm.models` in settings.json with the window the server runs it \
             with (Ollama: the model's `num_ctx`), e.g. {model}"
        ));
    }

    /// Says that `spec` is no model of the table, with the nearest ones: nothing is switched.
    fn refuse_unknown(&self, spec: &str) {
        let nearest = nearest_models(&known_models(&self.llm_options), spec);
        let guess = match nearest.as_slice() {
            [] => String::new(),
            [one] => format!("; did you mean `{one}`?"),
            several => format!("; did you mean one of `{}`?", several.join("`, `")),
        };
        self.ui.error(&format!(
            "Unknown model `{spec}`: neither in `llm.models` nor a known model{guess}"
        ));
        self.ui.notice(
            "hint: `/model` alone picks among the models that can be asked (`ctxkit models` lists \
             every known one); to use another id of a provider, add it to `llm.models`, then `/reload`",
        );
    }

    /// The model picked among those offered; `None` when the user stayed. Off a terminal, the
    /// offered models are printed to name one.
    fn picked_model(&self) -> Option<String> {
        let current = self.client.config().display_name();
        let offered = self.offered_now();
        match pick_model(&offered, &current) {
            Ok(picked) => picked.filter(|spec| *spec != current),
            Err(_) => {
                for model in offered.iter().take(PRINTED_MODELS) {
                    self.ui.line(&format!("  {}", model.row));
                }
                if offered.len() > PRINTED_MODELS {
                    self.ui.say(&format!(
                        "  … and {} more (`ctxkit models` lists every known model)",
                        offered.len() - PRINTED_MODELS
                    ));
                }
                self.ui.info("/model <provider/id> switches to one of them");
                None
            }
        }
    }
}

/// One model offered: `provider/id` and its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Offered {
    pub spec: String,
    pub row: String,
}

/// The models `/model` offers, sorted by `provider/id`: every known model whose provider has a
/// key in `keyed` or is `current_provider`, and every model the user declared.
pub(super) fn offered_models(
    options: &LlmOptions,
    keyed: &[String],
    current_provider: &str,
) -> Vec<Offered> {
    let table = known_models(options);
    let declared = |model: &ModelLimits| {
        options
            .models
            .iter()
            .any(|own| own.provider == model.provider && own.id == model.id)
    };
    let mut offered: Vec<Offered> = table
        .iter()
        .filter(|model| {
            model.provider == current_provider || keyed.contains(&model.provider) || declared(model)
        })
        .map(|model| Offered {
            spec: format!("{}/{}", model.provider, model.id),
            row: text_line(model, price_of(&options.model_costs, model).as_ref()),
        })
        .collect();
    offered.sort_by(|a, b| a.spec.cmp(&b.spec));
    offered.dedup_by(|a, b| a.spec == b.spec);
    offered
}

/// The known models: the built-in table and the user's `llm.models`.
pub(super) fn known_models(options: &LlmOptions) -> ModelTable {
    let mut table = ModelTable::builtin();
    for model in &options.models {
        table.insert(model.clone());
    }
    table
}

/// The known models nearest to `spec` by edit distance (`provider/id`, or the id alone when
/// `spec` names no provider), at most three, nearest first; none when none is a plausible typo.
fn nearest_models(table: &ModelTable, spec: &str) -> Vec<String> {
    const MOST: usize = 3;
    let wanted = spec.to_lowercase();
    let mut near: Vec<(usize, String)> = table
        .iter()
        .map(|model| {
            let full = format!("{}/{}", model.provider, model.id);
            let compared = if wanted.contains('/') {
                full.to_lowercase()
            } else {
                model.id.to_lowercase()
            };
            (strsim::damerau_levenshtein(&wanted, &compared), full)
        })
        .filter(|(distance, _)| *distance <= (wanted.len() / 4).max(2))
        .collect();
    near.sort();
    near.dedup_by(|a, b| a.1 == b.1);
    near.into_iter().take(MOST).map(|(_, full)| full).collect()
}

/// The picker over `offered`, on `current`: the `provider/id` picked; `None` when the user left
/// it; `Err` off a terminal.
pub(super) fn pick_model(offered: &[Offered], current: &str) -> std::io::Result<Option<String>> {
    let start = offered
        .iter()
        .position(|model| model.spec == current)
        .unwrap_or(0);
    let row = |index: usize| {
        offered.get(index).map_or_else(String::new, |model| {
            let mark = if model.spec == current { "● " } else { "  " };
            format!("{mark}{}", model.row)
        })
    };
    let detail = |index: usize| {
        offered
            .get(index)
            .map_or_else(String::new, |model| format!("/model {}", model.spec))
    };
    let list = List {
        title: "Switch to which model? (the session records the change)",
        help: "↑/↓ j/k move · Enter switch · Esc stay",
        count: offered.len(),
        row: &row,
        detail: &detail,
        keys: "",
    };
    match pick(&list, start)? {
        Picked::Chosen(index) => Ok(offered.get(index).map(|model| model.spec.clone())),
        Picked::Key(_, _) | Picked::Left => Ok(None),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_models_are_plausible_typos_nearest_first() {
        let mut options = LlmOptions::default();
        for id in ["coder", "coder-large", "writer"] {
            options.models.push(ModelLimits {
                provider: "mock".into(),
                id: id.into(),
                context_window: 16_000,
                max_output: 2_048,
                reasoning: false,
                images: false,
                adaptive_thinking: false,
                xhigh_effort: None,
                chat_compat: Default::default(),
            });
        }
        let table = known_models(&options);
        assert_eq!(nearest_models(&table, "mock/codr"), ["mock/coder"]);
        assert_eq!(nearest_models(&table, "codr"), ["mock/coder"]);
        assert!(nearest_models(&table, "mock/something-else").is_empty());
    }

    #[test]
    fn offered_are_the_keyed_providers_models_the_users_own_and_the_current_providers() {
        let mut options = LlmOptions::default();
        options.models.push(ModelLimits {
            provider: "mine".into(),
            id: "local-1".into(),
            context_window: 32_000,
            max_output: 4_096,
            reasoning: false,
            images: true,
            adaptive_thinking: false,
            xhigh_effort: None,
            chat_compat: Default::default(),
        });
        let offered = offered_models(&options, &["anthropic".to_owned()], "mock");
        let specs: Vec<&str> = offered.iter().map(|model| model.spec.as_str()).collect();
        assert!(specs.contains(&"mine/local-1"), "{specs:?}");
        assert!(specs.iter().any(|spec| spec.starts_with("anthropic/")));
        assert!(
            !specs.iter().any(|spec| spec.starts_with("openai/")),
            "{specs:?}"
        );
        let mut sorted = specs.clone();
        sorted.sort_unstable();
        assert_eq!(specs, sorted);
        let row = &offered
            .iter()
            .find(|model| model.spec == "mine/local-1")
            .unwrap()
            .row;
        assert!(row.starts_with("mine/local-1 "), "{row}");
        assert!(row.contains("32000 context"), "{row}");
        assert!(row.ends_with("price unknown"), "{row}");
    }
}

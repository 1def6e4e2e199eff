//! A Pi `models.json` import ([`crate::import_pi_models`]) written into the user's settings,
//! never over what they already hold.

use serde_json::Value;

use super::{KeyPath, SettingsManager, document};
use crate::PiImport;
use crate::error::{SettingsError, SettingsScope};

/// What [`SettingsManager::apply_pi_import`] did with one part of an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportStep {
    /// `llm.providers.<name>` set: its host, its wire format, whether it carries a key, and its
    /// headers' names (never a key's or a header's value).
    EndpointSet {
        name: String,
        base_url: String,
        api: Option<String>,
        with_key: bool,
        header_names: Vec<String>,
    },
    /// Not set: the user's settings already hold an entry for the provider.
    EndpointKept { name: String },
    /// Not set: `llm.baseUrl`, `llm.apiKey` or `llm.headers` are the provider's already (the
    /// settings' provider), and two places would say where its key goes.
    EndpointOfTheSettings { name: String },
    /// Added to `llm.models`.
    ModelAdded {
        provider: String,
        id: String,
        context_window: u64,
    },
    /// Not added: the user's `llm.models` declares it already.
    ModelKept { provider: String, id: String },
}

impl SettingsManager {
    /// Writes `import` into the user's settings (in memory; [`SettingsManager::flush`] writes the
    /// file), never over what they hold: an `llm.providers` entry already there, or a model
    /// `llm.models` declares already, is kept, and the provider `llm.baseUrl` is for gets no
    /// entry while that is set.
    pub fn apply_pi_import(&mut self, import: &PiImport) -> Result<Vec<ImportStep>, SettingsError> {
        let mut steps = Vec::new();
        let settings_provider = self.endpoint_provider();
        for (name, entry) in &import.endpoints {
            let key = super::key_path::entry_key("llm.providers", name);
            if self.get_in(SettingsScope::Global, &key)?.is_some() {
                steps.push(ImportStep::EndpointKept { name: name.clone() });
                continue;
            }
            if settings_provider.as_deref() == Some(name.as_str()) {
                steps.push(ImportStep::EndpointOfTheSettings { name: name.clone() });
                continue;
            }
            self.set(SettingsScope::Global, &key, entry.clone())?;
            steps.push(endpoint_set(name, entry));
        }
        let mut models = match self.global_value("llm.models") {
            Some(Value::Array(models)) => models,
            _ => Vec::new(),
        };
        let before = models.len();
        for model in &import.models {
            let provider = model["provider"].as_str().unwrap_or_default().to_owned();
            let id = model["id"].as_str().unwrap_or_default().to_owned();
            let declared = models.iter().any(|known| {
                known.get("provider").and_then(Value::as_str) == Some(provider.as_str())
                    && known.get("id").and_then(Value::as_str) == Some(id.as_str())
            });
            if declared {
                steps.push(ImportStep::ModelKept { provider, id });
                continue;
            }
            // A whole number written as a float (`65536.0`) is the window it says (QA
            // 2026-12-07: the summary printed "window 0").
            let context_window = model["contextWindow"]
                .as_u64()
                .or_else(|| {
                    model["contextWindow"]
                        .as_f64()
                        .filter(|window| window.fract() == 0.0 && *window >= 0.0)
                        .map(|window| window as u64)
                })
                .unwrap_or_default();
            models.push(model.clone());
            steps.push(ImportStep::ModelAdded {
                provider,
                id,
                context_window,
            });
        }
        if models.len() > before {
            self.set(SettingsScope::Global, "llm.models", Value::Array(models))?;
        }
        Ok(steps)
    }

    /// The provider `llm.baseUrl`, `llm.apiKey` or `llm.headers` are for, when any is set: the
    /// default model's, else the default provider.
    fn endpoint_provider(&self) -> Option<String> {
        let settings = self.settings();
        let llm = &settings.llm;
        let set = llm.base_url.is_some() || llm.api_key.is_some() || llm.headers.is_some();
        let of_model = settings
            .default_model
            .as_deref()
            .and_then(|model| model.split_once('/'))
            .map(|(provider, _)| provider.to_owned());
        set.then(|| of_model.or_else(|| settings.default_provider.clone()))
            .flatten()
    }

    fn global_value(&self, key: &str) -> Option<Value> {
        let path = KeyPath::parse(key).ok()?;
        document::get_path(&self.state(SettingsScope::Global).document, &path).cloned()
    }
}

fn endpoint_set(name: &str, entry: &Value) -> ImportStep {
    let header_names = entry
        .get("headers")
        .and_then(Value::as_object)
        .map(|headers| headers.keys().cloned().collect())
        .unwrap_or_default();
    ImportStep::EndpointSet {
        name: name.to_owned(),
        base_url: entry["baseUrl"].as_str().unwrap_or_default().to_owned(),
        api: entry.get("api").and_then(Value::as_str).map(str::to_owned),
        with_key: entry.get("apiKey").is_some(),
        header_names,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::LeftOut;

    fn import() -> PiImport {
        PiImport {
            endpoints: vec![
                (
                    "lab".to_owned(),
                    json!({"baseUrl": "http://10.0.0.7/v1", "api": "openai-completions", "apiKey": "sk-lab", "headers": {"X-Team": "core"}}),
                ),
                (
                    "anthropic".to_owned(),
                    json!({"baseUrl": "https://gw.example/anthropic"}),
                ),
                ("gw".to_owned(), json!({"baseUrl": "https://gw.example/v1"})),
            ],
            models: vec![
                json!({"provider": "lab", "id": "qwen3", "contextWindow": 32768, "maxOutput": 8192}),
                json!({"provider": "lab", "id": "mine", "contextWindow": 1000}),
            ],
            left_out: vec![LeftOut {
                what: "x".to_owned(),
                why: "y".to_owned(),
            }],
        }
    }

    /// QA 2026-12-07: a window written as `65536.0` was written as it is but said as "window 0".
    #[test]
    fn a_window_written_as_a_float_is_said_as_it_is() {
        let mut settings = SettingsManager::in_memory(serde_json::Map::new());
        let import = PiImport {
            endpoints: Vec::new(),
            models: vec![json!({"provider": "lab", "id": "q", "contextWindow": 65536.0})],
            left_out: Vec::new(),
        };
        let steps = settings.apply_pi_import(&import).unwrap();
        assert_eq!(
            steps,
            [ImportStep::ModelAdded {
                provider: "lab".to_owned(),
                id: "q".to_owned(),
                context_window: 65536,
            }]
        );
    }

    #[test]
    fn an_import_keeps_what_the_settings_hold() {
        let mut settings = SettingsManager::in_memory(
            json!({
                "defaultModel": "anthropic/claude-sonnet-4-5",
                "llm": {
                    "baseUrl": "https://mine.example/anthropic",
                    "providers": {"gw": {"baseUrl": "https://other.example/v1"}},
                    "models": [{"provider": "lab", "id": "mine", "contextWindow": 2000, "note": "kept"}],
                },
            })
            .as_object()
            .cloned()
            .unwrap(),
        );
        let steps = settings.apply_pi_import(&import()).unwrap();
        assert_eq!(
            steps,
            [
                ImportStep::EndpointSet {
                    name: "lab".to_owned(),
                    base_url: "http://10.0.0.7/v1".to_owned(),
                    api: Some("openai-completions".to_owned()),
                    with_key: true,
                    header_names: vec!["X-Team".to_owned()],
                },
                ImportStep::EndpointOfTheSettings {
                    name: "anthropic".to_owned()
                },
                ImportStep::EndpointKept {
                    name: "gw".to_owned()
                },
                ImportStep::ModelAdded {
                    provider: "lab".to_owned(),
                    id: "qwen3".to_owned(),
                    context_window: 32768,
                },
                ImportStep::ModelKept {
                    provider: "lab".to_owned(),
                    id: "mine".to_owned()
                },
            ]
        );
        let typed = settings.settings();
        assert_eq!(typed.llm.providers["lab"].base_url, "http://10.0.0.7/v1");
        assert_eq!(
            typed.llm.providers["gw"].base_url,
            "https://other.example/v1"
        );
        assert!(!typed.llm.providers.contains_key("anthropic"));
        let models = settings.global_value("llm.models").unwrap();
        assert_eq!(models[0]["note"], "kept");
        assert_eq!(models[1]["id"], "qwen3");
        // A second import changes nothing.
        let again = settings.apply_pi_import(&import()).unwrap();
        assert!(
            again.iter().all(|step| !matches!(
                step,
                ImportStep::EndpointSet { .. } | ImportStep::ModelAdded { .. }
            )),
            "{again:?}"
        );
    }
}

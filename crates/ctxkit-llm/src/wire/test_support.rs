//! What the wire format tests share: a provider configuration by model id, a message from its JSON.

use ctxkit_protocol::AgentMessage;
use serde_json::Value;

use crate::config::{EnvSettings, LlmOptions, ModelRole, ProviderConfig, resolve_model};

/// The configuration of `model` (`provider/id` or an id) with a key, as the agent resolves it.
pub(crate) fn config(model: &str) -> ProviderConfig {
    let options = LlmOptions {
        model: Some(model.to_owned()),
        api_key: Some(ctxkit_secrets::ApiKey::new("k")),
        ..LlmOptions::default()
    };
    resolve_model(&options, &EnvSettings::default(), ModelRole::Agent)
        .unwrap()
        .unwrap()
}

/// A message as a session stores it.
pub(crate) fn message(value: Value) -> AgentMessage {
    serde_json::from_value(value).unwrap()
}

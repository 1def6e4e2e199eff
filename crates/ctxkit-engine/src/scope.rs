//! Scoped work. A scope runs a sub-task (a skill, a search) in an in-memory child engine; only its
//! result enters the parent, as a custom message, so the sub-task's process never takes room in the
//! parent's context. (Forgetting a span is `forget.rs`.)

use ctxkit_protocol::MessageContent;
use ctxkit_session::Session;
use ctxkit_tokens::estimate_tokens;
use serde_json::json;

use crate::engine::{Engine, EngineOptions};
use crate::error::Result;
use crate::hooks::HookSet;
use crate::messages::transcript;

/// The custom message type of a scope's result.
pub const SCOPE_RESULT_TYPE: &str = "ctxkit.scope-result";

/// A sub-task running in its own in-memory engine.
#[derive(Debug)]
pub struct Scope {
    name: String,
    parent: Engine,
    child: Engine,
}

impl Scope {
    /// The child engine the sub-task runs in.
    pub fn engine(&self) -> &Engine {
        &self.child
    }

    /// Ends the sub-task: appends `result` to the parent as a custom message (with the child's size
    /// in its details) and returns the new entry's id. The child's messages are discarded.
    pub async fn finish(self, result: &str) -> Result<String> {
        let child_messages = transcript(&self.child.lock().await.session)?;
        let child_tokens: u64 = child_messages.iter().map(estimate_tokens).sum();
        let mut state = self.parent.lock().await;
        Ok(state.session.append_custom_message_entry(
            SCOPE_RESULT_TYPE,
            MessageContent::Text(format!("Result of {}:\n\n{result}", self.name)),
            true,
            Some(json!({
                "scope": self.name,
                "messages": child_messages.len(),
                "tokens": child_tokens,
            })),
        )?)
    }
}

impl Engine {
    /// Starts a scope named `name` with the same settings, model and summarizer, and no hooks.
    pub async fn scope(&self, name: &str) -> Scope {
        let state = self.lock().await;
        let child = Engine::new(
            Session::in_memory(state.session.cwd()),
            EngineOptions {
                settings: ctxkit_settings_without_hooks(&state.settings),
                model: state.model.clone(),
                summarizer: self.summarizer(),
                prompts: self.inner.prompts.clone(),
                hooks: HookSet::new(),
                thinking_level: state.thinking_level.clone(),
                project: Some(self.project()),
            },
        );
        Scope {
            name: name.to_owned(),
            parent: self.clone(),
            child,
        }
    }
}

fn ctxkit_settings_without_hooks(
    settings: &crate::settings::EngineSettings,
) -> crate::settings::EngineSettings {
    crate::settings::EngineSettings {
        hooks: Vec::new(),
        ..settings.clone()
    }
}

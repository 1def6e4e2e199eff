//! The engine's small verbs: the session changes a surface asks for by name (name the session,
//! label an entry, switch the model, undo a compaction, write what is held back), so no surface
//! holds the engine's session. Each takes the state lock like every other operation, so it waits
//! for a running compaction and never interleaves with one.

use std::path::PathBuf;

use ctxkit_compaction::UndoOutcome;
use ctxkit_protocol::Usage;
use serde_json::Value;

use crate::check::ModelInfo;
use crate::engine::Engine;
use crate::error::Result;

impl Engine {
    /// Names the session (a `session_info` entry; the name is trimmed as Pi trims it). Returns the
    /// entry's id.
    pub async fn name_session(&self, name: &str) -> Result<String> {
        Ok(self.lock().await.session.append_session_info(name)?)
    }

    /// Labels `entry_id`, or removes its label with `None` (a `label` entry). Fails with
    /// `EntryNotFound` (nothing written) when no entry has that id.
    pub async fn set_label(&self, entry_id: &str, label: Option<&str>) -> Result<String> {
        Ok(self
            .lock()
            .await
            .session
            .append_label_change(entry_id, label)?)
    }

    /// Switches the conversation to `model` and records the switch (a `model_change` entry), in one
    /// step under the lock: the next check measures against its window. Returns the entry's id.
    pub async fn switch_model(&self, model: ModelInfo) -> Result<String> {
        let mut state = self.lock().await;
        let id = state
            .session
            .append_model_change(&model.provider, &model.id)?;
        state.replace_model(Some(model));
        Ok(id)
    }

    /// Sets the thinking level (`off`, `minimal` … `xhigh`) and records it (a
    /// `thinking_level_change` entry, as Pi's `/thinking` does), in one step under the lock:
    /// summaries ask for it from now on. Returns the entry's id.
    pub async fn change_thinking_level(&self, level: &str) -> Result<String> {
        let mut state = self.lock().await;
        let id = state.session.append_thinking_level_change(level)?;
        state.thinking_level = Some(level.to_owned());
        Ok(id)
    }

    /// Sets the thinking level summaries ask for without recording it (a surface restoring the
    /// level a session recorded, or its default).
    pub async fn set_thinking_level(&self, level: Option<String>) {
        self.lock().await.thinking_level = level;
    }

    /// The thinking level in force (`None`: the model is asked for none).
    pub async fn thinking_level(&self) -> Option<String> {
        self.lock().await.thinking_level.clone()
    }

    /// Appends extension state (a `custom` entry, never part of the context). Returns its id.
    pub async fn append_custom_entry(
        &self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String> {
        Ok(self
            .lock()
            .await
            .session
            .append_custom_entry(custom_type, data)?)
    }

    /// Records what a request outside the conversation cost (`kind`: `cache_warm`, …) as a `usage`
    /// entry; it counts in totals and is never part of a context. Returns its id.
    pub async fn record_usage(
        &self,
        kind: &str,
        model: &ModelInfo,
        usage: Usage,
    ) -> Result<String> {
        Ok(self
            .lock()
            .await
            .session
            .append_usage(kind, &model.provider, &model.id, usage, None)?)
    }

    /// Goes back to before the last compaction on the branch (append-only: a marker entry, then
    /// what came after the compaction again, as `undo_last_compaction` carries it) and writes what
    /// the deferred first write held back. `None` when the branch has no compaction.
    pub async fn undo_compaction(&self) -> Result<Option<UndoOutcome>> {
        let mut state = self.lock().await;
        let undone = ctxkit_compaction::undo_last_compaction(&mut state.session)?;
        state.session.flush_pending()?;
        Ok(undone)
    }

    /// Writes the entries Pi's deferred first write holds back (no assistant message yet), so every
    /// id handed out is on disk; nothing to do when none are held.
    pub async fn flush_pending(&self) -> Result<()> {
        Ok(self.lock().await.session.flush_pending()?)
    }

    /// Writes the whole session to a new file beside the old one and goes on there (`/save` after the
    /// file changed under the session). `None` for an in-memory session.
    pub async fn write_afresh(&self) -> Result<Option<PathBuf>> {
        Ok(self.lock().await.session.write_afresh()?)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ctxkit_compaction::Prompts;
    use ctxkit_protocol::{AgentMessage, EntryKind};
    use ctxkit_session::Session;
    use ctxkit_summarizer_offline::OfflineSummarizer;
    use serde_json::json;

    use crate::{Engine, EngineOptions, EngineSettings, HookSet, ModelInfo};

    fn model(id: &str, context_window: u64) -> ModelInfo {
        ModelInfo {
            provider: "anthropic".to_owned(),
            id: id.to_owned(),
            context_window,
            cache: None,
        }
    }

    fn engine() -> Engine {
        Engine::new(
            Session::in_memory("/work"),
            EngineOptions {
                settings: EngineSettings::from_settings(&ctxkit_settings::Settings::read(&json!(
                    {}
                ))),
                model: Some(model("small", 1_000)),
                summarizer: Arc::new(OfflineSummarizer::default()),
                prompts: Prompts::default(),
                hooks: HookSet::new(),
                thinking_level: None,
                project: None,
            },
        )
    }

    fn last_kind(engine_session: &Session) -> EntryKind {
        let entry = engine_session.entries().last().unwrap();
        entry.parse().unwrap().kind
    }

    #[tokio::test]
    async fn switching_the_model_records_it_and_measures_against_its_window() {
        let engine = engine();
        let id = engine.switch_model(model("large", 200_000)).await.unwrap();
        assert_eq!(engine.model().await, Some(model("large", 200_000)));
        let kind = engine.with_session(last_kind).await;
        let EntryKind::ModelChange(change) = kind else {
            panic!("not a model change: {kind:?}");
        };
        assert_eq!(
            (change.provider.as_str(), change.model_id.as_str()),
            ("anthropic", "large")
        );
        assert_eq!(
            engine
                .with_session(|session| session.leaf_id().map(str::to_owned))
                .await,
            Some(id)
        );
    }

    #[tokio::test]
    async fn a_label_on_no_entry_writes_nothing() {
        let engine = engine();
        let user = json!({"role": "user", "content": "hello"});
        let id = engine
            .append(serde_json::from_value::<AgentMessage>(user).unwrap())
            .await
            .unwrap();
        assert!(engine.set_label("missing", Some("x")).await.is_err());
        let count = engine.with_session(|session| session.entries().len()).await;
        engine.set_label(&id, Some("start")).await.unwrap();
        engine.name_session("  my session  ").await.unwrap();
        assert_eq!(
            engine.with_session(|session| session.entries().len()).await,
            count + 2
        );
        assert_eq!(
            engine.with_session(Session::session_name).await.as_deref(),
            Some("my session")
        );
    }

    #[tokio::test]
    async fn undo_without_a_compaction_is_none() {
        assert!(engine().undo_compaction().await.unwrap().is_none());
    }
}

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

/// The entry types a context's messages come from: a branch holding none has no conversation yet.
const CONTEXT_KINDS: [&str; 4] = ["message", "custom_message", "compaction", "branch_summary"];

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

    /// Records what a surface starts talking to the session with, as Pi 1.6.0 does when it starts
    /// an agent on a session: a session holding no message yet gets a `model_change` of the
    /// engine's model and a `thinking_level_change` of `thinking_level` (held back with the rest
    /// until the first message, as every new session's entries); one holding messages but no
    /// `thinking_level_change` on its branch gets that one alone (Pi's "restore missing settings
    /// metadata"). A new session whose surface already recorded a `/model` or `/thinking` keeps
    /// that one rather than a second. Another agent continuing the file then talks to it as this
    /// one did, not at its own default level. Returns the ids written, none when the session
    /// records both.
    pub async fn record_starting_settings(&self, thinking_level: &str) -> Result<Vec<String>> {
        let mut state = self.lock().await;
        // What the branch holds, read off its entries' tags: building the context would parse
        // every message of a large session at each `agent.run`.
        let (has_messages, has_model, has_level) = state.session.branch_path(None).iter().fold(
            (false, false, false),
            |(messages, model, level), entry| {
                let kind = entry.type_name();
                // A `!command` typed before the first prompt is the user's, not a conversation
                // begun with another model: the model is still recorded (QA, 2026-12-07).
                let conversation =
                    CONTEXT_KINDS.contains(&kind) && entry.role() != Some("bashExecution");
                (
                    messages || conversation,
                    model || kind == "model_change",
                    level || kind == "thinking_level_change",
                )
            },
        );
        let mut written = Vec::new();
        if !has_messages
            && !has_model
            && let Some(model) = state.model.clone()
        {
            written.push(
                state
                    .session
                    .append_model_change(&model.provider, &model.id)?,
            );
        }
        if !has_level {
            written.push(state.session.append_thinking_level_change(thinking_level)?);
        }
        Ok(written)
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

    /// Takes the session file's writer lock now (`Session::hold_lock`), so work that ends in a
    /// write (a summary the model is paid for) is refused before it starts when another process
    /// or client writes the session, or the file changed since it was read.
    pub async fn hold_lock(&self) -> Result<()> {
        Ok(self.lock().await.session.hold_lock()?)
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

    fn kinds(engine_session: &Session) -> Vec<String> {
        engine_session
            .entries()
            .iter()
            .map(|entry| entry.type_name().to_owned())
            .collect()
    }

    /// QA r102 (interop), finding 4: as Pi 1.6.0 starts an agent on a session, a new one records
    /// the model and level first; one with messages and no level gets the level alone; one
    /// recording both gets nothing.
    #[tokio::test]
    async fn starting_settings_are_recorded_as_pi_records_them() {
        let engine = engine();
        engine.record_starting_settings("medium").await.unwrap();
        assert_eq!(
            engine.with_session(kinds).await,
            ["model_change", "thinking_level_change"]
        );
        let context = engine.with_session(Session::build_context).await;
        assert_eq!(context.thinking_level, "medium");
        let recorded = context.model.unwrap();
        assert_eq!(
            (recorded.provider.as_deref(), recorded.model_id.as_deref()),
            (Some("anthropic"), Some("small"))
        );
        let user = json!({"role": "user", "content": "hello", "timestamp": 1});
        engine
            .append(serde_json::from_value::<AgentMessage>(user).unwrap())
            .await
            .unwrap();
        assert!(
            engine
                .record_starting_settings("high")
                .await
                .unwrap()
                .is_empty()
        );

        let continued = self::engine();
        let user = json!({"role": "user", "content": "older", "timestamp": 1});
        continued
            .append(serde_json::from_value::<AgentMessage>(user).unwrap())
            .await
            .unwrap();
        continued.record_starting_settings("low").await.unwrap();
        assert_eq!(
            continued.with_session(kinds).await,
            ["message", "thinking_level_change"]
        );
    }

    /// A new session whose user already chose a level (`/thinking` before the first prompt)
    /// gets the model alone; one that chose a model gets the level alone: never a second record
    /// of a choice, which would come after the user's and undo it for the next reader.
    #[tokio::test]
    async fn a_choice_made_before_the_first_prompt_is_not_recorded_again() {
        let leveled = engine();
        leveled.change_thinking_level("high").await.unwrap();
        leveled.record_starting_settings("off").await.unwrap();
        assert_eq!(
            leveled.with_session(kinds).await,
            ["thinking_level_change", "model_change"]
        );
        let context = leveled.with_session(Session::build_context).await;
        assert_eq!(context.thinking_level, "high");

        let switched = engine();
        switched
            .switch_model(model("other", 100_000))
            .await
            .unwrap();
        switched.record_starting_settings("low").await.unwrap();
        assert_eq!(
            switched.with_session(kinds).await,
            ["model_change", "thinking_level_change"]
        );
        let recorded = switched
            .with_session(Session::build_context)
            .await
            .model
            .unwrap();
        assert_eq!(recorded.model_id.as_deref(), Some("other"));
    }

    #[tokio::test]
    async fn undo_without_a_compaction_is_none() {
        assert!(engine().undo_compaction().await.unwrap().is_none());
    }
}

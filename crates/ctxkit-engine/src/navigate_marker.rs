//! Making a leaf move survive reopening. Pi and ctxkit open a session at its last entry, so a move
//! that wrote no summary entry was lost when the session was opened again (a chat ended after a
//! rewind, a serve client that reconnected): the next prompt went on the branch left. Such a move
//! is recorded by a navigation marker, a `custom` entry no context shows, at the new leaf. Every
//! surface that moves the leaf (`ctxkit branch`, the chat's `/tree` and rewind, serve's
//! `tree.navigate`) records it here.

use serde_json::json;

use crate::engine::Engine;
use crate::error::Result;
use crate::tree::{NavigateOptions, NavigateOutcome};

/// The `customType` of the entry recording a leaf move made without a summary.
pub const NAVIGATE_MARKER_TYPE: &str = "ctxkit.navigate";

impl Engine {
    /// [`Engine::navigate`], then the move recorded in the session when it wrote no summary entry
    /// ([`Engine::record_leaf_move`]), so it survives reopening. A cancelled move, or one that
    /// left the leaf where it was, records nothing. The session's writer lock is taken first
    /// ([`Engine::hold_lock`]): a session another writer holds is refused before the leaf moves or
    /// a summary is asked of the model.
    pub async fn navigate_recorded(
        &self,
        target_id: &str,
        options: NavigateOptions,
    ) -> Result<NavigateOutcome> {
        self.hold_lock().await?;
        let old_leaf = self.leaf_id().await;
        let mut outcome = self.navigate(target_id, options).await?;
        let unrecorded =
            outcome.summary_entry_id.is_none() && !outcome.cancelled && !outcome.aborted;
        if unrecorded && self.record_leaf_move(old_leaf).await? {
            outcome.marker_entry_id = self.leaf_id().await;
        }
        Ok(outcome)
    }

    /// Records a leaf move made without a summary entry: a navigation marker at the new leaf (at
    /// the start of the session, a new root), written at once. A move that stayed where it was
    /// (the same leaf, or the entry the marker at `old_leaf` stands on) records nothing: a marker
    /// each time grew the tree with empty branches. Whether a marker was written.
    pub async fn record_leaf_move(&self, old_leaf: Option<String>) -> Result<bool> {
        if self.leaf_stayed(old_leaf.as_deref()).await {
            return Ok(false);
        }
        self.append_custom_entry(NAVIGATE_MARKER_TYPE, Some(json!({"fromId": old_leaf})))
            .await?;
        self.flush_pending().await?;
        Ok(true)
    }

    /// Whether the leaf, moved from `old_leaf`, stands where it was: the same entry, or the one a
    /// navigation marker at `old_leaf` stands on (a marker is in no context).
    pub async fn leaf_stayed(&self, old_leaf: Option<&str>) -> bool {
        self.with_session(|session| {
            let new_leaf = session.leaf_id();
            old_leaf == new_leaf
                || old_leaf
                    .and_then(|id| session.entry(id))
                    .filter(|entry| entry.parent_id() == new_leaf)
                    .and_then(|entry| entry.parse().ok())
                    .is_some_and(|entry| {
                        matches!(&entry.kind, ctxkit_protocol::EntryKind::Custom(custom)
                            if custom.custom_type == NAVIGATE_MARKER_TYPE)
                    })
        })
        .await
    }

    async fn leaf_id(&self) -> Option<String> {
        self.with_session(|session| session.leaf_id().map(str::to_owned))
            .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ctxkit_compaction::Prompts;
    use ctxkit_protocol::AgentMessage;
    use ctxkit_session::Session;
    use ctxkit_summarizer_offline::OfflineSummarizer;
    use serde_json::json;

    use super::*;
    use crate::{EngineOptions, EngineSettings, HookSet};

    fn engine(session: Session) -> Engine {
        Engine::new(
            session,
            EngineOptions {
                settings: EngineSettings::default(),
                model: None,
                summarizer: Arc::new(OfflineSummarizer::default()),
                prompts: Prompts::default(),
                hooks: HookSet::new(),
                thinking_level: None,
                project: None,
            },
        )
    }

    fn message(value: serde_json::Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    fn reply(text: &str) -> AgentMessage {
        message(json!({
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop",
        }))
    }

    #[tokio::test]
    async fn a_move_without_a_summary_survives_reopening() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("session.jsonl");
        let first_reply = {
            let engine = engine(Session::create_at("/project", &path));
            engine
                .append(message(json!({"role": "user", "content": "first"})))
                .await
                .unwrap();
            let first_reply = engine.append(reply("one")).await.unwrap();
            engine
                .append(message(json!({"role": "user", "content": "second"})))
                .await
                .unwrap();
            engine.append(reply("two")).await.unwrap();
            let outcome = engine
                .navigate_recorded(&first_reply, NavigateOptions::default())
                .await
                .unwrap();
            assert_eq!(outcome.new_leaf_id.as_deref(), Some(first_reply.as_str()));
            let marker = outcome.marker_entry_id.clone().unwrap();
            let leaf = engine.leaf_id().await;
            assert_eq!(
                leaf.as_deref(),
                Some(marker.as_str()),
                "the marker is the leaf"
            );
            // Going to the same place again writes nothing more.
            let again = engine
                .navigate_recorded(&first_reply, NavigateOptions::default())
                .await
                .unwrap();
            assert_eq!(again.new_leaf_id.as_deref(), Some(first_reply.as_str()));
            assert_eq!(again.marker_entry_id, None);
            first_reply
        };
        let reopened = Session::open(&path).unwrap();
        let leaf = reopened
            .leaf_id()
            .and_then(|id| reopened.entry(id))
            .unwrap();
        assert_eq!(leaf.parent_id(), Some(first_reply.as_str()));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(NAVIGATE_MARKER_TYPE).count(), 1, "{text}");
    }
}

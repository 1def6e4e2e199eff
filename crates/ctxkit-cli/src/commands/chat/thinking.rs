//! The model and thinking level of a session (and whether reasoning is shown, Ctrl-T):
//! `/thinking [level]` sets the level and records it
//! (a `thinking_level_change` entry), and a continued or resumed session is talked to with the
//! model and level it recorded last, as Pi restores them.

use anyhow::{Result, bail};
use ctxkit_llm::{ModelClient, ReasoningLevel};
use ctxkit_session::Session;

use super::Chat;

/// The levels `/thinking` takes, as Pi names them (`max`, Pi 1.6's, is sent as `xhigh`).
pub(super) const LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// The level after `current` among `supported` (the levels Shift-Tab steps through, as Pi's: the
/// model's own), the first after the last or after a level not among them.
fn next_level(current: &str, supported: &[&'static str]) -> &'static str {
    let next = supported
        .iter()
        .position(|level| *level == current)
        .map_or(0, |index| (index + 1) % supported.len().max(1));
    supported.get(next).copied().unwrap_or("off")
}

/// The levels `client`'s model supports (`ctxkit_models::supported_thinking_levels`).
pub(super) fn supported_levels(client: &ModelClient) -> Vec<&'static str> {
    let config = client.config();
    ctxkit_models::supported_thinking_levels(&config.provider, &config.model, reasons(client))
}

/// `level` clamped to what `client`'s model supports, as Pi clamps it, and what to tell the user
/// when it was. A model that does not reason keeps the level (it is asked for none, and a
/// reasoning model switched to later thinks at it again), and so does `off`: it asks the model
/// for no reasoning setting at all, as before levels were clamped, where Pi would raise it to the
/// lowest level of a model that always reasons (`minimal` for `gpt-5-mini`).
pub(super) fn clamped_level(client: &ModelClient, level: &str) -> (String, Option<String>) {
    if !reasons(client) || level == "off" {
        return (level.to_owned(), None);
    }
    let clamped = ctxkit_models::clamp_thinking_level(level, &supported_levels(client));
    let note = (clamped != level).then(|| {
        format!(
            "{} does not support thinking level {level}: using {clamped}",
            client.config().display_name()
        )
    });
    (clamped.to_owned(), note)
}

/// What a session recorded to be talked to with: the model of its last `model_change` or reply,
/// and its last `thinking_level_change`, on the current branch of a session holding messages.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Recorded {
    /// `provider/id`.
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// Whether the session holds messages (a continued one, not a new one).
    pub continued: bool,
}

pub(super) fn recorded(session: &Session) -> Recorded {
    let context = session.build_context();
    if context.messages.is_empty() {
        return Recorded::default();
    }
    let model = context.model.and_then(|model| {
        let provider = model.provider.filter(|provider| !provider.is_empty())?;
        let id = model.model_id.filter(|id| !id.is_empty())?;
        Some(format!("{provider}/{id}"))
    });
    let has_level = session
        .branch_path(None)
        .iter()
        .any(|entry| entry.type_name() == "thinking_level_change");
    Recorded {
        model,
        thinking: has_level.then_some(context.thinking_level),
        continued: true,
    }
}

/// Whether `client`'s model reasons (`ProviderConfig::reasons`).
pub(super) fn reasons(client: &ModelClient) -> bool {
    client.config().reasons()
}

/// The reasoning level `level` asks of `client`: none for `off`, an unknown name or a model that
/// does not reason.
pub(super) fn reasoning_for(client: &ModelClient, level: &str) -> Option<ReasoningLevel> {
    ReasoningLevel::parse(level).filter(|_| reasons(client))
}

impl Chat {
    /// `/thinking [level]`.
    pub(super) async fn thinking(&mut self, rest: &str) -> Result<()> {
        let level = rest.trim();
        if level.is_empty() {
            let current = self.engine.thinking_level().await;
            let current = current.as_deref().unwrap_or("off");
            let note = if reasons(&self.client) {
                String::new()
            } else {
                format!(
                    " (not asked of {}: it does not reason)",
                    self.client.config().display_name()
                )
            };
            self.ui.say(&format!(
                "Thinking level: {current}{note}; /thinking <level> sets one of: {}",
                LEVELS.join(", ")
            ));
            return Ok(());
        }
        if !LEVELS.contains(&level) {
            bail!("No thinking level `{level}`; one of: {}", LEVELS.join(", "));
        }
        if level != "off" && !reasons(&self.client) {
            bail!(
                "{} does not reason (the model table says so); the thinking level is unchanged",
                self.client.config().display_name()
            );
        }
        let (level, note) = clamped_level(&self.client, level);
        if let Some(note) = note {
            self.ui.notice(&note);
        }
        let level = level.as_str();
        // Recorded only when it changes, as Pi's.
        let current = self.engine.thinking_level().await;
        if current.as_deref().unwrap_or("off") != level {
            self.engine.change_thinking_level(level).await?;
            self.follow_thinking_level().await;
        }
        self.ui.say(&format!("Thinking level: {level}"));
        Ok(())
    }

    /// Shift-Tab: the next thinking level, recorded and said as `/thinking <level>` does.
    pub(super) async fn cycle_thinking(&mut self) -> Result<()> {
        if !reasons(&self.client) {
            bail!(
                "{} does not reason (the model table says so); Shift-Tab has no level to move to",
                self.client.config().display_name()
            );
        }
        let current = self.engine.thinking_level().await;
        let next = next_level(
            current.as_deref().unwrap_or("off"),
            &supported_levels(&self.client),
        );
        self.thinking(next).await
    }

    /// Ctrl-T: reasoning shown in full or as one line from now on, and `hideThinkingBlock` saved
    /// in the user's settings, as Pi's.
    pub(super) fn toggle_thinking_blocks(&mut self) -> Result<()> {
        let hidden = !self.ui.thinking_hidden();
        self.ui.set_thinking_hidden(hidden);
        // Saved before it is said, so what the line says is in the file.
        let saved = self.save_user_setting("hideThinkingBlock", Some(&hidden.to_string()));
        let shown = if hidden { "hidden" } else { "visible" };
        self.ui.say(&format!("Thinking blocks: {shown}"));
        saved
    }

    /// Asks the model for the engine's thinking level from the next request on, or for none when
    /// the model does not reason (after `/thinking`, `/model` and `/resume`). A level the model
    /// does not support is clamped to one it does, recorded and said, as Pi's model switch does.
    pub(super) async fn follow_thinking_level(&mut self) {
        if let Some(level) = self.engine.thinking_level().await {
            let (clamped, note) = clamped_level(&self.client, &level);
            if let Some(note) = note {
                match self.engine.change_thinking_level(&clamped).await {
                    Ok(_) => self.ui.notice(&note),
                    Err(error) => self.ui.error(&format!("{note}, not recorded: {error}")),
                }
            }
        }
        let level = self.engine.thinking_level().await;
        let reasoning = level
            .as_deref()
            .and_then(|level| reasoning_for(&self.client, level));
        self.agent.set_reasoning(reasoning);
    }

    /// After `/resume` and `/import`: the model and thinking level the session recorded, when
    /// they can be used (else the chat's own, said in one line); a session imported from
    /// elsewhere (`from_elsewhere`) keeps the chat's model. Nothing is recorded.
    pub(super) async fn restore_recorded(&mut self, from_elsewhere: bool) {
        let recorded = self.engine.with_session(recorded).await;
        if let Some(spec) = recorded.model.as_deref().filter(|_| from_elsewhere)
            && spec != self.client.config().display_name()
        {
            self.ui.notice(&model_not_restored(
                spec,
                &self.client.config().display_name(),
            ));
        } else if let Some(spec) = recorded.model
            && spec != self.client.config().display_name()
        {
            match super::setup::restorable_client(&self.llm_options, &spec) {
                Ok(client) => {
                    let client = std::sync::Arc::new(self.bound(client, &self.thread_session));
                    self.agent.set_model(client.clone()).await;
                    self.agent
                        .set_max_tokens(super::setup::output_limit(&client));
                    self.client = client;
                    self.follow_summary_model(&crate::commands::settings::settings_of_project(
                        &self.environment,
                    ));
                }
                Err(reason) => self.ui.notice(&format!(
                    "Could not restore the session's model {spec} ({reason}); using {}",
                    self.client.config().display_name()
                )),
            }
        }
        if let Some(level) = recorded.thinking {
            self.engine.set_thinking_level(Some(level)).await;
        }
        self.follow_thinking_level().await;
    }
}

/// Whether `session`'s file lies in the sessions folder (`sessions_root`), where only ctxkit and
/// Pi write: its recorded model was the user's choice. A file from anywhere else (a repository,
/// a download) is someone else's record.
pub(super) fn in_sessions_folder(session: &Session, sessions_root: &std::path::Path) -> bool {
    let real = |path: &std::path::Path| std::fs::canonicalize(path).ok();
    match (session.path().and_then(real), real(sessions_root)) {
        (Some(file), Some(root)) => file.starts_with(root),
        _ => false,
    }
}

/// Why a session from elsewhere is not talked to with the model it recorded.
pub(super) fn model_not_restored(recorded: &str, using: &str) -> String {
    format!(
        "The session was recorded with {recorded}; it comes from outside your sessions folder, so \
         the chat stays on {using} (`/model {recorded}` switches to it)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session(lines: &[serde_json::Value]) -> Session {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.jsonl");
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        std::fs::write(&file, text).unwrap();
        Session::open(&file).unwrap()
    }

    #[test]
    fn shift_tab_steps_through_the_models_levels_and_wraps() {
        let five = ["off", "minimal", "low", "medium", "high"];
        assert_eq!(next_level("off", &five), "minimal");
        assert_eq!(next_level("medium", &five), "high");
        assert_eq!(next_level("high", &five), "off");
        assert_eq!(next_level("xhigh", &five), "off");
        assert_eq!(next_level("max", &five), "off");
        assert_eq!(next_level("bogus", &five), "off");
        let opus = ["off", "minimal", "low", "medium", "high", "max"];
        assert_eq!(next_level("high", &opus), "max");
        assert_eq!(next_level("max", &opus), "off");
        assert_eq!(next_level("high", &["low", "medium", "high"]), "low");
    }

    #[test]
    fn a_session_records_its_last_model_and_level_on_the_branch() {
        let at = "2026-01-01T00:00:00.000Z";
        let header =
            json!({"type": "session", "version": 3, "id": "s", "timestamp": at, "cwd": "/"});
        let user = |id: &str, parent: &str| {
            json!({"type": "message", "id": id, "parentId": parent,
            "timestamp": at, "message": {"role": "user", "content": "hi", "timestamp": 1}})
        };
        let lines = [
            header.clone(),
            json!({"type": "model_change", "id": "m1", "parentId": null, "timestamp": at,
                   "provider": "openai", "modelId": "gpt-5"}),
            json!({"type": "thinking_level_change", "id": "t1", "parentId": "m1", "timestamp": at,
                   "thinkingLevel": "high"}),
            user("u1", "t1"),
        ];
        assert_eq!(
            recorded(&session(&lines)),
            Recorded {
                model: Some("openai/gpt-5".to_owned()),
                thinking: Some("high".to_owned()),
                continued: true,
            }
        );
        let plain = [header.clone(), user("u1", "")];
        let mut plain = plain.to_vec();
        plain[1]["parentId"] = serde_json::Value::Null;
        assert_eq!(
            recorded(&session(&plain)),
            Recorded {
                continued: true,
                ..Recorded::default()
            }
        );
        let empty = [
            header,
            json!({"type": "model_change", "id": "m1", "parentId": null, "timestamp": at,
                   "provider": "openai", "modelId": "gpt-5"}),
        ];
        assert_eq!(
            recorded(&session(&empty)),
            Recorded::default(),
            "nothing to continue: the chat's own model"
        );
    }
}

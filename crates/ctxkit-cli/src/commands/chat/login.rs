//! `/login [provider]` and `/logout [provider]`: `ctxkit login` and `ctxkit logout` inside the
//! chat, as Pi's commands of those names do for API keys. The key is typed without echo and never
//! reaches the input line's history, the session or the screen; once saved, the chat's model is
//! asked through a client built with it and tool results redact it, at once.

use anyhow::Result;

use super::Chat;
use super::agent::Ask;
use crate::commands::login;

impl Chat {
    /// `/login [provider]`.
    pub(super) async fn login(&mut self, rest: &str, ask: &mut dyn Ask) -> Result<()> {
        let name = if rest.is_empty() {
            self.ui.say(&login::providers_line());
            match ask.ask("Provider: ") {
                Some(name) if !name.trim().is_empty() => name,
                Some(_) | None => {
                    self.ui.say("Cancelled; nothing was saved.");
                    return Ok(());
                }
            }
        } else {
            rest.to_owned()
        };
        let provider = login::provider_named(&name)?;
        let Some(key) = ask.ask_secret(&login::key_prompt(provider.0)) else {
            self.ui.say("Cancelled; nothing was saved.");
            return Ok(());
        };
        let credentials = ctxkit_settings::credentials_path(&self.environment);
        let said = login::save(&credentials, provider, &key)?;
        self.ui.say(&said);
        self.apply_saved_keys().await;
        if self.client.config().provider != provider.0 {
            self.ui.info(&format!(
                "`/model {}/…` switches to one of its models (`/model` lists them)",
                provider.0
            ));
        }
        Ok(())
    }

    /// `/logout [provider]`.
    pub(super) async fn logout(&mut self, rest: &str) -> Result<()> {
        let credentials = ctxkit_settings::credentials_path(&self.environment);
        if rest.is_empty() {
            let saved = login::saved_providers(&credentials)?;
            let said = if saved.is_empty() {
                "No key is saved; environment variables and `llm.apiKey` are not /logout's to remove."
                    .to_owned()
            } else {
                format!(
                    "Keys are saved for {}: `/logout <provider>` removes one.",
                    saved.join(", ")
                )
            };
            self.ui.say(&said);
            return Ok(());
        }
        let removed = ctxkit_settings::saved_keys(&credentials)
            .ok()
            .and_then(|saved| saved.keys.get(login::stored_name(rest)).cloned());
        let said = login::remove(&credentials, rest)?;
        self.ui.say(&said);
        self.apply_saved_keys().await;
        let still_sent = removed.is_some_and(|removed| {
            self.client
                .config()
                .api_key
                .as_ref()
                .is_some_and(|key| key.expose_secret() == removed.trim())
        });
        if still_sent {
            self.ui.notice(&format!(
                "{} has no other key: it keeps the removed one until `/model` picks another model or the chat ends",
                self.client.config().display_name()
            ));
        }
        Ok(())
    }

    /// The saved keys as they are now: the model in use asked through a client built with them,
    /// and tool results redacting every key known.
    async fn apply_saved_keys(&mut self) {
        let settings = crate::commands::settings::settings_with_errors(&self.environment);
        self.apply_tool_boundary(&settings);
        self.reload_model(&settings).await;
    }
}

//! `/trust [revoke]`: the project's settings that need trust (hooks, `llm.baseUrl`,
//! `chat.confirmBash`, …) shown, and trusted once the user says yes, as `ctxkit trust` and Pi
//! 1.6's `/trust` do. Only the user types a slash command; the model cannot reach this. The chat
//! was built before: the trusted settings apply at the next `/reload`, or the next chat.

use anyhow::Result;

use super::Chat;
use super::agent::Ask;
use crate::commands::settings::settings_of_project;

impl Chat {
    /// `/trust [revoke]`.
    pub(super) fn trust(&self, rest: &str, ask: &mut dyn Ask) -> Result<()> {
        let revoke = match rest {
            "" => false,
            "revoke" => true,
            other => anyhow::bail!("Usage: /trust [revoke] (not `{other}`)"),
        };
        // What is recorded, whatever `--approve` or `--no-approve` decided for this run.
        let environment = ctxkit_settings::Environment {
            project_trust_override: None,
            ..self.environment.clone()
        };
        let settings = settings_of_project(&environment);
        let pending = ctxkit_settings::project_trust(&environment, &settings)?;
        let project = pending.project.display().to_string();
        if revoke {
            let revoked = crate::commands::trust::revoke_trust(&environment, &settings, &pending)?;
            self.ui
                .line(&format!("{revoked} (from the next `/reload` or chat)"));
            return Ok(());
        }
        if pending.held.is_empty() {
            self.ui.say(&format!(
                "The settings of `{project}` change nothing that needs trust; nothing to trust"
            ));
            return Ok(());
        }
        // The same review as `ctxkit trust`, the hooks' scripts with it.
        let lines = crate::commands::trust::review_lines(&pending);
        let state = if pending.trusted {
            "trusted already"
        } else {
            "not trusted"
        };
        let what = crate::commands::trust::what_waits(&pending);
        self.ui.say(&format!(
            "The {what} of `{project}` that need trust ({state}):"
        ));
        for line in &lines {
            self.ui.say(&format!("  {line}"));
        }
        if pending.trusted {
            return Ok(());
        }
        // `N` is the answer Enter gives, as at `ctxkit trust`.
        if ask.ask_key("Trust them? [y/N] ", "yN") != Some('y') {
            self.ui.say("Not trusted; nothing changed");
            return Ok(());
        }
        ctxkit_settings::set_project_trust(&environment, &settings, false)?;
        self.ui.say(&format!(
            "Trusted the {what} of `{project}`: they apply from the next `/reload` or chat \
             (this one was started without them)"
        ));
        Ok(())
    }
}

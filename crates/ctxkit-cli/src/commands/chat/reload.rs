//! `/reload`: the settings, context files (`AGENTS.md`, `CLAUDE.md`), skills, prompt templates and
//! `SYSTEM.md` read again, as Pi 1.6's `/reload`, so an edit to them counts without leaving the
//! chat. The project's settings apply as at the start: an untrusted project's still change nothing
//! that runs code or sends data elsewhere.

use anyhow::Result;
use ctxkit_resources::LoadedResources;

use super::Chat;
use crate::commands::resources::{diagnostics, load_installing, system_prompt};
use crate::commands::settings::settings_of_project;
use crate::render::counted;

/// Said when the settings read again are not usable.
const NOT_RELOADED: &str = "Nothing was reloaded: the chat goes on as it was; fix the settings \
(`ctxkit config list` checks them) and /reload again";

/// The settings `/reload` applies at once (what is not named here, such as `steeringMode`, waits
/// for the next chat).
const APPLIED_NOW: &str = "Settings applied now: llm.* and retry.* (the model in use), \
compaction.* (its model included), transforms.*, branchSummary.*, chat.* (what the tools may \
reach included), shellPath, shellCommandPrefix, images.autoResize, enabledModels, \
hideThinkingBlock, doubleEscapeAction, enableSkillCommands, theme";

/// The keys (or key prefixes, ending in `.`) of [`APPLIED_NOW`], for `/settings` to say when a
/// change applies.
const APPLIED_NOW_KEYS: &[&str] = &[
    "llm.",
    "retry.",
    "compaction.",
    "transforms.",
    "branchSummary.",
    "chat.",
    "shellPath",
    "shellCommandPrefix",
    "images.autoResize",
    "enabledModels",
    "hideThinkingBlock",
    "doubleEscapeAction",
    "enableSkillCommands",
    "theme",
];

/// Whether `/reload` applies a change of `key` at once.
pub(super) fn reload_applies(key: &str) -> bool {
    APPLIED_NOW_KEYS
        .iter()
        .any(|applied| match applied.strip_suffix('.') {
            Some(section) => key
                .strip_prefix(section)
                .is_some_and(|rest| rest.starts_with('.')),
            None => key == *applied,
        })
}

/// The most resource problems `/reload` names; `ctxkit resources` lists all.
const SHOWN_PROBLEMS: usize = 8;

/// `2 context files, 3 skills, 1 prompt template`.
fn what_was_loaded(loaded: &LoadedResources) -> String {
    format!(
        "{}, {}, {}",
        counted(loaded.context_files.len(), "context file"),
        counted(loaded.skills.skills.len(), "skill"),
        counted(loaded.prompts.templates.len(), "prompt template"),
    )
}

impl Chat {
    /// The settings the chat applies while it runs, read again: whether bash is asked about, its
    /// time limit, image fitting, the checkpoint bound, the scoped models, hidden thinking, the
    /// double-escape action.
    pub(super) fn apply_display_settings(&mut self) {
        let settings = settings_of_project(&self.environment);
        self.apply_settings_of(&settings);
        self.apply_theme(&settings);
    }

    /// The colours of `--use-theme`, else of the `theme` setting, among the themes loaded last (a
    /// theme that cannot be used is named once, and the terminal's colours stand).
    fn apply_theme(&self, settings: &ctxkit_settings::SettingsManager) {
        let (palette, warning) = super::palette::chosen_palette(
            settings,
            self.theme_flag.as_deref(),
            &self.resources.themes.themes,
        );
        self.ui.set_palette(palette);
        if let Some(warning) = warning {
            self.ui.notice(&warning);
        }
    }

    fn apply_settings_of(&mut self, settings: &ctxkit_settings::SettingsManager) {
        let typed = settings.settings();
        self.agent.set_tool_limits(
            std::time::Duration::from_secs(typed.chat.bash_timeout_seconds),
            typed.images.auto_resize,
        );
        self.checkpoints
            .set_max_bytes(typed.chat.checkpoint_max_bytes);
        self.apply_tool_boundary(settings);
        // `chat.confirmBash` changed: asked from now on, or no longer (an "always" the user gave
        // stays while the setting stays as it was).
        let confirm_bash = !self.yes_flag && typed.chat.confirm_bash;
        if confirm_bash != self.confirm_bash {
            if confirm_bash {
                self.agent.ask_again("bash");
            } else {
                self.agent.allow_always("bash");
            }
            self.confirm_bash = confirm_bash;
        }
        self.enabled_models = self
            .models_flag
            .clone()
            .or_else(|| typed.enabled_models.clone())
            .unwrap_or_default();
        self.ui.set_thinking_hidden(typed.hide_thinking_block);
        self.ui
            .set_terminal_progress(typed.terminal.show_terminal_progress);
        self.ui
            .set_code_block_indent(&typed.markdown.code_block_indent);
        self.double_escape =
            super::rewind::DoubleEscapeAction::from_setting(&typed.double_escape_action);
        self.external_editor = typed.external_editor.clone();
    }

    /// The tools judge paths by the boundary as it is now, from the next call on.
    fn install_workspace(&mut self) {
        let workspace = self.boundary.workspace(&self.cwd);
        self.agent.set_workspace(workspace.clone());
        self.checkpoints.set_workspace(workspace);
    }

    /// What the tools may reach, as the settings read again say: the readable paths
    /// (`chat.readablePaths`), the shell (`shellPath`, `shellCommandPrefix`) and the secret
    /// variables commands see (`chat.passEnv`), as Pi's reload rebuilds its tools. Secrets the
    /// settings hold now are redacted too, beside every one known before. Outside paths the user
    /// approved are asked per call, so nothing of theirs is kept or lost here.
    pub(super) fn apply_tool_boundary(&mut self, settings: &ctxkit_settings::SettingsManager) {
        let typed = settings.settings();
        self.boundary = self.boundary.reloaded(&self.environment, settings);
        self.install_workspace();
        self.agent.set_shell(
            crate::commands::settings::shell_of(typed, &self.environment),
            typed.chat.pass_env.clone().unwrap_or_default(),
        );
    }

    /// The model in use asked through a client built from the settings read again (`llm.*`,
    /// `retry.*`: its endpoint, key, window, output limit and retries), as Pi's reload rebuilds its
    /// providers, and summaries through `compaction.model`'s; no switch is recorded. A model the
    /// settings no longer name keeps its client.
    pub(super) async fn reload_model(&mut self, settings: &ctxkit_settings::SettingsManager) {
        let spec = self.client.config().display_name();
        let client = crate::commands::summary_setup::llm_options(settings).and_then(|options| {
            let client = crate::commands::summary_setup::model_client(&options, Some(&spec))?;
            Ok((options, client))
        });
        match client {
            Ok((options, client)) => {
                let client = std::sync::Arc::new(self.bound(client, &self.thread_session));
                self.agent.set_model(client.clone()).await;
                self.agent
                    .set_max_tokens(super::setup::output_limit(&client));
                self.client = client;
                self.llm_options = options;
            }
            Err(error) => self
                .ui
                .notice(&format!("{spec} keeps the settings it had: {error:#}")),
        }
        self.follow_summary_model(settings);
    }

    /// Summaries go to `compaction.model` when the settings name one, else to the chat's model
    /// now, as Pi summarizes with the current model (a `/model` switch left them on the first).
    pub(super) fn follow_summary_model(&mut self, settings: &ctxkit_settings::SettingsManager) {
        let summary_model = settings
            .settings()
            .compaction
            .model
            .clone()
            .unwrap_or_else(|| self.client.config().display_name());
        match crate::commands::summary_setup::choose_summarizer(settings, Some(&summary_model)) {
            Ok((summarizer, _)) => {
                // The sessions `/new`, `/resume` and `/fork` open summarize with it too.
                let summarizer: std::sync::Arc<dyn ctxkit_summarizer::Summarizer> =
                    std::sync::Arc::from(summarizer);
                self.engine
                    .set_summarizer(std::sync::Arc::clone(&summarizer));
                self.parts.summarizer = summarizer;
            }
            Err(error) => self
                .ui
                .notice(&format!("Summaries keep the model they had: {error:#}")),
        }
    }

    /// `/reload`. Settings that do not load or hold a wrong value change nothing: the chat goes on
    /// as it was (at the start the same file stops the chat; a reload took it in silence).
    pub(super) async fn reload(&mut self) -> Result<()> {
        let settings = crate::commands::settings::settings_with_errors(&self.environment);
        if let Err(error) = crate::commands::summary_setup::refuse_invalid_settings(&settings) {
            self.ui.error(&format!("{error:#}"));
            self.ui.notice(NOT_RELOADED);
            return Ok(());
        }
        self.apply_settings_of(&settings);
        // Budgets, transforms and branch summaries, as the chat's start reads them (the chat
        // passes no flag over them).
        let engine_settings = ctxkit_engine::EngineSettings::from_settings(settings.settings());
        // The sessions `/new`, `/resume` and `/fork` open get them too.
        self.parts.settings = engine_settings.clone();
        self.engine.set_settings(engine_settings).await;
        self.reload_model(&settings).await;
        // A project's settings changed since they were trusted are held back again: said here as
        // at the chat's start.
        if let Some(warning) =
            crate::commands::config::held_settings_warning(&self.environment, &settings)
        {
            for line in warning.lines() {
                self.ui.notice(line);
            }
        }
        let ui = self.ui.clone();
        let loaded = load_installing(
            &self.environment,
            &settings,
            &self.loader_options,
            move |line| ui.notice(line),
        );
        let problems = diagnostics(&loaded);
        for problem in problems.iter().take(SHOWN_PROBLEMS) {
            self.ui.notice(&problem.to_string());
        }
        if problems.len() > SHOWN_PROBLEMS {
            self.ui.notice(&format!(
                "… and {} more resource problem(s): `ctxkit resources` lists them",
                problems.len() - SHOWN_PROBLEMS
            ));
        }
        let prompt = system_prompt(&loaded, &self.cwd);
        let changed = prompt != self.agent.options().system_prompt;
        let summary = what_was_loaded(&loaded);
        self.agent.set_system_prompt(prompt);
        self.slash_commands
            .set(&loaded, settings.settings().enable_skill_commands);
        self.resources = loaded;
        // The skills loaded now are the ones whose folders the tools may read.
        self.boundary.set_skills(&self.resources.skills.skills);
        self.install_workspace();
        self.apply_theme(&settings);
        self.share_request_overhead().await;
        let effect = if changed {
            "the system prompt changed: the next request starts a new prompt cache"
        } else {
            "the system prompt is unchanged"
        };
        self.ui.say(&format!("Reloaded {summary}; {effect}"));
        self.ui.info(APPLIED_NOW);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// QA: `/settings` said auto-compact applies "from the next chat" while `/reload` listed
    /// `compaction.*` as applied now.
    #[test]
    fn reload_applies_what_it_says_it_applies() {
        assert!(super::reload_applies("compaction.enabled"));
        assert!(super::reload_applies("theme"));
        assert!(!super::reload_applies("steeringMode"));
        assert!(!super::reload_applies("themeX"));
        assert!(!super::reload_applies("compactionX"));
        for key in super::APPLIED_NOW_KEYS {
            assert!(
                super::APPLIED_NOW.contains(key.trim_end_matches('.')),
                "{key}"
            );
        }
    }
}

//! The chat's theme as this process chooses it (one reading for the chat and for `ctxkit
//! resources`), and what `ctxkit resources` says of it: the theme in use, and which loaded themes
//! wait for `ctxkit trust` (an untrusted project's never paint the chat).

use ctxkit_resources::{Appearance, Theme, ThemeChoice, ThemeSources};

/// The themes this process may paint with, and the one `chosen` (`--use-theme`), else the
/// `theme` setting, names for this terminal (its `COLORFGBG` for a `light/dark` pair); the error
/// is one line naming a theme that cannot be used.
pub(crate) fn choose<'a>(
    settings: &ctxkit_settings::SettingsManager,
    chosen: Option<&str>,
    themes: &'a [Theme],
) -> (ThemeSources<'a>, Result<ThemeChoice, String>) {
    let sources = ThemeSources {
        loaded: themes,
        project_trusted: settings.project_trusted(),
    };
    let appearance = Appearance::from_colorfgbg(crate::cli::terminal_colors().as_deref());
    // No setting is `system`, the terminal's own colours (Pi's default).
    let setting = chosen
        .or(settings.settings().theme.as_deref())
        .unwrap_or(ctxkit_resources::SYSTEM_THEME);
    (
        sources,
        ctxkit_resources::choose_theme(setting, appearance, sources),
    )
}

/// The chat's theme as the settings choose it, and which loaded themes it may use.
pub(super) struct ThemesInUse<'a> {
    sources: ThemeSources<'a>,
    /// The theme's name (`system` for the terminal's own colours).
    pub(super) in_use: String,
    /// Why the setting's theme is not used, when it is not.
    problem: Option<String>,
}

impl<'a> ThemesInUse<'a> {
    pub(super) fn read(settings: &ctxkit_settings::SettingsManager, loaded: &'a [Theme]) -> Self {
        let (sources, chosen) = choose(settings, None, loaded);
        let (in_use, problem) = match chosen {
            Ok(ThemeChoice::Colors { name, .. }) => (name, None),
            Ok(ThemeChoice::System) => (ctxkit_resources::SYSTEM_THEME.to_owned(), None),
            Err(problem) => (ctxkit_resources::SYSTEM_THEME.to_owned(), Some(problem)),
        };
        Self {
            sources,
            in_use,
            problem,
        }
    }

    pub(super) fn usable(&self, theme: &Theme) -> bool {
        self.sources.usable(theme)
    }

    /// `dark`, or `system (the terminal's own colours)`, and why the setting's is not used.
    pub(super) fn shown(&self) -> String {
        let mut shown = self.in_use.clone();
        if shown == ctxkit_resources::SYSTEM_THEME {
            shown.push_str(" (the terminal's own colours)");
        }
        if let Some(problem) = &self.problem {
            // The problem is a sentence of its own ("Theme `x` not found …"): here it goes on one.
            let mut characters = problem.chars();
            let first = characters
                .next()
                .map(|first| first.to_lowercase().to_string());
            shown.push_str(&format!(
                "; {}{}",
                first.unwrap_or_default(),
                characters.as_str()
            ));
        }
        shown
    }
}

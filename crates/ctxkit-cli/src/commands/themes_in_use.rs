//! What `ctxkit resources` says of the chat's theme: the one the settings choose, and which loaded
//! themes wait for `ctxkit trust` (an untrusted project's never paint the chat).

/// The chat's theme as the settings choose it, and which loaded themes it may use (an untrusted
/// project's wait for trust).
pub(super) struct ThemesInUse<'a> {
    usable: Vec<&'a ctxkit_resources::Theme>,
    /// The theme's name (`system` for the terminal's own colours).
    pub(super) in_use: String,
    /// Why the setting's theme is not used, when it is not.
    problem: Option<String>,
}

impl<'a> ThemesInUse<'a> {
    pub(super) fn read(
        settings: &ctxkit_settings::SettingsManager,
        loaded: &'a [ctxkit_resources::Theme],
    ) -> Self {
        let sources = ctxkit_resources::ThemeSources {
            loaded,
            project_trusted: settings.project_trusted(),
        };
        let appearance =
            ctxkit_resources::Appearance::from_colorfgbg(crate::cli::terminal_colors().as_deref());
        let chosen = ctxkit_resources::choose_theme(
            settings.settings().theme.as_deref(),
            appearance,
            sources,
        );
        let (in_use, problem) = match chosen {
            Ok(ctxkit_resources::ThemeChoice::Colors { name, .. }) => (name, None),
            Ok(ctxkit_resources::ThemeChoice::System) => {
                (ctxkit_resources::SYSTEM_THEME.to_owned(), None)
            }
            Err(problem) => (ctxkit_resources::SYSTEM_THEME.to_owned(), Some(problem)),
        };
        Self {
            usable: sources.usable_themes().collect(),
            in_use,
            problem,
        }
    }

    pub(super) fn usable(&self, theme: &ctxkit_resources::Theme) -> bool {
        self.usable
            .iter()
            .any(|usable| std::ptr::eq(*usable, theme))
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

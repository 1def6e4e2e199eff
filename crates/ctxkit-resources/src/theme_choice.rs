//! Which theme a chat paints with: the `theme` setting (a name, or `light/dark`, the light
//! terminal's theme first), the terminal's appearance, the themes the loader found and ctxkit's own
//! `dark` and `light`. `system`, and no setting at all, leave the colours to the terminal's palette.

use serde_json::Value;

use crate::theme_colors::{ThemeColors, theme_colors};
use crate::themes::Theme;

/// The theme name that leaves the colours to the terminal (Pi's default; a loaded theme of that
/// name is never used).
pub const SYSTEM_THEME: &str = "system";

/// ctxkit's own themes, by name (a loaded theme of the same name shadows one).
const BUILTIN_THEMES: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.json")),
    ("light", include_str!("../themes/light.json")),
];

/// The names of ctxkit's own themes.
pub fn builtin_theme_names() -> impl Iterator<Item = &'static str> {
    BUILTIN_THEMES.iter().map(|(name, _)| *name)
}

/// The document of ctxkit's own theme `name`.
pub fn builtin_theme(name: &str) -> Option<Value> {
    BUILTIN_THEMES
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .and_then(|(_, text)| serde_json::from_str(text).ok())
}

/// Whether the terminal's background is dark or light.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appearance {
    Dark,
    Light,
}

impl Appearance {
    /// From `COLORFGBG` (`15;0`: the foreground's and the background's palette indices, the
    /// background last): a light grey or white background (7, 9 to 15) is light, anything else,
    /// or no variable, dark (Pi's guess without an answer from the terminal).
    pub fn from_colorfgbg(value: Option<&str>) -> Self {
        let background = value
            .and_then(|value| value.rsplit(';').next())
            .and_then(|field| field.trim().parse::<u8>().ok());
        match background {
            Some(7 | 9..=15) => Appearance::Light,
            Some(_) | None => Appearance::Dark,
        }
    }
}

/// The colours to paint with.
#[derive(Debug, Clone, PartialEq)]
pub enum ThemeChoice {
    /// The terminal's own palette (`system`, or no `theme` setting).
    System,
    /// A theme's colours.
    Colors { name: String, colors: ThemeColors },
}

/// Where the themes a chat may paint with come from, and whether the project is trusted: a
/// project's own themes are used only then (they could hide the chat's warnings and questions,
/// or shadow the user's `dark`; Pi loads them only after trust).
#[derive(Debug, Clone, Copy)]
pub struct ThemeSources<'a> {
    pub loaded: &'a [Theme],
    pub project_trusted: bool,
}

impl<'a> ThemeSources<'a> {
    /// Whether the chat may use `theme` (not an untrusted project's).
    pub fn usable(&self, theme: &Theme) -> bool {
        self.project_trusted || !is_projects(theme)
    }

    /// The loaded themes a chat may use (an untrusted project's left out).
    pub fn usable_themes(self) -> impl Iterator<Item = &'a Theme> {
        self.loaded.iter().filter(move |theme| self.usable(theme))
    }
}

fn is_projects(theme: &Theme) -> bool {
    theme
        .metadata
        .as_ref()
        .is_some_and(|metadata| metadata.scope == ctxkit_packages::SourceScope::Project)
}

/// The theme the `theme` setting names for a terminal of `appearance`, from the loaded themes
/// (which shadow ctxkit's own; an untrusted project's left out) or ctxkit's `dark` and `light`.
/// The error is one line naming a theme that is not there, or the project it is left out with.
pub fn choose_theme(
    setting: &str,
    appearance: Appearance,
    sources: ThemeSources<'_>,
) -> Result<ThemeChoice, String> {
    let setting = setting.trim();
    let name = match setting.split_once('/') {
        Some((light, dark)) => match appearance {
            Appearance::Light => light.trim(),
            Appearance::Dark => dark.trim(),
        },
        None => setting,
    };
    if name == SYSTEM_THEME || name.is_empty() {
        return Ok(ThemeChoice::System);
    }
    let usable = || sources.usable_themes();
    let document = usable()
        .find(|theme| theme.name == name)
        .map(|theme| theme.json.clone())
        .or_else(|| builtin_theme(name))
        .ok_or_else(|| {
            if sources.loaded.iter().any(|theme| theme.name == name) {
                return format!(
                    "Theme `{name}` is this project's, which is not trusted (`ctxkit trust` lets \
                     it be used)"
                );
            }
            let mut known: Vec<&str> = builtin_theme_names().collect();
            known.extend(usable().map(|theme| theme.name.as_str()));
            known.sort_unstable();
            known.dedup();
            format!(
                "Theme `{name}` not found (themes: {SYSTEM_THEME}, {})",
                known.join(", ")
            )
        })?;
    let colors = theme_colors(&document).map_err(|error| format!("Theme `{name}`: {error}"))?;
    Ok(ThemeChoice::Colors {
        name: name.to_owned(),
        colors,
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::theme_colors::Color;
    use crate::themes::validate_theme;

    fn sources(loaded: &[Theme]) -> ThemeSources<'_> {
        ThemeSources {
            loaded,
            project_trusted: false,
        }
    }

    fn loaded(name: &str, error: &str) -> Theme {
        let mut document = builtin_theme("dark").unwrap();
        document["name"] = json!(name);
        document["colors"]["error"] = json!(error);
        Theme {
            name: name.to_owned(),
            file_path: PathBuf::from(format!("/themes/{name}.json")),
            json: document,
            metadata: None,
        }
    }

    fn error_color(choice: &ThemeChoice) -> Option<Color> {
        match choice {
            ThemeChoice::Colors { colors, .. } => colors.get("error"),
            ThemeChoice::System => None,
        }
    }

    #[test]
    fn ctxkits_own_themes_are_valid_and_complete() {
        for name in builtin_theme_names() {
            let document = builtin_theme(name).unwrap();
            assert_eq!(document["name"], json!(name));
            validate_theme(name, &document).unwrap();
        }
    }

    #[test]
    fn a_theme_whose_colour_cannot_be_read_is_invalid() {
        let mut document = builtin_theme("dark").unwrap();
        document["colors"]["error"] = json!("crimson");
        assert_eq!(
            validate_theme("t.json", &document),
            Err(
                "Invalid theme \"t.json\": /colors/error: variable reference not found: crimson"
                    .to_owned()
            )
        );
    }

    #[test]
    fn no_setting_and_system_leave_the_terminals_palette() {
        for setting in ["", " ", "system", "light/system"] {
            assert_eq!(
                choose_theme(setting, Appearance::Dark, sources(&[])),
                Ok(ThemeChoice::System),
                "{setting:?}"
            );
        }
    }

    #[test]
    fn a_pair_picks_by_the_appearance_light_first() {
        let themes = [loaded("paper", "#000001"), loaded("ink", "#000002")];
        let light = choose_theme("paper/ink", Appearance::Light, sources(&themes)).unwrap();
        let dark = choose_theme("paper/ink", Appearance::Dark, sources(&themes)).unwrap();
        assert_eq!(error_color(&light), Some(Color::Rgb([0.0, 0.0, 1.0])));
        assert_eq!(error_color(&dark), Some(Color::Rgb([0.0, 0.0, 2.0])));
    }

    #[test]
    fn a_loaded_theme_shadows_ctxkits_own() {
        let themes = [loaded("dark", "#010203")];
        let choice = choose_theme("dark", Appearance::Dark, sources(&themes)).unwrap();
        assert_eq!(error_color(&choice), Some(Color::Rgb([1.0, 2.0, 3.0])));
        let light = choose_theme("light", Appearance::Dark, sources(&themes)).unwrap();
        assert!(matches!(light, ThemeChoice::Colors { name, .. } if name == "light"));
    }

    /// Attack: a cloned repository's theme could paint the chat's warnings and questions in the
    /// terminal's background colour, or take the place of the user's `dark`.
    #[test]
    fn an_untrusted_projects_themes_are_left_out() {
        let mut hidden = loaded("dark", "#000000");
        hidden.metadata = Some(ctxkit_packages::PathMetadata {
            source: "auto".to_owned(),
            scope: ctxkit_packages::SourceScope::Project,
            origin: ctxkit_packages::SourceOrigin::TopLevel,
            base_dir: None,
        });
        let mut own = hidden.clone();
        own.name = "evil".to_owned();
        let themes = [hidden, own];
        let untrusted = choose_theme("dark", Appearance::Dark, sources(&themes)).unwrap();
        assert_eq!(
            error_color(&untrusted),
            error_color(&choose_theme("dark", Appearance::Dark, sources(&[])).unwrap())
        );
        assert_eq!(
            choose_theme("evil", Appearance::Dark, sources(&themes)),
            Err(
                "Theme `evil` is this project's, which is not trusted (`ctxkit trust` lets it \
                 be used)"
                    .to_owned()
            )
        );
        let trusted = ThemeSources {
            loaded: &themes,
            project_trusted: true,
        };
        let chosen = choose_theme("dark", Appearance::Dark, trusted).unwrap();
        assert_eq!(error_color(&chosen), Some(Color::Rgb([0.0, 0.0, 0.0])));
    }

    #[test]
    fn an_unknown_theme_names_the_known_ones() {
        let themes = [loaded("mine", "#000000")];
        assert_eq!(
            choose_theme("solarized", Appearance::Dark, sources(&themes)),
            Err("Theme `solarized` not found (themes: system, dark, light, mine)".to_owned())
        );
    }

    #[test]
    fn colorfgbg_tells_a_light_background() {
        assert_eq!(Appearance::from_colorfgbg(None), Appearance::Dark);
        assert_eq!(Appearance::from_colorfgbg(Some("15;0")), Appearance::Dark);
        assert_eq!(Appearance::from_colorfgbg(Some("0;15")), Appearance::Light);
        assert_eq!(
            Appearance::from_colorfgbg(Some("0;default;7")),
            Appearance::Light
        );
        assert_eq!(Appearance::from_colorfgbg(Some("0;8")), Appearance::Dark);
        assert_eq!(
            Appearance::from_colorfgbg(Some("rubbish")),
            Appearance::Dark
        );
    }
}

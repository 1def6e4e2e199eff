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

/// The theme the `theme` setting names for a terminal of `appearance`, from the loaded themes
/// (`loaded`, which shadow ctxkit's own) or ctxkit's `dark` and `light`. The error is one line
/// naming a theme that is not there.
pub fn choose_theme(
    setting: Option<&str>,
    appearance: Appearance,
    loaded: &[Theme],
) -> Result<ThemeChoice, String> {
    let Some(setting) = setting.map(str::trim).filter(|setting| !setting.is_empty()) else {
        return Ok(ThemeChoice::System);
    };
    let name = match setting.split_once('/') {
        Some((light, dark)) => match appearance {
            Appearance::Light => light.trim(),
            Appearance::Dark => dark.trim(),
        },
        None => setting,
    };
    if name == SYSTEM_THEME {
        return Ok(ThemeChoice::System);
    }
    let document = loaded
        .iter()
        .find(|theme| theme.name == name)
        .map(|theme| theme.json.clone())
        .or_else(|| builtin_theme(name))
        .ok_or_else(|| {
            let mut known: Vec<&str> = builtin_theme_names().collect();
            known.extend(loaded.iter().map(|theme| theme.name.as_str()));
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
        for setting in [None, Some(""), Some("system"), Some("light/system")] {
            assert_eq!(
                choose_theme(setting, Appearance::Dark, &[]),
                Ok(ThemeChoice::System),
                "{setting:?}"
            );
        }
    }

    #[test]
    fn a_pair_picks_by_the_appearance_light_first() {
        let themes = [loaded("paper", "#000001"), loaded("ink", "#000002")];
        let light = choose_theme(Some("paper/ink"), Appearance::Light, &themes).unwrap();
        let dark = choose_theme(Some("paper/ink"), Appearance::Dark, &themes).unwrap();
        assert_eq!(error_color(&light), Some(Color::Rgb([0.0, 0.0, 1.0])));
        assert_eq!(error_color(&dark), Some(Color::Rgb([0.0, 0.0, 2.0])));
    }

    #[test]
    fn a_loaded_theme_shadows_ctxkits_own() {
        let themes = [loaded("dark", "#010203")];
        let choice = choose_theme(Some("dark"), Appearance::Dark, &themes).unwrap();
        assert_eq!(error_color(&choice), Some(Color::Rgb([1.0, 2.0, 3.0])));
        let light = choose_theme(Some("light"), Appearance::Dark, &themes).unwrap();
        assert!(matches!(light, ThemeChoice::Colors { name, .. } if name == "light"));
    }

    #[test]
    fn an_unknown_theme_names_the_known_ones() {
        let themes = [loaded("mine", "#000000")];
        assert_eq!(
            choose_theme(Some("solarized"), Appearance::Dark, &themes),
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

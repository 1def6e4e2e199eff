//! The chat's colours. Without a `theme` setting (or with `system`) they are the terminal's own
//! palette, as they always were: faint notes, red errors, yellow warnings, cyan tool names. A
//! theme (ctxkit's `dark` or `light`, or one the resource loader found, as Pi's) gives each of
//! them its colour token instead, sent as truecolor escapes when `COLORTERM` says the terminal
//! takes them (`truecolor`, `24bit`), else as the nearest of 256 colours; replies' markdown takes
//! the `md*` tokens.

use std::borrow::Cow;

use ctxkit_highlight::SyntaxToken;
use ctxkit_resources::{Color, TerminalColor, ThemeChoice, ThemeColors};
use termimad::MadSkin;
use termimad::crossterm::style::Color as CrosstermColor;

/// What a piece of the chat's output is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Notes, the status line, summaries (`dim`).
    Info,
    Error,
    /// Warnings and questions (`warning`).
    Notice,
    /// `→ bash` (`toolTitle`).
    ToolTitle,
    /// A tool result's first lines (`toolOutput`).
    ToolOutput,
    DiffAdded,
    DiffRemoved,
    DiffContext,
    /// Reasoning as it streams (`thinkingText`).
    Thinking,
    /// A highlighted code block's text that is no token (`text`).
    Text,
    /// A piece of highlighted code (`syntaxKeyword` …).
    Syntax(SyntaxToken),
}

impl Role {
    /// The SGR code of the terminal's own palette.
    fn system_code(self) -> &'static str {
        match self {
            Role::Info | Role::ToolOutput | Role::DiffContext | Role::Thinking => "2",
            Role::Error | Role::DiffRemoved => "31",
            Role::Notice => "33",
            Role::ToolTitle => "36",
            Role::DiffAdded => "32",
            Role::Text => "39",
            Role::Syntax(token) => syntax_system_code(token),
        }
    }

    /// The theme's token (Pi's names).
    fn token(self) -> &'static str {
        match self {
            Role::Info => "dim",
            Role::Error => "error",
            Role::Notice => "warning",
            Role::ToolTitle => "toolTitle",
            Role::ToolOutput => "toolOutput",
            Role::DiffAdded => "toolDiffAdded",
            Role::DiffRemoved => "toolDiffRemoved",
            Role::DiffContext => "toolDiffContext",
            Role::Thinking => "thinkingText",
            Role::Text => "text",
            Role::Syntax(token) => token.theme_token(),
        }
    }
}

/// A syntax token's colour on the terminal's own palette: the ANSI colour Pi's `system` theme
/// gives it when the terminal reports no palette (keywords blue, functions yellow, strings green,
/// numbers and types magenta, variables cyan), and faint for comments, operators and punctuation.
fn syntax_system_code(token: SyntaxToken) -> &'static str {
    match token {
        SyntaxToken::Comment | SyntaxToken::Operator | SyntaxToken::Punctuation => "2",
        SyntaxToken::Keyword => "34",
        SyntaxToken::Function => "33",
        SyntaxToken::Variable => "36",
        SyntaxToken::String | SyntaxToken::Inserted => "32",
        SyntaxToken::Number | SyntaxToken::Type => "35",
        SyntaxToken::Deleted => "31",
    }
}

/// The colours in use.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Palette {
    /// The theme's colours; `None` for the terminal's own palette.
    theme: Option<ThemeColors>,
    truecolor: bool,
}

impl Palette {
    /// The colours of `choice` for a terminal that takes truecolor escapes or not.
    pub fn new(choice: ThemeChoice, truecolor: bool) -> Self {
        let theme = match choice {
            ThemeChoice::System => None,
            ThemeChoice::Colors { colors, .. } => Some(colors),
        };
        Self { theme, truecolor }
    }

    /// The SGR parameters of `role`.
    pub fn code(&self, role: Role) -> Cow<'static, str> {
        match self.color(role.token()) {
            Some(color) => Cow::Owned(color.foreground_sgr(self.truecolor)),
            None if self.theme.is_some() => Cow::Borrowed("39"),
            None => Cow::Borrowed(role.system_code()),
        }
    }

    fn color(&self, token: &str) -> Option<Color> {
        self.theme.as_ref().and_then(|colors| colors.get(token))
    }

    fn terminal_color(&self, token: &str) -> Option<CrosstermColor> {
        Some(match self.color(token)?.on_terminal(self.truecolor) {
            TerminalColor::Rgb([r, g, b]) => CrosstermColor::Rgb { r, g, b },
            TerminalColor::Indexed(index) => CrosstermColor::AnsiValue(index),
            TerminalColor::Default => CrosstermColor::Reset,
        })
    }

    /// Gives `skin` (a styled one) the theme's markdown colours; the terminal's palette leaves it
    /// as it is.
    pub fn paint_markdown(&self, skin: &mut MadSkin) {
        if self.theme.is_none() {
            return;
        }
        if let Some(text) = self.terminal_color("text") {
            skin.paragraph.set_fg(text);
        }
        if let Some(heading) = self.terminal_color("mdHeading") {
            skin.set_headers_fg(heading);
        }
        if let Some(code) = self.terminal_color("mdCode") {
            skin.inline_code.set_fgbg(code, CrosstermColor::Reset);
        }
        if let Some(block) = self.terminal_color("mdCodeBlock") {
            skin.code_block.set_fgbg(block, CrosstermColor::Reset);
        }
        if let Some(bullet) = self.terminal_color("mdListBullet") {
            skin.bullet.set_fg(bullet);
        }
        if let Some(quote) = self.terminal_color("mdQuoteBorder") {
            skin.quote_mark.set_fg(quote);
        }
        if let Some(rule) = self.terminal_color("mdHr") {
            skin.horizontal_rule.set_fg(rule);
        }
        if let Some(border) = self.terminal_color("borderMuted") {
            skin.table.set_fg(border);
        }
    }
}

/// The palette of the theme `chosen` (`--use-theme`), else the `theme` setting, names among
/// `themes` (`themes_in_use::choose`), in the depth `COLORTERM` says, and the one-line warning when
/// the theme cannot be used (the terminal's palette then).
pub fn chosen_palette(
    settings: &ctxkit_settings::SettingsManager,
    chosen: Option<&str>,
    themes: &[ctxkit_resources::Theme],
) -> (Palette, Option<String>) {
    match crate::commands::themes_in_use::choose(settings, chosen, themes).1 {
        Ok(choice) => (Palette::new(choice, crate::cli::truecolor_terminal()), None),
        Err(reason) => (
            Palette::default(),
            Some(format!("{reason}; the terminal's colours stand")),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn themed(truecolor: bool) -> Palette {
        let theme = json!({
            "vars": {"red": "#ff0000"},
            "colors": {"error": "red", "dim": 245, "toolTitle": "", "mdHeading": "#00ff00"}
        });
        let colors = ctxkit_resources::theme_colors(&theme).unwrap();
        Palette::new(
            ThemeChoice::Colors {
                name: "mine".to_owned(),
                colors,
            },
            truecolor,
        )
    }

    #[test]
    fn the_terminals_palette_keeps_the_ansi_codes() {
        let palette = Palette::default();
        assert_eq!(palette.code(Role::Error), "31");
        assert_eq!(palette.code(Role::Info), "2");
        assert_eq!(palette.code(Role::ToolTitle), "36");
    }

    #[test]
    fn a_theme_sends_its_tokens_in_the_terminals_depth() {
        assert_eq!(themed(true).code(Role::Error), "38;2;255;0;0");
        assert_eq!(themed(false).code(Role::Error), "38;5;196");
        assert_eq!(themed(true).code(Role::Info), "38;5;245");
        assert_eq!(themed(true).code(Role::ToolTitle), "39");
        // A token the theme lacks is the terminal's own colour, not the system palette's.
        assert_eq!(themed(true).code(Role::Notice), "39");
    }

    #[test]
    fn markdown_takes_the_md_tokens() {
        let mut skin = MadSkin::default();
        themed(true).paint_markdown(&mut skin);
        let heading = skin.headers[1].compound_style.get_fg();
        assert_eq!(heading, Some(CrosstermColor::Rgb { r: 0, g: 255, b: 0 }));
        let mut untouched = MadSkin::default();
        Palette::default().paint_markdown(&mut untouched);
        assert_eq!(
            untouched.headers[1].compound_style.get_fg(),
            MadSkin::default().headers[1].compound_style.get_fg()
        );
    }
}

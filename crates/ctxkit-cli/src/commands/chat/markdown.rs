//! Markdown for the terminal (termimad): headings, lists, code blocks, tables and emphasis, wrapped
//! at the terminal's width between words. Styled on a colour terminal, laid out without styles when
//! `NO_COLOR` is set, and left as written (the model's own text) when stdout is not a terminal.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use termimad::{FmtText, MadSkin};

use super::code_blocks::{self, Part};
use super::palette::{Palette, Role};

/// How replies are shown. Clones share the code blocks' indent and the colours.
#[derive(Debug, Clone)]
pub struct Markdown {
    /// `None` when stdout is not a terminal: text is printed as written.
    skin: Option<MadSkin>,
    /// Whether the skin has styles (no `NO_COLOR`): only then does the theme colour it.
    styled: bool,
    /// The columns a code block's lines are indented by (`markdown.codeBlockIndent`).
    code_indent: Arc<AtomicUsize>,
    /// The colours of the chat's output, replies' markdown included (the `theme` setting).
    palette: Arc<RwLock<Palette>>,
}

/// The columns of Pi's default indent, two spaces.
const DEFAULT_CODE_INDENT: usize = 2;
/// The fewest columns a highlighted code block's text is given beside its indent.
const MIN_CODE_ROOM: usize = 20;
/// The columns a tab of `markdown.codeBlockIndent` counts for (the renderer pads with spaces).
const TAB_COLUMNS: usize = 4;

impl Markdown {
    /// For this process's stdout and environment.
    pub fn for_stdout() -> Self {
        if !std::io::stdout().is_terminal() {
            return Self {
                skin: None,
                styled: false,
                code_indent: Arc::new(AtomicUsize::new(DEFAULT_CODE_INDENT)),
                palette: Arc::default(),
            };
        }
        Self::styled(crate::cli::color_allowed())
    }

    /// Rendering on a terminal, with colours or without.
    pub fn styled(color: bool) -> Self {
        let skin = if color {
            // Headings start at the left edge, as Pi's do (the renderer centres a title), so a
            // reply is laid out the same with colours and without.
            let mut skin = MadSkin::default();
            skin.headers[0].align = termimad::Alignment::Left;
            skin
        } else {
            MadSkin::no_style()
        };
        Self {
            skin: Some(skin),
            styled: color,
            code_indent: Arc::new(AtomicUsize::new(DEFAULT_CODE_INDENT)),
            palette: Arc::default(),
        }
    }

    /// Paints with `palette` from now on (the `theme` setting).
    pub fn set_palette(&self, palette: Palette) {
        if let Ok(mut shared) = self.palette.write() {
            *shared = palette;
        }
    }

    /// The palette in use.
    pub fn palette(&self) -> Palette {
        self.palette
            .read()
            .map(|palette| palette.clone())
            .unwrap_or_default()
    }

    /// The SGR parameters of `role` under the palette in use.
    pub fn code(&self, role: Role) -> Cow<'static, str> {
        self.palette
            .read()
            .map(|palette| palette.code(role))
            .unwrap_or(Cow::Borrowed("0"))
    }

    /// Indents code blocks by `indent` (`markdown.codeBlockIndent`) from now on: its width in
    /// columns, a tab as [`TAB_COLUMNS`].
    pub fn set_code_block_indent(&self, indent: &str) {
        let columns = indent
            .chars()
            .map(|character| if character == '\t' { TAB_COLUMNS } else { 1 })
            .sum();
        self.code_indent.store(columns, Ordering::Relaxed);
    }

    /// Whether text is rendered (on a terminal) rather than printed as written.
    pub fn renders(&self) -> bool {
        self.skin.is_some()
    }

    /// `text` rendered for `width` columns, without a trailing line break. With colours, a code
    /// block in a known language is drawn in its language's colours (`code_blocks`).
    pub fn render(&self, text: &str, width: usize) -> String {
        let Some(skin) = &self.skin else {
            return text.trim_end().to_owned();
        };
        let mut skin = skin.clone();
        let palette = self.palette();
        if self.styled {
            palette.paint_markdown(&mut skin);
        }
        let indent = self.code_indent.load(Ordering::Relaxed);
        skin.code_block.left_margin = indent;
        let width = width.max(20);
        let lay_out = |markdown: &str| FmtText::from(&skin, markdown, Some(width)).to_string();
        let parts = code_blocks::parts(text);
        if !self.styled || !parts.iter().any(|part| matches!(part, Part::Code { .. })) {
            return lay_out(text).trim_end_matches('\n').to_owned();
        }
        let mut shown = String::new();
        for part in parts {
            match part {
                Part::Markdown(markdown) => shown.push_str(&lay_out(markdown)),
                Part::Code { language, code } => {
                    // As the renderer does, an indent that leaves too little room is dropped.
                    let indent = if width.saturating_sub(indent) < MIN_CODE_ROOM {
                        0
                    } else {
                        indent
                    };
                    shown.push_str(&code_blocks::render(
                        code, language, &palette, indent, width,
                    ));
                    shown.push('\n');
                }
            }
        }
        shown.trim_end_matches('\n').to_owned()
    }
}

/// The terminal's width in columns (80 when it cannot be read).
pub fn terminal_width() -> usize {
    let (columns, _) = termimad::terminal_size();
    if columns == 0 {
        80
    } else {
        usize::from(columns)
    }
}

/// The terminal's height in rows (24 when it cannot be read).
pub fn terminal_height() -> usize {
    let (_, rows) = termimad::terminal_size();
    if rows == 0 { 24 } else { usize::from(rows) }
}

/// The rows `text` takes on a terminal `width` columns wide (a line longer than the width wraps).
/// Counted in columns, not characters: a CJK character or an emoji takes two, a combining mark
/// none, so erasing what streamed goes back to its first row, no fewer rows and no more.
pub fn rows(text: &str, width: usize) -> usize {
    let width = width.max(1);
    text.split('\n').map(|line| line_rows(line, width)).sum()
}

/// The zero-width joiner: the character after it joins the one before it (`👨‍👩‍👧` is one
/// two-column emoji on the terminal, as tmux and the terminals that draw such emoji show it).
const ZERO_WIDTH_JOINER: char = '\u{200d}';
/// The columns between a terminal's tab stops.
const TAB_STOP: usize = 8;

/// The rows one line of `text` (no line break in it) takes, wrapped as the terminal wraps it: a
/// character that does not fit in what is left of a row (a two-column one in the last column)
/// starts the next row; a tab moves to the next tab stop and never past the last column.
fn line_rows(line: &str, width: usize) -> usize {
    let mut rows = 1;
    let mut column = 0;
    let mut joined = false;
    for character in line.chars() {
        if character == '\t' {
            column = ((column / TAB_STOP + 1) * TAB_STOP).min(width);
            joined = false;
            continue;
        }
        let columns = if joined {
            0
        } else {
            unicode_width::UnicodeWidthChar::width(character).unwrap_or(0)
        };
        joined = character == ZERO_WIDTH_JOINER;
        if columns == 0 {
            continue;
        }
        if column + columns > width {
            rows += 1;
            column = 0;
        }
        column += columns;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_wrap_at_the_width_and_markup_is_laid_out() {
        let markdown = Markdown::styled(false);
        let text = "# Plan\n\nalpha beta gamma delta epsilon zeta eta theta iota kappa\n\n- **first** item\n- `code` item\n\n| name | size |\n|---|---|\n| a.rs | 10 |\n";
        let shown = markdown.render(text, 24);
        for line in shown.lines() {
            assert!(line.chars().count() <= 24, "{line:?} in\n{shown}");
        }
        let words: Vec<&str> = shown.split_whitespace().collect();
        for word in ["alpha", "epsilon", "kappa"] {
            assert!(words.contains(&word), "{word} split in\n{shown}");
        }
        assert!(!shown.contains("**"), "{shown}");
        assert!(!shown.contains("# Plan"), "{shown}");
        assert!(shown.contains("Plan"), "{shown}");
        assert!(shown.contains('│'), "a table: {shown}");
        assert!(
            !shown.contains('\u{1b}'),
            "no styles without colour: {shown:?}"
        );
    }

    /// A code block's lines are indented by `markdown.codeBlockIndent` (Pi's two spaces by
    /// default, a tab as four columns); the text around it is not.
    #[test]
    fn code_blocks_are_indented_as_the_setting_says() {
        let markdown = Markdown::styled(false);
        let text = "Run this:\n\n```\ncargo test\n```\n";
        let code_line = |shown: &str| {
            shown
                .lines()
                .find(|line| line.contains("cargo test"))
                .map(str::to_owned)
                .unwrap()
        };
        let shown = markdown.render(text, 40);
        assert!(shown.starts_with("Run this:"), "{shown:?}");
        assert!(code_line(&shown).starts_with("  cargo test"), "{shown:?}");
        markdown.set_code_block_indent("\t");
        assert!(code_line(&markdown.render(text, 40)).starts_with("    cargo test"));
        // Clones share the setting: the event task's copy renders as the chat's does.
        let clone = markdown.clone();
        markdown.set_code_block_indent("");
        assert!(code_line(&clone.render(text, 40)).starts_with("cargo test"));
        // An indent wider than the terminal (a project's settings may say anything) is dropped,
        // not drawn past the edge.
        markdown.set_code_block_indent(&" ".repeat(100_000));
        let shown = markdown.render(text, 40);
        assert!(code_line(&shown).starts_with("cargo test"), "{shown:?}");
        assert!(shown.lines().all(|line| line.chars().count() <= 40));
    }

    /// A code block in a known language is drawn in its colours, laid out as the renderer lays
    /// out every block: the same lines, indents and blank lines, once the escapes are taken out.
    #[test]
    fn highlighted_blocks_keep_the_renderers_layout() {
        let styled = Markdown::styled(true);
        let plain = Markdown::styled(false);
        for text in [
            "Run this:\n\n```rust\nfn main() {\n    let x = 1;\n}\n```\n\nDone.\n",
            "```ts\nconst a = 1;\n```",
            "- item\n```python\nx = 1  # one\n```\nafter\n```text\nplain\n```\n",
            "# Title\n\n```bash\n\ncargo test\n\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        ] {
            let highlighted = styled.render(text, 60);
            assert!(
                highlighted.contains("\x1b[0m"),
                "no piece painted: {highlighted:?}"
            );
            let expected: Vec<String> = plain
                .render(text, 60)
                .lines()
                .map(|line| line.trim_end().to_owned())
                .collect();
            let shown: Vec<String> = anstream::adapter::strip_str(&highlighted)
                .to_string()
                .lines()
                .map(|line| line.trim_end().to_owned())
                .collect();
            assert_eq!(shown, expected, "{text:?}");
        }
        // Without colours nothing is highlighted.
        assert!(!plain.render("```rust\nfn x() {}\n```", 60).contains('\x1b'));
    }

    #[test]
    fn rows_count_wrapped_lines() {
        assert_eq!(rows("abc\n\nabcdefgh", 4), 4);
        assert_eq!(rows("", 10), 1);
    }

    #[test]
    fn rows_count_columns_not_characters() {
        // Two columns each: 200 CJK characters or emoji take four rows of 120, not two.
        assert_eq!(rows(&"界".repeat(200), 120), 4);
        assert_eq!(rows(&"🎉".repeat(200), 120), 4);
        assert_eq!(rows(&"A".repeat(200), 120), 2);
        // A wide character never straddles the edge: in the last column it starts the next row.
        assert_eq!(rows(&format!("{}界", "a".repeat(3)), 4), 2);
        assert_eq!(rows(&format!("{}界", "a".repeat(2)), 4), 1);
        // A line exactly as wide as the terminal takes one row.
        assert_eq!(rows(&"界".repeat(60), 120), 1);
        // Combining marks take no column; an emoji joined by zero-width joiners is one emoji.
        assert_eq!(rows(&"e\u{301}".repeat(120), 120), 1);
        assert_eq!(rows(&"👨\u{200d}👩\u{200d}👧".repeat(60), 120), 1);
        assert_eq!(rows(&"👨\u{200d}👩\u{200d}👧".repeat(61), 120), 2);
        // A tab goes to the next stop, never past the last column.
        assert_eq!(rows("\tabc", 10), 2);
        assert_eq!(rows(&format!("{}\t", "a".repeat(9)), 10), 1);
    }
}

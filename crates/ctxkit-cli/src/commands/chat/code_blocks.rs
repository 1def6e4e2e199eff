//! A reply's fenced code blocks in their language's colours (`ctxkit-highlight`, the theme's
//! `syntax*` tokens). The reply is cut into the markdown between blocks, which the markdown
//! renderer lays out as before, and the blocks whose fence names a known language, which are drawn
//! here: indented as the renderer indents code, wrapped at the terminal's width, one colour per
//! piece. A block in no language, or one the highlighter does not know, stays with the markdown.

use ctxkit_highlight::Piece;

use super::palette::{Palette, Role};

/// A part of a reply.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Part<'text> {
    /// Markdown, laid out by the renderer.
    Markdown(&'text str),
    /// A fenced block in a language the highlighter knows: its fence word and its lines.
    Code {
        language: &'text str,
        code: &'text str,
    },
}

/// The columns a tab takes in a highlighted block.
const TAB: &str = "    ";

/// `text` cut at its fenced code blocks in a known language. A fence is a line starting with three
/// backticks (as the renderer reads one); the block ends at a line of backticks alone, or at the
/// end of the text. A fence in no known language is skipped whole, so a fence shown inside it is
/// not taken for a block.
pub(super) fn parts(text: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut markdown_start = 0;
    let mut lines = lines_with_offsets(text);
    while let Some((fence_start, line)) = lines.next() {
        let Some(info) = line.trim_end_matches(['\r', '\n']).strip_prefix("```") else {
            continue;
        };
        let language = info.split_whitespace().next().unwrap_or("");
        let body_start = fence_start + line.len();
        // The closing line's start and end, or the text's end for a block left open.
        let (body_end, end) = lines
            .by_ref()
            .find(|(_, line)| {
                let bare = line.trim_end_matches(['\r', '\n']);
                bare.starts_with("```") && bare.trim_start_matches('`').trim().is_empty()
            })
            .map_or((text.len(), text.len()), |(start, line)| {
                (start, start + line.len())
            });
        if language.is_empty() || !ctxkit_highlight::knows(language) {
            continue;
        }
        if fence_start > markdown_start {
            parts.push(Part::Markdown(&text[markdown_start..fence_start]));
        }
        let code = &text[body_start..body_end];
        let code = code.strip_suffix('\n').unwrap_or(code);
        let code = code.strip_suffix('\r').unwrap_or(code);
        parts.push(Part::Code { language, code });
        markdown_start = end;
    }
    if markdown_start < text.len() {
        parts.push(Part::Markdown(&text[markdown_start..]));
    }
    parts
}

/// Each line of `text` with its line break, and the byte it starts at.
fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_inclusive('\n').scan(0, |start, line| {
        let at = *start;
        *start += line.len();
        Some((at, line))
    })
}

/// `code` in `language` (a tab as [`TAB`]), each line indented by `indent` columns and cut into rows of the columns
/// left of `width`, every piece in its token's colour under `palette`.
pub(super) fn render(
    code: &str,
    language: &str,
    palette: &Palette,
    indent: usize,
    width: usize,
) -> String {
    let room = width.saturating_sub(indent).max(1);
    let margin = " ".repeat(width.saturating_sub(room));
    let code = code.replace('\t', TAB);
    let lines = ctxkit_highlight::highlight(&code, language).unwrap_or_else(|| {
        code.split('\n')
            .map(|line| {
                vec![Piece {
                    token: None,
                    text: line,
                }]
            })
            .collect()
    });
    let mut rows = Vec::new();
    for pieces in &lines {
        for row in wrap(pieces, room) {
            rows.push(format!("{margin}{}", paint(&row, palette, Role::Text)));
        }
    }
    rows.join("\n")
}

/// A line's pieces cut into rows of at most `room` characters.
fn wrap<'code>(pieces: &[Piece<'code>], room: usize) -> Vec<Vec<Piece<'code>>> {
    let mut rows = vec![Vec::new()];
    let mut used = 0;
    for piece in pieces {
        let mut rest = piece.text;
        while !rest.is_empty() {
            if used == room {
                rows.push(Vec::new());
                used = 0;
            }
            let take = rest
                .char_indices()
                .nth(room - used)
                .map_or(rest.len(), |(at, _)| at);
            let (head, tail) = rest.split_at(take);
            used += head.chars().count();
            if let Some(row) = rows.last_mut() {
                row.push(Piece {
                    token: piece.token,
                    text: head,
                });
            }
            rest = tail;
        }
    }
    rows
}

/// Pieces of code, each between its token's colour escapes (`plain` for a piece that is no token).
pub(super) fn paint(pieces: &[Piece<'_>], palette: &Palette, plain: Role) -> String {
    let mut row = String::new();
    for piece in pieces {
        let role = piece.token.map_or(plain, Role::Syntax);
        row.push_str(&format!(
            "\x1b[{}m{}\x1b[0m",
            palette.code(role),
            piece.text
        ));
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_known_language_is_cut_out_and_the_rest_stays_markdown() {
        let text = "Run this:\n\n```rust\nfn main() {}\n```\n\nThen:\n```text\nplain\n```\n";
        let parts = parts(text);
        assert_eq!(
            parts,
            vec![
                Part::Markdown("Run this:\n\n"),
                Part::Code {
                    language: "rust",
                    code: "fn main() {}"
                },
                Part::Markdown("\nThen:\n```text\nplain\n```\n"),
            ]
        );
    }

    #[test]
    fn a_fence_inside_an_unknown_block_is_not_a_block_and_an_open_fence_runs_to_the_end() {
        let text = "```markdown-ish\n```rust\nnot code\n```\nafter\n```python\nx = 1\n";
        let parts = parts(text);
        assert_eq!(
            parts,
            vec![
                Part::Markdown("```markdown-ish\n```rust\nnot code\n```\nafter\n"),
                Part::Code {
                    language: "python",
                    code: "x = 1"
                },
            ]
        );
        assert_eq!(super::parts("no fences"), vec![Part::Markdown("no fences")]);
    }

    #[test]
    fn a_block_is_indented_and_wrapped_with_its_text_whole() {
        let code = "let name = \"a long string that wraps\";\n\tx";
        let shown = render(code, "rust", &Palette::default(), 2, 20);
        let plain = anstream::adapter::strip_str(&shown).to_string();
        for row in plain.lines() {
            assert!(row.starts_with("  "), "{row:?}");
            assert!(row.chars().count() <= 20, "{row:?}");
        }
        let joined: String = plain.lines().map(|row| &row[2..]).collect();
        assert_eq!(joined, "let name = \"a long string that wraps\";    x");
        // The terminal's palette: `let` is a keyword (blue), the string green.
        assert!(shown.contains("\x1b[34mlet\x1b[0m"), "{shown:?}");
        assert!(shown.contains("\x1b[32m\"a long"), "{shown:?}");
    }
}

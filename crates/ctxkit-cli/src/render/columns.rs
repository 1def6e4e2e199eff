//! Text fitted to the terminal at its words, where the terminal would break it at its last
//! column, mid-word: the chat's two-column lists (`/help`, `/hotkeys`: a name, then its
//! description from column 28, going on in lines of 28 spaces; a tester's 80-column terminal cut
//! `/help`'s lines mid-word) and its messages (`wrap_at_words`; QA r97: an error line broken inside
//! a number).

use unicode_width::UnicodeWidthStr as _;

/// Where the description column starts.
const DESCRIPTION_COLUMN: usize = 28;
/// Below this width a description goes under its name, four columns in.
const NARROW: usize = 60;

/// `text`, a two-column list, fitted to `columns`: each description re-wrapped at its words in
/// the room its column leaves (under its name when the terminal is narrow). Lines of another shape
/// are kept as they are.
pub fn fit_two_columns(text: &str, columns: usize) -> String {
    let narrow = columns < NARROW;
    let indent = if narrow { 4 } else { DESCRIPTION_COLUMN };
    // One column short of the edge: a line that fills the row makes some terminals wrap early.
    let room = columns.saturating_sub(indent + 1).max(20);
    let mut out = Vec::new();
    for (name, description) in entries(text) {
        if description.is_empty() {
            out.push(name);
            continue;
        }
        let lines = wrap_words(&description, room);
        let mut lines = lines.iter();
        if narrow {
            out.push(name);
        } else if let Some(first) = lines.next() {
            out.push(format!("{name:<DESCRIPTION_COLUMN$}{first}"));
        }
        out.extend(lines.map(|line| format!("{}{line}", " ".repeat(indent))));
    }
    out.join("\n")
}

/// The list's entries: the name part and the whole description (its continuation lines joined),
/// or a line of another shape and no description.
fn entries(text: &str) -> Vec<(String, String)> {
    let indent = " ".repeat(DESCRIPTION_COLUMN);
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let continued = line
            .strip_prefix(indent.as_str())
            .filter(|more| !more.starts_with(' '));
        if let (Some(more), Some((_, description))) = (continued, entries.last_mut())
            && !description.is_empty()
        {
            description.push(' ');
            description.push_str(more.trim());
            continue;
        }
        let split = line
            .char_indices()
            .nth(DESCRIPTION_COLUMN)
            .map(|(at, _)| at)
            .filter(|&at| line[..at].ends_with("  ") && !line[at..].starts_with(' '));
        entries.push(match split {
            Some(at) => (line[..at].trim_end().to_owned(), line[at..].to_owned()),
            None => (line.to_owned(), String::new()),
        });
    }
    entries
}

/// `text` with each line wider than `columns` broken between its words, the pieces indented as
/// the line is; a word wider than the room keeps a line of its own (the terminal breaks it).
pub fn wrap_at_words(text: &str, columns: usize) -> String {
    // One column short of the edge, as `fit_two_columns`.
    let room = columns.saturating_sub(1).max(20);
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            if line.width() <= room {
                return line.to_owned();
            }
            let words = line.trim_start();
            let indent = line.get(..line.len() - words.len()).unwrap_or_default();
            let room = room.saturating_sub(indent.width()).max(20);
            wrap_words(words, room)
                .iter()
                .map(|piece| format!("{indent}{piece}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    lines.join("\n")
}

/// `text`'s words in lines of at most `room` columns (a longer word on a line of its own).
fn wrap_words(text: &str, room: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.width() + 1 + word.width() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_breaks_between_words_and_keeps_its_indent() {
        let message =
            "Error: the context length is 5000 tokens. However, your messages resulted in 6308";
        assert_eq!(
            wrap_at_words(message, 41),
            "Error: the context length is 5000\ntokens. However, your messages resulted\nin 6308"
        );
        assert_eq!(
            wrap_at_words(&format!("short\n    {message}"), 41),
            "short\n    Error: the context length is 5000\n    tokens. However, your messages\n    resulted in 6308"
        );
        // A line that fits, and a word wider than the room, are left as they are.
        let path = format!("see {}", "x".repeat(50));
        assert_eq!(wrap_at_words(&path, 41), format!("see\n{}", "x".repeat(50)));
        assert_eq!(wrap_at_words("fits", 41), "fits");
    }

    const HELP: &str = "Commands:
  /compact [focus]          summarize older messages now (optional focus for the summary; /c too)
  /tree                     walk the session tree: go to an entry (with or without a summary
                            of the branch left), label entries
  Alt-Enter or a line ending in \\ starts a new line";

    #[test]
    fn a_two_column_list_is_rewrapped_at_its_words() {
        let fitted = fit_two_columns(HELP, 80);
        assert_eq!(
            fitted,
            "Commands:
  /compact [focus]          summarize older messages now (optional focus for
                            the summary; /c too)
  /tree                     walk the session tree: go to an entry (with or
                            without a summary of the branch left), label
                            entries
  Alt-Enter or a line ending in \\ starts a new line"
        );
        assert!(fitted.lines().all(|line| line.chars().count() < 80));
        let narrow = fit_two_columns(HELP, 40);
        assert!(
            narrow.contains("\n  /tree\n    walk the session tree: go to an\n"),
            "{narrow}"
        );
        // Wide enough, the list is as written but for its joined continuation lines.
        let wide = fit_two_columns(HELP, 200);
        assert!(wide.contains("(with or without a summary of the branch left), label entries"));
    }
}

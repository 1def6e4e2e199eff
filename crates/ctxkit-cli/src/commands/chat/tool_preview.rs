//! The last lines of a running call's output, shown under its spinner line as Pi shows them, so
//! a long command's progress (a test run, a build) is told from a hang.

use unicode_width::UnicodeWidthChar as _;

/// Before each line shown.
const INDENT: &str = "    ";

/// `output`'s lines as shown under the spinner on a terminal `width` columns wide: each made safe
/// for the terminal (the command's text is shown, never obeyed), indented, and cut to one row.
pub(super) fn preview(output: &str, width: usize) -> String {
    let room = width.saturating_sub(INDENT.len() + 1).max(8);
    output
        .lines()
        .map(|line| {
            let safe = crate::render::terminal_safe(&line.replace('\t', "    ")).into_owned();
            format!("{INDENT}{}", fit(&safe, room))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `line` cut to at most `room` columns, `…` ending a line that was cut.
fn fit(line: &str, room: usize) -> String {
    let width = |character: char| character.width().unwrap_or(0);
    if line.chars().map(width).sum::<usize>() <= room {
        return line.to_owned();
    }
    let mut used = 0;
    let mut shown: String = line
        .chars()
        .take_while(|character| {
            used += width(*character);
            used < room
        })
        .collect();
    shown.push('…');
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_indented_made_safe_and_cut_to_the_width() {
        let shown = preview("tick 1\n\x1b]52;c;aGk=\x07\n\tindented\n", 80);
        assert_eq!(
            shown,
            "    tick 1\n    \\u001b]52;c;aGk=\\u0007\n        indented"
        );
        let long = "x".repeat(100);
        let shown = preview(&long, 20);
        assert_eq!(shown, format!("    {}…", "x".repeat(14)));
        // Exactly the room fits whole; wide characters count two columns.
        assert_eq!(
            preview(&"y".repeat(15), 20),
            format!("    {}", "y".repeat(15))
        );
        assert_eq!(preview("漢字漢字漢字漢字漢字", 20), "    漢字漢字漢字漢…");
    }
}

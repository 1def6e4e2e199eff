//! An approval question as the terminal shows it. The question quotes what the model chose (a
//! command, a path), so it is someone else's text: control characters and bidi marks are shown as
//! escapes (`render::terminal_safe`, so `\x1b[2K\r\x1b[1A` cannot erase `Run `rm -rf ~` and the
//! tool line above it), and blank space that could push the start of a command off the screen —
//! runs of blank lines, long runs of blanks in a line — is shown by its size, not printed. A long
//! question ends by saying how many lines it has, so a user who sees only its end knows to scroll.

use crate::render::terminal_safe;

/// Blank characters in a row shown as they are; a longer run is shown as its count.
const MAX_BLANK_RUN: usize = 16;
/// Lines a question may have before it says how many it has.
const LONG_QUESTION_LINES: usize = 12;

/// `question` made safe to show (see the module comment).
pub fn shown_question(question: &str) -> String {
    let safe = terminal_safe(question);
    let mut lines: Vec<String> = Vec::new();
    let mut blank_lines = 0usize;
    for line in safe.split('\n') {
        let line = collapse_blanks(line.trim_end());
        if line.is_empty() {
            blank_lines += 1;
            continue;
        }
        push_blank_lines(&mut lines, blank_lines);
        blank_lines = 0;
        lines.push(line);
    }
    push_blank_lines(&mut lines, blank_lines);
    if lines.len() > LONG_QUESTION_LINES {
        lines.push(format!(
            "[the question above has {} lines; scroll up to read all of it]",
            lines.len()
        ));
    }
    lines.join("\n")
}

/// One empty line as it is; more as one line that counts them.
fn push_blank_lines(lines: &mut Vec<String>, count: usize) {
    match count {
        0 => {}
        1 => lines.push(String::new()),
        _ => lines.push(format!("[{count} blank lines]")),
    }
}

/// `line` with each run of more than [`MAX_BLANK_RUN`] blank characters (spaces, tabs, any
/// Unicode white space) shown as its count.
fn collapse_blanks(line: &str) -> String {
    let mut shown = String::with_capacity(line.len());
    let mut run = String::new();
    for character in line.chars() {
        if character.is_whitespace() {
            run.push(character);
            continue;
        }
        flush_run(&mut shown, &mut run);
        shown.push(character);
    }
    flush_run(&mut shown, &mut run);
    shown
}

fn flush_run(shown: &mut String, run: &mut String) {
    let count = run.chars().count();
    if count > MAX_BLANK_RUN {
        shown.push_str(&format!(" [{count} blank characters] "));
    } else {
        shown.push_str(run);
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA: `Run `touch PWNED # \x1b[2K\r\x1b[1Aecho hello`?` showed only "echo hello`? [y]es…":
    /// the escapes erased the command and the tool line above it.
    #[test]
    fn escapes_in_a_command_are_shown_not_obeyed() {
        let shown = shown_question("Run `touch PWNED # \u{1b}[2K\r\u{1b}[1Aecho hello`?");
        assert_eq!(
            shown,
            "Run `touch PWNED # \\u001b[2K\\u000d\\u001b[1Aecho hello`?"
        );
        let bidi = shown_question("Run `echo \u{202e}fr- mr`?");
        assert!(bidi.contains("\\u202e"), "{bidi}");
    }

    /// QA: `touch PWNED` followed by 80 newlines and `echo hello` showed only the last line at the
    /// question; 5,000 spaces on one line do the same on a 120-column terminal.
    #[test]
    fn blank_space_cannot_push_a_command_off_the_screen() {
        let lines = format!("Run `touch PWNED{}echo hello`?", "\n".repeat(80));
        assert_eq!(
            shown_question(&lines),
            "Run `touch PWNED\n[79 blank lines]\necho hello`?"
        );
        let spaces = format!("Run `touch PWNED;{}echo hello`?", " ".repeat(5000));
        assert_eq!(
            shown_question(&spaces),
            "Run `touch PWNED; [5000 blank characters] echo hello`?"
        );
        let wide = format!("Run `x{}y`?", "\u{3000}\t".repeat(20));
        assert_eq!(shown_question(&wide), "Run `x [40 blank characters] y`?");
    }

    #[test]
    fn an_ordinary_script_is_shown_as_it_is_and_a_long_one_says_its_length() {
        let script = "Run `cat > x.py <<'EOF'\ndef f():\n        return 1\n\nEOF`?";
        assert_eq!(shown_question(script), script);
        let long = format!("Run `rm -rf ~\n{}`?", "echo ok\n".repeat(30));
        let shown = shown_question(&long);
        assert!(shown.starts_with("Run `rm -rf ~\necho ok\n"), "{shown}");
        assert!(
            shown.ends_with("\n[the question above has 32 lines; scroll up to read all of it]"),
            "{shown}"
        );
    }
}

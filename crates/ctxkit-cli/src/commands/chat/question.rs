//! An approval question as the terminal shows it. The question quotes what the model chose (a
//! command, a path), so it is someone else's text: control characters and bidi marks are shown as
//! escapes (`render::terminal_safe`, so `\x1b[2K\r\x1b[1A` cannot erase `Run `rm -rf ~` and the
//! tool line above it), and blank space that could push the start of a command off the screen —
//! runs of blank lines, long runs of blanks in a line — is shown by its size, not printed. Blank
//! means anything that shows nothing: white space, characters of no width (U+200B) and the
//! glyphs drawn empty (U+2800 braille blank, the Hangul fillers). A question that takes more rows
//! of the terminal than a screen shows at once ends by saying how many, so a user who sees only
//! its end knows to scroll.

use unicode_width::UnicodeWidthChar as _;

use crate::render::terminal_safe;

/// Blank characters in a row shown as they are; a longer run is shown as its count.
const MAX_BLANK_RUN: usize = 16;
/// Rows a question may take before it says how many it takes.
const LONG_QUESTION_ROWS: usize = 12;
/// Rows a question may take at all: a longer one shows its first [`HEAD_ROWS`] and last
/// [`TAIL_ROWS`] and counts the rows between, so its start stays within the scrollback.
const MAX_SHOWN_ROWS: usize = 60;
const HEAD_ROWS: usize = 40;
const TAIL_ROWS: usize = 10;
/// What each line of a question of several lines starts with.
const MARGIN: &str = "│ ";

/// `question` made safe to show on the terminal the chat runs in (see the module comment).
pub fn shown_question(question: &str) -> String {
    let columns = crate::cli::terminal_columns().unwrap_or(80);
    let shown = shown_question_at(question, columns.max(20));
    if !shown.contains(LEFT_OUT_NOTE) {
        return shown;
    }
    // The rows left out can still be read before answering (QA 2026-12-07: an `rm -rf` at the
    // 42nd of 83 lines was never shown): the whole question, as safe as shown, in a file of the
    // user's own.
    match whole_question_file(&terminal_safe(question)) {
        Some(path) => shown.replace(
            LEFT_OUT_NOTE,
            &format!("{LEFT_OUT_NOTE}; all of it: {}", path.display()),
        ),
        None => shown,
    }
}

/// What a question too long to show says of the rows it leaves out.
const LEFT_OUT_NOTE: &str = "not shown; answering yes runs them too";

/// `text` written to a new file only this user may read, in the temporary folder; its path.
fn whole_question_file(text: &str) -> Option<std::path::PathBuf> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    static ASKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let number = ASKED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "ctxkit-question-{}-{number}.txt",
        std::process::id()
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .ok()?;
    file.write_all(text.as_bytes()).ok()?;
    Some(path)
}

/// `question` made safe to show on a terminal `columns` wide.
fn shown_question_at(question: &str, columns: usize) -> String {
    let safe = terminal_safe(question);
    let mut lines: Vec<String> = Vec::new();
    let mut blank_lines = 0usize;
    for line in safe.split('\n') {
        let line = collapse_blanks(line.trim_end());
        if line.chars().all(is_blank) {
            blank_lines += 1;
            continue;
        }
        push_blank_lines(&mut lines, blank_lines);
        blank_lines = 0;
        lines.push(escape_invisible(&line));
    }
    push_blank_lines(&mut lines, blank_lines);
    if lines.len() == 1 {
        return one_line_question(lines.remove(0), columns);
    }
    // Each line of a question of several behind a margin: a line of the command cannot pass for
    // a question of ctxkit's own (QA 2026-12-07: a command's lines drew a question already
    // answered "no", then the real one's keys followed the next).
    let width = columns.saturating_sub(MARGIN.len()).max(10);
    let rows: Vec<String> = lines
        .iter()
        .flat_map(|line| cut_rows(line, width))
        .collect();
    let mut shown: Vec<String> = Vec::new();
    if rows.len() > MAX_SHOWN_ROWS {
        let left_out = rows.len() - HEAD_ROWS - TAIL_ROWS;
        shown.extend(rows[..HEAD_ROWS].iter().map(|row| format!("{MARGIN}{row}")));
        shown.push(format!("{MARGIN}[… {left_out} more rows {LEFT_OUT_NOTE}]"));
        shown.extend(
            rows[rows.len() - TAIL_ROWS..]
                .iter()
                .map(|row| format!("{MARGIN}{row}")),
        );
    } else {
        shown.extend(rows.iter().map(|row| format!("{MARGIN}{row}")));
        if rows.len() > LONG_QUESTION_ROWS {
            shown.push(format!(
                "[the question above takes {} rows; scroll up to read all of it]",
                rows.len()
            ));
        }
    }
    shown.join("\n")
}

/// `line` with each character that draws nothing but is no blank (a zero-width space or joiner,
/// a soft hyphen, a byte-order mark; the bidirectional ones are escaped already) shown as its
/// code: `zw\u200bname` is not the `zwname` it reads as (QA 2026-12-07). A run of them long
/// enough to be padding was counted as blank space before.
fn escape_invisible(line: &str) -> String {
    let invisible = ctxkit_protocol::draws_nothing;
    if !line.chars().any(invisible) {
        return line.to_owned();
    }
    line.chars()
        .map(|character| {
            if invisible(character) {
                format!("\\u{:04x}", u32::from(character))
            } else {
                character.to_string()
            }
        })
        .collect()
}

/// A question of one line: as it is, or, past [`MAX_SHOWN_ROWS`] rows, its start and end (QA
/// 2026-12-07: a 3.3 MB command wrote 27,501 rows, and its start was gone from the scrollback).
fn one_line_question(line: String, columns: usize) -> String {
    let rows = rows_of(&line, columns);
    if rows > MAX_SHOWN_ROWS {
        let cut = cut_rows(&line, columns);
        let left_out = cut.len() - HEAD_ROWS - TAIL_ROWS;
        return format!(
            "{}\n[… {left_out} more rows {LEFT_OUT_NOTE}]\n{}",
            cut[..HEAD_ROWS].concat(),
            cut[cut.len() - TAIL_ROWS..].concat()
        );
    }
    if rows > LONG_QUESTION_ROWS {
        return format!(
            "{line}\n[the question above takes {rows} rows; scroll up to read all of it]"
        );
    }
    line
}

/// `line` cut into rows of at most `width` columns.
fn cut_rows(line: &str, width: usize) -> Vec<String> {
    let mut rows = vec![String::new()];
    let mut used = 0usize;
    for character in line.chars() {
        let columns = character.width().unwrap_or(0);
        if used + columns > width {
            rows.push(String::new());
            used = 0;
        }
        used += columns;
        if let Some(row) = rows.last_mut() {
            row.push(character);
        }
    }
    rows
}

/// Whether `character` shows nothing: white space, no width, or a glyph drawn empty.
fn is_blank(character: char) -> bool {
    character.is_whitespace()
        || character.width().is_none_or(|width| width == 0)
        || matches!(
            character,
            '\u{2800}' | '\u{3164}' | '\u{ffa0}' | '\u{115f}' | '\u{1160}' | '\u{1d159}'
        )
}

/// The terminal rows `line` takes at `columns` wide (an empty line takes one).
fn rows_of(line: &str, columns: usize) -> usize {
    let width: usize = line
        .chars()
        .map(|character| character.width().unwrap_or(0))
        .sum();
    width.div_ceil(columns).max(1)
}

/// One empty line as it is; more as one line that counts them.
fn push_blank_lines(lines: &mut Vec<String>, count: usize) {
    match count {
        0 => {}
        1 => lines.push(String::new()),
        _ => lines.push(format!("[{count} blank lines]")),
    }
}

/// `line` with each run of more than [`MAX_BLANK_RUN`] blank characters shown as its count.
fn collapse_blanks(line: &str) -> String {
    let mut shown = String::with_capacity(line.len());
    let mut run = String::new();
    for character in line.chars() {
        if is_blank(character) {
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
        let shown = shown_question_at("Run `touch PWNED # \u{1b}[2K\r\u{1b}[1Aecho hello`?", 120);
        assert_eq!(
            shown,
            "Run `touch PWNED # \\u001b[2K\\u000d\\u001b[1Aecho hello`?"
        );
        let bidi = shown_question_at("Run `echo \u{202e}fr- mr`?", 120);
        assert!(bidi.contains("\\u202e"), "{bidi}");
    }

    /// QA: `touch PWNED` followed by 80 newlines and `echo hello` showed only the last line at the
    /// question; 5,000 spaces on one line do the same on a 120-column terminal.
    #[test]
    fn blank_space_cannot_push_a_command_off_the_screen() {
        let lines = format!("Run `touch PWNED{}echo hello`?", "\n".repeat(80));
        assert_eq!(
            shown_question_at(&lines, 120),
            "│ Run `touch PWNED\n│ [79 blank lines]\n│ echo hello`?"
        );
        let spaces = format!("Run `touch PWNED;{}echo hello`?", " ".repeat(5000));
        assert_eq!(
            shown_question_at(&spaces, 120),
            "Run `touch PWNED; [5000 blank characters] echo hello`?"
        );
        let wide = format!("Run `x{}y`?", "\u{3000}\t".repeat(20));
        assert_eq!(
            shown_question_at(&wide, 120),
            "Run `x [40 blank characters] y`?"
        );
    }

    #[test]
    fn a_script_is_shown_behind_a_margin_and_a_long_one_says_its_length() {
        let script = "Run `cat > x.py <<'EOF'\ndef f():\n        return 1\n\nEOF`?";
        assert_eq!(
            shown_question_at(script, 120),
            "│ Run `cat > x.py <<'EOF'\n│ def f():\n│         return 1\n│ \n│ EOF`?"
        );
        let long = format!("Run `rm -rf ~\n{}`?", "echo ok\n".repeat(30));
        let shown = shown_question_at(&long, 120);
        assert!(shown.starts_with("│ Run `rm -rf ~\n│ echo ok\n"), "{shown}");
        assert!(
            shown.ends_with("\n[the question above takes 32 rows; scroll up to read all of it]"),
            "{shown}"
        );
    }

    /// QA 2026-12-07: a command's own lines drew a question already answered ("…? [y]es / [n]o /
    /// [a]lways: no", "Command not run") and a second one whose keys the real question's
    /// followed; a 3.3 MB command pushed its start out of the scrollback.
    #[test]
    fn a_character_that_draws_nothing_is_shown_as_its_code() {
        assert_eq!(
            shown_question_at("Run `cat zw\u{200b}name soft\u{ad}hy \u{feff}bom`?", 120),
            "Run `cat zw\\u200bname soft\\u00adhy \\ufeffbom`?"
        );
    }

    #[test]
    fn a_command_cannot_draw_a_question_of_its_own_nor_hide_its_start() {
        let fake =
            "Run `touch PWNED`? [y]es / [n]o / [a]lways: no\n  Command not run\nRun `git status`?";
        let shown = shown_question_at(fake, 120);
        assert!(shown.lines().all(|line| line.starts_with("│ ")), "{shown}");
        let huge = format!(
            "Run `touch HUGE_RAN; echo {}`?",
            "harmless ".repeat(400_000)
        );
        let shown = shown_question_at(&huge, 100);
        assert!(
            shown.starts_with("Run `touch HUGE_RAN; echo harmless"),
            "{}",
            &shown[..200]
        );
        assert!(
            shown.lines().count() <= MAX_SHOWN_ROWS,
            "{}",
            shown.lines().count()
        );
        assert!(shown.contains("more rows not shown; answering yes runs them too]"));
        // Said with where all of it can be read.
        let shown = shown_question(&huge);
        let path = shown
            .split("; all of it: ")
            .nth(1)
            .and_then(|rest| rest.split(']').next())
            .unwrap_or_else(|| panic!("{}", &shown[..300]));
        let whole = std::fs::read_to_string(path).unwrap();
        assert!(whole.starts_with("Run `touch HUGE_RAN") && whole.len() > 3_000_000);
        std::fs::remove_file(path).unwrap();
        let many = format!("Run `touch A\n{}touch Z`?", "echo ok\n".repeat(500));
        let shown = shown_question_at(&many, 100);
        assert!(shown.starts_with("│ Run `touch A\n"), "{shown}");
        assert!(shown.ends_with("│ touch Z`?"), "{shown}");
        assert!(shown.lines().count() <= MAX_SHOWN_ROWS, "{shown}");
    }

    /// QA: a command padded with 5,000 braille blanks (U+2800), or 2,500 spaces each followed by a
    /// zero-width space, filled the screen with blank rows: the `touch PWNED` before them scrolled
    /// off and the question showed only `echo hello`. Both are blank; a long line says its rows.
    #[test]
    fn characters_that_show_nothing_are_blank_and_a_long_line_counts_its_rows() {
        let braille = format!("Run `touch PWNED #{} echo hello`?", "\u{2800}".repeat(5000));
        assert_eq!(
            shown_question_at(&braille, 100),
            "Run `touch PWNED # [5001 blank characters] echo hello`?"
        );
        let zero_width = format!(
            "Run `touch PWNED #{} echo hello`?",
            " \u{200b}".repeat(2500)
        );
        assert_eq!(
            shown_question_at(&zero_width, 100),
            "Run `touch PWNED # [5001 blank characters] echo hello`?"
        );
        let long = format!("Run `rm -rf ~ #{}`?", "a".repeat(2000));
        let shown = shown_question_at(&long, 100);
        assert!(
            shown.ends_with("\n[the question above takes 21 rows; scroll up to read all of it]"),
            "{shown}"
        );
        let short = format!("Run `echo {}`?", "a".repeat(150));
        assert_eq!(shown_question_at(&short, 100), short);
    }
}

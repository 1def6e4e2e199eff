//! Where `edit`'s `oldText` stands in a file, and the file with `newText` in its place.
//!
//! Tried in order, the first that finds the text anywhere decides (found twice is refused):
//! 1. the text as given;
//! 2. its line breaks written the file's other way: the model reads a file as lines (`read` shows
//!    no line endings), so in a file written with `\r\n` (Windows) its multi-line `oldText` comes
//!    with `\n`; `newText` is then written with `\r\n` too;
//! 3. loosely, line by line: trailing white space, typographic quotes and dashes and unusual
//!    spaces (a model retyping `“`, `–` or a non-breaking space as ASCII, or the reverse) do not
//!    count. Only the lines the match touches are rewritten (from `newText` and the loose reading
//!    of what surrounds it on those lines); every other line keeps its bytes.
//!
//! The first two change nothing but the text replaced, in a file of mixed line endings too.

/// A file with its edit made.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Applied {
    pub(super) text: String,
    /// The line the replaced text began on (1-based).
    pub(super) line: usize,
    /// How many lines were replaced, and by how many.
    pub(super) replaced_lines: usize,
    pub(super) new_lines: usize,
}

/// Why `oldText` cannot be replaced.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unmatched {
    NotFound,
    /// It stands this many times in the file.
    Many(usize),
}

/// `text` with the one occurrence of `old` replaced by `new`; see the module's documentation.
pub(super) fn apply(text: &str, old: &str, new: &str) -> Result<Applied, Unmatched> {
    let as_given = (old.to_owned(), new.to_owned());
    for (old, new) in std::iter::once(as_given).chain(other_ending(old, new)) {
        match text.matches(old.as_str()).count() {
            0 => {}
            1 => return Ok(exact(text, &old, &new)),
            many => return Err(Unmatched::Many(many)),
        }
    }
    loose(text, old, new)
}

fn exact(text: &str, old: &str, new: &str) -> Applied {
    let at = text.find(old).unwrap_or(0);
    Applied {
        text: text.replacen(old, new, 1),
        line: text[..at].matches('\n').count() + 1,
        replaced_lines: old.lines().count().max(1),
        new_lines: new.lines().count(),
    }
}

/// `text` with every `(old, new)` of `edits` made in turn (Pi 1.6's `edits[]`), each as [`apply`]
/// makes one; the index of the first that cannot be made, and why. Each must stand once in the
/// text the ones before it left, so an edit that overlaps an earlier one, or that an earlier one
/// would make ambiguous, is refused rather than made somewhere else.
pub(super) fn apply_all(
    text: &str,
    edits: &[(&str, &str)],
) -> Result<(String, Vec<Applied>), (usize, Unmatched)> {
    let mut current = text.to_owned();
    let mut made = Vec::with_capacity(edits.len());
    for (index, (old, new)) in edits.iter().enumerate() {
        let applied = apply(&current, old, new).map_err(|unmatched| (index, unmatched))?;
        current.clone_from(&applied.text);
        made.push(applied);
    }
    Ok((current, made))
}

/// `old` and `new` with their line breaks written the other way, when `old` has any.
fn other_ending(old: &str, new: &str) -> Option<(String, String)> {
    if !old.contains('\n') {
        return None;
    }
    let to_lf = |text: &str| text.replace("\r\n", "\n");
    if old.contains("\r\n") {
        return Some((to_lf(old), to_lf(new)));
    }
    let to_crlf = |text: &str| to_lf(text).replace('\n', "\r\n");
    Some((to_crlf(old), to_crlf(new)))
}

/// A character as the loose reading sees it.
fn loose_char(character: char) -> char {
    match character {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// A line (without its ending) as the loose reading sees it.
fn loose_line(line: &str) -> String {
    line.trim_end().chars().map(loose_char).collect()
}

/// The file's lines: each line's text without its ending, and its ending (`\n`, `\r\n` or none).
fn lines_of(text: &str) -> Vec<(&str, &str)> {
    text.split_inclusive('\n')
        .map(|line| match line.strip_suffix("\r\n") {
            Some(content) => (content, "\r\n"),
            None => match line.strip_suffix('\n') {
                Some(content) => (content, "\n"),
                None => (line, ""),
            },
        })
        .collect()
}

/// The loose match: in the file read loosely (each line loose, its line break kept as `\n`), the
/// one place `old` read loosely stands; the lines it touches are rewritten, the others kept.
fn loose(text: &str, old: &str, new: &str) -> Result<Applied, Unmatched> {
    let lines = lines_of(text);
    let loose_lines: Vec<String> = lines
        .iter()
        .map(|(line, ending)| {
            let mut loose = loose_line(line);
            if !ending.is_empty() {
                loose.push('\n');
            }
            loose
        })
        .collect();
    let loose_text = loose_lines.concat();
    let loose_old = old
        .replace("\r\n", "\n")
        .split('\n')
        .map(loose_line)
        .collect::<Vec<_>>()
        .join("\n");
    if loose_old.trim().is_empty() {
        return Err(Unmatched::NotFound);
    }
    let start = match loose_text.matches(loose_old.as_str()).count() {
        0 => return Err(Unmatched::NotFound),
        1 => loose_text.find(loose_old.as_str()).unwrap_or(0),
        many => return Err(Unmatched::Many(many)),
    };
    let end = start + loose_old.len();
    let first = loose_text[..start].matches('\n').count();
    // The line of the match's last character: a match ending in a line break ends on that line.
    let breaks = loose_old.matches('\n').count();
    let last = first + breaks - usize::from(loose_old.ends_with('\n'));
    let touched_start: usize = loose_lines[..first].iter().map(String::len).sum();
    let touched = loose_lines[first..=last].concat();
    let new = new.replace("\r\n", "\n");
    let rewritten = format!(
        "{}{new}{}",
        &touched[..start - touched_start],
        &touched[end - touched_start..]
    );
    // Written with the file's line break from the touched lines on (the file's first, else `\n`).
    let line_break = lines[first..]
        .iter()
        .chain(&lines)
        .map(|(_, ending)| *ending)
        .find(|ending| !ending.is_empty())
        .unwrap_or("\n");
    let mut result = String::with_capacity(text.len() + new.len());
    for (line, ending) in &lines[..first] {
        result.push_str(line);
        result.push_str(ending);
    }
    result.push_str(&rewritten.replace('\n', line_break));
    for (line, ending) in &lines[last + 1..] {
        result.push_str(line);
        result.push_str(ending);
    }
    Ok(Applied {
        text: result,
        line: first + 1,
        replaced_lines: last - first + 1,
        new_lines: new.lines().count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(text: &str, old: &str, new: &str) -> String {
        apply(text, old, new).unwrap().text
    }

    #[test]
    fn text_that_matches_as_given_is_replaced_as_given() {
        assert_eq!(applied("a\nb\r\nc\n", "b\r\nc", "B\r\nC"), "a\nB\r\nC\n");
    }

    #[test]
    fn lines_given_with_lf_match_a_crlf_file_and_are_written_with_crlf() {
        let text = "fn a() {\r\n    1\r\n}\r\n";
        let done = apply(text, "fn a() {\n    1\n}", "fn a() {\n    2\n    3\n}").unwrap();
        assert_eq!(done.text, "fn a() {\r\n    2\r\n    3\r\n}\r\n");
        assert_eq!((done.line, done.replaced_lines, done.new_lines), (1, 3, 4));
    }

    #[test]
    fn lines_given_with_crlf_match_an_lf_file() {
        assert_eq!(applied("x\ny\n", "x\r\ny", "z\r\nw"), "z\nw\n");
    }

    #[test]
    fn a_text_standing_twice_is_refused_in_any_form() {
        assert_eq!(
            apply("a\r\nb\r\na\r\nb", "a\nb", "c"),
            Err(Unmatched::Many(2))
        );
        assert_eq!(apply("ab ab", "ab", "c"), Err(Unmatched::Many(2)));
        assert_eq!(apply("a\r\nb", "q\nb", "c"), Err(Unmatched::NotFound));
        assert_eq!(
            apply("x = 1;  \ny\nx = 1;\n", "x = 1;\ny", "z"),
            Ok(Applied {
                text: "z\nx = 1;\n".to_owned(),
                line: 1,
                replaced_lines: 2,
                new_lines: 1
            }),
            "loosely, the trailing spaces do not count"
        );
        assert_eq!(
            applied("ab\nab  \n", "ab\n", "c\n"),
            "c\nab  \n",
            "an exact match found once wins over two loose ones"
        );
        assert_eq!(
            apply("a  \nb\na\t\nb\n", "a\nb\n", "c"),
            Err(Unmatched::Many(2))
        );
    }

    #[test]
    fn trailing_space_and_typography_do_not_count_and_other_lines_keep_their_bytes() {
        let text = "keep  \r\nlet s = “hi” – ok;   \r\nnext\u{a0}line\r\nlast  \r\n";
        let done = apply(text, "let s = \"hi\" - ok;\nnext line", "let s = \"bye\";").unwrap();
        assert_eq!(done.text, "keep  \r\nlet s = \"bye\";\r\nlast  \r\n");
        assert_eq!((done.line, done.replaced_lines, done.new_lines), (2, 2, 1));
    }

    #[test]
    fn a_loose_match_inside_a_line_keeps_the_rest_of_the_line() {
        let text = "call(‘a’, 1)\nend\n";
        assert_eq!(applied(text, "'a'", "'b'"), "call('b', 1)\nend\n");
        assert_eq!(applied("tail  \nnext\n", "tail\n", "t\n"), "t\nnext\n");
        assert_eq!(applied("a\nlast  \n", "last\n", "end\n"), "a\nend\n");
    }

    #[test]
    fn a_loose_match_may_end_in_a_letter_of_several_bytes() {
        assert_eq!(applied("q  \nx café\nz\n", "q\nx café", "tea"), "tea\nz\n");
    }

    #[test]
    fn several_edits_are_made_in_turn_and_one_that_cannot_be_stops_them_all() {
        let text = "a\nb\nc\n";
        let (done, made) = apply_all(text, &[("a", "A"), ("c", "C")]).unwrap();
        assert_eq!(done, "A\nb\nC\n");
        assert_eq!(made.iter().map(|m| m.line).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(
            apply_all(text, &[("a\nb", "x"), ("b\nc", "y")]).unwrap_err(),
            (1, Unmatched::NotFound),
            "overlapping edits"
        );
        assert_eq!(
            apply_all(text, &[("a", "c"), ("c", "d")]).unwrap_err(),
            (1, Unmatched::Many(2)),
            "an earlier edit made the later one ambiguous"
        );
    }

    #[test]
    fn a_blank_old_text_never_matches_loosely() {
        assert_eq!(apply("a\n\nb", "  \n", "x"), Err(Unmatched::NotFound));
    }

    proptest::proptest! {
        /// Any file, any `oldText` cut from it and loosened, any `newText`: no panic; a replacement
        /// keeps every line before the one it names and holds `newText`.
        #[test]
        fn an_edit_keeps_the_lines_before_it_and_holds_its_text(
            text in "[abé中 “–\u{a0}\t\r\n]{0,40}",
            cut in (0usize..40, 0usize..40),
            loosen in 0u8..4,
            new in "[xyé \n]{0,8}",
        ) {
            let characters: Vec<char> = text.chars().collect();
            let (from, to) = (cut.0.min(characters.len()), cut.1.min(characters.len()));
            let mut old: String = characters[from.min(to)..from.max(to)].iter().collect();
            if loosen & 1 == 1 {
                old = old.replace("\r\n", "\n");
            }
            if loosen & 2 == 2 {
                old = old.chars().map(loose_char).collect();
            }
            if let Ok(done) = apply(&text, &old, &new) {
                let kept: String = text.split_inclusive('\n').take(done.line - 1).collect();
                proptest::prop_assert!(done.text.starts_with(&kept), "{done:?}");
                proptest::prop_assert!(
                    done.text.replace("\r\n", "\n").contains(&new.trim_end().replace("\r\n", "\n")),
                    "{done:?}"
                );
            }
        }
    }
}

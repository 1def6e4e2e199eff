//! Where `edit`'s `oldText` stands in a file, and the file with `newText` in its place.
//!
//! Tried in order, the first that finds the text anywhere decides (found twice is refused):
//! 1. the text as given;
//! 2. its line breaks written the file's other way: the model reads a file as lines (`read` shows
//!    no line endings), so in a file written with `\r\n` (Windows) its multi-line `oldText` comes
//!    with `\n`;
//! 3. loosely, line by line, as Pi 1.6.0 reads loosely: each line in NFKC (a letter and its
//!    accent as one character or two, a ligature or a full-width letter as its plain letters),
//!    then trailing white space, typographic quotes and dashes and unusual spaces (a model
//!    retyping `“`, `–` or a non-breaking space as ASCII, or the reverse) do not count. Only the lines the match touches are rewritten (from `newText` and the loose reading
//!    of what surrounds it on those lines); every other line keeps its bytes.
//!
//! The first two change nothing but the text replaced, in a file of mixed line endings too. The
//! line breaks of `newText` are written as the line the change begins on ends (a last line
//! without one: as the line before it), as Pi 1.6 writes them.

use std::ops::Range;

/// Where one replacement goes: the bytes `range` of the file give way to `with`.
#[derive(Debug, PartialEq, Eq)]
struct Splice {
    range: Range<usize>,
    with: String,
    made: Made,
}

/// One replacement made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Made {
    /// The line the new text begins on (1-based).
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
    /// It overlaps the text of the edit with this index (of `edits[]`).
    Overlaps(usize),
}

/// `text` with every `(old, new)` of `edits` made (Pi 1.6's `edits[]`): each is found in `text`
/// as it is, as [`locate`] finds one, not in what the others make of it, so no edit can land in
/// another's `newText`; two that overlap are refused. The edits made, in the file's order, each
/// with the line it begins on in the new text; or the index of the first edit that cannot be
/// made, and why.
pub(super) fn apply_all(
    text: &str,
    edits: &[(&str, &str)],
) -> Result<(String, Vec<Made>), (usize, Unmatched)> {
    let mut splices = edits
        .iter()
        .enumerate()
        .map(|(index, (old, new))| {
            locate(text, old, new)
                .map(|splice| (index, splice))
                .map_err(|unmatched| (index, unmatched))
        })
        .collect::<Result<Vec<_>, _>>()?;
    splices.sort_by_key(|(_, splice)| splice.range.start);
    for pair in splices.windows(2) {
        let ((first, earlier), (second, later)) = (&pair[0], &pair[1]);
        if earlier.range.end > later.range.start {
            return Err((
                (*first).max(*second),
                Unmatched::Overlaps((*first).min(*second)),
            ));
        }
    }
    let mut result = String::with_capacity(text.len());
    let mut made = Vec::with_capacity(splices.len());
    let (mut copied, mut lines_added) = (0, 0isize);
    for (_, splice) in splices {
        result.push_str(&text[copied..splice.range.start]);
        result.push_str(&splice.with);
        made.push(Made {
            line: splice.made.line.saturating_add_signed(lines_added),
            ..splice.made
        });
        lines_added += line_breaks(&splice.with) - line_breaks(&text[splice.range.clone()]);
        copied = splice.range.end;
    }
    result.push_str(&text[copied..]);
    Ok((result, made))
}

/// How many `\n` a text holds, signed for line arithmetic.
fn line_breaks(text: &str) -> isize {
    isize::try_from(text.matches('\n').count()).unwrap_or(isize::MAX)
}

/// Where the one occurrence of `old` stands in `text`, and what replaces it; see the module's
/// documentation.
fn locate(text: &str, old: &str, new: &str) -> Result<Splice, Unmatched> {
    for old in std::iter::once(old.to_owned()).chain(other_ending(old)) {
        match text.matches(old.as_str()).count() {
            0 => {}
            1 => return Ok(exact(text, &old, new)),
            many => return Err(Unmatched::Many(many)),
        }
    }
    loose(text, old, new)
}

fn exact(text: &str, old: &str, new: &str) -> Splice {
    let at = text.find(old).unwrap_or(0);
    Splice {
        range: at..at + old.len(),
        with: with_line_break(new, line_break_at(text, at)),
        made: Made {
            line: text[..at].matches('\n').count() + 1,
            replaced_lines: old.lines().count().max(1),
            new_lines: new.lines().count(),
        },
    }
}

/// `new` with each of its line breaks written `line_break`.
fn with_line_break(new: &str, line_break: &str) -> String {
    new.replace("\r\n", "\n").replace('\n', line_break)
}

/// The line break of the line holding byte `at`: its own, or for a last line without one the line
/// before's; `\n` in a text of one line.
fn line_break_at(text: &str, at: usize) -> &'static str {
    let crlf_ending = |line_feed: usize| line_feed > 0 && text.as_bytes()[line_feed - 1] == b'\r';
    let line_feed = text[at..]
        .find('\n')
        .map(|offset| at + offset)
        .or_else(|| text[..at].rfind('\n'));
    match line_feed {
        Some(line_feed) if crlf_ending(line_feed) => "\r\n",
        _ => "\n",
    }
}

/// `old` with its line breaks written the other way, when it has any.
fn other_ending(old: &str) -> Option<String> {
    if !old.contains('\n') {
        return None;
    }
    let to_lf = old.replace("\r\n", "\n");
    if old.contains("\r\n") {
        return Some(to_lf);
    }
    Some(to_lf.replace('\n', "\r\n"))
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

/// A line (without its ending) as the loose reading sees it: NFKC first, as Pi's
/// `normalizeForFuzzyMatch` (QA r105: `café` typed precomposed did not match a file's `cafe` +
/// U+0301, which Pi's loose match finds).
fn loose_line(line: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let normal: String = line.nfkc().collect();
    normal.trim_end().chars().map(loose_char).collect()
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
fn loose(text: &str, old: &str, new: &str) -> Result<Splice, Unmatched> {
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
    let range_start: usize = lines[..first]
        .iter()
        .map(|(line, ending)| line.len() + ending.len())
        .sum();
    let range_end: usize = range_start
        + lines[first..=last]
            .iter()
            .map(|(line, ending)| line.len() + ending.len())
            .sum::<usize>();
    Ok(Splice {
        range: range_start..range_end,
        with: with_line_break(&rewritten, line_break_at(text, range_start)),
        made: Made {
            line: first + 1,
            replaced_lines: last - first + 1,
            new_lines: new.lines().count(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with one edit made.
    #[derive(Debug, PartialEq, Eq)]
    struct Applied {
        text: String,
        line: usize,
        replaced_lines: usize,
        new_lines: usize,
    }

    /// `text` with the one occurrence of `old` replaced by `new`.
    fn apply(text: &str, old: &str, new: &str) -> Result<Applied, Unmatched> {
        let splice = locate(text, old, new)?;
        let mut result = text.to_owned();
        result.replace_range(splice.range, &splice.with);
        Ok(Applied {
            text: result,
            line: splice.made.line,
            replaced_lines: splice.made.replaced_lines,
            new_lines: splice.made.new_lines,
        })
    }

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
    fn several_edits_are_each_found_in_the_file_as_it_was() {
        let text = "a\nb\nc\n";
        let (done, made) = apply_all(text, &[("c", "C"), ("a", "A")]).unwrap();
        assert_eq!(done, "A\nb\nC\n");
        assert_eq!(made.iter().map(|m| m.line).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(
            apply_all(text, &[("a", "c"), ("c", "d")]).unwrap().0,
            "c\nb\nd\n",
            "an edit never lands in the text another one wrote"
        );
        assert_eq!(
            apply_all(text, &[("a", "x"), ("x", "y")]).unwrap_err(),
            (1, Unmatched::NotFound),
            "nor looks for it there"
        );
    }

    #[test]
    fn edits_that_overlap_are_refused_and_edits_side_by_side_are_made() {
        let text = "one\ntwo\nthree\n";
        assert_eq!(
            apply_all(text, &[("two\nthree", "x"), ("one\ntwo", "y")]).unwrap_err(),
            (1, Unmatched::Overlaps(0))
        );
        assert_eq!(
            apply_all(text, &[("one\n", "1\n"), ("two", "2")])
                .unwrap()
                .0,
            "1\n2\nthree\n"
        );
        assert_eq!(
            apply_all("x = “a”;  \ny\n", &[("y", "z"), ("x = \"a\";", "x = 1;")])
                .unwrap()
                .0,
            "x = 1;\nz\n",
            "a loose edit takes its whole line, and the next line is its neighbour"
        );
        assert_eq!(
            apply_all("f(“a”, “b”)\n", &[("\"a\"", "1"), ("\"b\"", "2")]).unwrap_err(),
            (1, Unmatched::Overlaps(0)),
            "two loose edits of one line would each rewrite it"
        );
    }

    #[test]
    fn each_edit_names_the_line_it_begins_on_in_the_new_file() {
        let text = "a\nb\nc\nd\n";
        let (done, made) =
            apply_all(text, &[("d", "D"), ("a\n", "0\n1\n2\n"), ("b\nc\n", "")]).unwrap();
        assert_eq!(done, "0\n1\n2\nD\n");
        let lines: Vec<_> = made
            .iter()
            .map(|m| (m.line, m.replaced_lines, m.new_lines))
            .collect();
        assert_eq!(lines, [(1, 1, 3), (4, 2, 0), (4, 1, 1)]);
    }

    #[test]
    fn a_letter_composed_the_other_way_matches_and_other_lines_keep_their_bytes() {
        let text = "keep e\u{301}\ncafe\u{301} x\n";
        assert_eq!(applied(text, "café x", "tea x"), "keep e\u{301}\ntea x\n");
        assert_eq!(applied("café x\n", "cafe\u{301} x", "tea x"), "tea x\n");
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

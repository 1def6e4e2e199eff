//! Where `edit`'s `oldText` stands in a file, and what replaces it. The model reads a file as
//! lines (`read` shows no line endings), so its `oldText` and `newText` come with `\n` whatever
//! the file uses: in a file written with `\r\n` (Windows), a multi-line `oldText` would never
//! match. When the text as given matches nowhere, it is tried with the file's own line ending,
//! and `newText` is written with the same ending. Nothing else in the file changes: the lines
//! around the edit keep their bytes, in a file of mixed endings too.

/// The text to replace and its replacement, as they stand in the file.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Replacement {
    pub(super) old: String,
    pub(super) new: String,
}

/// Why `oldText` cannot be replaced.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unmatched {
    NotFound,
    /// It stands this many times in the file.
    Many(usize),
}

/// The one place `old` stands in `text`, in the form it has there: as given, else (only when it
/// stands nowhere as given) with every line break written as `\r\n`, or as `\n` for text given
/// with `\r\n`.
pub(super) fn find(text: &str, old: &str, new: &str) -> Result<Replacement, Unmatched> {
    let as_given = Replacement {
        old: old.to_owned(),
        new: new.to_owned(),
    };
    for candidate in std::iter::once(as_given).chain(other_ending(old, new)) {
        match text.matches(candidate.old.as_str()).count() {
            0 => {}
            1 => return Ok(candidate),
            many => return Err(Unmatched::Many(many)),
        }
    }
    Err(Unmatched::NotFound)
}

/// `old` and `new` with their line breaks written the other way, when `old` has any.
fn other_ending(old: &str, new: &str) -> Option<Replacement> {
    if !old.contains('\n') {
        return None;
    }
    let to_lf = |text: &str| text.replace("\r\n", "\n");
    if old.contains("\r\n") {
        return Some(Replacement {
            old: to_lf(old),
            new: to_lf(new),
        });
    }
    let to_crlf = |text: &str| to_lf(text).replace('\n', "\r\n");
    Some(Replacement {
        old: to_crlf(old),
        new: to_crlf(new),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_matches_as_given_is_replaced_as_given() {
        let text = "a\nb\r\nc\n";
        assert_eq!(
            find(text, "b\r\nc", "B\r\nC"),
            Ok(Replacement {
                old: "b\r\nc".to_owned(),
                new: "B\r\nC".to_owned()
            })
        );
    }

    #[test]
    fn lines_given_with_lf_match_a_crlf_file_and_are_written_with_crlf() {
        let text = "fn a() {\r\n    1\r\n}\r\n";
        let found = find(text, "fn a() {\n    1\n}", "fn a() {\n    2\n    3\n}").unwrap();
        assert_eq!(found.old, "fn a() {\r\n    1\r\n}");
        assert_eq!(found.new, "fn a() {\r\n    2\r\n    3\r\n}");
        assert_eq!(
            text.replacen(&found.old, &found.new, 1),
            "fn a() {\r\n    2\r\n    3\r\n}\r\n"
        );
    }

    #[test]
    fn lines_given_with_crlf_match_an_lf_file() {
        let found = find("x\ny\n", "x\r\ny", "z\r\nw").unwrap();
        assert_eq!((found.old.as_str(), found.new.as_str()), ("x\ny", "z\nw"));
    }

    #[test]
    fn a_text_standing_twice_is_refused_in_any_form() {
        assert_eq!(
            find("a\r\nb\r\na\r\nb", "a\nb", "c"),
            Err(Unmatched::Many(2))
        );
        assert_eq!(find("ab ab", "ab", "c"), Err(Unmatched::Many(2)));
        assert_eq!(find("a\r\nb", "q\nb", "c"), Err(Unmatched::NotFound));
    }
}

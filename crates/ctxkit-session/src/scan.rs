//! JSON text walked by its brackets and strings only, without parsing it: whether a line closes as
//! one object. Strings are skipped with `memchr` on their quotes, so the cost is far below parsing
//! them; what lies between is trusted to be JSON until the line is read whole.

/// Whether `byte` is JSON whitespace.
fn is_blank(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r' | b'\n')
}

/// The first index at or after `at` that is not whitespace (`bytes.len()` when none).
fn skip_blanks(bytes: &[u8], at: usize) -> usize {
    bytes
        .get(at..)
        .and_then(|rest| rest.iter().position(|byte| !is_blank(*byte)))
        .map_or(bytes.len(), |offset| at + offset)
}

/// The index of the quote that closes the string opened by the quote at `open`.
fn string_close(bytes: &[u8], open: usize) -> Option<usize> {
    // The string ends at the first quote after an even run of backslashes; quotes are far rarer
    // inside strings than escapes (`\n`), so look for quotes only and count the backslashes before.
    let mut from = open + 1;
    loop {
        let quote = from + memchr::memchr(b'"', bytes.get(from..)?)?;
        let backslashes = bytes.get(open + 1..quote).map_or(0, |inside| {
            inside
                .iter()
                .rev()
                .take_while(|byte| **byte == b'\\')
                .count()
        });
        if backslashes % 2 == 0 {
            return Some(quote);
        }
        from = quote + 1;
    }
}

/// The index of the bracket that closes the object or array the text at `at` is inside (brackets
/// and strings opened from `at` on are skipped whole); `None` when the text ends first or a closing
/// bracket is missing.
fn container_close(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth: usize = 0;
    let mut position = at;
    loop {
        match bytes.get(position)? {
            b'"' => position = string_close(bytes, position)?,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => match depth.checked_sub(1) {
                Some(outer) => depth = outer,
                None => return Some(position),
            },
            _ => {}
        }
        position += 1;
    }
}

/// Whether `line` is one object as far as brackets and strings go: it opens with `{`, and the
/// bracket that closes it is the line's last byte before trailing blanks. A line cut short, as a
/// write torn by a crash leaves it, never passes.
pub(crate) fn closes_as_one_object(line: &[u8]) -> bool {
    let start = skip_blanks(line, 0);
    if line.get(start) != Some(&b'{') {
        return false;
    }
    container_close(line, start + 1).is_some_and(|close| {
        line.get(close) == Some(&b'}') && skip_blanks(line, close + 1) == line.len()
    })
}

/// [`closes_as_one_object`] for a line known to be inside two objects and outside any string at
/// `at` (past the role of a message head, see `fast_head`): the inner one must close (by any
/// bracket, as that walk allows inside), then the outer one by `}` as the line's last byte before
/// trailing blanks.
pub(crate) fn closes_after_message_head(line: &[u8], at: usize) -> bool {
    container_close(line, at)
        .and_then(|inner| container_close(line, inner + 1))
        .is_some_and(|close| {
            line.get(close) == Some(&b'}') && skip_blanks(line, close + 1) == line.len()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_close_where_their_brackets_and_strings_do() {
        assert_eq!(container_close(br#"1, "]" ], 2]"#, 0), Some(7));
        assert_eq!(container_close(br#""a\\\"]" ]"#, 0), Some(9));
        assert_eq!(container_close(br#"{"a":"}"} ]"#, 0), Some(10));
        assert_eq!(container_close(br#"[1, [2]"#, 0), None);
        assert_eq!(container_close(br#""a\"#, 0), None);
    }

    #[test]
    fn only_a_line_that_is_one_closed_object_passes() {
        assert!(closes_as_one_object(br#" {"a":{"b":"}"}} "#));
        assert!(!closes_as_one_object(br#"{"a":1}}"#));
        assert!(!closes_as_one_object(br#"{"a":1} {"b":2}"#));
        assert!(!closes_as_one_object(b"[1]"));
        assert!(!closes_as_one_object(br#"{"a":"\"#));
        assert!(!closes_as_one_object(br#"{"a":["x"}"#));
        assert!(!closes_as_one_object(b""));
    }
}

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

/// The deepest nesting of objects and arrays a line may have, the outermost object counting as
/// one: the JSON parser's own limit (`serde_json` refuses a 128th level), so a line indexed from
/// its first fields can always be parsed whole later, and a deeper one is skipped like any line
/// that is not JSON.
pub(crate) const MAX_NESTING: usize = 127;

/// Why a line's object does not close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unclosed {
    /// The text ends first, or a bracket does not match.
    CutShort,
    /// Objects and arrays nest deeper than [`MAX_NESTING`].
    TooDeep,
}

/// Why a line nested too deep is refused.
pub(crate) use ctxkit_protocol::TOO_DEEP;

/// The index of the bracket that closes the object or array the text at `at` is inside (brackets
/// and strings opened from `at` on are skipped whole), that container being at depth `outer`; an
/// error when the text ends first, a closing bracket is missing or the nesting passes
/// [`MAX_NESTING`].
fn container_close(bytes: &[u8], at: usize, outer: usize) -> Result<usize, Unclosed> {
    let mut depth: usize = outer;
    let mut position = at;
    loop {
        match bytes.get(position).ok_or(Unclosed::CutShort)? {
            b'"' => position = string_close(bytes, position).ok_or(Unclosed::CutShort)?,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Unclosed::TooDeep);
                }
            }
            b'}' | b']' if depth == outer => return Ok(position),
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        position += 1;
    }
}

/// Whether `line` is one object as far as brackets and strings go: it opens with `{`, and the
/// bracket that closes it is the line's last byte before trailing blanks. A line cut short, as a
/// write torn by a crash leaves it, never passes.
pub(crate) fn closes_as_one_object(line: &[u8]) -> Result<(), Unclosed> {
    let start = skip_blanks(line, 0);
    if line.get(start) != Some(&b'{') {
        return Err(Unclosed::CutShort);
    }
    let close = container_close(line, start + 1, 1)?;
    ends_the_line(line, close)
}

/// Whether the bracket at `close` is a `}` followed by nothing but blanks.
fn ends_the_line(line: &[u8], close: usize) -> Result<(), Unclosed> {
    if line.get(close) == Some(&b'}') && skip_blanks(line, close + 1) == line.len() {
        Ok(())
    } else {
        Err(Unclosed::CutShort)
    }
}

/// [`closes_as_one_object`] for a line known to be inside two objects and outside any string at
/// `at` (past the role of a message head, see `fast_head`): the inner one must close (by any
/// bracket, as that walk allows inside), then the outer one by `}` as the line's last byte before
/// trailing blanks.
pub(crate) fn closes_after_message_head(line: &[u8], at: usize) -> Result<(), Unclosed> {
    let inner = container_close(line, at, 2)?;
    let close = container_close(line, inner + 1, 1)?;
    ends_the_line(line, close)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_close_where_their_brackets_and_strings_do() {
        assert_eq!(container_close(br#"1, "]" ], 2]"#, 0, 1), Ok(7));
        assert_eq!(container_close(br#""a\\\"]" ]"#, 0, 1), Ok(9));
        assert_eq!(container_close(br#"{"a":"}"} ]"#, 0, 1), Ok(10));
        assert_eq!(
            container_close(br#"[1, [2]"#, 0, 1),
            Err(Unclosed::CutShort)
        );
        assert_eq!(container_close(br#""a\"#, 0, 1), Err(Unclosed::CutShort));
    }

    #[test]
    fn only_a_line_that_is_one_closed_object_passes() {
        assert!(closes_as_one_object(br#" {"a":{"b":"}"}} "#).is_ok());
        assert!(closes_as_one_object(br#"{"a":1}}"#).is_err());
        assert!(closes_as_one_object(br#"{"a":1} {"b":2}"#).is_err());
        assert!(closes_as_one_object(b"[1]").is_err());
        assert!(closes_as_one_object(br#"{"a":"\"#).is_err());
        assert!(closes_as_one_object(br#"{"a":["x"}"#).is_err());
        assert!(closes_as_one_object(b"").is_err());
    }

    /// The walk refuses exactly the lines the JSON parser refuses for their depth, so a line
    /// indexed from its first fields is always readable whole.
    #[test]
    fn the_nesting_limit_is_the_parsers() {
        for depth in 100..140 {
            let line = format!(
                "{{\"a\":{}1{}}}",
                "[".repeat(depth - 1),
                "]".repeat(depth - 1)
            );
            let parsed = serde_json::from_str::<serde_json::Value>(&line).is_ok();
            let walked = closes_as_one_object(line.as_bytes());
            assert_eq!(walked.is_ok(), parsed, "depth {depth}: {walked:?}");
            if !parsed {
                assert_eq!(walked, Err(Unclosed::TooDeep));
            }
        }
    }
}

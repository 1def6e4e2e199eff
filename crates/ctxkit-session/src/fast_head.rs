//! The head of a `message` line in the shape Pi and ctxkit write it, read without a JSON parser:
//! `{"type":"message","id":"…","parentId":"…"|null,"timestamp":"…","message":{"role":"…"`, with no
//! blanks and no escapes in those strings. Most lines of a large session have exactly this shape,
//! and reading it by hand costs a fraction of a parser's setup and its stop. Any other shape is left
//! to the parser (`head::read_head_prefix`), which gives the same head for the lines read here.

/// The fields of a head read by [`read`], borrowed from the line.
#[derive(Debug)]
pub(crate) struct FastHead<'a> {
    pub(crate) id: &'a str,
    pub(crate) parent_id: Option<&'a str>,
    pub(crate) timestamp: &'a str,
    pub(crate) role: &'a str,
    /// The offset just past the role's closing quote: the line is inside two objects there (the
    /// entry and its message) and outside any string.
    pub(crate) rest: usize,
}

/// Reads the head of `line` when it has exactly the shape above; `None` for any other line.
pub(crate) fn read(line: &str) -> Option<FastHead<'_>> {
    let mut cursor = Cursor { line, at: 0 };
    cursor.expect(r#"{"type":"message","id":"#)?;
    let id = cursor.string()?;
    cursor.expect(r#","parentId":"#)?;
    let parent_id = if cursor.expect("null").is_some() {
        None
    } else {
        Some(cursor.string()?)
    };
    cursor.expect(r#","timestamp":"#)?;
    let timestamp = cursor.string()?;
    cursor.expect(r#","message":{"role":"#)?;
    let role = cursor.string()?;
    Some(FastHead {
        id,
        parent_id,
        timestamp,
        role,
        rest: cursor.at,
    })
}

struct Cursor<'a> {
    line: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// Moves past `text` when the line goes on with it.
    fn expect(&mut self, text: &str) -> Option<()> {
        let rest = self.line.get(self.at..)?;
        rest.starts_with(text).then(|| self.at += text.len())
    }

    /// Reads a string without escapes or control characters (which JSON forbids raw in a string);
    /// `None` when the line does not go on with one.
    fn string(&mut self) -> Option<&'a str> {
        let bytes = self.line.as_bytes();
        if bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let length = bytes
            .get(start..)?
            .iter()
            .position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)?;
        let end = start + length;
        if bytes.get(end) != Some(&b'"') {
            return None;
        }
        self.at = end + 1;
        self.line.get(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::line_head::LineHead;

    fn same_as_parser(line: &str) {
        assert!(read(line).is_some(), "not read: {line}");
        let fast = LineHead::read_prefix(line).unwrap();
        let parsed = LineHead::read_prefix_with_parser(line).unwrap();
        assert!(!fast.1);
        assert_eq!(format!("{fast:?}"), format!("{parsed:?}"), "{line}");
    }

    #[test]
    fn reads_the_usual_shape_as_the_parser_does() {
        same_as_parser(
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z","message":{"role":"user","content":"x"}}"#,
        );
        same_as_parser(
            r#"{"type":"message","id":"a1","parentId":"p","timestamp":"t","message":{"role":"toolResult","content":[]}}"#,
        );
        same_as_parser(
            r#"{"type":"message","id":"a1","parentId":"p","timestamp":"t","message":{"role":"assistant","content":[],"provider":"p","model":"m"}}"#,
        );
        same_as_parser(
            r#"{"type":"message","id":"日本","parentId":"é","timestamp":"","message":{"role":"","content":[]}}"#,
        );
    }

    #[test]
    fn every_cut_of_a_line_is_judged_as_the_parser_judges_it() {
        let lines = [
            r#"{"type":"message","id":"a","parentId":"p","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","content":[{"type":"text","text":"x \" } ] { \\\" y"}],"isError":false,"timestamp":1}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","arguments":{"a":[1,{"b":"}"}]}}],"model":"m"}} "#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"]}"},"x":[]}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"},"x":1}{"y":2}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"}]"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"]}"#,
        ];
        for line in lines {
            for cut in 0..=line.len() {
                let Some(text) = line.get(..cut) else {
                    continue;
                };
                let fast = LineHead::read_prefix(text);
                let parsed = LineHead::read_prefix_with_parser(text);
                assert_eq!(format!("{fast:?}"), format!("{parsed:?}"), "{text}");
            }
        }
    }

    #[test]
    fn leaves_every_other_shape_to_the_parser() {
        for line in [
            r#"{"type":"label","id":"a","parentId":null,"timestamp":"t","targetId":"b"}"#,
            r#"{ "type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a\u0062","parentId":null,"timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a","timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a","parentId":7,"timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"content":"x","role":"user"}}"#,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":null}}"#,
            "{\"type\":\"message\",\"id\":\"a\tb\",\"parentId\":null,\"timestamp\":\"t\",\"message\":{\"role\":\"user\"}}",
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user"#,
            r#"{"type":"message","id":"a"#,
            "",
        ] {
            assert!(read(line).is_none(), "{line}");
        }
    }
}

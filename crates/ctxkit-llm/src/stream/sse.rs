//! Server-sent events: bytes in as they arrive, `(event, data)` pairs out at each blank line.
//! Comments (`:` lines, keep-alives) and `id`/`retry` fields are ignored; a line may be split
//! across chunks, and `\r\n` endings are accepted.

/// One event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub name: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub(crate) struct Parser {
    buffer: Vec<u8>,
    name: Option<String>,
    data: Vec<String>,
}

impl Parser {
    /// Feeds a chunk; returns the events it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if let Some(event) = self.line(line) {
                events.push(event);
            }
        }
        events
    }

    /// The event left open when the stream ends without a final blank line.
    pub(crate) fn finish(&mut self) -> Option<Event> {
        let rest = std::mem::take(&mut self.buffer);
        let rest = String::from_utf8_lossy(&rest).into_owned();
        let rest = rest.trim_end_matches(['\n', '\r']);
        if !rest.is_empty() {
            let _ = self.line(rest);
        }
        self.line("")
    }

    fn line(&mut self, line: &str) -> Option<Event> {
        if line.is_empty() {
            if self.data.is_empty() {
                self.name = None;
                return None;
            }
            return Some(Event {
                name: self.name.take(),
                data: std::mem::take(&mut self.data).join("\n"),
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_crlf_are_read() {
        let mut parser = Parser::default();
        assert!(parser.feed(b": keep-alive\n\nevent: ping\r\nda").is_empty());
        let events = parser.feed(b"ta: {\"a\":1}\r\n\r\ndata: one\ndata: two\n\n");
        assert_eq!(
            events,
            vec![
                Event {
                    name: Some("ping".into()),
                    data: "{\"a\":1}".into()
                },
                Event {
                    name: None,
                    data: "one\ntwo".into()
                },
            ]
        );
        parser.feed(b"data: [DONE]");
        assert_eq!(
            parser.finish().map(|event| event.data).as_deref(),
            Some("[DONE]")
        );
    }
}

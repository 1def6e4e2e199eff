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
    /// The bytes of the line not yet ended.
    buffer: Vec<u8>,
    /// How many of `buffer`'s bytes are known to hold no line break: a line of megabytes (a tool
    /// call's arguments in one event) arrives in thousands of chunks, and scanning it from its
    /// start at each one took quadratic time (24 MB: 30 s of CPU; QA r99).
    scanned: usize,
    name: Option<String>,
    data: Vec<String>,
}

impl Parser {
    /// Feeds a chunk; returns the events it completed.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut start = 0;
        let mut from = self.scanned;
        while let Some(offset) = self.buffer[from..].iter().position(|byte| *byte == b'\n') {
            let end = from + offset;
            let line = String::from_utf8_lossy(&self.buffer[start..end]).into_owned();
            if let Some(event) = self.line(line.trim_end_matches('\r')) {
                events.push(event);
            }
            start = end + 1;
            from = start;
        }
        // The ended lines go at once, not one by one: each removal moved the rest of the buffer.
        self.buffer.drain(..start);
        self.scanned = self.buffer.len();
        events
    }

    /// The event left open when the stream ends without a final blank line.
    pub(crate) fn finish(&mut self) -> Option<Event> {
        let rest = std::mem::take(&mut self.buffer);
        self.scanned = 0;
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

    /// QA r99: one event of 24 MB in 16 KB chunks took 30 s of CPU (each chunk rescanned the
    /// line from its start). Fed in 1-byte chunks, a 512 KB line is read in well under a second;
    /// the quadratic scan's 10¹¹ byte visits take minutes.
    #[test]
    fn a_long_line_in_many_chunks_is_read_in_linear_time() {
        let mut parser = Parser::default();
        let started = std::time::Instant::now();
        let mut events = parser.feed(b"data: ");
        let line = vec![b'x'; 512 << 10];
        for chunk in line.chunks(1) {
            events.extend(parser.feed(chunk));
        }
        events.extend(parser.feed(b"\r\n\ndata: next\n\n"));
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].data.len(), 512 << 10);
        assert_eq!(events[1].data, "next");
    }
}

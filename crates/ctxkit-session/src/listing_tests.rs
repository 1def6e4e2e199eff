//! The listing's tests: lines, chunks, Pi's listing of a v1 fork, invalid UTF-8.

use super::*;

#[test]
fn lines_are_read_as_the_whole_file_reader_reads_them() {
    let bytes = b"\xEF\xBB\xBF{\"a\":1}\n\n  \nbad \xff\xfe\n\xe4\xb8\n\xEF\xBB\xBFkept\nlast";
    let text_lines = |bytes| {
        byte_lines(bytes, true)
            .map(line_text)
            .filter(|text| !text.trim().is_empty())
            .map(Cow::into_owned)
    };
    let lines: Vec<String> = text_lines(bytes).collect();
    assert_eq!(
        lines,
        vec![
            "{\"a\":1}".to_owned(),
            "bad \u{fffd}\u{fffd}".to_owned(),
            "\u{fffd}".to_owned(),
            "\u{FEFF}kept".to_owned(),
            "last".to_owned(),
        ]
    );
    let mut whole = crate::line::read_lines(&bytes[..], 0, &mut Vec::new())
        .unwrap()
        .lines;
    crate::line::strip_byte_order_mark(&mut whole);
    let whole: Vec<String> = whole
        .iter()
        .map(|line| line.text.as_str().to_owned())
        .collect();
    assert_eq!(lines, whole);
    assert_eq!(text_lines(b"").count(), 0);
    assert_eq!(text_lines(b"x\n").count(), 1);
}

/// The same file read in chunks of any size gives the same record: lines cut by a chunk's
/// end, a line longer than a chunk, a last line without a newline, a byte-order mark.
#[test]
fn a_listing_read_in_chunks_is_the_listing_of_the_whole_file() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n");
    bytes.extend_from_slice(
        b"not json\n{\"type\":\"session_info\",\"id\":\"i\",\"name\":\"named\"}\n",
    );
    for index in 0..20 {
        let text = "x".repeat(index * 37);
        bytes.extend_from_slice(format!("{{\"type\":\"message\",\"id\":\"m{index}\",\"message\":{{\"role\":\"user\",\"content\":\"hi {index} {text}\",\"timestamp\":{}}}}}\n", 1735693200000_u64 + index as u64 * 1000).as_bytes());
    }
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"z\",\"message\":{\"role\":\"toolResult\",\"content\":\"last\"}}");
    let whole = session_info_of(Path::new("/s.jsonl"), &bytes, None).unwrap();
    assert_eq!(
        (whole.message_count, whole.name.as_deref()),
        (21, Some("named"))
    );
    assert_eq!(whole.first_message, "hi 0 ");
    for chunk in [1, 2, 7, 64, 500, bytes.len()] {
        let mut buffer = Vec::new();
        let info = session_info_from(
            Path::new("/s.jsonl"),
            &bytes[..],
            &mut buffer,
            chunk,
            None,
            &mut (),
        )
        .unwrap();
        assert_eq!(info, whole, "chunks of {chunk} bytes");
    }
}

/// QA (2026-12-07): a last line cut off by an interrupted append was counted as a message (`info`
/// said 29, `tokens` 28); the loader skips it. In chunks of any size, as the whole file.
#[test]
fn a_cut_off_last_line_is_not_counted() {
    let mut bytes = b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n".to_vec();
    bytes.extend_from_slice(
        b"{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"toolResult\",\"content\":[{\"type\":\"text\",\"text\":\"cut her");
    for chunk in [1, 7, 64, bytes.len() + 1] {
        let info = session_info_from(
            Path::new("/s.jsonl"),
            &bytes[..],
            &mut Vec::new(),
            chunk,
            None,
            &mut (),
        )
        .unwrap();
        assert_eq!(info.message_count, 1, "chunks of {chunk} bytes");
    }
}

/// A listing holds a chunk and a line, not the file: listing a 12 MB session read all of it
/// into one buffer before.
#[test]
fn listing_a_large_file_holds_a_chunk_not_the_file() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n",
    );
    let line = format!(
        "{{\"type\":\"message\",\"id\":\"t\",\"message\":{{\"role\":\"toolResult\",\"content\":\"{}\"}}}}\n",
        "y".repeat(1000)
    );
    let mut lines = 0;
    while text.len() < 12 << 20 {
        text.push_str(&line);
        lines += 1;
    }
    std::fs::write(file.path(), &text).unwrap();
    FILE_BUFFER.with(|buffer| *buffer.borrow_mut() = Vec::new());
    let info = read_session_info(file.path()).unwrap();
    assert_eq!(info.message_count, lines);
    let held = FILE_BUFFER.with(|buffer| buffer.borrow().capacity());
    assert!(held <= 2 * LISTING_CHUNK_BYTES, "held {held} bytes");
}

/// Issue 41: as Pi 1.6.0 lists Pi's own v1 `before-compaction.jsonl` fixture — no parent for
/// `branchedFrom`, `modified` the last activity even before the header's time — and with
/// injected context left out of the first message.
#[test]
fn a_v1_fork_lists_as_pi_1_6_lists_it() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-12-09T00:53:29.825Z\",\"cwd\":\"/w\",\"branchedFrom\":\"/old.jsonl\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"timestamp\":\"2025-12-08T22:41:05.306Z\",\"message\":{\"role\":\"user\",\"content\":\"<environment_context><cwd>/w</cwd></environment_context>\"}}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"timestamp\":\"2025-12-08T22:42:05.306Z\",\"message\":{\"role\":\"user\",\"content\":\"Fix the build\"}}\n");
    let info = session_info_of(Path::new("/s.jsonl"), &bytes, None).unwrap();
    assert_eq!(info.parent_session_path, None);
    assert_eq!(info.modified, "2025-12-08T22:42:05.306Z");
    assert_eq!(info.first_message, "Fix the build");
}

#[test]
fn a_listing_reads_only_what_it_needs_and_replaces_invalid_utf8_where_it_reads() {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n");
    bytes.extend_from_slice(b"{\"type\":\"session_info\",\"id\":\"i\",\"name\":\" na\xffme \"}\n");
    bytes.extend_from_slice(b"not json\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"t\",\"message\":{\"role\":\"toolResult\",\"content\":\"\xfe\",\"timestamp\":1735693200000}}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"toolResult\",\"content\":[} broken\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"u\",\"message\":{\"role\":\"user\",\"content\":\"hi \xff\",\"timestamp\":1735696800000}}\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"x\",\"message\":{\"role\":\"user\",\"content\":[} broken\n");
    bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"assistant\",\"content\":[],\"timestamp\":1735700400000}} x\n");
    let info = session_info_of(Path::new("/s.jsonl"), &bytes, None).unwrap();
    assert_eq!(info.name.as_deref(), Some("na\u{fffd}me"));
    assert_eq!(info.first_message, "hi \u{fffd}");
    // Counted: both tool results (the second is read only up to its role, as the loader reads
    // it) and the user message; not the lines whose heads are not JSON.
    assert_eq!(info.message_count, 3);
    // The tool result's time does not count as activity, and the broken assistant line is skipped.
    assert_eq!(info.modified, "2025-01-01T02:00:00.000Z");
    assert_eq!(info.created, "2025-01-01T00:00:00.000Z");
}

/// What a listing hands another reader of the file's lines: each line once, blank ones too, in
/// order, the byte order mark and newlines dropped, and the last line without a newline.
#[test]
fn a_visitor_reads_every_line_of_the_listing_s_one_pass() {
    struct Lines(Vec<Vec<u8>>);
    impl LineVisitor for Lines {
        fn visit(&mut self, line: &[u8]) {
            self.0.push(line.to_vec());
        }
        fn end(&mut self) {
            self.0.push(b"(end)".to_vec());
        }
    }
    let folder = tempfile::tempdir().unwrap();
    let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}";
    let text = format!("\u{FEFF}{header}\r\n\n{{\"type\":\"x\"}}\nlast");
    std::fs::write(folder.path().join("a.jsonl"), &text).unwrap();
    std::fs::write(folder.path().join("b.jsonl"), "not a session\n").unwrap();
    let (found, skipped) = list_sessions_with(folder.path(), |_| Lines(Vec::new())).unwrap();
    assert_eq!(skipped.len(), 1);
    let [(info, lines)] = &found[..] else {
        panic!("{found:?}", found = found.len());
    };
    assert_eq!(*info, list_sessions(folder.path()).unwrap().0[0]);
    let expected: Vec<&[u8]> = vec![
        format!("{header}\r").into_bytes().leak(),
        b"",
        b"{\"type\":\"x\"}",
        b"last",
        b"(end)",
    ];
    assert_eq!(lines.0, expected);
}

/// QA (2026-12-07): a first message of megabytes went whole into every listing and every
/// `sessions.list` answer; it is cut to `LISTED_FIRST_MESSAGE_CHARS` characters, on a character.
#[test]
fn a_long_first_message_is_listed_cut() {
    let long = "é".repeat(crate::listing::LISTED_FIRST_MESSAGE_CHARS + 5);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n");
    bytes.extend_from_slice(
        format!("{{\"type\":\"message\",\"id\":\"u\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{long}\"}}}}\n").as_bytes(),
    );
    let info = session_info_of(Path::new("/s.jsonl"), &bytes, None).unwrap();
    let expected = format!(
        "{}…",
        "é".repeat(crate::listing::LISTED_FIRST_MESSAGE_CHARS)
    );
    assert_eq!(info.first_message, expected);
}

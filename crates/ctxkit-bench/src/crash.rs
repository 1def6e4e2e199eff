//! Support for the crash and concurrency harness (`ctxkit-crash-writer`, `ctxkit-crash`): payloads
//! whose integrity can be checked from the entry id alone, the writer's acknowledgement lines, and
//! the check of what one killed writer run added to a session file.

use std::fmt;
use std::num::NonZeroU32;

use ctxkit_session::Durability;
use serde_json::Value;

use ctxkit_simulate::Rng;

/// What the writer appends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendKind {
    User,
    Assistant,
    ToolResult,
    Compaction,
}

impl AppendKind {
    /// The name used in acknowledgement lines.
    pub fn name(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::ToolResult => "toolResult",
            Self::Compaction => "compaction",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Self::User,
            Self::Assistant,
            Self::ToolResult,
            Self::Compaction,
        ]
        .into_iter()
        .find(|kind| kind.name() == name)
    }

    /// Whether the stored entry `value` (a whole JSON line) is of this kind.
    pub fn matches(self, value: &Value) -> bool {
        let entry_type = value.get("type").and_then(Value::as_str);
        let role = value
            .get("message")
            .and_then(|message| message.get("role"))
            .and_then(Value::as_str);
        match self {
            Self::Compaction => entry_type == Some("compaction"),
            Self::User | Self::Assistant | Self::ToolResult => {
                entry_type == Some("message") && role == Some(self.name())
            }
        }
    }
}

/// One acknowledgement: the writer's append of entry `id`, of `kind`, whose payload was made from
/// `key`, returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub id: String,
    pub kind: AppendKind,
    pub key: String,
}

impl Ack {
    /// The line the writer prints: `ack <id> <kind> <key>`.
    pub fn line(&self) -> String {
        format!("ack {} {} {}", self.id, self.kind.name(), self.key)
    }

    /// Reads an acknowledgement line; other lines give `None`.
    pub fn parse(line: &str) -> Option<Self> {
        let mut fields = line.split(' ');
        match (
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
            fields.next(),
        ) {
            (Some("ack"), Some(id), Some(kind), Some(key), None)
                if !id.is_empty() && !key.is_empty() =>
            {
                Some(Self {
                    id: id.to_owned(),
                    kind: AppendKind::from_name(kind)?,
                    key: key.to_owned(),
                })
            }
            _ => None,
        }
    }
}

/// Reads `flush`, `sync` or `every:N`.
pub fn parse_durability(text: &str) -> Result<Durability, String> {
    match text {
        "flush" => Ok(Durability::Flush),
        "sync" => Ok(Durability::SyncEach),
        _ => text
            .strip_prefix("every:")
            .and_then(|count| count.parse::<NonZeroU32>().ok())
            .map(Durability::SyncEvery)
            .ok_or_else(|| format!("unknown durability `{text}` (flush, sync, every:N)")),
    }
}

/// The name [`parse_durability`] reads.
pub fn durability_name(durability: Durability) -> String {
    match durability {
        Durability::Flush => "flush".to_owned(),
        Durability::SyncEach => "sync".to_owned(),
        Durability::SyncEvery(count) => format!("every:{count}"),
    }
}

const PREFIX: &str = "ctxkit-crash key=";
/// Characters of the payload body: ASCII, characters JSON escapes, and multi-byte UTF-8 so a torn
/// write can split a character.
const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's',
    't', 'u', 'v', 'w', 'x', 'y', 'z', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ' ', ' ',
    '.', ',', '\n', '"', '\\', '\t', 'é', 'ß', '日', '本', '😀', '→',
];

fn body_rng(key: &str) -> Rng {
    // FNV-1a of the key seeds the body, so the key alone says what the text must be.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    Rng::new(hash)
}

/// The payload made from `key` (no spaces), `length` characters of body: a random block drawn
/// from the key, repeated (cheap to make, so a writer spends its time writing).
pub fn payload(key: &str, length: usize) -> String {
    const BLOCK: usize = 4093;
    let mut rng = body_rng(key);
    let block: Vec<char> = (0..BLOCK.min(length))
        .map(|_| ALPHABET[rng.below(ALPHABET.len())])
        .collect();
    let mut text = format!("{PREFIX}{key} len={length} body=");
    text.reserve(length * 2);
    text.extend(block.iter().cycle().take(length));
    text
}

/// Checks that `text` is exactly the payload made from `key` (`id` names the entry in messages).
pub fn check_payload(text: &str, key: &str, id: &str) -> Result<(), String> {
    let rest = text
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_prefix(key))
        .and_then(|rest| rest.strip_prefix(" len="))
        .ok_or_else(|| format!("entry `{id}`: payload header missing"))?;
    let (length, _) = rest
        .split_once(' ')
        .ok_or_else(|| format!("entry `{id}`: payload length missing"))?;
    let length: usize = length
        .parse()
        .map_err(|_| format!("entry `{id}`: payload length `{length}` unreadable"))?;
    if text == payload(key, length) {
        Ok(())
    } else {
        Err(format!(
            "entry `{id}`: payload differs from what was written"
        ))
    }
}

/// The first string inside `value` that is a crash payload.
pub fn find_payload(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) if text.starts_with(PREFIX) => Some(text),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => None,
        Value::Array(items) => items.iter().find_map(find_payload),
        Value::Object(object) => object.values().find_map(find_payload),
    }
}

/// Checks a stored line against its acknowledgement: the entry kind and the payload.
pub fn check_entry(raw: &str, ack: &Ack) -> Result<(), String> {
    let value: Value = serde_json::from_str(raw)
        .map_err(|error| format!("entry `{}` is not JSON: {error}", ack.id))?;
    if value.get("id").and_then(Value::as_str) != Some(ack.id.as_str()) {
        return Err(format!("entry `{}`: wrong id", ack.id));
    }
    if !ack.kind.matches(&value) {
        return Err(format!(
            "entry `{}` is not a {} entry",
            ack.id,
            ack.kind.name()
        ));
    }
    let text = find_payload(&value).ok_or_else(|| format!("entry `{}`: no payload", ack.id))?;
    check_payload(text, &ack.key, &ack.id)
}

/// What one killed writer run added to a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunReport {
    /// Whole lines written (header included).
    pub lines: usize,
    /// Whole lines whose append was in flight (written, not acknowledged).
    pub unacknowledged: usize,
    /// The file now ends with a fragment of a line that does not parse (a torn append).
    pub torn_tail: bool,
    /// The file now ends with a whole JSON line lacking only its newline.
    pub unterminated_tail: bool,
    /// The previous run's torn tail was terminated by this run.
    pub terminated_previous: bool,
}

/// A violated promise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

impl fmt::Display for Violation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

/// Checks the bytes one writer run appended after `previous_len` bytes (the earlier content is
/// checked unchanged by the caller): the previous torn tail (if `previous_unterminated`) is
/// terminated before anything else; every acknowledged entry is there, whole, in order; after the
/// last acknowledged one comes at most the in-flight append — one whole line, or a fragment.
/// A brand-new file (`previous_len == 0`) starts with its header, and its first write (header and
/// the entries held back until the first assistant message) may be whole but unacknowledged.
pub fn check_run(
    file: &[u8],
    previous_len: usize,
    previous_unterminated: bool,
    acks: &[Ack],
) -> Result<RunReport, Violation> {
    let fail = |message: String| Err(Violation(message));
    let Some(mut region) = file.get(previous_len..) else {
        return fail(format!(
            "the file shrank from {previous_len} to {} bytes",
            file.len()
        ));
    };
    let mut report = RunReport::default();
    if previous_unterminated && !region.is_empty() {
        if region[0] != b'\n' {
            return fail("the torn tail was not terminated before the next append".to_owned());
        }
        report.terminated_previous = true;
        region = &region[1..];
    }
    let (whole, tail) = match region.iter().rposition(|byte| *byte == b'\n') {
        Some(end) => (&region[..=end], &region[end + 1..]),
        None => (&region[..0], region),
    };
    let mut matched = 0;
    let mut first_write_unacknowledged = true;
    let lines: Vec<&[u8]> = match whole.split_last() {
        Some((_, before_newline)) => before_newline.split(|byte| *byte == b'\n').collect(),
        None => Vec::new(),
    };
    for (number, line) in lines.into_iter().enumerate() {
        report.lines += 1;
        let text = String::from_utf8_lossy(line);
        let value: Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(error) => {
                return fail(format!(
                    "a whole line written by this run is not JSON ({error})"
                ));
            }
        };
        if previous_len == 0 && number == 0 {
            if value.get("type").and_then(Value::as_str) != Some("session") {
                return fail("a new file does not start with its header".to_owned());
            }
            continue;
        }
        let id = value.get("id").and_then(Value::as_str).unwrap_or("");
        match acks.get(matched) {
            Some(ack) if ack.id == id => {
                if report.unacknowledged > 0 {
                    return fail(format!(
                        "entry `{id}` was acknowledged after an unacknowledged one"
                    ));
                }
                check_entry(&text, ack).map_err(Violation)?;
                matched += 1;
                first_write_unacknowledged = false;
            }
            Some(_) | None => {
                report.unacknowledged += 1;
                let first_write = previous_len == 0 && first_write_unacknowledged;
                if report.unacknowledged > 1 && !first_write {
                    return fail(format!(
                        "more than one unacknowledged line (`{id}` is the second)"
                    ));
                }
            }
        }
    }
    if let Some(missing) = acks.get(matched) {
        return fail(format!(
            "acknowledged entry `{}` ({} of {}) is missing or out of order",
            missing.id,
            matched + 1,
            acks.len()
        ));
    }
    if !tail.is_empty() {
        if report.unacknowledged > 0 && !(previous_len == 0 && first_write_unacknowledged) {
            return fail("a torn line follows an unacknowledged whole line".to_owned());
        }
        let parses = serde_json::from_slice::<Value>(tail).is_ok();
        report.torn_tail = !parses;
        report.unterminated_tail = parses;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, kind: AppendKind) -> String {
        let text = payload(&format!("k{id}"), 40);
        let value = match kind {
            AppendKind::Compaction => serde_json::json!({
                "type": "compaction", "id": id, "summary": text
            }),
            AppendKind::User | AppendKind::Assistant | AppendKind::ToolResult => {
                serde_json::json!({
                    "type": "message", "id": id,
                    "message": {"role": kind.name(), "content": [{"type": "text", "text": text}]}
                })
            }
        };
        format!("{value}\n")
    }

    fn ack(id: &str, kind: AppendKind) -> Ack {
        Ack {
            id: id.to_owned(),
            kind,
            key: format!("k{id}"),
        }
    }

    const HEADER: &str = "{\"type\":\"session\",\"id\":\"s\"}\n";

    #[test]
    fn payloads_check_and_detect_changes() {
        let text = payload("abc", 300);
        assert!(check_payload(&text, "abc", "e").is_ok());
        assert!(check_payload(&text, "abd", "e").is_err());
        let mut changed = text.clone();
        changed.pop();
        assert!(check_payload(&changed, "abc", "e").is_err());
        assert_ne!(payload("abc", 300), payload("abd", 300));
    }

    #[test]
    fn ack_lines_round_trip() {
        let original = ack("0f0f0f0f", AppendKind::ToolResult);
        assert_eq!(Ack::parse(&original.line()), Some(original));
        assert_eq!(Ack::parse("ack x nope k"), None);
        assert_eq!(Ack::parse("ack x user"), None);
        assert_eq!(Ack::parse("hello"), None);
        assert_eq!(
            parse_durability("every:8").map(durability_name).as_deref(),
            Ok("every:8")
        );
        assert!(parse_durability("every:0").is_err());
    }

    #[test]
    fn a_clean_run_and_an_in_flight_line_pass() {
        let base = format!("{HEADER}{}", line("a", AppendKind::User));
        let mut file = base.clone();
        file.push_str(&line("b", AppendKind::Assistant));
        file.push_str(&line("c", AppendKind::Compaction));
        let acks = [
            ack("b", AppendKind::Assistant),
            ack("c", AppendKind::Compaction),
        ];
        let report = check_run(file.as_bytes(), base.len(), false, &acks).unwrap();
        assert_eq!(
            (report.lines, report.unacknowledged, report.torn_tail),
            (2, 0, false)
        );

        file.push_str(&line("d", AppendKind::User));
        let report = check_run(file.as_bytes(), base.len(), false, &acks).unwrap();
        assert_eq!(report.unacknowledged, 1);

        let mut torn = base.clone();
        torn.push_str(&line("b", AppendKind::Assistant));
        torn.push_str(&line("c", AppendKind::Compaction)[..30]);
        let report = check_run(torn.as_bytes(), base.len(), false, &acks[..1]).unwrap();
        assert!(report.torn_tail);
    }

    #[test]
    fn lost_changed_or_doubled_in_flight_entries_fail() {
        let base = format!("{HEADER}{}", line("a", AppendKind::User));
        let acks = [ack("b", AppendKind::Assistant)];
        // Lost.
        assert!(check_run(base.as_bytes(), base.len(), false, &acks).is_err());
        // Wrong kind.
        let file = format!("{base}{}", line("b", AppendKind::User));
        assert!(check_run(file.as_bytes(), base.len(), false, &acks).is_err());
        // Changed payload.
        let file = format!(
            "{base}{}",
            line("b", AppendKind::Assistant).replace("body=", "body=x")
        );
        assert!(check_run(file.as_bytes(), base.len(), false, &acks).is_err());
        // Two unacknowledged lines.
        let file = format!(
            "{base}{}{}{}",
            line("b", AppendKind::Assistant),
            line("c", AppendKind::User),
            line("d", AppendKind::User)
        );
        assert!(check_run(file.as_bytes(), base.len(), false, &acks).is_err());
        // A torn tail not terminated before the next append.
        let torn = &base[..base.len() - 5];
        let file = format!("{torn}{}", line("b", AppendKind::Assistant));
        assert!(check_run(file.as_bytes(), torn.len(), true, &acks).is_err());
        let file = format!("{torn}\n{}", line("b", AppendKind::Assistant));
        let report = check_run(file.as_bytes(), torn.len(), true, &acks).unwrap();
        assert!(report.terminated_previous);
        // The file shrank.
        assert!(check_run(b"", 3, false, &[]).is_err());
    }

    #[test]
    fn a_new_file_starts_with_its_header_and_may_hold_its_first_write_unacknowledged() {
        let file = format!(
            "{HEADER}{}{}",
            line("a", AppendKind::User),
            line("b", AppendKind::Assistant)
        );
        let report = check_run(file.as_bytes(), 0, false, &[]).unwrap();
        assert_eq!((report.lines, report.unacknowledged), (3, 2));
        let no_header = line("a", AppendKind::User);
        assert!(check_run(no_header.as_bytes(), 0, false, &[]).is_err());
    }
}

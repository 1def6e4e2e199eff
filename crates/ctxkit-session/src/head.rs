//! The head of an entry line: the few fields the index needs, read in one pass without materializing
//! message content. Every field is read laxly (a wrong type reads as absent) because files come from
//! many writers and JavaScript does not check types.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

pub(crate) use crate::lax::{Lax, LaxNumber};

/// The fields of an entry (or header) line that the index reads, in one pass over the line (the
/// message's head included). A repeated field takes its last value, as with `JSON.parse`.
#[derive(Debug, Default)]
pub(crate) struct EntryHead<'a> {
    pub(crate) kind: Lax<'a>,
    pub(crate) id: Lax<'a>,
    pub(crate) parent_id: Lax<'a>,
    pub(crate) timestamp: Lax<'a>,
    pub(crate) message: Option<MessageHead<'a>>,
    pub(crate) thinking_level: Lax<'a>,
    pub(crate) provider: Lax<'a>,
    pub(crate) model_id: Lax<'a>,
    pub(crate) first_kept_entry_id: Lax<'a>,
    pub(crate) target_id: Lax<'a>,
    pub(crate) label: Lax<'a>,
    pub(crate) name: Lax<'a>,
    /// Whether `summary` is a non-empty string.
    pub(crate) has_summary: bool,
}

impl EntryHead<'_> {
    /// The same head, holding its own strings.
    pub(crate) fn into_owned(self) -> EntryHead<'static> {
        EntryHead {
            kind: self.kind.into_owned(),
            id: self.id.into_owned(),
            parent_id: self.parent_id.into_owned(),
            timestamp: self.timestamp.into_owned(),
            message: self.message.map(|message| MessageHead {
                role: message.role.into_owned(),
                provider: message.provider.into_owned(),
                model: message.model.into_owned(),
                timestamp: message.timestamp,
                whole_timestamp: message.whole_timestamp,
                has_content: message.has_content,
                content: message
                    .content
                    .map(|content| Cow::Owned(content.into_owned())),
                stopped: message.stopped,
            }),
            thinking_level: self.thinking_level.into_owned(),
            provider: self.provider.into_owned(),
            model_id: self.model_id.into_owned(),
            first_kept_entry_id: self.first_kept_entry_id.into_owned(),
            target_id: self.target_id.into_owned(),
            label: self.label.into_owned(),
            name: self.name.into_owned(),
            has_summary: self.has_summary,
        }
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum EntryField {
    Type,
    Id,
    ParentId,
    Timestamp,
    Message,
    ThinkingLevel,
    Provider,
    ModelId,
    FirstKeptEntryId,
    TargetId,
    Label,
    Name,
    Summary,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for EntryHead<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut head = EntryHead::default();
        deserializer.deserialize_map(EntryHeadVisitor {
            head: &mut head,
            stop: StopAt::Never,
        })?;
        Ok(head)
    }
}

/// The message of the error that stops a prefix read (see [`read_head_prefix`]).
const STOP: &str = "\u{1}ctxkit: the head is complete";

/// Reads the head of an entry line, stopping inside a `message` once its role is read when the
/// entry's `type`, `id`, `parentId` and `timestamp` came before it: the rest of the line (the
/// message's content) holds nothing the index keeps, but for an assistant's provider and model,
/// which are read from the line when asked for (`StoredEntry::assistant_model`). Returns the head
/// and whether the whole line was read (and so checked to be JSON). A line read only in part must be
/// checked when it is first read back (see `StoredEntry::raw`).
pub(crate) fn read_head_prefix(line: &str) -> Result<(EntryHead<'_>, bool), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(line);
    let (head, complete) = read_until(&mut deserializer, StopAt::IndexHead)?;
    if !complete {
        crate::scan::closes_as_one_object(line.as_bytes()).map_err(unclosed)?;
    }
    Ok((head, complete))
}

/// Why a line read in part is refused when its object does not close.
pub(crate) const CUT_SHORT: &str = "the line ends before its object closes (a write cut short?)";

fn cut_short() -> serde_json::Error {
    <serde_json::Error as de::Error>::custom(CUT_SHORT)
}

/// The error of a line read in part whose object does not close.
pub(crate) fn unclosed(why: crate::scan::Unclosed) -> serde_json::Error {
    match why {
        crate::scan::Unclosed::CutShort => cut_short(),
        crate::scan::Unclosed::TooDeep => {
            <serde_json::Error as de::Error>::custom(crate::scan::TOO_DEEP)
        }
    }
}

/// Reads the head of an entry line for a listing, stopping inside the message of a `message` entry
/// (its `type` read before it) once its role is read when that role is neither `user` nor
/// `assistant`: a listing only counts those messages. Reads bytes, so that only the strings it
/// parses are checked to be UTF-8 (an invalid one is an error, as is a line that is not JSON up to
/// where the read stops). Returns the head and whether the whole line was read.
pub(crate) fn read_listing_head(line: &[u8]) -> Result<(EntryHead<'_>, bool), serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    read_until(&mut deserializer, StopAt::ListingHead)
}

/// Reads the whole of an entry line (checked to be one JSON object) for its head, a message's
/// content kept as its JSON text (not parsed): what a store reads of every line it takes.
pub(crate) fn read_facts_head(line: &str) -> Result<EntryHead<'_>, serde_json::Error> {
    let mut deserializer = serde_json::Deserializer::from_str(line);
    read_until(&mut deserializer, StopAt::Facts).map(|(head, _)| head)
}

/// Where a prefix read may stop.
#[derive(Debug, Clone, Copy)]
enum StopAt {
    /// Never: the whole line is read.
    Never,
    /// See [`read_head_prefix`].
    IndexHead,
    /// See [`read_listing_head`].
    ListingHead,
    /// Never, and a message's content is kept (see [`read_facts_head`]).
    Facts,
}

fn read_until<'de, R: serde_json::de::Read<'de>>(
    deserializer: &mut serde_json::Deserializer<R>,
    stop: StopAt,
) -> Result<(EntryHead<'de>, bool), serde_json::Error> {
    let mut head = EntryHead::default();
    let visitor = EntryHeadVisitor {
        head: &mut head,
        stop,
    };
    match serde::Deserializer::deserialize_map(&mut *deserializer, visitor)
        .and_then(|()| deserializer.end())
    {
        Ok(()) => Ok((head, true)),
        // The stop is told by the flag, not by the error's text: formatting an error for every
        // user and tool-result line cost more than reading its head.
        Err(error)
            if error.is_data() && head.message.as_ref().is_some_and(|message| message.stopped) =>
        {
            Ok((head, false))
        }
        Err(error) => Err(error),
    }
}

/// Fills `head` field by field (so a prefix read keeps what it read before it stopped).
struct EntryHeadVisitor<'h, 'de> {
    head: &'h mut EntryHead<'de>,
    stop: StopAt,
}

impl<'de> Visitor<'de> for EntryHeadVisitor<'_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let head = self.head;
        let (mut has_parent, mut has_timestamp) = (false, false);
        while let Some(field) = map.next_key::<EntryField>()? {
            match field {
                EntryField::Type => head.kind = map.next_value()?,
                EntryField::Id => head.id = map.next_value()?,
                EntryField::ParentId => {
                    head.parent_id = map.next_value()?;
                    has_parent = true;
                }
                EntryField::Timestamp => {
                    head.timestamp = map.next_value()?;
                    has_timestamp = true;
                }
                EntryField::Message => {
                    let is_message = head.kind.0.as_deref() == Some("message");
                    let kept_roles: Option<&'static [&'static str]> = match self.stop {
                        StopAt::Never | StopAt::Facts => None,
                        StopAt::IndexHead => {
                            (is_message && has_parent && has_timestamp && head.id.0.is_some())
                                .then_some(&[])
                        }
                        StopAt::ListingHead => is_message.then_some(&["user", "assistant"]),
                    };
                    let message = head.message.insert(MessageHead::default());
                    map.next_value_seed(MessageHeadSeed {
                        message,
                        kept_roles,
                        keep_content: matches!(self.stop, StopAt::Facts),
                    })?;
                }
                EntryField::ThinkingLevel => head.thinking_level = map.next_value()?,
                EntryField::Provider => head.provider = map.next_value()?,
                EntryField::ModelId => head.model_id = map.next_value()?,
                EntryField::FirstKeptEntryId => head.first_kept_entry_id = map.next_value()?,
                EntryField::TargetId => head.target_id = map.next_value()?,
                EntryField::Label => head.label = map.next_value()?,
                EntryField::Name => head.name = map.next_value()?,
                EntryField::Summary => {
                    let summary: Lax<'de> = map.next_value()?;
                    head.has_summary = summary.0.is_some_and(|summary| !summary.is_empty());
                }
                EntryField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The fields of a message the index reads.
#[derive(Debug, Default)]
pub(crate) struct MessageHead<'a> {
    pub(crate) role: Lax<'a>,
    pub(crate) provider: Lax<'a>,
    pub(crate) model: Lax<'a>,
    pub(crate) timestamp: LaxNumber,
    /// The timestamp as a whole number, as `serde_json::Value::as_i64` reads it (`1.0` is not
    /// one); read only with the content (see [`read_facts_head`]).
    pub(crate) whole_timestamp: Option<i64>,
    /// Whether the message has a `content` field (of any type).
    pub(crate) has_content: bool,
    /// The content's JSON, kept only by [`read_facts_head`].
    pub(crate) content: Option<Cow<'a, RawValue>>,
    /// Whether a prefix read stopped inside this message (after its role).
    pub(crate) stopped: bool,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum MessageField {
    Role,
    Provider,
    Model,
    Timestamp,
    Content,
    #[serde(other)]
    Other,
}

/// A message's head read in place, inside the line's single pass; anything that is not an object
/// reads as an empty head. With `kept_roles`, a role not among them ends the read (see
/// [`read_head_prefix`] and [`read_listing_head`]).
struct MessageHeadSeed<'h, 'de> {
    message: &'h mut MessageHead<'de>,
    kept_roles: Option<&'static [&'static str]>,
    keep_content: bool,
}

impl<'de> de::DeserializeSeed<'de> for MessageHeadSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MessageHeadSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let head = self.message;
        while let Some(field) = map.next_key::<MessageField>()? {
            match field {
                MessageField::Role => {
                    head.role = map.next_value()?;
                    let stops = self.kept_roles.is_some_and(|kept| {
                        head.role
                            .0
                            .as_deref()
                            .is_some_and(|role| !kept.contains(&role))
                    });
                    if stops {
                        head.stopped = true;
                        return Err(de::Error::custom(STOP));
                    }
                }
                MessageField::Provider => head.provider = map.next_value()?,
                MessageField::Model => head.model = map.next_value()?,
                MessageField::Timestamp if self.keep_content => {
                    let raw: Option<&'de RawValue> = map.next_value()?;
                    head.timestamp = LaxNumber::of(raw);
                    // As a `Value` reads it: an integer literal that fits, nothing else.
                    head.whole_timestamp = raw
                        .and_then(|raw| serde_json::from_str::<serde_json::Number>(raw.get()).ok())
                        .and_then(|number| number.as_i64());
                }
                MessageField::Timestamp => head.timestamp = map.next_value()?,
                MessageField::Content if self.keep_content => {
                    head.content = Some(Cow::Borrowed(map.next_value::<&'de RawValue>()?));
                    head.has_content = true;
                }
                MessageField::Content => {
                    map.next_value::<IgnoredAny>()?;
                    head.has_content = true;
                }
                MessageField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
}

/// Where the `message` value of an entry line is, as byte offsets into the line (the last one when
/// repeated); `None` when the line has none or is not a JSON object.
pub(crate) fn message_span(line: &str) -> Option<(usize, usize)> {
    let found: MessageValue<'_> = serde_json::from_str(line).ok()?;
    let message = found.0?.get();
    let start = (message.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = start + message.len();
    line.get(start..end).map(|_| (start, end))
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum SpanField {
    Message,
    #[serde(other)]
    Other,
}

struct MessageValue<'a>(Option<&'a RawValue>);

impl<'de> Deserialize<'de> for MessageValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MessageValueVisitor)
    }
}

struct MessageValueVisitor;

impl<'de> Visitor<'de> for MessageValueVisitor {
    type Value = MessageValue<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MessageValue<'de>, A::Error> {
        let mut message = None;
        while let Some(field) = map.next_key::<SpanField>()? {
            match field {
                SpanField::Message => message = Some(map.next_value::<&'de RawValue>()?),
                SpanField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(MessageValue(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_read_laxly_in_one_pass() {
        let line = r#"{"type":"message","id":7,"parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"x"}],"provider":"p","model":["m"],"timestamp":17},"extra":{"deep":[1,2,{"a":null}]}}"#;
        let head: EntryHead = serde_json::from_str(line).unwrap();
        assert_eq!(head.kind.0.as_deref(), Some("message"));
        assert_eq!(head.id.0, None);
        let message = head.message.unwrap();
        assert_eq!(message.role.0.as_deref(), Some("assistant"));
        assert_eq!(message.provider.0.as_deref(), Some("p"));
        assert_eq!(message.model.0, None);
        assert_eq!(message.timestamp.0, Some(17.0));
        assert!(message.has_content);
        for odd in [r#""text""#, "[1, {}]", "null", "3", "true"] {
            let line = format!(r#"{{"type":"message","message":{odd}}}"#);
            let head: EntryHead = serde_json::from_str(&line).unwrap();
            assert_eq!(head.message.unwrap_or_default().role.0, None, "{odd}");
        }
    }

    #[test]
    fn a_line_cut_after_its_role_is_not_read_as_a_head() {
        let whole = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"toolResult","content":[{"type":"text","text":"x \" } ] { y"}],"toolCallId":"c"}}"#;
        assert!(matches!(read_head_prefix(whole), Ok((_, false))));
        assert!(matches!(
            read_head_prefix(&format!("{whole} \r")),
            Ok((_, false))
        ));
        let role_end = whole.find("toolResult").unwrap() + "toolResult\"".len();
        for cut in role_end..whole.len() {
            assert!(read_head_prefix(&whole[..cut]).is_err(), "cut at {cut}");
        }
        // A torn line followed by a whole one on the same physical line.
        let joined = format!("{}{whole}", &whole[..whole.len() - 20]);
        assert!(read_head_prefix(&joined).is_err());
    }

    #[test]
    fn a_prefix_read_stops_at_the_role_once_the_entry_fields_are_read() {
        let user = r#"{"type":"message","id":"u","parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}"#;
        // Text after the object's last bracket is found when the file opens, not at the first read.
        assert!(read_head_prefix(&format!("{user} not json")).is_err());
        let (head, complete) = read_head_prefix(user).unwrap();
        assert!(!complete);
        assert_eq!(head.id.0.as_deref(), Some("u"));
        assert_eq!(head.timestamp.0.as_deref(), Some("t"));
        assert_eq!(head.message.unwrap().role.0.as_deref(), Some("user"));
        // An assistant message stops there too (its provider and model are read when asked for).
        let assistant = r#"{"type":"message","id":"a","parentId":"u","timestamp":"t","message":{"role":"assistant","content":[],"provider":"p"}}"#;
        let (head, complete) = read_head_prefix(assistant).unwrap();
        assert!(!complete);
        let message = head.message.unwrap();
        assert!(message.stopped);
        assert_eq!(message.provider.0, None);
        // A message before the entry's own fields is read whole.
        for line in [
            r#"{"message":{"role":"user","content":"x"},"type":"message","id":"u","parentId":null,"timestamp":"t"}"#,
            r#"{"type":"message","id":"u","timestamp":"t","message":{"role":"user","content":"x"}}"#,
        ] {
            let (head, complete) = read_head_prefix(line).unwrap();
            assert!(complete, "{line}");
            let full: EntryHead = serde_json::from_str(line).unwrap();
            assert_eq!(
                head.message.unwrap().provider,
                full.message.unwrap().provider
            );
        }
        let broken = r#"{"type":"message","id":"a","parentId":"u","timestamp":"t","message":{"role":"assistant","content":[}}"#;
        assert!(read_head_prefix(broken).is_err());
        assert!(read_head_prefix(r#"{"type":"label"} x"#).is_err());
    }

    #[test]
    fn summaries_are_present_only_as_non_empty_text() {
        for (summary, expected) in [
            (r#""done""#, true),
            (r#""""#, false),
            ("null", false),
            ("[1]", false),
            ("7", false),
        ] {
            let line = format!(r#"{{"type":"branch_summary","summary":{summary}}}"#);
            let head: EntryHead = serde_json::from_str(&line).unwrap();
            assert_eq!(head.has_summary, expected, "{summary}");
        }
    }

    #[test]
    fn repeated_fields_take_the_last_value_as_json_parse_does() {
        let line =
            r#"{"type":"label","id":"a","id":"b","message":{"role":"user","role":"assistant"}}"#;
        let head: EntryHead = serde_json::from_str(line).unwrap();
        assert_eq!(head.id.0.as_deref(), Some("b"));
        assert_eq!(head.message.unwrap().role.0.as_deref(), Some("assistant"));
        let line = r#"{"message":1,"type":"message","message":{"a":"é"}}"#;
        let (start, end) = message_span(line).unwrap();
        assert_eq!(&line[start..end], r#"{"a":"é"}"#);
        assert_eq!(message_span(r#"{"type":"message"}"#), None);
        assert_eq!(message_span("[1]"), None);
    }
}

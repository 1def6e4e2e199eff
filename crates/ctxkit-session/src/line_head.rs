//! The head of one line as the index keeps it: what it says before it is required to have an id
//! (`LineHead`), read whole or from its first fields, and why a line could not be indexed.

use std::borrow::Cow;

use crate::entry::{EntryMeta, intern};
use crate::head::{EntryHead, Lax, MessageHead, read_head_prefix};

fn boxed(value: Option<Cow<'_, str>>) -> Option<Box<str>> {
    value.map(Box::from)
}

/// What one line says, before it is required to have an id.
#[derive(Debug)]
pub(crate) struct LineHead<'a> {
    pub(crate) id: Option<Cow<'a, str>>,
    pub(crate) parent_id: Option<Cow<'a, str>>,
    pub(crate) timestamp: Option<Cow<'a, str>>,
    pub(crate) meta: EntryMeta,
}

impl<'a> LineHead<'a> {
    /// Reads the head of `raw`; refused when it is not a JSON object with a string `type`. A lone
    /// surrogate escape (`"\ud83d"`, which `JSON.parse` reads) is read as U+FFFD, as
    /// `ctxkit_protocol::from_str_repaired` reads it: only when the line fails to read as it is.
    pub(crate) fn read(raw: &'a str) -> Result<Self, HeadError> {
        let error = match Self::read_exactly(raw) {
            Err(error @ HeadError::Json(_)) => error,
            read => return read,
        };
        let Cow::Owned(repaired) = ctxkit_protocol::repair_lone_surrogates(raw) else {
            return Err(error);
        };
        first_json_error(
            error,
            LineHead::read_exactly(&repaired).map(LineHead::into_owned),
        )
    }

    fn read_exactly(raw: &'a str) -> Result<Self, HeadError> {
        Self::not_an_object(raw)?;
        let head: EntryHead = serde_json::from_str(raw)
            .map_err(|error| HeadError::Json(ctxkit_protocol::json_line_error(&error)))?;
        // Fields the head does not keep are skipped without a depth limit: a line the parser could
        // not read back whole must be refused now, not when its message is first read.
        if crate::scan::closes_as_one_object(raw.as_bytes()) == Err(crate::scan::Unclosed::TooDeep)
        {
            return Err(HeadError::Json(crate::scan::TOO_DEEP.to_owned()));
        }
        Self::from_fields(head).map(|head| mark_usage(head, raw))
    }

    /// Reads the head of `raw` from its first fields when they say all the index needs (see
    /// `head::read_head_prefix`); also returns whether the whole line was read.
    pub(crate) fn read_prefix(raw: &'a str) -> Result<(Self, bool), HeadError> {
        if let Some(fast) = crate::fast_head::read(raw) {
            crate::scan::closes_after_message_head(raw.as_bytes(), fast.rest)
                .map_err(|why| HeadError::Json(crate::head::unclosed(why).to_string()))?;
            let head = Self {
                id: Some(Cow::Borrowed(fast.id)),
                parent_id: fast.parent_id.map(Cow::Borrowed),
                timestamp: Some(Cow::Borrowed(fast.timestamp)),
                meta: message_meta(MessageHead {
                    role: Lax(Some(Cow::Borrowed(fast.role))),
                    stopped: true,
                    ..MessageHead::default()
                }),
            };
            return Ok((mark_usage(head, raw), false));
        }
        Self::read_prefix_with_parser(raw)
    }

    /// [`Self::read_prefix`] by the JSON parser alone, for a line of any shape (a lone surrogate
    /// read as in [`Self::read`]).
    pub(crate) fn read_prefix_with_parser(raw: &'a str) -> Result<(Self, bool), HeadError> {
        let error = match Self::read_prefix_exactly(raw) {
            Err(error @ HeadError::Json(_)) => error,
            read => return read,
        };
        let Cow::Owned(repaired) = ctxkit_protocol::repair_lone_surrogates(raw) else {
            return Err(error);
        };
        let read = LineHead::read_prefix_exactly(&repaired)
            .map(|(head, complete)| (head.into_owned(), complete));
        first_json_error(error, read)
    }

    fn read_prefix_exactly(raw: &'a str) -> Result<(Self, bool), HeadError> {
        Self::not_an_object(raw)?;
        let (head, complete) = read_head_prefix(raw)
            .map_err(|error| HeadError::Json(ctxkit_protocol::json_line_error(&error)))?;
        Ok((mark_usage(Self::from_fields(head)?, raw), complete))
    }

    /// The same head, holding its own strings.
    fn into_owned(self) -> LineHead<'static> {
        let owned = |text: Option<Cow<'_, str>>| text.map(|text| Cow::Owned(text.into_owned()));
        LineHead {
            id: owned(self.id),
            parent_id: owned(self.parent_id),
            timestamp: owned(self.timestamp),
            meta: self.meta,
        }
    }

    fn not_an_object(raw: &str) -> Result<(), HeadError> {
        if raw.trim_start().starts_with('{') {
            return Ok(());
        }
        Err(match serde_json::from_str::<serde::de::IgnoredAny>(raw) {
            Ok(_) => HeadError::NotAnObject,
            Err(error) => HeadError::Json(ctxkit_protocol::json_line_error(&error)),
        })
    }

    fn from_fields(head: EntryHead<'a>) -> Result<Self, HeadError> {
        let type_name = head.kind.0.ok_or(HeadError::NoType)?;
        let meta = match &*type_name {
            "message" => message_meta(head.message.unwrap_or_default()),
            "thinking_level_change" => EntryMeta::ThinkingLevelChange {
                level: boxed(head.thinking_level.0),
            },
            "model_change" => EntryMeta::ModelChange {
                provider: boxed(head.provider.0),
                model_id: boxed(head.model_id.0),
            },
            "compaction" => EntryMeta::Compaction {
                first_kept_entry_id: boxed(head.first_kept_entry_id.0),
            },
            "branch_summary" => EntryMeta::BranchSummary {
                has_summary: head.has_summary,
            },
            "custom" => EntryMeta::Custom,
            "custom_message" => EntryMeta::CustomMessage,
            "label" => EntryMeta::Label {
                target_id: boxed(head.target_id.0),
                label: boxed(head.label.0),
            },
            "session_info" => EntryMeta::SessionInfo {
                name: boxed(head.name.0),
            },
            "context_edit" => EntryMeta::ContextEdit {
                target_id: boxed(head.target_id.0),
            },
            "usage" => EntryMeta::Usage,
            _ => EntryMeta::Unknown {
                type_name: Box::from(type_name),
            },
        };
        Ok(Self {
            id: head.id.0,
            parent_id: head.parent_id.0,
            timestamp: head.timestamp.0,
            meta,
        })
    }
}

/// The read of a line repaired of its lone surrogates, but the first read's `error` when the
/// repaired line is not JSON either (the message then names what is wrong with the line as written).
fn first_json_error<T>(error: HeadError, repaired: Result<T, HeadError>) -> Result<T, HeadError> {
    match repaired {
        Err(HeadError::Json(_)) => Err(error),
        read => read,
    }
}

/// What the index keeps of a message's head.
fn message_meta(message: MessageHead<'_>) -> EntryMeta {
    // Only an assistant message sets the model (see `context::model_set_by`).
    let sets_model = message.role.0.as_deref() == Some("assistant");
    EntryMeta::Message {
        role: intern(message.role.0),
        provider: intern(message.provider.0.filter(|_| sets_model)),
        model: intern(message.model.0.filter(|_| sets_model)),
        model_unread: sets_model && message.stopped,
        may_hold_usage: false,
    }
}

/// Sets [`EntryMeta::Message`]'s `may_hold_usage` of a tool result from its whole line: it holds
/// the key `"usage"`, or a `\u` escape (which could spell that key; only costs a read).
fn mark_usage<'a>(mut head: LineHead<'a>, raw: &str) -> LineHead<'a> {
    if let EntryMeta::Message {
        role: Some(role),
        may_hold_usage,
        ..
    } = &mut head.meta
        && &**role == "toolResult"
    {
        let bytes = raw.as_bytes();
        *may_hold_usage = memchr::memmem::find(bytes, b"\"usage\"").is_some()
            || memchr::memmem::find(bytes, b"\\u").is_some();
    }
    head
}

/// Why a line could not be indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadError {
    Json(String),
    NotAnObject,
    NoType,
    NoId,
}

impl HeadError {
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Json(message) => format!("not valid JSON: {message}"),
            Self::NotAnObject => "not a JSON object".to_owned(),
            Self::NoType => "entry has no string `type`".to_owned(),
            Self::NoId => "entry has no string `id`".to_owned(),
        }
    }
}

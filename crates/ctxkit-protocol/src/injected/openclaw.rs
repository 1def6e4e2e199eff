//! OpenClaw's texts in a user message (Pi's format, a gateway in front): system events, a chat
//! channel's envelope and metadata, queue headings, attachment notes, heartbeats, clock lines and
//! the QQ channel's preamble. See the parent module for the whole list.

/// OpenClaw's note on a media attachment (`strip_openclaw_media`).
const OPENCLAW_MEDIA_KINDS: [&str; 2] = ["[Image]", "[Audio]"];
const OPENCLAW_MEDIA_TEXT: &str = "User text:";
const OPENCLAW_MEDIA_DESCRIPTION: &str = "Description:";
const OPENCLAW_MEDIA_TRANSCRIPT: &str = "Transcript:";
/// OpenClaw's system event lines: `System: [date] …` and `System (untrusted): …`.
const OPENCLAW_EVENT_LINES: [&str; 2] = ["System: [", "System (untrusted):"];
/// The label of an event's further lines (`System: …` right after an event line).
const OPENCLAW_EVENT_CONTINUATION: &str = "System: ";
/// OpenClaw's one-line envelope markers and the media hint that follows an attachment (the
/// `[media attached: path (type)]` line itself stays: the user sent that file).
const OPENCLAW_ENVELOPE_LINES: [&str; 4] = [
    "[message_id: ",
    "To send an image back, prefer the message tool",
    // A chat channel's notes to the model (`[System: The content may include mention tags …]`).
    "[System: ",
    // Messages sent while a run was busy, delivered together, each under a `Queued #<n>` line.
    "[Queued messages while agent was busy]",
];
/// The ends of the heading lines of a chat channel's metadata blocks (each then a fenced JSON
/// block): `Sender (untrusted metadata):`, `Replied message (untrusted, for context):`.
const OPENCLAW_METADATA_HEADINGS: [&str; 2] =
    [" (untrusted metadata):", " (untrusted, for context):"];
/// The quote of the message a chat reply answers, before the user's words: `[Replying to: "…"]`.
const OPENCLAW_REPLY_QUOTE: &str = "[Replying to: \"";

/// OpenClaw's media note: an `[Image]` or `[Audio]` line, then `User text:` (the user's words
/// follow), then `Description:` with what a vision model saw, to the message's end, or
/// `Transcript:` with what the user said. The headings and the description are the gateway's;
/// the user's words and the transcript stay.
pub(super) fn strip_openclaw_media(text: &str) -> String {
    if !text.contains(OPENCLAW_MEDIA_TEXT) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').peekable();
    let mut in_media = false;
    while let Some(line) = lines.next() {
        let bare = line.trim();
        let opens = OPENCLAW_MEDIA_KINDS.contains(&bare)
            && lines
                .peek()
                .is_some_and(|next| next.trim() == OPENCLAW_MEDIA_TEXT);
        if opens {
            lines.next();
            in_media = true;
        } else if in_media && bare == OPENCLAW_MEDIA_DESCRIPTION {
            break;
        } else if !(in_media && bare == OPENCLAW_MEDIA_TRANSCRIPT) {
            out.push_str(line);
        }
    }
    out
}

/// The QQ channel's preamble before the user's words: `你正在通过 QQ 与用户对话。` ("you are talking
/// with the user through QQ"), then sections each opening with a `【…】` heading and running to a
/// blank line (the session's ids, how to send images, voice, files). The user's words follow
/// the last section.
pub(super) fn strip_qq_preamble(text: &str) -> String {
    if !text.contains(QQ_PREAMBLE) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut in_preamble = false;
    let mut in_section = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim();
        if bare == QQ_PREAMBLE {
            in_preamble = true;
            continue;
        }
        if in_preamble {
            if bare.starts_with('【') {
                in_section = true;
                continue;
            }
            if bare.is_empty() {
                in_section = false;
                continue;
            }
            if in_section {
                continue;
            }
            in_preamble = false;
        }
        out.push_str(line);
    }
    out
}

const QQ_PREAMBLE: &str = "你正在通过 QQ 与用户对话。";

/// OpenClaw's system events in a user message (`System: [date] Exec completed (…) :: output`,
/// `System (untrusted): …`), each without its `System…:` label and date: what a background run
/// printed, for a reader that keeps it as output rather than as the user's words.
pub fn injected_events(text: &str) -> Vec<String> {
    let mut events: Vec<String> = Vec::new();
    let mut in_event = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(rest) = OPENCLAW_EVENT_LINES
            .iter()
            .filter(|label| line.starts_with(*label))
            .find_map(|label| line.strip_prefix(label.trim_end_matches('[')))
        {
            let rest = rest.trim_start();
            // `[2026-03-06 21:33:37 GMT+8] ` before the event, when there is one.
            let event = match rest
                .strip_prefix('[')
                .and_then(|inner| inner.split_once("] "))
            {
                Some((_, event)) => event,
                None => rest,
            };
            events.push(event.trim().to_owned());
            in_event = true;
        } else if let Some(more) = event_continuation(raw).filter(|_| in_event) {
            if let Some(event) = events.last_mut() {
                event.push('\n');
                event.push_str(more.trim());
            }
        } else {
            in_event = false;
        }
    }
    events.retain(|event| !event.trim().is_empty());
    events
}

/// OpenClaw's heartbeat poll with a prompt of the user's configuration: the gateway adds the line
/// naming the workspace's `HEARTBEAT.md` (`When reading HEARTBEAT.md, use workspace file …`) to
/// whatever the prompt says. The default prompt ("Read HEARTBEAT.md if it exists") is above.
pub(super) fn is_openclaw_heartbeat(text: &str) -> bool {
    text.contains(OPENCLAW_HEARTBEAT_LINE)
        && text
            .lines()
            .any(|line| line.trim_start().starts_with(OPENCLAW_HEARTBEAT_LINE))
}

/// OpenClaw's clock line after a heartbeat, a cron job's prompt or a reset
/// (`Current time: Wednesday, March 11th, 2026 — 9:07 PM (Asia/Shanghai) / 2026-03-11 13:07 UTC`).
pub(super) fn is_openclaw_clock_line(line: &str) -> bool {
    line.strip_prefix(OPENCLAW_CLOCK)
        .and_then(|rest| rest.split_once(", "))
        .is_some_and(|(day, _)| WEEKDAYS.contains(&day))
}

const OPENCLAW_HEARTBEAT_LINE: &str = "When reading HEARTBEAT.md, use workspace file";
pub(super) const OPENCLAW_CLOCK: &str = "Current time: ";
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// What an event's further line adds: a `System: …` line's text (a blank one, `System:`, adds
/// nothing and continues the event), or an indented list item under it (the files a
/// post-compaction audit names), whole.
fn event_continuation(line: &str) -> Option<&str> {
    let bare = line.trim();
    if line.starts_with([' ', '\t']) && bare.starts_with("- ") {
        return Some(bare);
    }
    bare.strip_prefix(OPENCLAW_EVENT_CONTINUATION)
        .or_else(|| (bare == OPENCLAW_EVENT_CONTINUATION.trim_end()).then_some(""))
}

/// `text` without OpenClaw's envelope: event lines, metadata blocks (heading and fenced block),
/// the one-line markers, and the date stamp before the user's words (`[Fri 2026-03-06 21:34
/// GMT+8] `). Text without any of them is returned as it is.
pub(super) fn strip_openclaw_envelope(text: &str) -> String {
    let marked = OPENCLAW_METADATA_HEADINGS
        .iter()
        .any(|heading| text.contains(heading))
        || OPENCLAW_EVENT_LINES
            .iter()
            .chain(OPENCLAW_ENVELOPE_LINES.iter())
            .any(|marker| text.contains(marker))
        || text.trim_start().starts_with('[');
    if !marked {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut in_metadata = false;
    let mut fence_open = false;
    let mut in_event = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim();
        if in_metadata {
            // The heading, then one fenced block: skip through its closing fence.
            if bare.starts_with("```") {
                fence_open = !fence_open;
                in_metadata = fence_open;
            } else if !fence_open && !bare.is_empty() {
                in_metadata = false;
                out.push_str(line);
            }
            continue;
        }
        if OPENCLAW_METADATA_HEADINGS
            .iter()
            .any(|heading| bare.ends_with(heading.trim_start()) && bare.contains(heading))
        {
            in_metadata = true;
            fence_open = false;
            continue;
        }
        let event_line = OPENCLAW_EVENT_LINES
            .iter()
            .any(|marker| bare.starts_with(marker));
        let continued = in_event && event_continuation(line).is_some();
        in_event = event_line || continued;
        let envelope = OPENCLAW_ENVELOPE_LINES
            .iter()
            .any(|marker| bare.starts_with(marker))
            || is_queue_heading(bare);
        if !(in_event || envelope) {
            out.push_str(strip_openclaw_stamp(line));
        }
    }
    strip_reply_quote(&out)
}

/// `Queued #2`: the heading of one of the messages OpenClaw delivers together.
fn is_queue_heading(line: &str) -> bool {
    line.strip_prefix("Queued #")
        .is_some_and(|number| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
}

/// `text` without the quote of the message a chat reply answers (`张玲: [Replying to: "…"]`
/// keeps `张玲: `): the quoted message is someone's earlier words, most often the agent's own.
/// The quote ends at the first `"]` at a line's end; a quote without one stays.
fn strip_reply_quote(text: &str) -> String {
    let Some(start) = text.find(OPENCLAW_REPLY_QUOTE) else {
        return text.to_owned();
    };
    let quoted = start + OPENCLAW_REPLY_QUOTE.len();
    let end = text[quoted..]
        .match_indices("\"]")
        .map(|(at, _)| quoted + at + 2)
        .find(|&after| text[after..].starts_with(['\n', '\r']) || after == text.len());
    match end {
        Some(end) => format!("{}{}", &text[..start], text[end..].trim_start()),
        None => text.to_owned(),
    }
}

/// A line without OpenClaw's envelope: the brackets its gateway puts before the user's words,
/// ending in the time the message came in. `[Fri 2026-03-06 21:34 GMT+8] ` from its own clients;
/// from a chat channel the channel, the sender and the time since the last message come first:
/// `[WhatsApp +4479… +1m 2026-02-07 13:30 GMT+5:30] `, `[Telegram Ann (@ann) id:42 2026-02-08
/// 11:02 GMT+8] `, or in older versions `[Telegram … +13s 2026-01-30T04:16Z] `.
fn strip_openclaw_stamp(line: &str) -> &str {
    let Some(rest) = line.strip_prefix('[') else {
        return line;
    };
    let Some(close) = rest.find("] ") else {
        return line;
    };
    if ends_in_arrival_time(&rest[..close]) {
        &rest[close + 2..]
    } else {
        line
    }
}

/// Whether an envelope's text ends in a minute: `2026-03-06 21:34 GMT+8` (a zone is optional),
/// or `2026-01-30T04:16Z`.
fn ends_in_arrival_time(envelope: &str) -> bool {
    let mut parts = envelope.rsplit(' ');
    let Some(last) = parts.next() else {
        return false;
    };
    if let Some((_, time)) = last.split_once('T').filter(|(date, _)| is_iso_date(date)) {
        return is_clock(time.trim_end_matches('Z'));
    }
    let (clock, date) = if is_zone(last) {
        (parts.next(), parts.next())
    } else {
        (Some(last), parts.next())
    };
    clock.is_some_and(is_clock) && date.is_some_and(is_iso_date)
}

/// `2026-03-06`.
fn is_iso_date(text: &str) -> bool {
    text.len() == 10
        && text.chars().enumerate().all(|(index, c)| {
            matches!(index, 4 | 7) == (c == '-') && (c == '-' || c.is_ascii_digit())
        })
}

/// `21:34` or `21:34:05`.
fn is_clock(text: &str) -> bool {
    let mut fields = text.split(':');
    let hours = fields.next().is_some_and(|hours| {
        (1..=2).contains(&hours.len()) && hours.chars().all(|c| c.is_ascii_digit())
    });
    let rest: Vec<&str> = fields.collect();
    hours
        && (1..=2).contains(&rest.len())
        && rest
            .iter()
            .all(|field| field.len() == 2 && field.chars().all(|c| c.is_ascii_digit()))
}

/// A time zone as OpenClaw writes one: `UTC`, `PST`, `GMT+8`, `GMT-3`, `GMT+5:30`.
fn is_zone(text: &str) -> bool {
    let letters = text.chars().take_while(char::is_ascii_uppercase).count();
    let offset = &text[letters..];
    (2..=5).contains(&letters)
        && (offset.is_empty()
            || (offset.starts_with(['+', '-'])
                && offset.len() <= 6
                && offset[1..].chars().all(|c| c.is_ascii_digit() || c == ':')))
}

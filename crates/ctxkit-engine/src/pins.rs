//! Pinned context: texts the user pins (rules, acceptance criteria, a role) are carried verbatim past
//! every compaction, within a token cap. Pi-compatible: a pin is a `custom` entry (`ctxkit.pin`,
//! invisible to the model), and the pinned text reaches the model through a `custom_message`
//! (`ctxkit.pinned`) appended when pinning and again after each compaction that cut it away. A
//! compaction written elsewhere (Pi's, which knows nothing of pins, or an older ctxkit's) adds none
//! back: the view then adds the message that compaction would have written ([`missing_from_context`]).

use std::collections::HashSet;

use ctxkit_protocol::{
    AFTER_COMPACTION_KEY, AgentMessage, CustomMessage, EntryKind, JsonObject, MessageContent,
    PIN_ENTRY_TYPE, PIN_ID_KEY, PINNED_MESSAGE_TYPE,
};
use ctxkit_session::parse_timestamp_ms;
use ctxkit_tokens::utf16_len;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::messages::content_text;
use crate::state::State;

/// An active pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// The pin's id: the id of the entry that first recorded it, kept when a forget or an undone
    /// compaction appends the pin again ([`PIN_ID_KEY`]).
    pub id: String,
    pub text: String,
    /// The entry whose text was pinned, when an entry was.
    pub source_entry_id: Option<String>,
}

fn estimate(text: &str) -> u64 {
    utf16_len(text).div_ceil(4) as u64
}

/// An active pin as the branch records it.
struct Scanned {
    pin: Pin,
    /// The entry on the branch recording it: the pin's own, or a copy of it whose id the
    /// references copied with it (an unpin, a pinned message) were renamed to.
    entry_id: String,
    /// Where its text is visible on the path: the index of the newest entry carrying it.
    carrier: Option<usize>,
}

impl Scanned {
    /// Whether `id`, as an unpin or a pinned message names a pin, names this one.
    fn is_named(&self, id: &str) -> bool {
        self.pin.id == id || self.entry_id == id
    }
}

/// The pins active on the current branch, oldest first.
fn scan(state: &State) -> Vec<Scanned> {
    let path = state.session.branch_path(None);
    let mut pins: Vec<Scanned> = Vec::new();
    for (position, entry) in path.iter().enumerate() {
        if !matches!(entry.type_name(), "custom" | "custom_message") {
            continue;
        }
        let Ok(parsed) = entry.parse() else { continue };
        match parsed.kind {
            EntryKind::Custom(custom) if custom.custom_type == PIN_ENTRY_TYPE => {
                let data = custom.data.unwrap_or(Value::Null);
                match data.get("action").and_then(Value::as_str) {
                    Some("unpin") => {
                        let target = data.get(PIN_ID_KEY).and_then(Value::as_str).unwrap_or("");
                        pins.retain(|scanned| !scanned.is_named(target));
                    }
                    _ => {
                        let source_entry_id = data
                            .get("entryId")
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                        let carrier = source_entry_id.as_deref().and_then(|source| {
                            path[..position]
                                .iter()
                                .rposition(|entry| entry.id() == source)
                        });
                        let id = data
                            .get(PIN_ID_KEY)
                            .and_then(Value::as_str)
                            .unwrap_or(entry.id());
                        pins.push(Scanned {
                            pin: Pin {
                                id: id.to_owned(),
                                text: data
                                    .get("text")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_owned(),
                                source_entry_id,
                            },
                            entry_id: entry.id().to_owned(),
                            carrier,
                        });
                    }
                }
            }
            EntryKind::CustomMessage(message) if message.custom_type == PINNED_MESSAGE_TYPE => {
                let carried: Vec<&str> = message
                    .details
                    .as_ref()
                    .and_then(|details| details.get("pins"))
                    .and_then(Value::as_array)
                    .map(|ids| ids.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for scanned in &mut pins {
                    if carried.iter().any(|id| scanned.is_named(id)) {
                        scanned.carrier = Some(position);
                    }
                }
            }
            EntryKind::Message(_)
            | EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Compaction(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => {}
        }
    }
    pins
}

fn pinned_text(pins: &[&Pin]) -> String {
    let mut text = String::from("Pinned context (kept verbatim across compactions):");
    for pin in pins {
        text.push_str(&format!(
            "\n\n<pinned id=\"{}\">\n{}\n</pinned>",
            pin.id, pin.text
        ));
    }
    text
}

/// Appends the pinned texts as one message; `after_compaction` names the compaction that cut them
/// away, so that undoing it leaves this message behind.
fn append_pinned_message(
    state: &mut State,
    pins: &[&Pin],
    after_compaction: Option<&str>,
) -> Result<String> {
    Ok(state.session.append_custom_message_entry(
        PINNED_MESSAGE_TYPE,
        MessageContent::Text(pinned_text(pins)),
        false,
        Some(pinned_details(pins, after_compaction)),
    )?)
}

/// The `details` of a pinned message: the pins it carries, and the compaction it follows.
fn pinned_details(pins: &[&Pin], after_compaction: Option<&str>) -> Value {
    let ids: Vec<&str> = pins.iter().map(|pin| pin.id.as_str()).collect();
    let mut details = json!({ "pins": ids });
    if let Some(compaction_id) = after_compaction {
        details[AFTER_COMPACTION_KEY] = json!(compaction_id);
    }
    details
}

/// The pins in effect on the branch whose text the context does not show, as the message a ctxkit
/// compaction appends after the latest compaction; `None` when every pin shows. A pin shows when
/// the newest entry carrying its text (the pinned entry, or a pinned message naming it) is one of
/// the context's messages, so a pin a compaction carried is never doubled. Without a compaction
/// the whole branch is the context: nothing is read.
pub(crate) fn missing_from_context(state: &State) -> Option<AgentMessage> {
    let (_, compaction) = state.session.latest_compaction()?;
    // Asked before every model call: a session without a `custom` entry holds no pin, and is
    // answered from the entries' heads alone (no path walked, no entry parsed).
    if !state
        .session
        .entries()
        .iter()
        .any(|entry| entry.type_name() == "custom")
    {
        return None;
    }
    let scanned = scan(state);
    if scanned.is_empty() {
        return None;
    }
    let path = state.session.leaf_path();
    let shown: HashSet<usize> = state
        .session
        .leaf_context()
        .messages
        .iter()
        .map(|message| message.entry)
        .collect();
    let missing: Vec<&Pin> = scanned
        .iter()
        .filter(|scanned| {
            !scanned
                .carrier
                .and_then(|position| path.get(position))
                .is_some_and(|entry| shown.contains(entry))
        })
        .map(|scanned| &scanned.pin)
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(AgentMessage::Custom(CustomMessage {
        custom_type: PINNED_MESSAGE_TYPE.to_owned(),
        content: MessageContent::Text(pinned_text(&missing)),
        display: false,
        details: Some(pinned_details(&missing, Some(compaction.id()))),
        timestamp: parse_timestamp_ms(compaction.timestamp()),
        extra: JsonObject::new(),
    }))
}

/// After the compaction `compaction_id` that kept the path from `first_kept_entry_id` on: appends
/// the pins whose text is no longer visible.
pub(crate) fn reinject_after_compaction(
    state: &mut State,
    compaction_id: &str,
    first_kept_entry_id: &str,
) -> Result<()> {
    let path = state.session.branch_path(None);
    let Some(kept_from) = path
        .iter()
        .position(|entry| entry.id() == first_kept_entry_id)
    else {
        return Ok(());
    };
    let scanned = scan(state);
    let lost: Vec<&Pin> = scanned
        .iter()
        .filter(|scanned| scanned.carrier.is_none_or(|position| position < kept_from))
        .map(|scanned| &scanned.pin)
        .collect();
    if !lost.is_empty() {
        append_pinned_message(state, &lost, Some(compaction_id))?;
    }
    Ok(())
}

impl Engine {
    /// The pins active on the current branch.
    pub async fn pins(&self) -> Vec<Pin> {
        scan(&*self.lock().await)
            .into_iter()
            .map(|scanned| scanned.pin)
            .collect()
    }

    /// Pins a text; the model sees it now and after every compaction. Fails with `EmptyPin`
    /// (nothing written) when the text is blank.
    pub async fn pin_text(&self, text: &str) -> Result<Pin> {
        if text.trim().is_empty() {
            return Err(EngineError::EmptyPin);
        }
        let mut state = self.lock().await;
        check_cap(&state, text)?;
        let id = state.session.append_custom_entry(
            PIN_ENTRY_TYPE,
            Some(json!({ "action": "pin", "text": text })),
        )?;
        let pin = Pin {
            id,
            text: text.to_owned(),
            source_entry_id: None,
        };
        append_pinned_message(&mut state, &[&pin], None)?;
        Ok(pin)
    }

    /// Pins the text of an entry (a user rule, an assistant's plan). The entry stays where it is;
    /// its text is carried once a compaction cuts it away.
    pub async fn pin_entry(&self, entry_id: &str) -> Result<Pin> {
        let mut state = self.lock().await;
        let entry = state
            .session
            .entry(entry_id)
            .ok_or_else(|| EngineError::EntryNotFound(entry_id.to_owned()))?;
        let text = match entry.parse_message() {
            Some(Ok(AgentMessage::User(message))) => content_text(&message.content),
            Some(Ok(AgentMessage::Assistant(message))) => {
                content_text(&MessageContent::Blocks(message.content))
            }
            Some(Ok(AgentMessage::ToolResult(message))) => content_text(&message.content),
            Some(Ok(AgentMessage::Custom(message))) => content_text(&message.content),
            Some(Ok(
                AgentMessage::BashExecution(_)
                | AgentMessage::BranchSummary(_)
                | AgentMessage::CompactionSummary(_)
                | AgentMessage::Unknown(_),
            ))
            | Some(Err(_))
            | None => String::new(),
        };
        if text.trim().is_empty() {
            return Err(EngineError::EntryNotFound(format!(
                "{entry_id} (no text to pin)"
            )));
        }
        check_cap(&state, &text)?;
        let on_branch = state
            .session
            .branch_path(None)
            .iter()
            .any(|entry| entry.id() == entry_id);
        let id = state.session.append_custom_entry(
            PIN_ENTRY_TYPE,
            Some(json!({ "action": "pin", "text": text, "entryId": entry_id })),
        )?;
        let pin = Pin {
            id,
            text,
            source_entry_id: Some(entry_id.to_owned()),
        };
        if !on_branch {
            append_pinned_message(&mut state, &[&pin], None)?;
        }
        Ok(pin)
    }

    /// Removes a pin; text already in the context stays until a compaction removes it. `pin_id` is
    /// the pin's id (or the id of the entry recording it on the branch, which a client listed
    /// before the pin kept its id).
    pub async fn unpin(&self, pin_id: &str) -> Result<()> {
        let mut state = self.lock().await;
        let Some(pin) = scan(&state)
            .into_iter()
            .find(|scanned| scanned.is_named(pin_id))
        else {
            return Err(EngineError::PinNotFound(pin_id.to_owned()));
        };
        state.session.append_custom_entry(
            PIN_ENTRY_TYPE,
            Some(json!({ "action": "unpin", PIN_ID_KEY: pin.pin.id })),
        )?;
        Ok(())
    }
}

fn check_cap(state: &State, text: &str) -> Result<()> {
    let cap = state.settings.pinned.max_tokens;
    let tokens: u64 = scan(state)
        .iter()
        .map(|scanned| estimate(&scanned.pin.text))
        .sum::<u64>()
        + estimate(text);
    if tokens > cap {
        return Err(EngineError::PinCapExceeded { tokens, cap });
    }
    Ok(())
}

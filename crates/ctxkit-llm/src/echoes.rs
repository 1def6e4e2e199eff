//! The credentials a client sends ([`SentSecrets`]), to take out of what comes back. A provider,
//! or a proxy in front of one, may echo them inside a reply: in the text, the thinking, a tool
//! call's arguments, split over two streamed events. A reply is stored in the session and sent
//! again, so every reply a client returns passes them first (`ModelClient::stamp`), and every delta
//! it shows passes them too ([`ShownDeltas`]).
//!
//! A reply is the model's own writing, so only the credentials this client sent are taken out —
//! the key, credential headers' values, the base URL's user information, plain or as a `Basic`
//! value — never what merely looks like one: a model writing `postgres://app:pw@localhost` or
//! `Bearer ${TOKEN}` into a file means it. Errors are the provider's words, not the model's: they
//! lose every header's value and every credential shape too (`ModelClient::redacted`).

use base64::Engine;
use ctxkit_protocol::{AssistantMessage, ContentBlock};
use serde_json::Value;

use crate::stream::ChatDelta;

/// Words in a configured header's name that make its value a credential (`Authorization`,
/// `x-api-key`, `X-Gateway-Token`, `Cookie`); the others (`HTTP-Referer`, `X-Title`) are not
/// taken out of what the model writes.
const CREDENTIAL_HEADER_WORDS: &[&str] = &[
    "auth", "key", "token", "secret", "password", "cookie", "session",
];

/// The credentials one client sends, to take out of what comes back, and the search for them
/// prepared once (not for each string of each reply).
#[derive(Clone, Default)]
pub(crate) struct SentSecrets(Vec<String>, ctxkit_secrets::Redactor);

impl std::fmt::Debug for SentSecrets {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "SentSecrets(<{} redacted>)", self.0.len())
    }
}

/// Which configured headers' values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Headers {
    /// Those whose name says they hold a credential: what is taken out of a model's writing.
    Credentials,
    /// Every one: what is taken out of the provider's own words (errors), where nothing is lost.
    All,
}

impl SentSecrets {
    /// From the key, the configured headers (each value, and a `Bearer <token>` value's token
    /// alone, which is echoed as often) and the base URL's user information (its parts, whole,
    /// and as a `Basic` value).
    pub(crate) fn new<'a>(
        api_key: Option<&str>,
        headers: impl IntoIterator<Item = (&'a String, &'a String)>,
        which: Headers,
        base_url: &str,
    ) -> Self {
        let mut secrets: Vec<String> = api_key.map(str::to_owned).into_iter().collect();
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            let counts = which == Headers::All
                || CREDENTIAL_HEADER_WORDS
                    .iter()
                    .any(|word| name.contains(word));
            if counts {
                secrets.push(value.clone());
                if let Some((_, token)) = value.split_once(' ') {
                    secrets.push(token.trim().to_owned());
                }
            }
        }
        if let Some(userinfo) = userinfo(base_url) {
            secrets.extend(
                userinfo
                    .split(':')
                    .filter(|part| !part.is_empty())
                    .map(str::to_owned),
            );
            secrets.push(base64::engine::general_purpose::STANDARD.encode(userinfo));
            secrets.push(userinfo.to_owned());
        }
        // Longest first, so a whole value goes before a part of it.
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        let redactor = ctxkit_secrets::Redactor::new(secrets.iter().map(String::as_str));
        Self(secrets, redactor)
    }

    /// The credentials, for [`ctxkit_secrets::redact`].
    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// `text` without the credentials (in any of the encodings [`ctxkit_secrets::redact_known`]
    /// knows).
    pub(crate) fn redact_text(&self, text: &str) -> String {
        self.1.redact_known(text)
    }

    /// Takes the credentials out of every string of the reply's content and extra fields.
    pub(crate) fn redact_reply(&self, reply: &mut AssistantMessage) {
        if !self.0.is_empty() {
            redact_strings(reply, &|text| self.redact_text(text));
        }
    }

    /// How many bytes at the end of `text` begin a credential (its longest such end).
    fn started_at_end(&self, text: &str) -> usize {
        self.0
            .iter()
            .filter(|secret| secret.trim().len() >= 8)
            .filter_map(|secret| {
                (1..secret.len())
                    .rev()
                    .filter_map(|length| secret.get(..length))
                    .find(|start| text.ends_with(start))
                    .map(str::len)
            })
            .max()
            .unwrap_or(0)
    }
}

/// Why a tool call a credential was taken out of is not run.
pub(crate) const CALL_HELD_A_CREDENTIAL: &str = "the arguments held a credential this client \
sent to the provider, taken out as `<redacted>`; not run, since the call is no longer the one the \
model wrote";

/// Passes every string of the reply's content and extra fields (an object's keys too) through
/// `redact`; the error message is the caller's. A tool call that changed is marked as one whose
/// arguments could not be read, which no agent runs (QA: `echo <key> x` ran as `echo <redacted>
/// x`, which the shell reads as redirections, emptying a file named by the next word).
pub(crate) fn redact_strings(reply: &mut AssistantMessage, redact: &dyn Fn(&str) -> String) {
    for block in &mut reply.content {
        let Ok(mut value) = serde_json::to_value(&*block) else {
            continue;
        };
        if redact_value(&mut value, redact)
            && let Ok(redacted) = serde_json::from_value::<ContentBlock>(value)
        {
            *block = redacted;
            if let ContentBlock::ToolCall(call) = block
                && call.arguments_error().is_none()
            {
                call.extra.insert(
                    ctxkit_protocol::ToolCall::ARGUMENTS_ERROR_KEY.to_owned(),
                    Value::String(CALL_HELD_A_CREDENTIAL.to_owned()),
                );
            }
        }
    }
    for value in reply.extra.values_mut() {
        redact_value(value, redact);
    }
}

/// Redacts every string (and object key) in `value`; whether anything changed.
fn redact_value(value: &mut Value, redact: &dyn Fn(&str) -> String) -> bool {
    match value {
        Value::String(text) => {
            let redacted = redact(text);
            let changed = redacted != *text;
            *text = redacted;
            changed
        }
        Value::Array(items) => {
            let mut changed = false;
            for item in items {
                changed |= redact_value(item, redact);
            }
            changed
        }
        Value::Object(map) => {
            let entries = std::mem::take(map);
            let mut changed = false;
            for (key, mut item) in entries {
                changed |= redact_value(&mut item, redact);
                let redacted = redact(&key);
                changed |= redacted != key;
                map.insert(redacted, item);
            }
            changed
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

/// The deltas of one streamed reply on their way to the screen. A credential can arrive in
/// pieces over several deltas, so the end of what arrived that could begin one is held back until
/// the next delta shows whether it does (or the block, the call or the stream ends).
pub(crate) struct ShownDeltas<'a> {
    secrets: &'a SentSecrets,
    /// Text (or thinking) not shown yet, and which of the two it is.
    pending: Option<(Kind, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Thinking,
}

impl<'a> ShownDeltas<'a> {
    pub(crate) fn new(secrets: &'a SentSecrets) -> Self {
        Self {
            secrets,
            pending: None,
        }
    }

    /// Shows what of `delta` is safe to show now.
    pub(crate) fn show(&mut self, delta: ChatDelta, sink: &mut dyn FnMut(ChatDelta)) {
        let (kind, piece) = match delta {
            ChatDelta::Text(piece) => (Kind::Text, piece),
            ChatDelta::Thinking(piece) => (Kind::Thinking, piece),
            ChatDelta::ToolCall { name } => {
                self.finish(sink);
                let name = self.secrets.redact_text(&name);
                return sink(ChatDelta::ToolCall { name });
            }
            ChatDelta::BlockEnd | ChatDelta::Retrying(_) => {
                self.finish(sink);
                return sink(delta);
            }
        };
        if self.pending.as_ref().is_some_and(|(held, _)| *held != kind) {
            self.finish(sink);
        }
        let mut text = self
            .pending
            .take()
            .map(|(_, text)| text)
            .unwrap_or_default();
        text.push_str(&piece);
        let mut text = self.secrets.redact_text(&text);
        let held = text.split_off(text.len() - self.secrets.started_at_end(&text));
        if !text.is_empty() {
            sink(delta_of(kind, text));
        }
        if !held.is_empty() {
            self.pending = Some((kind, held));
        }
    }

    /// Shows what was held back.
    pub(crate) fn finish(&mut self, sink: &mut dyn FnMut(ChatDelta)) {
        if let Some((kind, text)) = self.pending.take() {
            sink(delta_of(kind, text));
        }
    }
}

fn delta_of(kind: Kind, text: String) -> ChatDelta {
    match kind {
        Kind::Text => ChatDelta::Text(text),
        Kind::Thinking => ChatDelta::Thinking(text),
    }
}

/// The `user:password` of a base URL such as `https://user:pass@host/v1`.
pub(crate) fn userinfo(base_url: &str) -> Option<&str> {
    let (_, after_scheme) = base_url.split_once("://")?;
    let authority = after_scheme
        .split_once('/')
        .map_or(after_scheme, |(authority, _)| authority);
    let (userinfo, _) = authority.rsplit_once('@')?;
    Some(userinfo)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn secrets() -> SentSecrets {
        let headers = BTreeMap::from([
            (
                "X-Gateway-Token".to_owned(),
                "Bearer gw-token-77665544".to_owned(),
            ),
            (
                "HTTP-Referer".to_owned(),
                "https://ctxkit.example/app".to_owned(),
            ),
        ]);
        SentSecrets::new(
            Some("sk-test-0123456789"),
            &headers,
            Headers::Credentials,
            "https://alice:hunter2hunter2@llm.example/v1",
        )
    }

    #[test]
    fn the_credentials_sent_are_taken_out_and_nothing_else() {
        let secrets = secrets();
        let text = "sk-test-0123456789 gw-token-77665544 hunter2hunter2 \
                    YWxpY2U6aHVudGVyMmh1bnRlcjI= https://ctxkit.example/app \
                    postgres://app:pw@localhost Bearer ${TOKEN}";
        assert_eq!(
            secrets.redact_text(text),
            "<redacted> <redacted> <redacted> <redacted> https://ctxkit.example/app \
             postgres://app:pw@localhost Bearer ${TOKEN}"
        );
    }

    #[test]
    fn a_credential_in_pieces_is_never_shown_and_everything_else_is() {
        let secrets = secrets();
        let mut shown = Vec::new();
        let mut sink = |delta: ChatDelta| shown.push(delta);
        let mut deltas = ShownDeltas::new(&secrets);
        for piece in ["Key: sk-", "test-01", "23456789 ok, s", "k-t"] {
            deltas.show(ChatDelta::Text(piece.to_owned()), &mut sink);
        }
        deltas.show(ChatDelta::Thinking("hmm".to_owned()), &mut sink);
        deltas.show(ChatDelta::Text("sk-test-0".to_owned()), &mut sink);
        deltas.finish(&mut sink);
        assert_eq!(
            shown,
            [
                ChatDelta::Text("Key: ".to_owned()),
                ChatDelta::Text("<redacted> ok, ".to_owned()),
                ChatDelta::Text("sk-t".to_owned()),
                ChatDelta::Thinking("hmm".to_owned()),
                ChatDelta::Text("sk-test-0".to_owned()),
            ]
        );
    }

    #[test]
    fn every_string_of_a_reply_is_redacted_and_the_blocks_keep_their_shape() {
        let mut reply: AssistantMessage = serde_json::from_value(json!({
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "t1", "name": "write",
                 "arguments": {"path": "a", "content": ["sk-test-0123456789"], "n": 1}},
                {"type": "thinking", "thinking": "x sk-test-0123456789", "thinkingSignature": "c2ln"},
                {"type": "future", "data": {"sk-test-0123456789": true}}
            ],
            "providerBlock": {"text": "sk-test-0123456789"},
        }))
        .unwrap();
        secrets().redact_reply(&mut reply);
        assert_eq!(
            serde_json::to_value(&reply).unwrap()["content"],
            json!([
                {"type": "toolCall", "id": "t1", "name": "write",
                 "arguments": {"path": "a", "content": ["<redacted>"], "n": 1},
                 "argumentsError": super::CALL_HELD_A_CREDENTIAL},
                {"type": "thinking", "thinking": "x <redacted>", "thinkingSignature": "c2ln"},
                {"type": "future", "data": {"<redacted>": true}}
            ])
        );
        assert_eq!(reply.extra["providerBlock"], json!({"text": "<redacted>"}));
    }
}

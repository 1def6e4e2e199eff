//! Measuring one request: its messages serialized as JSON (the bytes a provider's prompt cache
//! compares), their token estimates, and the prefix it shares with the previous request.
//!
//! Tokens are the reference's chars/4 estimate (`ctxkit_tokens::estimate_tokens`), not a
//! tokenizer count.
//!
//! Serializing every message of every request dominated the simulator's own time, so a message equal
//! (as a value) to the previous request's message at the same position reuses that message's JSON
//! and estimate. The serializer is deterministic and the engine materializes a stored message with
//! its fields in stored order every time, so equal values give byte-identical JSON; a test checks
//! that reuse gives the same bytes as serializing afresh.

use std::sync::Arc;

use ctxkit_protocol::AgentMessage;
use ctxkit_tokens::estimate_tokens;

/// How far ahead in the previous request a message is looked for.
const REUSE_LOOKAHEAD: usize = 64;

static EMPTY: Request = Request {
    messages: Vec::new(),
    tokens: Vec::new(),
    blocks: Vec::new(),
    kinds: Vec::new(),
    prefix_hashes: Vec::new(),
};

/// A request as sent: one JSON text and one token estimate per message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    /// Shared with the requests that reuse them, so a reuse copies no bytes.
    pub messages: Vec<Arc<str>>,
    pub tokens: Vec<u64>,
    /// Content blocks per message, as Anthropic counts them for its lookback.
    pub blocks: Vec<u32>,
    /// Where ctxkit's Anthropic client may put a breakpoint on each message.
    pub kinds: Vec<Kind>,
    /// `prefix_hashes[i]`: a hash of messages `0..=i` (their JSON), to compare prefixes.
    pub prefix_hashes: Vec<u64>,
}

/// What a message is to the breakpoint rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The model's: never marked.
    Assistant,
    /// A user block (a prompt, a tool result, a summary): the last one is marked.
    User,
    /// A tool result cut by the prune layer: the last one marks the end of the stable prefix.
    Pruned,
}

fn kind_of(message: &AgentMessage, json: &str) -> Kind {
    match message {
        AgentMessage::Assistant(_) => Kind::Assistant,
        AgentMessage::ToolResult(_) if json.contains("ctxkit://tool-result/") => Kind::Pruned,
        AgentMessage::ToolResult(_)
        | AgentMessage::User(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::CompactionSummary(_)
        | AgentMessage::Unknown(_) => Kind::User,
    }
}

fn blocks_of(message: &AgentMessage) -> u32 {
    u32::try_from(ctxkit_transform::content_blocks(message)).unwrap_or(u32::MAX)
}

fn chain(previous: u64, json: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    previous.hash(&mut hasher);
    json.hash(&mut hasher);
    hasher.finish()
}

impl Request {
    /// Serializes `messages` and estimates their tokens.
    #[cfg(test)]
    pub(crate) fn measure(messages: &[AgentMessage]) -> Result<Self, serde_json::Error> {
        Self::measure_after(None, messages)
    }

    /// Like [`Request::measure`], reusing the JSON and estimates of messages equal to messages of
    /// `previous` (the previous request's messages and their measurement). Messages are matched in
    /// order, skipping up to [`REUSE_LOOKAHEAD`] previous messages, so a request whose head was
    /// dropped still reuses its tail.
    pub(crate) fn measure_after(
        previous: Option<(&[AgentMessage], &Request)>,
        messages: &[AgentMessage],
    ) -> Result<Self, serde_json::Error> {
        let mut request = Self {
            messages: Vec::with_capacity(messages.len()),
            tokens: Vec::with_capacity(messages.len()),
            blocks: Vec::with_capacity(messages.len()),
            kinds: Vec::with_capacity(messages.len()),
            prefix_hashes: Vec::with_capacity(messages.len()),
        };
        let (before, measured) = previous.unwrap_or((&[], &EMPTY));
        let mut next = 0;
        for (index, message) in messages.iter().enumerate() {
            let found = before
                .iter()
                .enumerate()
                .skip(next)
                .take(REUSE_LOOKAHEAD)
                .find(|(_, candidate)| *candidate == message)
                .map(|(position, _)| position)
                .filter(|position| *position < measured.messages.len());
            let previous_hash = request.prefix_hashes.last().copied().unwrap_or(0);
            match found {
                Some(position) => {
                    request.messages.push(measured.messages[position].clone());
                    request.tokens.push(measured.tokens[position]);
                    request.blocks.push(measured.blocks[position]);
                    request.kinds.push(measured.kinds[position]);
                    next = position + 1;
                    // The same message after the same prefix: the previous request's hash of
                    // it, without hashing the whole prefix's text again at every request.
                    let prefix_before = match position.checked_sub(1) {
                        Some(earlier) => measured.prefix_hashes.get(earlier).copied(),
                        None => Some(0),
                    };
                    if let Some(&hash) = measured.prefix_hashes.get(position)
                        && position == index
                        && prefix_before == Some(previous_hash)
                    {
                        request.prefix_hashes.push(hash);
                        continue;
                    }
                }
                None => {
                    let json = serde_json::to_string(message)?;
                    request.kinds.push(kind_of(message, &json));
                    request.messages.push(Arc::from(json));
                    request.tokens.push(estimate_tokens(message));
                    request.blocks.push(blocks_of(message));
                }
            }
            let json = request.messages.last().map_or("", |json| &**json);
            request.prefix_hashes.push(chain(previous_hash, json));
        }
        Ok(request)
    }

    /// The positions of the messages ctxkit's Anthropic client marks with a breakpoint, in order:
    /// the last pruned tool result before the last message, and the last message when it is a
    /// user block.
    pub(crate) fn breakpoints(&self) -> Vec<usize> {
        let Some(last) = self.kinds.len().checked_sub(1) else {
            return Vec::new();
        };
        let mut breakpoints: Vec<usize> = self.kinds[..last]
            .iter()
            .rposition(|kind| *kind == Kind::Pruned)
            .into_iter()
            .collect();
        if self.kinds[last] != Kind::Assistant {
            breakpoints.push(last);
        }
        breakpoints
    }

    /// Estimated input tokens of the whole request.
    pub(crate) fn total_tokens(&self) -> u64 {
        self.tokens.iter().sum()
    }
}

/// The part of a request a prompt cache could serve from the previous request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SharedPrefix {
    /// Leading messages byte-identical to the previous request's messages at the same positions.
    pub messages: usize,
    /// Their estimated tokens.
    pub tokens: u64,
}

/// The longest common prefix, in whole messages, of `previous` and `current`, and its tokens in
/// `current`. A message counts only if its serialized bytes are identical and every message before
/// it counted too.
pub(crate) fn shared_prefix(previous: &[Arc<str>], current: &Request) -> SharedPrefix {
    let messages = previous
        .iter()
        .zip(&current.messages)
        .take_while(|(before, now)| Arc::ptr_eq(before, now) || before == now)
        .count();
    SharedPrefix {
        messages,
        tokens: current.tokens.iter().take(messages).sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(texts: &[&str], tokens: &[u64]) -> Request {
        Request {
            messages: texts.iter().map(|text| Arc::from(*text)).collect(),
            tokens: tokens.to_vec(),
            ..Request::default()
        }
    }

    fn strings(texts: &[&str]) -> Vec<Arc<str>> {
        texts.iter().map(|text| Arc::from(*text)).collect()
    }

    #[test]
    fn a_grown_request_shares_all_of_the_previous_one() {
        let previous = strings(&["a", "b", "c"]);
        let current = request(&["a", "b", "c", "d"], &[10, 20, 30, 40]);
        assert_eq!(
            shared_prefix(&previous, &current),
            SharedPrefix {
                messages: 3,
                tokens: 60
            }
        );
    }

    #[test]
    fn the_prefix_stops_at_the_first_changed_message_even_if_later_ones_match() {
        let previous = strings(&["a", "b", "c", "d"]);
        let current = request(&["a", "B", "c", "d", "e"], &[10, 20, 30, 40, 50]);
        assert_eq!(
            shared_prefix(&previous, &current),
            SharedPrefix {
                messages: 1,
                tokens: 10
            }
        );
        // A changed first message (a dropped or rewritten head) shares nothing.
        let current = request(&["x", "b"], &[5, 20]);
        assert_eq!(shared_prefix(&previous, &current), SharedPrefix::default());
    }

    #[test]
    fn a_shorter_request_shares_at_most_itself_and_byte_differences_count() {
        let previous = strings(&["a", "b", "c"]);
        let current = request(&["a", "b"], &[7, 8]);
        assert_eq!(shared_prefix(&previous, &current).tokens, 15);
        // One byte of difference inside a message breaks the prefix there.
        let previous = strings(&[r#"{"role":"user","content":"hi"}"#]);
        let current = request(&[r#"{"role":"user","content":"hi "}"#], &[1]);
        assert_eq!(shared_prefix(&previous, &current).messages, 0);
        assert_eq!(shared_prefix(&[], &current), SharedPrefix::default());
    }

    #[test]
    fn measure_serializes_and_estimates_each_message() {
        let message: AgentMessage =
            serde_json::from_str(r#"{"role":"user","content":"twelve chars"}"#).unwrap();
        let request = Request::measure(&[message.clone(), message]).unwrap();
        assert_eq!(request.messages.len(), 2);
        assert_eq!(request.messages[0], request.messages[1]);
        assert!(request.messages[0].contains("twelve chars"));
        assert_eq!(request.tokens, vec![3, 3]);
        assert_eq!(request.total_tokens(), 6);
    }

    #[test]
    fn reuse_gives_the_bytes_of_a_fresh_measurement() {
        let trace = crate::trace::generate_trace(crate::trace::TraceOptions { calls: 60, seed: 5 });
        let all: Vec<AgentMessage> = trace.messages().collect();
        // Materialize the messages the way the engine does: from their stored JSON.
        let reparsed: Vec<AgentMessage> = all
            .iter()
            .map(|message| serde_json::from_str(&serde_json::to_string(message).unwrap()).unwrap())
            .collect();
        let first = Request::measure(&reparsed[..40]).unwrap();
        // The next request changes message 10 and grows by 20.
        let mut next = reparsed[..60].to_vec();
        next[10] = all[11].clone();
        let reused = Request::measure_after(Some((&reparsed[..40], &first)), &next).unwrap();
        assert_eq!(reused, Request::measure(&next).unwrap());
        assert_eq!(shared_prefix(&first.messages, &reused).messages, 10);
        // The next one drops messages 1 to 5 (a sliding window) and rewrites message 30.
        let mut windowed: Vec<AgentMessage> = std::iter::once(next[0].clone())
            .chain(next[6..].iter().cloned())
            .collect();
        windowed[30] = all[2].clone();
        let after = Request::measure_after(Some((&next, &reused)), &windowed).unwrap();
        assert_eq!(after, Request::measure(&windowed).unwrap());
        assert_eq!(shared_prefix(&reused.messages, &after).messages, 1);
    }
}

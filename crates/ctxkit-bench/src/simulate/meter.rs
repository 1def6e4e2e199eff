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

use ctxkit_protocol::AgentMessage;
use ctxkit_tokens::estimate_tokens;

/// How far ahead in the previous request a message is looked for.
const REUSE_LOOKAHEAD: usize = 64;

static EMPTY: Request = Request {
    messages: Vec::new(),
    tokens: Vec::new(),
};

/// A request as sent: one JSON text and one token estimate per message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Request {
    pub messages: Vec<String>,
    pub tokens: Vec<u64>,
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
        };
        let (before, measured) = previous.unwrap_or((&[], &EMPTY));
        let mut next = 0;
        for message in messages {
            let found = before
                .iter()
                .enumerate()
                .skip(next)
                .take(REUSE_LOOKAHEAD)
                .find(|(_, candidate)| *candidate == message)
                .map(|(position, _)| position)
                .filter(|position| *position < measured.messages.len());
            match found {
                Some(position) => {
                    request.messages.push(measured.messages[position].clone());
                    request.tokens.push(measured.tokens[position]);
                    next = position + 1;
                }
                None => {
                    request.messages.push(serde_json::to_string(message)?);
                    request.tokens.push(estimate_tokens(message));
                }
            }
        }
        Ok(request)
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
pub(crate) fn shared_prefix(previous: &[String], current: &Request) -> SharedPrefix {
    let messages = previous
        .iter()
        .zip(&current.messages)
        .take_while(|(before, now)| before == now)
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
            messages: texts.iter().map(|text| (*text).to_owned()).collect(),
            tokens: tokens.to_vec(),
        }
    }

    fn strings(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|text| (*text).to_owned()).collect()
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
        let trace = crate::simulate::trace::generate_trace(crate::simulate::trace::TraceOptions {
            calls: 60,
            seed: 5,
        });
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

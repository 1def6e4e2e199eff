//! A split turn whose kept part starts with the turn's first reply: its prefix is only the user's
//! request. When that request is short and a history summary is written anyway, the request stands
//! as its own checkpoint, word for word, and no second summary request is sent for it (Pi sends one
//! whenever the prefix is not empty: with a cache-prefix summary, the whole conversation again to
//! restate a few words; `docs/pi-compatibility.md`). A compaction with no history before the turn
//! still asks its summarizer once, for the prefix, as Pi does. A credential the request shows by
//! its shape is not repeated (`ctxkit_secrets::redact`), as in an offline summary.

use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent};

use crate::prepare::Preparation;

/// The longest request, in characters, that is kept word for word instead of summarized: well
/// under what a turn-prefix summary comes to.
pub const VERBATIM_TURN_PREFIX_CHARS: usize = 2_000;

/// The turn-prefix checkpoint of a prefix that holds only the user's short text request, in the
/// sections the turn-prefix prompt asks a summarizer for; `None` when a summary is needed (any
/// reply, tool result, image or left-out message in the prefix, a longer request, or no history
/// before the turn).
pub fn verbatim_turn_prefix(preparation: &Preparation) -> Option<String> {
    if preparation.turn_prefix_gap.is_some() || preparation.messages_to_summarize.is_empty() {
        return None;
    }
    let mut requests = Vec::new();
    for sourced in &preparation.turn_prefix_messages {
        let AgentMessage::User(user) = &sourced.message else {
            return None;
        };
        requests.push(plain_text(&user.content)?);
    }
    let request = requests.join("\n\n");
    let request = request.trim();
    if request.is_empty() || request.chars().count() > VERBATIM_TURN_PREFIX_CHARS {
        return None;
    }
    // A summary is kept, printed and sent again long after: a credential the request shows by its
    // shape (a bearer token, a URL's password, a provider's key) is not repeated, as the offline
    // summarizer leaves it out; `recall` still reads the request.
    let request = ctxkit_secrets::redact_for_keeping(request);
    Some(format!(
        "## Original Request\n{request}\n\n## Progress So Far\n- None yet: the turn's first reply \
         is kept after this checkpoint, word for word.\n\n## Context Needed to Continue\n- The kept \
         rest of the turn."
    ))
}

/// The text of a content made only of text; `None` when it holds anything else.
fn plain_text(content: &MessageContent) -> Option<String> {
    match content {
        MessageContent::Text(text) => Some(text.clone()),
        MessageContent::Blocks(blocks) => {
            let texts: Option<Vec<&str>> = blocks.iter().map(ContentBlock::as_text).collect();
            Some(texts?.join("\n"))
        }
    }
}

#[cfg(test)]
mod tests {
    use ctxkit_protocol::AgentMessage;
    use ctxkit_session::{ContextMessage, ContextMessageKind};
    use serde_json::json;

    use super::*;
    use crate::prepare::SourcedMessage;
    use crate::span_window::SpanGap;

    fn message(value: serde_json::Value) -> SourcedMessage {
        let message: AgentMessage = serde_json::from_value(value).expect("a message");
        SourcedMessage {
            source: ContextMessage::new(0, ContextMessageKind::Stored),
            message,
        }
    }

    fn user(text: &str) -> SourcedMessage {
        message(json!({"role": "user", "content": text, "timestamp": 1}))
    }

    fn prefix(messages: Vec<SourcedMessage>) -> Preparation {
        Preparation {
            first_kept_entry_id: "kept".to_owned(),
            messages_to_summarize: vec![user("an earlier turn")],
            turn_prefix_messages: messages,
            history_gap: None,
            turn_prefix_gap: None,
            is_split_turn: true,
            tokens_before: 0,
            previous_summary: None,
            file_operations: crate::FileOperations::default(),
            settings: crate::CompactionSettings::default(),
        }
    }

    #[test]
    fn a_short_request_alone_is_its_own_checkpoint() {
        let checkpoint = verbatim_turn_prefix(&prefix(vec![user("explain part 4")]))
            .expect("a short request stands as it is");
        assert!(
            checkpoint.starts_with("## Original Request\nexplain part 4\n\n## Progress So Far")
        );
    }

    /// The checkpoint is a summary ctxkit writes: kept, printed and sent again long after, like an
    /// offline summary, it does not repeat a credential the request shows by its shape.
    #[test]
    fn a_credential_in_the_request_is_not_repeated_in_the_checkpoint() {
        let request = "call https://api.example.com/v1/checkin with Authorization: Bearer \
                       sk_made0up0token0for0the0test, then push to \
                       https://deploy:hunter2hunter2@git.example.com/app.git with the key \
                       sk-ant-api03-made0up0key0for0the0test";
        let checkpoint =
            verbatim_turn_prefix(&prefix(vec![user(request)])).expect("a short request");
        assert!(
            !checkpoint.contains("sk_made0up0token0for0the0test"),
            "{checkpoint}"
        );
        assert!(!checkpoint.contains("hunter2hunter2"), "{checkpoint}");
        assert!(!checkpoint.contains("made0up0key"), "{checkpoint}");
        assert!(
            checkpoint.contains("https://api.example.com/v1/checkin"),
            "{checkpoint}"
        );
    }

    #[test]
    fn text_blocks_are_read_and_anything_else_needs_a_summary() {
        let blocks = message(json!({"role": "user", "timestamp": 1, "content": [
            {"type": "text", "text": "first"}, {"type": "text", "text": "second"}]}));
        let checkpoint = verbatim_turn_prefix(&prefix(vec![blocks])).expect("text blocks");
        assert!(checkpoint.contains("first\nsecond"));

        let image = message(json!({"role": "user", "timestamp": 1, "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}));
        assert_eq!(verbatim_turn_prefix(&prefix(vec![image])), None);

        let reply = message(json!({"role": "assistant", "timestamp": 1, "content": [
            {"type": "text", "text": "working"}], "api": "x", "provider": "x", "model": "x",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": "stop"}));
        assert_eq!(verbatim_turn_prefix(&prefix(vec![user("go"), reply])), None);
    }

    #[test]
    fn a_long_request_a_left_out_span_or_no_history_needs_a_summary() {
        let long = "word ".repeat(VERBATIM_TURN_PREFIX_CHARS / 5 + 1);
        assert_eq!(verbatim_turn_prefix(&prefix(vec![user(&long)])), None);
        let just_fits = "x".repeat(VERBATIM_TURN_PREFIX_CHARS);
        assert!(verbatim_turn_prefix(&prefix(vec![user(&just_fits)])).is_some());

        let mut gapped = prefix(vec![user("go")]);
        gapped.turn_prefix_gap = Some(SpanGap { at: 1, messages: 3 });
        assert_eq!(verbatim_turn_prefix(&gapped), None);
        assert_eq!(verbatim_turn_prefix(&prefix(vec![user("  ")])), None);
        let mut first_turn = prefix(vec![user("go")]);
        first_turn.messages_to_summarize.clear();
        assert_eq!(
            verbatim_turn_prefix(&first_turn),
            None,
            "the only request stays"
        );
        assert_eq!(verbatim_turn_prefix(&prefix(Vec::new())), None);
    }
}

//! Many context messages at once: each is read from its line (often on disk) and parsed on its own,
//! so a whole context is read on all cores. The first failure in context order is the one reported,
//! as when the messages are read one by one.

use ctxkit_protocol::AgentMessage;
use rayon::prelude::*;
use serde_json::Value;

use super::Session;
use crate::context::ContextMessage;
use crate::error::Result;

/// Below this many messages, they are read on the calling thread.
const PARALLEL_MESSAGES: usize = 32;

impl Session {
    /// The JSON values of `messages`, in order (see [`Session::message_value`]).
    pub fn message_values(&self, messages: &[ContextMessage]) -> Result<Vec<Value>> {
        read_all(messages, |message| self.message_value(message))
    }

    /// The typed forms of `messages`, in order (see [`Session::message`]).
    pub fn messages(&self, messages: &[ContextMessage]) -> Result<Vec<AgentMessage>> {
        read_all(messages, |message| self.message(message))
    }
}

fn read_all<T: Send>(
    messages: &[ContextMessage],
    read: impl Fn(&ContextMessage) -> Result<T> + Sync + Send,
) -> Result<Vec<T>> {
    if messages.len() < PARALLEL_MESSAGES {
        return messages.iter().map(read).collect();
    }
    let results: Vec<Result<T>> = messages.par_iter().with_min_len(8).map(&read).collect();
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use ctxkit_protocol::{MessageContent, UserMessage};

    use super::*;

    #[test]
    fn many_messages_read_at_once_match_one_by_one() {
        let mut session = Session::in_memory("/p");
        for index in 0..100 {
            let message = AgentMessage::User(UserMessage {
                content: MessageContent::Text(format!("message {index}")),
                timestamp: Some(index),
                extra: Default::default(),
            });
            session.append_message(message).unwrap();
        }
        let context = session.build_context();
        assert_eq!(context.messages.len(), 100);
        let one_by_one: Vec<Value> = context
            .messages
            .iter()
            .map(|message| session.message_value(message).unwrap())
            .collect();
        assert_eq!(
            session.message_values(&context.messages).unwrap(),
            one_by_one
        );
        let typed = session.messages(&context.messages).unwrap();
        assert_eq!(typed.len(), 100);
        assert_eq!(session.messages(&context.messages[..3]).unwrap().len(), 3);
    }
}

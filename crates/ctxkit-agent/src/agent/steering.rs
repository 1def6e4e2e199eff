//! Steering, as Pi's: what the user types while the agent works reaches the model after the
//! tool batch running now, before the next model call, as a user message of the session, instead
//! of waiting for the run to end. A UI gives the messages through [`Steering`]; the agent asks
//! after each tool batch (and its compaction check).

use ctxkit_engine::EngineError;
use ctxkit_protocol::{AgentMessage, ContentBlock, JsonObject, MessageContent, UserMessage};

use super::{Agent, AgentEvent, AgentObserver, now_ms};

/// Where an agent finds messages typed while it works.
pub trait Steering: Send + Sync {
    /// The messages to deliver now, oldest first; none leaves the run as it is.
    fn take(&self) -> Vec<String>;
}

impl Agent {
    /// Delivers messages from `steering` from now on (none by default).
    pub fn set_steering(&mut self, steering: std::sync::Arc<dyn Steering>) {
        self.steering = Some(steering);
    }

    /// Appends the messages the user typed since the last model call, each announced to
    /// `observer` before it is stored.
    pub(super) async fn deliver_steering(
        &self,
        observer: &dyn AgentObserver,
    ) -> Result<(), EngineError> {
        let Some(steering) = &self.steering else {
            return Ok(());
        };
        for text in steering.take() {
            observer
                .event(AgentEvent::Steered { text: text.clone() })
                .await;
            let message = AgentMessage::User(UserMessage {
                content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
                timestamp: Some(now_ms()),
                extra: JsonObject::new(),
            });
            self.engine.append(message).await?;
        }
        Ok(())
    }
}

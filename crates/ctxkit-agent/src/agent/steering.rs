//! Steering, as Pi's: what the user types while the agent works reaches the model after the
//! tool batch running now, before the next model call, as a user message of the session, instead
//! of waiting for the run to end. A UI gives the messages through [`Steering`]; the agent asks
//! when a run starts, after each tool batch (and its compaction check), and when the model stops:
//! a message typed during the last reply goes on with the run, as Pi's agent loop does.

use ctxkit_engine::EngineError;
use ctxkit_protocol::{AgentMessage, ContentBlock, JsonObject, MessageContent, UserMessage};

use super::{Agent, AgentEvent, AgentObserver, now_ms};

/// Where an agent finds messages typed while it works.
pub trait Steering: Send + Sync {
    /// The messages to deliver now, oldest first; none leaves the run as it is.
    fn take(&self) -> Vec<String>;

    /// The follow-ups to deliver now that the model has stopped and no steering is left (Pi's
    /// `followUp`: they wait for the run's end instead of the next request); none by default.
    fn take_follow_ups(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Agent {
    /// Delivers messages from `steering` from now on (none by default).
    pub fn set_steering(&mut self, steering: std::sync::Arc<dyn Steering>) {
        self.steering = Some(steering);
    }

    /// Appends the messages the user typed since the last model call, each announced to
    /// `observer` before it is stored; whether there were any.
    pub(super) async fn deliver_steering(
        &self,
        observer: &dyn AgentObserver,
    ) -> Result<bool, EngineError> {
        let Some(steering) = &self.steering else {
            return Ok(false);
        };
        self.deliver(steering.take(), false, observer).await
    }

    /// When the model has stopped: the steering left, else the follow-ups; whether there were any.
    pub(super) async fn deliver_at_stop(
        &self,
        observer: &dyn AgentObserver,
    ) -> Result<bool, EngineError> {
        if self.deliver_steering(observer).await? {
            return Ok(true);
        }
        let Some(steering) = &self.steering else {
            return Ok(false);
        };
        self.deliver(steering.take_follow_ups(), true, observer)
            .await
    }

    /// Appends `messages` as user messages, each announced first; whether there were any. A blank
    /// message is dropped: a provider refuses an empty text block, as [`Agent::prompt`] does.
    async fn deliver(
        &self,
        messages: Vec<String>,
        follow_up: bool,
        observer: &dyn AgentObserver,
    ) -> Result<bool, EngineError> {
        let messages: Vec<String> = messages
            .into_iter()
            .filter(|text| !text.trim().is_empty())
            .collect();
        let delivered = !messages.is_empty();
        for text in messages {
            observer
                .event(AgentEvent::Steered {
                    text: text.clone(),
                    follow_up,
                })
                .await;
            let message = AgentMessage::User(UserMessage {
                content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
                timestamp: Some(now_ms()),
                extra: JsonObject::new(),
            });
            self.engine.append(message).await?;
        }
        Ok(delivered)
    }
}

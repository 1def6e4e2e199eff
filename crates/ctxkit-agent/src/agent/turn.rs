//! A prompt and the turns it runs: `before_prompt` → the prompt's output room → append the user
//! message → turns of { model view → model → append the reply → approve and run its tool calls →
//! append their results → `after_tool_batch` } → `after_run`, and again without a new user message
//! while the engine says `retry`.

use ctxkit_engine::EngineError;
use ctxkit_protocol::{AgentMessage, ContentBlock, JsonObject, MessageContent, UserMessage};
use tokio_util::sync::CancellationToken;

use super::model_call::{self, RoomCheck};
use super::no_room::NoRoomCause;
use super::{Agent, AgentEvent, AgentObserver, PromptOutcome, now_ms, prompt_room, tool_calls};
use crate::approve::Approver;

/// How one turn ended.
pub(super) enum TurnEnd {
    /// The model stopped without calling tools.
    Stopped,
    Interrupted,
    /// The last reply was an error (maybe an overflow, which `after_run` recovers).
    Error(String),
    /// The user cancelled the compaction between two model calls and stopped the run too: it
    /// stops without another check (which would compact again).
    CompactionCancelled,
    /// The next request does not fit without the compaction that was cancelled, failed or found
    /// nothing to compact: the run stops without another check; the reason.
    DoesNotFit(String),
}

impl Agent {
    /// Records the model and thinking level this prompt talks to the session with, where the
    /// session lacks them, as Pi 1.6.0 records them when it starts an agent on a session
    /// (`Engine::record_starting_settings`: a new session's first entries, or the level alone for
    /// one with messages and none): another agent continuing the file talks to it as this one
    /// did. The level is the engine's (`/thinking`'s name), `off` when the model is asked for none.
    async fn record_starting_settings(&self) -> Result<(), EngineError> {
        let level = match self.options.reasoning {
            None => "off".to_owned(),
            Some(reasoning) => self
                .engine
                .thinking_level()
                .await
                .unwrap_or_else(|| reasoning.as_str().to_owned()),
        };
        self.engine.record_starting_settings(&level).await?;
        Ok(())
    }

    /// Sends one user prompt and runs the agent until the model ends its turn.
    pub async fn prompt(
        &mut self,
        text: String,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<PromptOutcome, EngineError> {
        self.prompt_content(vec![ContentBlock::text(text)], approver, observer)
            .await
    }

    /// [`Self::prompt`] with a prompt of several blocks (text and images: files the user
    /// attached). A prompt not sent gives back the text of its text blocks. A prompt with no
    /// image and no text but blanks is refused (`EmptyPrompt`) before anything is stored or sent.
    pub async fn prompt_content(
        &mut self,
        content: Vec<ContentBlock>,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<PromptOutcome, EngineError> {
        if is_blank(&content) {
            return Err(EngineError::EmptyPrompt);
        }
        // A new prompt ends the warming between runs: its own requests start their own.
        if let Some(warmer) = &self.warmer {
            warmer.cancel();
        }
        // A turn from the start: the user's interrupt while the compaction before the prompt is
        // being cancelled (Esc twice) stops the prompt too.
        let guard = self.engine.begin_turn();
        self.record_starting_settings().await?;
        let report = self.engine.before_prompt().await?;
        let aborted = report.compaction.as_ref().is_some_and(|end| end.aborted);
        observer.event(AgentEvent::Checked(report)).await;
        let text: Vec<&str> = content.iter().filter_map(ContentBlock::as_text).collect();
        let text = text.join("\n");
        let message = AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(content),
            timestamp: Some(now_ms()),
            extra: JsonObject::new(),
        });
        let goes = self
            .prompt_goes(&message, aborted, &guard.cancel_token(), observer)
            .await?;
        drop(guard);
        match goes {
            prompt_room::PromptGoes::Out => {}
            prompt_room::PromptGoes::NotSent => return Ok(PromptOutcome::NotSent(text)),
        }
        self.engine.append(message).await?;
        // The first request's output room was checked with the prompt.
        self.run_turns(approver, observer, true).await
    }

    /// Runs turns on the session as it is (after a user message, or to continue after an
    /// interruption) until the model ends its turn or the engine gives up.
    pub async fn run(
        &mut self,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<PromptOutcome, EngineError> {
        self.run_turns(approver, observer, false).await
    }

    /// [`Self::run`]; `room_checked` when its first request's output room was checked already
    /// (with the prompt, before it was stored).
    async fn run_turns(
        &mut self,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
        mut room_checked: bool,
    ) -> Result<PromptOutcome, EngineError> {
        loop {
            let guard = self.engine.begin_turn();
            let cancel = guard.cancel_token();
            let end = self.turn(&cancel, room_checked, approver, observer).await;
            room_checked = false;
            drop(guard);
            if let Some(warmer) = &self.warmer {
                warmer.settled();
            }
            let end = end?;
            match end {
                TurnEnd::CompactionCancelled => return Ok(PromptOutcome::Interrupted),
                TurnEnd::DoesNotFit(reason) => return Ok(PromptOutcome::Failed(reason)),
                TurnEnd::Stopped | TurnEnd::Interrupted | TurnEnd::Error(_) => {}
            }
            let report = self.engine.after_run().await?;
            let retry = report.retry;
            let cancelled = report.compaction.as_ref().is_some_and(|end| end.aborted);
            let failure = report
                .compaction
                .as_ref()
                .and_then(|end| end.error.clone())
                .filter(|_| !retry);
            observer.event(AgentEvent::Checked(report)).await;
            if retry {
                observer.event(AgentEvent::Retry).await;
                continue;
            }
            return Ok(match end {
                // A cancelled compaction after the answer leaves the answer as it was.
                TurnEnd::Stopped => PromptOutcome::Answered,
                TurnEnd::Interrupted => PromptOutcome::Interrupted,
                // The user cancelled the compaction that would have let the turn go on.
                TurnEnd::Error(_) if cancelled => PromptOutcome::Interrupted,
                TurnEnd::Error(error) => PromptOutcome::Failed(failure.unwrap_or(error)),
                TurnEnd::CompactionCancelled => PromptOutcome::Interrupted,
                TurnEnd::DoesNotFit(reason) => PromptOutcome::Failed(reason),
            });
        }
    }

    /// Model calls and tool runs until the model stops calling tools or the user interrupts.
    async fn turn(
        &mut self,
        cancel: &CancellationToken,
        room_checked: bool,
        approver: &mut dyn Approver,
        observer: &dyn AgentObserver,
    ) -> Result<TurnEnd, EngineError> {
        // What was sent before the run started goes with its first request.
        self.deliver_steering(observer).await?;
        // Whether the request about to be built already had a compaction for its output room.
        let mut made_room = room_checked;
        loop {
            let request = self.build_request().await?;
            // A request whose reply would get less room than its floor compacts first (once). The
            // request (the whole view) is let go before the compaction runs, which reads the same
            // messages from the session: a view of a million messages is not held beside it.
            if !made_room {
                made_room = true;
                if let Some(tokens) = self.output_shortfall(&request) {
                    drop(request);
                    match self.make_output_room(tokens, observer).await? {
                        RoomCheck::Cancelled => {
                            if let Some(end) = self.go_on_uncompacted(cancel, observer).await? {
                                return Ok(end);
                            }
                            continue;
                        }
                        // Sent only when the reply now gets its floor (the compacted view is
                        // built again, and not compacted a second time); else the run stops.
                        RoomCheck::Compacted => {
                            let cause = NoRoomCause::CompactedTooLittle;
                            if let Some(stop) = self.without_room(cause, &[], observer).await? {
                                return Ok(TurnEnd::DoesNotFit(stop.reason()));
                            }
                            continue;
                        }
                        RoomCheck::NotCompacted(cause) => {
                            if let Some(stop) = self.without_room(cause, &[], observer).await? {
                                return Ok(TurnEnd::DoesNotFit(stop.reason()));
                            }
                            continue;
                        }
                    }
                }
            }
            made_room = false;
            observer.event(AgentEvent::ModelCall).await;
            if let Some(warmer) = &self.warmer {
                let leaf = self
                    .engine
                    .with_session(|session| session.leaf_id().map(str::to_owned))
                    .await;
                warmer.start(&self.engine, &self.model, &request, leaf);
            }
            let started = std::time::Instant::now();
            let mut reply = self.call_model(&request, cancel, observer).await;
            self.call_ids.make_unique(&self.engine, &mut reply).await;
            tracing::debug!(
                messages = request.messages.len(),
                stop_reason = reply.stop_reason.as_deref().unwrap_or(""),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "model call"
            );
            model_call::log_provider_context_changes(&reply);
            let overflow = ctxkit_engine::overflowed(&reply, &self.model.info());
            // Before the reply is appended: the engine notes where the session stood.
            self.record_request(request).await;
            let calls = tool_calls::calls_of(&reply);
            let asks_for_tools = reply.asks_for_tools();
            let stop_reason = reply.stop_reason.clone();
            let error = reply.error_message.clone();
            observer
                .event(AgentEvent::Reply {
                    reply: reply.clone(),
                    overflow,
                })
                .await;
            self.engine.append(AgentMessage::Assistant(reply)).await?;
            match stop_reason.as_deref() {
                Some("aborted") => return Ok(TurnEnd::Interrupted),
                Some("error") => {
                    return Ok(TurnEnd::Error(
                        error.unwrap_or_else(|| "The model request failed".to_owned()),
                    ));
                }
                Some(_) | None => {}
            }
            if cancel.is_cancelled() {
                return Ok(TurnEnd::Interrupted);
            }
            if !asks_for_tools {
                // What was typed during the reply, then the follow-ups, go on with the run.
                if self.deliver_at_stop(observer).await? {
                    continue;
                }
                return Ok(TurnEnd::Stopped);
            }
            self.run_batch(calls, cancel, approver, observer).await?;
            // An interrupted batch ends the run: no check before a model call that will not come.
            if cancel.is_cancelled() {
                return Ok(TurnEnd::Interrupted);
            }
            // The next model call carries the results: compact first when they push the context
            // over the threshold (a failed compaction is reported and the run goes on).
            let report = self.engine.after_tool_batch().await?;
            let cancelled = report.compaction.as_ref().is_some_and(|end| end.aborted);
            observer.event(AgentEvent::Checked(report)).await;
            if cancelled {
                if let Some(end) = self.go_on_uncompacted(cancel, observer).await? {
                    return Ok(end);
                }
                // The request goes out as it is: no compaction for its output room either.
                made_room = true;
            }
            self.deliver_steering(observer).await?;
        }
    }
}

/// Whether a prompt holds nothing to send: no image, and no text but blanks.
fn is_blank(content: &[ContentBlock]) -> bool {
    content
        .iter()
        .all(|block| block.as_text().is_some_and(|text| text.trim().is_empty()))
}

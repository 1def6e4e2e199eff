//! The agent loop, as the engine asks: `before_prompt` → append the user message → loop { view →
//! model → append the reply → run its tool calls → append their results } → `after_run`, and again
//! (without a new user message) when the engine recovered an overflow and says `retry`.

use anyhow::Result;
use ctxkit_llm::{ChatRequest, is_context_overflow};
use ctxkit_protocol::{
    AgentMessage, ContentBlock, JsonObject, MessageContent, ToolCall, ToolResultMessage,
    UserMessage,
};
use tokio_util::sync::CancellationToken;

use super::Chat;
use super::tools::{ToolContext, ToolOutcome, run_tool};

/// Asks the user a question at the terminal; `None` when they pressed Ctrl-C or Ctrl-D.
pub trait Ask {
    fn ask(&mut self, prompt: &str) -> Option<String>;
}

/// How a prompt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptEnd {
    /// The model answered (or the turn was interrupted).
    Done,
    /// The compaction before the prompt was cancelled, so the prompt was not sent: its text goes
    /// back to the input line.
    NotSent(String),
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

impl Chat {
    /// Sends one user prompt and runs the agent until the model stops.
    pub async fn prompt(&mut self, text: String, ask: &mut dyn Ask) -> Result<PromptEnd> {
        let report = self.engine.before_prompt().await?;
        self.events.flush().await;
        if report.compaction.as_ref().is_some_and(|end| end.aborted) {
            self.ui
                .notice("The prompt was not sent; it is back on the input line");
            return Ok(PromptEnd::NotSent(text));
        }
        let message = AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
            timestamp: Some(now_ms()),
            extra: JsonObject::new(),
        });
        self.engine.append(message).await?;
        self.run(ask).await?;
        Ok(PromptEnd::Done)
    }

    /// Runs turns until no retry is due.
    async fn run(&mut self, ask: &mut dyn Ask) -> Result<()> {
        loop {
            let guard = self.engine.begin_turn();
            let cancel = guard.cancel_token();
            self.interrupts.set_turn(Some(cancel.clone()));
            let result = self.turn(&cancel, ask).await;
            self.interrupts.set_turn(None);
            self.ui.stop();
            drop(guard);
            result?;
            let report = self.engine.after_run().await?;
            self.events.flush().await;
            if !report.retry {
                return Ok(());
            }
        }
    }

    /// Model calls and tool runs until the model stops calling tools or the user interrupts.
    async fn turn(&mut self, cancel: &CancellationToken, ask: &mut dyn Ask) -> Result<()> {
        loop {
            let view = self.engine.model_view().await?;
            let mut system_prompt = self.system_prompt.clone();
            for text in &view.system {
                system_prompt.push_str("\n\n");
                system_prompt.push_str(text);
            }
            let request = ChatRequest {
                system_prompt,
                messages: view.messages,
                tools: self.tools.clone(),
                max_tokens: None,
                reasoning: None,
            };
            self.ui.spin("Thinking…  Esc or Ctrl-C to interrupt");
            let reply = match self.client.chat(&request, cancel).await {
                Ok(reply) => reply,
                Err(error) => self.client.failed_reply(&error),
            };
            self.ui.stop();
            let window = self.client.context_window();
            self.ui.reply(&reply, is_context_overflow(&reply, window));
            let calls: Vec<ToolCall> = reply
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::ToolCall(call) => Some(call.clone()),
                    ContentBlock::Text(_)
                    | ContentBlock::Image(_)
                    | ContentBlock::Thinking(_)
                    | ContentBlock::Unknown(_) => None,
                })
                .collect();
            let wants_tools = reply.stop_reason.as_deref() == Some("toolUse") && !calls.is_empty();
            self.engine.append(AgentMessage::Assistant(reply)).await?;
            if !wants_tools {
                return Ok(());
            }
            for call in calls {
                let outcome = if cancel.is_cancelled() {
                    ToolOutcome::error("Not run: the user interrupted the turn")
                } else {
                    self.run_call(&call, cancel, ask).await
                };
                self.ui.tool_result(&outcome);
                let result = ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: MessageContent::Blocks(vec![ContentBlock::text(outcome.text)]),
                    details: outcome.details,
                    is_error: outcome.is_error,
                    timestamp: Some(now_ms()),
                    extra: JsonObject::new(),
                };
                self.engine.append(AgentMessage::ToolResult(result)).await?;
            }
            if cancel.is_cancelled() {
                self.ui.notice("Interrupted");
                return Ok(());
            }
        }
    }

    async fn run_call(
        &mut self,
        call: &ToolCall,
        cancel: &CancellationToken,
        ask: &mut dyn Ask,
    ) -> ToolOutcome {
        if call.name == "bash" && self.confirm_bash {
            let command = call
                .arguments
                .get("command")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            let question = format!("Run `{}`? [y]es / [n]o / [a]lways: ", command.trim());
            match ask
                .ask(&question)
                .map(|answer| answer.trim().to_lowercase())
            {
                Some(answer) if answer == "y" || answer == "yes" => {}
                Some(answer) if answer == "a" || answer == "always" => self.confirm_bash = false,
                Some(_) => return ToolOutcome::error("The user declined to run this command"),
                None => {
                    cancel.cancel();
                    return ToolOutcome::error("The user declined to run this command");
                }
            }
        }
        let context = ToolContext {
            cwd: self.cwd.clone(),
            output_dir: self.output_dir().await,
            bash_timeout: self.bash_timeout,
            cancel: cancel.clone(),
        };
        let (name, arguments, id) = (call.name.clone(), call.arguments.clone(), call.id.clone());
        tokio::task::spawn_blocking(move || run_tool(&name, &arguments, &id, &context))
            .await
            .unwrap_or_else(|error| ToolOutcome::error(format!("The tool failed: {error}")))
    }
}

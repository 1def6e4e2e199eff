//! The terminal side of the agent loop (`ctxkit_agent::Agent`): its events rendered by the UI, and
//! approvals asked at the input line.

use anyhow::Result;
use ctxkit_agent::{AgentEvent, AgentObserver, Approval, Approver, PromptOutcome};
use futures::future::BoxFuture;

use super::Chat;
use super::file_checkpoints::FileCheckpoints;
use super::session_file::FileCheck;
use super::ui::{EventView, Ui};

/// Asks the user a question at the terminal; `None` when they pressed Ctrl-C or Ctrl-D.
pub trait Ask: Send {
    fn ask(&mut self, prompt: &str) -> Option<String>;

    /// Whether anybody is there to answer: false in print mode, where nothing that needs asking
    /// runs, as in a chat whose input is not a terminal.
    fn can_be_asked(&self) -> bool {
        true
    }

    /// Asks for a secret (an API key): typed without echo where the terminal allows, never kept
    /// in the input line's history; `None` for Ctrl-C or Ctrl-D. By default, a typed line.
    fn ask_secret(&mut self, prompt: &str) -> Option<String> {
        self.ask(prompt)
    }

    /// Asks for one key among `keys` (an upper-case one is what Enter answers), answered without
    /// Enter where the terminal allows, lower-cased; `None` for Ctrl-C or Ctrl-D. By default, the
    /// first letter of a typed line.
    fn ask_key(&mut self, prompt: &str, keys: &str) -> Option<char> {
        loop {
            let answer = self.ask(prompt)?;
            if let Some(key) = super::key_question::key_of_line(&answer, keys) {
                return Some(key);
            }
        }
    }
}

/// How a prompt ended, for the input loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptEnd {
    /// The model answered.
    Done,
    /// The user interrupted the run (Ctrl-C, Esc): during the reply, a tool, or the compaction it
    /// could not go on without. What was done so far is recorded.
    Interrupted,
    /// The compaction before the prompt was cancelled, so the prompt was not sent: its text goes
    /// back to the input line.
    NotSent(String),
    /// The turn ended without an answer (a provider error, an overflow compaction could not fix),
    /// said on screen; the reason as the reply stored it.
    Failed(String),
}

/// Renders the loop's events: the spinner while the model works, replies, tool results, and the
/// engine's events (compactions) in order with them.
struct Terminal<'a> {
    ui: &'a Ui,
    events: &'a EventView,
    /// Snapshots of the files `write` and `edit` replace, for rewinds.
    checkpoints: &'a FileCheckpoints,
    engine: &'a ctxkit_engine::Engine,
    /// The calls of the reply being run, and the one started last.
    batch: std::sync::Mutex<Batch>,
}

/// A reply's tool calls as the terminal runs them: with more than one, each result is shown
/// under its call's line again, as the reply lists them all before any runs.
#[derive(Debug, Default)]
struct Batch {
    calls: usize,
    started: Option<String>,
}

impl Terminal<'_> {
    /// Names `call` above its result when it is one of several; `starting` is false for a call
    /// ended without starting (the turn was interrupted before it).
    fn name_in_batch(&self, call: &ctxkit_protocol::ToolCall, starting: bool) {
        let Ok(mut batch) = self.batch.lock() else {
            return;
        };
        let named = batch.started.as_deref() == Some(call.id.as_str());
        if starting {
            batch.started = Some(call.id.clone());
        }
        if batch.calls > 1 && !named {
            self.ui.batch_call(call);
        }
    }
}

impl AgentObserver for Terminal<'_> {
    fn event<'a>(&'a self, event: AgentEvent) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            // What the provider layer learned and says once (a beta the endpoint refused) comes
            // before the event that follows it: a refusal is resent before its reply streams.
            for notice in ctxkit_llm::take_notices() {
                self.ui.notice(&format!("note: {notice}"));
            }
            match event {
                AgentEvent::Checked(_) | AgentEvent::Retry => self.events.flush().await,
                AgentEvent::ModelCall => {
                    self.ui.start_reply();
                    self.ui.spin("Thinking…  Esc or Ctrl-C to interrupt");
                }
                AgentEvent::Delta(delta) => self.ui.delta(&delta),
                AgentEvent::ProviderRetry(notice) => {
                    if notice.restarted {
                        self.ui.restart_reply();
                    }
                    self.ui.spin_for(
                        &format!("{}  Esc or Ctrl-C to interrupt", notice.describe()),
                        notice.delay,
                        format!(
                            "Thinking… (retry {} of {})  Esc or Ctrl-C to interrupt",
                            notice.attempt, notice.max_retries
                        ),
                    );
                }
                AgentEvent::Reply { reply, overflow } => {
                    self.ui.stop();
                    self.ui.finish_stream();
                    // Compaction events emitted by the append (context usage) come first.
                    self.events.flush().await;
                    if let Ok(mut batch) = self.batch.lock() {
                        let calls = reply
                            .content
                            .iter()
                            .filter_map(|block| block.as_tool_call());
                        *batch = Batch {
                            calls: if reply.asks_for_tools() {
                                calls.count()
                            } else {
                                0
                            },
                            started: None,
                        };
                    }
                    self.ui.reply(&reply, overflow);
                }
                // While a tool runs, Esc interrupts it and keys typed meanwhile are kept for the
                // next input line (the approval question, if any, takes the keyboard for itself).
                AgentEvent::ToolStart { call } => {
                    self.name_in_batch(&call, true);
                    if let Some(notice) = self.checkpoints.before(self.engine, &call).await {
                        self.ui.notice(&notice);
                    }
                    self.ui.spin(&tool_spinner(&call.name));
                }
                AgentEvent::ToolOutput { output, .. } => self.ui.tool_output(&output),
                AgentEvent::ToolEnd { call, outcome } => {
                    self.ui.stop();
                    self.name_in_batch(&call, false);
                    if let Some(notice) = self.checkpoints.after(&call, &outcome) {
                        self.ui.notice(&notice);
                    }
                    // A call nobody could approve was reported when it could not be asked
                    // (`NOT_ASKED`, with the ways to let it run); its result says it again.
                    if !outcome.is_unanswered() {
                        self.ui
                            .tool_result(&outcome, &super::ui::result_shape(&call));
                    }
                }
                // A line typed while the agent worked goes with the next model request.
                AgentEvent::Steered { text, .. } => {
                    self.ui.line(&format!("> {text}"));
                }
                AgentEvent::CompactionCancelled(next) => self.ui.after_cancelled_compaction(&next),
                AgentEvent::NoOutputRoom(stop) => self.ui.no_output_room(&stop),
            }
        })
    }
}

/// Lines typed with Enter while the agent works steer it (`steeringMode`: the first line after
/// each tool batch, or `all` of them).
pub(super) struct TypedAhead {
    pub ui: Ui,
    pub all: bool,
}

impl ctxkit_agent::Steering for TypedAhead {
    fn take(&self) -> Vec<String> {
        self.ui.take_steering(self.all)
    }
}

/// The spinner line while a tool runs.
fn tool_spinner(tool: &str) -> String {
    format!("Running {tool}…  Esc or Ctrl-C to interrupt")
}

/// What a piped chat, or one in print mode, says instead of asking.
const NOT_ASKED: &str = "Not run: the chat's input is not a terminal, or it runs in print mode, \
so nobody can be asked (--yes or `chat.confirmBash: false` runs commands without asking; `chat.readablePaths` lists \
paths read without asking; a write into a guarded place, such as `.git` or another agent's settings, is only ever \
made with an answer at the terminal)";

/// [`NOT_ASKED`] once said, what a later call nobody can approve says.
const NOT_ASKED_AGAIN: &str = "Not run: nobody can be asked (as above)";

/// Whether [`NOT_ASKED`] was said (a chat is one process).
static TOLD_NOT_ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks at the input line: `[y]es / [n]o / [a]lways`, one key; Ctrl-C or Ctrl-D stops the turn.
/// The spinner (and its watch of the keyboard) stops while the question waits for its key.
struct AskApprover<'a> {
    ask: &'a mut dyn Ask,
    ui: &'a Ui,
}

impl AskApprover<'_> {
    /// `question` with the keys to answer it; `a` is remembered for the rest of the chat.
    /// Asks with one key, the spinner and its key watch stopped meanwhile; an approved call runs
    /// under `tool`'s spinner again.
    fn ask_once_or_always(&mut self, tool: &str, question: &str, always: &str) -> Approval {
        // The question quotes the model's command or path: shown, never obeyed.
        let shown = super::question::shown_question(question);
        self.ui.stop();
        // A piped chat's input is its prompts: an answer read from it would be the next prompt
        // (one starting with `y` approved the command, and the prompt was lost). Nobody is there
        // to ask, so nothing that needs asking runs.
        if !self.ask.can_be_asked() || !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            // The ways to let a call run, said once; each later call left unrun, in a line (QA
            // 2026-12-07: three `bash` calls printed the whole notice three times).
            let told = TOLD_NOT_ASKED.swap(true, std::sync::atomic::Ordering::Relaxed);
            let notice = if told { NOT_ASKED_AGAIN } else { NOT_ASKED };
            self.ui.notice(&format!("{shown} {notice}"));
            return Approval::Unanswered;
        }
        // The keys of a question of several lines on a line of their own, outside the margin.
        let keys = if shown.contains('\n') { "\n" } else { " " };
        let question = format!("{shown}{keys}[y]es / [n]o / [a]lways: ");
        let approval = match self.ask.ask_key(&question, "yna") {
            Some('y') => Approval::Once,
            Some('a') => Approval::Always,
            Some(_) => Approval::Deny,
            None => Approval::Stop,
        };
        // What "always" covers, said when it is chosen (QA 2026-12-07: `a` to one `git status`
        // ran the model's next `touch` unasked, and the answer's echo said only "always").
        if approval == Approval::Always {
            self.ui.notice(always);
        }
        match approval {
            Approval::Once | Approval::Always => self.ui.spin(&tool_spinner(tool)),
            Approval::Deny | Approval::Stop | Approval::Unanswered => {}
        }
        approval
    }
}

impl Approver for AskApprover<'_> {
    fn approve<'a>(&'a mut self, tool: &'a str, question: &'a str) -> BoxFuture<'a, Approval> {
        let always =
            format!("Every later `{tool}` call runs without asking, for the rest of this chat");
        let answer = self.ask_once_or_always(tool, question, &always);
        Box::pin(async move { answer })
    }

    /// The same one-key question for a path outside the project (`a`: every later access of the
    /// same kind, reading or writing, under the folder the question names, by any tool, in this
    /// chat; the question starts with its verb, "Read" or "Write").
    fn approve_outside<'a>(
        &'a mut self,
        tool: &'a str,
        question: &'a str,
    ) -> BoxFuture<'a, Approval> {
        let kind = if question.starts_with("Write") {
            "writing"
        } else {
            "reading"
        };
        let always = format!(
            "Every later call {kind} under the folder named goes on without asking, for the rest \
             of this chat (the other kind still asks)"
        );
        let answer = self.ask_once_or_always(tool, &format!("`{tool}`: {question}"), &always);
        Box::pin(async move { answer })
    }

    /// The same one-key question for a guarded place of the project (`a`: every later write of
    /// what the question's "always" names, by any tool; QA: it said every later call of the tool).
    fn approve_guarded<'a>(
        &'a mut self,
        tool: &'a str,
        question: &'a str,
    ) -> BoxFuture<'a, Approval> {
        let always = "Every later write of what \"always\" names above goes on without asking, for \
                      the rest of this chat";
        let answer = self.ask_once_or_always(tool, question, always);
        Box::pin(async move { answer })
    }
}

impl Chat {
    /// Sends one user prompt, the files its `@path` words name attached, and runs the agent until
    /// the model stops.
    pub async fn prompt(&mut self, text: String, ask: &mut dyn Ask) -> Result<PromptEnd> {
        let attached = super::attach::attach(
            &text,
            self.agent.workspace(),
            &self.cwd,
            self.agent.options().auto_resize_images,
        );
        self.prompt_attached(text, attached, ask).await
    }

    /// Sends `attached` as one user prompt (`text`, as typed, goes back to the input line when it
    /// is not sent) and runs the agent until the model stops.
    pub async fn prompt_attached(
        &mut self,
        text: String,
        attached: super::attach::Attached,
        ask: &mut dyn Ask,
    ) -> Result<PromptEnd> {
        // Never send a prompt while the database session is known to be another writer's.
        let store = self
            .check_store(super::store_health::Look::AfterACommit)
            .await;
        if store == super::store_health::StoreCheck::Lost {
            return Ok(PromptEnd::NotSent(text));
        }
        // Never append onto a session file another program deleted or rewrote.
        match self.check_session_file(ask).await? {
            FileCheck::Usable => {}
            FileCheck::Changed => return Ok(PromptEnd::NotSent(text)),
        }
        self.follow_session().await;
        let terminal = Terminal {
            ui: &self.ui,
            events: &self.events,
            checkpoints: &self.checkpoints,
            engine: &self.engine,
            batch: std::sync::Mutex::default(),
        };
        let mut approver = AskApprover { ask, ui: &self.ui };
        let entries_before = self
            .engine
            .with_session(|session| session.entries().len())
            .await;
        for note in &attached.notes {
            self.ui.info(note);
        }
        let has_image = attached
            .content
            .iter()
            .any(|block| matches!(block, ctxkit_protocol::ContentBlock::Image(_)));
        if has_image && self.client.config().leaves_images_out() {
            self.ui.notice(&format!(
                "{} takes text only: the model is told an image was left out \
                 (list \"image\" in its `llm.models[].input` if it reads images)",
                self.client.config().display_name()
            ));
        }
        let working = self.ui.working();
        let outcome = self
            .agent
            .prompt_content(attached.content, &mut approver, &terminal)
            .await;
        drop(working);
        self.ui.stop();
        self.show_custom_messages_since(entries_before).await;
        match outcome? {
            // An interruption shows with the reply or tool result it cut short.
            PromptOutcome::Answered => {}
            PromptOutcome::Interrupted => return Ok(PromptEnd::Interrupted),
            PromptOutcome::NotSent(_) => {
                // Print mode has no input line: its run ends with the reason (`PromptNotSent`).
                if self.ui.has_input_line() {
                    self.ui
                        .notice("The prompt was not sent; it is back on the input line");
                }
                return Ok(PromptEnd::NotSent(text));
            }
            // The reply or the compaction already said why on screen.
            PromptOutcome::Failed(reason) => return Ok(PromptEnd::Failed(reason)),
        }
        Ok(PromptEnd::Done)
    }

    /// The `custom_message` entries appended since the session had `count` entries (hooks',
    /// extensions'), each shown when its `display` flag asks for it.
    async fn show_custom_messages_since(&self, count: usize) {
        let appended: Vec<_> = self
            .engine
            .with_session(|session| {
                session
                    .entries()
                    .iter()
                    .skip(count)
                    .filter(|entry| entry.type_name() == "custom_message")
                    .filter_map(|entry| entry.parse().ok())
                    .collect()
            })
            .await;
        for entry in appended {
            if let ctxkit_protocol::EntryKind::CustomMessage(custom) = entry.kind {
                super::notes::show_custom(
                    &self.ui,
                    &custom.custom_type,
                    &custom.content,
                    custom.display,
                );
            }
        }
    }
}

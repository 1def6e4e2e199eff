//! Print mode (Pi's `-p`, and what a chat whose input is piped does): one prompt made of the
//! piped input, the `@file` arguments and the first message, the agent run to its end, the final
//! answer printed on stdout. Nothing read from the pipe is run as a `!command` or taken as a
//! `/command`, and nothing that needs asking runs (nobody is there to answer).

use std::io::{IsTerminal as _, Read as _, Write as _};

use anyhow::{Context as _, Result};
use tokio::runtime::Runtime;

use super::Chat;
use super::agent::{Ask, PromptEnd};
use super::attach::Attached;
use super::session_file::Remember;
use crate::Outcome;
use crate::cli::ChatArgs;

/// How a chat reads its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatMode {
    /// Typed at a terminal: the input line.
    Interactive,
    /// `--script`: standard input read as lines typed at the input line, `!` and `/` included.
    Script,
    /// `-p`, or standard input not a terminal: one prompt, the final answer printed.
    Print,
}

impl ChatMode {
    /// The mode `args` ask for: `--script` and `-p` say it; else a terminal on standard input
    /// is the input line and anything else print mode, as Pi switches to print mode for piped input.
    pub fn of(args: &ChatArgs) -> Self {
        if args.script {
            Self::Script
        } else if args.print || !std::io::stdin().is_terminal() {
            Self::Print
        } else {
            Self::Interactive
        }
    }
}

/// A prompt the chat starts with, from the command line (and the pipe, in print mode).
pub struct StartingPrompt {
    /// What goes back to the input line if it is not sent, and what the screen echoes.
    pub shown: String,
    pub attached: Attached,
}

/// Standard input read whole, trimmed, as Pi reads piped input (`None` when nothing but blanks
/// came); not read when it is a terminal.
pub fn read_piped() -> Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("cannot read the chat's standard input")?;
    let text = String::from_utf8_lossy(&bytes);
    let trimmed = text.trim();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}

/// The message arguments split as Pi splits them: `@file` arguments, and the texts.
fn split_messages(messages: &[String]) -> (Vec<&str>, Vec<&str>) {
    let mut files = Vec::new();
    let mut texts = Vec::new();
    for message in messages {
        match message.strip_prefix('@') {
            Some(file) if !file.is_empty() => files.push(file),
            Some(_) | None => texts.push(message.as_str()),
        }
    }
    (files, texts)
}

/// The prompts the chat starts with: the piped input, the files and the first text message joined
/// in Pi's order, the piped input followed by a blank line (Pi puts nothing between, and a diff's
/// last line ran into the request: `…}review this`), then each further text message on its own. Their text is sent as it is: an `@path` or `/name` inside it is text. A file that cannot be
/// attached stops the chat before anything is sent.
pub fn starting_prompts(
    chat: &Chat,
    piped: Option<String>,
    messages: &[String],
) -> Result<Vec<StartingPrompt>> {
    let (files, texts) = split_messages(messages);
    let mut texts = texts.into_iter();
    let first_text = texts.next();
    let mut prompts = Vec::new();
    if piped.is_some() || !files.is_empty() || first_text.is_some() {
        // Piped input is a file's text as an `@file` is, redacted the same way: `cat .env | ctxkit
        // chat -p "why does it fail"` sends no key the redactor knows.
        let mut before = piped
            .map(|text| chat.agent.workspace().redact(&text))
            .unwrap_or_default();
        if !before.is_empty() && (!files.is_empty() || first_text.is_some()) {
            before.push_str("\n\n");
        }
        let after = first_text.unwrap_or_default();
        let (attached, refused) = super::attach::attach_files(
            &files,
            (&before, after),
            chat.agent.workspace(),
            &chat.cwd,
            chat.agent.options().auto_resize_images,
        );
        if let Some(refusal) = refused.first() {
            return Err(crate::usage::UsageError {
                message: format!("Not attached: {refusal}"),
                hint: "an `@file` argument names a file of the project (or one of \
                       `chat.readablePaths`)"
                    .to_owned(),
            }
            .into());
        }
        prompts.push(StartingPrompt {
            shown: format!("{before}{after}"),
            attached,
        });
    }
    for text in texts {
        prompts.push(StartingPrompt {
            shown: text.to_owned(),
            attached: Attached {
                content: vec![ctxkit_protocol::ContentBlock::text(text)],
                notes: Vec::new(),
            },
        });
    }
    Ok(prompts)
}

/// Print mode has nobody to ask: a `bash` call runs only under `--yes` or
/// `chat.confirmBash: false`, a question about a session file is left unanswered.
struct NobodyToAsk;

impl Ask for NobodyToAsk {
    fn ask(&mut self, _prompt: &str) -> Option<String> {
        None
    }

    fn can_be_asked(&self) -> bool {
        false
    }
}

/// Print mode with nothing to send: a usage error (Pi exits quietly, which reads as a hang that
/// ended).
pub fn nothing_to_send() -> anyhow::Error {
    crate::usage::UsageError {
        message: "Nothing to send: print mode sends the piped input and the MESSAGE arguments, \
                  and there were none"
            .to_owned(),
        hint: "give the prompt: `ctxkit chat -p \"review this\"`, `cat notes.md | ctxkit chat`; \
               `ctxkit chat --script < prompts.txt` reads lines as typed at the input line"
            .to_owned(),
    }
    .into()
}

/// How print mode's prompts ended, for its exit status.
enum RunEnd {
    /// Every prompt was sent and run to its end; why the last one's model request failed, if it
    /// did.
    Ran { last_failure: Option<String> },
    /// The user interrupted a prompt (its reply, a tool, the compaction before it): the prompts
    /// after it are not sent.
    Interrupted,
    /// A prompt was not sent and the user did not stop it: it does not fit the model's window
    /// (the line above says why), or the session changed under the chat.
    NotSent,
}

/// A prompt print mode could not send, though nobody stopped it (exit 3, invalid input: the
/// prompt is the problem, no model request was made). What kept it back was said above.
#[derive(Debug)]
pub struct PromptNotSent;

impl std::fmt::Display for PromptNotSent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(
            "The prompt was not sent (the line above says why); nothing was asked of the model",
        )
    }
}

impl std::error::Error for PromptNotSent {}

/// Sends `prompts` one after the other, each run to its end, while the signal handler knows a
/// prompt is at work (SIGTERM, SIGHUP: the turn is interrupted and recorded before the chat ends,
/// as at the input line). The user's interrupt stops the run: no later prompt is sent.
fn send_each(runtime: &Runtime, chat: &mut Chat, prompts: Vec<StartingPrompt>) -> Result<RunEnd> {
    let mut last_failure = None;
    for prompt in prompts {
        let interrupts_before = chat.interrupts.count();
        chat.interrupts.left_input_line();
        let mut nobody = NobodyToAsk;
        let end =
            runtime.block_on(chat.prompt_attached(prompt.shown, prompt.attached, &mut nobody));
        // The prompt's turn is recorded: a signal ending the chat ends it here.
        chat.interrupts.at_input_line();
        match end? {
            PromptEnd::Done => last_failure = None,
            PromptEnd::Failed(reason) => last_failure = Some(reason),
            PromptEnd::Interrupted => return Ok(RunEnd::Interrupted),
            // The user stopped the compaction the prompt needed.
            PromptEnd::NotSent(_) if chat.interrupts.count() != interrupts_before => {
                return Ok(RunEnd::Interrupted);
            }
            PromptEnd::NotSent(_) => return Ok(RunEnd::NotSent),
        }
    }
    Ok(RunEnd::Ran { last_failure })
}

/// Sends `prompts` one after the other, each run to its end, then prints the final answer's text
/// on stdout. The exit status is the run's: a failed last request ends with exit 7 (its error
/// said once, as the reply failed: [`Outcome::FailedAsSaid`]), an interrupted run with 130 (the partial answer printed
/// when the interrupt cut the answer itself, nothing when it stopped a tool: the reply that
/// called it is no answer), a prompt that could not be sent with [`PromptNotSent`], a prompt the
/// session could not record with its error, as a piped chat does.
pub fn run(runtime: &Runtime, chat: &mut Chat, prompts: Vec<StartingPrompt>) -> Result<Outcome> {
    super::repl::listen_for_interrupts(runtime, chat)?;
    // The banner that says it elsewhere is not shown: a mistyped `--model` is still said, on
    // stderr, before anything is sent.
    chat.warn_of_a_near_miss();
    let end = send_each(runtime, chat, prompts);
    runtime.block_on(chat.remember_session(Remember::Always));
    let interrupted = match end? {
        // The reply's error line (and its hint) said why on stderr: said once, exit 7 as
        // `LastRequestFailed` (the failed provider).
        RunEnd::Ran {
            last_failure: Some(_),
        } => return Ok(Outcome::FailedAsSaid { code: 7 }),
        RunEnd::NotSent => return Err(PromptNotSent.into()),
        RunEnd::Ran { last_failure: None } => false,
        RunEnd::Interrupted => true,
    };
    let answer = runtime.block_on(
        chat.engine
            .with_session(|session| super::session_info::replies_newest_first(session).next()),
    );
    let answer = answer.filter(|reply| {
        let aborted = reply.stop_reason.as_deref() == Some("aborted");
        // Interrupted, only a reply the interrupt cut is the (partial) answer.
        !interrupted || aborted
    });
    if let Some(reply) = answer {
        print_answer(&reply)?;
    }
    if interrupted {
        chat.ui.notice("The answer was interrupted");
        return Ok(Outcome::Signalled { number: 2 });
    }
    Ok(Outcome::Success)
}

/// The text blocks of `reply` on stdout, one per line.
fn print_answer(reply: &ctxkit_protocol::AssistantMessage) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    for text in reply
        .content
        .iter()
        .filter_map(ctxkit_protocol::ContentBlock::as_text)
    {
        writeln!(stdout, "{text}").context("cannot write the answer")?;
    }
    stdout.flush().context("cannot write the answer")?;
    Ok(())
}

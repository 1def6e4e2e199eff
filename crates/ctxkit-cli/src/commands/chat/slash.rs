//! Slash commands of `ctxkit chat`: the session tree, compaction and its history, pins, sessions,
//! the model, and skills and prompt templates from the resource loader.

use anyhow::{Context as _, Result, bail};
use ctxkit_compaction::list_compactions;
use ctxkit_engine::{CompactionPlan, EngineError, NoCompaction};
use ctxkit_resources::{expand_prompt_template, parse_frontmatter};
use ctxkit_session::Session;
use ctxkit_tokens::estimate_tokens;

use super::Chat;
use super::agent::Ask;
use crate::commands::compaction::describe_compaction;
use crate::commands::tree_text::write_tree;
use crate::render::{counted, one_line};

/// What the input loop does after a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Continue,
    Quit,
    /// Put this text on the input line for editing.
    Edit(String),
    /// Send this text as a prompt (a skill or prompt template expanded).
    Prompt(String),
}

/// A two-column list (`/help`, `/hotkeys`) fitted to the terminal; as written elsewhere.
pub(super) fn fitted(list: &str) -> String {
    crate::cli::terminal_columns().map_or_else(
        || list.to_owned(),
        |columns| crate::render::fit_two_columns(list, columns),
    )
}

const HELP: &str = "\
Commands:
  /compact [focus]          summarize older messages now (optional focus for the summary; /c too)
  /context                  context usage and what a compaction would keep
  /cost                     what this session spent: requests, summaries, cache warming
  /compactions              the compactions on this branch
  /undo-compact             undo the last compaction (the summary stays in the tree)
  /tree                     walk the session tree: go to an entry (with or without a summary
                            of the branch left), label entries
  /tree --list              print the session tree with entry ids
  /tree <id> [--summarize] [focus]
                            continue from an entry, optionally summarizing the branch left
  /fork [id]                a new session from before a message you pick (its text back to
                            edit); with an id, from that entry
  /new                      a new session
  /resume [n | FILE]        pick one of this directory's sessions to open (n: the nth; FILE: a session file)
  /save                     write the session afresh to a new file and go on there
  /import <file>            go on in another session: a Pi or ctxkit session (copied here), a
                            Claude Code transcript or a Codex rollout (converted)
  /clone                    a new session holding this branch up to here, to go on in
  /session                  what the session is: its file, id, messages, tokens, cost
  /copy                     copy the last reply to the clipboard
  /export [file]            the session as a web page (ctxkit-session-<file>.html here by
                            default); a name ending in .jsonl copies the session file
  /share                    the session's page as a secret GitHub gist (through `gh`; asks
                            first)
  /name [text]              show or set the session's name
  /label <id> [text]        label an entry (no text: remove the label)
  /model [provider/id]      switch the model (alone: pick one of those that can be asked)
  /scoped-models            pick the models Ctrl-P steps through (s saves them as enabledModels)
  /settings                 the chat's settings in a list: Enter steps one to its next value
  /thinking [level]         show or set the thinking level (off, minimal, low, medium, high,
                            xhigh, max) for a model that reasons
  /pin <text>               keep text verbatim in context past every compaction (/pin lists
                            the pins with their ids)
  /unpin <id>               remove a pin: no compaction adds its text back
  /skill:<name> [args]      run a skill
  /<template> [args]        expand a prompt template
  @<path>                   attach a file to the prompt (Tab completes project files, fuzzy)
  /edit [text]              write the prompt in $EDITOR (Ctrl-G too); Enter sends it
  Alt-Enter or a line ending in \\ starts a new line of the same prompt
  !<command>                run a shell command; its output goes into the context (as Pi's `!`)
  !!<command>               run it without adding its output to the context
  /reload                   read the settings, AGENTS.md/CLAUDE.md, skills and prompt
                            templates again
  /trust [revoke]           show this project's settings that need trust (hooks, llm.baseUrl,
                            …) and trust them from the next /reload, or revoke that
  /login [provider]         save a provider's API key (typed without echo) in <home>/auth.json;
                            it is used at once, in place of the provider's variable
  /logout [provider]        remove a key /login saved
  /hotkeys                  the keys of the input line
  /help                     this list (Tab after / completes a command's name)
  /quit                     leave (Ctrl-D too)
A line that starts with a path (/usr/bin/python3 crashes, why?) is a prompt, not a command.
Ctrl-C interrupts the model or a tool and cancels a running compaction; Esc does too while the spinner shows.
Esc twice at an empty input line rewinds to an earlier prompt, offering to restore the files changed since.";

impl Chat {
    /// Runs a slash command. One that moved the session (`/compact`, a `/tree` move, `/fork`,
    /// `/undo-compact`, `/model`) is followed by the status line, as a prompt is (`/resume`
    /// shows it after the session's replay).
    pub async fn command(&mut self, line: &str, ask: &mut dyn Ask) -> Result<Action> {
        const MOVES: [&str; 7] = [
            "compact",
            "c",
            "tree",
            "fork",
            "clone",
            "undo-compact",
            "model",
        ];
        let name = line.trim_start_matches('/').split_whitespace().next();
        if !name.is_some_and(|name| MOVES.contains(&name)) {
            return self.run_command(line, ask).await;
        }
        let before = self.position().await;
        let action = self.run_command(line, ask).await;
        if self.position().await != before {
            self.usage_line().await;
        }
        action
    }

    async fn run_command(&mut self, line: &str, ask: &mut dyn Ask) -> Result<Action> {
        let body = line.trim_start_matches('/');
        let (name, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
        let rest = rest.trim();
        match name {
            "help" | "?" | "" => self.ui.line(&fitted(HELP)),
            "quit" | "exit" | "q" => return Ok(Action::Quit),
            "compact" | "c" => {
                let focus = (!rest.is_empty()).then(|| rest.to_owned());
                // A compaction that ran shows itself through the engine's events; one that had
                // nothing to summarize did not start and is said here.
                let working = self.ui.working();
                let compacted = self.engine.compact(focus).await;
                drop(working);
                match compacted {
                    Err(EngineError::NothingToCompact) => {
                        let why = match self.engine.plan().await {
                            Ok(CompactionPlan::Nothing(reason)) => nothing_to_compact(&reason),
                            Ok(CompactionPlan::Ready(_)) | Err(_) => {
                                "Nothing to compact yet (/context shows why)".to_owned()
                            }
                        };
                        self.ui.say(&why);
                    }
                    Err(EngineError::AlreadyCompacted) => {
                        self.ui.say("Just compacted: nothing more to compact");
                    }
                    Ok(_) | Err(_) => {}
                }
                self.events.flush().await;
            }
            "context" => self.context().await?,
            "cost" => {
                let spend = self.spend().await;
                for line in crate::commands::spend::breakdown_lines(&spend) {
                    self.ui.say(&line);
                }
            }
            "compactions" => self.compactions().await?,
            "undo-compact" => self.undo_compact().await?,
            "tree" if rest.is_empty() || rest == "--list" => {
                // At a terminal the tree is walked; `--list` (and a pipe) prints it.
                if rest.is_empty()
                    && let Some(action) = self.walk_tree(ask).await?
                {
                    return Ok(action);
                }
                let mut text = Vec::new();
                let written = self
                    .engine
                    .with_session(|session| {
                        write_tree(session, crate::cli::terminal_columns(), &mut text)
                    })
                    .await;
                written?;
                let text = String::from_utf8_lossy(&text);
                if text.trim().is_empty() {
                    self.ui.say("(empty session)");
                } else {
                    self.ui.line(text.trim_end());
                }
            }
            "tree" => return self.navigate(rest).await,
            "fork" => return self.fork(rest).await,
            "new" => {
                let session = self.new_session();
                self.install(session).await?;
                self.ui.say("New session");
            }
            "resume" => {
                self.resume(rest, ask).await?;
            }
            "save" => self.save_afresh().await?,
            "session" => self.session_info().await?,
            "copy" => self.copy_last_reply().await?,
            "clone" => self.clone_session().await?,
            "import" => self.import(rest).await?,
            "hotkeys" => self.hotkeys(),
            "reload" => self.reload().await?,
            "trust" => self.trust(rest, ask)?,
            "login" => self.login(rest, ask).await?,
            "logout" => self.logout(rest).await?,
            "export" => self.export(rest).await?,
            "share" => self.share(ask).await?,
            "name" => self.name(rest).await?,
            "label" => self.label(rest).await?,
            "model" => self.model(rest).await?,
            "scoped-models" => self.pick_scoped_models()?,
            "settings" => self.pick_settings()?,
            "thinking" => self.thinking(rest).await?,
            "pin" if rest.is_empty() => {
                let pins = self.engine.pins().await;
                if pins.is_empty() {
                    self.ui.say("No pins.");
                }
                for pin in pins {
                    self.ui
                        .line(&format!("{}  {}", pin.id, one_line(&pin.text, 100)));
                }
            }
            "pin" => {
                let pin = self.engine.pin_text(rest).await?;
                self.ui.say(&format!(
                    "Pinned {id}: kept verbatim past every compaction (/unpin {id} removes it)",
                    id = pin.id
                ));
            }
            "unpin" => self.unpin(rest).await?,
            _ => return self.expand(name, rest, line),
        }
        Ok(Action::Continue)
    }

    /// `/unpin <id>`: serve's `pin.remove`. The text already sent stays in the context until a
    /// compaction cuts it away (nothing is deleted from the session).
    async fn unpin(&mut self, id: &str) -> Result<()> {
        if id.is_empty() {
            bail!("Usage: /unpin <id> (/pin lists the pins and their ids)");
        }
        match self.engine.unpin(id).await {
            Ok(()) => self
                .ui
                .line(&format!("Unpinned {id}: no compaction adds its text back")),
            Err(EngineError::PinNotFound(_)) => {
                bail!("No pin `{id}` on this branch; /pin lists the pins and their ids")
            }
            Err(error) => return Err(error.into()),
        }
        Ok(())
    }

    /// `/skill:name args` and prompt templates.
    fn expand(&self, name: &str, rest: &str, line: &str) -> Result<Action> {
        if let Some(skill_name) = name.strip_prefix("skill:") {
            let Some(skill) = self
                .resources
                .skills
                .skills
                .iter()
                .find(|skill| skill.name == skill_name)
            else {
                bail!("No skill `{skill_name}`; `ctxkit resources` lists them");
            };
            let text = std::fs::read_to_string(&skill.file_path)
                .with_context(|| format!("cannot read `{}`", skill.file_path.display()))?;
            let body = parse_frontmatter(&text)
                .map(|parsed| parsed.body)
                .unwrap_or(text);
            let mut prompt = format!(
                "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
                skill.name,
                skill.file_path.display(),
                skill.base_dir.display(),
                body.trim()
            );
            if !rest.is_empty() {
                prompt.push_str("\n\n");
                prompt.push_str(rest);
            }
            return Ok(Action::Prompt(prompt));
        }
        match expand_prompt_template(line, &self.resources.prompts.templates) {
            Some(prompt) => Ok(Action::Prompt(prompt)),
            None => bail!("Unknown command `/{name}`; /help lists the commands"),
        }
    }

    async fn context(&self) -> Result<()> {
        match self.context_figure().await? {
            Some(figure) => {
                const WIDTH: usize = 30;
                let filled = ((figure.percent / 100.0) * WIDTH as f64).round() as usize;
                let filled = filled.min(WIDTH);
                let estimated = if figure.estimated {
                    ", estimated until a reply reports usage"
                } else {
                    ""
                };
                let configured = figure
                    .configured_shown()
                    .map_or_else(String::new, |configured| format!(", {configured}"));
                self.ui.say(&format!(
                    "Context [{}{}] {} / {} tokens ({}{configured}{estimated})",
                    "█".repeat(filled),
                    "░".repeat(WIDTH - filled),
                    figure.tokens_shown(),
                    figure.window,
                    figure.percent_shown()
                ));
            }
            None => self
                .ui
                .line("Context: the model's window is unknown (add it to `llm.models`)"),
        }
        let planning = self.engine.planning().await;
        self.ui.say(&self.when_compaction_runs(&planning).await);
        let keep_recent_tokens = planning.keep_recent_tokens;
        match self.engine.plan().await? {
            CompactionPlan::Ready(plan) => {
                let summarized: Vec<_> = plan
                    .messages_to_summarize
                    .iter()
                    .chain(&plan.turn_prefix_messages)
                    .collect();
                let summarized_tokens: u64 = summarized
                    .iter()
                    .map(|sourced| estimate_tokens(&sourced.message))
                    .sum();
                let span = plan.history_len() + plan.turn_prefix_len();
                let left_out = span.saturating_sub(summarized.len());
                if left_out == 0 {
                    self.ui.say(&format!(
                        "A compaction now would summarize {} (~{summarized_tokens} tokens) and \
                         keep the rest verbatim from entry {} (~{} tokens; keepRecentTokens {keep_recent_tokens})",
                        counted(span, "message"),
                        plan.first_kept_entry_id,
                        plan.tokens_before.saturating_sub(summarized_tokens),
                    ));
                } else {
                    self.ui.say(&format!(
                        "A compaction now would summarize {}, reading {} of them (~{summarized_tokens} \
                         tokens; the span is longer than a summary request carries), and keep the rest verbatim \
                         from entry {} (keepRecentTokens {keep_recent_tokens})",
                        counted(span, "message"),
                        summarized.len(),
                        plan.first_kept_entry_id,
                    ));
                }
            }
            CompactionPlan::Nothing(reason) => self.ui.say(&nothing_to_compact(&reason)),
        }
        Ok(())
    }

    /// When a compaction runs by itself, in the status line's figures (QA: a new user saw one at
    /// 45% of the window and nothing said why): the context size the threshold is at and the
    /// settings that move it, or that none runs.
    async fn when_compaction_runs(
        &self,
        planning: &ctxkit_compaction::CompactionSettings,
    ) -> String {
        if !planning.enabled {
            return "Automatic compaction is off (`compaction.enabled`); /compact runs one"
                .to_owned();
        }
        let window = self
            .engine
            .context_status()
            .await
            .ok()
            .flatten()
            .map_or(0, |status| status.context_window);
        match self.engine.threshold_tokens().await {
            Some(threshold) if window > 0 => format!(
                "Compacts by itself past ~{threshold} tokens ({}% of the window; settings \
                 `compaction.thresholdTokens`, `compaction.reserveTokens`)",
                threshold.saturating_mul(100) / window
            ),
            Some(_) | None => {
                "Automatic compaction is off until the model's window is known".to_owned()
            }
        }
    }

    async fn compactions(&self) -> Result<()> {
        let records = self
            .engine
            .with_session(|session| list_compactions(session, None))
            .await?;
        if records.is_empty() {
            self.ui.say("No compactions on this branch.");
        }
        for record in &records {
            self.ui.say(&describe_compaction(record));
        }
        Ok(())
    }

    async fn undo_compact(&self) -> Result<()> {
        let undone = self.engine.undo_compaction().await?;
        match undone {
            Some(undo) => {
                self.ui.say(&format!(
                    "Undid compaction {}: back at {} (the summary stays in the tree){}",
                    undo.compaction_id,
                    undo.restored_leaf_id.as_deref().unwrap_or("the start"),
                    crate::commands::undo::carried_note(&undo)
                ));
                for line in crate::commands::undo::not_carried_lines(&undo) {
                    self.ui.say(&line);
                }
            }
            None => self.ui.say("No compaction on this branch."),
        }
        Ok(())
    }

    async fn name(&self, rest: &str) -> Result<()> {
        if rest.is_empty() {
            let name = self.engine.with_session(Session::session_name).await;
            self.ui.say(&name.map_or_else(
                || "The session has no name.".to_owned(),
                |name| format!("Session name: {name}"),
            ));
            return Ok(());
        }
        self.engine.name_session(rest).await?;
        self.ui.say(&format!("Named the session “{rest}”"));
        Ok(())
    }

    async fn label(&self, rest: &str) -> Result<()> {
        let (id, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        if id.is_empty() {
            bail!("Usage: /label <entry id> [text] (ids are shown by /tree)");
        }
        let text = text.trim();
        let label = (!text.is_empty()).then_some(text);
        // `/label after-branch` read as "remove the label of entry `after-branch`": its "not
        // found" said nothing of the id the command wants first (QA 2026-12-07).
        self.engine.set_label(id, label).await.map_err(|error| {
            anyhow::anyhow!(
                "{error}; /label takes an entry id, then the label: /label <entry id> [text] \
                 (ids are shown by /tree)"
            )
        })?;
        match label {
            Some(label) => self.ui.say(&format!("Labelled {id} “{label}”")),
            None => self.ui.say(&format!("Removed the label of {id}")),
        }
        Ok(())
    }
}

/// Why no compaction would run now, as `/compact` and `/context` say it (the engine's words, as
/// `ctxkit compact` says them).
fn nothing_to_compact(reason: &NoCompaction) -> String {
    match reason {
        NoCompaction::AlreadyCompacted => "Just compacted: nothing more to compact".to_owned(),
        NoCompaction::EmptyBranch | NoCompaction::AllKept { .. } => {
            format!("Nothing to compact yet: {}", reason.describe())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn nothing_to_compact_says_why_in_numbers_that_agree() {
        let kept = |context_tokens, keep_recent_tokens| {
            super::nothing_to_compact(&super::NoCompaction::AllKept {
                context_tokens,
                keep_recent_tokens,
            })
        };
        assert!(kept(200, 300).contains(
            "(~200 tokens, estimated, without the system prompt and tools) fit in keepRecentTokens (300)"
        ));
        let over = kept(1909, 300);
        assert!(!over.contains("fit in"), "{over}");
        assert!(
            over.contains("~1909 tokens (estimated), but a compaction cuts only before a prompt"),
            "{over}"
        );
        assert_eq!(
            super::nothing_to_compact(&super::NoCompaction::EmptyBranch),
            "Nothing to compact yet: no messages on this branch"
        );
    }

    /// QA r102: `/help` listed six thinking levels where `/thinking` takes seven (`max`).
    #[test]
    fn help_names_every_thinking_level_thinking_takes() {
        let listed = super::HELP
            .split_once("/thinking [level]")
            .and_then(|(_, rest)| rest.split_once("for a model that reasons"))
            .map(|(levels, _)| levels.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap();
        assert_eq!(
            listed,
            format!(
                "show or set the thinking level ({})",
                super::super::thinking::LEVELS.join(", ")
            )
        );
    }
}

//! The chat's moves to another point: `/tree <id>` (a branch summary when asked), and `/resume`
//! to another session of this directory (picked from a full-screen list in a terminal).

use std::path::Path;

use anyhow::{Result, bail};
use ctxkit_engine::NavigateOptions;
use ctxkit_session::{Session, list_sessions};

use super::Chat;
use super::agent::Ask;
use super::picker::{List, Picked, pick};
use super::slash::Action;
use crate::render::{counted, one_line};

impl Chat {
    /// `/tree <id> [--summarize] [focus]`.
    pub(super) async fn navigate(&mut self, rest: &str) -> Result<Action> {
        let (id, rest) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let rest = rest.trim();
        let (summarize, focus) = match rest.strip_prefix("--summarize") {
            Some(focus) => (true, focus.trim()),
            None => (false, rest),
        };
        let options = NavigateOptions {
            summarize,
            custom_instructions: (!focus.is_empty()).then(|| focus.to_owned()),
            ..NavigateOptions::default()
        };
        self.go_to(id, options).await
    }

    /// The engine's tree navigation, recorded in the session when it wrote no summary entry (a
    /// marker at the new leaf, as `ctxkit branch` writes): a rewind or a `/tree` move was lost
    /// when the chat ended, and `--continue` reopened the branch left, files restored or not.
    pub(super) async fn navigate_recorded(
        &self,
        id: &str,
        options: NavigateOptions,
    ) -> ctxkit_engine::Result<ctxkit_engine::NavigateOutcome> {
        self.engine.navigate_recorded(id, options).await
    }

    /// Moves the leaf to `id` (`/tree <id>`): says where it went and what was summarized; a user
    /// message's text comes back for editing.
    pub(super) async fn go_to(&mut self, id: &str, options: NavigateOptions) -> Result<Action> {
        Ok(self.move_to(id, options).await?.unwrap_or(Action::Continue))
    }

    /// [`Chat::go_to`], or `None` when the user stopped the branch summary (Esc): nothing moved,
    /// and the interactive `/tree` is shown again at the same entry, as Pi's.
    pub(super) async fn move_to(
        &mut self,
        id: &str,
        options: NavigateOptions,
    ) -> Result<Option<Action>> {
        // A branch summary is work the terminal is told of, as a compaction is.
        let summarize = options.summarize;
        let working = summarize.then(|| self.ui.working());
        let outcome = self.navigate_recorded(id, options).await;
        drop(working);
        self.events.flush().await;
        let outcome = match outcome {
            // The summary's end event said why, above; the leaf stayed (QA r106: said twice).
            Err(ctxkit_engine::EngineError::Summarization(_)) if summarize => {
                return Ok(Some(Action::Continue));
            }
            other => other?,
        };
        if outcome.aborted && summarize {
            // The summary's end event said so, above.
            return Ok(None);
        }
        if outcome.cancelled || outcome.aborted {
            self.ui.notice("Navigation cancelled; nothing changed");
            return Ok(Some(Action::Continue));
        }
        let leaf = outcome.new_leaf_id.as_deref().unwrap_or("the start");
        match &outcome.summary_entry_id {
            Some(summary) => self.ui.say(&format!(
                "Moved back; the branch left behind is summarized in {summary}, the new leaf. \
                 Its messages stay in the session: the model can `recall` them."
            )),
            None if outcome.nothing_to_summarize => self.ui.say(&format!(
                "Moved to {leaf}; nothing left behind to summarize, so no summary was written"
            )),
            None => self.ui.say(&format!("Moved to {leaf}")),
        }
        self.load_prompt_history().await;
        Ok(Some(
            outcome.editor_text.map_or(Action::Continue, Action::Edit),
        ))
    }

    /// `/resume [n | FILE]`: this directory's sessions, newest first; opens the one chosen
    /// (`true`), or stays (`false`: no session, none chosen, or a stored session). A session file
    /// kept elsewhere (`--session PATH`) is named by its path; `/resume` alone reads the open one
    /// again when another program appended to it and it is not in this directory's list (QA
    /// 2026-12-07: the hint said `/resume`, which listed only this directory's sessions).
    pub(super) async fn resume(&mut self, rest: &str, ask: &mut dyn Ask) -> Result<bool> {
        if let Some((_, shown)) = &self.shown_as {
            // Switching stored sessions needs another lease: the chat is started again for it.
            self.ui.say(&format!(
                "The session is {shown}: `ctxkit chat --resume` lists this directory's stored sessions"
            ));
            return Ok(false);
        }
        let open = self
            .engine
            .with_session(|session| session.path().map(std::path::Path::to_owned))
            .await;
        let named = (!rest.is_empty() && rest.parse::<usize>().is_err())
            .then(|| match rest.strip_prefix("~/") {
                Some(under_home) => self.environment.home.join(under_home),
                None => self.cwd.join(rest),
            })
            .filter(|path| {
                crate::commands::sessions::names_a_file(Path::new(rest)) || path.is_file()
            });
        let elsewhere = open
            .as_ref()
            .filter(|file| rest.is_empty() && file.parent() != Some(self.session_dir.as_path()));
        let elsewhere_extended = match elsewhere {
            Some(_) => self.engine.with_session(Session::check_file).await.is_err(),
            None => false,
        };
        if let Some(file) = named.or_else(|| elsewhere.filter(|_| elsewhere_extended).cloned()) {
            return self.resume_file(&file, open.as_deref()).await;
        }
        let (sessions, _) = list_sessions(&self.session_dir)?;
        if sessions.is_empty() {
            self.ui.say("No saved sessions for this directory.");
            let cwd = self.environment.cwd.display().to_string();
            let pi = self
                .session_dir
                .parent()
                .and_then(|root| crate::commands::pi_sessions::hint(&self.environment, root, &cwd));
            if let Some(hint) = pi {
                self.ui.notice(&format!("hint: {hint}"));
            }
            return Ok(false);
        }
        let open = self
            .engine
            .with_session(|session| session.path().map(std::path::Path::to_owned))
            .await;
        let is_open = |info: &ctxkit_protocol::SessionInfoRecord| {
            open.as_deref() == Some(std::path::Path::new(&info.path))
        };
        let index = if rest.is_empty() {
            let rows: Vec<String> = resume_rows(&sessions)
                .into_iter()
                .zip(&sessions)
                .map(|(row, info)| {
                    let marker = if is_open(info) { "  (open now)" } else { "" };
                    format!("{row}{marker}")
                })
                .collect();
            // A full-screen list in a terminal, as Pi's; the numbered list and its question
            // otherwise (input from a pipe).
            match pick_session(&sessions, &rows) {
                Ok(Some(index)) => index,
                Ok(None) => return Ok(false),
                Err(_) => {
                    for row in &rows {
                        self.ui.line(row);
                    }
                    match ask.ask(RESUME_QUESTION) {
                        Some(answer) if !answer.trim().is_empty() => {
                            session_number(answer.trim(), sessions.len())?
                        }
                        Some(_) | None => return Ok(false),
                    }
                }
            }
        } else {
            session_number(rest, sessions.len())?
        };
        let Some(info) = sessions.get(index) else {
            bail!("No session number `{}`", index + 1);
        };
        self.resume_file(Path::new(&info.path), open.as_deref())
            .await
    }

    /// Opens the session file `path` in the chat (`open`: the file open now, which is read again
    /// only when another program added to it, since this chat holds it).
    async fn resume_file(&mut self, path: &Path, open: Option<&Path>) -> Result<bool> {
        // Named however it is typed (`./s.jsonl`, through a link): the same file is the open one.
        let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        if open.is_some_and(|open| real(open) == real(path)) {
            if !self.resume_open_session(path).await? {
                return Ok(false);
            }
        } else {
            let session = Session::open(path)?;
            let notes = super::session_file::opening_notes(&session);
            self.install(session).await?;
            for note in notes {
                self.ui.notice(&note);
            }
        }
        self.restore_recorded(false).await;
        self.banner(super::banner::Banner::Switched).await;
        Ok(true)
    }
}

/// The index of the session numbered `number` (from 1) of `count`.
fn session_number(number: &str, count: usize) -> Result<usize> {
    number
        .parse::<usize>()
        .ok()
        .and_then(|number| number.checked_sub(1))
        .filter(|index| *index < count)
        .ok_or_else(|| anyhow::anyhow!("No session number `{number}` (1 to {count})"))
}

/// The picker over this directory's sessions (`rows`, as [`resume_rows`] with the open one
/// marked), the cursor on the newest: the index picked, `None` when the user left it, `Err` when
/// stdin is not a terminal.
fn pick_session(
    sessions: &[ctxkit_protocol::SessionInfoRecord],
    rows: &[String],
) -> std::io::Result<Option<usize>> {
    let row = |index: usize| rows.get(index).cloned().unwrap_or_default();
    let detail = |index: usize| {
        sessions.get(index).map_or_else(String::new, |info| {
            let name = info
                .name
                .as_deref()
                .map(|name| format!("{name} · "))
                .unwrap_or_default();
            format!(
                "{name}{}\n{}",
                one_line(&info.first_message, 400),
                info.path
            )
        })
    };
    let list = List {
        title: "Resume which session? (this directory's, newest first)",
        help: "↑/↓ j/k move · Enter open it · Esc stay here",
        count: sessions.len(),
        row: &row,
        detail: &detail,
        keys: "",
    };
    match pick(&list, 0)? {
        Picked::Chosen(index) => Ok(Some(index)),
        Picked::Key(_, _) | Picked::Left => Ok(None),
    }
}

/// What `/resume` (and `chat --resume` on a database store) asks after the list.
pub(crate) const RESUME_QUESTION: &str = "Resume which (number, empty to stay)? ";

/// The sessions `/resume` lists, a numbered line each: when (the time the list is ordered by: a
/// copy of older messages, such as a fork, by its creation), how many messages, name or first
/// message.
pub(crate) fn resume_rows(sessions: &[ctxkit_protocol::SessionInfoRecord]) -> Vec<String> {
    sessions
        .iter()
        .enumerate()
        .map(|(number, info)| {
            let title = info.name.as_deref().unwrap_or(&info.first_message);
            let when = if crate::commands::sessions::created_after_its_messages(info) {
                format!("{} (created)", info.created)
            } else {
                info.modified.clone()
            };
            format!(
                "{:>3}. {when}  {}  {}",
                number + 1,
                counted(info.message_count, "message"),
                one_line(title, 60)
            )
        })
        .collect()
}

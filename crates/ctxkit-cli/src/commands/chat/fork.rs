//! `/fork`: a new session file from the current one, which is left as it was. With no argument
//! (as Pi's `/fork`) a list of the session's user messages (every branch, in file order) to pick
//! from: the new session holds what came before the one picked, and its text comes back on the
//! input line to edit. `/fork <id>` forks before a user message or at any other entry.

use std::cell::RefCell;
use std::collections::HashMap;

use anyhow::{Result, bail};
use ctxkit_engine::ForkPosition;
use ctxkit_session::Session;

use super::Chat;
use super::picker::{List, Picked, pick};
use super::slash::Action;
use crate::commands::checkpoints;
use crate::render::one_line;

/// The user messages a fork can start before: every branch's, in file order, without the empty
/// ones (Pi's `getUserMessagesForForking`), with their text.
fn fork_messages(session: &Session) -> Vec<(String, String)> {
    session
        .entries()
        .iter()
        .filter(|entry| entry.role() == Some("user"))
        .map(|entry| (entry.id().to_owned(), super::rewind::prompt_text(entry)))
        .filter(|(_, text)| !text.trim().is_empty())
        .collect()
}

impl Chat {
    /// `/fork [id]`: with no id, the user messages to pick from; then the fork.
    pub async fn fork(&mut self, id: &str) -> Result<Action> {
        if !id.is_empty() {
            return self.fork_at(id).await;
        }
        let messages = self.engine.with_session(fork_messages).await;
        if messages.is_empty() {
            self.ui.info("No message to fork from yet");
            return Ok(Action::Continue);
        }
        match pick_message(&messages) {
            Ok(Some(index)) => match messages.get(index) {
                Some((id, _)) => self.fork_at(&id.clone()).await,
                None => Ok(Action::Continue),
            },
            Ok(None) => {
                self.ui.info("Fork cancelled; nothing changed");
                Ok(Action::Continue)
            }
            // Not a terminal: the list, to fork by id.
            Err(_) => {
                for (number, (id, text)) in messages.iter().enumerate() {
                    self.ui
                        .line(&format!("{:>3}. {id}  {}", number + 1, one_line(text, 100)));
                }
                self.ui.info("/fork <id> forks before one of them");
                Ok(Action::Continue)
            }
        }
    }

    /// `/fork <id>`: before a user message (its text comes back for editing), else at the entry.
    async fn fork_at(&mut self, id: &str) -> Result<Action> {
        let is_user = self
            .engine
            .with_session(|session| session.entry(id).map(|entry| entry.role() == Some("user")))
            .await;
        let position = match is_user {
            None => bail!("No entry `{id}`; /tree shows the ids"),
            Some(true) => ForkPosition::Before,
            Some(false) => ForkPosition::At,
        };
        self.fork_with(id, position, "Forked").await
    }

    /// Forks at `id` (`position`), saying where the new session is (`done`: "Forked", "Cloned").
    pub(super) async fn fork_with(
        &mut self,
        id: &str,
        position: ForkPosition,
        done: &str,
    ) -> Result<Action> {
        let forked_from = self
            .engine
            .with_session(|session| session.path().map(std::path::Path::to_owned))
            .await;
        let outcome = self.engine.fork(id, position).await?;
        if outcome.cancelled {
            self.ui.notice("Fork cancelled by a hook");
            return Ok(Action::Continue);
        }
        if let (Some(from), Some(to)) = (forked_from, &outcome.session_file) {
            self.carry_checkpoints(&from, std::path::Path::new(to))
                .await;
        }
        let beside_a_stored_copy = |file: &str| {
            self.shown_as
                .as_ref()
                .is_some_and(|(copy, _)| copy.parent() == std::path::Path::new(file).parent())
        };
        match &outcome.session_file {
            // A database session's fork is stored as the chat ends (which says its id).
            Some(file) if beside_a_stored_copy(file) => self.ui.say(&format!(
                "{done} into a new session, stored in the database when the chat ends"
            )),
            // Before the first message there is nothing to copy: the file is written with the
            // first reply, as every new session's.
            Some(file) if !std::path::Path::new(file).exists() => self.ui.say(&format!(
                "{done} into a new session: {file} (written with the first reply)"
            )),
            Some(file) => self.ui.say(&format!("{done} into a new session: {file}")),
            None => self
                .ui
                .line(&format!("{done} into a new session (in memory)")),
        }
        self.load_prompt_history().await;
        Ok(outcome.selected_text.map_or(Action::Continue, Action::Edit))
    }
}

impl Chat {
    /// Copies the file snapshots of the turns the fork holds from `from`'s checkpoints to `to`'s
    /// ([`checkpoints::carry_to_fork`]). A copy that fails is said, and the fork stands.
    async fn carry_checkpoints(&self, from: &std::path::Path, to: &std::path::Path) {
        let max_bytes = self.checkpoints.max_bytes();
        let copied = self
            .engine
            .with_session(|session| checkpoints::carry_to_fork(from, to, session, max_bytes))
            .await;
        if let Err(error) = copied {
            self.ui.notice(&format!(
                "The fork's rewinds cannot put files back as before it: {error:#}"
            ));
        }
    }
}

/// The picker over `messages`, the cursor on the newest: the index picked, `None` when the user
/// left it, `Err` when stdin is not a terminal.
fn pick_message(messages: &[(String, String)]) -> std::io::Result<Option<usize>> {
    let rows: RefCell<HashMap<usize, String>> = RefCell::default();
    let row = |index: usize| {
        if let Some(row) = rows.borrow().get(&index) {
            return row.clone();
        }
        let text = messages.get(index).map_or("", |(_, text)| text.as_str());
        let row = format!("{:>3}. {}", index + 1, one_line(text, 200));
        rows.borrow_mut().insert(index, row.clone());
        row
    };
    let detail = |index: usize| {
        messages
            .get(index)
            .map(|(id, text)| format!("{id}: {text}"))
            .unwrap_or_default()
    };
    let list = List {
        title: "Fork from before which message? (a new session file; this one stays as it is)",
        help: "↑/↓ j/k move · Enter fork there (the message comes back to edit) · Esc leave",
        count: messages.len(),
        row: &row,
        detail: &detail,
        keys: "",
    };
    match pick(&list, messages.len().saturating_sub(1))? {
        Picked::Chosen(index) => Ok(Some(index)),
        Picked::Key(_, _) | Picked::Left => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_protocol::{AgentMessage, MessageContent, UserMessage};

    #[test]
    fn the_messages_to_fork_from_are_every_branchs_user_messages_in_file_order() {
        let mut session = Session::in_memory("/tmp");
        let user = |text: &str| {
            AgentMessage::User(UserMessage {
                content: MessageContent::Text(text.to_owned()),
                timestamp: None,
                extra: Default::default(),
            })
        };
        let first = session.append_message(user("first")).unwrap();
        session.append_message(user("second")).unwrap();
        session.append_message(user("  ")).unwrap();
        session.branch(&first).unwrap();
        session.append_message(user("other branch")).unwrap();
        let texts: Vec<String> = fork_messages(&session)
            .into_iter()
            .map(|(_, text)| text)
            .collect();
        assert_eq!(texts, ["first", "second", "other branch"]);
    }
}

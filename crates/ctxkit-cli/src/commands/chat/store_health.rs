//! A chat on a database session says at once when what it wrote could not be stored, and when it
//! is stored again: before each prompt it asks the committing thread for a commit and waits for
//! it briefly, so no prompt goes to the model while the session is known to be taken over. A
//! session taken over ends the chat; what it wrote is kept as a new session as it ends.

use std::time::Duration;

use crate::commands::SyncStatus;
use crate::commands::store_sync::Health;

use super::Chat;

/// How long a prompt waits for the commit it asked for: a healthy database answers in
/// milliseconds; one that does not answer is reported as it stands.
const PROMPT_WAIT: Duration = Duration::from_secs(3);

/// The storing of a database session's chat, and what the chat said of it last.
#[derive(Debug, Default)]
pub struct StoreWatch {
    status: Option<SyncStatus>,
    said: Health,
}

/// Whether the chat can go on writing its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreCheck {
    /// Stored, or waiting for the database (what it writes is kept and stored later).
    Writable,
    /// Taken over by another writer, or gone: the chat ends.
    Lost,
}

/// When the check looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// As the last commit left it.
    AsItStands,
    /// After a commit asked for now (before a prompt).
    AfterACommit,
}

impl StoreWatch {
    pub fn new(status: Option<SyncStatus>) -> Self {
        Self {
            status,
            said: Health::Stored,
        }
    }
}

/// What to say when the health went from `said` to `now`: lines, each an error or not.
pub fn change_lines(said: &Health, now: &Health) -> Vec<(bool, String)> {
    match (said, now) {
        (Health::Lost { .. }, _) => Vec::new(),
        (_, Health::Lost { error }) => {
            vec![
            (true, format!("This chat can no longer store its session: {error}")),
            (
                false,
                "The chat ends here and sends nothing more to the model; what it wrote that is not \
                 stored is kept as a new session, which it names as it ends"
                    .to_owned(),
            ),
        ]
        }
        (Health::Stored, Health::Behind { error }) => {
            vec![
            (true, format!("The database did not store this chat's last writes: {error}")),
            (
                false,
                "Nothing is lost: the chat keeps them and stores them once the database answers \
                 (it tries every second); if it ends before then, it names the file it keeps"
                    .to_owned(),
            ),
        ]
        }
        (Health::Behind { .. }, Health::Stored) => vec![(
            false,
            "The database answers again: everything this chat wrote is stored".to_owned(),
        )],
        (Health::Stored, Health::Stored) | (Health::Behind { .. }, Health::Behind { .. }) => {
            Vec::new()
        }
    }
}

impl Chat {
    /// Says what changed in the storing of a database session since it last said, and whether
    /// the chat can go on. Nothing for a session file.
    pub async fn check_store(&mut self, look: Look) -> StoreCheck {
        let Some(status) = self.store.status.clone() else {
            return StoreCheck::Writable;
        };
        let now = match look {
            Look::AsItStands => status.health(),
            Look::AfterACommit => status.commit_now(PROMPT_WAIT).await,
        };
        for (is_error, line) in change_lines(&self.store.said, &now) {
            if is_error {
                self.ui.error(&line);
            } else {
                self.ui.info(&line);
            }
        }
        let check = match now {
            Health::Lost { .. } => StoreCheck::Lost,
            Health::Stored | Health::Behind { .. } => StoreCheck::Writable,
        };
        self.store.said = now;
        check
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic, reason = "tests")]
mod tests {
    use super::*;

    fn behind() -> Health {
        Health::Behind {
            error: "database: cannot connect: Connection refused".to_owned(),
        }
    }

    fn lost() -> Health {
        Health::Lost {
            error: "session `s`: this writer's lease (token 1) was taken over".to_owned(),
        }
    }

    #[test]
    fn each_change_is_said_once_and_a_lost_session_says_the_chat_ends() {
        let said = |from: &Health, to: &Health| -> Vec<String> {
            change_lines(from, to)
                .into_iter()
                .map(|(_, line)| line)
                .collect()
        };
        assert!(said(&Health::Stored, &Health::Stored).is_empty());
        assert!(said(&behind(), &behind()).is_empty());
        assert!(said(&lost(), &lost()).is_empty());
        let failing = said(&Health::Stored, &behind());
        assert!(failing[0].contains("did not store") && failing[0].contains("Connection refused"));
        assert!(failing[1].starts_with("Nothing is lost"));
        assert!(said(&behind(), &Health::Stored)[0].contains("answers again"));
        for from in [Health::Stored, behind()] {
            let ending = said(&from, &lost());
            assert!(ending[0].contains("taken over"), "{ending:?}");
            assert!(ending[1].contains("kept as a new session"));
        }
    }
}

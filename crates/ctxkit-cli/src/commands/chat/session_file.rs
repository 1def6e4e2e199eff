//! The session file under the chat: before each prompt the chat checks that the file is still the
//! one it writes to (another program may have deleted, moved or rewritten it); when it is not, it
//! says so in one line and offers to write the session afresh to a new file (`/save` does it any
//! time), so nothing held in memory is lost and nothing is appended onto a file another program
//! rewrote. When another program only appended to it (Pi, a second ctxkit), `/resume` of the open
//! session reads it again instead, and `/save` refuses: the new file would leave that program's
//! entries out. Also remembers the session used last, for `--continue`.

use std::path::Path;

use anyhow::Result;
use ctxkit_session::{FileChange, Session, SessionError, record_last_used_session};

use super::Chat;
use super::agent::Ask;

/// The hint shown under an error caused by a changed session file.
pub const SAVE_HINT: &str =
    "hint: /save writes the session afresh to a new file (nothing held in memory is lost)";

/// The hint shown when another program appended to the session file: writing the session
/// afresh would leave its entries out, reading the file again takes them in.
pub const RESUME_HINT: &str =
    "hint: /resume this session to load what the other program added, then go on";

/// The hint under an error caused by a changed session file (`None`: another error): another
/// program's appends are loaded by `/resume`, any other change is saved from by `/save`.
pub fn file_changed_hint(error: &anyhow::Error) -> Option<&'static str> {
    error.chain().find_map(|cause| {
        let session_error = cause.downcast_ref::<SessionError>().or_else(|| {
            match cause.downcast_ref::<ctxkit_engine::EngineError>() {
                Some(ctxkit_engine::EngineError::Session(error)) => Some(error),
                Some(_) | None => None,
            }
        });
        match session_error {
            Some(SessionError::FileChanged { change, .. }) => Some(hint_for(*change)),
            Some(_) | None => None,
        }
    })
}

/// The way out of `change`.
fn hint_for(change: FileChange) -> &'static str {
    match change {
        FileChange::Extended { .. } => RESUME_HINT,
        FileChange::Deleted
        | FileChange::Moved
        | FileChange::Replaced
        | FileChange::Truncated { .. } => SAVE_HINT,
    }
}

/// When [`Chat::remember_session`] writes the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remember {
    /// Only when the open session is not the one recorded last.
    WhenSwitched,
    /// In any case.
    Always,
}

/// Whether the prompt may go on after the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileCheck {
    /// The file is as the session left it (or was just written afresh).
    Usable,
    /// The file changed and the user kept it that way: nothing may be sent.
    Changed,
}

impl Chat {
    /// Before a prompt: when the session file changed under the chat, says so in one line and asks
    /// whether to write the session afresh to a new file.
    pub async fn check_session_file(&mut self, ask: &mut dyn Ask) -> Result<FileCheck> {
        let checked = self.engine.with_session(Session::check_file).await;
        let error = match checked {
            Ok(()) => return Ok(FileCheck::Usable),
            Err(error @ SessionError::FileChanged { .. }) => error,
            Err(other) => return Err(other.into()),
        };
        self.ui.error(&error.to_string());
        if let SessionError::FileChanged {
            change: FileChange::Extended { .. },
            ..
        } = error
        {
            // Writing afresh would leave out what the other program added.
            self.ui.info(RESUME_HINT);
            return Ok(FileCheck::Changed);
        }
        let answer = ask.ask_key(
            "Write the session afresh to a new file and go on? [y]es / [n]o: ",
            "yn",
        );
        match answer {
            Some('y') => {
                self.save_afresh().await?;
                Ok(FileCheck::Usable)
            }
            Some(_) | None => {
                self.ui.info(SAVE_HINT);
                Ok(FileCheck::Changed)
            }
        }
    }

    /// `/save`: writes the whole session to a new file in this directory's sessions folder and
    /// continues there. Says both files: the new one names the old one as its parent session
    /// while the old one is still at its path (what another program appended stays there).
    pub async fn save_afresh(&mut self) -> Result<()> {
        let checked = self.engine.with_session(Session::check_file).await;
        if let Err(SessionError::FileChanged {
            path,
            change: FileChange::Extended { .. },
        }) = checked
        {
            self.ui.error(&format!(
                "`{}` holds entries another program added since the chat last wrote; /save would \
                 leave them out of the new file, so nothing was written",
                path.display()
            ));
            self.ui.info(RESUME_HINT);
            return Ok(());
        }
        let old_file = self
            .engine
            .with_session(|session| session.path().map(std::path::Path::to_owned))
            .await;
        let written = self.engine.write_afresh().await?;
        let parent = self
            .engine
            .with_session(|session| session.header().parent_session.clone())
            .await;
        match (written, old_file) {
            (Some(path), Some(old_file)) => {
                let linked = parent.is_some_and(|parent| {
                    std::path::absolute(&old_file).is_ok_and(|old| Path::new(&parent) == old)
                });
                let old = old_file.display();
                let relation = if linked {
                    format!(", a new session whose parent is {old};")
                } else {
                    format!(" ({old} is no longer there);")
                };
                self.ui.say(&format!(
                    "Wrote the session afresh to {}{relation} the chat goes on there",
                    path.display()
                ));
            }
            (Some(path), None) => self.ui.say(&format!(
                "Wrote the session afresh to {}; the chat goes on there",
                path.display()
            )),
            (None, _) => self
                .ui
                .line("The session is in memory (--no-session); there is no file to write"),
        }
        self.remember_session(Remember::Always).await;
        Ok(())
    }

    /// `/resume` of the session open now (at `path`): read again when another program appended
    /// to its file since the chat last wrote (the chat holds a prefix of the file, so nothing is
    /// lost), as any resumed session, its file locked; else says why nothing changed. `true`:
    /// read again.
    pub(super) async fn resume_open_session(&mut self, path: &Path) -> Result<bool> {
        let checked = self.engine.with_session(Session::check_file).await;
        match checked {
            Ok(()) => {
                self.ui
                    .line("That is the session open now; nothing changed");
                return Ok(false);
            }
            Err(SessionError::FileChanged {
                change: FileChange::Extended { .. },
                ..
            }) => {}
            Err(error @ SessionError::FileChanged { .. }) => {
                // Reading the file again would drop what the chat holds and the file lacks.
                self.ui.error(&error.to_string());
                self.ui.info(SAVE_HINT);
                return Ok(false);
            }
            Err(other) => return Err(other.into()),
        }
        let reloaded = Session::open(path)?;
        // The file's lock is held through the open file: the chat lets go of it before the
        // session read again takes it.
        let cwd = self.cwd.display().to_string();
        self.install(Session::in_memory(&cwd)).await?;
        if let Err(error) = self.install(reloaded).await {
            // Something still holds the old engine (a summary being written): the file's lock is
            // not free yet, and the chat is left on a session kept in memory only.
            self.ui.error(&format!("{error:#}"));
            self.ui.info(
                "hint: the chat now keeps the conversation in memory only; /resume this session \
                 again once the summary being written has ended",
            );
            return Ok(false);
        }
        self.ui.say(&format!(
            "Read `{}` again with what another program added to it",
            path.display()
        ));
        Ok(true)
    }

    /// Records the open session as this directory's session used last (`--continue` opens it)
    /// when it is not the one recorded last, or `always` (at exit, so the record is newer than
    /// every write of this chat). Between prompts nothing is written while the session stays the
    /// same: keys typed ahead of the next input line must not wait for a file write. A failure is
    /// only logged: it costs `--continue` its precision, nothing else.
    pub async fn remember_session(&mut self, when: Remember) {
        let path = self
            .engine
            .with_session(|session| session.path().map(std::path::Path::to_owned))
            .await;
        let Some(path) = path else { return };
        match when {
            Remember::Always => {}
            Remember::WhenSwitched if self.remembered.as_ref() == Some(&path) => return,
            Remember::WhenSwitched => {}
        }
        match record_last_used_session(&self.session_dir, &path) {
            Ok(()) => self.remembered = Some(path),
            Err(error) => tracing::debug!(%error, "cannot record the session used last"),
        }
    }

    /// On leaving a chat at the terminal: where its session is and how to come back to it. Nothing
    /// for an in-memory chat, a session that wrote nothing yet, or a chat reading a pipe (its
    /// output is the model's text).
    pub async fn farewell(&self) {
        use std::io::IsTerminal as _;
        if !std::io::stdin().is_terminal() {
            return;
        }
        let path = self
            .engine
            .with_session(|session| session.path().map(std::path::Path::to_owned))
            .await;
        let Some(path) = path.filter(|path| path.is_file()) else {
            return;
        };
        match &self.shown_as {
            // A database session, or one made in its chat (`/fork`, `/new`): stored as the chat
            // ends, which says so once the database took it.
            Some((copy, _)) if copy.parent() == path.parent() => {}
            _ => {
                self.ui.info(&format!("Session saved: {}", path.display()));
                let chosen = ChosenFolders {
                    session_dir: self
                        .session_dir_chosen
                        .then_some(self.session_dir.as_path()),
                    sessions_root: self.sessions_root_chosen.as_deref(),
                };
                self.ui.info(&way_back(&path, &self.session_dir, &chosen));
            }
        }
    }

    /// A session recorded in another directory (an imported one, `--session` on another project's
    /// file) is continued here: its history names paths of that directory while the tools work in
    /// this one, so the banner says both.
    pub async fn other_directory_note(&self) {
        let recorded = self
            .engine
            .with_session(|session| session.cwd().to_owned())
            .await;
        if recorded.is_empty() || std::path::Path::new(&recorded) == self.cwd {
            return;
        }
        self.ui.info(&format!(
            "This session was recorded in `{recorded}`; the tools work here, in `{}`",
            self.cwd.display()
        ));
    }
}

/// The folders the command line chose, which a way back must name again.
struct ChosenFolders<'a> {
    /// `--session-dir`.
    session_dir: Option<&'a std::path::Path>,
    /// `--sessions-dir` (or `CTXKIT_SESSIONS_DIR`).
    sessions_root: Option<&'a std::path::Path>,
}

/// How to open the session at `path` again: `--continue` where it finds it (in `session_dir`,
/// this directory's folder, with the folders the command line chose named again), else the file
/// itself (`--session` on a file kept elsewhere: `--continue` would open another session).
fn way_back(
    path: &std::path::Path,
    session_dir: &std::path::Path,
    chosen: &ChosenFolders<'_>,
) -> String {
    let quoted = |path: &std::path::Path| format!("'{}'", path.display());
    if path.parent() != Some(session_dir) {
        return format!("Back to it with `ctxkit chat --session {}`", quoted(path));
    }
    let chat = match (chosen.session_dir, chosen.sessions_root) {
        (Some(dir), _) => format!("ctxkit chat --session-dir {}", quoted(dir)),
        (None, Some(root)) => format!("ctxkit --sessions-dir {} chat", quoted(root)),
        (None, None) => "ctxkit chat".to_owned(),
    };
    format!("Back to it with `{chat} --continue`; `{chat} --resume` lists the others")
}

/// A session in an older format (v1, v2) is rewritten as v3 by the chat's first write, as every
/// writing command says it is (a tester's `chat --session old.jsonl` rewrote one without a word).
/// What the chat says of a session it opens, before anything is appended: that its first write
/// rewrites an older format, and that it is damaged (the model goes on without the lines that
/// cannot be read; QA 2026-12-07: `--session` on a damaged file said nothing, in print mode too).
pub(super) fn opening_notes(session: &ctxkit_session::Session) -> Vec<String> {
    let damaged = crate::commands::damage_line(
        session,
        "going on from what could be read (the other lines stay in the file)",
    );
    [old_format_note(session), damaged]
        .into_iter()
        .flatten()
        .collect()
}

pub(super) fn old_format_note(session: &ctxkit_session::Session) -> Option<String> {
    let version = crate::commands::older_format(session)?;
    let file = session.path()?;
    Some(format!(
        "`{}` is in session format v{version}; the chat's first write rewrites it as v3 (entry ids \
         as /tree shows them)",
        file.display()
    ))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{ChosenFolders, way_back};

    /// QA (2026-12-07): after `--sessions-dir ~/.pi/agent/sessions` or `--session` on a file kept
    /// elsewhere, the farewell said `ctxkit chat --continue`, which continued another session.
    #[test]
    fn the_way_back_names_what_reopens_this_session() {
        let dir = Path::new("/s/--p--");
        let file = Path::new("/s/--p--/a.jsonl");
        let none = ChosenFolders {
            session_dir: None,
            sessions_root: None,
        };
        assert_eq!(
            way_back(file, dir, &none),
            "Back to it with `ctxkit chat --continue`; `ctxkit chat --resume` lists the others"
        );
        let root = ChosenFolders {
            session_dir: None,
            sessions_root: Some(Path::new("/s")),
        };
        assert_eq!(
            way_back(file, dir, &root),
            "Back to it with `ctxkit --sessions-dir '/s' chat --continue`; \
             `ctxkit --sessions-dir '/s' chat --resume` lists the others"
        );
        let kept = ChosenFolders {
            session_dir: Some(dir),
            sessions_root: Some(Path::new("/s")),
        };
        assert!(
            way_back(file, dir, &kept)
                .contains("`ctxkit chat --session-dir '/s/--p--' --continue`")
        );
        let elsewhere = Path::new("/home/u/.pi/agent/sessions/--p--/b.jsonl");
        assert_eq!(
            way_back(elsewhere, dir, &none),
            "Back to it with `ctxkit chat --session '/home/u/.pi/agent/sessions/--p--/b.jsonl'`"
        );
    }
}

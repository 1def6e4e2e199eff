//! The input line's history (Up, Ctrl-R) filled from the session open, as Pi fills its editor's
//! each time it shows a session's conversation (`populateHistory`): continued at start
//! (`--continue`, `--resume`, `--session`), switched to (`/resume`, `/import`), forked (`/fork`)
//! or moved in (`/tree`, the rewind). The user prompts of the current branch's context (after its
//! latest compaction), oldest first, as typed (the files `@path` attached left out), at most
//! [`LOADED_PROMPTS`] of the newest.

use ctxkit_session::{ContextMessageKind, Session};

use super::Chat;

/// How many prompts are loaded: Pi's editor keeps its last 100, as the input line's history does.
pub(super) const LOADED_PROMPTS: usize = 100;

/// The prompts of `session`'s current branch for the history, oldest first.
fn branch_prompts(session: &Session) -> Vec<String> {
    let context = session.leaf_context();
    let entries = session.entries();
    // Only the newest prompts are read: a long session is not parsed whole for them.
    let mut newest: Vec<_> = context
        .messages
        .iter()
        .rev()
        .filter(|message| message.kind == ContextMessageKind::Stored)
        .filter(|message| {
            entries
                .get(message.entry)
                .is_some_and(|entry| entry.role() == Some("user"))
        })
        .take(LOADED_PROMPTS)
        .copied()
        .collect();
    newest.reverse();
    session
        .messages(&newest)
        .unwrap_or_default()
        .iter()
        .filter_map(|message| Some(message.as_user()?.content.joined_text("\n")))
        .map(|text| super::attach::split_attached(&text).1.trim().to_owned())
        .filter(|text| !text.is_empty())
        .collect()
}

impl Chat {
    /// Sets the prompts of the session open now aside for the input line's history.
    pub(super) async fn load_prompt_history(&self) {
        let prompts = self.engine.with_session(branch_prompts).await;
        if let Ok(mut waiting) = self.prompts_for_history.lock() {
            waiting.extend(prompts);
        }
    }

    /// The prompts set aside for the input line's history, oldest first; the input loop adds
    /// them before it reads the next line.
    pub(super) fn take_prompt_history(&self) -> Vec<String> {
        self.prompts_for_history
            .lock()
            .map(|mut waiting| std::mem::take(&mut *waiting))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_protocol::{AgentMessage, ContentBlock, MessageContent, UserMessage};

    fn user(text: &str) -> AgentMessage {
        AgentMessage::User(UserMessage {
            content: MessageContent::Blocks(vec![ContentBlock::text(text)]),
            timestamp: Some(1),
            extra: Default::default(),
        })
    }

    #[test]
    fn the_branchs_prompts_come_oldest_first_as_typed_newest_hundred() {
        let mut session = Session::in_memory("/project");
        session.append_message(user("first prompt")).unwrap();
        session
            .append_message(user(
                "<file name=\"a.txt\">\nhello\n</file>\nexplain @a.txt",
            ))
            .unwrap();
        session.append_message(user("   ")).unwrap();
        assert_eq!(branch_prompts(&session), ["first prompt", "explain @a.txt"]);
        for number in 0..150 {
            session
                .append_message(user(&format!("prompt {number}")))
                .unwrap();
        }
        let prompts = branch_prompts(&session);
        assert_eq!(prompts.len(), LOADED_PROMPTS);
        assert_eq!(prompts[0], "prompt 50");
        assert_eq!(prompts[99], "prompt 149");
    }
}

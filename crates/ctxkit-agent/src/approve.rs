//! Asking the user before a risky tool call runs.

use futures::future::BoxFuture;

/// The user's answer to an approval question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Run this call.
    Once,
    /// Run this call and every later call of the same tool without asking.
    Always,
    /// Do not run this call; the model is told the user declined and the turn goes on.
    Deny,
    /// Do not run this call and stop the turn (Ctrl-C at the question).
    Stop,
    /// Do not run this call: nobody can be asked (a chat without a terminal, a run whose caller
    /// approves nothing). The model is told so, not that the user declined.
    Unanswered,
}

/// Answers approval questions (a terminal prompt, a client over the protocol, a policy).
pub trait Approver: Send {
    /// `question` names what would run, e.g. "Run `cargo test`?".
    fn approve<'a>(&'a mut self, tool: &'a str, question: &'a str) -> BoxFuture<'a, Approval>;

    /// Asks whether `tool` may reach outside the project, e.g. "Write `/etc/hosts`, outside the
    /// project?". An approver without a person to ask declines (the default): a run leaves the
    /// project only when its caller said so up front ([`crate::Agent::allow_outside`]).
    fn approve_outside<'a>(
        &'a mut self,
        tool: &'a str,
        question: &'a str,
    ) -> BoxFuture<'a, Approval> {
        let _ = (tool, question);
        Box::pin(async { Approval::Unanswered })
    }

    /// Asks whether `tool` may write a guarded place of the project, e.g. "Write `.bashrc`? ctxkit
    /// guards it … (always: this file only)"; asked as [`Self::approve`] asks, unless an approver
    /// says what "always" covers here (the place named, not every call of the tool).
    fn approve_guarded<'a>(
        &'a mut self,
        tool: &'a str,
        question: &'a str,
    ) -> BoxFuture<'a, Approval> {
        self.approve(tool, question)
    }
}

/// Approves every call that asks (`--yes`, `chat.confirmBash false`, headless runs); access
/// outside the project is still declined.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn approve<'a>(&'a mut self, _tool: &'a str, _question: &'a str) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Once })
    }
}

/// Declines every call that needs approval: nobody is asked ([`Approval::Unanswered`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

impl Approver for DenyAll {
    fn approve<'a>(&'a mut self, _tool: &'a str, _question: &'a str) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Unanswered })
    }
}

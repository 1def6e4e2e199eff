//! Message threads of conversations (`llm.anthropic.supportsMessageThreads`): where each
//! conversation's next request can continue. [`MessageThreads`] holds, per conversation (a session
//! id), the thread's last reply and a digest of everything the thread holds; a [`ModelClient`]
//! bound to one conversation ([`ModelClient::with_message_threads`]) continues the thread while
//! the request's prefix is that digest, and otherwise sends the whole request as a new thread,
//! logging why. A conversation's state is never read by another (the key is the session id) and a
//! thread never continues under another endpoint, model, system prompt or tool list (they are in
//! the digest).
//!
//! [`ModelClient`]: crate::ModelClient
//! [`ModelClient::with_message_threads`]: crate::ModelClient::with_message_threads

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::wire::anthropic_threads::{self, ThreadPrefix};

/// How long Anthropic keeps a thread after its last request. An older one is not continued (the
/// request would only be rejected as `thread_not_found`).
pub const THREAD_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// The most conversations remembered; the one used least recently is dropped past it (its thread
/// has most likely expired, and its next request just opens a new one).
const MAX_CONVERSATIONS: usize = 10_000;

/// The threads of a process's conversations, shared by the clients bound to them. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct MessageThreads {
    states: Arc<Mutex<HashMap<String, ThreadState>>>,
}

/// Where one conversation stands.
#[derive(Debug, Clone)]
enum ThreadState {
    /// The endpoint rejected threads: requests go out whole.
    Off,
    /// The thread holds `held` messages, the last one the reply `reply_id`.
    Held {
        prefix: ThreadPrefix,
        held: usize,
        reply_id: String,
        at: Instant,
    },
}

impl MessageThreads {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets `session`'s thread (a session closed or left): its next request opens a new one.
    pub fn forget(&self, session: &str) {
        self.lock().remove(session);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ThreadState>> {
        self.states.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A client's conversation: the registry and the session id it keys.
#[derive(Debug, Clone)]
pub(crate) struct ThreadBinding {
    pub threads: MessageThreads,
    pub session: String,
}

/// How one request went out.
#[derive(Debug, Clone)]
pub(crate) enum ThreadRequest {
    /// No thread (threads are off for this conversation).
    Full,
    /// A new thread.
    Create,
    /// The rest of the thread after its first `held` messages.
    Continue { held: usize },
}

impl ThreadRequest {
    /// The body to send for the full request `body`.
    pub(crate) fn body(&self, body: &Value, reply_id: Option<&str>) -> Value {
        match (self, reply_id) {
            (Self::Full, _) => body.clone(),
            (Self::Continue { held }, Some(reply_id)) => {
                anthropic_threads::continuation(body, *held, reply_id)
            }
            (Self::Create | Self::Continue { .. }, _) => anthropic_threads::create(body),
        }
    }
}

/// What [`ThreadBinding::plan`] decided: the request and the reply it continues from.
#[derive(Debug, Clone)]
pub(crate) struct ThreadPlan {
    pub request: ThreadRequest,
    pub reply_id: Option<String>,
}

impl ThreadPlan {
    /// A request sent whole, outside any thread (threads are off for the conversation).
    pub(crate) fn is_full(&self) -> bool {
        matches!(self.request, ThreadRequest::Full)
    }

    pub(crate) fn body(&self, body: &Value) -> Value {
        self.request.body(body, self.reply_id.as_deref())
    }
}

impl ThreadBinding {
    /// How to send the full request `body` to `url` (with `beta` its `anthropic-beta` header).
    /// The conversation's state is taken: a reply is continued once, and a request that fails
    /// leaves a new thread for the next one.
    pub(crate) fn plan(&self, url: &str, beta: Option<&str>, body: &Value) -> ThreadPlan {
        let state = self.threads.lock().remove(&self.session);
        let create = |reason: &str| {
            tracing::info!(session = %self.session, reason, "message thread: a full request opens a new thread");
            ThreadPlan {
                request: ThreadRequest::Create,
                reply_id: None,
            }
        };
        let (prefix, held, reply_id, at) = match state {
            None => return create("no thread yet"),
            Some(ThreadState::Off) => {
                self.threads
                    .lock()
                    .insert(self.session.clone(), ThreadState::Off);
                return ThreadPlan {
                    request: ThreadRequest::Full,
                    reply_id: None,
                };
            }
            Some(ThreadState::Held {
                prefix,
                held,
                reply_id,
                at,
            }) => (prefix, held, reply_id, at),
        };
        if at.elapsed() >= THREAD_LIFETIME {
            return create("the thread expired (idle for 5 minutes)");
        }
        if anthropic_threads::message_count(body) <= held {
            return create(
                "the request is not longer than the thread (a compaction or an edit of the context removed messages)",
            );
        }
        let sent = anthropic_threads::prefix(url, beta, body, held);
        if sent.settings != prefix.settings {
            return create(
                "the model, endpoint, system prompt, tools or another fixed field changed",
            );
        }
        if sent.messages != prefix.messages {
            return create(
                "an earlier message changed (a compaction, a transform or an edit of the context)",
            );
        }
        tracing::debug!(session = %self.session, held, "message thread: continuing");
        ThreadPlan {
            request: ThreadRequest::Continue { held },
            reply_id: Some(reply_id),
        }
    }

    /// Threads off for this conversation (the endpoint refused the beta).
    pub(crate) fn turn_off(&self) {
        self.threads
            .lock()
            .insert(self.session.clone(), ThreadState::Off);
    }

    /// A rejected thread request: the plan to resend with (a new thread, or threads off), `None`
    /// when the rejection is not about the thread.
    pub(crate) fn after_rejection(
        &self,
        plan: &ThreadPlan,
        status: u16,
        body: &str,
    ) -> Option<ThreadPlan> {
        if matches!(plan.request, ThreadRequest::Full) {
            return None;
        }
        match anthropic_threads::rejection(status, body) {
            anthropic_threads::ThreadRejection::NewThread(code) => {
                tracing::info!(session = %self.session, code = %code, "message thread: the server could not continue the thread; resent as a new thread");
                Some(ThreadPlan {
                    request: ThreadRequest::Create,
                    reply_id: None,
                })
            }
            anthropic_threads::ThreadRejection::Unsupported(reason) => {
                tracing::info!(session = %self.session, reason = %reason, "message thread: the endpoint does not take threads; resent whole, threads off for this conversation");
                self.threads
                    .lock()
                    .insert(self.session.clone(), ThreadState::Off);
                Some(ThreadPlan {
                    request: ThreadRequest::Full,
                    reply_id: None,
                })
            }
            anthropic_threads::ThreadRejection::Other => None,
        }
    }

    /// Records the reply `reply_id` to a thread request: `with_reply` is the full request `body`
    /// with the reply appended as the next request will send it. Nothing is recorded when the
    /// request was not a thread's or the reply is not the one continued after `body`'s messages.
    pub(crate) fn record(
        &self,
        plan: &ThreadPlan,
        url: &str,
        beta: Option<&str>,
        body: &Value,
        with_reply: &Value,
        reply_id: &str,
    ) {
        if matches!(plan.request, ThreadRequest::Full) || reply_id.is_empty() {
            return;
        }
        let sent = anthropic_threads::message_count(body);
        let held = sent + 1;
        if anthropic_threads::message_count(with_reply) < held
            || anthropic_threads::prefix(url, beta, with_reply, sent)
                != anthropic_threads::prefix(url, beta, body, sent)
        {
            tracing::warn!(session = %self.session, "message thread: the reply could not be placed after the request; the next request opens a new thread");
            return;
        }
        let state = ThreadState::Held {
            prefix: anthropic_threads::prefix(url, beta, with_reply, held),
            held,
            reply_id: reply_id.to_owned(),
            at: Instant::now(),
        };
        let mut states = self.threads.lock();
        states.insert(self.session.clone(), state);
        if states.len() > MAX_CONVERSATIONS {
            let oldest = states
                .iter()
                .filter_map(|(session, state)| match state {
                    ThreadState::Held { at, .. } => Some((session.clone(), *at)),
                    ThreadState::Off => None,
                })
                .min_by_key(|(_, at)| *at)
                .map(|(session, _)| session);
            if let Some(oldest) = oldest {
                states.remove(&oldest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const URL: &str = "https://api.anthropic.com/v1/messages";

    fn binding(threads: &MessageThreads, session: &str) -> ThreadBinding {
        ThreadBinding {
            threads: threads.clone(),
            session: session.to_owned(),
        }
    }

    fn body(texts: &[&str]) -> Value {
        let messages: Vec<Value> = texts
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let role = if index % 2 == 0 { "user" } else { "assistant" };
                json!({"role": role, "content": [{"type": "text", "text": text}]})
            })
            .collect();
        json!({"model": "claude", "system": "s", "tools": [], "messages": messages})
    }

    /// Sends `texts` and records the reply `answer` as `reply_id`; the plan it went out with.
    fn exchange(
        binding: &ThreadBinding,
        texts: &[&str],
        answer: &str,
        reply_id: &str,
    ) -> ThreadPlan {
        let sent = body(texts);
        let plan = binding.plan(URL, None, &sent);
        let mut with_reply_texts = texts.to_vec();
        with_reply_texts.push(answer);
        binding.record(&plan, URL, None, &sent, &body(&with_reply_texts), reply_id);
        plan
    }

    #[test]
    fn a_conversation_continues_its_own_thread_and_no_other() {
        let threads = MessageThreads::new();
        let first = binding(&threads, "session-a");
        let plan = exchange(&first, &["hi"], "hello", "msg_1");
        assert!(matches!(plan.request, ThreadRequest::Create));
        let plan = exchange(&first, &["hi", "hello", "more"], "ok", "msg_2");
        assert!(matches!(plan.request, ThreadRequest::Continue { held: 2 }));
        assert_eq!(plan.reply_id.as_deref(), Some("msg_1"));
        let sent = plan.body(&body(&["hi", "hello", "more"]));
        assert_eq!(sent["messages"].as_array().map(Vec::len), Some(1));

        // Another session with the very same messages opens its own thread.
        let other = binding(&threads, "session-b");
        let plan = other.plan(URL, None, &body(&["hi", "hello", "more", "ok", "next"]));
        assert!(matches!(plan.request, ThreadRequest::Create));
    }

    #[test]
    fn a_changed_earlier_message_or_tool_list_opens_a_new_thread() {
        let threads = MessageThreads::new();
        let conversation = binding(&threads, "s");
        exchange(&conversation, &["hi"], "hello", "msg_1");
        let plan = conversation.plan(URL, None, &body(&["summary", "hello", "more"]));
        assert!(matches!(plan.request, ThreadRequest::Create));

        exchange(&conversation, &["hi"], "hello", "msg_2");
        let mut other_tools = body(&["hi", "hello", "more"]);
        other_tools["tools"] = json!([{"name": "bash"}]);
        assert!(matches!(
            conversation.plan(URL, None, &other_tools).request,
            ThreadRequest::Create
        ));
    }

    #[test]
    fn a_reply_is_continued_once() {
        let threads = MessageThreads::new();
        let conversation = binding(&threads, "s");
        exchange(&conversation, &["hi"], "hello", "msg_1");
        let next = body(&["hi", "hello", "more"]);
        assert!(matches!(
            conversation.plan(URL, None, &next).request,
            ThreadRequest::Continue { .. }
        ));
        // The first continuation failed (nothing recorded): the retry opens a new thread.
        assert!(matches!(
            conversation.plan(URL, None, &next).request,
            ThreadRequest::Create
        ));
    }

    #[test]
    fn an_endpoint_without_threads_turns_them_off_and_other_errors_pass() {
        let threads = MessageThreads::new();
        let conversation = binding(&threads, "s");
        let plan = conversation.plan(URL, None, &body(&["hi"]));
        assert!(
            conversation
                .after_rejection(&plan, 400, r#"{"error":{"message":"prompt is too long"}}"#)
                .is_none()
        );
        let expired = r#"{"error":{"details":{"error_code":"thread_not_found"}}}"#;
        let resend = conversation.after_rejection(&plan, 404, expired);
        assert!(matches!(
            resend.map(|plan| plan.request),
            Some(ThreadRequest::Create)
        ));
        let unknown = r#"{"error":{"message":"thread: Extra inputs are not permitted"}}"#;
        let resend = conversation.after_rejection(&plan, 400, unknown);
        assert!(matches!(
            resend.map(|plan| plan.request),
            Some(ThreadRequest::Full)
        ));
        let plan = exchange(&conversation, &["hi", "hello", "more"], "ok", "msg_3");
        assert!(matches!(plan.request, ThreadRequest::Full));
        assert!(plan.body(&body(&["hi"])).get("thread").is_none());
    }

    #[test]
    fn forgetting_a_session_starts_it_afresh() {
        let threads = MessageThreads::new();
        let conversation = binding(&threads, "s");
        exchange(&conversation, &["hi"], "hello", "msg_1");
        threads.forget("s");
        assert!(matches!(
            conversation
                .plan(URL, None, &body(&["hi", "hello", "x"]))
                .request,
            ThreadRequest::Create
        ));
    }
}

//! The session's context messages parsed once for the many views an exported page carries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use ctxkit_protocol::AgentMessage;
use ctxkit_session::{ContextMessage, Session, SessionError};
use ctxkit_transform::MeasuredMessage;

use crate::error::WebError;

/// The session's context messages, each parsed once for the views that hold it (a page's views
/// of one branch share most of their messages; parsing them again for each view was half of an
/// export's time). Views are built a batch at a time; what the last two batches used is kept
/// ([`ParsedMessages::next_batch`]), so memory stays about two views' messages, not the session's.
#[derive(Debug, Default)]
pub(crate) struct ParsedMessages {
    batches: Mutex<Batches>,
    /// Held while a view reads the messages it lacks, when views read one at a time
    /// ([`ParsedMessages::one_reader_at_a_time`]).
    reading: Option<Mutex<()>>,
}

#[derive(Debug, Default)]
struct Batches {
    current: HashMap<ContextMessage, Arc<MeasuredMessage>>,
    previous: HashMap<ContextMessage, Arc<MeasuredMessage>>,
}

impl Batches {
    /// A message parsed for this batch or the one before (then kept for this one too).
    fn find(&mut self, message: &ContextMessage) -> Option<Arc<MeasuredMessage>> {
        if let Some(found) = self.current.get(message) {
            return Some(Arc::clone(found));
        }
        let found = self.previous.get(message)?;
        self.current.insert(*message, Arc::clone(found));
        Some(Arc::clone(found))
    }
}

impl ParsedMessages {
    /// Messages for views built at once that read them one view at a time: the second view waits
    /// for the first's messages rather than reading the same ones beside it (two views of one
    /// branch started together each held a copy of all its messages).
    pub(crate) fn one_reader_at_a_time() -> Self {
        Self {
            batches: Mutex::default(),
            reading: Some(Mutex::new(())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Batches> {
        self.batches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The typed forms of `messages` that can be read, in order, each with its message: those
    /// parsed for this batch or the last shared, the others parsed now (on all cores, as
    /// [`Session::messages`] reads them) and kept. A message whose entry has a field of the wrong
    /// type is left out (the page lists it among the file's problems).
    pub(crate) fn get(
        &self,
        session: &Session,
        messages: &[ContextMessage],
    ) -> Result<Vec<(ContextMessage, Arc<MeasuredMessage>)>, WebError> {
        let _reading = self
            .reading
            .as_ref()
            .map(|reading| reading.lock().unwrap_or_else(PoisonError::into_inner));
        let known: Vec<Option<Arc<MeasuredMessage>>> = {
            let mut batches = self.lock();
            messages
                .iter()
                .map(|message| batches.find(message))
                .collect()
        };
        let missing: Vec<ContextMessage> = messages
            .iter()
            .zip(&known)
            .filter(|(_, known)| known.is_none())
            .map(|(message, _)| *message)
            .collect();
        let mut fresh = readable_messages(session, &missing)?
            .into_iter()
            .map(|message| message.map(|message| Arc::new(MeasuredMessage::new(message))));
        let mut batches = self.lock();
        let mut all = Vec::with_capacity(messages.len());
        for (message, known) in messages.iter().zip(known) {
            let found = match known {
                Some(found) => found,
                None => match fresh.next() {
                    Some(Some(found)) => found,
                    Some(None) => continue,
                    None => {
                        return Err(WebError::UnknownEntry {
                            id: format!("#{}", message.entry),
                        });
                    }
                },
            };
            // The copy kept is the one used: a view that parsed a message while another did
            // the same lets its own copy go, so views built at once hold each message once.
            let kept = batches.current.entry(*message).or_insert(found);
            all.push((*message, Arc::clone(kept)));
        }
        Ok(all)
    }

    /// Starts a new batch of views: messages neither it nor the batch just built use are let go.
    pub(crate) fn next_batch(&self) {
        let mut batches = self.lock();
        batches.previous = std::mem::take(&mut batches.current);
    }
}

/// The messages parsed by the contexts `ctxkit view` builds of one version of the session, shared
/// while any of them runs: two builds at once on a 40,000-message session each read the 58 MB
/// of messages (about 150 MB apiece). Held weakly, so the messages are let go with the last build
/// that reads them; a newer version starts afresh.
#[derive(Debug, Default)]
pub(crate) struct SharedParsed {
    last: Mutex<Option<(String, Weak<ParsedMessages>)>>,
}

impl SharedParsed {
    /// The messages parsed for `version` by the builds still running, or a new set when none is.
    pub(crate) fn for_version(&self, version: &str) -> Arc<ParsedMessages> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((shared_version, shared)) = last.as_ref()
            && shared_version == version
            && let Some(shared) = shared.upgrade()
        {
            return shared;
        }
        let fresh = Arc::new(ParsedMessages::one_reader_at_a_time());
        *last = Some((version.to_owned(), Arc::downgrade(&fresh)));
        fresh
    }

    /// Whether a build asked for messages (a test's view of the builds that went on).
    #[cfg(test)]
    pub(crate) fn was_asked(&self) -> bool {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// The typed forms of `messages`, in order; `None` for a message whose entry has a field of the
/// wrong type (other commands read past such an entry too: `ctxkit check` reports it). A line
/// that can no longer be read back is still an error.
pub(crate) fn readable_messages(
    session: &Session,
    messages: &[ContextMessage],
) -> Result<Vec<Option<AgentMessage>>, WebError> {
    match session.messages(messages) {
        Ok(all) => Ok(all.into_iter().map(Some).collect()),
        Err(SessionError::InvalidEntry { .. }) => messages
            .iter()
            .map(|message| match session.message(message) {
                Ok(read) => Ok(Some(read)),
                Err(SessionError::InvalidEntry { .. }) => Ok(None),
                Err(error) => Err(error.into()),
            })
            .collect(),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    use ctxkit_session::build_context;
    use ctxkit_settings::TransformSettings;

    use super::*;
    use crate::contexts::View;

    /// Views built with one table of parsed messages share their messages, and each is what a
    /// view built alone makes.
    #[test]
    fn views_share_the_messages_parsed_for_an_earlier_view() {
        let session = crate::contexts::tests::long_run("openai", "gpt-5", 40);
        let parsed = ParsedMessages::default();
        let settings = TransformSettings::default();
        let last = session.index().entries().len() - 1;
        let record = |at, parsed: &ParsedMessages| {
            let redactor = crate::redact::Redactor::new(Vec::new(), &[]).unwrap();
            let options = crate::model::PageOptions::new("t", redactor);
            let view = View::build(&session, parsed, at, &settings, 200_000, usize::MAX);
            view.unwrap().unwrap().record(&options.renderer(100))
        };
        for at in [last - 20, last, last - 1] {
            assert_eq!(record(at, &parsed), record(at, &ParsedMessages::default()));
        }
        let context = build_context(session.index(), Some(last));
        let first = parsed.get(&session, &context.messages).unwrap();
        let again = parsed.get(&session, &context.messages).unwrap();
        assert_eq!(first.len(), context.messages.len());
        assert!(
            first
                .iter()
                .zip(&again)
                .all(|((_, a), (_, b))| Arc::ptr_eq(a, b))
        );
        assert_eq!(parsed.lock().current.len(), context.messages.len());
        // Two batches later what no view used is let go; a message used again is kept.
        parsed.next_batch();
        parsed.get(&session, &context.messages[..5]).unwrap();
        parsed.next_batch();
        assert_eq!(parsed.lock().previous.len(), 5);
        assert!(parsed.lock().current.is_empty());
        let kept = parsed.get(&session, &context.messages[..5]).unwrap();
        assert!(
            kept.iter()
                .zip(&first)
                .all(|((_, a), (_, b))| Arc::ptr_eq(a, b))
        );
    }

    /// Two contexts `ctxkit view` built at once on a 40,000-message session each read all its
    /// messages (the view's peak went past 500 MB): views of one version built at once hold each
    /// message once, and the messages go with the last build that reads them.
    #[test]
    fn views_built_at_once_hold_each_message_once() {
        let session = crate::contexts::tests::long_run("openai", "gpt-5", 400);
        let last = session.index().entries().len() - 1;
        let context = build_context(session.index(), Some(last));
        let shared = SharedParsed::default();
        let start = std::sync::Barrier::new(2);
        let (first, second) = std::thread::scope(|scope| {
            let read = || {
                let parsed = shared.for_version("1-100");
                start.wait();
                parsed.get(&session, &context.messages).unwrap()
            };
            let first = scope.spawn(read);
            let second = scope.spawn(read);
            (first.join().unwrap(), second.join().unwrap())
        });
        assert!(
            first
                .iter()
                .zip(&second)
                .all(|((_, a), (_, b))| Arc::ptr_eq(a, b))
        );
        let held = Arc::downgrade(&first[0].1);
        drop((first, second));
        assert!(held.upgrade().is_none(), "let go with the last build");
        let parsed = shared.for_version("1-100");
        assert!(parsed.lock().current.is_empty(), "read afresh");
        assert!(!Arc::ptr_eq(&parsed, &shared.for_version("2-200")));
    }
}

//! The session's context messages parsed once for the many views an exported page carries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

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
            batches
                .current
                .entry(*message)
                .or_insert_with(|| Arc::clone(&found));
            all.push((*message, found));
        }
        Ok(all)
    }

    /// Starts a new batch of views: messages neither it nor the batch just built use are let go.
    pub(crate) fn next_batch(&self) {
        let mut batches = self.lock();
        batches.previous = std::mem::take(&mut batches.current);
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
}

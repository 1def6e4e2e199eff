//! Recall on a real session: of the identifiers at risk at a call (a tool result showed them first
//! and the call's reply names them again, `session`), how many the request of that call still holds,
//! as a whole word anywhere in its messages' JSON (one Aho-Corasick pass per request).
//!
//! Two breakdowns per request: the *sample*, the identifiers at risk at this call (averaged over
//! the run as "run mean" and summed as `recall_calls`); and the *view*, every identifier at risk at
//! this call or an earlier one, which for the last request is the "final view".

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use ctxkit_protocol::{AgentMessage, ContentBlock};

use super::identifiers::stands_alone;
use super::recall::{RecallBreakdown, RecallSample, note_view_message};
use super::trace::{IdentifierKind, Trace};

/// What one request shows of a real session's at-risk identifiers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct NamedObservation {
    /// Identifiers at risk at this call.
    pub sample: RecallBreakdown,
    /// The same with the model-summary stand-in.
    pub sample_stand_in: RecallBreakdown,
    /// Identifiers at risk at this call or before.
    pub view: RecallBreakdown,
    /// The same with the model-summary stand-in.
    pub view_stand_in: RecallBreakdown,
    /// The identifiers at risk at this call that its request did not hold.
    pub missed: Vec<RecallMiss>,
}

/// An identifier a call's reply named again that the call's request no longer held (a real
/// session): where a context strategy lost what the model went on to use.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecallMiss {
    /// The call (0-based) whose reply named it.
    pub call: usize,
    pub identifier: String,
    pub kind: IdentifierKind,
    /// The tool call whose result showed it first, and its tool's name.
    pub tool_call_id: String,
    pub tool: String,
    /// The call (0-based) whose reply made that tool call: `call - source_call` is how many
    /// calls the name went unnamed.
    pub source_call: usize,
    /// Whether that result was still in the request (cut to a marker that left the name out), or
    /// gone (a summary replaced it).
    pub source_in_view: bool,
    /// Whether the request held a summary.
    pub summarized: bool,
}

/// Checks requests against a real session's at-risk identifiers.
pub(crate) struct NamedTracker<'a> {
    trace: &'a Trace,
    matcher: AhoCorasick,
    found: Vec<bool>,
    /// The tool of each identifier's source call (`RecallMiss::tool`).
    tools: Vec<String>,
    /// The call whose reply made each identifier's source tool call (`RecallMiss::source_call`).
    source_calls: Vec<usize>,
    /// The identifiers each message of the previous request holds, by its JSON's address (the JSON
    /// is kept with them, so the address names that text while it is here): a message a request
    /// reuses is not scanned again.
    scanned: HashMap<usize, (Arc<str>, Vec<usize>)>,
}

impl<'a> NamedTracker<'a> {
    pub(crate) fn new(trace: &'a Trace) -> Result<Self, aho_corasick::BuildError> {
        let matcher = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .match_kind(MatchKind::Standard)
            .build(trace.named.iter().map(|named| &named.identifier))?;
        let tool_calls: HashMap<&str, (&str, usize)> = trace
            .tasks
            .iter()
            .flat_map(|task| &task.calls)
            .enumerate()
            .flat_map(|(index, planned)| {
                planned
                    .reply
                    .content
                    .iter()
                    .map(move |block| (index, block))
            })
            .filter_map(|(index, block)| match block {
                ContentBlock::ToolCall(call) => {
                    Some((call.id.as_str(), (call.name.as_str(), index)))
                }
                ContentBlock::Text(_)
                | ContentBlock::Image(_)
                | ContentBlock::Thinking(_)
                | ContentBlock::Unknown(_) => None,
            })
            .collect();
        let source = |named: &super::session::Named| tool_calls.get(named.tool_call_id.as_str());
        let tools = trace
            .named
            .iter()
            .map(|named| source(named).map_or_else(String::new, |(tool, _)| (*tool).to_owned()))
            .collect();
        let source_calls = trace
            .named
            .iter()
            .map(|named| source(named).map_or(0, |(_, index)| *index))
            .collect();
        Ok(Self {
            trace,
            matcher,
            found: vec![false; trace.named.len()],
            scanned: HashMap::new(),
            tools,
            source_calls,
        })
    }

    /// The identifiers `text` holds standing alone, by their index in the trace.
    fn identifiers_in(&self, text: &str) -> Vec<usize> {
        let bytes = text.as_bytes();
        self.matcher
            .find_overlapping_iter(text)
            .filter(|hit| stands_alone(bytes, hit.start(), hit.end()))
            .map(|hit| hit.pattern().as_usize())
            .collect()
    }

    /// The recall of request `call` (0-based): `messages` as sent, `serialized` their JSON.
    pub(crate) fn observe(
        &mut self,
        messages: &[AgentMessage],
        serialized: &[Arc<str>],
        call: usize,
    ) -> NamedObservation {
        let kinds = &IdentifierKind::NAMED;
        let mut observation = NamedObservation {
            sample: RecallBreakdown::empty(kinds),
            sample_stand_in: RecallBreakdown::empty(kinds),
            view: RecallBreakdown::empty(kinds),
            view_stand_in: RecallBreakdown::empty(kinds),
            missed: Vec::new(),
        };
        let due =
            |named: &super::session::Named| named.calls.first().is_some_and(|first| *first <= call);
        if !self.trace.named.iter().any(due) {
            return observation;
        }
        self.found.fill(false);
        let mut present: HashSet<&str> = HashSet::new();
        let mut summarized = false;
        let mut scanned = HashMap::with_capacity(serialized.len());
        for (message, text) in messages.iter().zip(serialized) {
            note_view_message(message, &mut present, &mut summarized);
            let address = text.as_ptr() as usize;
            let hits = match self.scanned.remove(&address) {
                Some((_, hits)) => hits,
                None => self.identifiers_in(text),
            };
            for &pattern in &hits {
                self.found[pattern] = true;
            }
            scanned.insert(address, (Arc::clone(text), hits));
        }
        self.scanned = scanned;
        for (index, named) in self.trace.named.iter().enumerate() {
            if !due(named) {
                continue;
            }
            let found = self.found[index];
            // The stand-in keeps the file paths of a summarized span: the source result is gone
            // and a summary is shown.
            let kept = summarized
                && !present.contains(named.tool_call_id.as_str())
                && named.kind == IdentifierKind::FilePath;
            let sample = RecallSample {
                planted: 1,
                at_risk: 1,
                recalled: usize::from(found),
            };
            let stand_in = RecallSample {
                recalled: usize::from(found || kept),
                ..sample
            };
            observation.view.add(named.kind, sample);
            observation.view_stand_in.add(named.kind, stand_in);
            if named.calls.binary_search(&call).is_ok() {
                if !found {
                    observation.missed.push(RecallMiss {
                        call,
                        identifier: named.identifier.clone(),
                        kind: named.kind,
                        tool_call_id: named.tool_call_id.clone(),
                        tool: self.tools.get(index).cloned().unwrap_or_default(),
                        source_call: self.source_calls.get(index).copied().unwrap_or_default(),
                        source_in_view: present.contains(named.tool_call_id.as_str()),
                        summarized,
                    });
                }
                observation.sample.add(named.kind, sample);
                observation.sample_stand_in.add(named.kind, stand_in);
            }
        }
        observation
    }
}

impl RecallBreakdown {
    /// Adds `other` to this one, kind by kind.
    pub(crate) fn merge(&mut self, other: &Self) {
        for kind in &other.by_kind {
            self.add(kind.kind, kind.sample);
        }
    }
}

//! Identifier recall: of the planted identifiers whose source message is no longer shown verbatim
//! (it was pruned, dropped or summarized), how many still appear byte for byte somewhere in the
//! request.
//!
//! A source is verbatim when the request holds it unchanged: the tool result with the same call id
//! and the same content, or the task prompt with the same text. Its identifiers are visible and not
//! at risk. Every other message is scanned (one Aho-Corasick pass over its JSON) for the at-risk
//! ones; a verbatim source cannot hold another source's identifier, since each is planted once.

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use ctxkit_protocol::{AgentMessage, MessageContent};
use ctxkit_session::COMPACTION_SUMMARY_PREFIX;
use serde::Serialize;

use super::trace::{IdentifierKind, Source, Trace};

/// What one request shows of the identifiers planted so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RecallSample {
    /// Identifiers planted in messages sent so far.
    pub planted: usize,
    /// Of those, identifiers whose source message is not in the request verbatim.
    pub at_risk: usize,
    /// Of the at-risk ones, identifiers still found in the request.
    pub recalled: usize,
}

impl RecallSample {
    /// Identifiers the model can see: verbatim ones plus recalled at-risk ones.
    pub fn visible(&self) -> usize {
        self.planted - self.at_risk + self.recalled
    }

    /// `recalled / at_risk`, `None` when nothing is at risk.
    pub fn recall(&self) -> Option<f64> {
        (self.at_risk > 0).then(|| self.recalled as f64 / self.at_risk as f64)
    }

    pub(crate) fn add(&mut self, other: Self) {
        self.planted += other.planted;
        self.at_risk += other.at_risk;
        self.recalled += other.recalled;
    }
}

/// The recall of one kind of identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KindRecall {
    pub kind: IdentifierKind,
    #[serde(flatten)]
    pub sample: RecallSample,
}

/// A request's recall, in all and per identifier kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RecallBreakdown {
    pub all: RecallSample,
    pub by_kind: Vec<KindRecall>,
}

/// Checks requests against the trace's planted identifiers.
pub(crate) struct RecallTracker<'a> {
    trace: &'a Trace,
    matcher: AhoCorasick,
    /// Tool call id → the planted identifiers of its result.
    results: HashMap<&'a str, (&'a MessageContent, Vec<usize>)>,
    /// Task prompt text → its planted identifiers.
    prompts: HashMap<&'a str, Vec<usize>>,
    verbatim: Vec<bool>,
    found: Vec<bool>,
    /// What each message of the previous request showed, by its JSON's address: a request shares
    /// an unchanged message's JSON with the one before it ([`crate::meter::Request::measure_after`]),
    /// so each message is compared and scanned once, not at every request.
    shown: HashMap<usize, (std::sync::Arc<str>, Shown)>,
}

/// What one message shows of the planted identifiers.
enum Shown {
    /// It is their source, verbatim.
    Verbatim(Vec<usize>),
    /// It is no source; these were found in its text.
    Found(Vec<usize>),
}

impl<'a> RecallTracker<'a> {
    pub(crate) fn new(trace: &'a Trace) -> Result<Self, aho_corasick::BuildError> {
        let matcher = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::DFA))
            .build(trace.planted.iter().map(|planted| &planted.identifier))?;
        let contents: HashMap<&str, &MessageContent> = trace
            .tasks
            .iter()
            .flat_map(|task| &task.calls)
            .flat_map(|call| &call.results)
            .filter_map(AgentMessage::as_tool_result)
            .map(|result| (result.tool_call_id.as_str(), &result.content))
            .collect();
        let mut results: HashMap<&str, (&MessageContent, Vec<usize>)> = HashMap::new();
        let mut prompts: HashMap<&str, Vec<usize>> = HashMap::new();
        for (index, planted) in trace.planted.iter().enumerate() {
            match &planted.source {
                Source::ToolResult { tool_call_id } => {
                    if let Some(content) = contents.get(tool_call_id.as_str()) {
                        results
                            .entry(tool_call_id.as_str())
                            .or_insert_with(|| (content, Vec::new()))
                            .1
                            .push(index);
                    }
                }
                Source::Task { task } => {
                    let prompt = trace
                        .tasks
                        .get(*task)
                        .and_then(|task| task.prompt.iter().find_map(AgentMessage::as_user));
                    if let Some(MessageContent::Text(text)) = prompt.map(|user| &user.content) {
                        prompts.entry(text.as_str()).or_default().push(index);
                    }
                }
            }
        }
        let count = trace.planted.len();
        Ok(Self {
            trace,
            matcher,
            results,
            prompts,
            verbatim: vec![false; count],
            found: vec![false; count],
            shown: HashMap::new(),
        })
    }

    /// The recall of one request: `messages` as sent, `serialized` their JSON, `request` the 0-based
    /// index of the call (identifiers planted for later calls do not count yet). Returned twice:
    /// as measured (the summaries as written, by the offline summarizer), and with the
    /// model-summary stand-in ([`stand_in_keeps`]) applied.
    pub(crate) fn observe(
        &mut self,
        messages: &[AgentMessage],
        serialized: &[std::sync::Arc<str>],
        request: usize,
    ) -> (RecallBreakdown, RecallBreakdown) {
        let planted = self
            .trace
            .planted
            .partition_point(|planted| planted.first_request <= request);
        self.verbatim.fill(false);
        self.found.fill(false);
        let mut present: HashSet<&str> = HashSet::new();
        let mut summarized = false;
        let mut previous = std::mem::take(&mut self.shown);
        for (message, text) in messages.iter().zip(serialized) {
            note_view_message(message, &mut present, &mut summarized);
            let address = std::sync::Arc::as_ptr(text).cast::<u8>() as usize;
            let entry = match previous.remove(&address) {
                Some(entry) => entry,
                None => (text.clone(), self.shown_by(message, text)),
            };
            let (marks, identifiers) = match &entry.1 {
                Shown::Verbatim(identifiers) => (&mut self.verbatim, identifiers),
                Shown::Found(identifiers) => (&mut self.found, identifiers),
            };
            for index in identifiers {
                marks[*index] = true;
            }
            self.shown.insert(address, entry);
        }
        let mut breakdown = RecallBreakdown::empty(&IdentifierKind::ALL);
        let mut stand_in = RecallBreakdown::empty(&IdentifierKind::ALL);
        for (index, planted_identifier) in self.trace.planted.iter().take(planted).enumerate() {
            let at_risk = !self.verbatim[index];
            let sample = RecallSample {
                planted: 1,
                at_risk: usize::from(at_risk),
                recalled: usize::from(at_risk && self.found[index]),
            };
            breakdown.add(planted_identifier.kind, sample);
            let absent = match &planted_identifier.source {
                Source::ToolResult { tool_call_id } => !present.contains(tool_call_id.as_str()),
                Source::Task { .. } => true,
            };
            let kept = at_risk && summarized && absent && stand_in_keeps(planted_identifier);
            stand_in.add(
                planted_identifier.kind,
                RecallSample {
                    recalled: usize::from(at_risk && (self.found[index] || kept)),
                    ..sample
                },
            );
        }
        (breakdown, stand_in)
    }

    /// What `message` (whose JSON is `text`) shows: its source's identifiers when it is a source
    /// sent unchanged, else the identifiers its text holds.
    fn shown_by(&self, message: &AgentMessage, text: &str) -> Shown {
        let source = match message {
            AgentMessage::ToolResult(result) => self
                .results
                .get(result.tool_call_id.as_str())
                .filter(|(content, _)| **content == result.content)
                .map(|(_, identifiers)| identifiers),
            AgentMessage::User(user) => match &user.content {
                MessageContent::Text(text) => self.prompts.get(text.as_str()),
                MessageContent::Blocks(_) => None,
            },
            AgentMessage::Assistant(_)
            | AgentMessage::BashExecution(_)
            | AgentMessage::Custom(_)
            | AgentMessage::BranchSummary(_)
            | AgentMessage::CompactionSummary(_)
            | AgentMessage::Unknown(_) => None,
        };
        match source {
            Some(identifiers) => Shown::Verbatim(identifiers.clone()),
            None => Shown::Found(
                self.matcher
                    .find_iter(text)
                    .map(|found| found.pattern().as_usize())
                    .collect(),
            ),
        }
    }
}

/// The text of a user message: its text, or its first text block.
pub(crate) fn text_of_user(content: &MessageContent) -> Option<&str> {
    match content {
        MessageContent::Text(text) => Some(text),
        MessageContent::Blocks(blocks) => blocks.iter().find_map(|block| block.as_text()),
    }
}

/// The model-summary stand-in: what a good checkpoint summary keeps of a summarized span. It keeps
/// everything the user asked for (every identifier of a task prompt: the goal, the files, functions,
/// error codes and request ids named in it) and the files the work touched (every file path seen
/// in a tool result); the other identifiers buried in tool output (function names, error codes,
/// request ids on one line of a long result) it keeps only if the measured summary does.
pub(crate) fn stand_in_keeps(planted: &super::trace::Planted) -> bool {
    match planted.source {
        Source::Task { .. } => true,
        Source::ToolResult { .. } => planted.kind == IdentifierKind::FilePath,
    }
}

impl RecallBreakdown {
    /// Zero of everything, with a row for each of `kinds`.
    pub(crate) fn empty(kinds: &[IdentifierKind]) -> Self {
        Self {
            all: RecallSample::default(),
            by_kind: kinds
                .iter()
                .map(|kind| KindRecall {
                    kind: *kind,
                    sample: RecallSample::default(),
                })
                .collect(),
        }
    }

    pub(crate) fn add(&mut self, kind: IdentifierKind, sample: RecallSample) {
        self.all.add(sample);
        if let Some(entry) = self.by_kind.iter_mut().find(|entry| entry.kind == kind) {
            entry.sample.add(sample);
        }
    }
}

/// Notes what one message of a view shows: the tool results present (by call id), and whether a
/// compaction summary is in the view (the view is in provider form: a summary is a user message
/// with the prefix, or a `compactionSummary` before conversion).
pub(super) fn note_view_message<'a>(
    message: &'a AgentMessage,
    present: &mut HashSet<&'a str>,
    summarized: &mut bool,
) {
    match message {
        AgentMessage::ToolResult(result) => {
            present.insert(result.tool_call_id.as_str());
        }
        AgentMessage::User(user) => {
            *summarized |= text_of_user(&user.content)
                .is_some_and(|text| text.starts_with(COMPACTION_SUMMARY_PREFIX));
        }
        AgentMessage::CompactionSummary(_) => *summarized = true,
        AgentMessage::Assistant(_)
        | AgentMessage::BashExecution(_)
        | AgentMessage::Custom(_)
        | AgentMessage::BranchSummary(_)
        | AgentMessage::Unknown(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Request;
    use crate::trace::{TraceOptions, generate_trace};
    use ctxkit_protocol::{ContentBlock, JsonObject, UserMessage};

    fn trace() -> Trace {
        generate_trace(TraceOptions {
            calls: 120,
            seed: 3,
        })
    }

    fn observe(
        tracker: &mut RecallTracker<'_>,
        view: &[AgentMessage],
        call: usize,
    ) -> RecallSample {
        let request = Request::measure(view).unwrap();
        tracker.observe(view, &request.messages, call).0.all
    }

    fn text_of(message: &AgentMessage) -> String {
        serde_json::to_string(message).unwrap()
    }

    #[test]
    fn a_full_view_puts_nothing_at_risk() {
        let trace = trace();
        let mut tracker = RecallTracker::new(&trace).unwrap();
        let view: Vec<AgentMessage> = trace.messages().collect();
        let sample = observe(&mut tracker, &view, trace.calls());
        assert_eq!(sample.planted, trace.planted.len());
        assert_eq!((sample.at_risk, sample.recalled), (0, 0));
        assert_eq!(sample.visible(), sample.planted);
        assert_eq!(sample.recall(), None);
    }

    #[test]
    fn dropped_sources_are_at_risk_and_count_only_where_they_still_appear() {
        let trace = trace();
        let mut tracker = RecallTracker::new(&trace).unwrap();
        let all: Vec<AgentMessage> = trace.messages().collect();
        // Drop the first task prompt (4 identifiers) and keep the rest.
        let first = &trace.planted[..4];
        assert!(
            first
                .iter()
                .all(|planted| planted.source == Source::Task { task: 0 })
        );
        let mut view = all[1..].to_vec();
        let sample = observe(&mut tracker, &view, trace.calls());
        assert_eq!((sample.at_risk, sample.recalled), (4, 0));
        assert_eq!(sample.recall(), Some(0.0));
        // A summary that names two of them, plus an unrelated string, recalls exactly two.
        let summary = format!(
            "Summary: `{}` and {} were involved; also src/other/file_9999.rs",
            first[0].identifier, first[2].identifier
        );
        view.insert(
            0,
            AgentMessage::User(UserMessage {
                content: ctxkit_protocol::MessageContent::Text(summary),
                timestamp: None,
                extra: JsonObject::new(),
            }),
        );
        let sample = observe(&mut tracker, &view, trace.calls());
        assert_eq!((sample.at_risk, sample.recalled), (4, 2));
        assert_eq!(sample.visible(), sample.planted - 2);
    }

    #[test]
    fn a_request_sharing_the_last_ones_messages_counts_as_if_measured_afresh() {
        let trace = trace();
        let all: Vec<AgentMessage> = trace.messages().collect();
        let first = &trace.planted[..4];
        let summary = AgentMessage::User(UserMessage {
            content: ctxkit_protocol::MessageContent::Text(format!(
                "Summary: `{}` was involved",
                first[1].identifier
            )),
            timestamp: None,
            extra: JsonObject::new(),
        });
        // Every message first, then the first prompt replaced by a summary naming one of its four
        // identifiers: the second request reuses the first one's JSON of the messages it keeps.
        let mut shared = RecallTracker::new(&trace).unwrap();
        let earlier = Request::measure(&all).unwrap();
        shared.observe(&all, &earlier.messages, trace.calls());
        let later: Vec<AgentMessage> = std::iter::once(summary)
            .chain(all[1..].iter().cloned())
            .collect();
        let reused = Request::measure_after(Some((&all, &earlier)), &later).unwrap();
        assert!(std::sync::Arc::ptr_eq(
            &reused.messages[1],
            &earlier.messages[1]
        ));
        let sample = shared
            .observe(&later, &reused.messages, trace.calls())
            .0
            .all;
        let mut fresh = RecallTracker::new(&trace).unwrap();
        assert_eq!(sample, observe(&mut fresh, &later, trace.calls()));
        assert_eq!((sample.at_risk, sample.recalled), (4, 1));
        // And back to every message: nothing at risk, though the summary's scan was remembered.
        let again = Request::measure_after(Some((&later, &reused)), &all).unwrap();
        let sample = shared.observe(&all, &again.messages, trace.calls()).0.all;
        assert_eq!((sample.at_risk, sample.recalled), (0, 0));
    }

    #[test]
    fn a_changed_tool_result_is_at_risk_even_when_it_keeps_the_identifier() {
        let trace = trace();
        let mut tracker = RecallTracker::new(&trace).unwrap();
        let planted = trace
            .planted
            .iter()
            .find(|planted| matches!(planted.source, Source::ToolResult { .. }))
            .unwrap()
            .clone();
        let Source::ToolResult { tool_call_id } = &planted.source else {
            unreachable!()
        };
        let mut view: Vec<AgentMessage> = trace.messages().collect();
        let position = view
            .iter()
            .position(|message| {
                matches!(message, AgentMessage::ToolResult(result) if &result.tool_call_id == tool_call_id)
            })
            .unwrap();
        // Cut the result to the planted line plus a marker: changed, so at risk, but recalled.
        let AgentMessage::ToolResult(result) = &mut view[position] else {
            unreachable!()
        };
        let kept = text_of(&AgentMessage::ToolResult(result.clone()))
            .lines()
            .find(|line| line.contains(planted.identifier.as_str()))
            .map(|_| format!("…\n{}\n[cut]", planted.identifier))
            .unwrap();
        result.content = ctxkit_protocol::MessageContent::Blocks(vec![ContentBlock::text(kept)]);
        let sample = observe(&mut tracker, &view, trace.calls());
        assert_eq!((sample.at_risk, sample.recalled), (1, 1));
        // Cut without the line: at risk and lost.
        let AgentMessage::ToolResult(result) = &mut view[position] else {
            unreachable!()
        };
        result.content = ctxkit_protocol::MessageContent::Blocks(vec![ContentBlock::text("[cut]")]);
        let sample = observe(&mut tracker, &view, trace.calls());
        assert_eq!((sample.at_risk, sample.recalled), (1, 0));
    }

    #[test]
    fn the_stand_in_keeps_task_identifiers_of_a_summarized_span_only() {
        let trace = trace();
        let mut tracker = RecallTracker::new(&trace).unwrap();
        let all: Vec<AgentMessage> = trace.messages().collect();
        let user = |text: String| {
            AgentMessage::User(UserMessage {
                content: ctxkit_protocol::MessageContent::Text(text),
                timestamp: None,
                extra: JsonObject::new(),
            })
        };
        // The first task prompt is gone and no summary is shown: nothing is kept.
        let mut view = all[1..].to_vec();
        let request = Request::measure(&view).unwrap();
        let (written, stand_in) = tracker.observe(&view, &request.messages, trace.calls());
        assert_eq!((written.all.at_risk, written.all.recalled), (4, 0));
        assert_eq!(stand_in.all.recalled, 0);
        // A summary that names none of them: the stand-in keeps all four task identifiers.
        view.insert(
            0,
            user(format!(
                "{COMPACTION_SUMMARY_PREFIX}Work went on.\n</summary>"
            )),
        );
        let request = Request::measure(&view).unwrap();
        let (written, stand_in) = tracker.observe(&view, &request.messages, trace.calls());
        assert_eq!(written.all.recalled, 0);
        assert_eq!((stand_in.all.at_risk, stand_in.all.recalled), (4, 4));
    }

    #[test]
    fn identifiers_of_later_calls_do_not_count_yet() {
        let trace = trace();
        let mut tracker = RecallTracker::new(&trace).unwrap();
        let sample = observe(&mut tracker, &[], 0);
        // Only the first task's prompt can be in request 0.
        assert_eq!(sample.planted, 4);
        assert_eq!((sample.at_risk, sample.recalled), (4, 0));
    }
}

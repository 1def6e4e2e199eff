//! A message measured once for every view that holds it.
//!
//! An exported page builds the model's view at each request of a branch, and the engine one before
//! every model call: hundreds of views over the same messages, each transformed from scratch. What
//! the layers measure of an unchanged message — its token estimate, the names it shows the model,
//! what cutting it or its calls would save — depends only on the message and the cut settings, so
//! a [`MeasuredMessage`] keeps each measure beside the message the first time a view asks for it.
//! The cut the prune layer makes of it is kept too, with what it depended on (the cut settings,
//! the block's calls, a fingerprint of the names the model reads before it), and taken again by
//! the next view whose inputs are the same. [`transform_measured`] reads the measures; its view,
//! made owned ([`MeasuredView::into_output`]), is exactly [`crate::transform_context`]'s.
//!
//! A measure that depends on the settings is kept with the settings it was taken under
//! ([`CutKey`]) and measured again (not kept) under others.

use std::borrow::{Borrow, Cow};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ctxkit_protocol::AgentMessage;
use ctxkit_tokens::estimate_tokens;

use crate::prune::PrunedMessage;
use crate::view::Slot;
use crate::view::assistant_chars;
use crate::{TransformOutput, TransformReport, TransformSettings};

/// A message of a view and what the transforms have measured of it so far. Share it (in an `Arc`)
/// between the views that hold the message.
#[derive(Debug)]
pub struct MeasuredMessage {
    message: AgentMessage,
    memo: Memo,
}

impl MeasuredMessage {
    /// `message`, nothing measured yet.
    pub fn new(message: AgentMessage) -> Self {
        Self {
            message,
            memo: Memo::default(),
        }
    }

    /// The message.
    pub fn message(&self) -> &AgentMessage {
        &self.message
    }

    pub(crate) fn memo(&self) -> &Memo {
        &self.memo
    }
}

impl Borrow<AgentMessage> for MeasuredMessage {
    fn borrow(&self) -> &AgentMessage {
        &self.message
    }
}

/// A measured message reads as its message (the measures are a cache beside it).
impl std::ops::Deref for MeasuredMessage {
    type Target = AgentMessage;

    fn deref(&self) -> &AgentMessage {
        &self.message
    }
}

impl From<AgentMessage> for MeasuredMessage {
    fn from(message: AgentMessage) -> Self {
        Self::new(message)
    }
}

/// [`crate::transform_context`] of messages that keep what the layers measure of them for the next
/// view that holds them (an exported page's view at each request): each unchanged message measured
/// once however many views hold it, and not copied into the output.
pub fn transform_measured<'a, M: Borrow<MeasuredMessage>>(
    messages: &'a [M],
    settings: &TransformSettings,
    context_window: u64,
) -> MeasuredView<'a> {
    let slots = messages
        .iter()
        .enumerate()
        .map(|(origin, message)| Slot::measured(message.borrow(), origin))
        .collect();
    let (slots, report, last_cut_tool_result) =
        crate::transform_slots(slots, settings, context_window);
    let origins = slots.iter().map(|slot| slot.origin).collect();
    let messages = slots.into_iter().map(|slot| slot.message).collect();
    MeasuredView {
        messages,
        origins,
        report,
        last_cut_tool_result,
    }
}

/// The view [`transform_measured`] makes.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredView<'a> {
    /// The view's messages: borrowed, an input message sent as it is (a tool result without its
    /// `details`, which a model is never sent); owned, a changed copy.
    pub messages: Vec<Cow<'a, AgentMessage>>,
    /// For each message, the position of the input message it is or was made from: the synthetic
    /// result orphan repair answers a call left without one with has the position of the reply
    /// that made the call, and follows that reply (so the first message of a position is the
    /// input's own). Non-decreasing but where the view moves a message: a pin written after a
    /// compaction goes after its summary, a tool result whose call is in an earlier reply of its
    /// turn after that reply's results (an old Codex import's parallel calls).
    pub origins: Vec<usize>,
    /// What the layers did.
    pub report: TransformReport,
    /// As [`TransformOutput::last_cut_tool_result`].
    pub last_cut_tool_result: Option<String>,
}

impl MeasuredView<'_> {
    /// The view as [`crate::transform_context`] returns it.
    pub fn into_output(self) -> TransformOutput {
        let messages = self.messages.into_iter().map(crate::model_copy).collect();
        TransformOutput {
            messages,
            report: self.report,
            last_cut_tool_result: self.last_cut_tool_result,
        }
    }
}

/// The reference's token estimate of a message and, for an assistant, the characters behind it
/// (see [`crate::view::block_chars`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    pub tokens: u64,
    pub assistant_chars: Option<usize>,
}

impl Size {
    pub(crate) fn of(message: &AgentMessage) -> Self {
        let assistant_chars = message.as_assistant().map(assistant_chars);
        Self {
            tokens: assistant_chars.map_or_else(|| estimate_tokens(message), quarter),
            assistant_chars,
        }
    }
}

pub(crate) fn quarter(chars: usize) -> u64 {
    chars.div_ceil(4) as u64
}

/// The settings a cut reads: two cuts under equal keys are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CutKey {
    min_chars: usize,
    head_lines: usize,
    tail_lines: usize,
    head_chars: usize,
    tail_chars: usize,
    digest_names: usize,
    digest_chars: usize,
}

impl CutKey {
    pub(crate) fn of(settings: &TransformSettings) -> Self {
        Self {
            min_chars: settings.prune_min_chars,
            head_lines: settings.head_lines,
            tail_lines: settings.tail_lines,
            head_chars: settings.head_chars,
            tail_chars: settings.tail_chars,
            digest_names: settings.prune_digest_names,
            digest_chars: settings.prune_digest_chars,
        }
    }
}

/// For each call of an assistant whose arguments a cut shortens: its content position and the
/// tokens the cut saves.
pub(crate) type CallSavings = Box<[(usize, u64)]>;

/// The measures of one unchanged message, each taken when first asked for.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    size: OnceLock<Size>,
    /// The hashes of the names the message shows the model (`digest::VisibleNames`).
    names: OnceLock<Box<[u64]>>,
    /// A tool result: the tokens cutting it saves (0: not cut), with no name taken as seen.
    result_saving: OnceLock<(CutKey, u64)>,
    /// An assistant: the tokens cutting each call's arguments saves, by content position (only
    /// the calls that would be cut), with the digest off.
    call_savings: OnceLock<(CutKey, CallSavings)>,
    /// What the prune layer last made of the message and under what (the next view of a growing
    /// conversation sees the same names before it and cuts it alike).
    pruned: Mutex<Option<Arc<KeptPrune>>>,
}

/// What a cut of the message depends on besides the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PruneInputs {
    pub cut: CutKey,
    /// The fingerprint of the names the model reads before the message (0 without a digest).
    pub visible: u64,
    /// An assistant's calls that may be cut, by content position.
    pub calls: Vec<usize>,
}

/// A prune of the message and the inputs it was made under.
#[derive(Debug)]
pub(crate) struct KeptPrune {
    pub inputs: PruneInputs,
    pub pruned: PrunedMessage,
}

impl Memo {
    pub(crate) fn size(&self, message: &AgentMessage) -> Size {
        *self.size.get_or_init(|| Size::of(message))
    }

    pub(crate) fn names(&self, measure: impl FnOnce() -> Box<[u64]>) -> &[u64] {
        self.names.get_or_init(measure)
    }

    /// What the prune layer makes of the message under `inputs`: kept from the last view when
    /// that one's inputs were the same, otherwise made now and kept instead.
    pub(crate) fn pruned(
        &self,
        inputs: PruneInputs,
        prune: impl FnOnce() -> PrunedMessage,
    ) -> Arc<KeptPrune> {
        let lock = || self.pruned.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(kept) = lock().as_ref().filter(|kept| kept.inputs == inputs) {
            return Arc::clone(kept);
        }
        let kept = Arc::new(KeptPrune {
            inputs,
            pruned: prune(),
        });
        *lock() = Some(Arc::clone(&kept));
        kept
    }

    pub(crate) fn result_saving(&self, key: CutKey, measure: impl FnOnce() -> u64) -> u64 {
        keyed(&self.result_saving, key, measure)
    }

    pub(crate) fn call_savings(
        &self,
        key: CutKey,
        measure: impl FnOnce() -> CallSavings,
    ) -> CallSavings {
        keyed(&self.call_savings, key, measure)
    }
}

/// The value kept in `cell` when it was measured under `key`; otherwise measured now, and kept
/// when nothing was.
fn keyed<T: Clone>(cell: &OnceLock<(CutKey, T)>, key: CutKey, measure: impl FnOnce() -> T) -> T {
    if let Some((kept_key, value)) = cell.get() {
        return if *kept_key == key {
            value.clone()
        } else {
            measure()
        };
    }
    let value = measure();
    // Another view may have measured it meanwhile: the same value under the same key, or one
    // under other settings, which stays.
    let _ = cell.set((key, value.clone()));
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use crate::{transform_context, transform_measured};
    use std::cell::Cell;

    /// A result that names two functions only in lines a cut omits.
    fn naming_in_the_middle(id: &str) -> AgentMessage {
        let lines: String = (0..20)
            .map(|line| match line {
                10 => "failed in parse_alpha and parse_beta\n".to_owned(),
                _ => format!("plain output line {line}\n"),
            })
            .collect();
        tool_result(id, &lines)
    }

    /// Every result but the latest cut to its first and last line, its digest one name long.
    fn cutting_one_name() -> TransformSettings {
        TransformSettings {
            keep_recent_tool_results: 1,
            prune_min_chars: 100,
            head_lines: 1,
            tail_lines: 1,
            prune_digest_names: 1,
            ..plain()
        }
    }

    /// The names a message shows are kept for the message as stored: a view that cut it shows
    /// the cut, and a later result's digest still lists what the cut left out (a digest of one
    /// name: the first result's lists one function, the second's the other).
    #[test]
    fn a_cut_message_shows_its_cut_not_its_kept_names() {
        let messages = vec![
            user("task"),
            assistant(vec![text("first"), call("c0")]),
            naming_in_the_middle("c0"),
            assistant(vec![text("second"), call("c1")]),
            naming_in_the_middle("c1"),
            assistant(vec![text("done"), call("c2")]),
            tool_result("c2", "short"),
        ];
        let cutting = cutting_one_name();
        let keeping = TransformSettings {
            prune_min_chars: usize::MAX,
            ..cutting.clone()
        };
        let shared: Vec<MeasuredMessage> =
            messages.iter().cloned().map(MeasuredMessage::new).collect();
        // A view that cuts nothing notes the first result's names, all of them.
        assert_eq!(
            transform_measured(&shared, &keeping, 0).into_output(),
            transform_context(&messages, &keeping, 0)
        );
        let measured = transform_measured(&shared, &cutting, 0).into_output();
        assert_eq!(measured, transform_context(&messages, &cutting, 0));
        let first = output_text(&measured.messages[2]);
        let second = output_text(&measured.messages[4]);
        assert!(first.contains("mentions: parse_alpha;"), "{first}");
        assert!(second.contains("mentions: parse_beta;"), "{second}");
    }

    /// A view whose prompt already names one function: the kept cut of the next result, made
    /// where nothing named it, is not used; the digest lists the other function.
    #[test]
    fn a_cut_is_made_again_when_other_names_come_before_it() {
        let settings = cutting_one_name();
        let rest: Vec<Arc<MeasuredMessage>> = [
            assistant(vec![text("first"), call("c0")]),
            naming_in_the_middle("c0"),
            assistant(vec![text("done"), call("c1")]),
            tool_result("c1", "short"),
        ]
        .into_iter()
        .map(|message| Arc::new(MeasuredMessage::new(message)))
        .collect();
        let mut marker = Vec::new();
        for prompt in ["task", "task", "fix parse_alpha", "task"] {
            let mut view = vec![Arc::new(MeasuredMessage::new(user(prompt)))];
            view.extend(rest.iter().cloned());
            let plain_view: Vec<AgentMessage> = view
                .iter()
                .map(|message| message.message().clone())
                .collect();
            let measured = transform_measured(&view, &settings, 0).into_output();
            assert_eq!(
                measured,
                transform_context(&plain_view, &settings, 0),
                "{prompt}"
            );
            marker.push(output_text(&measured.messages[2]));
        }
        assert!(
            marker[1].contains("mentions: parse_alpha;"),
            "{}",
            marker[1]
        );
        assert!(marker[2].contains("mentions: parse_beta;"), "{}", marker[2]);
        assert_eq!(marker[3], marker[0]);
    }

    /// A call the session went on from without a result is answered in the view by an error
    /// result placed after its reply, with the reply's origin, and counted in the estimate.
    #[test]
    fn an_answer_to_a_call_left_without_a_result_has_its_reply_origin() {
        let messages = vec![
            user("task"),
            assistant(vec![text("reading"), call("a")]),
            user("next"),
        ];
        let shared: Vec<MeasuredMessage> =
            messages.iter().cloned().map(MeasuredMessage::new).collect();
        let view = transform_measured(&shared, &plain(), 0);
        assert_eq!(view.origins, [0, 1, 1, 2]);
        assert!(
            matches!(view.messages[1], Cow::Borrowed(_)),
            "the reply is sent whole"
        );
        assert_eq!(*view.messages[2], no_result("a"));
        let report = view.report;
        assert_eq!(report.orphans_repaired, 1);
        assert_eq!(
            report.estimated_tokens_after,
            report.estimated_tokens_before + estimate_tokens(&no_result("a"))
        );
        assert_eq!(
            view.into_output(),
            transform_context(&messages, &plain(), 0)
        );
    }

    #[test]
    fn a_measure_under_other_settings_is_taken_again_and_not_kept() {
        let memo = Memo::default();
        let plain = CutKey::of(&TransformSettings::default());
        let other = CutKey::of(&TransformSettings {
            head_lines: 1234,
            ..TransformSettings::default()
        });
        let measured = Cell::new(0);
        let measure = |value: u64| {
            measured.set(measured.get() + 1);
            value
        };
        assert_eq!(memo.result_saving(plain, || measure(7)), 7);
        assert_eq!(memo.result_saving(plain, || measure(99)), 7);
        assert_eq!(measured.get(), 1);
        assert_eq!(memo.result_saving(other, || measure(5)), 5);
        assert_eq!(memo.result_saving(other, || measure(6)), 6);
        assert_eq!(memo.result_saving(plain, || measure(99)), 7);
        assert_eq!(measured.get(), 3);
    }
}

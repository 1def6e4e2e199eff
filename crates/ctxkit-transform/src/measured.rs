//! A message measured once for every view that holds it.
//!
//! An exported page builds the model's view at each request of a branch: hundreds of views over
//! the same messages, each transformed from scratch. What the layers measure of an unchanged
//! message — its token estimate, the names it shows the model, what cutting it or its calls would
//! save — depends only on the message and the cut settings, so a [`MeasuredMessage`] keeps each
//! measure beside the message the first time a view asks for it. [`crate::transform_measured`]
//! reads the measures; its output is exactly [`crate::transform_context`]'s.
//!
//! A measure that depends on the settings is kept with the settings it was taken under
//! ([`CutKey`]) and measured again (not kept) under others.

use std::borrow::Borrow;
use std::sync::OnceLock;

use ctxkit_protocol::AgentMessage;
use ctxkit_tokens::estimate_tokens;

use crate::TransformSettings;
use crate::view::assistant_chars;

/// A message of a view and what the transforms have measured of it so far. Share it (in an `Arc`)
/// between the views that hold the message.
#[derive(Debug, Clone)]
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

impl From<AgentMessage> for MeasuredMessage {
    fn from(message: AgentMessage) -> Self {
        Self::new(message)
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
#[derive(Debug, Clone, Default)]
pub(crate) struct Memo {
    size: OnceLock<Size>,
    /// The hashes of the names the message shows the model (`digest::VisibleNames`).
    names: OnceLock<Box<[u64]>>,
    /// A tool result: the tokens cutting it saves (0: not cut), with no name taken as seen.
    result_saving: OnceLock<(CutKey, u64)>,
    /// An assistant: the tokens cutting each call's arguments saves, by content position (only
    /// the calls that would be cut), with the digest off.
    call_savings: OnceLock<(CutKey, CallSavings)>,
}

impl Memo {
    pub(crate) fn size(&self, message: &AgentMessage) -> Size {
        *self.size.get_or_init(|| Size::of(message))
    }

    pub(crate) fn names(&self, measure: impl FnOnce() -> Box<[u64]>) -> &[u64] {
        self.names.get_or_init(measure)
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
        let cutting = TransformSettings {
            keep_recent_tool_results: 1,
            prune_min_chars: 100,
            head_lines: 1,
            tail_lines: 1,
            prune_digest_names: 1,
            ..plain()
        };
        let keeping = TransformSettings {
            prune_min_chars: usize::MAX,
            ..cutting.clone()
        };
        let shared: Vec<MeasuredMessage> =
            messages.iter().cloned().map(MeasuredMessage::new).collect();
        // A view that cuts nothing notes the first result's names, all of them.
        assert_eq!(
            transform_measured(&shared, &keeping, 0),
            transform_context(&messages, &keeping, 0)
        );
        let measured = transform_measured(&shared, &cutting, 0);
        assert_eq!(measured, transform_context(&messages, &cutting, 0));
        let first = output_text(&measured.messages[2]);
        let second = output_text(&measured.messages[4]);
        assert!(first.contains("mentions: parse_alpha;"), "{first}");
        assert!(second.contains("mentions: parse_beta;"), "{second}");
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

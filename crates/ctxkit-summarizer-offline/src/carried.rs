//! What an earlier summary's items are worth now: an item whose names the span takes up again is
//! still the work and goes before the others. One whose names the span never mentions keeps its
//! section's weight: the earlier summary is the only place left that holds it (weighing it down
//! did not pay on the gathered compactions, docs/summaries.md). The user's goal and constraints
//! are carried as they are.

use std::collections::HashSet;

use crate::digest::Digest;
use crate::previous::Slot;
use crate::sections::request_prose;
use crate::span::Step;
use crate::text::identifiers;

/// Priority added to an earlier item the span takes up again.
const TAKEN_UP: u8 = 8;

/// The names the span's own steps hold: the user's and the assistant's words, the calls' targets
/// and what their output printed.
pub fn mentioned_names(steps: &[Step]) -> HashSet<String> {
    let mut names = HashSet::new();
    for step in steps {
        match step {
            Step::Request(text) => names.extend(identifiers(&request_prose(text))),
            Step::Reply(text) => names.extend(identifiers(text)),
            Step::Call(call) => {
                names.extend(identifiers(&call.target));
                if let Some(output) = &call.output {
                    names.extend(identifiers(output));
                }
            }
            Step::Summary(_) => {}
        }
    }
    names
}

/// The priority of an earlier item of `slot` at `base`, by whether the span takes its names up.
pub fn carried_priority(digest: &Digest, slot: Slot, text: &str, base: u8) -> u8 {
    if matches!(slot, Slot::Goal | Slot::Constraints) {
        return base;
    }
    let taken_up = identifiers(text)
        .iter()
        .any(|name| digest.mentioned.contains(name));
    if taken_up {
        base.saturating_add(TAKEN_UP)
    } else {
        base
    }
}

//! The assistant's own next step, as it said it: a continuing model should go on where the
//! assistant said it would, even when a user's note and a short answer came after it.

use crate::digest::Digest;
use crate::span::Step;
use crate::text::{sentences, split_fences};

/// Words of a sentence in which the assistant says what it does next.
const PLAN_MARKERS: &[&str] = &[
    "next i will",
    "next, i will",
    "next i'll",
    "next, i'll",
    "next step",
    "i will now",
    "i'll now",
    "now i will",
    "now i'll",
    "i'm going to",
    "i am going to",
    "then i will",
    "then i'll",
];

/// The assistant's own next step: the sentences of the latest reply that says what it does next,
/// when no tool call came after that reply (the step was not started). Before, only the last
/// reply's questions were kept, so "Next I will fix `calc.divide`" followed by a user's note and
/// a short answer was lost (QA r100).
pub fn stated_plan(digest: &Digest) -> Vec<String> {
    for step in digest.steps.iter().rev() {
        match step {
            Step::Call(_) => break,
            Step::Reply(text) => {
                let (prose, _) = split_fences(text);
                let plan: Vec<String> = sentences(&prose)
                    .into_iter()
                    .filter(|sentence| !sentence.ends_with('?'))
                    .filter(|sentence| {
                        let lower = sentence.to_lowercase();
                        PLAN_MARKERS.iter().any(|marker| lower.contains(marker))
                    })
                    .collect();
                if !plan.is_empty() {
                    return plan;
                }
            }
            Step::Request(_) | Step::Summary(_) => {}
        }
    }
    Vec::new()
}

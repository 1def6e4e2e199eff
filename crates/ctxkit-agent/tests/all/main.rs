//! Scenarios of the agent loop over a scripted model and the real engine, session store and
//! offline summarizer: overflows wherever they happen in a turn, a provider counting more than
//! ctxkit's estimate, cancellation, threshold compaction, approvals.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::wildcard_enum_match_arm,
    reason = "scripted models answer the messages they care about"
)]

mod adversary;
mod blank_input;
mod boundary;
mod cache_prefix;
mod call_ids;
mod cut_off;
mod dropped;
mod in_run;
mod no_room;
mod pi_edits;
mod prompt_room;
mod scenarios;
mod stalled_provider;
mod support;
mod warming;

//! Engine scenario tests, driven by a scripted fake model and summarizer (no network).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod background;
mod cache_prefix;
mod checks;
mod dropped;
mod failed;
mod forget;
mod hooks;
mod manual;
mod navigation;
mod on_demand;
mod pins_scopes;
mod projection;
mod provider_compaction;
mod recall_attacks;
mod recall_branches;
mod recorded_cwd;
mod stated_limit;
mod summary_keys;
mod view;

//! The stdio server in process, over an in-memory pipe.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent;
mod attacks;
mod compaction_control;
mod compaction_scale;
mod failed_open;
mod forget;
mod origin;
mod outage;
mod protocol_doc;
mod recall;
mod recorded_cwd;
mod refusals;
mod run_params;
mod server;
mod stale_writer;
mod stopping;
mod stored_ids;
mod support;
mod tree_moves;
mod websocket;
mod websocket_budget;

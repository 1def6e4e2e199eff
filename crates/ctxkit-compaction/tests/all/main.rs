//! Integration tests of compaction planning and runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chunked;
mod conformance;
mod fixtures;
mod history;
mod long_span;
mod offline;
mod pi_recordings;
mod properties;
mod runner;

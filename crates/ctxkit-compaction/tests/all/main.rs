//! Integration tests of compaction planning and runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fixtures;
mod offline;
mod runner;

//! Integration tests of the session store.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod attacks;
mod conformance;
mod file_watch;
mod lone_surrogates;
mod migration;
mod properties;
mod reliability;
mod spend;
mod store;
mod tool_pairs;

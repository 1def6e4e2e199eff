//! Benchmark support for ctxkit: a seeded generator of realistic Pi v3 sessions (`ctxkit-gen`) and
//! ctxkit's side of the side-by-side harness against the reference (`ctxkit-bench-op`, driven by
//! `bench/side-by-side/run.sh`).
//!
//! Nothing here is used by the other crates; it depends on them only to measure them. The
//! economics simulator is its own crate, `ctxkit-simulate` (the `ctxkit simulate` command and this
//! crate's `simulate` program share it), with the seeded text and random generators both use.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod crash;
mod dir;
mod error;
mod generate;
mod measure;
pub mod real_eval;
pub mod summary_eval;

pub use dir::{DirOptions, DirStats, write_session_dir};
pub use error::GenerateError;
pub use generate::{GenerateOptions, GenerateStats, write_session, write_session_file};
pub use measure::{Measurement, Operation, peak_rss_bytes, run_operation};

#[cfg(test)]
mod tests;

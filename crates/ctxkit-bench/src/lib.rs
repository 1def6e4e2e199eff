//! Benchmark support for ctxkit: a seeded generator of realistic Pi v3 sessions (`ctxkit-gen`) and
//! ctxkit's side of the side-by-side harness against the reference (`ctxkit-bench-op`, driven by
//! `bench/side-by-side/run.sh`).
//!
//! Nothing here is used by the other crates; it depends on them only to measure them.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod crash;
mod dir;
mod error;
mod generate;
mod measure;
pub mod real_eval;
mod rng;
pub mod simulate;
pub mod summary_eval;
mod text;

pub use dir::{DirOptions, DirStats, write_session_dir};
pub use error::GenerateError;
pub use generate::{GenerateOptions, GenerateStats, write_session, write_session_file};
pub use measure::{Measurement, Operation, peak_rss_bytes, run_operation};
pub use rng::Rng;
pub use text::{TextKind, write_text};

#[cfg(test)]
mod tests;

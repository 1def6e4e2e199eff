//! Integration tests of ctxkit-bench.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod simulate_sessions;

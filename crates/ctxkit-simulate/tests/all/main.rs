//! Integration tests of ctxkit-simulate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod simulate_sessions;

//! Integration tests of ctxkit-simulate.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provider_count;
mod simulate_sessions;

//! Integration tests of the protocol types.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod roundtrip;

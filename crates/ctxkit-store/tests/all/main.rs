//! The store's integration tests: one suite (`suite.rs`) run on both backends.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

mod backends;
mod crowded;
mod directory_names;
mod silent;
mod suite;
mod tenants;
mod tls;

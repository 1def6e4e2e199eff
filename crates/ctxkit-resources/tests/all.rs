//! Integration tests of ctxkit-resources, one module per subsystem; acceptance cases of
//! `resources.md` §8 are named `at_NN_…`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod content;
mod loader;
mod packages_git;
mod packages_npm;
mod resolve;
mod settings;

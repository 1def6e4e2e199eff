//! Integration tests of ctxkit-resources and the settings and package crates it loads over, one
//! module per subsystem, each test named after the behaviour it requires.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod content;
mod loader;
mod package_autoload;
mod packages_git;
mod packages_npm;
mod pi_prompt;
mod project_links;
mod resolve;
mod settings;

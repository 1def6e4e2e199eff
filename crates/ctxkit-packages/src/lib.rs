//! ctxkit's packages: `npm:`, git and local package sources (parsed, with hostile strings
//! refused and credentials redacted), the package manager (install, remove, update, list in the
//! user, project and temporary scopes, through a [`CommandRunner`]), and the resolver that turns
//! settings and packages into resource paths with their provenance ([`ResolvedResources`]).
//!
//! The library never prints: progress goes to a [`ProgressReporter`], problems that skip one
//! resource are [`ResourceDiagnostic`]s and errors are [`SourceError`]s and [`PackageError`]s.

#![deny(clippy::print_stdout, clippy::print_stderr)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod diagnostics;
mod error;
mod folders;
mod packages;
mod resolve;
mod source;

pub use diagnostics::{CollisionKind, ResourceDiagnostic};
pub use error::{PackageError, SourceError};
pub use packages::{
    CommandLine, CommandOutput, CommandRunner, ConfiguredPackage, MissingPackages, NoProgress,
    PackageManager, ProcessRunner, ProgressAction, ProgressEvent, ProgressReporter, ProgressStage,
    TEMPORARY_INSTALL_DIR_NAME, UpdateOutcome,
};
pub use resolve::walk::{
    EntryType, SkillScanMode, collect_skill_entries, entry_type, sorted_entries,
};
pub use resolve::{
    LocalPackagesOnly, PackageProvider, PathMetadata, ResolvedResource, ResolvedResources,
    SourceOrigin, SourceScope, resolve_configured, resolve_package_sources,
};
pub use source::{GitSource, NpmSource, PackageSource, parse_git_url};

//! Whether an entry of a project's `packages`, `extensions`, `skills`, `prompts` or `themes` reaches
//! outside the project folder: a local path that resolves (lexically, then through symlinks)
//! beyond it, a git source over the local file system (`git:file://…`), an npm tarball given by an
//! absolute path. Such an entry brings into the model's view, or clones into the project where the
//! tools read without asking, files the user never showed it; an untrusted project's are held back
//! until `ctxkit trust` (`allowlist::split_project`).
//!
//! An untrusted project's packages that would be installed (`npm:` and git sources) are held back
//! too: installing one runs its code.
//!
//! The judgement mirrors how the package manager and the resolver read an entry (tilde expanded,
//! resolved against the project's `.ctxkit/` folder) and errs towards "outside": any text that is
//! not an `npm:` source is also judged as the local path it would be if it did not parse as git.

use std::path::{Path, PathBuf};

use super::allowlist::HeldReason;
use crate::env::{Environment, expand_tilde_loose, resolve_against};

/// The top-level keys whose entries name places; the only keys held entry by entry.
pub(crate) const PLACE_KEYS: [&str; 5] = ["packages", "extensions", "skills", "prompts", "themes"];

/// The project folder an untrusted project's settings may point into.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProjectFolder {
    /// The project (the folder holding `.ctxkit/`), as named.
    root: PathBuf,
    /// Relative entries resolve against this (`<root>/.ctxkit`).
    base: PathBuf,
    /// The user's home, for `~`; unknown (settings read from explicit paths): every `~` entry
    /// is outside.
    home: Option<PathBuf>,
}

impl ProjectFolder {
    /// The project whose settings file is `settings_path` (`<root>/.ctxkit/settings.json`).
    pub(crate) fn of_settings_file(settings_path: &Path) -> Self {
        let base = settings_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let root = base.parent().map(Path::to_path_buf).unwrap_or_default();
        Self {
            root,
            base,
            home: None,
        }
    }

    /// Sets the home `~` expands to.
    pub(crate) fn set_home(&mut self, home: &Path) {
        self.home = Some(home.to_path_buf());
    }

    /// The home `~` expands to, when known.
    pub(crate) fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Whether the `entry` (a source text, or a path of a resource array) of the top-level `key`
    /// reaches outside the project. Patterns (`!x`, `+x`, `-x`, globs) of resource arrays only
    /// narrow what entries found, so they never do.
    pub(crate) fn entry_leaves(&self, key: &str, entry: &str) -> bool {
        let entry = entry.trim();
        if key == "packages" {
            return self.source_leaves(entry);
        }
        let pattern = entry.starts_with(['!', '+', '-']) || entry.contains(['*', '?']);
        !pattern && self.path_leaves(entry)
    }

    /// Why the `entry` of the top-level `key` waits for trust in an untrusted project, if it
    /// does: it reaches outside the project ([`Self::entry_leaves`]), or it is a package that
    /// runs code as it is installed (an `npm:` package's install scripts; a git package's
    /// checkout, whose npm dependencies are installed in it).
    pub(crate) fn entry_held(&self, key: &str, entry: &str) -> Option<HeldReason> {
        if self.entry_leaves(key, entry) {
            return Some(HeldReason::ReachesOutside);
        }
        (key == "packages" && !looks_local(entry)).then_some(HeldReason::RunsCodeToInstall)
    }

    fn source_leaves(&self, source: &str) -> bool {
        if let Some(spec) = source.strip_prefix("npm:") {
            return npm_tarball_leaves(spec);
        }
        git_over_files(source) || self.path_leaves(source)
    }

    /// Whether `entry`, read as the resolver reads a local path, lies outside the project.
    fn path_leaves(&self, entry: &str) -> bool {
        let expanded = match &self.home {
            Some(home) => expand_tilde_loose(entry, home),
            None if entry.starts_with('~') => return true,
            None => PathBuf::from(entry),
        };
        let path = resolve_against(&self.base, &expanded);
        let root = resolve_against(&self.base, &self.root);
        if !path.starts_with(&root) {
            return true;
        }
        // Inside by name; through a symlink the project committed it may still lead out.
        let real_root = real_location(&root);
        !real_location(&path).starts_with(real_root)
    }
}

/// Why `entry` of the top-level `key` (`packages`, `extensions`, `skills`, `prompts`, `themes`),
/// written in the project settings of `environment`, waits for `ctxkit trust` while the project
/// is not trusted, if it does ([`crate::SettingsManager::held_project_entries`]).
pub fn held_until_trusted(environment: &Environment, key: &str, entry: &str) -> Option<HeldReason> {
    let mut folder = ProjectFolder::of_settings_file(&environment.project_settings_path());
    folder.set_home(&environment.home);
    folder.entry_held(key, entry)
}

/// Whether the package source `text` names a local path: everything not starting (after
/// trimming) with `npm:`, `git:`, `github:`, `http:`, `https:` or `ssh:` (case-sensitive). The
/// others are installed (`ctxkit install`/`update`), which runs their code.
pub fn looks_local(text: &str) -> bool {
    let trimmed = text.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|prefix| trimmed.starts_with(prefix))
}

/// `git:file://…` (any case, spaces allowed after the prefix): git clones it from the local file
/// system.
fn git_over_files(source: &str) -> bool {
    source
        .strip_prefix("git:")
        .is_some_and(|rest| rest.trim_start().to_ascii_lowercase().starts_with("file:"))
}

/// An npm spec whose version is a `file:` tarball given by an absolute or home path, or climbing
/// (`npm` reads it from the local file system; a relative one lies in the project's npm folder).
fn npm_tarball_leaves(spec: &str) -> bool {
    let version = match spec.trim().strip_prefix('@') {
        Some(scoped) => scoped.split_once('@').map(|(_, version)| version),
        None => spec.trim().split_once('@').map(|(_, version)| version),
    };
    version
        .and_then(|version| version.strip_prefix("file:"))
        .is_some_and(|path| {
            let path = path.trim();
            path.starts_with(['/', '~']) || path.split(['/', '\\']).any(|part| part == "..")
        })
}

/// Where `path` really is: its nearest existing ancestor with symlinks resolved, and the rest
/// as named.
fn real_location(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(current) {
            return missing
                .iter()
                .rev()
                .fold(real, |real, part| real.join(part));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                current = parent;
            }
            (None, _) | (_, None) => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(root: &Path, home: &Path) -> ProjectFolder {
        let mut folder = ProjectFolder::of_settings_file(&root.join(".ctxkit/settings.json"));
        folder.set_home(home);
        folder
    }

    #[test]
    fn local_git_sources_and_paths_beyond_the_project_reach_outside() {
        let world = tempfile::tempdir().unwrap();
        let root = world.path().join("project");
        std::fs::create_dir_all(root.join(".ctxkit")).unwrap();
        let folder = folder(&root, &world.path().join("home"));
        let leaves = |entry: &str| folder.entry_leaves("packages", entry);
        for outside in [
            "git:file:///some/private/repo",
            "git: FILE:///some/private/repo@main",
            "../../elsewhere",
            "/abs/pkg",
            "~/pkg",
            "~",
            "git:x/../../../y",
            "https:/../../../etc",
            "npm:x@file:/abs/x.tgz",
            "npm:@scope/x@file:~/x.tgz",
            // The path a `file://` URL names (Pi reads it so).
            "file:///x",
        ] {
            assert!(leaves(outside), "{outside}");
        }
        for inside in [
            "npm:x",
            "npm:x@1.2.3",
            "npm:x@file:x.tgz",
            "git:github.com/user/repo",
            "https://github.com/user/repo@v1",
            "git:git@host.example:owner/repo",
            "../pkg",
            "./pkg",
            "pkg",
        ] {
            assert!(!leaves(inside), "{inside}");
        }
        let resource = |entry: &str| folder.entry_leaves("skills", entry);
        assert!(resource("../../outside/skills"));
        assert!(resource("~/.ctxkit/settings.json"));
        assert!(!resource("../skills"));
        assert!(!resource("!../../x"));
        assert!(!resource("../../*.md"));
    }

    #[test]
    fn packages_that_are_installed_wait_for_trust_and_local_ones_do_not() {
        let world = tempfile::tempdir().unwrap();
        let root = world.path().join("project");
        std::fs::create_dir_all(root.join(".ctxkit")).unwrap();
        let folder = folder(&root, &world.path().join("home"));
        let held = |entry: &str| folder.entry_held("packages", entry);
        for installed in [
            "npm:left-pad",
            " npm:x@file:x.tgz",
            "git:github.com/user/repo",
            "https://github.com/user/repo@v1",
            "github:user/repo",
            "ssh://git@host/owner/repo",
        ] {
            assert_eq!(
                held(installed),
                Some(HeldReason::RunsCodeToInstall),
                "{installed}"
            );
        }
        assert_eq!(held("git:file:///x"), Some(HeldReason::ReachesOutside));
        assert_eq!(held("../pkg"), None);
        assert_eq!(held("./vendor/skills"), None);
        // Only packages are installed: a skill path naming `npm:` is a path.
        assert_eq!(folder.entry_held("skills", "npm:x"), None);
    }

    #[test]
    fn a_path_inside_by_name_that_a_symlink_leads_out_of_reaches_outside() {
        let world = tempfile::tempdir().unwrap();
        let root = world.path().join("project");
        let outside = world.path().join("private");
        std::fs::create_dir_all(root.join(".ctxkit")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        let folder = folder(&root, world.path());
        assert!(folder.entry_leaves("packages", "../linked"));
        assert!(folder.entry_leaves("prompts", "../linked/not-yet/p.md"));
        assert!(!folder.entry_leaves("prompts", "../not-yet/p.md"));
    }

    #[test]
    fn without_a_known_home_a_tilde_entry_is_outside() {
        let folder = ProjectFolder::of_settings_file(Path::new("/p/.ctxkit/settings.json"));
        assert!(folder.entry_leaves("packages", "~/x"));
        assert!(!folder.entry_leaves("packages", "../x"));
    }
}

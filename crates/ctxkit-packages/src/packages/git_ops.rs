//! git operations: clone and check out, the update procedure shared by `update` and the
//! temporary refresh, removal with empty-parent pruning and the remote-head
//! check behind available-update notices.

use std::path::{Path, PathBuf};

use super::PackageManager;
use super::locations::ensure_gitignore;
use super::npm_ops::NETWORK_TIMEOUT;
use super::runner::CommandLine;
use crate::error::PackageError;
use crate::resolve::SourceScope;
use crate::source::GitSource;

fn git(args: &[&str]) -> CommandLine {
    CommandLine::new("git", args.iter().map(|arg| (*arg).to_owned()))
}

/// What an update resets to and how it fetches it.
struct UpdateTarget {
    reference: &'static str,
    fetch_spec: String,
}

fn is_commit_hash(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

impl PackageManager {
    fn git_capture(&self, checkout: &Path, args: &[&str]) -> Result<String, PackageError> {
        let command = git(args).in_dir(checkout).with_timeout(NETWORK_TIMEOUT);
        Ok(self.runner.run(&command)?.stdout.trim().to_owned())
    }

    fn git_run(&self, checkout: &Path, args: &[&str]) -> Result<(), PackageError> {
        self.runner.run(&git(args).in_dir(checkout))?;
        Ok(())
    }

    /// Clones into the scope's checkout path unless it already exists (then nothing runs, even
    /// when the ref differs), checks out the ref, installs npm dependencies.
    pub(crate) fn install_git(
        &self,
        source: &GitSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        let target = self.git_install_path(source, scope);
        if target.exists() {
            return Ok(());
        }
        if let Some(root) = self.git_install_root(scope) {
            ensure_gitignore(&root)?;
        }
        // The directories made for this clone, deepest first: removed again when it fails, so a
        // failed install leaves no empty directories (nor a half checkout that the next install
        // would take as installed).
        let created: Vec<PathBuf> = target
            .ancestors()
            .skip(1)
            .take_while(|directory| !directory.exists())
            .map(Path::to_path_buf)
            .collect();
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|error| PackageError::Io {
                path: parent.to_path_buf(),
                source: error,
            })?;
        }
        let result = self.clone_and_prepare(source, &target);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&target);
            for directory in &created {
                // Only empty directories go: anything else there is someone's.
                let _ = std::fs::remove_dir(directory);
            }
        }
        result
    }

    fn clone_and_prepare(&self, source: &GitSource, target: &Path) -> Result<(), PackageError> {
        let target_text = target.to_string_lossy().into_owned();
        self.runner
            .run(&git(&["clone", &source.repo, &target_text]))?;
        if let Some(reference) = &source.git_ref {
            self.git_run(target, &["checkout", reference])?;
        }
        self.install_git_dependencies(target)
    }

    /// Follow `origin/<branch>` when the checkout tracks it, else the remote's
    /// default branch (`origin/HEAD`).
    fn update_target(&self, checkout: &Path) -> Result<UpdateTarget, PackageError> {
        let upstream = self.git_capture(checkout, &["rev-parse", "--abbrev-ref", "@{upstream}"]);
        if let Ok(upstream) = &upstream
            && let Some(branch) = upstream.strip_prefix("origin/")
            && !branch.is_empty()
            && self
                .git_capture(checkout, &["rev-parse", "@{upstream}"])
                .is_ok()
        {
            return Ok(UpdateTarget {
                reference: "@{upstream}",
                fetch_spec: format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
            });
        }
        // Errors ignored: an offline remote still leaves a usable `origin/HEAD` in many cases.
        let _ = self.git_run(checkout, &["remote", "set-head", "origin", "-a"]);
        self.git_capture(checkout, &["rev-parse", "origin/HEAD"])?;
        let head_ref = self
            .git_capture(checkout, &["symbolic-ref", "refs/remotes/origin/HEAD"])
            .unwrap_or_default();
        let branch = head_ref
            .strip_prefix("refs/remotes/origin/")
            .unwrap_or(&head_ref);
        let fetch_spec = if branch.is_empty() {
            "+HEAD:refs/remotes/origin/HEAD".to_owned()
        } else {
            format!("+refs/heads/{branch}:refs/remotes/origin/{branch}")
        };
        Ok(UpdateTarget {
            reference: "origin/HEAD",
            fetch_spec,
        })
    }

    /// Fetch only the target ref; when HEAD differs, hard-reset to it, clean untracked
    /// files and reinstall npm dependencies. A missing checkout is installed instead. Returns
    /// whether the checkout changed.
    pub(crate) fn update_git(
        &self,
        source: &GitSource,
        scope: SourceScope,
    ) -> Result<bool, PackageError> {
        let checkout = self.git_install_path(source, scope);
        if !checkout.exists() {
            self.install_git(source, scope)?;
            return Ok(true);
        }
        let target = self.update_target(&checkout)?;
        self.git_run(
            &checkout,
            &[
                "fetch",
                "--prune",
                "--no-tags",
                "origin",
                &target.fetch_spec,
            ],
        )?;
        let local = self.git_capture(&checkout, &["rev-parse", "HEAD"])?;
        let remote = self.git_capture(&checkout, &["rev-parse", target.reference])?;
        if local == remote {
            return Ok(false);
        }
        self.git_run(&checkout, &["reset", "--hard", target.reference])?;
        self.git_run(&checkout, &["clean", "-fdx"])?;
        self.install_git_dependencies(&checkout)?;
        Ok(true)
    }

    /// Deletes the checkout and then each now-empty parent, stopping at the scope's git root.
    pub(crate) fn remove_git(
        &self,
        source: &GitSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        let checkout = self.git_install_path(source, scope);
        if !checkout.exists() {
            return Ok(());
        }
        std::fs::remove_dir_all(&checkout).map_err(|error| PackageError::Io {
            path: checkout.clone(),
            source: error,
        })?;
        let Some(root) = self.git_install_root(scope) else {
            return Ok(());
        };
        let mut current = checkout.parent();
        while let Some(directory) = current {
            if directory == root || !directory.starts_with(&root) {
                break;
            }
            let is_empty = std::fs::read_dir(directory)
                .map(|mut entries| entries.next().is_none())
                .unwrap_or(false);
            if !is_empty || std::fs::remove_dir(directory).is_err() {
                break;
            }
            current = directory.parent();
        }
        Ok(())
    }

    /// Whether the remote has a commit the checkout lacks (errors: no).
    pub(crate) fn git_has_update(&self, checkout: &Path) -> bool {
        let Ok(local) = self.git_capture(checkout, &["rev-parse", "HEAD"]) else {
            return false;
        };
        self.remote_git_head(checkout)
            .is_some_and(|remote| remote != local)
    }

    fn ls_remote(&self, checkout: &Path, reference: &str) -> Option<String> {
        let command = git(&["ls-remote", "origin", reference])
            .in_dir(checkout)
            .with_env("GIT_TERMINAL_PROMPT", "0")
            .with_timeout(NETWORK_TIMEOUT);
        let output = self.runner.run(&command).ok()?;
        output.stdout.lines().find_map(|line| {
            let mut fields = line.split_whitespace();
            let hash = fields.next()?;
            (is_commit_hash(hash) && (reference != "HEAD" || fields.next() == Some("HEAD")))
                .then(|| hash.to_owned())
        })
    }

    fn remote_git_head(&self, checkout: &Path) -> Option<String> {
        let upstream = self
            .git_capture(checkout, &["rev-parse", "--abbrev-ref", "@{upstream}"])
            .ok();
        if let Some(branch) = upstream
            .as_deref()
            .and_then(|upstream| upstream.strip_prefix("origin/"))
            .filter(|branch| !branch.is_empty())
            && let Some(hash) = self.ls_remote(checkout, &format!("refs/heads/{branch}"))
        {
            return Some(hash);
        }
        self.ls_remote(checkout, "HEAD")
    }
}

//! git operations: clone and check out, the update procedure shared by `update` and the
//! temporary refresh, removal with empty-parent pruning and the remote-head
//! check behind available-update notices.

use std::path::{Path, PathBuf};

use super::PackageManager;
use super::incomplete::checkout_is_incomplete;
use super::locations::ensure_gitignore;
use super::npm_ops::NETWORK_TIMEOUT;
use super::runner::CommandLine;
use crate::error::PackageError;
use crate::folders::read_package_file_or_error;
use crate::resolve::SourceScope;
use crate::source::GitSource;

/// Configuration every git command runs under, as command-line scope (`-c`, which wins over the
/// repository's own `.git/config` for single-valued keys): no fsmonitor or hook runs, and only
/// the usual transports are allowed (`ext::` runs a command; `file` only when the user named it).
/// `remote.*.uploadpack` is not overridable this way (git takes the first value it reads), so
/// [`check_checkout`] refuses a checkout whose config sets it.
const HARDENED_CONFIG: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.gitProxy", ""),
    ("protocol.allow", "never"),
    ("protocol.https.allow", "always"),
    ("protocol.http.allow", "always"),
    ("protocol.ssh.allow", "always"),
    ("protocol.git.allow", "always"),
    ("protocol.file.allow", "user"),
    ("protocol.ext.allow", "never"),
];

/// Keys a checkout's `.git/config` may hold: those `git clone` and `git checkout` write. Anything
/// else (`remote.origin.uploadpack`, `core.fsmonitor`, `filter.*`, `credential.helper`,
/// `include.path`, `alias.*`, …) may run a command, and the checkout is refused before git runs
/// in it.
const CHECKOUT_CONFIG_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.bare",
    "core.logallrefupdates",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
    "extensions.objectformat",
    "remote.origin.url",
    "remote.origin.fetch",
];

fn git(args: &[&str]) -> CommandLine {
    let mut command = CommandLine::new("git", args.iter().map(|arg| (*arg).to_owned()))
        .with_env("GIT_CONFIG_NOSYSTEM", "1")
        .with_env("GIT_TERMINAL_PROMPT", "0");
    for (key, value) in HARDENED_CONFIG {
        command = command.with_config(key, value);
    }
    command
}

/// Files git reads in a `.git` folder to take its config, objects or refs from somewhere else:
/// `git clone` writes none of them (a linked worktree's `commondir` names the folder whose
/// `config` git then reads instead of `.git/config`).
const REDIRECTING_FILES: &[&str] = &["commondir", "gitdir", "config.worktree"];

/// git run in `checkout`, its repository pinned to `checkout/.git` (`GIT_DIR`, `GIT_COMMON_DIR`:
/// no file in the folder can send git to another repository or config).
fn git_in(checkout: &Path, args: &[&str]) -> Result<CommandLine, PackageError> {
    let git_dir = checkout.join(".git");
    let git_dir = super::path_text(&git_dir)?;
    Ok(git(args)
        .in_dir(checkout)
        .with_env("GIT_DIR", git_dir)
        .with_env("GIT_COMMON_DIR", git_dir)
        .with_env("GIT_WORK_TREE", super::path_text(checkout)?))
}

/// Refuses a checkout git must not run in: `.git` that is not a folder (a `gitdir:` file points
/// anywhere) or holds a file that redirects git ([`REDIRECTING_FILES`]), a `.git/config` with a
/// key outside [`CHECKOUT_CONFIG_KEYS`], or an origin other than the source's own (a checkout
/// committed to a project would fetch from wherever it names: a private repository on the
/// machine, or one the user's SSH key opens). Read as text, never by running git in it.
pub(super) fn check_checkout(checkout: &Path, source: &GitSource) -> Result<(), PackageError> {
    let git_dir = checkout.join(".git");
    let refused = |reason: String| PackageError::UnsafeCheckout {
        path: checkout.to_path_buf(),
        reason,
    };
    let metadata = std::fs::symlink_metadata(&git_dir).map_err(|error| PackageError::Io {
        path: git_dir.clone(),
        source: error,
    })?;
    if !metadata.is_dir() {
        return Err(refused("`.git` is not a folder".to_owned()));
    }
    for name in REDIRECTING_FILES {
        if std::fs::symlink_metadata(git_dir.join(name)).is_ok() {
            return Err(refused(format!(
                "its `.git` holds `{name}`, which sends git elsewhere and `git clone` never writes"
            )));
        }
    }
    let config = git_dir.join("config");
    let text = read_package_file_or_error(&config)?;
    let entries = config_entries(&text);
    let origins: Vec<&str> = entries
        .iter()
        .filter(|(key, _)| key.eq_ignore_ascii_case("remote.origin.url"))
        .map(|(_, value)| value.as_str())
        .collect();
    if !matches!(origins.as_slice(), [origin] if same_repository(origin, source)) {
        return Err(refused(format!(
            "its origin is not `{}`, the source the settings name",
            source.repo
        )));
    }
    for (key, _) in &entries {
        let lower = key.to_ascii_lowercase();
        let branch_key = lower.starts_with("branch.")
            && (lower.ends_with(".remote") || lower.ends_with(".merge"));
        if !branch_key
            && !CHECKOUT_CONFIG_KEYS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(&lower))
        {
            return Err(refused(format!(
                "its `.git/config` sets `{key}`, which ctxkit never writes"
            )));
        }
    }
    Ok(())
}

/// Whether `origin`, as a checkout's config records it, is the repository `source` names: the same
/// URL, or another spelling of it that names the same checkout folder (host and path:
/// `git:file:///srv/tools` and `git:file:///srv/tools/.git`, `git:github.com/x/y` and
/// `https://github.com/x/y.git`).
fn same_repository(origin: &str, source: &GitSource) -> bool {
    if origin == source.repo {
        return true;
    }
    let prefixed = if origin.starts_with("git:") {
        origin.to_owned()
    } else {
        format!("git:{origin}")
    };
    crate::source::parse_git_url(&prefixed).is_some_and(|recorded| {
        // `srv/gitsrc/` and `srv/gitsrc` name one folder.
        recorded.host.eq_ignore_ascii_case(&source.host)
            && recorded.path.trim_end_matches('/') == source.path.trim_end_matches('/')
    })
}

/// The dotted keys of a git config file (`[section "sub"]` then `name = value` lines) and their
/// values as written (quotes taken off; a bare `name` is `true`). A comment line is skipped.
fn config_entries(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut keys = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let (header, rest) = header.split_once(']').unwrap_or((header, ""));
            section = match header.split_once(|c: char| c.is_whitespace()) {
                Some((name, sub)) => format!("{name}.{}", sub.trim().trim_matches('"')),
                None => header.replace(' ', ""),
            };
            // `[section] key = value` on one line.
            let rest = rest.trim();
            if !rest.is_empty() {
                let (name, value) = name_and_value(rest);
                keys.push((format!("{section}.{name}"), value));
            }
            continue;
        }
        let (name, value) = name_and_value(line);
        keys.push((format!("{section}.{name}"), value));
    }
    keys
}

/// The name and value of a `name = value` line (a bare `name` is a true boolean).
fn name_and_value(line: &str) -> (&str, String) {
    let name = line.split(['=', ' ', '\t']).next().unwrap_or(line).trim();
    let value = match line.split_once('=') {
        Some((_, value)) => value.trim().trim_matches('"').to_owned(),
        None => "true".to_owned(),
    };
    (name, value)
}

/// What an update resets to and how it fetches it.
struct UpdateTarget {
    reference: &'static str,
    fetch_spec: String,
}

impl PackageManager {
    fn git_capture(
        &self,
        checkout: &Path,
        source: &GitSource,
        args: &[&str],
    ) -> Result<String, PackageError> {
        check_checkout(checkout, source)?;
        let command = git_in(checkout, args)?.with_timeout(NETWORK_TIMEOUT);
        Ok(self.runner.run(&command)?.stdout.trim().to_owned())
    }

    fn git_run(
        &self,
        checkout: &Path,
        source: &GitSource,
        args: &[&str],
    ) -> Result<(), PackageError> {
        check_checkout(checkout, source)?;
        self.runner.run(&git_in(checkout, args)?)?;
        Ok(())
    }

    /// Clones into the scope's checkout path, checks out the ref, installs npm dependencies. An
    /// existing checkout is moved instead, as Pi 1.6's `installGit` does: to the source's ref
    /// ([`Self::reset_to_ref`]), or with none to its remote branch ([`Self::update_git`]), so
    /// `install git:x@v1` over an installed `git:x` gives the model v1.
    pub(crate) fn install_git(
        &self,
        source: &GitSource,
        scope: SourceScope,
    ) -> Result<(), PackageError> {
        let target = self.git_install_path(source, scope);
        if target.exists() {
            self.folders().check_beneath(&target)?;
            if checkout_is_incomplete(&target) {
                return self.replace_incomplete_checkout(source, &target);
            }
            return match &source.git_ref {
                Some(reference) => self.reset_to_ref(&target, source, reference).map(|_| ()),
                None => self.update_git(source, scope).map(|_| ()),
            };
        }
        if let Some(root) = self.git_install_root(scope) {
            ensure_gitignore(&self.folders(), &root)?;
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
        let folders = self.folders();
        if let Some(parent) = target.parent() {
            folders.create_dir_all(parent)?;
        }
        let result = self.clone_and_prepare(source, &target);
        if result.is_err() {
            let _ = folders.remove_dir_all(&target);
            for directory in &created {
                // Only empty directories go: anything else there is someone's.
                folders.remove_empty_dir(directory);
            }
        }
        result
    }

    pub(super) fn clone_and_prepare(
        &self,
        source: &GitSource,
        target: &Path,
    ) -> Result<(), PackageError> {
        let target_text = super::path_text(target)?;
        self.runner
            .run(&git(&["clone", "--no-local", &source.repo, target_text]))?;
        if let Some(reference) = &source.git_ref {
            self.git_run(target, source, &["checkout", reference])?;
        }
        self.install_git_dependencies(target)
    }

    /// Follow `origin/<branch>` when the checkout tracks it, else the remote's
    /// default branch (`origin/HEAD`).
    fn update_target(
        &self,
        checkout: &Path,
        source: &GitSource,
    ) -> Result<UpdateTarget, PackageError> {
        let upstream = self.git_capture(
            checkout,
            source,
            &["rev-parse", "--abbrev-ref", "@{upstream}"],
        );
        if let Ok(upstream) = &upstream
            && let Some(branch) = upstream.strip_prefix("origin/")
            && !branch.is_empty()
            && self
                .git_capture(checkout, source, &["rev-parse", "@{upstream}"])
                .is_ok()
        {
            return Ok(UpdateTarget {
                reference: "@{upstream}",
                fetch_spec: format!("+refs/heads/{branch}:refs/remotes/origin/{branch}"),
            });
        }
        // Errors ignored: an offline remote still leaves a usable `origin/HEAD` in many cases.
        let _ = self.git_run(checkout, source, &["remote", "set-head", "origin", "-a"]);
        self.git_capture(checkout, source, &["rev-parse", "origin/HEAD"])?;
        let head_ref = self
            .git_capture(
                checkout,
                source,
                &["symbolic-ref", "refs/remotes/origin/HEAD"],
            )
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
        self.folders().check_beneath(&checkout)?;
        if checkout_is_incomplete(&checkout) {
            self.replace_incomplete_checkout(source, &checkout)?;
            return Ok(true);
        }
        let target = self.update_target(&checkout, source)?;
        self.git_run(
            &checkout,
            source,
            &[
                "fetch",
                "--prune",
                "--no-tags",
                "origin",
                &target.fetch_spec,
            ],
        )?;
        let local = self.git_capture(&checkout, source, &["rev-parse", "HEAD"])?;
        let remote = self.git_capture(&checkout, source, &["rev-parse", target.reference])?;
        if local == remote {
            return Ok(false);
        }
        self.git_run(&checkout, source, &["reset", "--hard", target.reference])?;
        self.git_run(&checkout, source, &["clean", "-fdx"])?;
        self.install_git_dependencies(&checkout)?;
        Ok(true)
    }

    /// Fetches only `reference` from origin and, when HEAD is not its commit, hard-resets the
    /// checkout to it, cleans untracked files and reinstalls npm dependencies (Pi 1.6's
    /// `ensureGitRef`). Returns whether the checkout changed.
    fn reset_to_ref(
        &self,
        checkout: &Path,
        source: &GitSource,
        reference: &str,
    ) -> Result<bool, PackageError> {
        self.git_run(
            checkout,
            source,
            &["fetch", "--no-tags", "origin", reference],
        )?;
        let local = self.git_capture(checkout, source, &["rev-parse", "HEAD"])?;
        let target = self.git_capture(checkout, source, &["rev-parse", "FETCH_HEAD^{commit}"])?;
        if local == target {
            return Ok(false);
        }
        self.git_run(checkout, source, &["reset", "--hard", &target])?;
        self.git_run(checkout, source, &["clean", "-fdx"])?;
        self.install_git_dependencies(checkout)?;
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
        let folders = self.folders();
        folders.remove_dir_all(&checkout)?;
        let Some(root) = self.git_install_root(scope) else {
            return Ok(());
        };
        let mut current = checkout.parent();
        while let Some(directory) = current {
            if directory == root || !directory.starts_with(&root) {
                break;
            }
            // Only an empty directory is removed.
            if !folders.remove_empty_dir(directory) {
                break;
            }
            current = directory.parent();
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::packages::runner::{CommandRunner as _, ProcessRunner};

    /// A repository whose own config names an fsmonitor and a hooks folder: git run by ctxkit
    /// uses neither, even without the checkout check; an upload-pack command (which `-c` cannot
    /// override) is refused by the check.
    #[test]
    fn repository_config_cannot_choose_commands_git_runs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let marker = root.join("pwned");
        let run = run_git;
        let origin = root.join("origin");
        std::fs::create_dir_all(&origin).unwrap();
        run(&origin, &["init", "-q", "-b", "main"]);
        std::fs::write(origin.join("a.txt"), "a").unwrap();
        run(&origin, &["add", "."]);
        run(
            &origin,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "a",
            ],
        );
        let checkout = root.join("checkout");
        run(root, &["clone", "-q", "origin", "checkout"]);
        let source = cloned_from(&checkout);
        let hooks = root.join("hooks");
        std::fs::create_dir_all(&hooks).unwrap();
        let hook = hooks.join("reference-transaction");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let config = checkout.join(".git/config");
        let clean = std::fs::read_to_string(&config).unwrap();
        let planted = format!(
            "[core]\n\tfsmonitor = touch {0}\n\thooksPath = {1}\n",
            marker.display(),
            hooks.display()
        );
        std::fs::write(&config, format!("{clean}{planted}")).unwrap();
        let runner = ProcessRunner::new().with_env("GIT_CONFIG_GLOBAL", "/dev/null");
        runner
            .run(&git(&["fetch", "origin"]).in_dir(&checkout))
            .unwrap();
        runner
            .run(&git(&["reset", "--hard", "origin/main"]).in_dir(&checkout))
            .unwrap();
        assert!(!marker.exists(), "the repository's command ran");
        assert!(check_checkout(&checkout, &source).is_err());
        let uploadpack = format!(
            "[remote \"origin\"]\n\tuploadpack = touch {}\n",
            marker.display()
        );
        std::fs::write(&config, format!("{clean}{uploadpack}")).unwrap();
        let error = check_checkout(&checkout, &source).unwrap_err();
        assert!(error.to_string().contains("uploadpack"), "{error}");
        std::fs::write(&config, &clean).unwrap();
        assert!(check_checkout(&checkout, &source).is_ok());
        // The `ext::` transport runs a command: never allowed.
        let error = runner
            .run(
                &git(&[
                    "ls-remote",
                    &format!("ext::sh -c touch% {}", marker.display()),
                ])
                .in_dir(root),
            )
            .unwrap_err();
        assert!(!marker.exists(), "{error}");
    }

    /// The source a checkout was cloned from, as its config records it.
    fn cloned_from(checkout: &Path) -> GitSource {
        let text = std::fs::read_to_string(checkout.join(".git/config")).unwrap();
        let (_, url) = config_entries(&text)
            .into_iter()
            .find(|(key, _)| key == "remote.origin.url")
            .unwrap();
        GitSource {
            repo: url,
            host: "local".to_owned(),
            path: "origin".to_owned(),
            git_ref: None,
        }
    }

    /// git run as a test sets up repositories: no system or user config.
    pub(in crate::packages) fn run_git(cwd: &Path, args: &[&str]) {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(cwd)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
    }

    /// A clean checkout of `root/origin` at `root/checkout`.
    fn clean_checkout(root: &Path) -> PathBuf {
        let origin = root.join("origin");
        std::fs::create_dir_all(&origin).unwrap();
        run_git(&origin, &["init", "-q", "-b", "main"]);
        run_git(root, &["clone", "-q", "origin", "checkout"]);
        root.join("checkout")
    }

    /// Attack (security sweep 9): a committed checkout whose `.git/config` is a clean decoy and
    /// whose `.git/commondir` sends git to another config, with an upload-pack command in it.
    #[test]
    fn a_checkout_that_sends_git_to_another_config_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = clean_checkout(dir.path());
        let source = cloned_from(&checkout);
        assert!(check_checkout(&checkout, &source).is_ok());
        for name in REDIRECTING_FILES {
            let file = checkout.join(".git").join(name);
            std::fs::write(&file, "common\n").unwrap();
            let error = check_checkout(&checkout, &source).unwrap_err();
            assert!(error.to_string().contains(name), "{error}");
            std::fs::remove_file(&file).unwrap();
        }
    }

    /// Attack (security sweep 9): a committed checkout of an allowed https source whose origin
    /// is a private repository on the machine: an update would fetch it into the project.
    #[test]
    fn a_checkout_whose_origin_is_not_its_source_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = clean_checkout(dir.path());
        let source = GitSource {
            repo: "https://github.com/example/tools".to_owned(),
            host: "github.com".to_owned(),
            path: "example/tools".to_owned(),
            git_ref: None,
        };
        let error = check_checkout(&checkout, &source).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("its origin is not `https://github.com/example/tools`"),
            "{error}"
        );
    }

    /// Two spellings of one repository name one checkout: either spelling's origin is its own
    /// (the verification of sweep 9: `update` failed for a source listed as `…/gitsrc` and
    /// `…/gitsrc/.git`).
    #[test]
    fn another_spelling_of_the_same_repository_is_its_origin() {
        let source = |text: &str| crate::source::parse_git_url(text).unwrap();
        let plain = source("git:file:///srv/gitsrc");
        let dotted = source("git:file:///srv/gitsrc/.git");
        assert!(same_repository(&dotted.repo, &plain));
        assert!(same_repository(&plain.repo, &dotted));
        let github = source("git:github.com/example/tools");
        assert!(same_repository(
            "https://github.com/example/tools.git",
            &github
        ));
        assert!(same_repository("git@github.com:example/tools.git", &github));
        assert!(!same_repository("/tmp/private", &github));
        assert!(!same_repository(
            "file:///srv/github.com/example/tools",
            &github
        ));
        assert!(!same_repository("git@github.com:victim/private", &github));
    }

    /// With the repository pinned, a `commondir` planted after the check changes nothing: git
    /// reads `.git/config`, not the one it names.
    #[test]
    fn git_in_a_checkout_reads_its_own_config_only() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = clean_checkout(dir.path());
        let common = checkout.join(".git/common");
        std::fs::create_dir_all(&common).unwrap();
        std::fs::write(common.join("config"), "[planted]\n\tkey = yes\n").unwrap();
        std::fs::write(checkout.join(".git/commondir"), "common\n").unwrap();
        let runner = ProcessRunner::new().with_env("GIT_CONFIG_GLOBAL", "/dev/null");
        let output = runner
            .run(&git_in(&checkout, &["config", "--list"]).unwrap())
            .unwrap();
        assert!(!output.stdout.contains("planted"), "{}", output.stdout);
        assert!(
            output.stdout.contains("remote.origin.url"),
            "{}",
            output.stdout
        );
    }

    #[test]
    fn config_entries_are_read_as_written() {
        let text = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = \"x y\"\n\tUploadPack = y\n# c\n[include] path = z\n\tquiet\n";
        assert_eq!(
            config_entries(text),
            [
                ("core.bare".to_owned(), "false".to_owned()),
                ("remote.origin.url".to_owned(), "x y".to_owned()),
                ("remote.origin.UploadPack".to_owned(), "y".to_owned()),
                ("include.path".to_owned(), "z".to_owned()),
                ("include.quiet".to_owned(), "true".to_owned()),
            ]
        );
    }
}

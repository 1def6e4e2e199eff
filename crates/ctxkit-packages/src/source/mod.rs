//! Package source strings (`npm:…`, git URLs, local paths): classification, validation against
//! option injection and path escapes, and the identity used to de-duplicate packages.

mod git;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use ctxkit_secrets::redact_credentials;
pub use git::{GitSource, parse_git_url};

use crate::error::SourceError;
use ctxkit_settings::{expand_tilde_loose, resolve_against};

/// An npm package source `npm:name[@version]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpmSource {
    /// What is handed to `npm install` (`name[@version]`).
    pub spec: String,
    /// The package name (`@scope/name` or `name`).
    pub name: String,
    /// The version text after `@`, if any: an exact version (`1.2.3`), a range (`^1`, `1.x`,
    /// `>=1 <2`), a tag (`latest`) or a tarball (`file:…`).
    pub version: Option<String>,
}

impl NpmSource {
    /// An exact version pins the package: `update` leaves it. A range or a tag does not, as in
    /// Pi 1.6 (`isExactNpmVersion`).
    pub fn is_pinned(&self) -> bool {
        self.version
            .as_deref()
            .is_some_and(|version| npm_version(version).is_some())
    }

    /// The npm range the version names (an exact version is one too); `None` for a tag, a
    /// tarball or no version.
    pub fn range(&self) -> Option<nodejs_semver::Range> {
        self.version.as_deref()?.trim().parse().ok()
    }

    /// Whether the installed version (its `package.json`'s, `None` when unreadable) is what the
    /// entry asks for: within its range, or any version for a tag or a tarball (Pi 1.6's
    /// `installedNpmMatchesConfiguredVersion`). A range never matched its installed version
    /// as text, so `npm:x@^1` was installed again at every start (QA 2026-12-07).
    pub fn accepts_installed(&self, installed: Option<&str>) -> bool {
        let Some(installed) = installed else {
            return false;
        };
        match self.range() {
            Some(range) => npm_version(installed).is_some_and(|version| version.satisfies(&range)),
            None => true,
        }
    }
}

/// `text` as an exact npm version, as npm reads one (a leading `v` or `=` allowed).
pub(crate) fn npm_version(text: &str) -> Option<nodejs_semver::Version> {
    text.trim().trim_start_matches(['v', '=']).parse().ok()
}

/// A parsed package source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSource {
    /// From the npm registry.
    Npm(NpmSource),
    /// From a git repository.
    Git(GitSource),
    /// A local file or directory, used in place (relative to the settings file's directory).
    Local {
        /// The path exactly as written.
        path: String,
    },
}

/// Why a source that did not parse as git must not be taken as a local path either: a URL with a
/// scheme (its `//` would collapse into a path, credentials and all), or an scp-style
/// `[user@]host:path` (git's own short form, which needs the `git:` prefix here).
fn url_not_local(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    let url = ["http:", "https:", "ssh:", "git:", "git+ssh:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme) && lower[scheme.len()..].starts_with("//"));
    if url {
        return Some("it needs a host and an `owner/repo` path (`https://host/owner/repo[@ref]`)");
    }
    scp_user_end(text).map(|_| {
        "an scp-style address is cloned only with the `git:` prefix (`git:git@host:owner/repo`)"
    })
}

/// Where the user part of an scp-style `user@host:path` ends (the `@`), if `text` is one.
fn scp_user_end(text: &str) -> Option<usize> {
    text.match_indices('@').map(|(index, _)| index).find(|&at| {
        let user = &text[..at];
        let Some((host, path)) = text[at + 1..].split_once(':') else {
            return false;
        };
        !user.is_empty()
            && !user.contains('/')
            && (host.contains('.') || host == "localhost")
            && !host.contains('/')
            && !path.is_empty()
    })
}

/// [`ctxkit_secrets::redact_credentials`], and a password in an scp-style `user:password@host:path` too.
fn redact_source(text: &str) -> String {
    let redacted = redact_credentials(text);
    match scp_user_end(&redacted) {
        Some(at) if redacted[..at].contains(':') => {
            format!("<redacted>{}", &redacted[at..])
        }
        Some(_) | None => redacted.into_owned(),
    }
}

/// A registry package name (`name` or `@scope/name`) and, if any, a version, range or tag.
fn check_npm_spec(npm: &NpmSource) -> Result<(), &'static str> {
    let name_part = |part: &str| {
        !part.is_empty()
            && !part.starts_with(['.', '_'])
            && part
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || "-._~".contains(character))
    };
    let valid_name = match npm.name.strip_prefix('@') {
        Some(scoped) => scoped
            .split_once('/')
            .is_some_and(|(scope, name)| name_part(scope) && name_part(name)),
        None => name_part(&npm.name),
    };
    if !valid_name {
        return Err("not an npm package name");
    }
    if let Some(version) = &npm.version {
        // A packed tarball is extracted like a registry download (npm links a directory spec
        // instead, which is how `foo@../../x` escaped): the one file spec kept.
        if let Some(tarball) = version.strip_prefix("file:") {
            let packed = tarball.ends_with(".tgz") || tarball.ends_with(".tar.gz");
            let climbs = tarball.split(['/', '\\']).any(|part| part == "..");
            return if packed && !climbs {
                Ok(())
            } else {
                Err(
                    "a `file:` version must name a packed `.tgz` tarball (directories are local sources)",
                )
            };
        }
        let valid_version = !version.starts_with('.')
            && version.chars().all(|character| {
                character.is_ascii_alphanumeric() || " .^~<>=|*+-_".contains(character)
            });
        if !valid_version {
            return Err(
                "the version must be a version, a range or a tag (no paths, URLs or `file:`)",
            );
        }
    }
    Ok(())
}

/// Whether an `npm:` name is a path to a packed tarball (`npm:/abs/x-1.0.0.tgz`, which Pi 1.6
/// takes; ctxkit needs the package's name to know where it is installed).
fn tarball_path_name(name: &str) -> bool {
    let packed = name.ends_with(".tgz") || name.ends_with(".tar.gz");
    packed && (name.starts_with(['/', '.', '~']) || name.contains('/'))
}

/// For `npm:<path to a tarball>`, the source ctxkit takes instead, the package's name guessed from
/// the file name `npm pack` gives (`<name>-<version>.tgz`): `npm:np@file:/abs/np-1.0.0.tgz`. The
/// hint of the refusal names it; the user checks the name against the package's `package.json`.
fn tarball_source_suggestion(source: &str) -> Option<String> {
    let path = source.trim().strip_prefix("npm:")?.trim();
    if !tarball_path_name(path) {
        return None;
    }
    let file = path.rsplit('/').next()?;
    let stem = file
        .strip_suffix(".tgz")
        .or_else(|| file.strip_suffix(".tar.gz"))?;
    // `np-1.0.0` → `np`: the name ends before the last `-` that a digit follows.
    let name = stem
        .match_indices('-')
        .filter(|(index, _)| stem[index + 1..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|(index, _)| &stem[..index])
        .next_back()
        .filter(|name| !name.is_empty())
        .unwrap_or("NAME");
    Some(format!("npm:{name}@file:{path}"))
}

fn parse_npm_spec(spec: &str) -> NpmSource {
    // name = optional `@`, non-`@` run, optional `/` + non-`@` run; version = rest after `@`.
    let (scope_at, rest) = match spec.strip_prefix('@') {
        Some(rest) => ("@", rest),
        None => ("", spec),
    };
    match rest.split_once('@') {
        Some((name, version)) if !name.is_empty() && !version.is_empty() => NpmSource {
            spec: spec.to_owned(),
            name: format!("{scope_at}{name}"),
            version: Some(version.to_owned()),
        },
        Some(_) | None => NpmSource {
            spec: spec.to_owned(),
            name: spec.to_owned(),
            version: None,
        },
    }
}

impl PackageSource {
    /// Classifies a source string as the reference does (npm prefix, then "looks local", then
    /// git URL, else local), after rejecting control characters and a leading `-`; npm names and
    /// git host/path/ref are also checked for `..` components and leading dashes.
    pub fn parse(text: &str) -> Result<Self, SourceError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(SourceError::Empty);
        }
        if text.chars().any(char::is_control) {
            return Err(SourceError::ControlCharacter {
                source_text: text.escape_debug().to_string(),
            });
        }
        let dash = || SourceError::LeadingDash {
            source_text: text.to_owned(),
        };
        let escape = || SourceError::ParentComponent {
            source_text: text.to_owned(),
        };
        if trimmed.starts_with('-') {
            return Err(dash());
        }
        let source = Self::classify(text);
        match &source {
            Self::Npm(npm) => {
                if npm.spec.is_empty() {
                    return Err(SourceError::Empty);
                }
                if npm.spec.starts_with('-')
                    || npm.name.split('/').any(|part| part.starts_with('-'))
                {
                    return Err(dash());
                }
                if let Some(suggestion) = npm
                    .version
                    .is_none()
                    .then(|| tarball_source_suggestion(trimmed))
                    .flatten()
                {
                    return Err(SourceError::TarballWithoutName {
                        source_text: text.to_owned(),
                        suggestion,
                    });
                }
                if npm.name.split('/').any(|part| part == ".." || part == ".") {
                    return Err(escape());
                }
                // The whole spec, not just the name: `foo@../../x` or `foo@file:/etc` would make
                // npm install from a path (local packages go through the local source kind).
                if let Err(reason) = check_npm_spec(npm) {
                    return Err(SourceError::InvalidNpmSpec {
                        source_text: text.to_owned(),
                        reason,
                    });
                }
            }
            Self::Git(git) => {
                if git
                    .git_ref
                    .as_deref()
                    .is_some_and(|git_ref| git_ref.starts_with('-'))
                    || git.repo.starts_with('-')
                {
                    return Err(dash());
                }
                let parts = std::iter::once(git.host.as_str()).chain(git.path.split('/'));
                for part in parts {
                    if part == ".." || part == "." {
                        return Err(escape());
                    }
                    if part.starts_with('-') {
                        return Err(dash());
                    }
                }
            }
            Self::Local { .. } => {
                if let Some(reason) = url_not_local(trimmed) {
                    return Err(SourceError::NotAGitUrl {
                        source_text: redact_source(text),
                        reason,
                    });
                }
            }
        }
        Ok(source)
    }

    /// Classification without validation (used for identities of stored settings entries).
    pub fn classify(text: &str) -> Self {
        if let Some(spec) = text.strip_prefix("npm:") {
            return Self::Npm(parse_npm_spec(spec.trim()));
        }
        if ctxkit_settings::looks_local(text) {
            return Self::Local {
                path: text.to_owned(),
            };
        }
        match parse_git_url(text) {
            Some(git) => Self::Git(git),
            None => Self::Local {
                path: text.to_owned(),
            },
        }
    }

    /// Pinned sources (npm with a version, git with a ref) are never updated.
    pub fn is_pinned(&self) -> bool {
        match self {
            Self::Npm(npm) => npm.is_pinned(),
            Self::Git(git) => git.is_pinned(),
            Self::Local { .. } => false,
        }
    }

    /// The absolute path of a local source: tilde-expanded (`~`, `~/x`, `~x`) then resolved
    /// against `base` (the scope base dir, or cwd for typed input). `None` for npm and git.
    pub fn local_path(&self, base: &Path, home: &Path) -> Option<PathBuf> {
        match self {
            Self::Local { path } => Some(resolve_against(
                base,
                &expand_tilde_loose(path.trim(), home),
            )),
            Self::Npm(_) | Self::Git(_) => None,
        }
    }

    /// The identity that ignores version/ref and URL flavour: `npm:<name>`, `git:<host>/<path>`,
    /// `local:<absolute path>` (resolved against `base`).
    pub fn identity(&self, base: &Path, home: &Path) -> String {
        match self {
            Self::Npm(npm) => format!("npm:{}", npm.name),
            Self::Git(git) => format!("git:{}/{}", git.host, git.path),
            Self::Local { .. } => {
                let path = self.local_path(base, home).unwrap_or_default();
                format!("local:{}", path.display())
            }
        }
    }

    /// Short name for listings: npm name, `host/path`, or the path.
    pub fn display_name(&self) -> String {
        match self {
            Self::Npm(npm) => npm.name.clone(),
            Self::Git(git) => format!("{}/{}", git.host, git.path),
            Self::Local { path } => path.clone(),
        }
    }
}

//! Git URL recognition for package sources: scp-like, protocol URLs, `git:` shorthands and the
//! well-known hosting services, producing a clone URL, a host/path identity and an optional ref.

/// A git package source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// The URL handed to `git clone`.
    pub repo: String,
    /// Host, lower-cased for known services and protocol URLs.
    pub host: String,
    /// Repository path on the host (no leading `/`, no trailing `.git`).
    pub path: String,
    /// Branch, tag or commit to check out; `Some` means pinned (never updated).
    pub git_ref: Option<String>,
}

impl GitSource {
    /// Whether a ref was given (pinned sources are never updated).
    pub fn is_pinned(&self) -> bool {
        self.git_ref.is_some()
    }
}

const KNOWN_HOSTS: &[&str] = &["github.com", "gitlab.com", "bitbucket.org", "git.sr.ht"];

fn has_scheme(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["http://", "https://", "ssh://", "git://"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
}

/// How the repository part was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `git@host:path`.
    Scp,
    /// `scheme://[user@]host[:port]/path`.
    Url,
    /// `host/path` (only after the `git:` prefix).
    Shorthand,
}

#[derive(Debug)]
struct Split {
    form: Form,
    /// Repo without ref, fragment or trailing slash.
    repo: String,
    /// Host as written.
    host: String,
    /// Path as written (no leading slash).
    path: String,
    git_ref: Option<String>,
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// Splits `text@ref`: the ref is whatever follows the first `@` in `path`.
fn split_path_ref(path: &str) -> (String, Option<String>) {
    match path.split_once('@') {
        Some((repo_path, git_ref)) if !repo_path.is_empty() => {
            (repo_path.to_owned(), non_empty(git_ref))
        }
        Some(_) | None => (path.to_owned(), None),
    }
}

fn split(body: &str) -> Option<Split> {
    if let Some(rest) = body.strip_prefix("git@")
        && !rest.contains("://")
    {
        let (host, path) = rest.split_once(':')?;
        let (path, git_ref) = split_path_ref(path);
        return Some(Split {
            form: Form::Scp,
            repo: format!("git@{host}:{path}"),
            host: host.to_owned(),
            path,
            git_ref,
        });
    }
    if let Some((scheme, rest)) = body.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (path, fragment) = match path.split_once('#') {
            Some((path, fragment)) => (path, non_empty(fragment)),
            None => (path, None),
        };
        let (path, at_ref) = split_path_ref(path);
        let path = path.trim_end_matches('/').to_owned();
        let host_port = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        let host = host_port
            .split_once(':')
            .map_or(host_port, |(host, _)| host)
            .to_ascii_lowercase();
        let repo = if path.is_empty() {
            format!("{scheme}://{authority}")
        } else {
            format!("{scheme}://{authority}/{path}")
        };
        return Some(Split {
            form: Form::Url,
            repo,
            host,
            path,
            git_ref: at_ref.or(fragment),
        });
    }
    let (authority, path) = body.split_once('/')?;
    let (path, git_ref) = split_path_ref(path);
    let path = path.trim_end_matches('/').to_owned();
    // `user:pass@host`: the credentials go to `git clone`, never into the host (which names the
    // install directory and the identity).
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    Some(Split {
        form: Form::Shorthand,
        repo: format!("{authority}/{path}"),
        host: host.to_owned(),
        path,
        git_ref,
    })
}

fn strip_git_suffix(path: &str) -> String {
    path.trim_start_matches('/')
        .strip_suffix(".git")
        .unwrap_or(path.trim_start_matches('/'))
        .to_owned()
}

fn clone_url(repo: &str) -> String {
    if has_scheme(repo) || repo.starts_with("git@") {
        repo.to_owned()
    } else {
        format!("https://{repo}")
    }
}

/// For a known service: the `user/project` path and a ref from `/tree/<x>` (GitHub) or
/// `/-/tree/<x>` (GitLab). `None` when the path does not have the service's shape.
fn known_host_path(host: &str, path: &str) -> Option<(String, Option<String>)> {
    let segments: Vec<&str> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect();
    match host {
        "gitlab.com" => {
            let (repo_segments, tree) = match segments.iter().position(|segment| *segment == "-") {
                Some(index) if segments.get(index + 1) == Some(&"tree") => (
                    &segments[..index],
                    non_empty(&segments[index + 2..].join("/")),
                ),
                Some(_) | None => (&segments[..], None),
            };
            (repo_segments.len() >= 2).then(|| (strip_git_suffix(&repo_segments.join("/")), tree))
        }
        _ => match segments.as_slice() {
            [user, project] => Some((strip_git_suffix(&format!("{user}/{project}")), None)),
            [user, project, "tree", rest @ ..] if host == "github.com" && !rest.is_empty() => {
                Some((
                    strip_git_suffix(&format!("{user}/{project}")),
                    Some(rest.join("/")),
                ))
            }
            _ => None,
        },
    }
}

/// `git:file:///abs/path/repo[@ref]` (a ctxkit extension, for local mirrors and tests): host
/// `file`, path = the absolute path without its leading `/` and `.git`. Only with the `git:`
/// prefix (a bare `file://…` string is a local path).
fn file_source(prefixed: bool, split: Split) -> Option<GitSource> {
    if !prefixed || !(split.host.is_empty() || split.host == "localhost") {
        return None;
    }
    let path = strip_git_suffix(&split.path);
    if path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .count()
        < 2
    {
        return None;
    }
    Some(GitSource {
        repo: split.repo,
        host: "file".to_owned(),
        path,
        git_ref: split.git_ref,
    })
}

/// Parses a git source: `git:`-prefixed text (shorthands allowed) or a `http(s)://`, `ssh://` or
/// `git://` URL. `None` means "not git".
///
/// Divergences from the reference (all fixes of broken clone URLs, same identities): `git://…`
/// without prefix is a URL, not `git:` + `//…`; `#ref` and GitHub `/tree/<ref>` are removed from
/// the clone URL; `git:user/repo` clones from `https://github.com/user/repo`.
pub fn parse_git_url(input: &str) -> Option<GitSource> {
    let trimmed = input.trim();
    let mut prefixed = false;
    let body = if trimmed.to_ascii_lowercase().starts_with("git://") {
        trimmed
    } else if let Some(rest) = trimmed.strip_prefix("git:") {
        prefixed = true;
        rest.trim()
    } else if has_scheme(trimmed) {
        trimmed
    } else {
        return None;
    };
    let split = split(body)?;
    if split.form == Form::Url && body.to_ascii_lowercase().starts_with("file://") {
        return file_source(prefixed, split);
    }
    let host_lower = split.host.to_ascii_lowercase();

    if KNOWN_HOSTS.contains(&host_lower.as_str())
        && let Some((path, tree_ref)) = known_host_path(&host_lower, &split.path)
    {
        let repo = match tree_ref {
            Some(_) => split
                .repo
                .split("/tree/")
                .next()
                .unwrap_or(&split.repo)
                .trim_end_matches("/-")
                .to_owned(),
            None => split.repo.clone(),
        };
        return Some(GitSource {
            repo: clone_url(&repo),
            host: host_lower,
            path,
            git_ref: tree_ref.or(split.git_ref),
        });
    }

    // GitHub shorthand `git:user/repo` (no dot in the first segment).
    if split.form == Form::Shorthand
        && !split.host.contains('.')
        && split.host != "localhost"
        && !split.path.is_empty()
        && !split.path.contains('/')
    {
        let path = strip_git_suffix(&format!("{}/{}", split.host, split.path));
        return Some(GitSource {
            repo: format!("https://github.com/{path}"),
            host: "github.com".to_owned(),
            path,
            git_ref: split.git_ref,
        });
    }

    let host = match split.form {
        Form::Scp | Form::Shorthand => split.host.clone(),
        Form::Url => host_lower,
    };
    if split.form == Form::Shorthand && !(host.contains('.') || host == "localhost") {
        return None;
    }
    let path = strip_git_suffix(&split.path);
    if host.is_empty()
        || path
            .split('/')
            .filter(|segment| !segment.is_empty())
            .count()
            < 2
    {
        return None;
    }
    Some(GitSource {
        repo: clone_url(&split.repo),
        host,
        path,
        git_ref: split.git_ref,
    })
}

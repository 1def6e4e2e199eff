//! How the system would open a path: every symlink followed, `..` applied to what it follows, a
//! part that does not exist yet resolved through its nearest existing ancestor. The workspace
//! judges every tool's path by it. Also how a tool's path argument becomes a path, and where the
//! links in ctxkit's home lead.

use std::path::{Component, Path, PathBuf};

/// Symlinks followed while resolving one path, as the system's own limit.
const MAX_LINK_HOPS: usize = 40;

/// `path` as the system would open it: every symlink followed (a dangling one too, to where it
/// points), `..` applied to what it follows; a part that does not exist yet is resolved through
/// its nearest existing ancestor.
pub fn resolve(path: &Path) -> PathBuf {
    let mut hops = 0;
    resolve_counting(path, &mut hops)
}

fn resolve_counting(path: &Path, hops: &mut usize) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    if let Ok(metadata) = path.symlink_metadata()
        && metadata.file_type().is_symlink()
        && *hops < MAX_LINK_HOPS
        && let Ok(target) = std::fs::read_link(path)
    {
        *hops += 1;
        let base = path.parent().unwrap_or(Path::new("/"));
        return resolve_counting(&base.join(target), hops);
    }
    let mut components = path.components();
    let last = components.next_back();
    let parent = components.as_path();
    match last {
        Some(Component::Normal(name)) => resolve_counting(parent, hops).join(name),
        Some(Component::ParentDir) => {
            let mut resolved = resolve_counting(parent, hops);
            resolved.pop();
            resolved
        }
        Some(Component::CurDir) => resolve_counting(parent, hops),
        Some(Component::RootDir | Component::Prefix(_)) | None => path.to_owned(),
    }
}

/// Where the entries of ctxkit's `home` that are symlinks lead, resolved (`settings.json`,
/// `auth.json`, `trusted-projects.json`, a linked `skills` or `sessions` folder): ctxkit's own
/// places by another name. A link to the home itself or to a folder holding it (`up -> ..`)
/// is left out: that folder is not ctxkit's, and what of ctxkit's it holds is the home.
pub(crate) fn home_link_targets(home: &Path) -> Vec<PathBuf> {
    let resolved_home = resolve(home);
    let Ok(entries) = std::fs::read_dir(home) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_symlink()))
        .map(|entry| resolve(&entry.path()))
        .filter(|target| !resolved_home.starts_with(target))
        .collect()
}

/// A path argument as a path: `~/` is the user's home, a relative path is under `cwd`, `$'…'` parts
/// are unquoted (`names::decoded`).
pub(crate) fn expand(cwd: &Path, argument: &str) -> PathBuf {
    let argument = argument.strip_prefix('@').unwrap_or(argument);
    if (argument == "~" || argument.starts_with("~/"))
        && let Some(home) = std::env::home_dir()
    {
        return home.join(crate::names::decoded(
            argument.trim_start_matches('~').trim_start_matches('/'),
        ));
    }
    // A name `ls` or `grep` showed quoted (`$'a\nb'`) names the file it was shown for.
    let path = crate::names::decoded(argument);
    if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    }
}

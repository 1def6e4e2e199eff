//! How the system would open a path: every symlink followed, `..` applied to what it follows, a
//! part that does not exist yet resolved through its nearest existing ancestor. The workspace
//! judges every tool's path by it.

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

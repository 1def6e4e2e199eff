//! Which files of one package root are resources: the manifest (`ctxkit` or `pi`
//! key of package.json) or the convention directories, narrowed by settings filter objects, and
//! confined to the package: a manifest entry naming a place outside the root, and a file a symlink
//! leads out of it to, are refused with a warning (the reference loads them).

use std::path::{Path, PathBuf};

use ctxkit_settings::PackageSetting;

use crate::diagnostics::ResourceDiagnostic;

use super::confine::Confinement;
use super::patterns::{
    apply_autoload_disabled_patterns, apply_patterns, has_glob, is_override_pattern,
};
use super::walk::{
    Bound, EntryType, Visit, Visits, collect_from_paths, collect_resource_files, entry_type,
    manifest_entries, read_manifest, sorted_entries,
};
use ctxkit_settings::ResourceKind;
use ctxkit_settings::{resolve_against, to_slash};

/// Files of one kind of one package, each with its enabled flag.
pub(crate) type KindFiles = Vec<(PathBuf, bool)>;

/// The per-kind files of a package root; `found_any` is false when the package has neither a
/// manifest nor a convention directory (and no filter object). `refused` names what was left
/// out for leading out of the package.
#[derive(Debug, Default)]
pub(crate) struct PackageFiles {
    pub(crate) by_kind: Vec<(ResourceKind, KindFiles)>,
    pub(crate) found_any: bool,
    pub(crate) refused: Vec<ResourceDiagnostic>,
}

/// Expands manifest source entries (paths or globs relative to `root`) into files. A path that
/// lies outside the package (`../../x`, an absolute path elsewhere) is refused into `refused`.
fn files_from_manifest_entries(
    entries: &[String],
    root: &Path,
    kind: ResourceKind,
    refused: &mut Vec<ResourceDiagnostic>,
) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for entry in entries.iter().filter(|entry| !is_override_pattern(entry)) {
        if has_glob(entry) {
            paths.extend(expand_glob(root, entry));
            continue;
        }
        let path = resolve_against(root, Path::new(entry));
        if path.starts_with(root) {
            paths.push(path);
        } else {
            refused.push(ResourceDiagnostic::warning(
                format!(
                    "The manifest of the package `{}` names `{entry}` under `{}`, which lies \
                     outside the package; it is not loaded",
                    root.display(),
                    kind.key()
                ),
                root.join("package.json"),
            ));
        }
    }
    let real_root = ctxkit_settings::canonical_or_raw(root);
    collect_from_paths(&paths, kind, Bound::within(&real_root))
}

/// Leaves out of `files` each one whose real place (symlinks followed) is not inside the
/// package's real root, with a warning into `refused`.
fn confine(root: &Path, files: &mut KindFiles, refused: &mut Vec<ResourceDiagnostic>) {
    let confinement = Confinement {
        folder: root,
        role: "the package",
        hint: "",
    };
    confinement.retain(files, |(path, _)| path.as_path(), refused);
}

/// Files and directories below `root` whose relative path matches `pattern` (dot entries are
/// never matched; `node_modules` is only entered when the pattern names it). Each real folder is
/// entered once, and none whose real place lies outside the package (QA 2026-12-07: two links to
/// `.` in a globbed folder made 2^40 paths, and a link to `/usr` a walk of it, at every start,
/// untrusted); a link out that matches is listed, for the confinement to refuse.
fn expand_glob(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    let glob = super::patterns::Glob::new(pattern);
    let enter_node_modules = pattern.contains("node_modules");
    let real_root = ctxkit_settings::canonical_or_raw(root);
    let mut visits = Visits::new(Bound::within(&real_root));
    visits.visit(root);
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(directory) = stack.pop() {
        let mut children = Vec::new();
        for (name, path) in sorted_entries(&directory) {
            if name.starts_with('.') || (name == "node_modules" && !enter_node_modules) {
                continue;
            }
            let relative = to_slash(path.strip_prefix(root).unwrap_or(&path));
            if glob.is_match(&relative) {
                out.push(path.clone());
            }
            if entry_type(&path) == Some(EntryType::Directory)
                && visits.visit(&path) == Visit::Enter
            {
                children.push(path);
            }
        }
        stack.extend(children.into_iter().rev());
    }
    out.sort();
    out
}

/// Manifest files of a kind after the manifest's own override patterns: only enabled
/// files are kept.
fn manifest_files(
    entries: &[String],
    root: &Path,
    kind: ResourceKind,
    refused: &mut Vec<ResourceDiagnostic>,
) -> Vec<PathBuf> {
    let all = files_from_manifest_entries(entries, root, kind, refused);
    let overrides: Vec<String> = entries
        .iter()
        .filter(|entry| is_override_pattern(entry))
        .cloned()
        .collect();
    let enabled = apply_patterns(&all, &overrides, root);
    all.into_iter()
        .filter(|path| enabled.contains(path))
        .collect()
}

fn convention_files(root: &Path, kind: ResourceKind) -> Option<Vec<PathBuf>> {
    let directory = root.join(kind.key());
    let real_root = ctxkit_settings::canonical_or_raw(root);
    directory
        .exists()
        .then(|| collect_resource_files(&directory, kind, Bound::within(&real_root)))
}

/// The files of a kind the patterns of a filter object choose among, as Pi 1.6's
/// `collectManifestFiles`: the manifest's (after its own patterns) when it lists any, else the
/// convention folder's.
fn candidate_files(
    manifest_kind: Option<Vec<String>>,
    root: &Path,
    kind: ResourceKind,
    refused: &mut Vec<ResourceDiagnostic>,
) -> Vec<PathBuf> {
    match manifest_kind.filter(|entries| !entries.is_empty()) {
        Some(entries) => manifest_files(&entries, root, kind, refused),
        None => convention_files(root, kind).unwrap_or_default(),
    }
}

fn all_enabled(files: Vec<PathBuf>) -> KindFiles {
    files.into_iter().map(|path| (path, true)).collect()
}

/// Resolves the resources of a package root, with an optional filter object (the object form
/// of a `packages` entry), confined to the package.
pub(crate) fn package_files(root: &Path, filter: Option<&PackageSetting>) -> PackageFiles {
    let mut result = unconfined_package_files(root, filter);
    let mut refused = std::mem::take(&mut result.refused);
    for (_, files) in &mut result.by_kind {
        confine(root, files, &mut refused);
    }
    result.refused = refused;
    result
}

fn unconfined_package_files(root: &Path, filter: Option<&PackageSetting>) -> PackageFiles {
    let manifest = read_manifest(root);
    let mut result = PackageFiles::default();
    let refused = &mut result.refused;
    match filter {
        Some(filter) => {
            result.found_any = true;
            for kind in ResourceKind::ALL {
                let manifest_kind = manifest
                    .as_ref()
                    .and_then(|manifest| manifest_entries(manifest, kind));
                let files = match filter.patterns(kind) {
                    // Pi 1.6: with `autoload: false` only what the patterns name loads.
                    patterns if filter.autoload_disabled() => {
                        let patterns = patterns.unwrap_or_default();
                        if patterns.is_empty() {
                            Vec::new()
                        } else {
                            let candidates = candidate_files(manifest_kind, root, kind, refused);
                            apply_autoload_disabled_patterns(&candidates, patterns, root)
                        }
                    }
                    None => match manifest_kind {
                        Some(entries) => all_enabled(manifest_files(&entries, root, kind, refused)),
                        None => all_enabled(convention_files(root, kind).unwrap_or_default()),
                    },
                    Some(patterns) => {
                        let candidates = candidate_files(manifest_kind, root, kind, refused);
                        if patterns.is_empty() {
                            candidates.into_iter().map(|path| (path, false)).collect()
                        } else {
                            let enabled = apply_patterns(&candidates, patterns, root);
                            candidates
                                .into_iter()
                                .map(|path| {
                                    let on = enabled.contains(&path);
                                    (path, on)
                                })
                                .collect()
                        }
                    }
                };
                result.by_kind.push((kind, files));
            }
        }
        None => match manifest {
            Some(manifest) => {
                result.found_any = true;
                for kind in ResourceKind::ALL {
                    let files = manifest_entries(&manifest, kind)
                        .map(|entries| manifest_files(&entries, root, kind, refused))
                        .unwrap_or_default();
                    result.by_kind.push((kind, all_enabled(files)));
                }
            }
            None => {
                for kind in ResourceKind::ALL {
                    if let Some(files) = convention_files(root, kind) {
                        result.found_any = true;
                        result.by_kind.push((kind, all_enabled(files)));
                    }
                }
            }
        },
    }
    result
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// QA (2026-12-07): a globbed folder with two links to itself walked 2^40 paths, and one with
    /// a link to `/usr` walked it. Each real folder is entered once, none outside the package.
    #[test]
    fn a_glob_enters_each_real_folder_once_and_none_outside_the_package() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("pkg");
        let stuff = root.join("stuff");
        std::fs::create_dir_all(stuff.join("deeper")).unwrap();
        std::fs::write(stuff.join("a.md"), "a").unwrap();
        std::fs::write(stuff.join("deeper/b.md"), "b").unwrap();
        std::os::unix::fs::symlink(".", stuff.join("l1")).unwrap();
        std::os::unix::fs::symlink(".", stuff.join("l2")).unwrap();
        std::fs::create_dir_all(temp.path().join("outside")).unwrap();
        std::fs::write(temp.path().join("outside/secret.md"), "s").unwrap();
        std::os::unix::fs::symlink(temp.path().join("outside"), stuff.join("out")).unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        let scanned = root.clone();
        std::thread::spawn(move || {
            let _ = sender.send(expand_glob(&scanned, "stuff/**/*.md"));
        });
        let found = receiver
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the walk ends");
        assert_eq!(
            found,
            vec![stuff.join("a.md"), stuff.join("deeper/b.md")],
            "{found:?}"
        );
    }
}

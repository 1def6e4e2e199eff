//! The one place the package manager reads and writes package folders: every path goes through a
//! jail ([`ctxkit_jail::Jail`]) on the folder it belongs to — the project (project packages under
//! `.ctxkit/`), ctxkit's agent folder (user packages), or the temporary install folder — so a
//! folder or file that is a symlink out of it, `..` past it, and the user's credentials are
//! refused in the kernel at the moment of opening (a hostile repository that commits
//! `.ctxkit/git/github.com` as a symlink to `~` gets no clone, write or removal there). Files read
//! from a package (its `package.json`, ignore files, `.git/config`) are opened beneath the folder
//! that holds them, like the resource loader's.

use std::path::{Path, PathBuf};

use ctxkit_jail::{Jail, JailError};

use crate::error::PackageError;

/// The most bytes of a package's `package.json`, ignore file or `.git/config` read.
pub(crate) const MAX_PACKAGE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The folders package paths lie in, each opened as a jail when a path in it is touched.
#[derive(Debug, Clone)]
pub(crate) struct PackageFolders {
    /// The roots, most specific first.
    roots: Vec<PathBuf>,
}

impl PackageFolders {
    pub(crate) fn new(roots: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut roots: Vec<PathBuf> = roots
            .into_iter()
            .map(|root| ctxkit_jail::lexical(&root))
            .collect();
        roots.sort_by_key(|root| std::cmp::Reverse(root.components().count()));
        Self { roots }
    }

    /// The jail on the root `path` lies in (created when missing), or why there is none.
    fn jail_for(&self, path: &Path) -> Result<Jail, PackageError> {
        let lexical = ctxkit_jail::lexical(path);
        let Some(root) = self.roots.iter().find(|root| lexical.starts_with(root)) else {
            return Err(refused(path, "it is not in a package folder of ctxkit"));
        };
        std::fs::create_dir_all(root).map_err(|source| PackageError::Io {
            path: root.clone(),
            source,
        })?;
        Jail::open(root).map_err(|error| jail_refusal(path, &error))
    }

    /// Creates the directory `path` and its missing parents, beneath its root.
    pub(crate) fn create_dir_all(&self, path: &Path) -> Result<(), PackageError> {
        self.jail_for(path)?
            .create_dir_all(&ctxkit_jail::lexical(path))
            .map_err(|error| jail_refusal(path, &error))
    }

    /// Writes `content` to the file `path` unless a file is there already.
    pub(crate) fn write_if_absent(&self, path: &Path, content: &str) -> Result<(), PackageError> {
        let jail = self.jail_for(path)?;
        let path = ctxkit_jail::lexical(path);
        if jail.is_file(&path) {
            return Ok(());
        }
        jail.write_atomic(&path, content.as_bytes())
            .map_err(|error| jail_refusal(&path, &error))
    }

    /// Removes the directory `path` and everything in it, beneath its root (a symlink inside is
    /// removed, never followed). Nothing there is not an error.
    pub(crate) fn remove_dir_all(&self, path: &Path) -> Result<(), PackageError> {
        let jail = self.jail_for(path)?;
        match jail.remove_dir_all(&ctxkit_jail::lexical(path)) {
            Err(error) if !error.is_not_found() => Err(jail_refusal(path, &error)),
            Ok(()) | Err(_) => Ok(()),
        }
    }

    /// Refuses a folder that does not lie beneath its root (a symlink on the way leads out of
    /// it): git is about to fetch into it and reset what is there.
    pub(crate) fn check_beneath(&self, path: &Path) -> Result<(), PackageError> {
        self.jail_for(path)?
            .read_dir(&ctxkit_jail::lexical(path))
            .map(|_| ())
            .map_err(|error| jail_refusal(path, &error))
    }

    /// Refuses an npm project folder (`--prefix root`) that npm would reach out of its scope's
    /// folder through: npm follows links, so the folder itself, its `node_modules` (and the
    /// scope folder of `package`, `@scope/name[@version]`), its `package.json` and `package-lock.json` must
    /// each be missing or lie beneath the root (a project that commits `.ctxkit/npm` as a
    /// symlink to another folder would have npm remove and rewrite files there); and it holds no
    /// `.npmrc`, which npm would read as its configuration.
    pub(crate) fn check_npm_root(&self, root: &Path, package: &str) -> Result<(), PackageError> {
        let jail = self.jail_for(root)?;
        let root = ctxkit_jail::lexical(root);
        let modules = root.join("node_modules");
        let mut folders = vec![root.clone(), modules.clone()];
        if let Some((scope, _)) = package.split_once('/').filter(|_| package.starts_with('@')) {
            folders.push(modules.join(scope));
        }
        for folder in &folders {
            match jail.read_dir(folder) {
                Err(error) if !error.is_not_found() => return Err(jail_refusal(folder, &error)),
                Ok(_) | Err(_) => {}
            }
        }
        for file in ["package.json", "package-lock.json"].map(|name| root.join(name)) {
            match jail.read(&file, 0) {
                // Missing or unreadable: npm says so itself; only a way out is refused here.
                Ok(_) | Err(JailError::Io { .. }) => {}
                Err(error) => return Err(jail_refusal(&file, &error)),
            }
        }
        // npm reads `<prefix>/.npmrc` as its project's configuration: one committed to a project's
        // `.ctxkit/npm` would choose the registry (and any other npm setting) of the user's
        // install. ctxkit never writes one there.
        let npmrc = root.join(".npmrc");
        if std::fs::symlink_metadata(&npmrc).is_ok() {
            return Err(refused(
                &npmrc,
                "npm would take its settings (the registry, how scripts run) from it; remove it, \
                 and keep npm's settings in your own `~/.npmrc`",
            ));
        }
        Ok(())
    }

    /// Removes the directory `path` if it is empty; whether it was removed.
    pub(crate) fn remove_empty_dir(&self, path: &Path) -> bool {
        self.jail_for(path)
            .is_ok_and(|jail| jail.remove_dir(&ctxkit_jail::lexical(path)).is_ok())
    }
}

/// The text of a file of a package, opened beneath the folder that holds it (a symlink out of it,
/// ctxkit's own places and credentials refused); `None` when it cannot be read.
pub(crate) fn read_package_file(path: &Path) -> Option<String> {
    ctxkit_jail::read_in_folder(path, MAX_PACKAGE_FILE_BYTES).ok()
}

/// As [`read_package_file`], with the reason when it cannot be read.
pub(crate) fn read_package_file_or_error(path: &Path) -> Result<String, PackageError> {
    ctxkit_jail::read_in_folder(path, MAX_PACKAGE_FILE_BYTES).map_err(|error| {
        if let JailError::Io { source, .. } = error {
            PackageError::Io {
                path: path.to_owned(),
                source,
            }
        } else {
            jail_refusal(path, &error)
        }
    })
}

fn jail_refusal(path: &Path, error: &JailError) -> PackageError {
    refused(path, &error.to_string())
}

fn refused(path: &Path, reason: &str) -> PackageError {
    PackageError::Refused {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npm_folder_reaching_out_through_a_link_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let project = temp.path().join("proj");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(outside.join("@scope")).unwrap();
        std::fs::write(outside.join("package.json"), "{}").unwrap();
        let root = project.join(".ctxkit/npm");
        std::fs::create_dir_all(root.join("node_modules")).unwrap();
        let folders = PackageFolders::new([project.clone()]);
        assert!(folders.check_npm_root(&root, "@scope/x@1").is_ok());
        let link = |target: &Path, name: &str| {
            std::os::unix::fs::symlink(target, root.join(name)).unwrap();
            let refused = folders.check_npm_root(&root, "@scope/x@1");
            std::fs::remove_file(root.join(name)).unwrap();
            refused
        };
        assert!(link(&outside.join("package.json"), "package.json").is_err());
        assert!(link(&outside.join("package.json"), "package-lock.json").is_err());
        assert!(link(&outside, "node_modules/@scope").is_err());
        std::fs::remove_dir(root.join("node_modules")).unwrap();
        assert!(link(&outside, "node_modules").is_err());
    }
}

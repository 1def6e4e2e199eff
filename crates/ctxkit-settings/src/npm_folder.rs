//! Whether a project's npm folder (`.ctxkit/npm`) holds anything npm would act on. A cloned
//! repository can commit there a `package.json`, a `package-lock.json`, an `npm-shrinkwrap.json`
//! or a `node_modules` naming dependencies (and install scripts of its own) that the next `npm
//! install` or `npm uninstall` in the folder installs and runs. So a folder holding anything but
//! what ctxkit writes before its first npm run (its `.gitignore` and [`NPM_FOLDER_MANIFEST`]) is
//! one of the project's resources that wait for trust (`protected_resources`), whoever wrote it,
//! and npm is run there only in a trusted project. Trusting covers the folder by its place, as it
//! covers a skills folder.

use std::path::Path;

/// The `package.json` ctxkit writes in a new npm folder (`.ctxkit/npm`, `<home>/npm`).
pub const NPM_FOLDER_MANIFEST: &str =
    "{\n  \"name\": \"ctxkit-extensions\",\n  \"private\": true\n}";

/// Whether the npm folder `folder` holds nothing npm would act on: it is missing, or holds only
/// ctxkit's `.gitignore` and [`NPM_FOLDER_MANIFEST`] as `package.json`. A folder that cannot be
/// listed, or a `package.json` that cannot be read, holds something.
pub fn npm_folder_is_fresh(folder: &Path) -> bool {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(error) => return error.kind() == std::io::ErrorKind::NotFound,
    };
    for entry in entries {
        let Ok(entry) = entry else {
            return false;
        };
        let name = entry.file_name();
        let fresh = if name == ".gitignore" {
            entry.file_type().is_ok_and(|kind| kind.is_file())
        } else if name == "package.json" {
            ctxkit_jail::read_in_folder(&entry.path(), NPM_FOLDER_MANIFEST.len() as u64 + 1)
                .is_ok_and(|text| text == NPM_FOLDER_MANIFEST)
        } else {
            false
        };
        if !fresh {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_fresh_when_missing_or_holding_only_what_ctxkit_writes_first() {
        let project = tempfile::tempdir().unwrap();
        let folder = project.path().join(".ctxkit/npm");
        assert!(npm_folder_is_fresh(&folder));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(".gitignore"), "*\n").unwrap();
        std::fs::write(folder.join("package.json"), NPM_FOLDER_MANIFEST).unwrap();
        assert!(npm_folder_is_fresh(&folder));
        for (name, committed) in [
            ("npm-shrinkwrap.json", "{}"),
            ("package-lock.json", "{}"),
            ("package.json", "{\"dependencies\":{\"x\":\"1\"}}"),
        ] {
            std::fs::write(folder.join(name), committed).unwrap();
            assert!(!npm_folder_is_fresh(&folder), "{name}");
            if name == "package.json" {
                std::fs::write(folder.join(name), NPM_FOLDER_MANIFEST).unwrap();
            } else {
                std::fs::remove_file(folder.join(name)).unwrap();
            }
        }
        std::fs::create_dir_all(folder.join("node_modules/dep")).unwrap();
        assert!(!npm_folder_is_fresh(&folder));
    }
}

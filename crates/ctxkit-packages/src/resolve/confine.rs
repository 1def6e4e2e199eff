//! Keeping found files inside the folder they were found from. A folder scanned for resources
//! (a package, an entry of a project's settings arrays, a project's auto-discovered folder) may
//! hold a symlink leading elsewhere: `skills/notes -> ~/.ssh`. The entry itself was judged (an
//! untrusted project's entry that reaches outside waits for `ctxkit trust`), but what a scan finds
//! below it was not; so a file whose real place (symlinks followed) lies outside the folder's
//! real place is refused with a warning, and the rest loads. The reference loads them.

use std::path::Path;

use ctxkit_settings::canonical_or_raw;

use crate::diagnostics::ResourceDiagnostic;

/// The folder found files must really lie in, and how a warning names it.
pub(crate) struct Confinement<'a> {
    /// The folder, as named (for messages).
    pub(crate) folder: &'a Path,
    /// What the folder is, for messages: "the package", "the project folder", "the project's
    /// entry".
    pub(crate) role: &'a str,
    /// Said after "it is not loaded" (empty: nothing).
    pub(crate) hint: &'a str,
}

impl Confinement<'_> {
    /// Keeps the files (`path` of each item) whose real place lies in the folder's real place;
    /// each other one is left out with a warning into `refused`.
    pub(crate) fn retain<T>(
        &self,
        items: &mut Vec<T>,
        path_of: impl Fn(&T) -> &Path,
        refused: &mut Vec<ResourceDiagnostic>,
    ) {
        let real_folder = canonical_or_raw(self.folder);
        items.retain(|item| {
            let path = path_of(item);
            let real = canonical_or_raw(path);
            let inside = real.starts_with(&real_folder);
            if !inside {
                refused.push(ResourceDiagnostic::warning(
                    format!(
                        "`{}` leads out of {} `{}` (to `{}`); it is not loaded{}",
                        path.display(),
                        self.role,
                        self.folder.display(),
                        real.display(),
                        self.hint
                    ),
                    path,
                ));
            }
            inside
        });
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_file_a_symlink_leads_out_of_the_folder_to_is_refused_by_its_real_place() {
        let temp = tempfile::tempdir().unwrap();
        let folder = temp.path().join("project");
        std::fs::create_dir_all(folder.join("skills")).unwrap();
        std::fs::create_dir_all(temp.path().join("outside")).unwrap();
        std::fs::write(temp.path().join("outside/secret.md"), "x").unwrap();
        std::fs::write(folder.join("skills/near.md"), "x").unwrap();
        std::os::unix::fs::symlink("../../outside/secret.md", folder.join("skills/far.md"))
            .unwrap();
        std::os::unix::fs::symlink("near.md", folder.join("skills/alias.md")).unwrap();
        let mut files: Vec<PathBuf> = ["near.md", "far.md", "alias.md", "missing.md"]
            .iter()
            .map(|name| folder.join("skills").join(name))
            .collect();
        let mut refused = Vec::new();
        let confinement = Confinement {
            folder: &folder,
            role: "the project",
            hint: "",
        };
        confinement.retain(&mut files, |path| path.as_path(), &mut refused);
        let names: Vec<_> = files.iter().filter_map(|path| path.file_name()).collect();
        assert_eq!(names, ["near.md", "alias.md", "missing.md"]);
        assert_eq!(refused.len(), 1);
        let message = refused[0].to_string();
        assert!(message.contains("far.md") && message.contains("leads out of the project"));
    }
}

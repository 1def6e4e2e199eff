//! Where a settings file may lead. The user's own file (and the trust list) is the user's choice:
//! symlinks are followed anywhere (a dotfiles folder), into a regular file only. A project's file
//! comes with the repository: it is read only beneath its own folder (`.ctxkit`), which must itself
//! lie in the project, so a committed symlink cannot make ctxkit read a FIFO, a device or a file
//! elsewhere as the project's settings. Every read is bounded and never waits for a writer.

use std::path::Path;

use ctxkit_jail::{JailError, MAX_RESOURCE_BYTES};

use crate::env::Environment;
use crate::error::{FileRefusal, SettingsError, SettingsScope};

/// How far a settings file may lead through symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// The user's own file: links followed anywhere, into a regular file only.
    Anywhere,
    /// A project's file: opened beneath its folder, which must not lead out of its own parent.
    BeneathFolder,
}

impl Reach {
    /// The reach of a scope's file: a project's file beneath its folder, unless that folder is the
    /// user's ctxkit home itself by name (ctxkit started in the home directory).
    pub fn of(environment: &Environment, scope: SettingsScope) -> Self {
        match scope {
            SettingsScope::Global => Self::Anywhere,
            SettingsScope::Project => {
                let home = environment.cwd.join(environment.agent_dir());
                let project = environment.project_dir();
                if ctxkit_jail::lexical(&home) == ctxkit_jail::lexical(&project) {
                    Self::Anywhere
                } else {
                    Self::BeneathFolder
                }
            }
        }
    }
}

/// The text of the settings file at `path` (`None` when it does not exist), read as `reach`
/// allows and at most [`MAX_RESOURCE_BYTES`] long.
pub fn read_text(path: &Path, reach: Reach) -> Result<Option<String>, SettingsError> {
    let read = match reach {
        Reach::Anywhere => ctxkit_jail::read_regular_to_string(path, MAX_RESOURCE_BYTES),
        Reach::BeneathFolder => {
            let (folder, name) = folder_and_name(path)?;
            confined_folder(path, folder)?;
            ctxkit_jail::Jail::open_bare(folder)
                .and_then(|jail| jail.read_to_string(Path::new(name), MAX_RESOURCE_BYTES))
        }
    };
    match read {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.is_not_found() => Ok(None),
        Err(error) => Err(refusal(path, error)),
    }
}

/// The folder holding `path` and the file's name.
pub(crate) fn folder_and_name(path: &Path) -> Result<(&Path, &std::ffi::OsStr), SettingsError> {
    let name = path.file_name().ok_or_else(|| SettingsError::Refused {
        path: path.to_path_buf(),
        reason: FileRefusal::NotRegular,
    })?;
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        Some(_) | None => Path::new("."),
    };
    Ok((folder, name))
}

/// Refuses a project's folder that leads out of its own parent (`.ctxkit` a symlink elsewhere, to
/// the user's ctxkit home for one); a folder that does not exist yet is fine.
pub(crate) fn confined_folder(path: &Path, folder: &Path) -> Result<(), SettingsError> {
    let Ok(resolved) = std::fs::canonicalize(folder) else {
        return Ok(());
    };
    let parent = folder
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let parent = std::fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    if resolved.starts_with(&parent) && resolved != parent {
        return Ok(());
    }
    Err(SettingsError::Refused {
        path: path.to_path_buf(),
        reason: FileRefusal::LeadsOutOf {
            folder: folder.to_path_buf(),
        },
    })
}

/// A jail's answer as a settings error: a refusal for what is not a settings file, the system's
/// error otherwise.
fn refusal(path: &Path, error: JailError) -> SettingsError {
    let reason = match error {
        JailError::NotRegular { .. } => FileRefusal::NotRegular,
        JailError::TooLarge { max, .. } => FileRefusal::TooLarge { max },
        JailError::NotText { .. } => FileRefusal::NotText,
        JailError::Escapes { root, .. } | JailError::Outside { root, .. } => {
            FileRefusal::LeadsOutOf { folder: root }
        }
        JailError::Io { source, .. } => {
            return SettingsError::Read {
                path: path.to_path_buf(),
                source,
            };
        }
        JailError::TooDeep { .. }
        | JailError::TooLong { .. }
        | JailError::Denied { .. }
        | JailError::ReadOnly { .. } => {
            return SettingsError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other(error),
            };
        }
    };
    SettingsError::Refused {
        path: path.to_path_buf(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn refusal_of(path: &Path, reach: Reach) -> FileRefusal {
        match read_text(path, reach) {
            Err(SettingsError::Refused { reason, .. }) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn mkfifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    /// QA: `.ctxkit/settings.json` as a FIFO hung every command; as a link to `/dev/zero` it grew to
    /// gigabytes; a 300 MB file took 55 s and 2.3 GB.
    #[test]
    fn a_fifo_a_device_and_a_huge_file_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(".ctxkit");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("settings.json");
        mkfifo(&file);
        for reach in [Reach::Anywhere, Reach::BeneathFolder] {
            assert_eq!(refusal_of(&file, reach), FileRefusal::NotRegular);
        }
        std::fs::remove_file(&file).unwrap();
        symlink("/dev/zero", &file).unwrap();
        assert_eq!(refusal_of(&file, Reach::Anywhere), FileRefusal::NotRegular);
        assert_eq!(
            refusal_of(&file, Reach::BeneathFolder),
            FileRefusal::LeadsOutOf {
                folder: std::fs::canonicalize(&folder).unwrap()
            }
        );
        std::fs::remove_file(&file).unwrap();
        let huge = vec![b' '; usize::try_from(MAX_RESOURCE_BYTES).unwrap() + 1];
        std::fs::write(&file, huge).unwrap();
        assert_eq!(
            refusal_of(&file, Reach::BeneathFolder),
            FileRefusal::TooLarge {
                max: MAX_RESOURCE_BYTES
            }
        );
        let message = read_text(&file, Reach::Anywhere).unwrap_err().to_string();
        assert_eq!(
            message,
            format!("Settings file `{}` is larger than 4 MiB", file.display())
        );
    }

    #[test]
    fn a_projects_links_stay_in_its_folder_and_the_users_go_anywhere() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        let folder = project.join(".ctxkit");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(dir.path().join("elsewhere.json"), r#"{"theme": "x"}"#).unwrap();
        std::fs::write(folder.join("shared.json"), r#"{"theme": "y"}"#).unwrap();
        let file = folder.join("settings.json");
        symlink("../../elsewhere.json", &file).unwrap();
        assert!(matches!(
            refusal_of(&file, Reach::BeneathFolder),
            FileRefusal::LeadsOutOf { .. }
        ));
        // The user's own file may live in a dotfiles folder.
        assert!(read_text(&file, Reach::Anywhere).unwrap().is_some());
        std::fs::remove_file(&file).unwrap();
        symlink("shared.json", &file).unwrap();
        assert_eq!(
            read_text(&file, Reach::BeneathFolder).unwrap().as_deref(),
            Some(r#"{"theme": "y"}"#)
        );
        // A dangling link inside the folder is a missing file.
        std::fs::remove_file(&file).unwrap();
        symlink("missing.json", &file).unwrap();
        assert_eq!(read_text(&file, Reach::BeneathFolder).unwrap(), None);
        // The folder itself a link out of the project (to the user's ctxkit home, say).
        let other = dir.path().join("other");
        std::fs::create_dir_all(project.join("sub")).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("settings.json"), "{}").unwrap();
        symlink(&other, project.join("sub/.ctxkit")).unwrap();
        let through = project.join("sub/.ctxkit/settings.json");
        assert!(matches!(
            refusal_of(&through, Reach::BeneathFolder),
            FileRefusal::LeadsOutOf { .. }
        ));
        assert_eq!(
            read_text(
                &project.join("none/.ctxkit/settings.json"),
                Reach::BeneathFolder
            )
            .unwrap(),
            None
        );
    }

    #[test]
    fn a_project_folder_that_is_the_ctxkit_home_by_name_is_the_users() {
        let environment = Environment::new("/h", "/h");
        assert_eq!(
            Reach::of(&environment, SettingsScope::Project),
            Reach::Anywhere
        );
        let elsewhere = Environment::new("/h", "/h/src");
        assert_eq!(
            Reach::of(&elsewhere, SettingsScope::Project),
            Reach::BeneathFolder
        );
        let custom = environment.with_variable(crate::CTXKIT_HOME_VAR, "/h/ck");
        assert_eq!(
            Reach::of(&custom, SettingsScope::Project),
            Reach::BeneathFolder
        );
        assert_eq!(Reach::of(&custom, SettingsScope::Global), Reach::Anywhere);
    }
}

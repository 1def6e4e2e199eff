//! Where a settings file may lead. The user's own file (and the trust list) is the user's choice:
//! symlinks are followed anywhere (a dotfiles folder), into a regular file only. A project's file
//! comes with the repository: it is read only beneath its own folder (`.ctxkit`), which must itself
//! lie in the project, so a committed symlink cannot make ctxkit read a FIFO, a device or a file
//! elsewhere as the project's settings. Every read is bounded and never waits for a writer.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

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

/// Refuses, for a project's file, a folder that leads out of the project (before anything in it
/// is created, locked or written).
pub(crate) fn check_folder(path: &Path, reach: Reach) -> Result<(), SettingsError> {
    match reach {
        Reach::Anywhere => Ok(()),
        Reach::BeneathFolder => {
            let (folder, _) = folder_and_name(path)?;
            confined_folder(path, folder)
        }
    }
}

/// The file a write of `path` replaces: the file a symlink points to (through every link, a
/// missing target included), so the user's file kept elsewhere (a dotfiles repository) is updated
/// and the link stays; `path` itself otherwise. A project's file may only lead to a file in its
/// own folder: a link elsewhere (the user's settings, any file of the user's) is refused.
pub(crate) fn write_target(path: &Path, reach: Reach) -> Result<PathBuf, SettingsError> {
    let target = follow_links(path);
    match reach {
        Reach::Anywhere => Ok(target),
        Reach::BeneathFolder => {
            let (folder, _) = folder_and_name(path)?;
            let resolved_folder = std::fs::canonicalize(folder).ok();
            let inside = target.file_name().is_some()
                && target
                    .parent()
                    .and_then(|parent| std::fs::canonicalize(parent).ok())
                    .zip(resolved_folder)
                    .is_some_and(|(parent, folder)| parent.starts_with(folder));
            if inside {
                Ok(target)
            } else {
                Err(SettingsError::Refused {
                    path: path.to_path_buf(),
                    reason: FileRefusal::LeadsOutOf {
                        folder: folder.to_path_buf(),
                    },
                })
            }
        }
    }
}

/// `path` with every symlink followed by name, a missing last target included.
fn follow_links(path: &Path) -> PathBuf {
    let mut target = path.to_path_buf();
    // As many links as the kernel follows.
    for _ in 0..40 {
        let is_link = std::fs::symlink_metadata(&target)
            .is_ok_and(|metadata| metadata.file_type().is_symlink());
        if !is_link {
            return target;
        }
        let Ok(next) = std::fs::read_link(&target) else {
            return target;
        };
        target = match target.parent() {
            Some(parent) => parent.join(next),
            None => next,
        };
    }
    target
}

/// Opens (creating it) the lock file `lock` for writing, in every scope: never through a symlink
/// (`O_NOFOLLOW`), never waiting on a FIFO (`O_NONBLOCK`), and only when it is a regular file.
pub(crate) fn open_lock(lock: &Path) -> Result<File, SettingsError> {
    let refused = |reason| SettingsError::Refused {
        path: lock.to_path_buf(),
        reason,
    };
    let opened = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(lock);
    let file = match opened {
        Ok(file) => file,
        Err(error) if error.raw_os_error() == Some(libc::ELOOP) => {
            return Err(refused(FileRefusal::SymlinkedLock));
        }
        // A FIFO without a reader.
        Err(error) if error.raw_os_error() == Some(libc::ENXIO) => {
            return Err(refused(FileRefusal::NotRegular));
        }
        Err(source) => {
            return Err(SettingsError::Write {
                path: lock.to_path_buf(),
                source: source.into(),
            });
        }
    };
    match file.metadata() {
        Ok(metadata) if metadata.is_file() => Ok(file),
        Ok(_) => Err(refused(FileRefusal::NotRegular)),
        Err(source) => Err(SettingsError::Write {
            path: lock.to_path_buf(),
            source: source.into(),
        }),
    }
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
                source: source.into(),
            };
        }
        JailError::TooDeep { .. }
        | JailError::TooLong { .. }
        | JailError::Denied { .. }
        | JailError::HardLink { .. }
        | JailError::HardLinkUnchecked { .. }
        | JailError::Guarded { .. }
        | JailError::OtherOwner { .. }
        | JailError::ReadOnly { .. }
        | JailError::FolderReadOnly { .. } => {
            return SettingsError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other(error).into(),
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

    fn set_theme(path: &Path, reach: Reach) -> Result<(), SettingsError> {
        crate::settings::store::update(path, reach, |document| {
            document.insert("theme".to_owned(), serde_json::Value::from("dark"));
        })
        .map(|_| ())
    }

    /// QA finding 2: `config set --project` and `install -l` wrote through a committed link into
    /// the user's settings or any file of the user's, created a dangling link's target, and a
    /// linked `settings.json.lock` created a file elsewhere.
    #[test]
    fn a_projects_write_never_leaves_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("home/settings.json");
        std::fs::create_dir_all(user.parent().unwrap()).unwrap();
        std::fs::write(&user, r#"{"theme": "light"}"#).unwrap();
        let folder = dir.path().join("project/.ctxkit");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("settings.json");
        let refused = |result: Result<(), SettingsError>| {
            assert!(
                matches!(
                    result,
                    Err(SettingsError::Refused {
                        reason: FileRefusal::LeadsOutOf { .. },
                        ..
                    })
                ),
                "{result:?}"
            );
        };
        for target in [user.clone(), dir.path().join("victim.json")] {
            symlink(&target, &file).unwrap();
            refused(set_theme(&file, Reach::BeneathFolder));
            std::fs::remove_file(&file).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&user).unwrap(),
            r#"{"theme": "light"}"#
        );
        // A dangling link out: its target is not created.
        let created = dir.path().join("created.json");
        symlink(&created, &file).unwrap();
        refused(set_theme(&file, Reach::BeneathFolder));
        assert!(!created.exists());
        std::fs::remove_file(&file).unwrap();
        // A link inside the folder is written through.
        symlink("shared.json", &file).unwrap();
        set_theme(&file, Reach::BeneathFolder).unwrap();
        assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());
        assert!(
            std::fs::read_to_string(folder.join("shared.json"))
                .unwrap()
                .contains("dark")
        );
        // The folder itself a link out of the project: nothing is created there, lock included.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::create_dir_all(dir.path().join("other")).unwrap();
        symlink(&elsewhere, dir.path().join("other/.ctxkit")).unwrap();
        refused(set_theme(
            &dir.path().join("other/.ctxkit/settings.json"),
            Reach::BeneathFolder,
        ));
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn a_settings_lock_is_never_followed_in_any_scope() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join(".ctxkit");
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join("settings.json");
        let elsewhere = dir.path().join("lock-elsewhere");
        symlink(&elsewhere, folder.join("settings.json.lock")).unwrap();
        for reach in [Reach::Anywhere, Reach::BeneathFolder] {
            let result = set_theme(&file, reach);
            assert!(
                matches!(
                    result,
                    Err(SettingsError::Refused {
                        reason: FileRefusal::SymlinkedLock,
                        ..
                    })
                ),
                "{result:?}"
            );
        }
        assert!(!elsewhere.exists());
        assert!(!file.exists());
        std::fs::remove_file(folder.join("settings.json.lock")).unwrap();
        mkfifo(&folder.join("settings.json.lock"));
        assert!(matches!(
            set_theme(&file, Reach::Anywhere),
            Err(SettingsError::Refused {
                reason: FileRefusal::NotRegular,
                ..
            })
        ));
    }
}

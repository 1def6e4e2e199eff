//! Private temporary folders: where a copy of a session is worked on (a database session, an
//! imported transcript) while a command runs.

/// A new folder in the system's temporary folder, named `<prefix><random>`, that only this user
/// may enter (`0700`: `tempfile` makes folders with the default mode, `0755` under the usual
/// umask, so any local user could read the copies inside). Removed when dropped.
pub fn private_temporary_folder(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    builder.tempdir()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn only_its_user_may_enter_a_private_folder() {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = private_temporary_folder("ctxkit-test-").unwrap();
        let mode = std::fs::metadata(folder.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let name = folder.path().file_name().unwrap().to_string_lossy();
        assert!(name.starts_with("ctxkit-test-"), "{name}");
    }
}

//! The shell `bash` commands run in, found as Pi finds it: `shellPath` when set (an error when it
//! does not exist), else `/bin/bash`, else `bash` on `PATH`, else `sh`; and `shellCommandPrefix`,
//! a line run before every command (`shopt -s expand_aliases`, `source ~/.profile`, …).

use std::path::{Path, PathBuf};

/// The settings that choose how commands run; the default finds bash.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shell {
    /// `shellPath`: the shell to run instead of bash.
    pub path: Option<PathBuf>,
    /// `shellCommandPrefix`: text run before every command, on its own line.
    pub command_prefix: Option<String>,
    /// The project files of those two as they were when the settings were read
    /// (`ctxkit_settings::pin_project_files`): a command runs only while each is unchanged (QA: a
    /// trusted project's `shellPath` script rewritten by a pull during a chat ran before the next
    /// command the user approved).
    pub pinned: Vec<ctxkit_settings::PinnedScript>,
}

impl Shell {
    /// The program to run with `-c`, or why there is none.
    pub fn program(&self) -> Result<PathBuf, String> {
        for script in &self.pinned {
            let now = ctxkit_settings::script_digest(&script.path).unwrap_or_default();
            if now != script.digest {
                return Err(format!(
                    "Not run: `{}`, which the settings run before every command (`shellPath`, \
                     `shellCommandPrefix`), changed since they were read; read it, then start \
                     again (`ctxkit trust` first for a project's settings)",
                    script.named.display()
                ));
            }
        }
        if let Some(path) = &self.path {
            if path.exists() {
                return Ok(path.clone());
            }
            return Err(format!(
                "The shell `shellPath` names, `{}`, does not exist; fix or remove `shellPath` in the settings",
                path.display()
            ));
        }
        let bin_bash = Path::new("/bin/bash");
        if bin_bash.exists() {
            return Ok(bin_bash.to_path_buf());
        }
        Ok(on_path("bash").unwrap_or_else(|| PathBuf::from("sh")))
    }

    /// The script given to `-c` for `command`: both streams to one pipe, the prefix, the command.
    pub fn script(&self, command: &str) -> String {
        match self
            .command_prefix
            .as_deref()
            .filter(|prefix| !prefix.trim().is_empty())
        {
            Some(prefix) => format!("exec 2>&1\n{prefix}\n{command}"),
            None => format!("exec 2>&1\n{command}"),
        }
    }
}

/// The first executable file called `name` in a folder of `PATH`.
pub(super) fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|folder| folder.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate).is_ok_and(|metadata| {
                metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_is_found_unless_a_shell_is_named_and_a_missing_one_is_an_error() {
        let found = Shell::default().program().unwrap();
        assert!(
            found.ends_with("bash") || found == Path::new("sh"),
            "{found:?}"
        );
        let named = Shell {
            path: Some(PathBuf::from("/bin/sh")),
            ..Shell::default()
        };
        assert_eq!(named.program().unwrap(), Path::new("/bin/sh"));
        let missing = Shell {
            path: Some(PathBuf::from("/no/such/shell")),
            ..Shell::default()
        };
        assert!(
            missing
                .program()
                .unwrap_err()
                .contains("`/no/such/shell`, does not exist"),
        );
    }

    #[test]
    fn the_prefix_is_a_line_of_its_own_before_the_command() {
        let shell = Shell {
            command_prefix: Some("shopt -s expand_aliases".to_owned()),
            ..Shell::default()
        };
        assert_eq!(shell.script("ll"), "exec 2>&1\nshopt -s expand_aliases\nll");
        assert_eq!(Shell::default().script("ls"), "exec 2>&1\nls");
    }

    /// QA: a trusted project's `shellPath` script rewritten (a pull in another terminal) while a
    /// chat ran was run before the next command the user approved.
    #[test]
    fn a_pinned_script_changed_since_is_not_run() {
        let project = tempfile::tempdir().unwrap();
        let project = std::fs::canonicalize(project.path()).unwrap();
        let script = project.join("scripts/mysh");
        std::fs::create_dir_all(script.parent().unwrap()).unwrap();
        std::fs::write(&script, "#!/bin/sh\nexec /bin/sh \"$@\"\n").unwrap();
        let shell = Shell {
            path: Some(script.clone()),
            pinned: ctxkit_settings::pin_project_files(&["scripts/mysh", "./env.sh"], &project),
            ..Shell::default()
        };
        assert_eq!(shell.program().unwrap(), script);
        std::fs::write(&script, "#!/bin/sh\ntouch pwned\nexec /bin/sh \"$@\"\n").unwrap();
        let refused = shell.program().unwrap_err();
        assert!(
            refused.contains("`scripts/mysh`") && refused.contains("changed"),
            "{refused}"
        );
        // A file named but absent when pinned, written since, is no trusted one either.
        std::fs::write(&script, "#!/bin/sh\nexec /bin/sh \"$@\"\n").unwrap();
        assert!(shell.program().is_ok());
        std::fs::write(project.join("env.sh"), "touch pwned\n").unwrap();
        assert!(shell.program().unwrap_err().contains("`./env.sh`"));
    }
}

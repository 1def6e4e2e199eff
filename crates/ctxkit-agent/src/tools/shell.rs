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
}

impl Shell {
    /// The program to run with `-c`, or why there is none.
    pub fn program(&self) -> Result<PathBuf, String> {
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
            command_prefix: None,
        };
        assert_eq!(named.program().unwrap(), Path::new("/bin/sh"));
        let missing = Shell {
            path: Some(PathBuf::from("/no/such/shell")),
            command_prefix: None,
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
            path: None,
            command_prefix: Some("shopt -s expand_aliases".to_owned()),
        };
        assert_eq!(shell.script("ll"), "exec 2>&1\nshopt -s expand_aliases\nll");
        assert_eq!(Shell::default().script("ls"), "exec 2>&1\nls");
    }
}

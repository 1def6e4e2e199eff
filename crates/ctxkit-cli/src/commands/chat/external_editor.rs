//! `/edit` and Ctrl-G: the prompt written in the user's editor (the `externalEditor` setting, else
//! `$VISUAL`, else `$EDITOR`, else `vi`) on a temporary file, then put back on the input line to be
//! sent with Enter.

use std::io::Write as _;
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// Opens the editor on `text` and returns what the user saved (one final newline dropped):
/// `configured` (the `externalEditor` setting) when it names one, else the environment's.
pub fn edit(text: &str, configured: Option<&str>) -> Result<String> {
    let editor = editor_command(configured, crate::cli::editor_from_environment());
    let mut file = tempfile::Builder::new()
        .prefix("ctxkit-prompt-")
        .suffix(".md")
        .tempfile()
        .context("cannot create a temporary file for the editor")?;
    // A text file ends with a newline; editors and scripts expect one.
    let text = if text.is_empty() || text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    };
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .context("cannot write the prompt for the editor")?;
    // Through the shell, as git does: `EDITOR="code --wait"` takes its arguments.
    let status = super::enter_key::as_a_shell_reads_it(|| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(file.path())
            .status()
    })
    .with_context(|| format!("cannot start the editor `{editor}`"))?;
    if !status.success() {
        bail!("the editor `{editor}` failed ({status}); the prompt is unchanged");
    }
    let edited = std::fs::read_to_string(file.path())
        .context("cannot read the prompt back from the editor's file")?;
    Ok(edited
        .strip_suffix('\n')
        .map_or(edited.as_str(), |text| {
            text.strip_suffix('\r').unwrap_or(text)
        })
        .to_owned())
}

/// The editor command: the setting when it is not blank, else the environment's, else `vi`.
fn editor_command(configured: Option<&str>, from_environment: Option<String>) -> String {
    configured
        .map(str::trim)
        .filter(|command| !command.is_empty())
        .map(str::to_owned)
        .or(from_environment)
        .unwrap_or_else(|| "vi".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pi 1.6's order: the `externalEditor` setting, then `$VISUAL`/`$EDITOR`, then a default.
    #[test]
    fn the_setting_names_the_editor_before_the_environment() {
        let environment = || Some("nano".to_owned());
        assert_eq!(
            editor_command(Some("code --wait"), environment()),
            "code --wait"
        );
        assert_eq!(editor_command(Some("  "), environment()), "nano");
        assert_eq!(editor_command(None, environment()), "nano");
        assert_eq!(editor_command(None, None), "vi");
    }
}

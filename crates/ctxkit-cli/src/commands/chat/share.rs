//! `/share`: the session's page (as `/export` writes it, keys redacted) uploaded as a secret GitHub
//! gist through the GitHub CLI, as Pi 1.6's `/share` does when it has no Radius account. Unlike
//! Pi, the chat asks first: the page leaves the machine, and anyone with the gist's link can read
//! it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use super::Chat;
use super::agent::Ask;

/// How long `gh auth status` may take.
const AUTH_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the upload may take.
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(120);

impl Chat {
    /// `/share`.
    pub(super) async fn share(&self, ask: &mut dyn Ask) -> Result<()> {
        logged_in().await?;
        let folder = tempfile::tempdir().context("cannot make a temporary folder for the page")?;
        let page = folder.path().join(self.default_page_name().await);
        let bytes = self.write_session_page(&page).await?;
        let question = format!(
            "Upload this session's page ({}, keys redacted) as a secret GitHub gist? Anyone with \
             its link can read it. [y]es / [n]o: ",
            size(bytes)
        );
        if ask.ask_key(&question, "yn") != Some('y') {
            self.ui.say("Not shared");
            return Ok(());
        }
        let url = upload(&page).await?;
        self.ui.say(&format!("Shared as a secret gist: {url}"));
        Ok(())
    }
}

/// Whether the GitHub CLI is there and logged in, said as what to do when not.
async fn logged_in() -> Result<()> {
    let status = tokio::process::Command::new("gh")
        .args(["auth", "status"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .status();
    match tokio::time::timeout(AUTH_TIMEOUT, status).await {
        Err(_) => bail!("`gh auth status` did not answer within 15 s; /share needs the GitHub CLI"),
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::NotFound => bail!(
            "/share needs the GitHub CLI (`gh`), which is not installed: https://cli.github.com/ \
             (/export writes the page here instead)"
        ),
        Ok(Err(error)) => Err(error).context("cannot run `gh auth status`"),
        Ok(Ok(status)) if !status.success() => {
            bail!("the GitHub CLI is not logged in: run `gh auth login` first")
        }
        Ok(Ok(_)) => Ok(()),
    }
}

/// Uploads `page` as a secret gist; the gist's address.
async fn upload(page: &Path) -> Result<String> {
    let output = tokio::process::Command::new("gh")
        .args(["gist", "create", "--public=false"])
        .arg(page)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(UPLOAD_TIMEOUT, output)
        .await
        .map_err(|_| anyhow::anyhow!("the upload did not end within 120 s; nothing was shared"))?
        .context("cannot run `gh gist create`")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!("`gh gist create` failed: {}", first_line(&stderr));
    }
    gist_address(&stdout).with_context(|| {
        format!(
            "`gh gist create` printed no gist address: {}",
            first_line(&stdout)
        )
    })
}

/// The gist's address in what `gh gist create` printed: its last line that is one.
fn gist_address(printed: &str) -> Option<String> {
    printed
        .lines()
        .map(str::trim)
        .rfind(|line| line.starts_with("https://") && !line.contains(char::is_whitespace))
        .map(str::to_owned)
}

fn first_line(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty());
    crate::render::one_line(line.unwrap_or("(nothing)"), 200)
}

/// A size as the question shows it.
fn size(bytes: u64) -> String {
    if bytes < 1024 * 1024 {
        format!("{} KB", bytes.div_ceil(1024))
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_the_last_line_that_is_one() {
        assert_eq!(
            gist_address("- Creating gist x.html\nhttps://gist.github.com/u/abc123\n").as_deref(),
            Some("https://gist.github.com/u/abc123")
        );
        assert_eq!(gist_address("created\n"), None);
        assert_eq!(gist_address("https://a b\n"), None);
    }

    #[test]
    fn sizes_read_as_kilobytes_or_megabytes() {
        assert_eq!(size(10), "1 KB");
        assert_eq!(size(2048), "2 KB");
        assert_eq!(size(3 * 1024 * 1024 + 1), "3.0 MB");
    }
}

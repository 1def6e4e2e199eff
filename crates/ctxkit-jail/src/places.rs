//! The places no jail opens: ctxkit's home and the user's credentials.

use std::path::{Path, PathBuf};

/// Credential files and folders under the user's home, never opened through any jail.
const CREDENTIALS: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".docker/config.json",
    ".kube/config",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gcloud",
    ".config/gh/hosts.yml",
    ".config/git/credentials",
    ".local/share/keyrings",
    ".password-store",
    // Other coding agents' keys: Pi's (ctxkit works on Pi's sessions beside them), Claude
    // Code's and Codex's.
    ".pi/agent/auth.json",
    ".pi/agent/models.json",
    ".claude/.credentials.json",
    ".codex/auth.json",
    // Claude Code's key (`primaryApiKey`) and its backup, opencode's, Gemini CLI's, GitHub
    // Copilot's tokens.
    ".claude.json",
    ".claude.json.backup",
    ".local/share/opencode/auth.json",
    ".gemini/oauth_creds.json",
    ".config/github-copilot/apps.json",
    ".config/github-copilot/hosts.json",
    // Other tools' tokens: Vault, Terraform Cloud, Hugging Face, RubyGems, hub.
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".cache/huggingface/token",
    ".huggingface/token",
    ".gem/credentials",
    ".config/hub",
    // More tools' passwords and tokens, read without a question from a chat started in the home
    // (QA r99): MySQL's client, s3cmd, rclone, Yarn 2+, Bundler, Composer, ngrok, Gradle, Maven.
    ".my.cnf",
    ".mylogin.cnf",
    ".s3cfg",
    ".config/rclone/rclone.conf",
    ".yarnrc.yml",
    ".bundle/config",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".config/ngrok/ngrok.yml",
    ".ngrok2/ngrok.yml",
    ".gradle/gradle.properties",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    // What holds the secrets a user pasted or typed (QA r103: one `grep` with the project at `~`
    // returned a database password from three of them): other coding agents' transcripts and
    // prompt histories, and the shells' and REPLs' histories. `ctxkit import` reads transcripts
    // on the user's command, not through a tool. (Pi's sessions folder is not here: ctxkit may
    // keep its own sessions and their checkpoints there, `--sessions-dir`, and then denies it
    // as its own.)
    ".claude/projects",
    ".claude/history.jsonl",
    ".codex/sessions",
    ".codex/archived_sessions",
    ".codex/history.jsonl",
    ".local/share/opencode/storage",
    ".local/share/opencode/opencode.db",
    ".gemini/tmp",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".node_repl_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".rediscli_history",
];

/// The user's credential places (under `$HOME`), as named and resolved.
pub fn credential_places() -> Vec<PathBuf> {
    std::env::home_dir().map_or_else(Vec::new, |home| credential_places_in(&home))
}

/// The credential places under the user's home `home`, as named and resolved.
fn credential_places_in(home: &Path) -> Vec<PathBuf> {
    let mut places = Vec::new();
    for name in CREDENTIALS {
        let place = home.join(name);
        if let Ok(resolved) = std::fs::canonicalize(&place)
            && resolved != place
        {
            places.push(resolved);
        }
        places.push(place);
    }
    places
}

/// `$CTXKIT_HOME` when set and not empty, else `~/.ctxkit`.
pub fn default_ctxkit_home() -> Option<PathBuf> {
    match std::env::var_os("CTXKIT_HOME").filter(|home| !home.is_empty()) {
        Some(home) => Some(PathBuf::from(home)),
        None => std::env::home_dir().map(|home| home.join(".ctxkit")),
    }
}

/// Where the open descriptor `opened` really is, read back from `/proc/self/fd` (`None` without
/// `/proc`).
pub(crate) fn real_path(opened: &impl std::os::fd::AsRawFd) -> Option<PathBuf> {
    let link = Path::new("/proc/self/fd").join(opened.as_raw_fd().to_string());
    std::fs::read_link(link).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA: with the project at `~`, other agents' and tools' keys were read without a question.
    #[test]
    fn other_agents_and_tools_keys_are_credential_places() {
        let home = Path::new("/home/me");
        let places = credential_places_in(home);
        for name in [
            ".ssh",
            ".aws",
            ".npmrc",
            ".pypirc",
            ".config/gh/hosts.yml",
            ".pi/agent/auth.json",
            ".claude/.credentials.json",
            ".codex/auth.json",
            ".claude.json",
            ".local/share/opencode/auth.json",
            ".gemini/oauth_creds.json",
            ".config/github-copilot/apps.json",
            ".config/github-copilot/hosts.json",
            ".vault-token",
            ".terraform.d/credentials.tfrc.json",
            // QA r99, read and sent to the provider from a chat started in the home.
            ".my.cnf",
            ".s3cfg",
            ".config/rclone/rclone.conf",
            ".yarnrc.yml",
            ".bundle/config",
            ".composer/auth.json",
            ".config/ngrok/ngrok.yml",
            ".gradle/gradle.properties",
            ".m2/settings.xml",
            // QA r103: transcripts and histories, where pasted secrets are.
            ".claude/projects",
            ".codex/sessions",
            ".local/share/opencode/storage",
            ".bash_history",
            ".zsh_history",
        ] {
            assert!(places.contains(&home.join(name)), "{name}");
        }
    }
}

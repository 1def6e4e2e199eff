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

/// The credential folders whose entries may be symlinks to keys kept elsewhere (`~/.ssh/id_ed25519`
/// → a dotfiles repository): the target of each such link is a credential place too.
const KEY_FOLDERS: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".config/gcloud",
    ".local/share/keyrings",
    ".password-store",
];
/// The most entries of one key folder looked at for symlinks (a password store of thousands of
/// entries is read up to here).
const MAX_KEY_FOLDER_ENTRIES: usize = 10_000;

/// How long the credential places found are used again before the home is looked at anew: every
/// jail asks for them (each tool call, each skill or context file read), and finding them walks
/// the key folders (up to [`MAX_KEY_FOLDER_ENTRIES`] entries each). A link put into a key folder
/// meanwhile needs a command the user approved, which could read the key itself.
const PLACES_REUSED_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// The places found last: for which home, and when.
type FoundPlaces = Option<(PathBuf, std::time::Instant, Vec<PathBuf>)>;

static FOUND: std::sync::Mutex<FoundPlaces> = std::sync::Mutex::new(None);

/// The user's credential places (under `$HOME`), as named and resolved, and where the links in
/// their key folders lead (found at most every [`PLACES_REUSED_FOR`]).
pub fn credential_places() -> Vec<PathBuf> {
    let Some(home) = std::env::home_dir() else {
        return Vec::new();
    };
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((known, at, places)) = found.as_ref()
        && *known == home
        && at.elapsed() < PLACES_REUSED_FOR
    {
        return places.clone();
    }
    let places = credential_places_in(&home);
    *found = Some((home, std::time::Instant::now(), places.clone()));
    places
}

/// The credential places under the user's home `home`, as named and resolved, and the places
/// the symlinks in its key folders lead to.
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
    // A link to a folder holding the home (`root -> /`, `up -> ..`) would make every file a
    // credential (QA: every tool refused `/etc/hostname`): it adds nothing, as for ctxkit's home.
    let resolved_home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_owned());
    for name in KEY_FOLDERS {
        for target in link_targets_in(&home.join(name), &resolved_home) {
            if !places.contains(&target) {
                places.push(target);
            }
        }
    }
    places
}

/// Where the symlinks in `folder` and its subfolders lead (resolved; a link to a folder holding
/// `home`, the home resolved, is passed over), following a link to a folder into it once, at most [`MAX_KEY_FOLDER_ENTRIES`] entries in all. QA: with the project
/// a dotfiles repository, `~/.ssh/id_real` → `dotfiles/ssh/id_real` let the model read the key
/// by its name in the project, while a link of the whole `~/.ssh` was refused.
fn link_targets_in(folder: &Path, home: &Path) -> Vec<PathBuf> {
    let mut targets = Vec::new();
    let mut budget = MAX_KEY_FOLDER_ENTRIES;
    let mut pending = vec![folder.to_path_buf()];
    let mut walked = std::collections::HashSet::new();
    while let Some(current) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        for entry in entries.flatten() {
            if budget == 0 {
                return targets;
            }
            budget -= 1;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_symlink()
                && let Ok(target) = std::fs::canonicalize(entry.path())
                && !home.starts_with(&target)
            {
                if target.is_dir() && walked.insert(target.clone()) {
                    pending.push(target.clone());
                }
                targets.push(target);
            }
        }
    }
    targets
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

    /// QA (jail): a key in a dotfiles repository, linked from `~/.ssh` file by file, was read
    /// by its name in the repository.
    #[test]
    fn a_key_linked_into_a_key_folder_is_a_credential_place() {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        let home = root.join("home");
        let dotfiles = root.join("dotfiles");
        std::fs::create_dir_all(home.join(".ssh/keys")).unwrap();
        std::fs::create_dir_all(dotfiles.join("ssh/more")).unwrap();
        std::fs::create_dir_all(dotfiles.join("gnupg")).unwrap();
        std::fs::write(dotfiles.join("ssh/id_real"), "KEY").unwrap();
        std::fs::write(dotfiles.join("ssh/more/id_other"), "KEY").unwrap();
        std::fs::write(dotfiles.join("notes.txt"), "notes").unwrap();
        std::os::unix::fs::symlink(dotfiles.join("ssh/id_real"), home.join(".ssh/id_real"))
            .unwrap();
        // Deeper in the folder, a link to a folder, and a loop back to the key folder.
        std::os::unix::fs::symlink(dotfiles.join("ssh/more"), home.join(".ssh/keys/more")).unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join(".ssh/keys/loop")).unwrap();
        // A whole key folder linked: its entries' links are followed too.
        std::os::unix::fs::symlink(dotfiles.join("gnupg"), home.join(".gnupg")).unwrap();
        std::os::unix::fs::symlink(dotfiles.join("notes.txt"), dotfiles.join("gnupg/pubring"))
            .unwrap();
        let places = credential_places_in(&home);
        for place in [
            dotfiles.join("ssh/id_real"),
            dotfiles.join("ssh/more"),
            dotfiles.join("gnupg"),
            dotfiles.join("notes.txt"),
        ] {
            assert!(places.contains(&place), "{place:?} not in {places:#?}");
        }
        assert!(!places.contains(&dotfiles.join("ssh")), "{places:#?}");
        // A link to a folder holding the home adds nothing.
        std::os::unix::fs::symlink("/", home.join(".ssh/root")).unwrap();
        std::os::unix::fs::symlink("../..", home.join(".ssh/keys/up")).unwrap();
        let places = credential_places_in(&home);
        assert!(!places.contains(&PathBuf::from("/")), "{places:#?}");
        assert!(!places.contains(&root), "{places:#?}");
        // A jail on the repository refuses the key by its name there, and reads the rest.
        let mut jail = crate::Jail::open_bare(&dotfiles).unwrap();
        for place in &places {
            jail.deny_always(place);
        }
        assert!(jail.read(Path::new("ssh/id_real"), 64).is_err());
        assert!(jail.read(Path::new("ssh/more/id_other"), 64).is_err());
        std::fs::write(dotfiles.join("ssh/config.example"), "Host *").unwrap();
        assert!(jail.read(Path::new("ssh/config.example"), 64).is_ok());
    }

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

//! What both scopes' files say for the tools' boundary, read from the documents as written (not
//! from the typed tree), on purpose: a credential is redacted wherever it sits, an unknown key's
//! too, and a hook or package the tree would reject still has its files guarded.

use std::path::Path;

use serde_json::Value;

use super::{Document, SettingsManager};
use crate::error::SettingsScope;

impl SettingsManager {
    /// Every string of both scopes that looks like a credential: under a key that names one
    /// (`apiKey`, `token`, `secret`, `password`, `authorization`) or any value of a `headers`
    /// object.
    pub fn credential_values(&self) -> Vec<String> {
        let mut secrets = Vec::new();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            for (key, value) in self.document(scope) {
                collect_secrets(key, value, false, &mut secrets);
            }
        }
        secrets
    }

    /// The local paths both scopes name for code that runs: every part of what runs as code
    /// ([`code_parts`]: hooks, `npmCommand`, `shellPath`, …) and each package source that is a path
    /// (`./…`, `../…`, `/…`), as written.
    pub fn paths_named_for_code(&self) -> Vec<String> {
        let mut named = Vec::new();
        for scope in [SettingsScope::Global, SettingsScope::Project] {
            let document = self.document(scope);
            let commands = code_parts(document, self.folder.home()).into_iter();
            let packages = document
                .get("packages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|package| package.as_str().or_else(|| package.get("source")?.as_str()))
                .filter(|source| source.starts_with('.') || source.starts_with('/'));
            named.extend(commands.chain(packages.map(str::to_owned)));
        }
        named
    }
}

/// Every string of every hook's `command` array in `hooks` (a settings file's `hooks`), in order,
/// each command followed by the script its shell string runs ([`shell_string_script`]).
pub(crate) fn hook_command_parts(hooks: Option<&Value>) -> impl Iterator<Item = &str> {
    hooks
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|hook| hook.get("command").and_then(Value::as_array))
        .flat_map(|command| {
            let parts: Vec<&str> = command.iter().filter_map(Value::as_str).collect();
            with_shell_string_script(parts)
        })
}

/// Every part of what a settings document runs as code, in order: each hook's command and
/// `npmCommand` (each followed by the script its shell string runs), `shellPath`, the program
/// `externalEditor`'s shell string starts with, and the paths `shellCommandPrefix` names
/// (`source ./env.sh`). Trust pins the project files among them, and the model's writes to them
/// ask first (QA: a trusted project's `shellPath` script, rewritten by the model or a pull, ran
/// before every command the user approved).
/// A leading `~/` is `home` (QA: `"shellPath": "~/proj/scripts/mysh"` with the project under the
/// home was neither pinned nor guarded).
pub(crate) fn code_parts(document: &Document, home: Option<&Path>) -> Vec<String> {
    let expand = |part: &str| expand_home(part, home);
    let mut parts: Vec<String> = hook_command_parts(document.get("hooks"))
        .map(expand)
        .collect();
    if let Some(npm) = document.get("npmCommand").and_then(Value::as_array) {
        let npm = with_shell_string_script(npm.iter().filter_map(Value::as_str).collect());
        parts.extend(npm.into_iter().map(expand));
    }
    if let Some(shell) = document.get("shellPath").and_then(Value::as_str) {
        parts.push(expand(shell));
    }
    if let Some(editor) = document.get("externalEditor").and_then(Value::as_str) {
        let program = editor.split_whitespace().next().map(expand);
        parts.extend(program.filter(|program| is_path_as_written(program)));
    }
    if let Some(prefix) = document.get("shellCommandPrefix").and_then(Value::as_str) {
        parts.extend(sourced_files(prefix).iter().map(|file| expand(file)));
    }
    parts
}

/// The files the `bash` tool's shell runs as written, by [`code_parts`]'s rules: `shellPath`
/// and the files `shellCommandPrefix` names, a leading `~/` read as `home`.
pub fn shell_files(
    shell_path: Option<&str>,
    command_prefix: Option<&str>,
    home: &Path,
) -> Vec<String> {
    let mut files: Vec<String> = shell_path
        .map(|path| expand_home(path, Some(home)))
        .into_iter()
        .collect();
    let sourced = command_prefix.map(sourced_files).unwrap_or_default();
    // A bare name is read from the working folder (when not on `PATH`): `./` makes it a path, so
    // one absent now is pinned as absent.
    files.extend(sourced.into_iter().map(|file| {
        if file.contains('/') {
            expand_home(&file, Some(home))
        } else {
            format!("./{file}")
        }
    }));
    files
}

/// `part` with a leading `~/` read as `home`.
fn expand_home(part: &str, home: Option<&Path>) -> String {
    match (part.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        (Some(_) | None, _) => part.to_owned(),
    }
}

/// The files a shell line names as written: each word (split at white space and `;&|()<>`,
/// quotes taken off, a leading `$PWD/` read as the working folder) that is a path, a dotted name
/// (`.envrc`) or `~/…`, and every word after `source` or `.`, which bash looks for in the working
/// folder too (`source env.sh`; QA: `set -a; . ./.env; set +a`, `source "./env.sh"` and
/// `source $PWD/env.sh` named no file).
fn sourced_files(line: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut after_source = false;
    let separators = |character: char| character.is_whitespace() || ";&|()<>".contains(character);
    for token in line.split(separators).filter(|token| !token.is_empty()) {
        let word = token.trim_matches(|character| character == '"' || character == '\'');
        let word = word
            .strip_prefix("$PWD/")
            .or_else(|| word.strip_prefix("${PWD}/"))
            .unwrap_or(word);
        // `$HOME/` is `~/` (QA: `source "$HOME/p/env.sh"` named no file).
        let word = match word
            .strip_prefix("$HOME/")
            .or_else(|| word.strip_prefix("${HOME}/"))
        {
            Some(rest) => format!("~/{rest}"),
            None => word.to_owned(),
        };
        let named = names_a_file(&word) || word.starts_with("~/");
        let source = matches!(word.as_str(), "source" | ".");
        if !word.is_empty() && (after_source || named) {
            files.push(word);
        }
        after_source = source;
    }
    files
}

/// Whether a word of a shell line names a file as written: a path ([`is_path_as_written`]) or a
/// dotted name (`.envrc`, which `source` reads from the working folder).
fn names_a_file(word: &str) -> bool {
    // `.` and `..` are folders, not files a line runs (`cd ..` would guard the project's parent).
    let dotted = word.starts_with('.')
        && word
            .chars()
            .any(|character| character.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "._-+,@%".contains(character));
    is_path_as_written(word) || dotted
}

/// A command's parts, then the script its shell string runs, if any.
pub(crate) fn with_shell_string_script(parts: Vec<&str>) -> Vec<&str> {
    let script = shell_string_script(&parts);
    parts.into_iter().chain(script).collect()
}

/// Shells whose `-c` string is read as a command line.
const SHELLS: [&str; 5] = ["sh", "bash", "dash", "zsh", "ksh"];

/// The script a `["sh", "-c", "scripts/hook.sh args"]` command runs (`bash`, `dash`, `zsh`, `ksh`
/// alike): the string's first word, when the shell would run it as a file path as written — it
/// names a folder (`/`; a bare name is looked up in `PATH`) and holds nothing the shell reads
/// first (quotes, `$`, `~`, `=`, `;`, globs). Anything else is not guessed at.
fn shell_string_script<'a>(parts: &[&'a str]) -> Option<&'a str> {
    let [program, "-c", string, ..] = parts else {
        return None;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    if !SHELLS.contains(&name) {
        return None;
    }
    let first = string.split_whitespace().next()?;
    is_path_as_written(first).then_some(first)
}

/// Whether `word` is a path the shell or a program takes as written: it names a folder (`/`; a
/// bare name is looked up in `PATH`) and holds nothing a shell reads first (quotes, `$`, `~`, `=`,
/// `;`, globs, spaces).
pub(crate) fn is_path_as_written(word: &str) -> bool {
    let plain = word
        .chars()
        .all(|character| character.is_ascii_alphanumeric() || "._-/+,@%:".contains(character));
    plain && word.contains('/')
}

/// Whether `value`, set at the key `segments`, is or holds a credential by its key's name (an
/// `apiKey`, a token, a header's value, at any depth: `llm.providers.x.apiKey`, or
/// `llm.providers` set whole), as [`SettingsManager::credential_values`] finds them.
pub fn holds_credentials(segments: &[String], value: &Value) -> bool {
    let Some((name, outer)) = segments.split_last() else {
        return false;
    };
    let in_headers = outer
        .last()
        .is_some_and(|parent| parent.eq_ignore_ascii_case("headers"));
    let mut secrets = Vec::new();
    match value {
        // A bare string is a secret only by its key's name (a URL's password is checked apart).
        Value::String(text) => {
            collect_secrets(name, value, in_headers, &mut secrets);
            secrets.retain(|secret| secret == text);
        }
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => {
            collect_secrets(name, value, in_headers, &mut secrets);
        }
    }
    !secrets.is_empty()
}

fn collect_secrets(key: &str, value: &Value, in_headers: bool, secrets: &mut Vec<String>) {
    let name: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let secret_key = in_headers
        || ["apikey", "token", "secret", "password", "authorization"]
            .iter()
            .any(|word| name.ends_with(word));
    match value {
        Value::String(text) if secret_key => secrets.push(text.clone()),
        // A password in a URL (`llm.baseUrl: https://user:password@gateway/v1`).
        Value::String(text) => secrets.extend(ctxkit_secrets::url_credentials(text)),
        Value::Object(object) => {
            for (inner, value) in object {
                collect_secrets(inner, value, name == "headers", secrets);
            }
        }
        Value::Array(items) => {
            for item in items {
                collect_secrets(key, item, in_headers, secrets);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QA: `set -a; . ./.env; set +a`, `source "./env.sh"`, `source $PWD/env.sh`, `source env.sh`
    /// and a `~/…` `shellPath` or `externalEditor` named no file, so the model could rewrite
    /// them without a question and trust did not cover them.
    #[test]
    fn the_files_a_shell_setting_runs_are_found_as_the_shell_reads_them() {
        let words = sourced_files;
        assert_eq!(words("set -a; . ./.env; set +a"), ["./.env"]);
        assert_eq!(words("source \"./env.sh\""), ["./env.sh"]);
        assert_eq!(words("source $PWD/env.sh && shopt -s x"), ["env.sh"]);
        assert_eq!(words("source env.sh"), ["env.sh"]);
        assert_eq!(
            words("[ -f .envrc ] && source .envrc"),
            [".envrc", ".envrc"]
        );
        assert_eq!(words("shopt -s expand_aliases"), Vec::<&str>::new());
        assert_eq!(words("cd .. && cd ."), Vec::<&str>::new());
        assert_eq!(words("source \"$HOME/p/env.sh\""), ["~/p/env.sh"]);
        let home = Path::new("/home/me");
        let document = serde_json::json!({
            "shellPath": "~/proj/scripts/mysh",
            "externalEditor": "~/proj/scripts/ed --wait",
            "shellCommandPrefix": "source ~/proj/env.sh"
        });
        let document = document.as_object().cloned().unwrap_or_default();
        assert_eq!(
            code_parts(&document, Some(home)),
            [
                "/home/me/proj/scripts/mysh",
                "/home/me/proj/scripts/ed",
                "/home/me/proj/env.sh"
            ]
        );
        assert_eq!(
            shell_files(Some("~/sh"), Some("source env.sh; . lib/x.sh"), home),
            ["/home/me/sh", "./env.sh", "lib/x.sh"]
        );
    }

    #[test]
    fn credentials_in_settings_are_found_wherever_they_are() {
        let global = serde_json::json!({
            "llm": {"apiKey": "sk-settings-0001", "headers": {"X-Custom": "hdr-value-0002"},
                    "baseUrl": "https://gwuser:hunter2pass@gw.example.com/v1"},
            "providers": [{"api_key": "sk-provider-0003"}],
            "theme": "dark",
            "compaction": {"tokenizer": "o200k_base", "maxTokens": 1000},
            "chat": {"passEnv": ["GITHUB_TOKEN"]}
        });
        let settings = SettingsManager::in_memory(global.as_object().cloned().unwrap_or_default());
        assert_eq!(
            settings.credential_values(),
            [
                "sk-settings-0001",
                "hdr-value-0002",
                "gwuser:hunter2pass",
                "hunter2pass",
                "sk-provider-0003"
            ]
        );
    }

    #[test]
    fn paths_for_code_are_read_as_written_even_from_a_hook_the_tree_rejects() {
        let global = serde_json::json!({
            "hooks": [{"command": ["./scripts/after.sh", "--flag"], "timeoutMs": "not a number"}],
            "packages": ["npm:tool", "./local-pkg", {"source": "/opt/pkg", "skills": 3}],
        });
        let settings = SettingsManager::in_memory(global.as_object().cloned().unwrap_or_default());
        assert_eq!(
            settings.paths_named_for_code(),
            ["./scripts/after.sh", "--flag", "./local-pkg", "/opt/pkg"]
        );
    }

    /// The script a `sh -c` string runs is named for code too: the model's tools ask before
    /// writing it, as for a script the array names.
    #[test]
    fn the_script_a_shell_string_runs_is_named_for_code() {
        let global = serde_json::json!({
            "hooks": [{"command": ["bash", "-c", "scripts/after.sh --fast"]},
                      {"command": ["sh", "-c", "echo $HOME/x.sh"]}],
        });
        let settings = SettingsManager::in_memory(global.as_object().cloned().unwrap_or_default());
        assert_eq!(
            settings.paths_named_for_code(),
            [
                "bash",
                "-c",
                "scripts/after.sh --fast",
                "scripts/after.sh",
                "sh",
                "-c",
                "echo $HOME/x.sh"
            ]
        );
    }
}

//! What git runs from a project besides `.git` itself: the folders `core.hooksPath` names
//! (`.husky`, `.githooks`), the config files `include.path` and `includeIf.<condition>.path` name,
//! and the programs config keys name by a path (`core.fsmonitor = tools/fsmon.sh`, an `alias` that
//! runs `!scripts/x`, a `filter` driver). A file written there runs, or changes what runs, at the
//! user's next `git status` or `git commit`, so [`crate::Workspace`] guards them like `.git`. The
//! config files are parsed just enough for that: sections, subsections, comments, quotes and
//! escapes, continued lines, and every included file followed, whatever its condition (guarding a
//! file too many costs a question, one too few a command the user never saw).

use std::path::{Path, PathBuf};

/// The most bytes of one config file read (a real one is a few kilobytes).
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// How deep includes are followed (git stops at 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// The places git runs code from for the repository holding `project` (see the module comment),
/// found in the repository's config (a worktree's shared config and its own `config.worktree`
/// included) and in the user's `global` configs ([`global_configs`]), resolved: a relative one
/// against the top of the work tree (an included file's against the file naming it), `~/` against
/// `user_home`. Every value found counts, not only the one git would take last. The config files
/// themselves are among them (QA: with the project at `~`, the model wrote `~/.gitconfig` with a
/// `core.fsmonitor` unasked), and every entry of the hooks folders (`.git/hooks`, the
/// `core.hooksPath` ones): [`crate::Workspace::guard`] resolves each, so a hook that is a link to
/// `scripts/pre-commit` guards the script. Outside a repository the global configs are read all
/// the same, a relative value taken against `project`.
pub(crate) fn guarded_by_config(
    project: &Path,
    global: Vec<PathBuf>,
    user_home: Option<&Path>,
) -> Vec<PathBuf> {
    let top = work_tree_top(project);
    let git_dirs = top.as_deref().map(git_directories).unwrap_or_default();
    let base = top.unwrap_or_else(|| project.to_path_buf());
    let configs: Vec<PathBuf> = git_dirs
        .iter()
        .flat_map(|dir| [dir.join("config"), dir.join("config.worktree")])
        .chain(global)
        .collect();
    let mut guarded = configs.clone();
    let found = read_configs(configs, &base, user_home);
    let hook_folders: Vec<PathBuf> = git_dirs
        .iter()
        .map(|dir| dir.join("hooks"))
        .chain(found.hook_folders)
        .collect();
    guarded.extend(found.places);
    for folder in hook_folders {
        guarded.extend(entries_of(&folder));
        guarded.push(folder);
    }
    let mut unique = Vec::with_capacity(guarded.len());
    for path in guarded {
        if !unique.contains(&path) {
            unique.push(path);
        }
    }
    unique
}

/// What the config files say git runs: the hooks folders `core.hooksPath` names, and the other
/// places ([`guarded_by_config`]).
#[derive(Default)]
struct Found {
    hook_folders: Vec<PathBuf>,
    places: Vec<PathBuf>,
}

/// Reads `configs` and every file they include (ten deep), relative values taken against `top`.
fn read_configs(configs: Vec<PathBuf>, top: &Path, user_home: Option<&Path>) -> Found {
    let mut pending: Vec<(PathBuf, usize)> = configs.into_iter().map(|file| (file, 0)).collect();
    let mut read: Vec<PathBuf> = Vec::new();
    let mut found = Found::default();
    while let Some((file, depth)) = pending.pop() {
        if read.contains(&file) {
            continue;
        }
        let Ok(text) = ctxkit_jail::read_regular_to_string(&file, MAX_CONFIG_BYTES) else {
            read.push(file);
            continue;
        };
        let values = config_values(&text);
        found.hook_folders.extend(
            values
                .hooks_paths
                .iter()
                .filter_map(|value| folder_of(value, top, user_home)),
        );
        for command in values.programs {
            found.places.extend(program_paths(&command, top, user_home));
        }
        if depth < MAX_INCLUDE_DEPTH {
            // An included file's relative path is relative to the file that names it.
            let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
            for included in values.includes {
                if let Some(path) = folder_of(&included, &base, user_home) {
                    found.places.push(path.clone());
                    pending.push((path, depth + 1));
                }
            }
        }
        read.push(file);
    }
    found
}

/// The most entries of one hooks folder guarded one by one (git knows about thirty hooks).
const MAX_HOOK_ENTRIES: usize = 1000;

/// The entries of the hooks folder `folder`, as named (a link among them is resolved by the
/// guard, so the file it leads to is guarded); none when it cannot be listed.
fn entries_of(folder: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .take(MAX_HOOK_ENTRIES)
        .map(|entry| entry.path())
        .collect()
}

/// The files a command-valued config key may run: each word of `command` that names a path (holds
/// a `/`, or is a file at the top of the work tree, where git runs commands), `!` and quotes
/// taken off; options and `NAME=value` words are not paths.
fn program_paths(command: &str, top: &Path, user_home: Option<&Path>) -> Vec<PathBuf> {
    command
        .split_whitespace()
        .map(|word| word.trim_start_matches('!').trim_matches(['"', '\'']))
        .filter(|word| !word.is_empty() && !word.starts_with('-') && !word.contains('='))
        .filter(|word| word.contains('/') || top.join(word).is_file())
        .filter_map(|word| folder_of(word, top, user_home))
        .collect()
}

/// The nearest folder at or above `project` holding `.git` (a folder, or a file naming one).
fn work_tree_top(project: &Path) -> Option<PathBuf> {
    project
        .ancestors()
        .find(|folder| folder.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// The repository's git directories for the work tree at `top`: `.git`, or for a `.git` file
/// (`gitdir: …`, a worktree or submodule) the directory it names and the shared one its
/// `commondir` names (where the config and the hooks of every worktree are).
fn git_directories(top: &Path) -> Vec<PathBuf> {
    let dot_git = top.join(".git");
    if dot_git.is_dir() {
        return vec![dot_git];
    }
    let Ok(text) = ctxkit_jail::read_regular_to_string(&dot_git, MAX_CONFIG_BYTES) else {
        return Vec::new();
    };
    let Some(named) = text.lines().find_map(|line| line.strip_prefix("gitdir:")) else {
        return Vec::new();
    };
    let git_dir = top.join(named.trim());
    let mut dirs = vec![git_dir.clone()];
    if let Ok(common) = ctxkit_jail::read_regular_to_string(&git_dir.join("commondir"), 4096) {
        dirs.push(git_dir.join(common.trim()));
    }
    dirs
}

/// The user's global git configs (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`).
pub(crate) fn global_configs(user_home: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    // The files git reads besides the repository's: `GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM`
    // when set, the system's (the verifier, 2026-12-07: a `core.hooksPath` set through
    // `GIT_CONFIG_GLOBAL` was not guarded).
    for variable in ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"] {
        if let Some(file) = std::env::var_os(variable).filter(|value| !value.is_empty()) {
            files.push(PathBuf::from(file));
        }
    }
    files.push(PathBuf::from("/etc/gitconfig"));
    if let Some(home) = user_home {
        files.push(home.join(".gitconfig"));
    }
    match std::env::var_os("XDG_CONFIG_HOME").filter(|value| !value.is_empty()) {
        Some(config) => files.push(PathBuf::from(config).join("git/config")),
        None => files.extend(user_home.map(|home| home.join(".config/git/config"))),
    }
    files
}

/// The folder a `core.hooksPath` value names: `~/…` under `user_home`, a relative one under
/// `top`; none for an empty value.
fn folder_of(value: &str, top: &Path, user_home: Option<&Path>) -> Option<PathBuf> {
    if value.is_empty() {
        return None;
    }
    if let Some(rest) = value.strip_prefix("~/") {
        return user_home.map(|home| home.join(rest));
    }
    let path = Path::new(value);
    Some(if path.is_absolute() {
        ctxkit_jail::lexical(path)
    } else {
        ctxkit_jail::lexical(&top.join(path))
    })
}

/// What a config file says of what git runs: every `core.hooksPath` value, the files its
/// `include` and `includeIf` sections name, and the values of the keys that hold a command.
#[derive(Debug, Default, PartialEq, Eq)]
struct ConfigValues {
    hooks_paths: Vec<String>,
    includes: Vec<String>,
    programs: Vec<String>,
}

/// A section header: its name in lower case, and whether it has a subsection (`[diff "x"]`).
#[derive(Clone, PartialEq, Eq)]
struct Section {
    name: String,
    subsection: bool,
}

/// Every value of `core.hooksPath` in the config `text`.
#[cfg(test)]
fn hooks_path_values(text: &str) -> Vec<String> {
    config_values(text).hooks_paths
}

/// [`ConfigValues`] of the config `text` (section and key names compared without regard to case;
/// `[core "x"]` is another section; `[include]` and `[includeIf "…"]` name files by `path`).
fn config_values(text: &str) -> ConfigValues {
    let mut values = ConfigValues::default();
    let mut section: Option<Section> = None;
    for line in logical_lines(text) {
        let mut rest = line.trim_start();
        if rest.starts_with('[') {
            let Some(end) = rest.find(']') else {
                section = None;
                continue;
            };
            section = Some(section_of(&rest[1..end]));
            rest = rest[end + 1..].trim_start();
        }
        let Some(section) = &section else {
            continue;
        };
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = rest.split_once('=').unwrap_or((rest, ""));
        let key = key.trim().to_ascii_lowercase();
        match (section.name.as_str(), section.subsection, key.as_str()) {
            ("core", false, "hookspath") => values.hooks_paths.push(unquoted(value)),
            ("include", false, "path") | ("includeif", true, "path") => {
                values.includes.push(unquoted(value));
            }
            (name, subsection, key) if runs_a_program(name, subsection, key) => {
                values.programs.push(unquoted(value));
            }
            _ => {}
        }
    }
    values
}

/// Whether git runs the value of `key` in section `name` (with or without a subsection) as a
/// command or program (git-config(1)).
fn runs_a_program(name: &str, subsection: bool, key: &str) -> bool {
    match (name, subsection) {
        ("core", false) => matches!(
            key,
            "fsmonitor" | "sshcommand" | "editor" | "pager" | "askpass" | "gitproxy"
        ),
        ("alias" | "pager", false) => true,
        ("sequence", false) => key == "editor",
        ("interactive", false) => key == "difffilter",
        ("diff", false) => key == "external",
        ("diff", true) => matches!(key, "command" | "textconv"),
        ("merge", true) => key == "driver",
        ("filter", true) => matches!(key, "clean" | "smudge" | "process"),
        ("credential", _) => key == "helper",
        ("gpg", _) => key == "program",
        ("remote", true) => matches!(key, "uploadpack" | "receivepack"),
        ("mergetool" | "difftool" | "browser" | "man", true) => matches!(key, "cmd" | "path"),
        _ => false,
    }
}

/// The section a header's text (between the brackets) opens.
fn section_of(header: &str) -> Section {
    let header = header.trim();
    let (name, subsection) =
        match header.find(|character: char| character == '"' || character.is_whitespace()) {
            Some(at) => (&header[..at], !header[at..].trim().is_empty()),
            None => (header, false),
        };
    // `[diff.x]`, the old spelling of `[diff "x"]`.
    let (name, subsection) = match name.split_once('.') {
        Some((name, _)) => (name, true),
        None => (name, subsection),
    };
    Section {
        name: name.to_ascii_lowercase(),
        subsection,
    }
}

/// The lines of `text` with a line ending in a backslash joined to the next one.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        match line.strip_suffix('\\') {
            Some(start) if !start.ends_with('\\') => current.push_str(start),
            Some(_) | None => {
                current.push_str(line);
                lines.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// A config value as git reads it: quotes removed, `\"`, `\\`, `\n`, `\t` unescaped, a `#` or
/// `;` outside quotes starting a comment, whitespace around it dropped.
fn unquoted(raw: &str) -> String {
    let mut value = String::new();
    let mut quoted = false;
    // Length of `value` up to its last character that is not trailing unquoted whitespace.
    let mut kept = 0;
    let mut characters = raw.trim_start().chars();
    while let Some(character) = characters.next() {
        match character {
            '"' => quoted = !quoted,
            '#' | ';' if !quoted => break,
            '\\' => value.push(match characters.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some('b') => '\u{8}',
                Some(other) => other,
                None => break,
            }),
            other => value.push(other),
        }
        if quoted || !character.is_whitespace() {
            kept = value.len();
        }
    }
    value.truncate(kept);
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_path_is_read_as_git_reads_it() {
        let text = "[user]\n\thooksPath = not-this\n[CORE]\n\tbare = false\n\tHooksPath = .husky \
                    # husky's\n[core \"x\"]\n\thooksPath = nor-this\n[core] hookspath = \"my \
                    hooks\" ; quoted\n[core]\n\thooksPath = a\\\n/b\n";
        assert_eq!(hooks_path_values(text), [".husky", "my hooks", "a/b"]);
    }

    /// QA (2026-12-05): a `core.hooksPath` in a file the user's config includes was not found.
    #[test]
    fn included_files_are_followed_whatever_their_condition() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("git")).unwrap();
        std::fs::write(
            home.join(".gitconfig"),
            "[include]\n\tpath = git/common\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/git/work\n",
        )
        .unwrap();
        std::fs::write(
            home.join("git/common"),
            "[include]\npath = common\n[core]\nhooksPath = .githooks\n",
        )
        .unwrap();
        std::fs::write(home.join("git/work"), "[core]\n\thooksPath = ~/hooks\n").unwrap();
        let folders = guarded_by_config(&project, vec![home.join(".gitconfig")], Some(&home));
        for guarded in [
            project.join(".githooks"),
            home.join("hooks"),
            home.join("git/common"),
            home.join("git/work"),
        ] {
            assert!(folders.contains(&guarded), "{guarded:?} in {folders:?}");
        }
        assert_eq!(
            config_values("[includeIf]\npath = x\n[include \"y\"]\npath = z\n"),
            ConfigValues::default()
        );
    }

    #[test]
    fn a_worktrees_shared_config_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let main_git = dir.path().join("main/.git");
        let linked = main_git.join("worktrees/feature");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::write(main_git.join("config"), "[core]\nhooksPath=.githooks\n").unwrap();
        std::fs::write(linked.join("commondir"), "../..\n").unwrap();
        let tree = dir.path().join("feature");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        std::fs::write(tree.join(".git"), format!("gitdir: {}\n", linked.display())).unwrap();
        let guarded = guarded_by_config(&tree.join("src"), Vec::new(), None);
        for place in [
            tree.join(".githooks"),
            linked.join("config"),
            linked.join("../../hooks"),
        ] {
            assert!(guarded.contains(&place), "{place:?} in {guarded:?}");
        }
    }

    /// QA (r101, D1): `.git/hooks/pre-commit -> ../../scripts/pre-commit`, and under
    /// `core.hooksPath = .husky` a `.husky/pre-commit -> ../tools/hook.sh`: the model edited the
    /// script unasked and the next `git commit` ran it. Every entry of the hooks folders is guarded
    /// (the workspace resolves each to the file it leads to).
    #[test]
    fn every_entry_of_the_hooks_folders_is_guarded() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir_all(project.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(project.join(".husky")).unwrap();
        std::fs::write(
            project.join(".git/config"),
            "[core]\n\thooksPath = .husky\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(
            "../../scripts/pre-commit",
            project.join(".git/hooks/pre-commit"),
        )
        .unwrap();
        std::os::unix::fs::symlink("../tools/hook.sh", project.join(".husky/pre-commit")).unwrap();
        let guarded = guarded_by_config(&project, Vec::new(), None);
        for place in [
            project.join(".git/hooks/pre-commit"),
            project.join(".husky/pre-commit"),
            project.join(".husky"),
            project.join(".git/hooks"),
        ] {
            assert!(guarded.contains(&place), "{place:?} in {guarded:?}");
        }
    }

    /// QA (r101, D2): with the project at `~` the model wrote `~/.gitconfig` (a `core.fsmonitor`
    /// every repository of the user then ran) unasked, and outside a repository nothing of the
    /// global config was guarded at all. The global config files, what they include and the
    /// programs they name are guarded, repository or not.
    #[test]
    fn the_global_config_is_guarded_outside_a_repository_too() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_path_buf();
        std::fs::create_dir_all(home.join(".config/git")).unwrap();
        std::fs::write(home.join(".gitconfig"), "[include]\n\tpath = extra.cfg\n").unwrap();
        std::fs::write(
            home.join(".config/git/config"),
            "[alias]\n\tst = !bin/st.sh\n",
        )
        .unwrap();
        let global = vec![home.join(".gitconfig"), home.join(".config/git/config")];
        let guarded = guarded_by_config(&home, global, Some(&home));
        for place in [
            home.join(".gitconfig"),
            home.join(".config/git/config"),
            home.join("extra.cfg"),
            home.join("bin/st.sh"),
        ] {
            assert!(guarded.contains(&place), "{place:?} in {guarded:?}");
        }
    }
}

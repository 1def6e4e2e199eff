//! The files a tool call reads or changes, for the tools of Pi and of the agents ctxkit imports.
//!
//! Pi's own tools (`read`, `write`, `edit` with a `path`) are read exactly as Pi reads them. The
//! others are the tools real imported sessions use: Claude Code's `Read`/`Write`/`Edit`/`MultiEdit`/
//! `NotebookEdit` (`file_path`, `notebook_path`), OpenCode's `read`/`write`/`edit`/`patch`
//! (`filePath`), Codex's `apply_patch` (the paths named in the patch) and Codex's shell tools, whose
//! commands count when they name a file plainly (`cat src/a.rs`, `sed -n 1,80p src/a.rs`,
//! `… > out.txt`; a PowerShell script's cmdlets, `powershell.rs`). Pi's `bash` is never parsed,
//! so plans over Pi's sessions stay Pi's.

use serde_json::Value;

use crate::powershell;

/// What a call did to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileAccess {
    Read,
    Written,
    Edited,
}

/// The paths a tool call touched, in the order they appear.
pub(crate) fn file_accesses(name: &str, arguments: &Value) -> Vec<(FileAccess, String)> {
    match name {
        "read" | "write" | "edit" => pi_or_opencode_file_tool(name, arguments),
        "Read" | "NotebookRead" => {
            keyed(arguments, &["file_path", "notebook_path"], FileAccess::Read)
        }
        "Write" => keyed(arguments, &["file_path"], FileAccess::Written),
        "Edit" | "MultiEdit" | "NotebookEdit" => keyed(
            arguments,
            &["file_path", "notebook_path"],
            FileAccess::Edited,
        ),
        "multiedit" => keyed(arguments, &["filePath"], FileAccess::Edited),
        "apply_patch" | "patch" => patch_text(arguments)
            .map(|patch| patch_accesses(&patch))
            .unwrap_or_default(),
        "shell" | "local_shell" | "exec_command" | "shell_command" | "container.exec" => {
            match shell_text(arguments) {
                Some(Script::Posix(script)) => shell_accesses(&script),
                Some(Script::PowerShell(script)) => powershell::accesses(&script),
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// Pi's tools take `path` (the only key Pi reads); OpenCode's tools of the same names take
/// `filePath`, read only when there is no `path`.
fn pi_or_opencode_file_tool(name: &str, arguments: &Value) -> Vec<(FileAccess, String)> {
    let access = match name {
        "read" => FileAccess::Read,
        "write" => FileAccess::Written,
        _ => FileAccess::Edited,
    };
    if arguments.get("path").is_some() {
        return keyed(arguments, &["path"], access);
    }
    keyed(arguments, &["filePath"], access)
}

/// The first non-empty string among `keys`.
fn keyed(arguments: &Value, keys: &[&str], access: FileAccess) -> Vec<(FileAccess, String)> {
    keys.iter()
        .find_map(|key| arguments.get(*key).and_then(Value::as_str))
        .filter(|path| !path.is_empty())
        .map(|path| vec![(access, path.to_owned())])
        .unwrap_or_default()
}

/// A patch: Codex's free-form input (imported as `{"input": …}`), or a `patch`/`patchText` field.
fn patch_text(arguments: &Value) -> Option<String> {
    ["input", "patch", "patchText"]
        .iter()
        .find_map(|key| arguments.get(*key).and_then(Value::as_str))
        .map(str::to_owned)
}

/// Paths named by `*** Add File:`, `*** Update File:`, `*** Delete File:` and `*** Move to:` lines.
fn patch_accesses(patch: &str) -> Vec<(FileAccess, String)> {
    let mut accesses = Vec::new();
    for line in patch.lines() {
        let line = line.trim_start();
        let found = [
            ("*** Add File:", FileAccess::Written),
            ("*** Update File:", FileAccess::Edited),
            ("*** Delete File:", FileAccess::Edited),
            ("*** Move to:", FileAccess::Written),
        ]
        .into_iter()
        .find_map(|(marker, access)| line.strip_prefix(marker).map(|rest| (access, rest.trim())));
        if let Some((access, path)) = found
            && !path.is_empty()
        {
            accesses.push((access, path.to_owned()));
        }
    }
    accesses
}

/// A shell call's script, and the language it is in.
enum Script {
    Posix(String),
    PowerShell(String),
}

/// A shell call's command as one script: `command` or `cmd` as a string, or an argument vector
/// (whose `bash -lc SCRIPT` form gives the script); a command line that starts PowerShell
/// (`powershell.exe -NoLogo -Command SCRIPT`, as Codex runs on Windows) gives a PowerShell one.
fn shell_text(arguments: &Value) -> Option<Script> {
    let command = arguments
        .get("command")
        .or_else(|| arguments.get("cmd"))
        .or_else(|| arguments.get("input"))?;
    let words: Vec<&str> = match command {
        Value::String(text) => {
            return Some(match text.split_whitespace().next() {
                Some(program) if powershell::is_powershell(program) => {
                    Script::PowerShell(powershell::script_of_line(text)?)
                }
                _ => Script::Posix(text.clone()),
            });
        }
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => return None,
    };
    Some(match words.as_slice() {
        [program, ..] if powershell::is_powershell(program) => {
            Script::PowerShell(powershell::script_of(&words)?)
        }
        [shell, flag, script, ..] if is_shell(shell) && matches!(*flag, "-c" | "-lc" | "-ic") => {
            Script::Posix((*script).to_owned())
        }
        _ => Script::Posix(words.join(" ")),
    })
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh" | "dash")
}

/// Files a shell script reads or writes plainly: the file operands of `cat`, `head`, `tail`, `nl`,
/// `less`, `bat` and `sed -n`, the targets of `>`/`>>` redirections and of `tee`, and the paths of
/// an `apply_patch` here-document.
fn shell_accesses(script: &str) -> Vec<(FileAccess, String)> {
    if script.contains("*** Begin Patch") {
        return patch_accesses(script);
    }
    let mut accesses = Vec::new();
    for command in script.split(['\n', ';', '|', '&']) {
        let Some(words) = shlex::split(command) else {
            continue;
        };
        accesses.extend(redirect_targets(&words));
        accesses.extend(command_operands(&words));
    }
    accesses
}

/// `> path`, `>> path`, `>path`, `tee [-a] path…`.
fn redirect_targets(words: &[String]) -> Vec<(FileAccess, String)> {
    let mut targets = Vec::new();
    let mut words_iter = words.iter().peekable();
    while let Some(word) = words_iter.next() {
        let target = match word.as_str() {
            ">" | ">>" => words_iter.next().cloned(),
            other => other
                .strip_prefix(">>")
                .or_else(|| other.strip_prefix('>'))
                .filter(|rest| !rest.is_empty() && !rest.starts_with('&'))
                .map(str::to_owned),
        };
        if let Some(target) = target.filter(|target| is_plain_path(target)) {
            targets.push((FileAccess::Written, target));
        }
    }
    if words.first().map(String::as_str) == Some("tee") {
        targets.extend(
            words[1..]
                .iter()
                .take_while(|word| !word.starts_with('>') && !word.starts_with('<'))
                .filter(|word| !word.starts_with('-') && is_plain_path(word))
                .map(|word| (FileAccess::Written, word.clone())),
        );
    }
    targets
}

/// The file operands of a reading command, before any redirection.
fn command_operands(words: &[String]) -> Vec<(FileAccess, String)> {
    let Some(program) = words.first() else {
        return Vec::new();
    };
    let operands = words[1..]
        .iter()
        .take_while(|word| !word.starts_with('>') && !word.starts_with('<'));
    let operands: Vec<&String> = match program.as_str() {
        "cat" | "head" | "tail" | "nl" | "less" | "bat" => operands
            .filter(|word| !word.starts_with('-') && !is_number(word))
            .collect(),
        // `sed -n 'SCRIPT' FILE…`: everything after the script; an in-place sed edits.
        "sed" if words.iter().any(|word| word == "-n") => operands
            .filter(|word| !word.starts_with('-'))
            .skip(1)
            .collect(),
        _ => Vec::new(),
    };
    operands
        .into_iter()
        .filter(|word| is_plain_path(word))
        .map(|word| (FileAccess::Read, word.clone()))
        .collect()
}

fn is_number(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|character| character.is_ascii_digit())
}

/// A word that names a file: no glob or variable, not a device.
pub(crate) fn is_plain_path(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with("/dev/")
        && !word.contains(['*', '?', '$', '`', '(', ')', '{', '}'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(name: &str, arguments: Value) -> Vec<(FileAccess, String)> {
        file_accesses(name, &arguments)
    }

    #[test]
    fn claude_code_tools_name_their_file_path() {
        assert_eq!(
            paths("Read", json!({"file_path": "/repo/src/a.rs", "offset": 10})),
            [(FileAccess::Read, "/repo/src/a.rs".to_owned())]
        );
        assert_eq!(
            paths("MultiEdit", json!({"file_path": "src/b.rs", "edits": []})),
            [(FileAccess::Edited, "src/b.rs".to_owned())]
        );
        assert_eq!(
            paths("NotebookEdit", json!({"notebook_path": "nb.ipynb"})),
            [(FileAccess::Edited, "nb.ipynb".to_owned())]
        );
        assert_eq!(
            paths("Write", json!({"file_path": "C:\\work\\x.ts"})),
            [(FileAccess::Written, "C:\\work\\x.ts".to_owned())]
        );
    }

    #[test]
    fn pi_tools_read_only_the_path_key_and_opencode_tools_their_file_path() {
        assert_eq!(
            paths("read", json!({"path": "a.rs", "filePath": "b.rs"})),
            [(FileAccess::Read, "a.rs".to_owned())]
        );
        assert_eq!(paths("read", json!({"path": ""})), []);
        assert_eq!(
            paths("edit", json!({"filePath": "src/c.go"})),
            [(FileAccess::Edited, "src/c.go".to_owned())]
        );
        assert_eq!(paths("bash", json!({"command": "cat a.rs"})), []);
    }

    #[test]
    fn a_patch_names_its_added_updated_deleted_and_moved_files() {
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: \
                     docs/new.md\n+x\n*** Delete File: old.txt\n*** Update File: a.py\n*** Move \
                     to: b.py\n*** End Patch";
        assert_eq!(
            paths("apply_patch", json!({"input": patch})),
            [
                (FileAccess::Edited, "src/lib.rs".to_owned()),
                (FileAccess::Written, "docs/new.md".to_owned()),
                (FileAccess::Edited, "old.txt".to_owned()),
                (FileAccess::Edited, "a.py".to_owned()),
                (FileAccess::Written, "b.py".to_owned()),
            ]
        );
        let heredoc = format!("apply_patch <<'EOF'\n{patch}\nEOF");
        assert_eq!(
            paths("shell", json!({"command": ["bash", "-lc", heredoc]})).len(),
            5
        );
    }

    #[test]
    fn shell_commands_count_files_they_name_plainly() {
        assert_eq!(
            paths(
                "shell",
                json!({"command": ["bash", "-lc", "sed -n '1,120p' src/main.rs && nl -ba src/x.rs | head -50"]})
            ),
            [
                (FileAccess::Read, "src/main.rs".to_owned()),
                (FileAccess::Read, "src/x.rs".to_owned()),
            ]
        );
        assert_eq!(
            paths(
                "exec_command",
                json!({"cmd": "cargo test > test.log 2>&1; tail -n 20 test.log"})
            ),
            [
                (FileAccess::Written, "test.log".to_owned()),
                (FileAccess::Read, "test.log".to_owned()),
            ]
        );
        assert_eq!(
            paths("shell", json!({"command": ["cat", "README.md"]})),
            [(FileAccess::Read, "README.md".to_owned())]
        );
        assert_eq!(
            paths(
                "shell_command",
                json!({"command": "echo hi | tee out.txt >/dev/null"})
            ),
            [(FileAccess::Written, "out.txt".to_owned())]
        );
        // Searches, listings, globs and variables name no file plainly.
        assert_eq!(
            paths(
                "shell",
                json!({"command": "rg -n foo src && ls -la && cat src/*.rs $F"})
            ),
            []
        );
        // Codex on Windows: the script of `powershell.exe -Command`, its variables followed.
        assert_eq!(
            paths(
                "shell",
                json!({"command": ["powershell.exe", "-NoLogo", "-Command", "$path = 'server/app.py'; $c = Get-Content -Raw $path; Set-Content $path $c"]})
            ),
            [
                (FileAccess::Read, "server/app.py".to_owned()),
                (FileAccess::Written, "server/app.py".to_owned()),
            ]
        );
        assert_eq!(
            paths(
                "shell_command",
                json!({"command": "pwsh -Command Get-Content README.md"})
            ),
            [(FileAccess::Read, "README.md".to_owned())]
        );
        // A script that does not parse is skipped, not guessed at.
        assert_eq!(paths("shell", json!({"command": "cat 'unterminated"})), []);
    }
}

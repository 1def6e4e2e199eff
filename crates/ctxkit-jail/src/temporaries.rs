//! The temporary files of whole-file writes, and the ones killed writers left: every writer that
//! replaces a file through a temporary one beside it names the temporary
//! `.<name>.ctxkit-<pid>-<tag>.tmp` ([`temporary_prefix`] then a counter or random letters, then
//! `.tmp`), so a later writer of the same file can tell whose it is and remove it once that process
//! is gone ([`remove_dead_temporaries`]). A write that fails removes its own; one killed between
//! the write and the rename cannot, and its temporary (a copy of a session, a page, settings) would
//! stay for ever.

use std::path::Path;

use cap_std::fs::Dir;

/// The most bytes of the target's name a temporary file's name repeats: a name may have 255
/// bytes, and the temporary's adds about 30 to it.
const MAX_NAME_IN_TEMPORARY: usize = 128;

/// What a temporary file's name ends with.
pub const TEMPORARY_SUFFIX: &str = ".tmp";

/// The start of this process's temporary files for a file named `name`:
/// `.<name>.ctxkit-<pid>-` (the name cut to 128 bytes, so a target of the longest name has one).
pub fn temporary_prefix(name: &str) -> String {
    format!("{}{}-", target_part(name), std::process::id())
}

/// `.<name>.ctxkit-`: what every writer's temporary file of `name` starts with.
fn target_part(name: &str) -> String {
    format!(".{}.ctxkit-", shortened(name))
}

/// `name` cut to at most [`MAX_NAME_IN_TEMPORARY`] bytes, at a character boundary.
pub(crate) fn shortened(name: &str) -> &str {
    let mut end = name.len().min(MAX_NAME_IN_TEMPORARY);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// The process id in a temporary file's name `.<name>.ctxkit-<pid>-<tag>.tmp` (the tag letters
/// and digits), whatever file it was for.
pub fn temporary_owner(file_name: &str) -> Option<u32> {
    let inner = file_name
        .strip_prefix('.')?
        .strip_suffix(TEMPORARY_SUFFIX)?;
    let (_, tail) = inner.rsplit_once(".ctxkit-")?;
    let (pid, tag) = tail.split_once('-')?;
    if tag.is_empty()
        || !tag
            .chars()
            .all(|character| character.is_ascii_alphanumeric())
    {
        return None;
    }
    pid.parse().ok()
}

/// Removes from `dir` the temporary files of `name` whose writer no longer runs (regular files
/// only: a folder or a link of that shape is left alone); how many were removed. Best effort: one
/// that cannot be read or removed stays.
pub fn remove_dead_temporaries(dir: &Dir, name: &str) -> usize {
    let start = target_part(name);
    let Ok(entries) = dir.entries() else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        if !file_name.starts_with(&start) {
            continue;
        }
        let dead = temporary_owner(file_name).is_some_and(|pid| !is_running(pid));
        let regular = entry.file_type().is_ok_and(|kind| kind.is_file());
        if dead && regular && dir.remove_file(file_name).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// [`remove_dead_temporaries`] of the file at `path`, in its directory.
pub fn remove_dead_temporaries_of(path: &Path) -> usize {
    let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
        return 0;
    };
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        Some(_) | None => Path::new("."),
    };
    match Dir::open_ambient_dir(directory, cap_std::ambient_authority()) {
        Ok(dir) => remove_dead_temporaries(&dir, name),
        Err(_) => 0,
    }
}

/// A new temporary file beside `path`, named as this module names them, for a writer that streams
/// a file and renames it over `path` (`tempfile`'s `persist`): dead writers' temporaries of
/// `path` are removed first. The file is private (`0600`) until the caller says otherwise.
pub fn temporary_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    remove_dead_temporaries_of(path);
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        Some(_) | None => Path::new("."),
    };
    tempfile::Builder::new()
        .prefix(&temporary_prefix(&name))
        .suffix(TEMPORARY_SUFFIX)
        .tempfile_in(directory)
}

/// Whether a process with this id runs (a reused id keeps what it names: the safe side). A
/// process killed but not yet reaped by its parent (a zombie) has ended.
pub fn is_running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let folder = Path::new("/proc").join(pid.to_string());
    match std::fs::read_to_string(folder.join("stat")) {
        Ok(stat) => !matches!(process_state(&stat), Some('Z' | 'X')),
        Err(_) => folder.exists(),
    }
}

/// The state letter of a `/proc/<pid>/stat` line: the first field after the command, which is in
/// parentheses and may itself hold spaces and parentheses.
fn process_state(stat: &str) -> Option<char> {
    let (_, after_command) = stat.rsplit_once(')')?;
    after_command.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zombie_has_ended_and_a_live_process_runs() {
        assert_eq!(process_state("42 (a (b) c) Z 1 42 42"), Some('Z'));
        assert_eq!(process_state("42 (ctxkit) S 1"), Some('S'));
        assert_eq!(process_state("garbage"), None);
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        assert!(is_running(child.id()));
        child.kill().unwrap();
        // Killed, not yet waited for: a zombie.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while is_running(child.id()) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!is_running(child.id()));
        child.wait().unwrap();
        assert!(!is_running(99_999_999));
    }

    #[test]
    fn names_of_temporaries_are_recognised() {
        assert_eq!(temporary_owner(".main.rs.ctxkit-4242-0.tmp"), Some(4242));
        assert_eq!(temporary_owner(".page.html.ctxkit-17-Ab3dEf.tmp"), Some(17));
        assert_eq!(temporary_owner(".a.ctxkit-b.ctxkit-7-12.tmp"), Some(7));
        assert_eq!(temporary_owner("main.rs.ctxkit-4242-0.tmp"), None);
        assert_eq!(temporary_owner(".main.rs.ctxkit-x-0.tmp"), None);
        assert_eq!(temporary_owner(".main.rs.ctxkit-7-.tmp"), None);
        assert_eq!(temporary_owner(".main.rs.tmp"), None);
        let prefix = temporary_prefix("page.html");
        assert_eq!(
            temporary_owner(&format!("{prefix}xY9{TEMPORARY_SUFFIX}")),
            Some(std::process::id())
        );
    }

    /// QA r102: `export`, `migrate` and settings writes killed between the temporary file and the
    /// rename left it for ever. The next write of the same file removes a dead writer's, and
    /// nothing else: a live writer's, another file's, a folder of that shape.
    #[test]
    fn a_dead_writers_temporary_of_the_same_file_is_removed() {
        let folder = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let own = std::process::id();
        let names = [
            format!(".page.html.ctxkit-{dead}-0.tmp"),
            format!(".page.html.ctxkit-{dead}-AbC123.tmp"),
            format!(".page.html.ctxkit-{own}-1.tmp"),
            format!(".other.html.ctxkit-{dead}-0.tmp"),
        ];
        for name in &names {
            std::fs::write(folder.path().join(name), "x").unwrap();
        }
        std::fs::create_dir(
            folder
                .path()
                .join(format!(".page.html.ctxkit-{dead}-9.tmp")),
        )
        .unwrap();
        let removed = remove_dead_temporaries_of(&folder.path().join("page.html"));
        assert_eq!(removed, 2);
        let mut left: Vec<String> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected = vec![
            names[2].clone(),
            names[3].clone(),
            format!(".page.html.ctxkit-{dead}-9.tmp"),
        ];
        expected.sort();
        assert_eq!(left, expected);
        // A streaming writer's temporary is named alike, and removes the dead ones first.
        std::fs::write(folder.path().join(&names[0]), "x").unwrap();
        let temporary = temporary_beside(&folder.path().join("page.html")).unwrap();
        let temporary_name = temporary.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(temporary_owner(temporary_name), Some(own));
        assert!(temporary_name.starts_with(".page.html.ctxkit-"));
        assert!(!folder.path().join(&names[0]).exists());
    }
}

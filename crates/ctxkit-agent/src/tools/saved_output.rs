//! Where a cut output's full text goes: one file per call in the session's own folder, readable by
//! its owner only, never written through a link, and bounded: a session's folder holds at most
//! [`SESSION_BUDGET_BYTES`], and an output saved before in the same words is named again rather
//! than saved twice (a model that runs `cat big.log` twenty times left twenty copies).

use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The most bytes of full outputs one session's folder holds; past it a cut output is not saved
/// and the model is told so (nothing saved before is deleted: results name those files).
pub const SESSION_BUDGET_BYTES: u64 = 256 * 1024 * 1024;

/// Saves a full output as `<dir>/<call id>.txt` (the id reduced to safe characters) and returns its
/// path, or the path of a file in `dir` that already holds exactly `text`. The file is readable by
/// its owner only (`0600`), and so are the folders made for it (`0700`), as the session file it
/// belongs to. A link in place of the folder or of its parent (`tool-output`, which sits beside a
/// session file anyone may have shipped) is refused, and so is one in place of the file: nothing is
/// written, and no mode changed, through a link. Refused too when the folder's files and `text`
/// together would pass [`SESSION_BUDGET_BYTES`].
pub fn save_full_output(dir: &Path, call_id: &str, text: &str) -> std::io::Result<PathBuf> {
    save_within(dir, call_id, text, SESSION_BUDGET_BYTES)
}

fn save_within(dir: &Path, call_id: &str, text: &str, budget: u64) -> std::io::Result<PathBuf> {
    // The parent first: creating the folder through a linked parent would make it at the target.
    if let Some(parent) = dir.parent() {
        refuse_link(parent)?;
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    refuse_link(dir)?;
    // A folder made before (by an older ctxkit) is closed too.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let path = dir.join(format!("{}.txt", safe_name(call_id)));
    let saved = SavedFiles::list(dir)?;
    if let Some(same) = saved.holding(text, &path) {
        return Ok(same);
    }
    let replaced = saved.size_of(&path);
    let total = saved.total_bytes - replaced + text.len() as u64;
    if total > budget {
        return Err(std::io::Error::other(format!(
            "this session's saved outputs would pass {} MiB, the limit per session",
            budget / (1024 * 1024)
        )));
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(text.as_bytes())?;
    Ok(path)
}

/// A call id as a file name: ASCII letters, digits, `-` and `_`, at most 80 characters. An id
/// that is not such a name already has its other characters as `_`, cut to 71, and a hash of the
/// whole id after `-`: two ids reduced to one name (`a/b` and `a_b`, ids alike in their first 80
/// characters) saved over each other's output, and a note named the other call's (QA 2026-12-07).
fn safe_name(call_id: &str) -> String {
    const LIMIT: usize = 80;
    let is_safe = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if !call_id.is_empty() && call_id.len() <= LIMIT && call_id.chars().all(is_safe) {
        return call_id.to_owned();
    }
    let start: String = call_id
        .chars()
        .map(|c| if is_safe(c) { c } else { '_' })
        .take(LIMIT - 9)
        .collect();
    // FNV-1a: the same id, the same name, in every version (a file names an output a result
    // names).
    let hash = call_id
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
    let start = if start.is_empty() { "output" } else { &start };
    format!("{start}-{:08x}", hash >> 32)
}

/// The regular files directly in a saved-outputs folder, with their sizes (links and folders are
/// passed over: they are not ctxkit's).
struct SavedFiles {
    files: Vec<(PathBuf, u64)>,
    total_bytes: u64,
}

impl SavedFiles {
    fn list(dir: &Path) -> std::io::Result<Self> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if !kind.is_file() {
                continue;
            }
            if let Ok(metadata) = entry.metadata() {
                files.push((entry.path(), metadata.len()));
            }
        }
        let total_bytes = files.iter().map(|(_, size)| size).sum();
        Ok(Self { files, total_bytes })
    }

    fn size_of(&self, path: &Path) -> u64 {
        self.files
            .iter()
            .find(|(file, _)| file == path)
            .map_or(0, |(_, size)| *size)
    }

    /// A saved `.txt` file, other than `target` (which is about to be rewritten), that holds
    /// exactly `text`.
    fn holding(&self, text: &str, target: &Path) -> Option<PathBuf> {
        self.files
            .iter()
            .filter(|(file, size)| {
                *size == text.len() as u64
                    && file.as_path() != target
                    && file.extension().is_some_and(|extension| extension == "txt")
            })
            .find(|(file, _)| holds(file, text.as_bytes()))
            .map(|(file, _)| file.clone())
    }
}

/// Whether the file at `path` (not followed if it became a link) holds exactly `expected`.
fn holds(path: &Path, expected: &[u8]) -> bool {
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    else {
        return false;
    };
    let mut buffer = vec![0_u8; 64 * 1024];
    let mut offset = 0;
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return offset == expected.len(),
            Ok(read) => {
                let end = offset + read;
                if end > expected.len() || buffer[..read] != expected[offset..end] {
                    return false;
                }
                offset = end;
            }
            Err(_) => return false,
        }
    }
}

/// An error when `path` is a symbolic link (none when it is not there).
fn refuse_link(path: &Path) -> std::io::Result<()> {
    if ctxkit_jail::is_link(path) {
        return Err(std::io::Error::other(format!(
            "`{}` is a link: full outputs are never written through one",
            path.display()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::limit::{Cut, Keep, MAX_BYTES, cut_notice};

    #[test]
    fn full_outputs_are_saved_under_a_safe_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = save_full_output(dir.path(), "call/../x y", "everything").unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("call____x_y-") && name.ends_with(".txt"),
            "{name}"
        );
        // Ids reduced to one name are saved apart; an id that is a name already is kept as it is.
        let other = save_full_output(dir.path(), "call_.._x_y", "other").unwrap();
        assert_ne!(path, other);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "everything");
        let plain = save_full_output(dir.path(), "toolu_01-abc", "plain").unwrap();
        assert_eq!(plain, dir.path().join("toolu_01-abc.txt"));
        let long = "x".repeat(100);
        let (first, second) = (format!("{long}1"), format!("{long}2"));
        assert_ne!(
            save_full_output(dir.path(), &first, "one").unwrap(),
            save_full_output(dir.path(), &second, "two").unwrap()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "everything");
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(dir.path()), 0o700);
        let nested = dir.path().join("tool-output/session");
        let path = save_full_output(&nested, "c", "x").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&nested), 0o700);
        assert_eq!(mode(&dir.path().join("tool-output")), 0o700);
        let cut = Cut {
            total_lines: 3000,
            total_bytes: 6000,
            shown_lines: 2000,
            shown_bytes: 4000,
            keep: Keep::Tail,
            limit_bytes: MAX_BYTES,
            edge_cut: false,
        };
        let notice = cut_notice(&cut, &path);
        assert!(notice.contains("the last 2000 of 3000 lines"), "{notice}");
        assert!(notice.contains(&path.display().to_string()));
    }

    /// A session folder someone shipped may hold a link where full outputs go: nothing is written
    /// and no mode changed through it, whether it stands for the folder, `tool-output` or the file.
    #[test]
    fn full_outputs_are_never_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o755)).unwrap();
        let session_dir = dir.path().join("shipped");
        std::fs::create_dir_all(session_dir.join("tool-output")).unwrap();
        std::os::unix::fs::symlink(&victim, session_dir.join("tool-output/s1")).unwrap();
        assert!(save_full_output(&session_dir.join("tool-output/s1"), "c", "x").is_err());
        let other = dir.path().join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(&victim, other.join("tool-output")).unwrap();
        assert!(save_full_output(&other.join("tool-output/s1"), "c", "x").is_err());
        let files = dir.path().join("files/tool-output/s1");
        std::fs::create_dir_all(&files).unwrap();
        std::os::unix::fs::symlink(victim.join("planted.txt"), files.join("c.txt")).unwrap();
        assert!(save_full_output(&files, "c", "x").is_err());
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 0);
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
    }
    /// Twenty runs of `cat big.log` keep one copy; a different output is saved on its own.
    #[test]
    fn the_same_output_is_saved_once() {
        let dir = tempfile::tempdir().unwrap();
        let log = "line of a big log\n".repeat(10_000);
        let first = save_full_output(dir.path(), "c1", &log).unwrap();
        for call in 2..=20 {
            let again = save_full_output(dir.path(), &format!("c{call}"), &log).unwrap();
            assert_eq!(again, first);
        }
        let other = save_full_output(dir.path(), "c21", &format!("{log}more\n")).unwrap();
        assert_eq!(other, dir.path().join("c21.txt"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// Past the budget nothing is written and nothing saved before is touched; the call's own
    /// earlier file (a retried call) does not count against it.
    #[test]
    fn a_session_folder_stops_at_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let budget = 100;
        save_within(dir.path(), "a", &"a".repeat(60), budget).unwrap();
        let refused = save_within(dir.path(), "b", &"b".repeat(50), budget).unwrap_err();
        assert!(
            refused.to_string().contains("limit per session"),
            "{refused}"
        );
        assert!(!dir.path().join("b.txt").exists());
        save_within(dir.path(), "b", &"b".repeat(40), budget).unwrap();
        save_within(dir.path(), "b", &"c".repeat(40), budget).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a".repeat(60)
        );
        assert_eq!(
            save_full_output(dir.path(), "z", &"a".repeat(60)).unwrap(),
            dir.path().join("a.txt")
        );
    }
}

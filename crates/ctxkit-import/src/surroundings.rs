//! What a source file's surroundings tell when its records do not: a session without a timestamp
//! starts at the file's modification time, and a Claude Code transcript without a `cwd` (a file
//! holding only a `summary` line) takes the one its project folder's other transcripts record (a
//! folder whose name is that directory's, as Claude Code names them).
//! Without these the session would be written as `_<id>.jsonl` in a `----` folder.

use std::io::BufRead as _;
use std::path::Path;
use std::time::UNIX_EPOCH;

use ctxkit_session::iso_from_ms;
use serde_json::Value;

use crate::{ImportedSession, SourceFormat};

/// How many lines of a neighbouring transcript are read looking for its `cwd`.
const LINES_READ_FOR_CWD: usize = 50;

/// Fills the header's missing start time and working directory of the session read from `path`.
/// The entries without a timestamp (all of them, when the source has none) take the start time.
pub(crate) fn fill_missing_header(session: &mut ImportedSession, path: &Path) {
    if session.header.timestamp.is_empty()
        && let Some(modified) = modification_time(path)
    {
        session.header.timestamp.clone_from(&modified);
        session.fill_missing_timestamps(&modified);
    }
    if session.header.cwd.is_empty()
        && session.format == SourceFormat::ClaudeCode
        && let Some(cwd) = project_cwd(path)
    {
        session.header.cwd = cwd;
    }
}

/// The file's modification time in `toISOString` form.
fn modification_time(path: &Path) -> Option<String> {
    let modified = std::fs::metadata(path).ok()?.modified().ok()?;
    let millis = modified.duration_since(UNIX_EPOCH).ok()?.as_millis();
    Some(iso_from_ms(i64::try_from(millis).ok()?))
}

/// The `cwd` the other transcripts of `path`'s Claude Code project folder record (the folder is
/// one per working directory), from the first, by name, that records one.
fn project_cwd(path: &Path) -> Option<String> {
    let folder = path.parent()?;
    let mut neighbours: Vec<_> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|neighbour| {
            neighbour.as_path() != path
                && neighbour
                    .extension()
                    .is_some_and(|extension| extension == "jsonl")
                && neighbour.is_file()
        })
        .collect();
    neighbours.sort();
    let folder_name = folder.file_name()?.to_str()?;
    neighbours
        .iter()
        .filter_map(|neighbour| recorded_cwd(neighbour))
        .find(|cwd| names_project_folder(cwd, folder_name))
}

/// Whether `folder_name` is the name Claude Code gives the project folder of `cwd` (every character
/// but an ASCII letter or digit written `-`; a Windows drive letter in either case), or of a
/// directory above it (a session that moved into a subdirectory records that one). A transcript
/// copied into any other folder (`Downloads`, `/tmp`) takes no stranger's working directory.
fn names_project_folder(cwd: &str, folder_name: &str) -> bool {
    let encoded: String = cwd
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let (encoded, folder_name) = (
        encoded.to_ascii_lowercase(),
        folder_name.to_ascii_lowercase(),
    );
    encoded == folder_name
        || encoded
            .strip_prefix(&folder_name)
            .is_some_and(|rest| rest.starts_with('-'))
}

/// The first `cwd` among the first lines of a transcript.
fn recorded_cwd(path: &Path) -> Option<String> {
    let file = crate::regular::open_regular(path).ok()?;
    std::io::BufReader::new(file)
        .lines()
        .take(LINES_READ_FOR_CWD)
        .map_while(Result::ok)
        .find_map(|line| {
            let line = crate::source::without_byte_order_mark(&line);
            let record: Value = serde_json::from_str(line).ok()?;
            let cwd = record.get("cwd")?.as_str()?;
            (!cwd.is_empty()).then(|| cwd.to_owned())
        })
}

#[cfg(test)]
mod tests {
    use super::names_project_folder;

    #[test]
    fn a_project_folder_is_named_after_its_working_directory() {
        assert!(names_project_folder("/home/dev/shop", "-home-dev-shop"));
        assert!(names_project_folder(
            "/Users/a/my_app.v2",
            "-Users-a-my-app-v2"
        ));
        assert!(names_project_folder(
            "C:\\Users\\dev\\app",
            "c--Users-dev-app"
        ));
        // A session that moved into a subdirectory.
        assert!(names_project_folder("/home/dev/shop/api", "-home-dev-shop"));
        assert!(!names_project_folder(
            "/home/dev/shopping",
            "-home-dev-shop"
        ));
        assert!(!names_project_folder("/home/dev/shop", "Downloads"));
        assert!(!names_project_folder("/tmp", "tmp"));
    }
}

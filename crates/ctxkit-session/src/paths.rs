//! Where sessions live: `<sessions root>/--<encoded cwd>--/<timestamp>_<session id>.jsonl`, as Pi lays
//! them out, so `~/.pi/agent/sessions` can be used directly.

use std::path::{Path, PathBuf};

/// The directory name Pi uses for a working directory: the leading separator dropped, `/`, `\` and
/// `:` replaced by `-`, wrapped in `--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    let encoded: String = trimmed
        .chars()
        .map(|character| {
            if matches!(character, '/' | '\\' | ':') {
                '-'
            } else {
                character
            }
        })
        .collect();
    format!("--{encoded}--")
}

/// The session directory of `cwd` under `sessions_root`.
pub fn default_session_dir(sessions_root: &Path, cwd: &str) -> PathBuf {
    sessions_root.join(encode_cwd(cwd))
}

/// The file name of a new session: its ISO timestamp with `:` and `.` as `-`, then its id.
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    let stamp: String = timestamp
        .chars()
        .map(|character| {
            if matches!(character, ':' | '.') {
                '-'
            } else {
                character
            }
        })
        .collect();
    format!("{stamp}_{session_id}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_pi() {
        assert_eq!(encode_cwd("/home/u/my:proj"), "--home-u-my-proj--");
        assert_eq!(encode_cwd("C:\\work\\x"), "--C--work-x--");
        assert_eq!(
            session_file_name("2024-12-03T14:00:00.123Z", "0193-ab"),
            "2024-12-03T14-00-00-123Z_0193-ab.jsonl"
        );
    }
}

//! Where sessions live: `<sessions root>/--<encoded cwd>--/<timestamp>_<session id>.jsonl`, as Pi lays
//! them out, so `~/.pi/agent/sessions` can be used directly.

use std::path::{Path, PathBuf};

/// The longest file name most file systems take (`NAME_MAX`), in bytes.
const MAX_FILE_NAME_BYTES: usize = 255;

/// How many hex digits of the path's SHA-256 an over-long folder name holds.
const FOLDER_HASH_DIGITS: usize = 16;

/// The directory name Pi uses for a working directory: the leading separator dropped, `/`, `\` and
/// `:` replaced by `-`, wrapped in `--`. A name over 255 bytes (a project path of ~250 bytes and
/// more), which no file system takes and Pi makes anyway, is shortened: the start and the end of
/// the encoded path around `~`, 16 hex digits of the SHA-256 of `cwd` and `~`, 255 bytes in all
/// (`--tmp-a-b…~3f2a…~…-y-z--`), so the same path always names the same folder and two long paths
/// two folders. Every name Pi can create is unchanged.
pub fn encode_cwd(cwd: &str) -> String {
    let encoded = encoded_path(cwd);
    if encoded.len() + 4 <= MAX_FILE_NAME_BYTES {
        return format!("--{encoded}--");
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(cwd.as_bytes());
    let hash: String = digest
        .iter()
        .take(FOLDER_HASH_DIGITS / 2)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    // `--`, `~`, the hash, `~`, `--`.
    let kept = MAX_FILE_NAME_BYTES - FOLDER_HASH_DIGITS - 6;
    let head = prefix_within(&encoded, kept / 2);
    let tail = suffix_within(&encoded, kept - head.len());
    format!("--{head}~{hash}~{tail}--")
}

/// `cwd` as Pi encodes it in its folder's name, between the `--`s.
fn encoded_path(cwd: &str) -> String {
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(cwd);
    trimmed
        .chars()
        .map(|character| {
            if matches!(character, '/' | '\\' | ':') {
                '-'
            } else {
                character
            }
        })
        .collect()
}

/// The longest start of `text` of at most `bytes` bytes that ends on a character boundary.
fn prefix_within(text: &str, bytes: usize) -> &str {
    let mut end = bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The longest end of `text` of at most `bytes` bytes that starts on a character boundary.
fn suffix_within(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// A project folder as Pi records it (Node's `path.resolve`): made absolute against the working
/// directory, `.` and `..` resolved by the path's text (symbolic links are not followed), repeated
/// and trailing separators dropped. `fork-from --cwd ../proj` and `serve`'s `session.create` with
/// `/proj/` named folders no listing of the project looked in.
pub fn resolved_cwd(cwd: &Path) -> std::io::Result<PathBuf> {
    use std::path::Component;
    let absolute = std::path::absolute(cwd)?;
    let mut resolved = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                // `..` of the root is the root.
                if resolved.parent().is_some() {
                    resolved.pop();
                }
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                resolved.push(component);
            }
        }
    }
    Ok(resolved)
}

/// The longest id a file is named after as it is.
pub(crate) const MAX_FILE_ID_BYTES: usize = 128;

/// `None` when `id` (a session's, from a database or an imported agent's file) can name a file as it
/// is: one plain name of ASCII letters, digits, `-`, `_` and `.`, not starting with `.`, at most 128
/// bytes. Else the name to use instead: 32 hex digits of its SHA-256, the same for the same id.
pub fn file_safe_id(id: &str) -> Option<String> {
    let plain = !id.is_empty()
        && id.len() <= MAX_FILE_ID_BYTES
        && !id.starts_with('.')
        && id
            .chars()
            .all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character));
    if plain {
        return None;
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(id.as_bytes());
    Some(
        digest
            .iter()
            .take(16)
            .map(|byte| format!("{byte:02x}"))
            .collect(),
    )
}

/// The session directory of `cwd` under `sessions_root`.
pub fn default_session_dir(sessions_root: &Path, cwd: &str) -> PathBuf {
    sessions_root.join(encode_cwd(cwd))
}

/// The file name of a new session: its ISO timestamp with `:` and `.` as `-` (Pi's name), then its
/// id. The name is always one plain file name: any other character of the timestamp but a letter,
/// a digit, `-` and `+` is a `-` too (a header's timestamp `/etc/x` must not name a file outside
/// the session's folder, and an `_` would make the id look longer), and a separator or control
/// character of the id is a `-` (callers name files after file-safe ids, [`file_safe_id`]).
pub fn session_file_name(timestamp: &str, session_id: &str) -> String {
    let stamp: String = timestamp
        .chars()
        .map(|character| {
            if character.is_ascii_alphanumeric() || matches!(character, '-' | '+') {
                character
            } else {
                '-'
            }
        })
        .collect();
    let id: String = session_id
        .chars()
        .map(|character| {
            if matches!(character, '/' | '\\') || character.is_control() {
                '-'
            } else {
                character
            }
        })
        .collect();
    format!("{stamp}_{id}.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_folder_is_resolved_as_pi_resolves_it() {
        let resolved = |path: &str| resolved_cwd(Path::new(path)).unwrap();
        assert_eq!(
            resolved("/tmp/work/proj/../proj"),
            Path::new("/tmp/work/proj")
        );
        assert_eq!(resolved("/tmp/work/proj/"), Path::new("/tmp/work/proj"));
        assert_eq!(resolved("/tmp//work/./proj"), Path::new("/tmp/work/proj"));
        assert_eq!(resolved("/../.."), Path::new("/"));
        assert_eq!(
            encode_cwd(&resolved("/tmp/work/proj/").display().to_string()),
            "--tmp-work-proj--"
        );
        let here = std::env::current_dir().unwrap();
        assert_eq!(resolved("."), here);
    }

    #[test]
    fn session_ids_that_cannot_name_a_file_are_hashed() {
        for usable in ["0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "ses_01JX", "a.b"] {
            assert_eq!(file_safe_id(usable), None, "{usable}");
        }
        let long = "a".repeat(MAX_FILE_ID_BYTES + 1);
        for unusable in [
            "x/../../../../ESCAPED",
            "..",
            ".",
            "...",
            "",
            "a\\b",
            ".hidden",
            "a\nb",
            "a\u{0}b",
            "/etc/passwd",
            "ünï",
            long.as_str(),
        ] {
            let replacement = file_safe_id(unusable).unwrap();
            assert_eq!(replacement.len(), 32);
            assert_eq!(file_safe_id(&replacement), None);
            assert_eq!(Some(replacement), file_safe_id(unusable), "stable");
        }
    }

    /// A project whose path is over ~250 bytes still gets a folder it can create: the name keeps
    /// the path's start and end around a hash of the whole path, the same for the same path.
    #[test]
    fn an_over_long_folder_name_is_shortened_with_a_hash() {
        let long: String = (0..8)
            .map(|index| format!("/very-long-folder-name-number-{index:02}"))
            .collect();
        let cwd = format!("/tmp/r97/sec/w/longcwd2{long}");
        assert!(cwd.len() > 255);
        let name = encode_cwd(&cwd);
        assert!(name.len() <= 255, "{} bytes: {name}", name.len());
        assert!(name.starts_with("--tmp-r97-sec-w-longcwd2-very-long-folder-name-number-00"));
        assert!(
            name.ends_with("-very-long-folder-name-number-07--"),
            "{name}"
        );
        assert_eq!(encode_cwd(&cwd), name, "the same path, the same folder");
        let other = cwd.replace("number-03", "number-3x");
        assert_ne!(encode_cwd(&other), name, "another path, another folder");
        // Many-byte characters are never cut in the middle.
        let accented = format!("/{}", "é".repeat(300));
        let name = encode_cwd(&accented);
        assert!(name.len() <= 255);
        assert!(name.starts_with("--éé") && name.ends_with("éé--"), "{name}");
        // A name of 255 bytes or fewer is Pi's, unchanged.
        let fits = format!("/{}", "a".repeat(250));
        assert_eq!(encode_cwd(&fits), format!("--{}--", "a".repeat(250)));
        assert_eq!(encode_cwd(&fits).len(), 254);
        let limit = format!("/{}", "a".repeat(251));
        assert_eq!(encode_cwd(&limit), format!("--{}--", "a".repeat(251)));
        let over = format!("/{}", "a".repeat(252));
        assert_eq!(encode_cwd(&over).len(), 255);
        assert_ne!(encode_cwd(&over), format!("--{}--", "a".repeat(252)));
    }

    #[test]
    fn layout_matches_pi() {
        assert_eq!(encode_cwd("/home/u/my:proj"), "--home-u-my-proj--");
        assert_eq!(encode_cwd("C:\\work\\x"), "--C--work-x--");
        assert_eq!(
            session_file_name("2024-12-03T14:00:00.123Z", "0193-ab"),
            "2024-12-03T14-00-00-123Z_0193-ab.jsonl"
        );
    }

    /// A header's timestamp or id never names a file outside the session's folder.
    #[test]
    fn a_session_file_name_is_one_plain_name() {
        for (timestamp, id) in [
            ("/etc/cron.d/x", "abc"),
            ("../../x", "abc"),
            ("2024_01_01", "a"),
            ("C:\\x", "a/../../b"),
            ("t", "a\\b\u{0}c"),
        ] {
            let name = session_file_name(timestamp, id);
            assert!(
                !name.contains(['/', '\\', '\u{0}']) && !name.starts_with('.'),
                "{name}"
            );
            assert_eq!(Path::new(&name).components().count(), 1, "{name}");
            // The first `_` ends the timestamp: what follows is the id.
            let (_, named) = name
                .strip_suffix(".jsonl")
                .unwrap()
                .split_once('_')
                .unwrap();
            assert_eq!(named, id.replace(['/', '\\', '\u{0}'], "-"), "{name}");
        }
    }
}

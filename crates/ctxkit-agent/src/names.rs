//! File names as the tools show them to the model and read them back. A name that is valid UTF-8
//! without control characters is shown as it is; any other (a newline, an escape, bytes that are
//! not UTF-8) is shown quoted the way `ls --quoting-style=shell-escape` and bash's `$'…'` do:
//! `$'a\nb'`, `$'caf\xe9.txt'`. Every tool reads a path argument holding `$'…'` parts back to
//! the same bytes ([`decoded`]), so a name listed can always be passed back, and a listing never
//! shows one odd name as two entries or a name that does not exist.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::PathBuf;

/// How `ls` and `grep` show the file name or path `name`: as it is, or quoted as `$'…'` when it
/// is not valid UTF-8, holds a control character or holds `$'` (so that a name shown as it is
/// never reads as a quoted one). So is one that would not read as what it is: one that starts
/// or ends with a space (`$'notes.txt '`, the space otherwise unseen and lost when the model
/// passes the name back) or holds an invisible character (a bidirectional override that draws
/// `txt.sh` as `hs.txt`, a zero-width space).
pub(crate) fn shown(name: &OsStr) -> String {
    let bytes = name.as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) if reads_as_it_is(text) => text.to_owned(),
        _ => quoted(bytes),
    }
}

/// Whether `text` shown as it is reads as exactly what it is.
fn reads_as_it_is(text: &str) -> bool {
    let spaced = |character: Option<char>| character.is_some_and(char::is_whitespace);
    let padded = |part: &str| spaced(part.chars().next()) || spaced(part.chars().next_back());
    !text
        .chars()
        .any(|character| character.is_control() || ctxkit_protocol::is_invisible(character))
        && !text.contains("$'")
        && !text.split('/').any(padded)
}

/// `path` as every question and tool line shows it to the user (`shown`): a name holding a line
/// break or another control character is quoted (`$'x.txt\n…'`), so the model cannot write a
/// line of the question itself. Public: the chat's `→ write …` line and its rewind use it too.
pub fn shown_path(path: &std::path::Path) -> String {
    shown(path.as_os_str())
}

/// A tool's path `argument` as [`shown_path`] shows the file it names (its `$'…'` parts read
/// first, so a name the model passes back quoted is shown once quoted, not twice).
pub fn shown_path_argument(argument: &str) -> String {
    shown_path(&decoded(argument))
}

/// A path argument in backquotes for a tool's message (`` `notes.txt` ``, `` `$'a\nb'` ``): a line
/// break in it never starts a line of the message (QA: "Cannot read `x⏎Read …? [y]es`").
pub(crate) fn quoted_argument(argument: &str) -> String {
    format!("`{}`", shown_path_argument(argument))
}

/// `bytes` as `$'…'`: C escapes for the control characters, a quote and a backslash, `\xHH` for
/// every byte of a control character without one and every byte that is not UTF-8.
fn quoted(bytes: &[u8]) -> String {
    let mut text = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for character in chunk.valid().chars() {
            match character {
                '\n' => text.push_str("\\n"),
                '\t' => text.push_str("\\t"),
                '\r' => text.push_str("\\r"),
                '\\' => text.push_str("\\\\"),
                '\'' => text.push_str("\\'"),
                control if control.is_control() || ctxkit_protocol::is_invisible(control) => {
                    let mut buffer = [0; 4];
                    for byte in control.encode_utf8(&mut buffer).bytes() {
                        text.push_str(&format!("\\x{byte:02x}"));
                    }
                }
                other => text.push(other),
            }
        }
        for byte in chunk.invalid() {
            text.push_str(&format!("\\x{byte:02x}"));
        }
    }
    text.push('\'');
    text
}

/// The path a tool's argument names: its `$'…'` parts (as [`shown`] writes them, anywhere in the
/// argument: `src/$'a\nb'`) read back to their bytes. An argument without one, or whose quoting
/// is not well formed (no closing quote, an unknown escape), is the path as written.
pub(crate) fn decoded(argument: &str) -> PathBuf {
    if !argument.contains("$'") {
        return PathBuf::from(argument);
    }
    match unquoted(argument) {
        Some(bytes) => PathBuf::from(OsString::from_vec(bytes)),
        None => PathBuf::from(argument),
    }
}

/// The bytes of `argument` with its `$'…'` parts unquoted; `None` when one is not well formed.
fn unquoted(argument: &str) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(argument.len());
    let mut rest = argument;
    while let Some(start) = rest.find("$'") {
        bytes.extend_from_slice(&rest.as_bytes()[..start]);
        rest = unquote_part(&rest[start + 2..], &mut bytes)?;
    }
    bytes.extend_from_slice(rest.as_bytes());
    Some(bytes)
}

/// Reads one quoted part's text, `text` starting after its `$'`, into `bytes`; what follows its
/// closing quote, or `None` when it has none or an unknown escape.
fn unquote_part<'a>(text: &'a str, bytes: &mut Vec<u8>) -> Option<&'a str> {
    let mut characters = text.char_indices();
    while let Some((index, character)) = characters.next() {
        match character {
            '\'' => return Some(&text[index + 1..]),
            '\\' => {
                let (_, escape) = characters.next()?;
                match escape {
                    'x' => {
                        let digits = text
                            .get(index + 2..index + 4)
                            .filter(|digits| digits.bytes().all(|byte| byte.is_ascii_hexdigit()))?;
                        bytes.push(u8::from_str_radix(digits, 16).ok()?);
                        characters.next();
                        characters.next();
                    }
                    other => bytes.push(escaped(other)?),
                }
            }
            other => {
                let mut buffer = [0; 4];
                bytes.extend_from_slice(other.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
    None
}

/// The byte a one-letter escape stands for (`n` for a newline), as bash reads it in `$'…'`.
fn escaped(letter: char) -> Option<u8> {
    Some(match letter {
        'n' => b'\n',
        't' => b'\t',
        'r' => b'\r',
        'a' => 0x07,
        'b' => 0x08,
        'e' | 'E' => 0x1b,
        'f' => 0x0c,
        'v' => 0x0b,
        '\\' => b'\\',
        '\'' => b'\'',
        '"' => b'"',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::Path;

    use super::{decoded, shown};

    fn name(bytes: &[u8]) -> &OsStr {
        OsStr::from_bytes(bytes)
    }

    #[test]
    fn plain_names_are_shown_and_read_as_they_are() {
        for plain in [
            "a.rs",
            "src/main.rs",
            "my file (1).txt",
            "café.md",
            "it's",
            "a\\b",
        ] {
            assert_eq!(shown(name(plain.as_bytes())), plain);
            assert_eq!(decoded(plain), Path::new(plain));
        }
    }

    #[test]
    fn odd_names_are_quoted_and_read_back_to_their_bytes() {
        let cases: [(&[u8], &str); 7] = [
            (b"a\nb", r"$'a\nb'"),
            (b"caf\xe9.txt", r"$'caf\xe9.txt'"),
            (b"tab\there", r"$'tab\there'"),
            (b"\x1b[31mred", r"$'\x1b[31mred'"),
            (b"it's\n", r"$'it\'s\n'"),
            (b"back\\slash\r", r"$'back\\slash\r'"),
            (b"dollar$'quote", r"$'dollar$\'quote'"),
        ];
        for (bytes, expected) in cases {
            assert_eq!(shown(name(bytes)), expected);
            assert_eq!(
                decoded(expected).as_os_str().as_bytes(),
                bytes,
                "{expected}"
            );
        }
        // A C1 control character is shown as its UTF-8 bytes.
        assert_eq!(shown(name("a\u{85}b".as_bytes())), r"$'a\xc2\x85b'");
        assert_eq!(decoded(r"$'a\xc2\x85b'"), Path::new("a\u{85}b"));
    }

    /// QA 2026-12-07: a name ending in a space was listed as `notes.txt `, the space unseen
    /// and dropped when the model passed the name back; a right-to-left override drew a name
    /// backwards in the question asked before a write.
    #[test]
    fn names_that_would_not_read_as_they_are_are_quoted() {
        let cases: [(&str, &str); 6] = [
            ("notes.txt ", "$'notes.txt '"),
            ("src /a.rs", "$'src /a.rs'"),
            (" lead", "$' lead'"),
            ("evil\u{202e}hs.txt", r"$'evil\xe2\x80\xaehs.txt'"),
            ("zero\u{200b}width", r"$'zero\xe2\x80\x8bwidth'"),
            ("\u{feff}bom.md", r"$'\xef\xbb\xbfbom.md'"),
        ];
        for (plain, expected) in cases {
            assert_eq!(shown(name(plain.as_bytes())), expected);
            assert_eq!(decoded(expected), Path::new(plain), "{expected}");
        }
        assert_eq!(shown(name("a b.txt".as_bytes())), "a b.txt");
    }

    #[test]
    fn a_quoted_part_may_follow_a_folder() {
        assert_eq!(
            decoded(r"src/$'a\nb'/c.rs").as_os_str().as_bytes(),
            b"src/a\nb/c.rs"
        );
        assert_eq!(decoded(r"$'x'$'\x41'"), Path::new("xA"));
    }

    #[test]
    fn quoting_that_is_not_well_formed_is_read_as_written() {
        for literal in [r"price$'5", r"$'unknown\q'", r"$'bad\xZZ'", r"$'cut\x"] {
            assert_eq!(decoded(literal), Path::new(literal));
        }
    }
}

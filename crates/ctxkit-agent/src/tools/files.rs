//! `read`, `write`, `edit` and `ls`.

use std::fmt::Write as _;

use serde::Deserialize;

use super::diff;
use super::limit::Keep;
use super::replacement::{self, Unmatched};
use super::utf16::Utf16;
use super::{ToolContext, ToolOutcome, bounded_outcome, lax};
use crate::tool::Target;
use crate::workspace::Access;

/// The default number of entries `ls` shows.
const LS_LIMIT: u64 = 500;

/// The most bytes `read` takes from an image, and `write` and `edit` from a file they change.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

/// At most `max` bytes of the regular file `target`, and its size, opened beneath its jail.
/// Anything else (a FIFO, a device, a socket, a directory) is refused before it is read, and
/// opening never waits for a writer.
pub(super) fn read_bounded(target: &Target, max: u64) -> Result<(Vec<u8>, u64), String> {
    target
        .jail
        .read(&target.path, max)
        .map_err(|error| jail_reason(&error))
}

/// A file's bytes as text: UTF-16 when `encoding` says so, UTF-8 otherwise; `None` when they
/// are not.
fn file_text(bytes: Vec<u8>, encoding: Option<Utf16>) -> Option<String> {
    match encoding {
        Some(order) => order.decode(&bytes),
        None => String::from_utf8(bytes).ok(),
    }
}

/// The reason of a jail's refusal, without the path the caller already names.
pub(super) fn jail_reason(error: &ctxkit_jail::JailError) -> String {
    match error {
        ctxkit_jail::JailError::Io { source, .. } => source.to_string(),
        ctxkit_jail::JailError::NotRegular { .. } => {
            "not a regular file (only regular files are read)".to_owned()
        }
        ctxkit_jail::JailError::TooDeep { .. }
        | ctxkit_jail::JailError::TooLong { .. }
        | ctxkit_jail::JailError::Outside { .. }
        | ctxkit_jail::JailError::Escapes { .. }
        | ctxkit_jail::JailError::Denied { .. }
        | ctxkit_jail::JailError::HardLink { .. }
        | ctxkit_jail::JailError::HardLinkUnchecked { .. }
        | ctxkit_jail::JailError::Guarded { .. }
        | ctxkit_jail::JailError::ReadOnly { .. }
        | ctxkit_jail::JailError::FolderReadOnly { .. }
        | ctxkit_jail::JailError::OtherOwner { .. }
        | ctxkit_jail::JailError::TooLarge { .. }
        | ctxkit_jail::JailError::NotText { .. } => error.to_string(),
    }
}

/// The arguments of `write`.
#[derive(Debug, Deserialize)]
pub struct WriteArguments {
    pub(super) path: String,
    content: String,
}

/// `write {path, content}`: creates parent directories, replaces the file.
pub fn write(arguments: WriteArguments, context: &ToolContext) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_str();
    let content = arguments.content.as_str();
    let target = context.target("write", shown, Access::Write)?;
    if target.jail.is_dir(&target.path) {
        return Err(format!("Cannot write `{shown}`: it is a directory"));
    }
    // A folder on the way that is a file: said as such (creating the folders said "File exists").
    if let Some(file) = target
        .path
        .ancestors()
        .skip(1)
        .find(|ancestor| target.jail.is_file(ancestor))
    {
        let file = file.strip_prefix(&context.cwd).unwrap_or(file);
        return Err(format!(
            "Cannot write `{shown}`: `{}` is a file, not a folder",
            file.display()
        ));
    }
    // What the file held, for the diff the chat shows (none when it is not text ctxkit reads).
    let mut was_utf16 = None;
    let before = match target.jail.read(&target.path, MAX_READ_BYTES) {
        Ok((bytes, size)) if u64::try_from(bytes.len()).unwrap_or(u64::MAX) >= size => {
            was_utf16 = Utf16::of(&bytes);
            file_text(bytes, was_utf16)
        }
        Ok(_) => None,
        Err(error) => error.is_not_found().then(String::new),
    };
    if before
        .as_deref()
        .is_some_and(|before| context.workspace.holds_known_secret(before))
    {
        return Err(holds_a_key("write", shown));
    }
    target
        .jail
        .write_atomic(&target.path, content.as_bytes())
        .map_err(|error| unwritten("write", shown, &error))?;
    let mut said = format!("Wrote {} bytes to {shown}", content.len());
    if let Some(order) = was_utf16 {
        let _ = write!(said, " (it was {}; it is UTF-8 now)", order.name());
    }
    let mut outcome = ToolOutcome::ok(said);
    outcome.details = before.and_then(|before| {
        diff::details(
            &context.workspace.redact(&before),
            &context.workspace.redact(content),
        )
    });
    Ok(outcome)
}

/// The arguments of `edit`: Pi 1.6's `edits`, a list of replacements, and the older single
/// `oldText`/`newText`, taken after them (as Pi takes both).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditArguments {
    pub(super) path: String,
    #[serde(default)]
    old_text: Option<String>,
    #[serde(default)]
    new_text: Option<String>,
    #[serde(default, deserialize_with = "edit_list")]
    edits: Vec<EditPair>,
}

/// One replacement of `edits`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EditPair {
    old_text: String,
    new_text: String,
}

/// `edits` as models write it: a list, one replacement not in a list, or either of them as a JSON
/// string (seen from Claude Opus 4.6 and GLM-5.1, as Pi notes); `null` is none.
fn edit_list<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<EditPair>, D::Error> {
    use serde::de::Error;
    let mut value = serde_json::Value::deserialize(deserializer)?;
    if let Some(parsed) = value
        .as_str()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok())
    {
        value = parsed;
    }
    if value.is_null() {
        return Ok(Vec::new());
    }
    if value.is_object() {
        value = serde_json::Value::Array(vec![value]);
    }
    serde_json::from_value(value).map_err(|_| {
        D::Error::custom("`edits` must be a list of {\"oldText\": …, \"newText\": …} objects")
    })
}

impl EditArguments {
    /// The replacements asked for, in order: `edits`, then `oldText`/`newText`.
    fn pairs(&self) -> Result<Vec<(&str, &str)>, String> {
        let mut pairs: Vec<(&str, &str)> = self
            .edits
            .iter()
            .map(|pair| (pair.old_text.as_str(), pair.new_text.as_str()))
            .collect();
        match (&self.old_text, &self.new_text) {
            (Some(old), Some(new)) => pairs.push((old.as_str(), new.as_str())),
            (None, None) => {}
            (Some(_), None) | (None, Some(_)) => {
                return Err("`oldText` and `newText` go together: give both".to_owned());
            }
        }
        if pairs.is_empty() {
            return Err(
                "`edit` needs `edits`, a list of {oldText, newText} replacements".to_owned(),
            );
        }
        if pairs.iter().any(|(old, _)| old.is_empty()) {
            return Err("`oldText` must not be empty".to_owned());
        }
        Ok(pairs)
    }
}

/// `edit {path, edits: [{oldText, newText}]}`: replaces the one occurrence of each `oldText` in
/// the file as it was (all or none).
pub fn edit(arguments: EditArguments, context: &ToolContext) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_str();
    let pairs = arguments.pairs()?;
    let target = context.target("edit", shown, Access::Write)?;
    let (bytes, size) = read_bounded(&target, MAX_READ_BYTES).map_err(|error| {
        format!(
            "Cannot read {}: {error}",
            crate::names::quoted_argument(shown)
        )
    })?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) < size {
        return Err(format!(
            "`{shown}` is larger than {} MiB; `edit` works on smaller files",
            MAX_READ_BYTES / (1024 * 1024)
        ));
    }
    let encoding = Utf16::of(&bytes);
    let text = file_text(bytes, encoding)
        .ok_or_else(|| format!("Cannot edit `{shown}`: it is not UTF-8 or UTF-16 text"))?;
    if context.workspace.holds_known_secret(&text) {
        return Err(holds_a_key("edit", shown));
    }
    let (updated, made) = replacement::apply_all(&text, &pairs).map_err(|(index, unmatched)| {
        let which = if pairs.len() > 1 {
            format!("edits[{index}]: ")
        } else {
            String::new()
        };
        match unmatched {
            Unmatched::NotFound => format!(
                "{which}`oldText` was not found in `{shown}`; it must match exactly, indentation \
                 included (read the file first); nothing was changed"
            ),
            Unmatched::Many(many) => format!(
                "{which}`oldText` occurs {many} times in `{shown}`; include more surrounding \
                 lines so it matches exactly once; nothing was changed"
            ),
            Unmatched::Overlaps(other) => format!(
                "edits[{other}] and edits[{index}] overlap in `{shown}` (each is matched in the \
                 file as it was); merge them into one edit; nothing was changed"
            ),
        }
    })?;
    if updated == text {
        return Err(format!(
            "`newText` is the text it would replace in `{shown}`: nothing was changed"
        ));
    }
    // A UTF-16 file stays in its encoding, byte-order mark and all.
    let written = match encoding {
        Some(order) => std::borrow::Cow::Owned(order.encode(&updated)),
        None => std::borrow::Cow::Borrowed(updated.as_bytes()),
    };
    target
        .jail
        .write_atomic(&target.path, &written)
        .map_err(|error| unwritten("edit", shown, &error))?;
    let mut outcome = ToolOutcome::ok(match made.as_slice() {
        [one] => format!(
            "Edited {shown} at line {}: replaced {} line(s) with {}",
            one.line, one.replaced_lines, one.new_lines
        ),
        many => format!(
            "Edited {shown}: {} replacements, at lines {}",
            many.len(),
            many.iter()
                .map(|applied| applied.line.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    });
    // The change as the chat shows it, redacted as the model's view is: it holds the file's lines.
    outcome.details = diff::details(
        &context.workspace.redact(&text),
        &context.workspace.redact(&updated),
    );
    Ok(outcome)
}

/// The refusal of a `write` or `edit` (`verb`) of a file holding a key the model is never shown.
/// An edit answers "found" or "not found" for its `oldText`, so edits of such a file would spell
/// the key out a guess at a time (a tester's model did so from `.env`); a write over it would
/// lose the key, which the model only ever saw as `<redacted>`.
fn holds_a_key(verb: &str, shown: &str) -> String {
    format!(
        "`{shown}` holds a key ctxkit keeps from the model (`read` shows it as `<redacted>`); \
         `{verb}` does not change such a file: ask the user to make this change; nothing was \
         changed"
    )
}

/// The error of a `write` or `edit` (`verb`) that failed: the file is as it was.
fn unwritten(verb: &str, shown: &str, error: &ctxkit_jail::JailError) -> String {
    // Said of a write: a FIFO, a socket or a device is never replaced.
    let reason = if matches!(error, ctxkit_jail::JailError::NotRegular { .. }) {
        "not a regular file (a FIFO, a socket or a device is never replaced)".to_owned()
    } else {
        jail_reason(error)
    };
    format!("Cannot {verb} `{shown}`: {reason}; the file was left unchanged")
}

/// The arguments of `ls`.
#[derive(Debug, Deserialize)]
pub struct LsArguments {
    #[serde(default)]
    pub(super) path: Option<String>,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    limit: Option<u64>,
}

/// `ls {path?, limit?}`: entries sorted by name, directories with a trailing `/`.
pub fn ls(
    arguments: LsArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_deref().unwrap_or(".");
    let limit = arguments.limit.unwrap_or(LS_LIMIT);
    // At least one, as `find` and `grep` take it: `limit: 0` listed nothing (QA 2026-12-07).
    let limit = usize::try_from(limit).unwrap_or(usize::MAX).max(1);
    let target = context.target("ls", shown, Access::Read)?;
    let entries = target
        .jail
        .read_dir(&target.path)
        .map_err(|error| format!("Cannot list `{shown}`: {}", jail_reason(&error)))?;
    let mut names: Vec<String> = entries
        .into_iter()
        .map(|entry| {
            let mut name = crate::names::shown(&entry.name);
            if entry.is_dir {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort_by_key(|name| name.to_lowercase());
    if names.is_empty() {
        return Ok(ToolOutcome::ok("(empty directory)"));
    }
    let total = names.len();
    names.truncate(limit);
    let mut text = names.join("\n");
    if total > names.len() {
        text.push_str(&format!(
            "\n\n[{} of {total} entries shown. Use limit={total} for more.]",
            names.len()
        ));
    }
    Ok(bounded_outcome(&text, Keep::Head, call_id, context, false))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_support::context;
    use super::super::{limit, run_tool};

    /// QA r99: each `read` of a large log saved a copy of it in ctxkit's home (25 reads, 400 MiB).
    /// A cut read says where to go on in the file, as Pi's does, and saves nothing; a line over
    /// the limit says so.
    #[test]
    fn a_cut_read_points_into_the_file_and_saves_no_copy() {
        let dir = tempfile::tempdir().unwrap();
        let log: String = (1..=5_000)
            .map(|n| format!("line {n} {}\n", "x".repeat(60)))
            .collect();
        std::fs::write(dir.path().join("app.log"), log).unwrap();
        std::fs::write(dir.path().join("one.json"), "y".repeat(200_000)).unwrap();
        let context = super::super::test_support::context(dir.path());
        let outcome = run_tool("read", &json!({"path": "app.log"}), "call_1", &context);
        assert!(!outcome.is_error, "{}", outcome.text);
        assert!(outcome.details.is_none(), "{:?}", outcome.details);
        let notice = outcome.text.rsplit("\n\n").next().unwrap();
        assert!(notice.starts_with("[Showing lines 1-"), "{notice}");
        assert!(notice.contains(" of 5000. Use offset="), "{notice}");
        assert!(!context.output_dir.exists(), "a copy was saved");
        let wide = run_tool("read", &json!({"path": "one.json"}), "call_2", &context);
        assert!(
            wide.text.contains("[Line 1 is longer than the 50 KB limit"),
            "{}",
            wide.text
        );
        assert!(!context.output_dir.exists(), "a copy was saved");
    }

    /// QA 2026-12-07: a UTF-16 file (PowerShell's `>` writes them) was "a binary file" to
    /// `read` and "not UTF-8 text" to `edit`. Now it reads as text and an edit keeps its
    /// encoding; a write over it says it turned the file into UTF-8.
    #[test]
    fn a_utf16_file_is_read_and_edited_as_text_in_its_own_encoding() {
        use super::super::utf16::Utf16;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        let context = super::super::test_support::context(dir.path());
        for order in [Utf16::Little, Utf16::Big] {
            std::fs::write(&path, order.encode("Status: ok\r\nCount: 3\r\n")).unwrap();
            let read = run_tool("read", &json!({"path": "out.txt"}), "r", &context);
            assert!(!read.is_error, "{}", read.text);
            assert!(read.text.contains("Status: ok\nCount: 3"), "{}", read.text);
            let edit = json!({"path": "out.txt", "oldText": "Count: 3", "newText": "Count: 4"});
            let edited = run_tool("edit", &edit, "e", &context);
            assert!(!edited.is_error, "{}", edited.text);
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes, order.encode("Status: ok\r\nCount: 4\r\n"));
            let diff = edited.details.as_ref().unwrap()["diff"].as_str().unwrap();
            assert!(diff.contains("+2 Count: 4"), "{diff}");
        }
        let written = run_tool(
            "write",
            &json!({"path": "out.txt", "content": "new\n"}),
            "w",
            &context,
        );
        assert!(
            written
                .text
                .ends_with("(it was UTF-16 BE; it is UTF-8 now)"),
            "{}",
            written.text
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
        let mut broken = Utf16::Little.encode("a");
        broken.extend_from_slice(&[0x00, 0xD8]);
        std::fs::write(&path, broken).unwrap();
        let read = run_tool("read", &json!({"path": "out.txt"}), "r", &context);
        assert!(
            read.is_error && read.text.contains("is not valid UTF-16 LE"),
            "{}",
            read.text
        );
    }

    #[test]
    fn a_write_through_a_file_says_which_is_not_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("main.rs"), "fn main() {}").unwrap();
        let context = super::super::test_support::context(dir.path());
        let error = super::write(
            serde_json::from_value(serde_json::json!({"path": "main.rs/x.txt", "content": "no"}))
                .unwrap(),
            &context,
        )
        .unwrap_err();
        assert_eq!(
            error,
            "Cannot write `main.rs/x.txt`: `main.rs` is a file, not a folder"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("main.rs")).unwrap(),
            "fn main() {}"
        );
    }

    #[test]
    fn read_shows_lines_from_an_offset_and_says_how_to_go_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\nfour\n").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("read", &json!({"path": "a.txt"}), "c", &context);
        assert_eq!(outcome.text, "one\ntwo\nthree\nfour");
        let outcome = run_tool(
            "read",
            &json!({"path": "a.txt", "offset": 2, "limit": 2}),
            "c",
            &context,
        );
        assert_eq!(
            outcome.text,
            "two\nthree\n\n[Showing lines 2-3 of 4. Use offset=4 to continue.]"
        );
        let outcome = run_tool(
            "read",
            &json!({"path": "a.txt", "offset": 9}),
            "c",
            &context,
        );
        assert!(outcome.is_error && outcome.text.contains("past the end"));
        let outcome = run_tool("read", &json!({"path": "missing.txt"}), "c", &context);
        assert!(outcome.is_error && outcome.text.starts_with("Cannot read `missing.txt`"));
        std::fs::write(dir.path().join("b.bin"), [0u8, 1, 2]).unwrap();
        let outcome = run_tool("read", &json!({"path": "b.bin"}), "c", &context);
        assert!(outcome.is_error && outcome.text.contains("binary"));
    }

    #[test]
    fn read_of_a_long_file_is_cut_where_offset_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=3000).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("long.txt"), &text).unwrap();
        let context = context(dir.path());
        let outcome = run_tool("read", &json!({"path": "long.txt"}), "call_r", &context);
        assert_eq!(
            outcome
                .text
                .lines()
                .take_while(|l| l.starts_with("line"))
                .count(),
            limit::MAX_LINES
        );
        assert!(
            outcome
                .text
                .ends_with("[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]"),
            "{}",
            outcome.text
        );
        assert!(!dir.path().join(".outputs").exists());
    }

    #[test]
    fn write_creates_directories_and_edit_needs_a_unique_match() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let outcome = run_tool(
            "write",
            &json!({"path": "src/lib.rs", "content": "fn a() {}\nfn b() {}\nfn b() {}\n"}),
            "c",
            &context,
        );
        assert_eq!(outcome.text, "Wrote 30 bytes to src/lib.rs");
        let file = dir.path().join("src/lib.rs");
        let edit = |old: &str, new: &str| {
            run_tool(
                "edit",
                &json!({"path": "src/lib.rs", "oldText": old, "newText": new}),
                "c",
                &context,
            )
        };
        let outcome = edit("fn b() {}", "fn c() {}");
        assert!(
            outcome.is_error && outcome.text.contains("occurs 2 times"),
            "{}",
            outcome.text
        );
        let outcome = edit("fn z() {}", "x");
        assert!(outcome.is_error && outcome.text.contains("was not found"));
        let outcome = edit("fn a() {}", "fn a() {}");
        assert!(outcome.is_error && outcome.text.contains("nothing was changed"));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "fn a() {}\nfn b() {}\nfn b() {}\n",
            "failed edits change nothing"
        );
        let outcome = edit("fn a() {}\nfn b() {}", "fn a() { 1 }");
        assert!(!outcome.is_error, "{}", outcome.text);
        assert!(outcome.text.contains("line 1"));
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "fn a() { 1 }\nfn b() {}\n"
        );
    }

    #[test]
    fn lines_read_from_a_crlf_file_can_be_edited_and_keep_its_endings() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("main.c");
        std::fs::write(&file, "int main() {\r\n  return 1;\r\n}\r\n").unwrap();
        let context = context(dir.path());
        let read = run_tool("read", &json!({"path": "main.c"}), "r", &context);
        assert_eq!(read.text, "int main() {\n  return 1;\n}");
        let outcome = run_tool(
            "edit",
            &json!({"path": "main.c", "oldText": "  return 1;\n}", "newText": "  puts(\"hi\");\n  return 0;\n}"}),
            "e",
            &context,
        );
        assert!(!outcome.is_error, "{}", outcome.text);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "int main() {\r\n  puts(\"hi\");\r\n  return 0;\r\n}\r\n"
        );
    }

    #[test]
    fn pi_edits_are_made_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("list.txt");
        std::fs::write(&file, "a\nb\nc\n").unwrap();
        let context = context(dir.path());
        let edit = |arguments: serde_json::Value| run_tool("edit", &arguments, "e", &context);
        let outcome = edit(json!({"path": "list.txt", "edits": [
            {"oldText": "a", "newText": "A"}, {"oldText": "q", "newText": "Q"}]}));
        assert!(outcome.is_error, "{}", outcome.text);
        assert!(
            outcome
                .text
                .starts_with("edits[1]: `oldText` was not found"),
            "{}",
            outcome.text
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\nc\n");
        let outcome = edit(json!({"path": "list.txt", "oldText": "a"}));
        assert!(outcome.text.contains("give both"), "{}", outcome.text);
        let outcome = edit(json!({"path": "list.txt", "edits": [
            {"oldText": "a", "newText": "A"}, {"oldText": "c", "newText": "C"}]}));
        assert_eq!(
            outcome.text,
            "Edited list.txt: 2 replacements, at lines 1, 3"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "A\nb\nC\n");
    }

    #[test]
    fn a_write_stores_what_it_changed() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let write = |content: &str| {
            let arguments = json!({"path": "notes.txt", "content": content});
            run_tool("write", &arguments, "w", &context).details
        };
        assert_eq!(write("a\nb\n").unwrap()["diff"], "+1 a\n+2 b");
        assert_eq!(write("a\nc\n").unwrap()["diff"], " 1 a\n-2 b\n+2 c");
        assert_eq!(write("a\nc\n"), None, "nothing changed");
        std::fs::write(dir.path().join("notes.txt"), [0xfe, 0xfe, 0xff]).unwrap();
        assert_eq!(
            write("text\n"),
            None,
            "a file that was not text has no diff"
        );
    }

    #[test]
    fn an_edit_stores_its_diff_with_credentials_redacted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("request.http"),
            "HOST=localhost\nAuthorization: Bearer c2VjcmV0LXRva2VuLXZhbHVlLTEyMzQ1\nPORT=1\n",
        )
        .unwrap();
        let context = context(dir.path());
        let outcome = run_tool(
            "edit",
            &json!({"path": "request.http", "edits": [{"oldText": "PORT=1", "newText": "PORT=2"}]}),
            "e",
            &context,
        );
        assert!(!outcome.is_error, "{}", outcome.text);
        let details = outcome.details.unwrap();
        assert_eq!(details["firstChangedLine"], 3);
        assert_eq!(
            details["diff"],
            " 1 HOST=localhost\n 2 Authorization: Bearer <redacted>\n-3 PORT=1\n+3 PORT=2"
        );
    }

    /// A tester's attack: no-op edits of `.env` whose `oldText` held `KEY=` and a guessed first
    /// character answered "`newText` is the text it would replace" or "was not found", one bit
    /// of the configured key per call. An edit or a write of a file holding a known key is
    /// refused, whatever its text, and the file stays as it was.
    #[test]
    fn a_file_holding_a_known_key_is_neither_edited_nor_written() {
        let dir = tempfile::tempdir().unwrap();
        let original = "HOST=localhost\nKEY=sk-test-diffsecret-123\nPORT=1\n";
        std::fs::write(dir.path().join(".env"), original).unwrap();
        let mut context = context(dir.path());
        let mut workspace = crate::workspace::Workspace::new(dir.path());
        workspace.add_secret("sk-test-diffsecret-123");
        context.workspace = std::sync::Arc::new(workspace);
        let calls = [
            (
                "edit",
                json!({"path": ".env", "edits": [{"oldText": "KEY=s", "newText": "KEY=s"}]}),
            ),
            (
                "edit",
                json!({"path": ".env", "edits": [{"oldText": "KEY=x", "newText": "KEY=x"}]}),
            ),
            (
                "edit",
                json!({"path": ".env", "edits": [{"oldText": "PORT=1", "newText": "PORT=2"}]}),
            ),
            (
                "write",
                json!({"path": ".env", "content": "KEY=<redacted>\n"}),
            ),
        ];
        let answers: Vec<String> = calls
            .iter()
            .map(|(tool, arguments)| {
                let outcome = run_tool(tool, arguments, "e", &context);
                assert!(outcome.is_error, "{tool}: {}", outcome.text);
                outcome.text
            })
            .collect();
        assert_eq!(
            answers[0], answers[1],
            "a right and a wrong guess answer alike"
        );
        assert!(
            answers[2].contains("holds a key ctxkit keeps from the model"),
            "{}",
            answers[2]
        );
        assert!(
            answers[3].contains("`write` does not change such a file"),
            "{}",
            answers[3]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".env")).unwrap(),
            original
        );
    }

    #[test]
    fn edits_written_loosely_are_taken_as_pi_takes_them() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        let context = context(dir.path());
        let cases = [
            // One replacement not in a list, and either form as a JSON string.
            (
                json!({"edits": {"oldText": "a", "newText": "A"}}),
                "A\nb\nc\n",
            ),
            (
                json!({"edits": "[{\"oldText\": \"b\", \"newText\": \"B\"}]"}),
                "a\nB\nc\n",
            ),
            (
                json!({"edits": "{\"oldText\": \"c\", \"newText\": \"C\"}"}),
                "a\nb\nC\n",
            ),
            // The older pair after the list, and `null` for no list.
            (
                json!({"edits": [{"oldText": "a", "newText": "1"}], "oldText": "c", "newText": "3"}),
                "1\nb\n3\n",
            ),
            (
                json!({"edits": null, "oldText": "b", "newText": "2"}),
                "a\n2\nc\n",
            ),
        ];
        for (mut arguments, expected) in cases {
            std::fs::write(&file, "a\nb\nc\n").unwrap();
            arguments["path"] = json!("f.txt");
            let outcome = run_tool("edit", &arguments, "e", &context);
            assert!(!outcome.is_error, "{arguments}: {}", outcome.text);
            assert_eq!(
                std::fs::read_to_string(&file).unwrap(),
                expected,
                "{arguments}"
            );
        }
        std::fs::write(&file, "a\nb\nc\n").unwrap();
        for (arguments, message) in [
            (
                json!({"path": "f.txt", "edits": "not json"}),
                "must be a list",
            ),
            (
                json!({"path": "f.txt", "edits": [{"oldText": "a"}]}),
                "must be a list",
            ),
            (json!({"path": "f.txt", "edits": []}), "needs `edits`"),
            (
                json!({"path": "f.txt", "edits": [{"oldText": "a\nb", "newText": "x"},
                    {"oldText": "b\nc", "newText": "y"}]}),
                "edits[0] and edits[1] overlap in `f.txt`",
            ),
        ] {
            let outcome = run_tool("edit", &arguments, "e", &context);
            assert!(outcome.is_error, "{arguments}");
            assert!(
                outcome.text.contains(message),
                "{arguments}: {}",
                outcome.text
            );
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a\nb\nc\n");
    }

    #[test]
    fn ls_lists_sorted_entries_with_directories_marked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("B.md"), "").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        std::fs::write(dir.path().join("a.rs"), "").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("ls", &json!({}), "c", &context);
        assert_eq!(outcome.text, ".hidden\na.rs\nB.md\nsrc/");
        let outcome = run_tool("ls", &json!({"limit": 2}), "c", &context);
        assert!(
            outcome
                .text
                .starts_with(".hidden\na.rs\n\n[2 of 4 entries shown")
        );
        let outcome = run_tool("ls", &json!({"path": "src"}), "c", &context);
        assert_eq!(outcome.text, "(empty directory)");
    }

    /// QA (third round): a name holding a newline was listed as two entries (one that does not
    /// exist), and a name that is not UTF-8 came out lossy (`caf\u{fffd}`), a name no tool could
    /// open. Both are listed quoted as `$'…'`, and that form opens the file.
    #[test]
    fn ls_quotes_odd_names_and_the_file_tools_take_them_back() {
        use std::os::unix::ffi::OsStrExt as _;
        let dir = tempfile::tempdir().unwrap();
        let invalid = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        std::fs::write(dir.path().join("two\nlines.txt"), "newline file").unwrap();
        std::fs::write(dir.path().join(invalid), "latin-1 file").unwrap();
        std::fs::create_dir(dir.path().join("odd\tdir")).unwrap();
        std::fs::write(dir.path().join("odd\tdir/inner.rs"), "inner file").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("ls", &json!({}), "c", &context);
        assert_eq!(
            outcome.text,
            "$'caf\\xe9.txt'\n$'odd\\tdir'/\n$'two\\nlines.txt'"
        );
        for (path, text) in [
            ("$'two\\nlines.txt'", "newline file"),
            ("$'caf\\xe9.txt'", "latin-1 file"),
            ("$'odd\\tdir'/inner.rs", "inner file"),
        ] {
            let outcome = run_tool("read", &json!({"path": path}), "c", &context);
            assert!(!outcome.is_error, "{path}: {}", outcome.text);
            assert!(outcome.text.contains(text), "{path}: {}", outcome.text);
        }
        let outcome = run_tool(
            "edit",
            &json!({"path": "$'caf\\xe9.txt'", "oldText": "latin-1", "newText": "edited"}),
            "c",
            &context,
        );
        assert!(!outcome.is_error, "{}", outcome.text);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(invalid)).unwrap(),
            "edited file"
        );
    }
}

/// The attacks of issue 33 on the file tools: escapes from the project, ctxkit's own files,
/// special files, and writes that fail half-way.
#[cfg(test)]
mod boundary_tests {
    use std::os::unix::fs::symlink;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use serde_json::json;

    use super::super::run_tool;
    use super::super::test_support::context;
    use crate::tool::ToolContext;
    use crate::workspace::{Access, Workspace};

    /// A project and, beside it, an outside folder and a ctxkit home holding a key.
    struct Scene {
        _dir: tempfile::TempDir,
        base: PathBuf,
        project: PathBuf,
        home: PathBuf,
    }

    const KEY: &str = "sk-test-home-key-0123456789";

    fn scene() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("project");
        let home = base.join("home/.ctxkit");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("settings.json"),
            format!(r#"{{"llm": {{"apiKey": "{KEY}"}}}}"#),
        )
        .unwrap();
        Scene {
            _dir: dir,
            base,
            project,
            home,
        }
    }

    fn tools(scene: &Scene, approved: &[Access]) -> ToolContext {
        let mut context = context(&scene.project);
        let mut workspace = Workspace::new(&scene.project);
        workspace.set_home(&scene.home);
        context.workspace = Arc::new(workspace);
        context.approved = crate::tool::Approved::everywhere(approved);
        context
    }

    fn write(context: &ToolContext, path: &str) -> crate::ToolOutcome {
        run_tool(
            "write",
            &json!({"path": path, "content": "pwned"}),
            "c",
            context,
        )
    }

    #[test]
    fn writes_outside_the_project_are_refused_unless_approved() {
        let scene = scene();
        symlink(scene.base.join("outside"), scene.project.join("linked")).unwrap();
        let absolute = scene.base.join("outside/abs.txt").display().to_string();
        let context = tools(&scene, &[]);
        for path in [absolute.as_str(), "../outside/up.txt", "linked/through.txt"] {
            let outcome = write(&context, path);
            assert!(
                outcome.is_error && outcome.text.contains("outside the project"),
                "{path}: {}",
                outcome.text
            );
        }
        let made: Vec<_> = std::fs::read_dir(scene.base.join("outside"))
            .unwrap()
            .collect();
        assert!(made.is_empty(), "nothing was written outside");
        let approved = tools(&scene, &[Access::Write]);
        let outcome = write(&approved, "../outside/up.txt");
        assert!(!outcome.is_error, "{}", outcome.text);
        assert!(scene.base.join("outside/up.txt").exists());
    }

    #[test]
    fn ctxkit_home_is_never_read_or_written_even_when_approved() {
        let scene = scene();
        let settings = scene.home.join("settings.json");
        symlink(&settings, scene.project.join("setup.md")).unwrap();
        let context = tools(&scene, &[Access::Read, Access::Write]);
        let direct = settings.display().to_string();
        for path in [direct.as_str(), "setup.md"] {
            let outcome = run_tool("read", &json!({"path": path}), "c", &context);
            assert!(
                outcome.is_error && outcome.text.contains("never readable"),
                "{path}: {}",
                outcome.text
            );
            assert!(!outcome.text.contains(KEY));
            let outcome = write(&context, path);
            assert!(
                outcome.is_error && outcome.text.contains("never writable"),
                "{path}: {}",
                outcome.text
            );
        }
        let outcome = run_tool(
            "grep",
            &json!({"pattern": "apiKey", "path": scene.home.display().to_string()}),
            "c",
            &context,
        );
        assert!(outcome.is_error && !outcome.text.contains(KEY));
        let outcome = run_tool(
            "ls",
            &json!({"path": scene.home.display().to_string()}),
            "c",
            &context,
        );
        assert!(outcome.is_error && !outcome.text.contains("settings.json"));
        // A project-wide search does not follow the committed link into the home.
        let outcome = run_tool("grep", &json!({"pattern": "apiKey"}), "c", &context);
        assert_eq!(outcome.text, "No matches found");
        assert!(
            std::fs::read_to_string(&settings).unwrap().contains(KEY),
            "the settings are untouched"
        );
    }

    #[test]
    fn writing_through_a_symlink_keeps_the_link() {
        let scene = scene();
        std::fs::write(scene.project.join("real.rs"), "old").unwrap();
        symlink("real.rs", scene.project.join("alias.rs")).unwrap();
        let context = tools(&scene, &[]);
        let outcome = write(&context, "alias.rs");
        assert!(!outcome.is_error, "{}", outcome.text);
        let link = scene.project.join("alias.rs");
        assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.rs"));
        assert_eq!(
            std::fs::read_to_string(scene.project.join("real.rs")).unwrap(),
            "pwned"
        );
    }

    #[test]
    fn special_files_are_refused_at_once() {
        let scene = scene();
        let fifo = scene.project.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let context = tools(&scene, &[Access::Read]);
        let (sender, receiver) = std::sync::mpsc::channel();
        let fifo_context = context.clone();
        std::thread::spawn(move || {
            let outcome = run_tool("read", &json!({"path": "pipe"}), "c", &fifo_context);
            let _ = sender.send(outcome);
        });
        let outcome = receiver
            .recv_timeout(Duration::from_secs(5))
            .expect("reading a FIFO must not wait for a writer");
        assert!(
            outcome.is_error && outcome.text.contains("not a regular file"),
            "{}",
            outcome.text
        );
        for path in ["/dev/zero", "/dev/urandom"] {
            let started = Instant::now();
            let outcome = run_tool("read", &json!({"path": path}), "c", &context);
            assert!(
                outcome.is_error && outcome.text.contains("not a regular file"),
                "{path}: {}",
                outcome.text
            );
            // A read of the device would never end; refused within 30 s (a loaded machine's
            // margin) is the refusal before any read.
            assert!(started.elapsed() < Duration::from_secs(30));
        }
        // Without approval, `/dev/zero` is not even looked at: it is outside the project.
        let outcome = run_tool(
            "read",
            &json!({"path": "/dev/zero"}),
            "c",
            &tools(&scene, &[]),
        );
        assert!(outcome.is_error && outcome.text.contains("outside the project"));
    }

    /// A security tester's writes: `write events.pipe` replaced the FIFO by a regular file (a
    /// folder was refused), `write notes.txt/` overwrote `notes.txt` and `read notes.txt/.` read
    /// it, where the shell says "Is a directory" and "Not a directory".
    #[test]
    fn a_fifo_and_a_trailing_slash_are_refused_as_the_shell_refuses_them() {
        use std::os::unix::fs::FileTypeExt as _;
        let scene = scene();
        let fifo = scene.project.join("events.pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        std::fs::write(scene.project.join("notes.txt"), "original").unwrap();
        std::fs::create_dir(scene.project.join("src")).unwrap();
        let context = tools(&scene, &[]);
        let outcome = write(&context, "events.pipe");
        assert!(
            outcome.is_error && outcome.text.contains("is never replaced"),
            "{}",
            outcome.text
        );
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO is still one");
        for path in ["notes.txt/", "notes.txt/.", "new/"] {
            let outcome = write(&context, path);
            assert!(
                outcome.is_error && outcome.text.contains("names a directory"),
                "{path}: {}",
                outcome.text
            );
        }
        assert_eq!(
            std::fs::read_to_string(scene.project.join("notes.txt")).unwrap(),
            "original"
        );
        assert!(!scene.project.join("new").exists());
        for path in ["notes.txt/", "notes.txt/."] {
            let outcome = run_tool("read", &json!({"path": path}), "c", &context);
            assert!(
                outcome.is_error && outcome.text.contains("not a directory"),
                "{path}: {}",
                outcome.text
            );
        }
        let outcome = run_tool("ls", &json!({"path": "src/"}), "c", &context);
        assert!(!outcome.is_error, "{}", outcome.text);
    }

    #[test]
    fn reads_are_bounded_by_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        std::fs::write(&path, "line\n".repeat(100)).unwrap();
        let target = |path: &Path| crate::tool::Target {
            path: path.to_owned(),
            jail: ctxkit_jail::Jail::open_bare(dir.path()).unwrap(),
        };
        let (bytes, size) = super::read_bounded(&target(&path), 12).unwrap();
        assert_eq!((bytes.len(), size), (12, 500));
        // A 1 GiB sparse file: only the bounded head is read, and at once.
        let sparse = dir.path().join("sparse.txt");
        let file = std::fs::File::create(&sparse).unwrap();
        file.set_len(1 << 30).unwrap();
        let started = Instant::now();
        let (bytes, size) = super::read_bounded(&target(&sparse), super::MAX_READ_BYTES).unwrap();
        assert_eq!(bytes.len() as u64, super::MAX_READ_BYTES);
        assert_eq!(size, 1 << 30);
        assert!(started.elapsed() < Duration::from_secs(5));
        // A long text file is read past 16 MiB, and its line count is its own.
        let long = dir.path().join("long.txt");
        let line = format!("{}\n", "x".repeat(1023));
        std::fs::write(&long, line.repeat(17 * 1024)).unwrap();
        let outcome = run_tool(
            "read",
            &json!({"path": "long.txt", "offset": 17000}),
            "c",
            &context(dir.path()),
        );
        assert!(
            outcome
                .text
                .ends_with("[Showing lines 17000-17049 of 17408. Use offset=17050 to continue.]"),
            "{}",
            &outcome.text[outcome.text.len().saturating_sub(300)..]
        );
    }

    /// Set by the parent test when it runs this binary again as a user who may not write.
    const UNWRITABLE_CHILD: &str = "CTXKIT_TEST_UNWRITABLE_CHILD";

    /// QA (issue of the read-only files): as a user who may not write `0444` files, `write` and
    /// `edit` renamed their temporary file over them (the folder allowed it) where `echo x >` by the
    /// same user is refused. Run as root, the test runs itself again as the user `nobody`'s id
    /// (65534), for whom the files are truly read-only; run as any other user, as that user.
    #[test]
    fn a_file_this_user_cannot_write_is_left_whole() {
        if let Ok(dir) = std::env::var(UNWRITABLE_CHILD) {
            let context = context(Path::new(&dir));
            let wrote = run_tool(
                "write",
                &json!({"path": "ro.txt", "content": "overwritten!\n"}),
                "c",
                &context,
            );
            let edited = run_tool(
                "edit",
                &json!({"path": "ro2.txt", "oldText": "readonly", "newText": "EDITED"}),
                "c",
                &context,
            );
            let report = json!([[wrote.is_error, wrote.text], [edited.is_error, edited.text]]);
            std::fs::write(Path::new(&dir).with_extension("report"), report.to_string()).unwrap();
            return;
        }
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        use std::os::unix::process::CommandExt as _;
        let dir = tempfile::tempdir().unwrap();
        let original = "readonly content must survive\n";
        for name in ["ro.txt", "ro2.txt"] {
            let path = dir.path().join(name);
            std::fs::write(&path, original).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        }
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "tools::files::boundary_tests::a_file_this_user_cannot_write_is_left_whole",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(UNWRITABLE_CHILD, dir.path());
        // Files are made with the effective user id.
        if std::fs::metadata(dir.path().join("ro.txt")).unwrap().uid() == 0 {
            const NOBODY: u32 = 65_534;
            for name in ["", "ro.txt", "ro2.txt"] {
                std::os::unix::fs::chown(dir.path().join(name), Some(NOBODY), Some(NOBODY))
                    .unwrap();
            }
            child.uid(NOBODY).gid(NOBODY);
        }
        let output = child.output().unwrap();
        let report = std::fs::read_to_string(dir.path().with_extension("report"))
            .unwrap_or_else(|_| panic!("no report from the child: {output:?}"));
        let _ = std::fs::remove_file(dir.path().with_extension("report"));
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        for (outcome, verb) in report.as_array().unwrap().iter().zip(["write", "edit"]) {
            let text = outcome[1].as_str().unwrap();
            assert_eq!(outcome[0], true, "{text}");
            assert!(
                text.starts_with(&format!("Cannot {verb} `ro"))
                    && text.contains("is read-only: this user may not write it")
                    && text.ends_with("the file was left unchanged"),
                "{text}"
            );
        }
        for name in ["ro.txt", "ro2.txt"] {
            let path = dir.path().join(name);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), original, "{name}");
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o444, "{name}");
        }
        let mut names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["ro.txt", "ro2.txt"], "no temporary file is left");
    }

    /// Set by the parent test when it runs this binary again under a file-size limit.
    const FSIZE_CHILD: &str = "CTXKIT_TEST_FSIZE_CHILD";

    #[test]
    fn a_failed_edit_leaves_the_file_whole() {
        if let Ok(dir) = std::env::var(FSIZE_CHILD) {
            // The child: edit under the limit and report.
            let outcome = run_tool(
                "edit",
                &json!({"path": "main.rs", "oldText": "fn main() {", "newText": "fn main() { // edited"}),
                "c",
                &context(Path::new(&dir)),
            );
            let report = format!("{} {}", outcome.is_error, outcome.text);
            std::fs::write(Path::new(&dir).with_extension("report"), report).unwrap();
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut original = String::from("fn main() {\n");
        while original.len() < 82_000 {
            original.push_str("    let value = compute(1, 2, 3); // a line of the program\n");
        }
        original.push_str("}\n");
        let path = dir.path().join("main.rs");
        std::fs::write(&path, &original).unwrap();
        // What a full disk looks like to a writer: a 16 KiB (dash) or 32 KiB (bash) file-size
        // limit, with SIGXFSZ ignored so the write fails instead of killing the process.
        let output = std::process::Command::new("sh")
            .arg("-c")
            .arg("trap '' XFSZ; ulimit -f 32; exec \"$0\" \"$@\"")
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "tools::files::boundary_tests::a_failed_edit_leaves_the_file_whole",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(FSIZE_CHILD, dir.path())
            .output()
            .unwrap();
        let report = std::fs::read_to_string(dir.path().with_extension("report"))
            .unwrap_or_else(|_| panic!("no report from the child: {output:?}"));
        let _ = std::fs::remove_file(dir.path().with_extension("report"));
        assert!(report.starts_with("true "), "{report}");
        assert!(report.contains("left unchanged"), "{report}");
        let after = std::fs::read_to_string(&path).unwrap();
        assert_eq!(after.len(), original.len(), "the file keeps its size");
        assert!(after == original, "the file keeps its content");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temporary file is left");
    }
}

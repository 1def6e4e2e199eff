//! `read`, `write`, `edit` and `ls`.

use serde::Deserialize;

use super::limit::Keep;
use super::{ToolContext, ToolOutcome, bounded_outcome, lax, resolve};

/// The default number of entries `ls` shows.
const LS_LIMIT: u64 = 500;

/// The arguments of `read`.
#[derive(Debug, Deserialize)]
pub struct ReadArguments {
    path: String,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    limit: Option<u64>,
}

/// `read {path, offset?, limit?}`: the file's lines from `offset` (1-based), bounded from the head.
pub fn read(
    arguments: ReadArguments,
    context: &ToolContext,
    call_id: &str,
) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_str();
    let offset = arguments.offset.unwrap_or(1).max(1);
    let limit = arguments.limit;
    let path = resolve(context, shown);
    let bytes = std::fs::read(&path).map_err(|error| format!("Cannot read `{shown}`: {error}"))?;
    if bytes.iter().take(8192).any(|&byte| byte == 0) {
        return Err(format!(
            "`{shown}` is a binary file ({} bytes); only text files can be read",
            bytes.len()
        ));
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let first = usize::try_from(offset - 1).unwrap_or(usize::MAX);
    if first >= total && total > 0 {
        return Err(format!(
            "offset {offset} is past the end of `{shown}` ({total} lines)"
        ));
    }
    let count = limit.map_or(usize::MAX, |limit| {
        usize::try_from(limit).unwrap_or(usize::MAX)
    });
    let selected: Vec<&str> = lines.iter().skip(first).take(count).copied().collect();
    let last = first + selected.len();
    let mut outcome = bounded_outcome(&selected.join("\n"), Keep::Head, call_id, context, false);
    if outcome.details.is_none() && last < total {
        outcome.text.push_str(&format!(
            "\n\n[Showing lines {}-{last} of {total}. Use offset={} to continue.]",
            first + 1,
            last + 1
        ));
    }
    if text.is_empty() {
        outcome.text = "(empty file)".to_owned();
    }
    Ok(outcome)
}

/// The arguments of `write`.
#[derive(Debug, Deserialize)]
pub struct WriteArguments {
    path: String,
    content: String,
}

/// `write {path, content}`: creates parent directories, replaces the file.
pub fn write(arguments: WriteArguments, context: &ToolContext) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_str();
    let content = arguments.content.as_str();
    let path = resolve(context, shown);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("Cannot create the directory of `{shown}`: {error}"))?;
    }
    std::fs::write(&path, content).map_err(|error| format!("Cannot write `{shown}`: {error}"))?;
    Ok(ToolOutcome::ok(format!(
        "Wrote {} bytes to {shown}",
        content.len()
    )))
}

/// The arguments of `edit`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditArguments {
    path: String,
    old_text: String,
    new_text: String,
}

/// `edit {path, oldText, newText}`: replaces the one exact occurrence of `oldText`.
pub fn edit(arguments: EditArguments, context: &ToolContext) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_str();
    let old = arguments.old_text.as_str();
    let new = arguments.new_text.as_str();
    if old.is_empty() {
        return Err("`oldText` must not be empty".to_owned());
    }
    let path = resolve(context, shown);
    let text = std::fs::read_to_string(&path)
        .map_err(|error| format!("Cannot read `{shown}`: {error}"))?;
    let count = text.matches(old).count();
    match count {
        0 => {
            return Err(format!(
                "`oldText` was not found in `{shown}`; it must match exactly, whitespace and \
                 indentation included (read the file first)"
            ));
        }
        1 => {}
        many => {
            return Err(format!(
                "`oldText` occurs {many} times in `{shown}`; include more surrounding lines so it \
                 matches exactly once"
            ));
        }
    }
    let updated = text.replacen(old, new, 1);
    std::fs::write(&path, &updated).map_err(|error| format!("Cannot write `{shown}`: {error}"))?;
    let line = text
        .find(old)
        .map_or(1, |at| text[..at].matches('\n').count() + 1);
    Ok(ToolOutcome::ok(format!(
        "Edited {shown} at line {line}: replaced {} line(s) with {}",
        old.lines().count().max(1),
        new.lines().count()
    )))
}

/// The arguments of `ls`.
#[derive(Debug, Deserialize)]
pub struct LsArguments {
    #[serde(default)]
    path: Option<String>,
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
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    let path = resolve(context, shown);
    let reader =
        std::fs::read_dir(&path).map_err(|error| format!("Cannot list `{shown}`: {error}"))?;
    let mut names: Vec<String> = reader
        .filter_map(Result::ok)
        .map(|entry| {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() {
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
    fn read_of_a_long_file_is_cut_and_the_full_text_saved() {
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
                .contains("showing the first 2000 of 3000 lines"),
            "{}",
            outcome.text
        );
        let saved = dir.path().join(".outputs/call_r.txt");
        assert!(
            std::fs::read_to_string(saved)
                .unwrap()
                .contains("line 3000")
        );
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
}

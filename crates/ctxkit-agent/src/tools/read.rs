//! `read` of a text file or an image. A text file is read as a stream (`lines`): any line of a
//! file of any size can be read, with bounded memory, and the line count said is the file's own
//! (QA r105: past the first 16 MiB, a 1,000,000-line file was said to have 166,112 lines).

use std::io::Read as _;

use serde::Deserialize;

use super::files::{MAX_READ_BYTES, jail_reason};
use super::limit::{Keep, MAX_LINES, READ_NOTICE_STARTS};
use super::lines::{LineRead, LineReader};
use super::utf16::Utf16;
use super::{ToolContext, ToolOutcome, lax};
use crate::workspace::Access;

/// The bytes looked at to tell an image or a binary file.
const HEAD_BYTES: u64 = 8192;

/// The arguments of `read`.
#[derive(Debug, Deserialize)]
pub struct ReadArguments {
    pub(super) path: String,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "lax::optional_u64")]
    limit: Option<u64>,
}

/// `read {path, offset?, limit?}`: the file's lines from `offset` (1-based), bounded from the head.
pub fn read(arguments: ReadArguments, context: &ToolContext) -> Result<ToolOutcome, String> {
    let shown = arguments.path.as_str();
    // No line asked for: an empty result read as an empty file (QA 2026-12-07).
    if arguments.limit == Some(0) {
        return Err("`limit` must be at least 1; leave it out to read to the end".to_owned());
    }
    let target = context.target("read", shown, Access::Read)?;
    let cannot = |reason: String| {
        format!(
            "Cannot read {}: {reason}",
            crate::names::quoted_argument(shown)
        )
    };
    let mut opened = target
        .jail
        .open_file(&target.path)
        .map_err(|error| cannot(jail_reason(&error)))?;
    let mut head = Vec::new();
    (&mut opened)
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .map_err(|error| cannot(error.to_string()))?;
    if let Some(kind) = ctxkit_images::sniff(&head) {
        return image(opened, head, kind, shown, context);
    }
    let page = Page {
        first: arguments.offset.unwrap_or(1).max(1) - 1,
        limit: arguments.limit.unwrap_or(u64::MAX),
    };
    if let Some(order) = Utf16::of(&head) {
        let text = utf16_text(opened, head, order, shown)?;
        let reader = LineReader::new(text.as_bytes()).stopping_on(&context.cancel);
        let lines = page
            .read(reader, context.max_output_bytes)
            .map_err(|error| cannot(error.to_string()))?;
        return lines.outcome(&page, shown, context);
    }
    if head.contains(&0) {
        return Err(format!(
            "`{shown}` is a binary file ({} bytes); only text files can be read",
            opened.size()
        ));
    }
    let reader = LineReader::new(std::io::Cursor::new(head).chain(opened))
        .stopping_on(&context.cancel)
        .ending_at_nul_in_long_lines();
    let lines = page
        .read(reader, context.max_output_bytes)
        .map_err(|error| cannot(error.to_string()))?;
    lines.outcome(&page, shown, context)
}

/// The text of the UTF-16 file whose first bytes `head` are, read whole (at most
/// [`MAX_READ_BYTES`]).
fn utf16_text(
    mut opened: ctxkit_jail::OpenedFile,
    mut head: Vec<u8>,
    order: Utf16,
    shown: &str,
) -> Result<String, String> {
    if read_rest(&mut opened, &mut head, shown)? > MAX_READ_BYTES {
        return Err(format!(
            "`{shown}` is a {} file over {} MiB; `read` takes such files up to {} MiB",
            order.name(),
            MAX_READ_BYTES / (1024 * 1024),
            MAX_READ_BYTES / (1024 * 1024)
        ));
    }
    order.decode(&head).ok_or_else(|| {
        format!(
            "`{shown}` starts as a {} file but is not valid {}; only text files can be read",
            order.name(),
            order.name()
        )
    })
}

/// The rest of `opened` after its first bytes `head`, appended to them, up to one byte past
/// [`MAX_READ_BYTES`] (so that a larger file shows as larger); how many bytes `head` holds then.
fn read_rest(
    opened: &mut ctxkit_jail::OpenedFile,
    head: &mut Vec<u8>,
    shown: &str,
) -> Result<u64, String> {
    let rest = (MAX_READ_BYTES + 1).saturating_sub(u64::try_from(head.len()).unwrap_or(u64::MAX));
    opened.take(rest).read_to_end(head).map_err(|error| {
        format!(
            "Cannot read {}: {error}",
            crate::names::quoted_argument(shown)
        )
    })?;
    Ok(u64::try_from(head.len()).unwrap_or(u64::MAX))
}

/// The image whose first bytes `head` are, read whole (at most [`MAX_READ_BYTES`]).
fn image(
    mut opened: ctxkit_jail::OpenedFile,
    mut head: Vec<u8>,
    kind: ctxkit_images::ImageKind,
    shown: &str,
    context: &ToolContext,
) -> Result<ToolOutcome, String> {
    let read = read_rest(&mut opened, &mut head, shown)?;
    if read > MAX_READ_BYTES {
        return Err(format!(
            "`{shown}` is an image of {} MiB; `read` takes images up to {} MiB",
            opened.size().max(read).div_ceil(1024 * 1024),
            MAX_READ_BYTES / (1024 * 1024)
        ));
    }
    Ok(super::read_image::image_outcome(&head, kind, context))
}

/// The lines asked for: from line `first + 1` (0-based `first`), at most `limit` of them.
struct Page {
    first: u64,
    limit: u64,
}

/// What a [`Page`] read: the lines selected (as many as can be shown), the file's line count,
/// whether the file has no bytes, whether a selected line was not UTF-8.
struct PageLines {
    selected: Vec<String>,
    total: u64,
    /// Whether `total` is the file's count, not a lower bound ([`COUNT_BUDGET_BYTES`]).
    counted_all: bool,
    lossy: bool,
    /// Whether the file turned binary (a NUL in a long line, a sparse file's hole): nothing after
    /// it was read.
    binary_tail: bool,
}

/// The most bytes after a page that are read to count the file's lines.
const COUNT_BUDGET_BYTES: u64 = 256 * 1024 * 1024;

impl Page {
    /// Reads the page from `reader`, then counts the lines after it. At most as many lines as
    /// can be shown within `max_output_bytes` are held, each at most a little over that.
    fn read<R: std::io::Read>(
        &self,
        mut reader: LineReader<R>,
        max_output_bytes: usize,
    ) -> std::io::Result<PageLines> {
        let skipped = reader.skip_lines(self.first)?;
        let keep = max_output_bytes.saturating_add(1024);
        let mut selected = Vec::new();
        let (mut taken, mut held, mut lossy) = (0_u64, 0_usize, false);
        let mut line = Vec::new();
        while taken < self.limit && selected.len() <= MAX_LINES && held <= keep {
            line.clear();
            let read = reader.next_line(&mut line, keep)?;
            if matches!(read, LineRead::End | LineRead::Binary) {
                break;
            }
            taken += 1;
            let text = match String::from_utf8(std::mem::take(&mut line)) {
                Ok(text) => text,
                Err(error) => {
                    // A line cut inside a character is not lossy for that.
                    lossy |= read == LineRead::Whole || error.utf8_error().error_len().is_some();
                    String::from_utf8_lossy(error.as_bytes()).into_owned()
                }
            };
            held = held.saturating_add(text.len() + 1);
            selected.push(text);
        }
        let (rest, counted_all) = reader.count_rest(COUNT_BUDGET_BYTES)?;
        Ok(PageLines {
            selected,
            total: skipped + taken + rest,
            counted_all,
            lossy,
            binary_tail: reader.ended_binary(),
        })
    }
}

impl PageLines {
    /// The answer to the model: the lines, where to go on, and what it should know of them.
    fn outcome(
        &self,
        page: &Page,
        shown: &str,
        context: &ToolContext,
    ) -> Result<ToolOutcome, String> {
        let total = self.total;
        if page.first >= total && self.binary_tail {
            return Err(format!(
                "offset {} is past where `{shown}` turns binary (after line {total}: a NUL byte in \
                 a long line, e.g. a sparse file's hole); nothing after it is read",
                page.first + 1
            ));
        }
        if page.first >= total && total > 0 {
            return Err(format!(
                "offset {} is past the end of `{shown}` ({total} lines)",
                page.first + 1
            ));
        }
        let selected: Vec<&str> = self.selected.iter().map(String::as_str).collect();
        let first = usize::try_from(page.first).unwrap_or(usize::MAX);
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        let mut outcome = lines_outcome(&selected, first, (total, self.counted_all), context);
        if total == 0 {
            outcome.text = "(empty file)".to_owned();
        }
        if self.binary_tail {
            outcome.text.push_str(&format!(
                "\n\n[`{shown}` turns binary after line {total} (a NUL byte in a line longer than \
                 what is shown, e.g. a sparse file's hole): nothing after it was read.]"
            ));
        }
        if self.lossy {
            outcome.text.push_str(&format!(
                "\n\n[`{shown}` is not UTF-8 text: bytes that are not UTF-8 are shown as `�`. \
                 `edit` does not change such a file; a `write` of this text would replace them.]"
            ));
        }
        Ok(outcome)
    }
}

/// The `selected` lines of a file (from line `first + 1` of `total`), redacted and within the
/// output's limits, and where to go on: as Pi's `read`, the file itself is the full output. A cut
/// saved a copy of the selection in ctxkit's home each time (16 MiB for a large log; QA r99: 25
/// reads left 400 MiB), though `offset` reads on from the file.
fn lines_outcome(
    selected: &[&str],
    first: usize,
    (total, counted_all): (usize, bool),
    context: &ToolContext,
) -> ToolOutcome {
    let of_total = if counted_all {
        format!("{total}")
    } else {
        format!("more than {total} (the rest was not counted)")
    };
    let text = context.workspace.redact(&selected.join("\n"));
    let bounded = super::limit::bound_within(&text, Keep::Head, context.max_output_bytes);
    let shown = bounded
        .cut
        .as_ref()
        .map_or(selected.len(), |cut| cut.shown_lines);
    let mut outcome = ToolOutcome::ok(bounded.text);
    let line_cut = bounded.cut.as_ref().is_some_and(|cut| {
        cut.shown_lines == 1
            && selected
                .first()
                .is_some_and(|line| line.len() > cut.shown_bytes)
    });
    let last = first + shown;
    let more = last < total || !counted_all;
    if line_cut {
        outcome.text.push_str(&format!(
            "\n\n{}{} is longer than the {} KB limit: its start is shown. Use `bash` (e.g. \
             `sed -n '{}p'` with `cut -c`) for the rest.{}]",
            READ_NOTICE_STARTS[1],
            first + 1,
            (context.max_output_bytes + 512) / 1024,
            first + 1,
            if more {
                format!(" Use offset={} for the lines after it.", last + 1)
            } else {
                String::new()
            }
        ));
    } else if more {
        outcome.text.push_str(&format!(
            "\n\n{}{}-{last} of {of_total}. Use offset={} to continue.]",
            READ_NOTICE_STARTS[0],
            first + 1,
            last + 1
        ));
    }
    outcome
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::run_tool;
    use super::super::test_support::context;

    /// QA (verifier): a text head and a 400 GB sparse hole after it (`truncate -s`), read from an
    /// offset, was read to its end (56 s); the read ends where the file turns binary and says so.
    #[test]
    fn a_hole_after_a_text_head_ends_the_read_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse.txt");
        let text: String = (1..=2000)
            .map(|number| format!("line {number}\n"))
            .collect();
        std::fs::write(&path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1 << 40)
            .unwrap();
        let context = context(dir.path());
        let started = std::time::Instant::now();
        let outcome = run_tool(
            "read",
            &json!({"path": "sparse.txt", "offset": 1999, "limit": 2}),
            "c",
            &context,
        );
        assert!(
            outcome.text.starts_with("line 1999\nline 2000"),
            "{}",
            outcome.text
        );
        assert!(
            outcome.text.contains("turns binary after line 2000"),
            "{}",
            outcome.text
        );
        let past = run_tool(
            "read",
            &json!({"path": "sparse.txt", "offset": 5000}),
            "c",
            &context,
        );
        assert!(
            past.is_error && past.text.contains("turns binary"),
            "{}",
            past.text
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }

    /// QA 2026-12-07: `limit: 0` answered with nothing at all, read as an empty file.
    #[test]
    fn a_limit_of_no_line_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
        let outcome = run_tool(
            "read",
            &json!({"path": "a.txt", "limit": 0}),
            "c",
            &context(dir.path()),
        );
        assert!(outcome.is_error, "{}", outcome.text);
        assert!(
            outcome.text.contains("`limit` must be at least 1"),
            "{}",
            outcome.text
        );
    }

    /// QA r105: `read huge.txt offset=500000` of a 1,000,000-line, 101 MB file answered "offset
    /// 500000 is past the end of `huge.txt` (166112 lines)": only 16 MiB were read. Any line of a
    /// file of any size is read, and the count said is the file's.
    #[test]
    fn any_line_of_a_file_past_16_mib_is_read_and_the_count_is_true() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::new();
        for number in 1..=200_000 {
            text.push_str(&format!("row {number:07} {}\n", "y".repeat(88)));
        }
        assert!(text.len() > 17 * 1024 * 1024);
        std::fs::write(dir.path().join("huge.txt"), &text).unwrap();
        let context = context(dir.path());
        let outcome = run_tool(
            "read",
            &json!({"path": "huge.txt", "offset": 190_000, "limit": 2}),
            "c",
            &context,
        );
        let y = "y".repeat(88);
        assert_eq!(
            outcome.text,
            format!(
                "row 0190000 {y}\nrow 0190001 {y}\n\n[Showing lines 190000-190001 of 200000. Use \
                 offset=190002 to continue.]"
            )
        );
        let outcome = run_tool(
            "read",
            &json!({"path": "huge.txt", "offset": 200_001}),
            "c",
            &context,
        );
        assert!(outcome.is_error);
        assert_eq!(
            outcome.text,
            "offset 200001 is past the end of `huge.txt` (200000 lines)"
        );
    }

    /// QA r105: a Latin-1 file was shown with replacement characters and nothing said.
    #[test]
    fn a_file_that_is_not_utf8_is_shown_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("latin1.py"), b"name = \"caf\xe9\"\n").unwrap();
        std::fs::write(dir.path().join("utf8.py"), "name = \"café\"\n").unwrap();
        let context = context(dir.path());
        let outcome = run_tool("read", &json!({"path": "latin1.py"}), "c", &context);
        assert!(
            outcome
                .text
                .starts_with("name = \"caf\u{fffd}\"\n\n[`latin1.py` is not UTF-8 text"),
            "{}",
            outcome.text
        );
        let outcome = run_tool("read", &json!({"path": "utf8.py"}), "c", &context);
        assert_eq!(outcome.text, "name = \"café\"");
    }
}

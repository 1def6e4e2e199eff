//! The bodies of ctxkit's fuzz targets. Each takes arbitrary bytes, must never panic, and checks the
//! invariants its code promises (a panic here is a finding). libFuzzer runs them through
//! `fuzz_targets/*.rs` (`cargo +nightly fuzz run <target>`); `fuzz-driver` runs the same functions on
//! stable Rust over the committed corpus and mutations of it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use ctxkit_import::{
    ImportedSession, SourceFormat, confirm_format, convert, import_file, parse_source,
};
use ctxkit_packages::PackageSource;
use ctxkit_protocol::AgentMessage;
use ctxkit_resources::{parse_frontmatter, strip_frontmatter, substitute_args};
use ctxkit_session::{ContextForm, LeafSelector, Session, convert_to_llm, read_session_info};
use ctxkit_summarizer::{SummaryPurpose, SummaryRequest, SummarySpan};

mod highlight;
mod opencode;
mod page;
mod provider;
mod reach;
mod serve;
mod settings;
mod theme;
mod tools;
mod transforms;
mod tree;

pub use highlight::highlight_code;
pub use opencode::opencode_import;
pub use page::session_page;
pub use provider::provider_stream;
pub use reach::{remove_reach_folder, untrusted_resources};
pub use serve::serve_requests;
pub use settings::{remove_settings_folder, untrusted_settings};
pub use theme::theme_colors_target;
pub use tools::agent_tools;
pub use transforms::context_transforms;

/// A target: its name (the directory of its corpus) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: &[Target] = &[
    ("session_loader", session_loader),
    ("session_shapes", session_shapes),
    ("frontmatter", frontmatter),
    ("theme_colors", theme_colors_target),
    ("highlight_code", highlight_code),
    ("package_source", package_source),
    ("prompt_template", prompt_template),
    ("overflow_text", overflow_text),
    ("foreign_import", foreign_import),
    ("opencode_import", opencode_import),
    ("offline_summary", offline_summary),
    ("context_transforms", context_transforms),
    ("untrusted_settings", untrusted_settings),
    ("untrusted_resources", untrusted_resources),
    ("agent_tools", agent_tools),
    ("session_page", session_page),
    ("serve_requests", serve_requests),
    ("provider_stream", provider_stream),
];

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// This process's and thread's scratch file, removed when it is dropped (at the thread's end, or
/// by [`remove_scratch`]) so runs leave nothing in the temporary directory.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A path of this process and thread in the temporary directory:
/// `ctxkit-fuzz-<what>-<pid>-<thread>`.
fn thread_temp_path(what: &str) -> PathBuf {
    let name = format!(
        "ctxkit-fuzz-{what}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    )
    .replace(['(', ')'], "");
    std::env::temp_dir().join(name)
}

/// A file of this process and thread to load sessions from (the loader reads files).
fn scratch_path() -> PathBuf {
    SCRATCH.with(|cell| {
        cell.borrow_mut()
            .get_or_insert_with(|| {
                let mut path = thread_temp_path("scratch");
                path.set_extension("jsonl");
                Scratch(path)
            })
            .0
            .clone()
    })
}

/// Removes this thread's scratch file: the driver calls it before it exits, since the main
/// thread's thread-local values are not always dropped.
pub fn remove_scratch() {
    SCRATCH.with(|cell| cell.borrow_mut().take());
}

fn user(text: &str) -> AgentMessage {
    serde_json::from_value(serde_json::json!({"role": "user", "content": text, "timestamp": 1}))
        .unwrap()
}

/// Loads `data` as a session file, reads everything a command can read from it, then appends: the
/// append must land (the file reopens with one more entry, the new one) or fail cleanly.
pub fn session_loader(data: &[u8]) {
    let path = scratch_path();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let _ = read_session_info(&path);
    let Ok(mut session) = Session::open(&path) else {
        return;
    };
    let _ = session.tree();
    let _ = session.tree_record();
    let _ = session.session_name();
    let context = session.build_context();
    let mut typed = Vec::new();
    for message in &context.messages {
        let _ = session.message_value(message);
        if let Ok(message) = session.message(message) {
            typed.push(message);
        }
    }
    let _ = convert_to_llm(&typed);
    let _ = session.context_record(LeafSelector::Current, ContextForm::Llm);
    let _ = session.context_record(LeafSelector::BeforeFirst, ContextForm::Session);
    let ids: Vec<String> = session
        .entries()
        .iter()
        .take(64)
        .map(|entry| entry.id().to_owned())
        .collect();
    for id in &ids {
        let context = session.context_at(LeafSelector::Entry(id));
        let path_ids: Vec<&str> = session
            .branch_path(Some(id))
            .iter()
            .map(|entry| entry.id())
            .collect();
        for message in &context.messages {
            let entry = session.index().get(message.entry).unwrap();
            assert!(
                path_ids.contains(&entry.id()),
                "a context holds an entry off the leaf's path"
            );
        }
        let _ = session.children(id);
        let _ = session.label(id);
    }

    let before = session.entries().len();
    let appended = session
        .append_message(user("fuzz"))
        .and_then(|id| session.flush_pending().map(|()| id));
    if let Ok(id) = appended {
        let reopened = Session::open(&path).expect("a file ctxkit appended to opens again");
        assert_eq!(
            reopened.entries().len(),
            before + 1,
            "an append added exactly one entry"
        );
        assert!(reopened.entry(&id).is_some(), "the appended entry is there");
    }
}

/// The deepest nesting a session line may have (the JSON parser's limit, the outer object counting).
const MAX_NESTING: usize = 127;

/// Session files of hostile shapes built from `data`, three bytes a line: entries whose message
/// `details` nest from a few levels to 100,000, lines around the nesting limit, lines of up to
/// 1 MiB, and lines cut short. The file always opens; a line deeper than the limit or cut short
/// is skipped with a diagnostic and every other is kept; every message of the context reads whole
/// (before issue 42 a deep line was kept and failed when read back); an append lands.
pub fn session_shapes(data: &[u8]) {
    let path = scratch_path();
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#;
    let root = r#"{"type":"message","id":"u","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"q","timestamp":1}}"#;
    let mut text = format!("{header}\n{root}\n");
    let mut kept = 1;
    let mut skipped = 0;
    for (index, chunk) in data.chunks(3).take(24).enumerate() {
        let [kind, first, second] = [0, 1, 2].map(|at| chunk.get(at).copied().unwrap_or(0));
        let depth = match kind % 4 {
            0 => usize::from(first),
            1 => MAX_NESTING - 10 + usize::from(first % 20),
            2 => usize::from(first) * 400,
            _ => usize::from(first % 8),
        };
        let size = if kind % 8 >= 6 {
            usize::from(second) << 12
        } else {
            usize::from(second)
        };
        let line = format!(
            r#"{{"type":"message","id":"e{index}","parentId":"u","timestamp":"2025-01-01T00:00:02.000Z","message":{{"role":"toolResult","toolCallId":"c","toolName":"t","content":[{{"type":"text","text":"{}"}}],"isError":false,"timestamp":2,"details":{}1{}}}}}"#,
            "x".repeat(size),
            "[".repeat(depth),
            "]".repeat(depth)
        );
        // The message is at depth 2, its `details` array at 3.
        let too_deep = depth + 2 > MAX_NESTING;
        let cut = kind % 4 == 3 && second % 3 == 0;
        if cut {
            text.push_str(&line[..line.len() / 2]);
        } else {
            text.push_str(&line);
        }
        text.push('\n');
        if too_deep || cut {
            skipped += 1;
        } else {
            kept += 1;
        }
    }
    if std::fs::write(&path, &text).is_err() {
        return;
    }
    let mut session = Session::open(&path).expect("a file with a valid header opens");
    assert_eq!(session.entries().len(), kept, "every good line is kept");
    assert!(
        session.diagnostics().len() >= skipped,
        "every skipped line is reported"
    );
    let context = session.build_context();
    for message in &context.messages {
        session
            .message(message)
            .expect("every message of the context reads whole");
    }
    let _ = session.context_record(LeafSelector::Current, ContextForm::Llm);
    session
        .append_message(user("after"))
        .expect("an append lands after hostile lines");
}

/// Reads `data` as another agent's session file, as Claude Code's and as Codex's: the converter
/// never panics, whatever records it is given; the file read a record at a time (`ctxkit import`)
/// is refused as a format exactly when the text read whole is ([`confirm_format`]), with the same
/// error, and otherwise gives the same session as the text read whole; and a converted session,
/// written out, opens as a session with exactly its entries, no line refused, every message of its
/// context whole. A session converted from records of another format (which `ctxkit import`
/// refuses, but a listing of that agent's folder converts) is held to the same when its records
/// give it a start time and a working directory.
pub fn foreign_import(data: &[u8]) {
    let path = scratch_path();
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let converted = path.with_extension("imported.jsonl");
    for format in [SourceFormat::ClaudeCode, SourceFormat::Codex] {
        let source = parse_source(&path, &text);
        let whole = convert(&source, format);
        let confirmed = confirm_format(&source, format);
        let by_line = import_file(&path, Some(format));
        let session = match (confirmed, by_line) {
            (Err(refused), Err(error)) => {
                assert_eq!(
                    refused.to_string(),
                    error.to_string(),
                    "{format:?}: the file read by line and read whole are refused alike"
                );
                match whole {
                    Ok(whole)
                        if !whole.header.timestamp.is_empty() && !whole.header.cwd.is_empty() =>
                    {
                        whole
                    }
                    Ok(_) | Err(_) => continue,
                }
            }
            (Err(refused), Ok(_)) => {
                panic!("{format:?}: imported read by line, refused read whole: {refused}")
            }
            (Ok(()), Err(_)) => continue,
            (Ok(()), Ok(session)) => {
                // The file's surroundings fill a header the records leave empty (its modification
                // time, a neighbour's `cwd`) only when it is read from disk; otherwise the two
                // readings agree.
                if let Ok(whole) = whole
                    && !whole.header.timestamp.is_empty()
                    && !whole.header.cwd.is_empty()
                {
                    assert_eq!(
                        whole.to_jsonl().expect("an imported session serializes"),
                        session.to_jsonl().expect("an imported session serializes"),
                        "{format:?}: the file read by line and read whole give the same session"
                    );
                }
                session
            }
        };
        reopens_whole(&session, &converted, &format!("{format:?}"));
    }
    let _ = std::fs::remove_file(&converted);
}

/// `session` written to `path` opens with exactly its entries, no line refused, every message of
/// its context whole (`what` names the format in a failure).
fn reopens_whole(session: &ImportedSession, path: &Path, what: &str) {
    let jsonl = session.to_jsonl().expect("an imported session serializes");
    if std::fs::write(path, &jsonl).is_err() {
        return;
    }
    let reopened = Session::open(path).expect("an imported session opens");
    assert_eq!(
        reopened.entries().len(),
        session.entry_count(),
        "{what}: every imported entry is read back"
    );
    assert!(
        reopened.diagnostics().is_empty(),
        "{what}: the loader refuses nothing the import wrote: {:?}",
        reopened.diagnostics()
    );
    let context = reopened.build_context();
    for message in &context.messages {
        reopened
            .message(message)
            .expect("every message of an imported context reads whole");
    }
}

/// A span built from `data` (parts split at `0x00`; a part's first byte picks a user or assistant
/// message, a tool call and its result, a failed result, an earlier summary or a focus) summarized
/// offline at a limit from the first two bytes: the summarizer never panics on a transcript's text,
/// and its summary never exceeds the limit.
pub fn offline_summary(data: &[u8]) {
    let [first, second] = [0, 1].map(|at| data.get(at).copied().unwrap_or(0));
    let max_tokens = 1 + u64::from(u16::from_le_bytes([first, second]) % 6_000);
    let purpose = match second % 3 {
        0 => SummaryPurpose::History,
        1 => SummaryPurpose::TurnPrefix,
        _ => SummaryPurpose::Branch,
    };
    let mut messages = Vec::new();
    let mut previous_summary = None;
    let mut focus = None;
    for (index, part) in data
        .get(2..)
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .enumerate()
    {
        let Some((&kind, rest)) = part.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(rest).into_owned();
        let id = format!("call_{index}");
        let values = match kind % 7 {
            0 => vec![serde_json::json!({"role": "user", "content": text, "timestamp": 1})],
            1 => vec![
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop", "timestamp": 1}),
            ],
            2 | 3 => vec![
                serde_json::json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": text.chars().take(200).collect::<String>()}}], "stopReason": "toolUse", "timestamp": 1}),
                serde_json::json!({"role": "toolResult", "toolCallId": id, "toolName": "bash", "content": [{"type": "text", "text": text}], "isError": kind % 7 == 3, "timestamp": 1}),
            ],
            4 => vec![
                serde_json::json!({"role": "assistant", "content": [{"type": "thinking", "thinking": text}, {"type": "toolCall", "id": id, "name": "edit", "arguments": {"path": text.chars().take(80).collect::<String>(), "newText": text}}], "stopReason": "toolUse", "timestamp": 1}),
            ],
            5 => {
                previous_summary = Some(text);
                Vec::new()
            }
            _ => {
                focus = Some(text);
                Vec::new()
            }
        };
        messages.extend(
            values
                .into_iter()
                .map(|value| serde_json::from_value::<AgentMessage>(value).unwrap()),
        );
    }
    let request = SummaryRequest {
        purpose,
        system_prompt: String::new(),
        user_text: String::new(),
        max_tokens: Some(max_tokens),
        reasoning: None,
        source: SummarySpan {
            messages,
            omitted_messages: usize::from(first % 4),
            previous_summary,
            read_files: Vec::new(),
            modified_files: Vec::new(),
            focus,
            room_tokens: None,
            continues_summary: second % 2 == 1,
        },
    };
    let summary = ctxkit_summarizer_offline::summarize_offline(&request);
    let tokens = ctxkit_summarizer_offline::count_tokens(&summary);
    assert!(
        tokens <= max_tokens,
        "a summary of {tokens} tokens for a limit of {max_tokens}"
    );
}

/// Parses markdown frontmatter; without frontmatter the body is the normalised text.
pub fn frontmatter(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = strip_frontmatter(&text);
    if let Ok(parsed) = parse_frontmatter(&text) {
        if !parsed.has_frontmatter {
            assert_eq!(parsed.body, text.replace("\r\n", "\n").replace('\r', "\n"));
        }
        let _ = parsed.field("name");
    }
}

/// Parses a package source: whatever is accepted can never reach `npm` or `git` as an option, a
/// control character, or a path escape.
pub fn package_source(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let base = std::path::Path::new("/base");
    let home = std::path::Path::new("/home/user");
    let classified = PackageSource::classify(&text);
    let _ = classified.identity(base, home);
    let _ = classified.display_name();
    let Ok(source) = PackageSource::parse(&text) else {
        return;
    };
    assert!(
        !text.chars().any(char::is_control),
        "control character accepted"
    );
    assert!(!text.trim().starts_with('-'), "option-like source accepted");
    let escape = |part: &str| part == ".." || part == ".";
    match &source {
        PackageSource::Npm(npm) => {
            assert!(!npm.spec.starts_with('-'), "option-like npm spec");
            assert!(!npm.name.split('/').any(escape), "npm name escapes");
        }
        PackageSource::Git(git) => {
            assert!(!git.repo.starts_with('-'), "option-like git URL");
            assert!(
                !git.git_ref.as_deref().is_some_and(|r| r.starts_with('-')),
                "option-like git ref"
            );
            assert!(
                !std::iter::once(git.host.as_str())
                    .chain(git.path.split('/'))
                    .any(escape),
                "git path escapes"
            );
        }
        PackageSource::Local { path } => assert!(!path.trim().starts_with('-')),
    }
    let _ = source.identity(base, home);
    let _ = source.local_path(base, home);
    let _ = source.is_pinned();
}

/// Substitutes arguments into a template: the input is the template, then (after a NUL byte)
/// arguments separated by `\x01`. Inserted arguments are never re-scanned, so text without `$`
/// comes out unchanged, and the output never exceeds what the placeholders allow.
pub fn prompt_template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, args) = text.split_once('\0').unwrap_or((&text, ""));
    let args: Vec<String> = if args.is_empty() {
        Vec::new()
    } else {
        args.split('\u{1}').map(str::to_owned).collect()
    };
    let output = substitute_args(template, &args);
    if !template.contains('$') {
        assert_eq!(output, template, "text without placeholders changed");
    }
    let all = args.iter().map(String::len).sum::<usize>() + args.len();
    let placeholders = template.matches('$').count();
    assert!(
        output.len() <= template.len() + placeholders * all,
        "the output grew beyond its placeholders"
    );
}

/// Classifies provider error text; rate limits are never overflows.
pub fn overflow_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let class = ctxkit_overflow::classify_error_text(&text);
    let overflow = ctxkit_overflow::is_overflow_error_text(&text);
    assert_eq!(
        overflow,
        matches!(class, ctxkit_overflow::ErrorTextClass::Overflow(_)),
        "the two answers agree"
    );
}

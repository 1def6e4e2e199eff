//! The input line: Tab completes `@path` over the project's files (fuzzy, `.gitignore`
//! respected; a second Tab lists the matches) and a command's name after `/`
//! ([`super::slash_completion`]); Alt-Enter (and Shift-Enter where the terminal sends
//! it as Alt-Enter, or in xterm's modifyOtherKeys form: [`super::modified_keys`]) inserts a newline, a line ending in `\` goes on on the next one; Ctrl-G
//! hands the text to `$EDITOR`, Shift-Tab moves to the next thinking level, Ctrl-P to the next
//! model and Ctrl-T shows or hides reasoning ([`KeyRequest`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, ConditionalEventHandler, Context, Editor, Event, EventContext, EventHandler, Helper,
    KeyCode, KeyEvent, Modifiers, RepeatCount,
};

use super::large_input::{Always, LargeInput};
use super::slash_completion::{SlashCommands, typed_command};

/// The chat's line editor (key bindings of other features take `&mut ChatEditor`).
pub type ChatEditor = Editor<InputHelper, DefaultHistory>;

/// Files walked for a completion: enough for a large repository, bounded for a home folder.
const MAX_FILES: usize = 50_000;
/// Matches offered at once.
const MAX_MATCHES: usize = 40;

/// The chat's line-editor helper.
#[derive(Debug)]
pub struct InputHelper {
    /// The project whose files `@` completes.
    cwd: PathBuf,
    /// The command names `/` completes.
    commands: SlashCommands,
}

impl InputHelper {
    pub fn new(cwd: &Path, commands: SlashCommands) -> Self {
        Self {
            cwd: cwd.to_owned(),
            commands,
        }
    }
}

/// The project's files, relative to `cwd`, as `.gitignore` (and `.ignore`) leave them, hidden
/// files left out, at most [`MAX_FILES`].
pub fn project_files(cwd: &Path) -> Vec<String> {
    let mut walker = ignore::WalkBuilder::new(cwd);
    walker.require_git(false);
    ctxkit_agent::tools::read_safe_ignore_files(&mut walker, cwd, |_| true);
    walker
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            let relative = entry.path().strip_prefix(cwd).ok()?;
            relative.to_str().map(str::to_owned)
        })
        .take(MAX_FILES)
        .collect()
}

/// The files matching `query` best first (all of them, in path order, for an empty query).
pub fn fuzzy_matches(files: Vec<String>, query: &str) -> Vec<String> {
    if query.is_empty() {
        let mut files = files;
        files.sort();
        files.truncate(MAX_MATCHES);
        return files;
    }
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let pattern = Pattern::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
    );
    let mut matches = pattern.match_list(files, &mut matcher);
    // Best score first; among equals the shorter path, then the path.
    matches.sort_by(|(a, score_a), (b, score_b)| {
        score_b
            .cmp(score_a)
            .then(a.len().cmp(&b.len()))
            .then(a.cmp(b))
    });
    matches
        .into_iter()
        .take(MAX_MATCHES)
        .map(|(file, _)| file)
        .collect()
}

/// Where the word under the cursor starts.
fn word_start(line: &str, pos: usize) -> usize {
    line[..pos]
        .rfind(char::is_whitespace)
        .map_or(0, |blank| blank + 1)
}

impl Completer for InputHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _context: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if let Some(typed) = typed_command(line, pos) {
            let candidates = self
                .commands
                .matching(typed)
                .into_iter()
                .map(|command| Pair {
                    display: format!("/{:<16} {}", command.name, command.description),
                    replacement: format!("/{} ", command.name),
                })
                .collect();
            return Ok((0, candidates));
        }
        let start = word_start(line, pos);
        let Some(query) = line[start..pos].strip_prefix('@') else {
            return Ok((start, Vec::new()));
        };
        let candidates = fuzzy_matches(project_files(&self.cwd), query)
            .into_iter()
            .map(|file| Pair {
                // A path with blanks goes in quotes, which `@` reads back as one path.
                replacement: if file.contains(char::is_whitespace) {
                    format!("@\"{file}\"")
                } else {
                    format!("@{file}")
                },
                display: file,
            })
            .collect();
        Ok((start, candidates))
    }
}

impl Hinter for InputHelper {
    type Hint = String;
}

impl Highlighter for InputHelper {}

/// A line ending in `\` is not finished: Enter inserts a newline after it (the `\` is dropped
/// when the prompt is sent, [`joined_continuations`]).
impl Validator for InputHelper {
    fn validate(&self, context: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if context.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

/// `text` as the prompt it stands for: each `\` that ended a line removed.
pub fn joined_continuations(text: &str) -> String {
    text.replace("\\\n", "\n")
}

/// What a key that ends the line without sending it asked for; the line comes back to the input
/// line afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRequest {
    /// Ctrl-G: edit the line in `$EDITOR`.
    Edit,
    /// Shift-Tab: the next thinking level, as Pi's.
    CycleThinking,
    /// Ctrl-P: the next model, as Pi's.
    CycleModel,
    /// Ctrl-T: reasoning shown in full or as one line, as Pi's.
    ToggleThinkingBlocks,
}

impl KeyRequest {
    const ALL: [Self; 4] = [
        Self::Edit,
        Self::CycleThinking,
        Self::CycleModel,
        Self::ToggleThinkingBlocks,
    ];

    fn code(self) -> u8 {
        match self {
            Self::Edit => 1,
            Self::CycleThinking => 2,
            Self::CycleModel => 3,
            Self::ToggleThinkingBlocks => 4,
        }
    }
}

/// Set by a [`KeyRequest`]'s key while the line is read, taken once it ended.
#[derive(Debug, Clone, Default)]
pub struct KeyRequests(Arc<AtomicU8>);

impl KeyRequests {
    /// The request that ended the line just read, if a key made one (and clears it).
    pub fn take(&self) -> Option<KeyRequest> {
        let code = self.0.swap(0, Ordering::SeqCst);
        KeyRequest::ALL
            .into_iter()
            .find(|request| request.code() == code)
    }

    fn on_key(&self, request: KeyRequest) -> RequestKey {
        RequestKey {
            requests: self.clone(),
            request,
        }
    }
}

/// A key bound to `request`: it records the request and ends the line.
struct RequestKey {
    requests: KeyRequests,
    request: KeyRequest,
}

impl ConditionalEventHandler for RequestKey {
    fn handle(
        &self,
        _event: &Event,
        _count: RepeatCount,
        _positive: bool,
        _context: &EventContext<'_>,
    ) -> Option<Cmd> {
        self.requests.0.store(self.request.code(), Ordering::SeqCst);
        Some(Cmd::AcceptLine)
    }
}

/// The chat's key bindings on `editor`: Alt-Enter a newline, Ctrl-G the external editor,
/// Shift-Tab the next thinking level, Ctrl-P the next model (in place of rustyline's previous
/// line of history, as in Pi; Up still goes back), Ctrl-T reasoning shown or hidden (in place of
/// rustyline's transposition), and every other key through [`LargeInput`]
/// first (pastes, and lines too long to edit).
pub fn bind_keys(editor: &mut ChatEditor, requests: &KeyRequests, large: &LargeInput) {
    editor.bind_sequence(
        KeyEvent(KeyCode::Enter, Modifiers::ALT),
        large.unless_pasting(Always(Cmd::Newline)),
    );
    editor.bind_sequence(
        KeyEvent(KeyCode::Char('G'), Modifiers::CTRL),
        large.unless_pasting(requests.on_key(KeyRequest::Edit)),
    );
    editor.bind_sequence(
        KeyEvent(KeyCode::BackTab, Modifiers::NONE),
        large.unless_pasting(requests.on_key(KeyRequest::CycleThinking)),
    );
    editor.bind_sequence(
        KeyEvent(KeyCode::Char('P'), Modifiers::CTRL),
        large.unless_pasting(requests.on_key(KeyRequest::CycleModel)),
    );
    editor.bind_sequence(
        KeyEvent(KeyCode::Char('T'), Modifiers::CTRL),
        large.unless_pasting(requests.on_key(KeyRequest::ToggleThinkingBlocks)),
    );
    editor.bind_sequence(
        Event::Any,
        EventHandler::Conditional(Box::new(large.clone())),
    );
}

impl Helper for InputHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_is_fuzzy_over_files_git_would_track() {
        let project = tempfile::tempdir().unwrap();
        for file in [
            "src/main.rs",
            "src/lib.rs",
            "README.md",
            "target/main_generated.rs",
        ] {
            let path = project.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        std::fs::write(project.path().join(".gitignore"), "target/\n").unwrap();
        let files = project_files(project.path());
        assert!(
            !files.iter().any(|file| file.starts_with("target")),
            "{files:?}"
        );
        assert_eq!(fuzzy_matches(files.clone(), "mainrs"), ["src/main.rs"]);
        assert_eq!(fuzzy_matches(files.clone(), "srlib"), ["src/lib.rs"]);
        assert_eq!(fuzzy_matches(files, "").len(), 3);
        assert_eq!(word_start("explain @src/ma", 15), 8);
    }

    #[test]
    fn a_trailing_backslash_continues_the_line() {
        assert_eq!(
            joined_continuations("one \\\ntwo\\\nthree"),
            "one \ntwo\nthree"
        );
        assert_eq!(joined_continuations("a \\ b"), "a \\ b");
    }
}

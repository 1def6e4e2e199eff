//! The input line: Tab completes `@path` over the project's files (fuzzy, `.gitignore`
//! respected; a second Tab lists the matches) and a command's name after `/`
//! ([`super::slash_completion`]); Alt-Enter and Ctrl-J (and Shift-Enter where the terminal sends
//! it as Alt-Enter, or in xterm's modifyOtherKeys form: [`super::modified_keys`]) inserts a newline, Enter typed after a `\` goes on on the next line (the `\` dropped); Ctrl-G
//! hands the text to `$EDITOR`, Shift-Tab moves to the next thinking level, Ctrl-P to the next
//! model and Ctrl-T shows or hides reasoning ([`KeyRequest`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use nucleo_matcher::pattern::{AtomKind, CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
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

/// Every line is complete: Enter after a `\` is a key of its own ([`BackslashEnter`]).
impl rustyline::validate::Validator for InputHelper {}

/// Enter typed after a `\` goes on on a new line, the `\` dropped when the line is read
/// ([`KeyRequests::without_typed_continuations`]), as in Pi 1.6.0's editor. Only a typed Enter
/// does this: a paste's text, or text back from `$EDITOR`, keeps its backslashes.
struct BackslashEnter(KeyRequests);

impl ConditionalEventHandler for BackslashEnter {
    fn handle(
        &self,
        _event: &Event,
        _count: RepeatCount,
        _positive: bool,
        context: &EventContext<'_>,
    ) -> Option<Cmd> {
        let before = context.line().get(..context.pos())?;
        if !before.ends_with('\\') {
            return None;
        }
        if let Ok(mut continuations) = self.0.continuations.lock() {
            continuations.push(before.to_owned());
        }
        Some(Cmd::Insert(1, "\n".to_owned()))
    }
}

/// `line` without the `\` of each typed continuation: `continuations` are the texts before the
/// cursor when Enter was typed after a `\`. One whose text was edited since is left as it is.
fn without_continuations(line: &str, continuations: &[String]) -> String {
    let mut line = line.to_owned();
    let mut ends: Vec<usize> = continuations
        .iter()
        .filter(|before| {
            line.starts_with(before.as_str()) && line[before.len()..].starts_with('\n')
        })
        .map(String::len)
        .collect();
    ends.sort_unstable();
    ends.dedup();
    for end in ends.into_iter().rev() {
        line.remove(end - 1);
    }
    line
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

/// Set by keys while the line is read, taken once it ended: a [`KeyRequest`], and where Enter
/// was typed after a `\`.
#[derive(Debug, Clone, Default)]
pub struct KeyRequests {
    request: Arc<AtomicU8>,
    continuations: Arc<Mutex<Vec<String>>>,
}

impl KeyRequests {
    /// The request that ended the line just read, if a key made one (and clears it).
    pub fn take(&self) -> Option<KeyRequest> {
        let code = self.request.swap(0, Ordering::SeqCst);
        KeyRequest::ALL
            .into_iter()
            .find(|request| request.code() == code)
    }

    /// `line`, just read, without the `\` of each Enter typed after one (and clears them).
    pub fn without_typed_continuations(&self, line: &str) -> String {
        let continuations = self
            .continuations
            .lock()
            .map(|mut continuations| std::mem::take(&mut *continuations))
            .unwrap_or_default();
        without_continuations(line, &continuations)
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
        self.requests
            .request
            .store(self.request.code(), Ordering::SeqCst);
        Some(Cmd::AcceptLine)
    }
}

/// The keys that insert a newline: Alt-Enter, and Ctrl-J (a line feed; Enter is a carriage
/// return in raw mode), Pi's newline key that works in every terminal. Inside a paste a line feed
/// stays pasted text.
const NEWLINE_KEYS: [KeyEvent; 2] = [
    KeyEvent(KeyCode::Enter, Modifiers::ALT),
    KeyEvent(KeyCode::Char('J'), Modifiers::CTRL),
];

/// The chat's key bindings on `editor`: Alt-Enter and Ctrl-J a newline, Ctrl-G the external editor,
/// Shift-Tab the next thinking level, Ctrl-P the next model (in place of rustyline's previous
/// line of history, as in Pi; Up still goes back), Ctrl-T reasoning shown or hidden (in place of
/// rustyline's transposition), and every other key through [`LargeInput`]
/// first (pastes, and lines too long to edit).
pub fn bind_keys(editor: &mut ChatEditor, requests: &KeyRequests, large: &LargeInput) {
    editor.bind_sequence(
        KeyEvent(KeyCode::Enter, Modifiers::NONE),
        large.unless_pasting(BackslashEnter(requests.clone())),
    );
    for newline in NEWLINE_KEYS {
        editor.bind_sequence(newline, large.unless_pasting(Always(Cmd::Newline)));
    }
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
    fn only_the_backslashes_of_typed_continuations_are_dropped() {
        let typed = ["one \\".to_owned(), "one \\\ntwo\\".to_owned()];
        assert_eq!(
            without_continuations("one \\\ntwo\\\nthree", &typed),
            "one \ntwo\nthree"
        );
        // A pasted `\` before a line break stays, and so does one whose text was edited since.
        assert_eq!(
            without_continuations("run \\\n  --flag", &[]),
            "run \\\n  --flag"
        );
        assert_eq!(without_continuations("ONE \\\ntwo", &typed), "ONE \\\ntwo");
        assert_eq!(without_continuations("a \\ b", &typed), "a \\ b");
    }

    #[test]
    fn ctrl_j_inserts_a_newline_and_enter_does_not() {
        // In raw mode Enter is a carriage return and Ctrl-J a line feed: rustyline reads them as
        // these keys. QA r108: Ctrl-J sent the half-typed prompt; in Pi it is a newline.
        assert!(NEWLINE_KEYS.contains(&KeyEvent::new('\n', Modifiers::NONE)));
        assert!(NEWLINE_KEYS.contains(&KeyEvent::new('\r', Modifiers::ALT)));
        assert!(!NEWLINE_KEYS.contains(&KeyEvent::new('\r', Modifiers::NONE)));
    }
}

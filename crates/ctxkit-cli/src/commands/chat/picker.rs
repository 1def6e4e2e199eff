//! A full-screen list to pick from, for `/tree`, the rewind, `/model` and `/scoped-models`: the
//! arrow keys (or `j`/`k`, Page Up/Down, Home/End) move, Enter picks, Esc leaves, `/` searches (the
//! rows whose text holds what is typed, in any case; Enter picks the row under the cursor, Esc
//! ends the search), and the picked row's text shows in full below the list. Drawn on the terminal's alternate screen (the conversation is back as it was after),
//! scrolling so it fits any height from a dozen lines up. Crossterm comes with termimad.

use std::io::{IsTerminal as _, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use termimad::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use termimad::crossterm::{cursor, execute, queue, style, terminal};

/// What the user did in the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Picked {
    /// Enter on this row.
    Chosen(usize),
    /// One of the extra keys, on this row.
    Key(char, usize),
    /// Esc, `q` or Ctrl-C.
    Left,
}

/// A list to show.
pub struct List<'a> {
    pub title: &'a str,
    /// The keys, shown on the last line.
    pub help: &'a str,
    /// How many rows.
    pub count: usize,
    /// A row's line (cut to the width), made when it is shown: a long tree is not rendered whole.
    pub row: &'a dyn Fn(usize) -> String,
    /// The full text of a row, shown below the list.
    pub detail: &'a dyn Fn(usize) -> String,
    /// Keys besides the moves, Enter and Esc that end the list (`l` to label).
    pub keys: &'a str,
}

/// The terminal's size (columns, rows) when it cannot be read.
const DEFAULT_SIZE: (u16, u16) = (80, 24);

/// How often the list looks at the terminal's size while it waits for a key.
const SIZE_CHECK: std::time::Duration = std::time::Duration::from_millis(150);

/// Gives SIGWINCH to the line editor for good; called before it is made. The editor (rustyline)
/// waits for a key in a plain `read` and learns of a resize when that read fails with EINTR.
/// Crossterm's event source, made when a list first reads a key, registered SIGWINCH with
/// signal-hook, whose handler is installed with SA_RESTART: the read was restarted instead, and
/// the input line kept the width it had before the list was opened. Registered here first, the
/// signal's slot in signal-hook's registry exists before the editor installs its own handler over
/// it, and crossterm's registration later installs nothing; the list notices a resize by
/// looking at the size ([`SIZE_CHECK`]) instead.
pub fn leave_resizes_to_the_line_editor() {
    if std::io::stdin().is_terminal() {
        let unused = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let _ = signal_hook::flag::register(signal_hook::consts::SIGWINCH, unused);
    }
}

/// Whether a list is on the alternate screen now.
static SHOWN: AtomicBool = AtomicBool::new(false);

/// Whether a full-screen list is open: the chat waits for the user, nothing is at work, and a
/// signal ending the chat leaves the terminal's alternate screen.
pub fn is_open() -> bool {
    SHOWN.load(Ordering::SeqCst)
}

/// Shows `list` with the cursor on `start`; `Err` when stdin is not a terminal.
pub fn pick(list: &List<'_>, start: usize) -> std::io::Result<Picked> {
    pick_scrolled(list, start, &mut None)
}

/// [`pick`] whose first row shown is `top` (as a list shown before left it, so a list shown again
/// after a key scrolls nowhere), and which leaves in `top` the first row shown at the end.
pub fn pick_scrolled(
    list: &List<'_>,
    start: usize,
    top: &mut Option<usize>,
) -> std::io::Result<Picked> {
    if !std::io::stdin().is_terminal() || list.count == 0 {
        return Err(std::io::Error::other("not a terminal"));
    }
    let mut stdout = std::io::stdout();
    terminal::enable_raw_mode()?;
    SHOWN.store(true, Ordering::SeqCst);
    let entered = execute!(stdout, terminal::EnterAlternateScreen, cursor::Hide);
    let picked = entered.and_then(|()| run(list, start, top, &mut stdout));
    let _ = execute!(stdout, cursor::Show, terminal::LeaveAlternateScreen);
    SHOWN.store(false, Ordering::SeqCst);
    let _ = terminal::disable_raw_mode();
    picked
}

/// The next key pressed, or `None` when the list is to be drawn again: the terminal is no longer
/// `size` (columns, rows), or another event came.
fn next_key(size: (u16, u16)) -> std::io::Result<Option<KeyEvent>> {
    loop {
        if event::poll(SIZE_CHECK)? {
            return Ok(match event::read()? {
                Event::Key(key) => Some(key),
                Event::FocusGained
                | Event::FocusLost
                | Event::Mouse(_)
                | Event::Paste(_)
                | Event::Resize(..) => None,
            });
        }
        if terminal::size().unwrap_or(DEFAULT_SIZE) != size {
            return Ok(None);
        }
    }
}

fn run(
    list: &List<'_>,
    start: usize,
    first_shown: &mut Option<usize>,
    stdout: &mut std::io::Stdout,
) -> std::io::Result<Picked> {
    let mut search = Search::default();
    let mut shown: Vec<usize> = (0..list.count).collect();
    let mut cursor = start.min(list.count - 1);
    // The row last under the cursor: it is under it again when a search shows it.
    let mut under = cursor;
    let layout_for =
        |(width, height): (u16, u16)| Layout::new(usize::from(width), usize::from(height));
    let current_size = || terminal::size().unwrap_or(DEFAULT_SIZE);
    // A list shown afresh puts its cursor mid-screen, with rows below it in view.
    let mut top =
        first_shown.unwrap_or_else(|| cursor.saturating_sub(layout_for(current_size()).rows / 2));
    loop {
        let size = current_size();
        let layout = layout_for(size);
        top = scrolled(top, cursor, layout.rows, shown.len());
        *first_shown = Some(top);
        draw(
            list,
            &shown,
            cursor,
            top,
            &layout,
            &search.footer(list.help),
            stdout,
        )?;
        let Some(key) = next_key(size)? else {
            // A resize (or another event) draws the list again at the new size.
            continue;
        };
        if key.kind != KeyEventKind::Press {
            continue;
        }
        let last = shown.len().saturating_sub(1);
        let at = |position: usize| shown.get(position).copied();
        if let Some(row) = at(cursor) {
            under = row;
        }
        if search.typing || (key.code == KeyCode::Char('/') && !list.keys.contains('/')) {
            match search.key(&key) {
                SearchKey::Changed => {
                    shown = search.matching(list);
                    cursor = shown.iter().position(|row| *row == under).unwrap_or(0);
                    continue;
                }
                SearchKey::Pick => match at(cursor) {
                    Some(row) => return Ok(Picked::Chosen(row)),
                    None => continue,
                },
                SearchKey::Leave => return Ok(Picked::Left),
                SearchKey::Other => {}
            }
        }
        if shown.is_empty() {
            continue;
        }
        match step(&key, cursor, last, layout.rows, list.keys) {
            Step::Move(to) => cursor = to,
            Step::Done(Picked::Chosen(position)) => return Ok(Picked::Chosen(shown[position])),
            Step::Done(Picked::Key(key, position)) => return Ok(Picked::Key(key, shown[position])),
            Step::Done(Picked::Left) => return Ok(Picked::Left),
            Step::Ignore => {}
        }
    }
}

/// The search of the rows (`/`).
#[derive(Debug, Default)]
struct Search {
    /// Keys go to the query.
    typing: bool,
    query: String,
}

/// What a key did to the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SearchKey {
    /// The query changed, or the search started or ended: the rows shown change.
    Changed,
    /// Enter: the row under the cursor.
    Pick,
    /// Ctrl-C.
    Leave,
    /// A key the list handles (the arrows).
    Other,
}

impl Search {
    fn key(&mut self, key: &KeyEvent) -> SearchKey {
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            // Ctrl-C leaves; the list does nothing with the other Ctrl keys.
            return if key.code == KeyCode::Char('c') {
                SearchKey::Leave
            } else {
                SearchKey::Other
            };
        }
        if let KeyCode::Char(character) = key.code {
            if character == '/' && !self.typing {
                self.typing = true;
            } else {
                self.query.push(character);
            }
            return SearchKey::Changed;
        }
        if key.code == KeyCode::Backspace {
            self.query.pop();
            SearchKey::Changed
        } else if key.code == KeyCode::Esc {
            *self = Self::default();
            SearchKey::Changed
        } else if key.code == KeyCode::Enter {
            SearchKey::Pick
        } else {
            // The list moves on the rest (the arrows, Page Up/Down).
            SearchKey::Other
        }
    }

    /// The rows whose line or text holds the query, in any case.
    fn matching(&self, list: &List<'_>) -> Vec<usize> {
        let query = self.query.to_lowercase();
        (0..list.count)
            .filter(|row| {
                query.is_empty()
                    || (list.row)(*row).to_lowercase().contains(&query)
                    || (list.detail)(*row).to_lowercase().contains(&query)
            })
            .collect()
    }

    /// The last line: the search while it is typed, else the list's keys.
    fn footer(&self, help: &str) -> String {
        if self.typing {
            format!("/{}▏ · Enter picks · Esc ends the search", self.query)
        } else {
            format!("{help} · / search")
        }
    }
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Move(usize),
    Done(Picked),
    Ignore,
}

fn step(key: &KeyEvent, cursor: usize, last: usize, page: usize, keys: &str) -> Step {
    let page = page.max(1);
    match key.code {
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            Step::Done(Picked::Left)
        }
        KeyCode::Up | KeyCode::Char('k') => Step::Move(cursor.saturating_sub(1)),
        KeyCode::Down | KeyCode::Char('j') => Step::Move((cursor + 1).min(last)),
        KeyCode::PageUp => Step::Move(cursor.saturating_sub(page)),
        KeyCode::PageDown => Step::Move((cursor + page).min(last)),
        KeyCode::Home | KeyCode::Char('g') => Step::Move(0),
        KeyCode::End | KeyCode::Char('G') => Step::Move(last),
        KeyCode::Enter => Step::Done(Picked::Chosen(cursor)),
        KeyCode::Esc | KeyCode::Char('q') => Step::Done(Picked::Left),
        KeyCode::Char(key) if keys.contains(key) => Step::Done(Picked::Key(key, cursor)),
        // Every other key does nothing.
        KeyCode::Char(_)
        | KeyCode::Backspace
        | KeyCode::Left
        | KeyCode::Right
        | KeyCode::Tab
        | KeyCode::BackTab
        | KeyCode::Delete
        | KeyCode::Insert
        | KeyCode::F(_)
        | KeyCode::Null
        | KeyCode::CapsLock
        | KeyCode::ScrollLock
        | KeyCode::NumLock
        | KeyCode::PrintScreen
        | KeyCode::Pause
        | KeyCode::Menu
        | KeyCode::KeypadBegin
        | KeyCode::Media(_)
        | KeyCode::Modifier(_) => Step::Ignore,
    }
}

/// Where the parts of the screen go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    width: usize,
    /// Lines for the list.
    rows: usize,
    /// Lines for the picked row's text.
    detail: usize,
}

impl Layout {
    /// Title, list, a rule, the detail and the help line.
    fn new(width: usize, height: usize) -> Self {
        let width = width.max(20);
        let height = height.max(8);
        let detail = (height / 4).clamp(2, 8);
        Self {
            width,
            rows: height - 3 - detail,
            detail,
        }
    }
}

/// The first row shown so that `cursor` is on screen and, when the list is longer than the
/// screen, no screen row below its last row is left empty (a terminal made taller shows more of
/// the list above).
fn scrolled(top: usize, cursor: usize, rows: usize, count: usize) -> usize {
    let rows = rows.max(1);
    let top = if cursor < top {
        cursor
    } else if cursor >= top + rows {
        cursor + 1 - rows
    } else {
        top
    };
    top.min(count.saturating_sub(rows))
}

fn draw(
    list: &List<'_>,
    shown: &[usize],
    cursor: usize,
    top: usize,
    layout: &Layout,
    footer: &str,
    stdout: &mut std::io::Stdout,
) -> std::io::Result<()> {
    let width = layout.width;
    queue!(
        stdout,
        terminal::Clear(terminal::ClearType::All),
        cursor::MoveTo(0, 0)
    )?;
    queue!(
        stdout,
        style::SetAttribute(style::Attribute::Bold),
        style::Print(cut(list.title, width)),
        style::SetAttribute(style::Attribute::Reset)
    )?;
    let visible = shown.iter().enumerate().skip(top).take(layout.rows);
    for (line, (position, index)) in (1_u16..).zip(visible) {
        let row = (list.row)(*index);
        queue!(stdout, cursor::MoveTo(0, line))?;
        if position == cursor {
            queue!(
                stdout,
                style::SetAttribute(style::Attribute::Reverse),
                style::Print(cut(&format!("› {row}"), width)),
                style::SetAttribute(style::Attribute::Reset)
            )?;
        } else {
            queue!(stdout, style::Print(cut(&format!("  {row}"), width)))?;
        }
    }
    let rows_line = u16::try_from(layout.rows + 1).unwrap_or(u16::MAX);
    let position = match (shown.len(), shown.len() == list.count) {
        (0, _) => "── no row matches ".to_owned(),
        (count, true) => format!("── {}/{count} ", cursor + 1),
        (count, false) => format!("── {}/{count} of {} ", cursor + 1, list.count),
    };
    let rule = format!(
        "{position}{}",
        "─".repeat(width.saturating_sub(position.chars().count()))
    );
    queue!(stdout, cursor::MoveTo(0, rows_line), style::Print(rule))?;
    let detail = shown
        .get(cursor)
        .map(|row| (list.detail)(*row))
        .unwrap_or_default();
    for (offset, text) in wrap(&detail, width)
        .into_iter()
        .take(layout.detail)
        .enumerate()
    {
        let at = rows_line.saturating_add(1 + u16::try_from(offset).unwrap_or(0));
        queue!(stdout, cursor::MoveTo(0, at), style::Print(text))?;
    }
    let help_line = rows_line.saturating_add(1 + u16::try_from(layout.detail).unwrap_or(0));
    queue!(
        stdout,
        cursor::MoveTo(0, help_line),
        style::SetAttribute(style::Attribute::Dim),
        style::Print(cut(footer, width)),
        style::SetAttribute(style::Attribute::Reset)
    )?;
    stdout.flush()
}

/// A character as the picker shows it: a control character or one that reorders the terminal's
/// text (bidirectional overrides, `crate::render::terminal_safe`'s set) as a space.
fn shown(character: char) -> char {
    if character.is_control() || crate::render::is_unsafe_for_terminal(character) {
        ' '
    } else {
        character
    }
}

/// The terminal columns `character` takes: 2 for a wide (CJK) one, 0 for a combining mark.
fn columns(character: char) -> usize {
    unicode_width::UnicodeWidthChar::width(character).unwrap_or(0)
}

/// `text` on one line, at most `width` terminal columns (see [`shown`]): a wide character counts
/// two, as the terminal draws it (cut by characters, a row of CJK text ran onto the next row).
fn cut(text: &str, width: usize) -> String {
    let clean: String = text.chars().map(shown).collect();
    if clean.chars().map(columns).sum::<usize>() <= width {
        return clean;
    }
    let room = width.saturating_sub(1);
    let mut kept = String::new();
    let mut used = 0;
    for character in clean.chars() {
        used += columns(character);
        if used > room {
            break;
        }
        kept.push(character);
    }
    kept.push('…');
    kept
}

/// `text` wrapped at `width` terminal columns, its own line breaks kept (a character wider than
/// `width` gets a line of its own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for paragraph in text.lines() {
        let mut line = String::new();
        let mut used = 0;
        for character in paragraph.chars().map(shown) {
            let taken = columns(character);
            if used + taken > width && !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(character);
            used += taken;
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_details_never_print_a_bidirectional_override_or_a_control_character() {
        let hostile = "safe \u{202e}txt.exe\u{202c} \u{1b}[2J end";
        for line in std::iter::once(cut(hostile, 80)).chain(wrap(hostile, 10)) {
            assert!(
                !line.chars().any(|character| character.is_control()
                    || crate::render::is_unsafe_for_terminal(character)),
                "{line:?}"
            );
        }
    }

    #[test]
    fn a_small_terminal_keeps_room_for_the_list_and_scrolls_to_the_cursor() {
        let layout = Layout::new(80, 24);
        assert_eq!(layout.detail, 6);
        assert_eq!(layout.rows, 15);
        assert_eq!(scrolled(0, 20, layout.rows, 40), 6);
        assert_eq!(scrolled(6, 3, layout.rows, 40), 3);
        assert_eq!(scrolled(3, 10, layout.rows, 40), 3);
        // Taller now: the rows above come into view instead of empty lines below the last.
        assert_eq!(scrolled(25, 39, layout.rows, 40), 25);
        assert_eq!(scrolled(25, 39, 30, 40), 10);
        assert_eq!(scrolled(5, 2, 30, 10), 0);
        assert!(Layout::new(10, 3).rows >= 1);
    }

    #[test]
    fn a_search_keeps_the_rows_holding_it_in_any_case() {
        let rows = [
            "anthropic/claude-sonnet-4-5",
            "openai/gpt-5",
            "openai/GPT-4o",
        ];
        let row = |index: usize| rows[index].to_owned();
        let detail = |_: usize| String::new();
        let list = List {
            title: "",
            help: "Enter picks",
            count: rows.len(),
            row: &row,
            detail: &detail,
            keys: "",
        };
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        let mut search = Search::default();
        assert_eq!(search.key(&key(KeyCode::Char('/'))), SearchKey::Changed);
        for character in "gpt".chars() {
            assert_eq!(
                search.key(&key(KeyCode::Char(character))),
                SearchKey::Changed
            );
        }
        assert_eq!(search.matching(&list), [1, 2]);
        assert_eq!(
            search.footer(list.help),
            "/gpt▏ · Enter picks · Esc ends the search"
        );
        assert_eq!(search.key(&key(KeyCode::Down)), SearchKey::Other);
        assert_eq!(search.key(&key(KeyCode::Enter)), SearchKey::Pick);
        search.key(&key(KeyCode::Backspace));
        search.key(&key(KeyCode::Backspace));
        search.key(&key(KeyCode::Backspace));
        assert_eq!(search.matching(&list), [0, 1, 2]);
        search.key(&key(KeyCode::Char('x')));
        assert!(search.matching(&list).is_empty());
        assert_eq!(search.key(&key(KeyCode::Esc)), SearchKey::Changed);
        assert!(!search.typing && search.matching(&list).len() == 3);
        assert_eq!(search.footer(list.help), "Enter picks · / search");
    }

    #[test]
    fn keys_move_pick_and_leave() {
        let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
        assert_eq!(step(&key(KeyCode::Char('j')), 2, 5, 10, "l"), Step::Move(3));
        assert_eq!(step(&key(KeyCode::Down), 5, 5, 10, "l"), Step::Move(5));
        assert_eq!(step(&key(KeyCode::Up), 0, 5, 10, "l"), Step::Move(0));
        assert_eq!(step(&key(KeyCode::PageDown), 0, 50, 10, ""), Step::Move(10));
        assert_eq!(
            step(&key(KeyCode::Enter), 4, 5, 10, ""),
            Step::Done(Picked::Chosen(4))
        );
        assert_eq!(
            step(&key(KeyCode::Char('l')), 4, 5, 10, "l"),
            Step::Done(Picked::Key('l', 4))
        );
        assert_eq!(
            step(&key(KeyCode::Esc), 4, 5, 10, ""),
            Step::Done(Picked::Left)
        );
        assert_eq!(step(&key(KeyCode::Char('x')), 4, 5, 10, "l"), Step::Ignore);
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(wrap("abcde\nf", 2), ["ab", "cd", "e", "f"]);
    }

    /// QA (r100 D2): rows were cut by characters, so a row of CJK text (two columns each) ran
    /// onto the next row, and the detail pane wrapped it at twice the width.
    #[test]
    fn rows_are_cut_and_wrapped_by_terminal_columns() {
        assert_eq!(cut("一二三四五六", 7), "一二三…");
        assert_eq!(cut("一二三", 6), "一二三");
        assert_eq!(cut("ab一二", 4), "ab…");
        assert_eq!(wrap("一二三四五", 4), ["一二", "三四", "五"]);
        assert_eq!(wrap("a一二b\n\nc", 3), ["a一", "二b", "", "c"]);
        // A column of one still shows every character.
        assert_eq!(wrap("一二", 1), ["一", "二"]);
    }
}

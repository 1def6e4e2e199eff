//! The lexer: one pass over each line, carrying an open comment, string or tag to the next line.
//! Every step of [`Lexer::line`] moves past at least one character.

use std::ops::Range;

use crate::languages::{Keys, Kind, Language};

/// A syntax token of Pi's themes, and the two diff colours a `diff` block is drawn in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyntaxToken {
    Comment,
    Keyword,
    Function,
    Variable,
    String,
    Number,
    Type,
    Operator,
    Punctuation,
    /// A `diff` block's added line (`toolDiffAdded`, as Pi draws highlight.js's `addition`).
    Inserted,
    /// A `diff` block's removed line (`toolDiffRemoved`).
    Deleted,
}

impl SyntaxToken {
    /// Every token.
    pub const ALL: [SyntaxToken; 11] = [
        SyntaxToken::Comment,
        SyntaxToken::Keyword,
        SyntaxToken::Function,
        SyntaxToken::Variable,
        SyntaxToken::String,
        SyntaxToken::Number,
        SyntaxToken::Type,
        SyntaxToken::Operator,
        SyntaxToken::Punctuation,
        SyntaxToken::Inserted,
        SyntaxToken::Deleted,
    ];

    /// The theme's colour token (Pi's names).
    pub fn theme_token(self) -> &'static str {
        match self {
            SyntaxToken::Comment => "syntaxComment",
            SyntaxToken::Keyword => "syntaxKeyword",
            SyntaxToken::Function => "syntaxFunction",
            SyntaxToken::Variable => "syntaxVariable",
            SyntaxToken::String => "syntaxString",
            SyntaxToken::Number => "syntaxNumber",
            SyntaxToken::Type => "syntaxType",
            SyntaxToken::Operator => "syntaxOperator",
            SyntaxToken::Punctuation => "syntaxPunctuation",
            SyntaxToken::Inserted => "toolDiffAdded",
            SyntaxToken::Deleted => "toolDiffRemoved",
        }
    }
}

/// A piece of a line and the token it is drawn in (`None`: the theme's `text`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<'code> {
    pub token: Option<SyntaxToken>,
    pub text: &'code str,
}

/// What a line leaves open for the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Nothing,
    /// The block comment of this index.
    Comment(usize),
    /// The quote of this index.
    Quote(usize),
}

/// Words after which the next word is the name being defined: a function, or a type.
const DEFINES_FUNCTION: [&str; 5] = ["fn", "def", "function", "func", "fun"];
const DEFINES_TYPE: [&str; 6] = ["class", "struct", "enum", "trait", "interface", "type"];

const OPERATORS: &str = "+-*/%=<>!&|^~?:";
const PUNCTUATION: &str = "()[]{},;.@";

pub(crate) struct Lexer {
    language: &'static Language,
    open: Open,
    /// Inside a markup tag (`<a href=…`), which may span lines.
    in_tag: bool,
}

/// One line's pieces, as byte ranges.
struct Line<'code> {
    text: &'code str,
    ranges: Vec<(Option<SyntaxToken>, Range<usize>)>,
    /// The last word read, for the name a defining word introduces.
    last_word: &'code str,
    /// The first word of a markup tag is its name.
    tag_named: bool,
}

impl Lexer {
    pub(crate) fn new(language: &'static Language) -> Self {
        Self {
            language,
            open: Open::Nothing,
            in_tag: false,
        }
    }

    pub(crate) fn line<'code>(&mut self, text: &'code str) -> Vec<Piece<'code>> {
        let mut line = Line {
            text,
            ranges: Vec::new(),
            last_word: "",
            tag_named: true,
        };
        match self.language.kind {
            Kind::Diff => diff_line(&mut line),
            Kind::Code | Kind::Markup => {
                let mut at = 0;
                while at < text.len() {
                    let next = self.step(&mut line, at);
                    // Every step moves on; a step that did not is taken as one plain character.
                    at = if next > at { next } else { line.plain_char(at) };
                }
            }
        }
        line.pieces()
    }

    /// Reads what starts at `at`; returns where the next step starts.
    fn step(&mut self, line: &mut Line<'_>, at: usize) -> usize {
        match self.open {
            Open::Comment(index) => return self.comment_rest(line, at, index),
            Open::Quote(index) => return self.quote_rest(line, at, index),
            Open::Nothing => {}
        }
        let rest = &line.text[at..];
        if let Some(start) = self.opening(line, at) {
            return start;
        }
        let Some(character) = rest.chars().next() else {
            return line.text.len();
        };
        if self.language.kind == Kind::Markup && !self.in_tag {
            return self.markup_text(line, at, character);
        }
        if character.is_whitespace() {
            let end = at + run(rest, char::is_whitespace);
            line.add(None, at..end);
            return end;
        }
        if character.is_ascii_digit() {
            let end = at + run(rest, |c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            line.add(Some(SyntaxToken::Number), at..end);
            return end;
        }
        if self.language.dollar_variables && character == '$' {
            return dollar_variable(line, at);
        }
        if self.starts_word(character) {
            return self.word(line, at, character);
        }
        if self.language.kind == Kind::Markup && (rest.starts_with('>') || rest.starts_with("/>")) {
            self.in_tag = false;
            let end = at + if character == '/' { 2 } else { 1 };
            line.add(Some(SyntaxToken::Punctuation), at..end);
            return end;
        }
        if OPERATORS.contains(character) {
            let end = at + run(rest, |c| OPERATORS.contains(c));
            line.add(Some(SyntaxToken::Operator), at..end);
            return end;
        }
        if PUNCTUATION.contains(character) {
            let end = at + character.len_utf8();
            line.add(Some(SyntaxToken::Punctuation), at..end);
            return end;
        }
        line.plain_char(at)
    }

    /// A comment or a string that starts at `at`: its opening is read and left open.
    fn opening(&mut self, line: &mut Line<'_>, at: usize) -> Option<usize> {
        let rest = &line.text[at..];
        let language = self.language;
        let after_space = at == 0 || line.text[..at].ends_with(char::is_whitespace);
        let line_comment = language.line_comments.iter().find(|marker| {
            rest.starts_with(**marker) && (after_space || !matches!(**marker, "#" | ";"))
        });
        if line_comment.is_some() && (language.kind == Kind::Code || !self.in_tag) {
            line.add(Some(SyntaxToken::Comment), at..line.text.len());
            return Some(line.text.len());
        }
        if let Some(index) = language
            .block_comments
            .iter()
            .position(|(open, _)| rest.starts_with(open))
        {
            self.open = Open::Comment(index);
            let end = at + language.block_comments[index].0.len();
            line.add(Some(SyntaxToken::Comment), at..end);
            return Some(end);
        }
        let in_text = language.kind == Kind::Markup && !self.in_tag;
        let index = language
            .quotes
            .iter()
            .position(|quote| rest.starts_with(quote.open))
            .filter(|_| !in_text)?;
        self.open = Open::Quote(index);
        let end = at + language.quotes[index].open.len();
        line.add(Some(SyntaxToken::String), at..end);
        Some(end)
    }

    fn comment_rest(&mut self, line: &mut Line<'_>, at: usize, index: usize) -> usize {
        let close = self.language.block_comments[index].1;
        let end = match line.text[at..].find(close) {
            Some(offset) => {
                self.open = Open::Nothing;
                at + offset + close.len()
            }
            None => line.text.len(),
        };
        line.add(Some(SyntaxToken::Comment), at..end);
        end
    }

    fn quote_rest(&mut self, line: &mut Line<'_>, at: usize, index: usize) -> usize {
        let quote = &self.language.quotes[index];
        // A shell's or PHP's `"…$name…"` shows its variables.
        let interpolates = self.language.dollar_variables && quote.escapes;
        let mut piece_start = at;
        let mut position = at;
        let mut closed = None;
        while let Some(character) = line.text[position..].chars().next() {
            let rest = &line.text[position..];
            if quote.escapes && character == '\\' {
                position += 1 + rest[1..].chars().next().map_or(0, char::len_utf8);
            } else if rest.starts_with(quote.close) {
                closed = Some(position + quote.close.len());
                break;
            } else if interpolates
                && character == '$'
                && rest[1..].starts_with(|next: char| next.is_alphanumeric() || "_{".contains(next))
            {
                line.add(Some(SyntaxToken::String), piece_start..position);
                position = dollar_variable(line, position);
                piece_start = position;
            } else {
                position += character.len_utf8();
            }
        }
        let end = closed.unwrap_or(line.text.len()).min(line.text.len());
        if closed.is_some() || !quote.multiline {
            self.open = Open::Nothing;
        }
        line.add(Some(SyntaxToken::String), piece_start.min(end)..end);
        if closed.is_some() && self.language.keys == Keys::BeforeColon {
            line.key_before(end, ':');
        }
        end
    }

    /// Text between markup tags: plain up to the next `<` that opens a tag.
    fn markup_text(&mut self, line: &mut Line<'_>, at: usize, character: char) -> usize {
        let rest = &line.text[at..];
        let opens_tag = character == '<'
            && rest[1..]
                .chars()
                .next()
                .is_some_and(|next| next.is_alphabetic() || matches!(next, '/' | '!' | '?'));
        if opens_tag {
            self.in_tag = true;
            line.tag_named = false;
            let end = at + if rest[1..].starts_with('/') { 2 } else { 1 };
            line.add(Some(SyntaxToken::Punctuation), at..end);
            return end;
        }
        let end = at + character.len_utf8() + run(&rest[character.len_utf8()..], |c| c != '<');
        line.add(None, at..end);
        end
    }

    /// Whether a word starts with `character`: a letter, `_`, or the first character of one of
    /// the language's keywords that starts otherwise (`#include`, `@media`, `.PHONY`).
    fn starts_word(&self, character: char) -> bool {
        character.is_alphabetic()
            || character == '_'
            || self
                .language
                .keywords
                .iter()
                .any(|keyword| keyword.starts_with(character))
    }

    fn word(&mut self, line: &mut Line<'_>, at: usize, first: char) -> usize {
        let dashes = matches!(self.language.kind, Kind::Markup) || self.language.keys != Keys::None;
        let rest = &line.text[at..];
        let end = at
            + first.len_utf8()
            + run(&rest[first.len_utf8()..], |c| {
                c.is_alphanumeric() || c == '_' || (dashes && c == '-')
            });
        let word = &line.text[at..end];
        let token = if self.language.kind == Kind::Markup {
            Some(if line.tag_named {
                SyntaxToken::Variable
            } else {
                SyntaxToken::Keyword
            })
        } else {
            self.word_token(line, word, end)
        };
        line.tag_named = true;
        line.last_word = word;
        line.add(token, at..end);
        end
    }

    fn word_token(&self, line: &Line<'_>, word: &str, end: usize) -> Option<SyntaxToken> {
        let language = self.language;
        let is = |words: &[&str]| {
            words.contains(&word)
                || (language.any_case && words.iter().any(|known| known.eq_ignore_ascii_case(word)))
        };
        let after = line.text[end..].trim_start();
        let next = after.chars().next();
        let key = match language.keys {
            Keys::BeforeColon => next == Some(':') && !after.starts_with("::"),
            Keys::BeforeEquals => next == Some('=') && line.text[..end].trim_start() == word,
            Keys::None => false,
        };
        if key {
            return Some(SyntaxToken::Variable);
        }
        if is(language.keywords) {
            return Some(SyntaxToken::Keyword);
        }
        if is(language.literals) {
            return Some(SyntaxToken::Number);
        }
        if is(language.types) {
            return Some(SyntaxToken::Type);
        }
        if DEFINES_FUNCTION.contains(&line.last_word) {
            return Some(SyntaxToken::Function);
        }
        if DEFINES_TYPE.contains(&line.last_word) {
            return Some(SyntaxToken::Type);
        }
        let call =
            next == Some('(') || (line.text[end..].starts_with('!') && language.capitalized_types);
        if call {
            return Some(SyntaxToken::Function);
        }
        let capitalised =
            word.starts_with(|c: char| c.is_uppercase()) && word.chars().any(char::is_lowercase);
        (language.capitalized_types && capitalised).then_some(SyntaxToken::Type)
    }
}

/// `$name`, `${…}` or `$1`: a variable.
fn dollar_variable(line: &mut Line<'_>, at: usize) -> usize {
    let rest = &line.text[at + 1..];
    let length = if rest.starts_with('{') {
        rest.find('}').map_or(rest.len(), |close| close + 1)
    } else {
        let word = run(rest, |c| c.is_alphanumeric() || c == '_');
        if word == 0 {
            rest.chars().next().map_or(0, char::len_utf8)
        } else {
            word
        }
    };
    line.add(Some(SyntaxToken::Variable), at..at + 1 + length);
    at + 1 + length
}

/// A diff line, by its first characters.
fn diff_line(line: &mut Line<'_>) {
    let text = line.text;
    let token = if ["+++", "---", "@@", "diff ", "index "]
        .iter()
        .any(|header| text.starts_with(header))
    {
        Some(SyntaxToken::Comment)
    } else if text.starts_with('+') {
        Some(SyntaxToken::Inserted)
    } else if text.starts_with('-') {
        Some(SyntaxToken::Deleted)
    } else {
        None
    };
    line.add(token, 0..text.len());
}

/// The bytes of the run of characters at the start of `text` that `keep` accepts.
fn run(text: &str, keep: impl Fn(char) -> bool) -> usize {
    text.find(|c: char| !keep(c)).unwrap_or(text.len())
}

impl<'code> Line<'code> {
    /// Adds a range, joined to the last one when it has the same token.
    fn add(&mut self, token: Option<SyntaxToken>, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        match self.ranges.last_mut() {
            Some((last, previous)) if *last == token && previous.end == range.start => {
                previous.end = range.end;
            }
            _ => self.ranges.push((token, range)),
        }
    }

    /// One plain character at `at`; returns where the next starts.
    fn plain_char(&mut self, at: usize) -> usize {
        let width = self.text[at..].chars().next().map_or(1, char::len_utf8);
        self.add(None, at..at + width);
        at + width
    }

    /// Marks the string that ends at `end` as a key when `marker` follows it (JSON's `"name":`).
    fn key_before(&mut self, end: usize, marker: char) {
        let follows = self.text[end..].trim_start().starts_with(marker);
        if let Some((token, range)) = self.ranges.last_mut()
            && follows
            && range.end == end
        {
            *token = Some(SyntaxToken::Variable);
        }
    }

    fn pieces(self) -> Vec<Piece<'code>> {
        let text = self.text;
        let cut: Option<Vec<Piece<'code>>> = self
            .ranges
            .into_iter()
            .map(|(token, range)| text.get(range).map(|text| Piece { token, text }))
            .collect();
        match cut {
            Some(pieces) => pieces,
            None if text.is_empty() => Vec::new(),
            None => vec![Piece { token: None, text }],
        }
    }
}

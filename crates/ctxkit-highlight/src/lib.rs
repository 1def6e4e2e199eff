//! Code coloured by its language. A block's lines come back as pieces, each marked with the syntax
//! token of Pi's themes it is drawn in (`syntaxKeyword`, `syntaxString` …), so a theme colours code
//! the way Pi colours it.
//!
//! A lexer reads each line once, left to right, and every step takes at least one character: its
//! time is linear in the code whatever the code holds. (A grammar engine was tried first: syntect
//! over bat's grammars loops forever on `x /*` in JavaScript, which a model's reply or a cloned
//! repository's file can hold; `docs/decisions.md`.) The languages are data (`languages.rs`): their
//! comments, quotes, keywords, types and literals. Beyond the words it knows, a word before `(` is
//! a function, a capitalised word a type where the language names types so, a word after `fn`,
//! `def` or `function` the function it defines.
//!
//! Nothing here fails on input: an unknown language is `None`, and code over [`MAX_CODE_BYTES`]
//! is not highlighted.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

mod languages;
mod lexer;

pub use lexer::{Piece, SyntaxToken};

use languages::{LANGUAGES, Language};

/// The most code one call colours: past it the block is shown plain.
pub const MAX_CODE_BYTES: usize = 256 * 1024;

/// The language a fence's info word or a file extension names (in any case).
fn language(name: &str) -> Option<&'static Language> {
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    LANGUAGES
        .iter()
        .find(|language| language.names.contains(&name.as_str()))
}

/// Whether `language` names a language ctxkit highlights (a fence's info word or an extension).
pub fn knows(language: &str) -> bool {
    self::language(language).is_some()
}

/// The language of a file, by its extension or its whole name (`Dockerfile`, `Makefile`), for
/// [`highlight`].
pub fn language_of_path(path: &str) -> Option<String> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if let Some(language) = LANGUAGES
        .iter()
        .find(|language| language.file_names.contains(&name))
    {
        return language.names.first().map(|name| (*name).to_owned());
    }
    let (_, extension) = name.rsplit_once('.')?;
    knows(extension).then(|| extension.to_ascii_lowercase())
}

/// `code`'s lines (split at `\n`, a final `\r` left out) in pieces, or `None` when `language` names
/// no language ctxkit knows or the code is over [`MAX_CODE_BYTES`].
pub fn highlight<'code>(code: &'code str, language: &str) -> Option<Vec<Vec<Piece<'code>>>> {
    let language = self::language(language)?;
    if code.len() > MAX_CODE_BYTES {
        return None;
    }
    let mut lexer = lexer::Lexer::new(language);
    Some(
        code.split('\n')
            .map(|line| lexer.line(line.strip_suffix('\r').unwrap_or(line)))
            .collect(),
    )
}

#[cfg(test)]
mod tests;

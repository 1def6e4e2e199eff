//! Which characters of session text a reader's screen would act on instead of showing, in one
//! list: the CLI writes them as `\uXXXX` before a terminal sees them (`render::terminal_safe`), and
//! the session's page (`ctxkit-web`) receives the list in its data and shows them visibly too.

/// The characters a terminal or a browser acts on instead of showing, as inclusive ranges: every
/// C0 control but newline and tab (escape sequences start with one), DEL, the C1 controls (U+009B
/// is a one-character CSI), and the bidirectional marks, embeddings, overrides and isolates that
/// reorder what a line shows ("Trojan Source": U+061C, U+200E, U+200F, U+202A–U+202E,
/// U+2066–U+2069).
pub const UNSAFE_TO_SHOW: &[(char, char)] = &[
    ('\u{0}', '\u{8}'),
    ('\u{b}', '\u{1f}'),
    ('\u{7f}', '\u{9f}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{200e}', '\u{200f}'),
    ('\u{202a}', '\u{202e}'),
    ('\u{2066}', '\u{2069}'),
];

/// Characters that draw nothing though they are no white space: the soft hyphen, the Mongolian
/// vowel separator, zero-width spaces and joiners, invisible operators, deprecated format
/// characters, the byte-order mark and interlinear annotation marks. Harmless to a terminal, so
/// not [`UNSAFE_TO_SHOW`], but a name or a command holding one does not read as what it is
/// (`zw\u{200b}name`): the tools quote such names and approval questions show them as codes.
pub fn draws_nothing(character: char) -> bool {
    matches!(
        character,
        '\u{ad}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// Whether `character` is invisible in a line of text without being a control character: it
/// [`draws_nothing`], or it is a bidirectional mark, override or isolate of [`UNSAFE_TO_SHOW`]
/// (which reorders what follows and shows nothing itself). Text holding one does not read as what
/// it is: a name the tools quote, a key split by one that a reader sees whole.
pub fn is_invisible(character: char) -> bool {
    draws_nothing(character) || (!character.is_control() && is_unsafe_to_show(character))
}

/// Whether `character` is one of [`UNSAFE_TO_SHOW`].
pub fn is_unsafe_to_show(character: char) -> bool {
    UNSAFE_TO_SHOW
        .iter()
        .any(|&(first, last)| (first..=last).contains(&character))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_controls_but_newline_and_tab_and_the_bidi_formatting_characters() {
        let listed: Vec<u32> = (0..=u32::from(char::MAX))
            .filter_map(char::from_u32)
            .filter(|&character| is_unsafe_to_show(character))
            .map(u32::from)
            .collect();
        let mut expected: Vec<u32> = (0..=0x9f)
            .filter(|&code| code != 0x0a && code != 0x09)
            .collect();
        expected.retain(|code| !(0x20..0x7f).contains(code));
        expected.extend([0x61c, 0x200e, 0x200f]);
        expected.extend(0x202a..=0x202e);
        expected.extend(0x2066..=0x2069);
        assert_eq!(listed, expected);
    }
}

//! Scripts written without spaces between words (Chinese, Japanese, Thai, …): a word search or a
//! name's boundary cannot rely on spaces there, so readers of transcript text share this one rule.

/// Whether `character` is a letter of a script written without spaces between words: Han (with
/// its compatibility and extension blocks), Hiragana, Katakana (with the half-width forms),
/// Bopomofo, Yi, Thai, Lao, Khmer, Myanmar and Tibetan. Hangul is not among them: Korean is
/// written with spaces between words.
pub fn is_written_without_spaces(character: char) -> bool {
    matches!(
        character,
        '\u{0E00}'..='\u{0EFF}'       // Thai, Lao
            | '\u{0F00}'..='\u{0FFF}' // Tibetan
            | '\u{1000}'..='\u{109F}' // Myanmar
            | '\u{1780}'..='\u{17FF}' // Khmer
            | '\u{19E0}'..='\u{19FF}' // Khmer symbols
            | '\u{2E80}'..='\u{2FDF}' // CJK radicals, Kangxi radicals
            | '\u{3005}'..='\u{3007}' // 々 〆 〇
            | '\u{3021}'..='\u{3029}' // Hangzhou numerals
            | '\u{3031}'..='\u{3035}' // kana repeat marks
            | '\u{3040}'..='\u{30FF}' // Hiragana, Katakana
            | '\u{3100}'..='\u{312F}' // Bopomofo
            | '\u{31A0}'..='\u{31BF}' // Bopomofo extended
            | '\u{31F0}'..='\u{31FF}' // Katakana phonetic extensions
            | '\u{3400}'..='\u{4DBF}' // CJK extension A
            | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
            | '\u{A000}'..='\u{A4CF}' // Yi
            | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
            | '\u{FF66}'..='\u{FF9F}' // half-width Katakana
            | '\u{1B000}'..='\u{1B16F}' // Kana supplement and extensions
            | '\u{20000}'..='\u{3FFFF}' // CJK extensions B and later
    )
}

#[cfg(test)]
mod tests {
    use super::is_written_without_spaces;

    #[test]
    fn chinese_japanese_and_thai_are_written_without_spaces_and_korean_and_latin_with() {
        for character in ['订', '単', 'ひ', 'カ', 'ｶ', 'ก', 'ລ', 'ក', '𠀀', '々'] {
            assert!(is_written_without_spaces(character), "{character}");
        }
        for character in ['a', 'Ü', 'ж', 'ع', '한', '1', '_', ' ', '，', '。'] {
            assert!(!is_written_without_spaces(character), "{character}");
        }
    }
}

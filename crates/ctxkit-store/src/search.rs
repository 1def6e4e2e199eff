//! Text search over a session's entry lines, the same for both backends: the words of a query or
//! a line, the part of a line that is searched, and a search of a file's lines a line at a time up
//! to the first holding every word.

/// How much of each entry line a text search reads: PostgreSQL cannot index a tsvector over
/// 1 MiB, and both backends search the same part.
pub(crate) const SEARCHED_CHARACTERS: usize = 100_000;

/// The words a text search matches, of a query or of an entry line: runs of letters and digits,
/// lowercased, a run also ended where a letter of a script written without spaces (Chinese,
/// Japanese, Thai: [`ctxkit_protocol::is_written_without_spaces`]) meets one of another
/// (`parse模块` is `parse` and `模块`). A query matches a line holding each of its words as a whole
/// word, and each word in a script written without spaces anywhere inside a word
/// ([`matches_word`]): a Chinese clause is one run, and `多币种` is found inside it.
pub(crate) fn words_of(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut start = None;
    let mut previous_unspaced = false;
    for (at, character) in text.char_indices() {
        let unspaced = ctxkit_protocol::is_written_without_spaces(character);
        if !character.is_alphanumeric() {
            words.extend(start.take().map(|start| text[start..at].to_lowercase()));
            continue;
        }
        match start {
            Some(begun) if unspaced != previous_unspaced => {
                words.push(text[begun..at].to_lowercase());
                start = Some(at);
            }
            Some(_) => {}
            None => start = Some(at),
        }
        previous_unspaced = unspaced;
    }
    words.extend(start.map(|start| text[start..].to_lowercase()));
    words
}

/// Whether a query's `word` ([`words_of`]) is among a line's `line_words`: equal to one, or, for
/// a word in a script written without spaces, inside one.
pub(crate) fn matches_word(line_words: &[String], word: &str) -> bool {
    if is_unspaced_word(word) {
        line_words.iter().any(|line_word| line_word.contains(word))
    } else {
        line_words.iter().any(|line_word| line_word == word)
    }
}

/// Whether a word of [`words_of`] is in a script written without spaces (its first letter's
/// script is every letter's).
pub(crate) fn is_unspaced_word(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(ctxkit_protocol::is_written_without_spaces)
}

/// The part of `line` a text search reads.
pub(crate) fn searched_part(line: &str) -> &str {
    match line.char_indices().nth(SEARCHED_CHARACTERS) {
        Some((end, _)) => &line[..end],
        None => line,
    }
}

/// Whether an entry line of `lines` (its first [`SEARCHED_CHARACTERS`] characters) holds every
/// word of `words` ([`words_of`]). Read a line at a time up to the first that does. The listings
/// search in the pass that reads each file for its record ([`LineSearch`]); this whole-file form is
/// the tests' reference.
#[cfg(test)]
pub(crate) fn holds_words<R: std::io::BufRead>(
    lines: &mut crate::lines::JsonlLines<R>,
    words: &[String],
) -> crate::error::Result<bool> {
    lines.header()?;
    let mut search = LineSearch::new(words);
    while let Some(line) = lines.next_line()? {
        if search.holds_words(&line) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A search of a file's entry lines for every word of a query, one line at a time.
pub(crate) struct LineSearch<'w> {
    words: &'w [String],
    ascii_words: bool,
    lowered: Vec<u8>,
}

impl<'w> LineSearch<'w> {
    pub(crate) fn new(words: &'w [String]) -> Self {
        Self {
            words,
            ascii_words: words.iter().all(|word| word.is_ascii()),
            lowered: Vec::new(),
        }
    }

    /// Whether the entry line (its first [`SEARCHED_CHARACTERS`] characters) holds every word.
    pub(crate) fn holds_words(&mut self, line: &str) -> bool {
        let part = searched_part(line);
        if self.ascii_words
            && part.is_ascii()
            && !holds_as_text(part, self.words, &mut self.lowered)
        {
            return false;
        }
        let line_words = words_of(part);
        self.words
            .iter()
            .all(|word| matches_word(&line_words, word))
    }
}

/// Whether the ASCII text `part`, in lower case (into `lowered`), holds each of the ASCII `words`
/// somewhere: a line that does not cannot hold them as words, and is passed over without being
/// split into words (which cost 300 ms a search of every 25 MB). Only for ASCII lines and words,
/// where a word's lower case is its ASCII lower case (a non-ASCII letter such as the Kelvin sign
/// lowers to an ASCII one).
fn holds_as_text(part: &str, words: &[String], lowered: &mut Vec<u8>) -> bool {
    lowered.clear();
    lowered.extend_from_slice(part.as_bytes());
    lowered.make_ascii_lowercase();
    words
        .iter()
        .all(|word| memchr::memmem::find(lowered, word.as_bytes()).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::JsonlLines;

    #[test]
    fn a_search_stops_at_the_first_line_holding_every_word() {
        let mut bytes = b"{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n".to_vec();
        bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"a\",\"message\":{\"role\":\"user\",\"content\":\"the Parser failed\"}}\n");
        bytes.extend_from_slice(b"{\"type\":\"message\",\"id\":\"b\",\"message\":{\"role\":\"user\",\"content\":\"an error here\"}}\n");
        let search = |bytes: &[u8], text: &str| {
            holds_words(&mut JsonlLines::new("test", bytes), &words_of(text))
        };
        assert!(search(&bytes, "parser FAILED").unwrap());
        // Every word in one line, not across lines.
        assert!(!search(&bytes, "parser error").unwrap());
        // What follows the first match is not read: before, the whole file was read and split
        // first, and a damaged line after the match failed the search.
        bytes.extend_from_slice(b"{\"type\":\"message\",\"bad\":\"\xff\"}\n");
        assert!(search(&bytes, "parser failed").unwrap());
        assert!(search(&bytes, "parser error").is_err());
    }

    #[test]
    fn the_text_check_before_the_words_finds_what_the_words_find() {
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/p\"}\n";
        let cases = [
            // (entry text, query, found)
            ("Kubernetes pod", "kubernetes", true),
            ("\u{212A}ubernetes pod", "kubernetes", true),
            ("Ärger im Büro", "ärger büro", true),
            ("subkubernetes", "kubernetes", false),
            ("kubernetes_pod", "pod", true),
            ("kubernetespod", "pod", false),
            ("kube-pod", "pod KUBE", true),
            ("nothing", "", true),
            ("nothing", "!!", true),
            // QA r107: Chinese and Japanese are written without spaces, and a word inside a
            // clause was never found.
            (
                "请把 parse 模块改成支持多币种，不要修改公共接口",
                "多币种",
                true,
            ),
            (
                "请把 parse 模块改成支持多币种，不要修改公共接口",
                "模块 parse",
                true,
            ),
            ("请把 parse模块改成支持多币种", "parse 币种", true),
            ("請求をparse関数で処理する", "関数 処理", true),
            ("请把 parse 模块改成支持多币种", "汇率转换", false),
            ("请把 parser 模块", "parse", false),
            ("วันนี้อากาศดีมาก", "อากาศ", true),
        ];
        for (text, query, found) in cases {
            let bytes =
                format!("{header}{{\"type\":\"message\",\"id\":\"a\",\"text\":\"{text}\"}}\n");
            let words = words_of(query);
            let held = holds_words(&mut JsonlLines::new("test", bytes.as_bytes()), &words);
            assert_eq!(held.unwrap(), found, "{text:?} {query:?}");
        }
    }
}

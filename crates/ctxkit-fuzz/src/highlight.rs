//! Code from the bytes highlighted in a language the first byte picks: whatever the code, the
//! pieces of each line put back together are the line, none is empty, and the call returns (the
//! lexer's every step takes a character; a grammar engine tried first looped forever here).

/// Fence words and extensions the chat meets most, and one that names no grammar.
const LANGUAGES: [&str; 16] = [
    "rust",
    "ts",
    "php",
    "python",
    "bash",
    "json",
    "toml",
    "yaml",
    "go",
    "c",
    "java",
    "diff",
    "css",
    "html",
    "sql",
    "no-such-language",
];

/// Highlights the bytes; see the module's documentation.
pub fn highlight_code(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let language = LANGUAGES[usize::from(first) % LANGUAGES.len()];
    let code = String::from_utf8_lossy(rest);
    let Some(lines) = ctxkit_highlight::highlight(&code, language) else {
        assert!(
            language == "no-such-language" || code.len() > ctxkit_highlight::MAX_CODE_BYTES,
            "{language} has a grammar"
        );
        return;
    };
    let expected: Vec<&str> = code
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    assert_eq!(lines.len(), expected.len());
    for (pieces, line) in lines.iter().zip(expected) {
        let rebuilt: String = pieces.iter().map(|piece| piece.text).collect();
        assert_eq!(rebuilt, line, "{language}: pieces lost text");
        assert!(pieces.iter().all(|piece| !piece.text.is_empty()));
    }
}

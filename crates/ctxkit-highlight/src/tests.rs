use super::*;

fn token_named(name: &str) -> SyntaxToken {
    SyntaxToken::ALL
        .into_iter()
        .find(|token| format!("{token:?}").eq_ignore_ascii_case(name))
        .unwrap_or_else(|| panic!("no token {name}"))
}

/// Every line's pieces put back together are the line: nothing is lost, moved or added.
fn assert_lossless(code: &str, lines: &[Vec<Piece<'_>>]) {
    let rebuilt: Vec<String> = lines
        .iter()
        .map(|pieces| pieces.iter().map(|piece| piece.text).collect())
        .collect();
    let expected: Vec<&str> = code
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    assert_eq!(rebuilt, expected);
}

#[test]
fn the_fixture_cases_colour_their_pieces() {
    let cases: serde_json::Value =
        serde_json::from_str(include_str!("../fixtures/cases.json")).unwrap();
    for case in cases.as_array().unwrap() {
        let what = case["what"].as_str().unwrap();
        let code = case["code"].as_str().unwrap();
        let lines = highlight(code, case["language"].as_str().unwrap())
            .unwrap_or_else(|| panic!("{what}: no grammar"));
        assert_lossless(code, &lines);
        let pieces: Vec<&Piece<'_>> = lines.iter().flatten().collect();
        for expected in case["pieces"].as_array().unwrap() {
            let token = token_named(expected[0].as_str().unwrap());
            let text = expected[1].as_str().unwrap();
            assert!(
                pieces
                    .iter()
                    .any(|piece| piece.token == Some(token) && piece.text.trim() == text),
                "{what}: `{text}` is not {token:?} in {pieces:?}"
            );
        }
    }
}

#[test]
fn every_token_has_a_theme_token() {
    for token in SyntaxToken::ALL {
        assert!(!token.theme_token().is_empty());
    }
}

#[test]
fn an_unknown_language_or_none_is_not_highlighted() {
    assert!(highlight("x = 1", "").is_none());
    assert!(highlight("x = 1", "no-such-language").is_none());
    assert!(!knows("text"));
    assert!(knows("RUST"));
    assert!(knows("ts"));
    assert!(knows("shell"));
}

#[test]
fn files_are_known_by_their_extension_or_name() {
    assert_eq!(language_of_path("src/main.rs").as_deref(), Some("rs"));
    assert_eq!(language_of_path("web/App.TSX").as_deref(), Some("tsx"));
    assert_eq!(language_of_path("Cargo.toml").as_deref(), Some("toml"));
    assert_eq!(
        language_of_path("deploy/Dockerfile").as_deref(),
        Some("dockerfile")
    );
    assert_eq!(language_of_path("notes.unknownext"), None);
    assert_eq!(language_of_path("C:\\work\\x.py").as_deref(), Some("py"));
}

#[test]
fn too_much_code_is_not_highlighted() {
    let large = "let x = 1;\n".repeat(MAX_CODE_BYTES / 10);
    assert!(highlight(&large, "rust").is_none());
    assert!(highlight(&large[..MAX_CODE_BYTES - 11], "rust").is_some());
}

#[test]
fn odd_text_comes_back_whole() {
    for (code, language) in [
        ("", "rust"),
        ("\n\n", "ts"),
        ("line\r\nnext\r\n", "python"),
        ("\"unclosed string\nfn x() {}", "rust"),
        ("/* unclosed comment\nstill comment", "c"),
        ("日本語 = \"値\" # コメント\n🙂", "toml"),
        ("\u{0}\u{1b}[31m\u{7f}", "bash"),
    ] {
        let lines = highlight(code, language).unwrap();
        assert_lossless(code, &lines);
    }
    let lines = highlight("/* open\nstill", "c").unwrap();
    assert_eq!(lines[1][0].token, Some(SyntaxToken::Comment));
}

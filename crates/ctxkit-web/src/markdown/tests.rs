use serde_json::{Value, json};

use super::*;

/// Each case of `fixtures/markdown.json`: a message's markdown and the nodes the page draws.
#[test]
fn each_fixture_case_gives_its_tree() {
    let cases: Value = serde_json::from_str(include_str!("../../fixtures/markdown.json")).unwrap();
    for case in cases.as_array().unwrap() {
        let markdown = case["markdown"].as_str().unwrap();
        assert_eq!(tree(markdown), case["tree"], "case {}", case["name"]);
    }
}

fn depth(node: &Value) -> usize {
    match node {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Object(_) => 0,
    }
}

/// Ten thousand nested quotes and lists come out at most [`MAX_DEPTH`] elements deep, every
/// word kept.
#[test]
fn deep_nesting_is_drawn_flat_past_the_limit() {
    for prefix in ["> ", "- ", "1. "] {
        let text = format!("{}deepest words", prefix.repeat(10_000));
        let nodes = tree(&text);
        assert!(
            depth(&nodes) <= MAX_DEPTH + 2,
            "{prefix}: {}",
            depth(&nodes)
        );
        assert!(nodes.to_string().contains("deepest words"), "{prefix}");
    }
}

/// A code block nested past the limit keeps its text, unhighlighted.
#[test]
fn a_code_block_past_the_limit_is_its_text() {
    let text = format!("{}```rust\nfn main() {{}}\n```", "> ".repeat(40));
    let shown = tree(&text).to_string();
    assert!(shown.contains("fn main() {}"), "{shown}");
    assert!(!shown.contains(r#"["k","fn"]"#), "{shown}");
}

/// Only the web and mail are links; every other address is written out as text, in any case
/// and with leading space.
#[test]
fn only_web_and_mail_addresses_are_followed() {
    for address in [
        "https://example.com/a",
        "HTTP://example.com",
        "mailto:a@b.c",
    ] {
        assert!(followed(address), "{address}");
    }
    for address in [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>",
        "file:///etc/passwd",
        "vbscript:x",
        "../secrets.txt",
        "//evil.example",
        "https://example.com/\u{0}x",
    ] {
        assert!(!followed(address), "{address}");
    }
}

#[test]
fn a_known_language_s_code_comes_in_token_pieces() {
    assert_eq!(
        code_pieces("let x = 1;\n", "rust"),
        vec![
            json!(["k", "let"]),
            json!(" x "),
            json!(["o", "="]),
            json!(" "),
            json!(["n", "1"]),
            json!(["p", ";"]),
        ]
    );
    assert_eq!(
        code_pieces("let x", "no-such-language"),
        vec![json!("let x")]
    );
}

/// A result's runs cover its text to the last UTF-16 unit, line ends (`\r\n` too) and
/// characters outside the basic plane included, and join neighbours of one token.
#[test]
fn runs_cover_the_text_in_the_script_s_units() {
    let code = "let s = \"é😀\";\r\nfn main() {}\n// end";
    let pieces = runs(code, "rust").unwrap();
    let total: u32 = pieces.iter().step_by(2).sum();
    assert_eq!(total as usize, code.encode_utf16().count());
    assert_eq!(
        &pieces[..2],
        &[3, 2],
        "`let`, a keyword: one more than its place"
    );
    assert!(
        pieces
            .chunks(2)
            .zip(pieces.chunks(2).skip(1))
            .all(|(a, b)| a[1] != b[1])
    );
    assert_eq!(runs(code, "no-such-language"), None);
}

/// The page's script knows a token by the letter [`token_code`] gives it, in
/// [`SyntaxToken::ALL`]'s order (`HL` in `entries.js`).
#[test]
fn the_script_s_token_letters_follow_the_list() {
    let letters: String = SyntaxToken::ALL
        .iter()
        .map(|token| token_code(*token))
        .collect();
    assert_eq!(letters, "ckfvsntopid");
    let script = include_str!("../../assets/app/markdown.js");
    assert!(
        script
            .contains(r#"const HL = ["", "c", "k", "f", "v", "s", "n", "t", "o", "p", "i", "d"];"#)
    );
}

/// Adversarial review: a link (or an image) nested past [`MAX_DEPTH`] is drawn flat, and its
/// address vanishes from the tree: neither an `a` element nor the address written out as text.
#[test]
fn a_link_past_the_depth_limit_keeps_its_address() {
    let text = format!(
        "{}[words](https://example.com/deep) ![alt](https://example.com/i.png)",
        "> ".repeat(MAX_DEPTH + 4)
    );
    let shown = tree(&text).to_string();
    assert!(shown.contains("https://example.com/deep"), "{shown}");
    assert!(shown.contains("https://example.com/i.png"), "{shown}");
}

/// Adversarial review: flattening past [`MAX_DEPTH`] moves every child of a flattened element
/// up one level at each closing, so a block of D nested quotes holding N inline nodes costs D × N.
/// One block at the page's largest clip ([`crate::MAX_CLIP_CHARS`], 50 000 characters: 25 000
/// `>` and 6 250 code spans) takes about 20 s here in a debug build while pulldown-cmark parses
/// it in about 5 ms; a session of such replies stalls `ctxkit export --html` and `ctxkit view`.
#[test]
fn deep_quotes_full_of_inline_nodes_are_built_in_linear_time() {
    let text = format!("{} {}", ">".repeat(25_000), "`a` ".repeat(6_250));
    assert!(text.chars().count() <= crate::MAX_CLIP_CHARS + 1);
    let start = std::time::Instant::now();
    let nodes = tree(&text);
    let elapsed = start.elapsed();
    assert!(depth(&nodes) <= MAX_DEPTH + 2);
    assert!(
        elapsed < std::time::Duration::from_secs(2),
        "{elapsed:?} for {} bytes",
        text.len()
    );
}

/// An address of a few characters followed by 200,000 closing parentheses (none of them its own)
/// is trimmed in linear time, and links only the address.
#[test]
fn an_address_ending_in_many_parentheses_is_trimmed_quickly() {
    let text = format!("https://a.example{}", ")".repeat(200_000));
    let started = std::time::Instant::now();
    let shown = tree(&text);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(
        shown[0][1],
        json!(["a", {"href": "https://a.example"}, "https://a.example"])
    );
}

//! A theme document from the bytes, its colours resolved as the chat paints with them: whatever a
//! theme holds, what reaches the terminal is a foreground SGR parameter list of numbers in range,
//! never text of the theme's.

use ctxkit_resources::{REQUIRED_COLOR_TOKENS, theme_colors, validate_theme};

/// Resolves a theme from the bytes; see the module's documentation.
pub fn theme_colors_target(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let valid = validate_theme("fuzz.json", &document);
    let Ok(colors) = theme_colors(&document) else {
        assert!(
            valid.is_err(),
            "a theme whose colours fail passed validation"
        );
        return;
    };
    let tokens = document
        .get("colors")
        .and_then(serde_json::Value::as_object)
        .map(|colors| colors.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    for token in tokens
        .iter()
        .map(String::as_str)
        .chain(REQUIRED_COLOR_TOKENS.iter().copied())
    {
        let Some(color) = colors.get(token) else {
            continue;
        };
        for truecolor in [true, false] {
            let sgr = color.foreground_sgr(truecolor);
            assert!(is_foreground_sgr(&sgr), "{token}: {sgr:?}");
        }
    }
}

/// `39`, `38;5;N` or `38;2;R;G;B`, each number 0–255.
fn is_foreground_sgr(sgr: &str) -> bool {
    let parts: Vec<&str> = sgr.split(';').collect();
    let in_range = |part: &&str| {
        !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|byte| byte.is_ascii_digit())
            && part.parse::<u16>().is_ok_and(|number| number <= 255)
    };
    match parts.as_slice() {
        ["39"] => true,
        ["38", "5", index] => in_range(index),
        ["38", "2", rest @ ..] => rest.len() == 3 && rest.iter().all(in_range),
        _ => false,
    }
}

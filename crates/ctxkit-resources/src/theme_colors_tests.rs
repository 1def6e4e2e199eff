use serde_json::{Value, json};

use super::*;

/// What Pi 1.6.0's terminal library made of each colour of `conformance/color-cases-16.json`
/// (`conformance/record-colors.mjs`).
fn pi_vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../conformance/vectors-colors-16.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_colour_is_sent_as_pi_sends_it() {
    let vectors = pi_vectors();
    let colors = vectors["colors"].as_array().unwrap();
    assert!(colors.len() > 30);
    for case in colors {
        let color = parse_color(&case["value"]).unwrap();
        assert_eq!(
            color.foreground_sgr(true),
            case["truecolor"].as_str().unwrap(),
            "truecolor {}",
            case["value"]
        );
        assert_eq!(
            color.foreground_sgr(false),
            case["ansi256"].as_str().unwrap(),
            "256 colours {}",
            case["value"]
        );
    }
}

#[test]
fn every_value_pi_refuses_is_refused() {
    let vectors = pi_vectors();
    for case in vectors["refused"].as_array().unwrap() {
        assert!(case["error"].is_string(), "Pi accepted {}", case["value"]);
        assert!(
            parse_color(&case["value"]).is_err(),
            "accepted {}",
            case["value"]
        );
    }
}

#[test]
fn the_terminal_default_is_its_own_colour() {
    let color = parse_color(&json!("")).unwrap();
    assert_eq!(color, Color::TerminalDefault);
    assert_eq!(color.foreground_sgr(true), "39");
}

#[test]
fn variables_are_followed_through_chains() {
    let theme = json!({
        "vars": {"base": "#ff0000", "alias": "base", "again": "alias"},
        "colors": {"error": "again", "warning": 214, "text": "", "muted": "okhsl(0 0% 50%)"}
    });
    let colors = theme_colors(&theme).unwrap();
    assert_eq!(colors.get("error"), Some(Color::Rgb([255.0, 0.0, 0.0])));
    assert_eq!(colors.get("warning"), Some(Color::Indexed(214)));
    assert_eq!(colors.get("text"), Some(Color::TerminalDefault));
    assert_eq!(colors.get("accent"), None);
}

#[test]
fn optional_tokens_fall_back_as_in_pi() {
    let theme = json!({"colors": {"muted": 8, "text": 7, "selectedBg": 4, "thinkingXhigh": 5}});
    let colors = theme_colors(&theme).unwrap();
    assert_eq!(colors.get("scrollbarTrack"), Some(Color::Indexed(8)));
    assert_eq!(colors.get("scrollbarThumb"), Some(Color::Indexed(7)));
    assert_eq!(colors.get("searchMatchBg"), Some(Color::Indexed(4)));
    assert_eq!(colors.get("searchMatchText"), Some(Color::Indexed(7)));
    assert_eq!(colors.get("thinkingMax"), Some(Color::Indexed(5)));
    let own = json!({"colors": {"muted": 8, "scrollbarTrack": 9}});
    assert_eq!(
        theme_colors(&own).unwrap().get("scrollbarTrack"),
        Some(Color::Indexed(9))
    );
}

#[test]
fn a_missing_or_circular_variable_is_named() {
    let missing = json!({"colors": {"error": "crimson"}});
    assert_eq!(
        theme_colors(&missing).unwrap_err(),
        "/colors/error: variable reference not found: crimson"
    );
    let circular = json!({"vars": {"a": "b", "b": "a"}, "colors": {"error": "a"}});
    assert_eq!(
        theme_colors(&circular).unwrap_err(),
        "/colors/error: circular variable reference: a"
    );
    let bad = json!({"vars": {"a": "okhsl(1 2 3)"}, "colors": {"error": "a"}});
    assert_eq!(
        theme_colors(&bad).unwrap_err(),
        "/colors/error: s must be between 0 and 1: 2"
    );
}

/// Attack: a theme is a file anyone may hand out. Nothing it holds reaches the terminal but the
/// numbers of a colour.
#[test]
fn a_colour_cannot_carry_an_escape_sequence() {
    for value in [
        "\u{1b}]0;pwned\u{7}",
        "#fff\u{1b}[2J",
        "okhsl(1 2% 3%)\u{1b}[2J",
        "oklch(50% 0.1 1\u{1b}[2J)",
    ] {
        assert!(parse_color(&json!(value)).is_err(), "{value:?}");
    }
    let theme = json!({"vars": {"x": "\u{1b}[31m"}, "colors": {"error": "x"}});
    assert!(theme_colors(&theme).is_err());
}

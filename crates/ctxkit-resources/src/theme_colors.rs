//! A theme's colours read as the terminal is sent them: each colour token of a theme resolved
//! through its `vars` to one of the forms Pi 1.6 accepts (`#0af`, `#00aaff`, `oklch(62% 0.1
//! 200)`, `okhsl(250 60% 55%)`, a 256-colour index, `""` for the terminal's own colour), and each
//! colour written as a foreground SGR parameter list for a truecolor or a 256-colour terminal.
//!
//! OKHSL and OKLCH are converted with the `palette` crate; an OKLCH colour outside sRGB keeps its
//! lightness and hue and loses chroma until it fits, as Pi maps it. A 256-colour terminal gets the
//! nearest colour of the 6×6×6 cube, or of the grey ramp for a colour with almost no hue.

use std::collections::{BTreeMap, HashSet};

use palette::convert::FromColorUnclamped as _;
use palette::{LinSrgb, Okhsl, Oklab, Srgb};
use serde_json::{Map, Value};

/// A colour of a theme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Color {
    /// The terminal's own foreground or background (`""`).
    TerminalDefault,
    /// An index of the terminal's 256-colour palette.
    Indexed(u8),
    /// An sRGB colour, each channel from 0 to 255 (not rounded yet).
    Rgb([f64; 3]),
}

/// Optional tokens and the token each falls back to (Pi's).
const FALLBACKS: &[(&str, &str)] = &[
    ("scrollbarTrack", "muted"),
    ("scrollbarThumb", "text"),
    ("searchMatchBg", "selectedBg"),
    ("searchMatchText", "text"),
    ("thinkingMax", "thinkingXhigh"),
];

/// The resolved colours of one theme, by token.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThemeColors {
    colors: BTreeMap<String, Color>,
}

impl ThemeColors {
    /// The colour of `token` (`toolDiffAdded`, `mdHeading`, …), when the theme has it.
    pub fn get(&self, token: &str) -> Option<Color> {
        self.colors.get(token).copied()
    }
}

/// Resolves every colour of a theme document (its `colors`, through its `vars`, with Pi's
/// fallbacks for the optional tokens). The error is one line: a value that is no colour, a
/// variable that is missing or refers to itself.
pub fn theme_colors(theme: &Value) -> Result<ThemeColors, String> {
    let empty = Map::new();
    let vars = theme
        .get("vars")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let colors = theme
        .get("colors")
        .and_then(Value::as_object)
        .ok_or("a theme needs an object `colors`")?;
    let mut resolved = BTreeMap::new();
    for (token, value) in colors {
        let color = resolve(value, vars).map_err(|error| format!("/colors/{token}: {error}"))?;
        resolved.insert(token.clone(), color);
    }
    for (token, fallback) in FALLBACKS {
        if !resolved.contains_key(*token)
            && let Some(color) = resolved.get(*fallback).copied()
        {
            resolved.insert((*token).to_owned(), color);
        }
    }
    Ok(ThemeColors { colors: resolved })
}

/// `value` with variable references followed to a colour.
fn resolve(value: &Value, vars: &Map<String, Value>) -> Result<Color, String> {
    let mut visited: HashSet<&str> = HashSet::new();
    let mut value = value;
    loop {
        let Some(text) = value.as_str() else {
            return parse_color(value);
        };
        if is_literal(text) {
            return parse_color(value);
        }
        if !visited.insert(text) {
            return Err(format!("circular variable reference: {text}"));
        }
        value = vars
            .get(text)
            .ok_or_else(|| format!("variable reference not found: {text}"))?;
    }
}

/// Whether `text` is a colour itself rather than the name of a variable.
fn is_literal(text: &str) -> bool {
    text.is_empty()
        || text.starts_with('#')
        || starts_with_ignoring_case(text, "oklch(")
        || starts_with_ignoring_case(text, "okhsl(")
}

fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
}

/// One colour value as a theme writes it (not a variable reference).
pub fn parse_color(value: &Value) -> Result<Color, String> {
    let invalid = || format!("invalid color value: {value}");
    if let Some(index) = value.as_u64() {
        return u8::try_from(index)
            .map(Color::Indexed)
            .map_err(|_| invalid());
    }
    let text = value.as_str().ok_or_else(invalid)?;
    if text.is_empty() {
        return Ok(Color::TerminalDefault);
    }
    if let Some(hex) = text.strip_prefix('#') {
        return parse_hex(hex).ok_or_else(invalid);
    }
    if let Some(arguments) = function_arguments(text, "oklch(") {
        let [lightness, chroma, hue] = arguments.ok_or_else(invalid)?;
        let lightness = fraction(lightness, "l")?;
        let chroma = plain_number(chroma).ok_or_else(invalid)?;
        let hue = degrees(hue).ok_or_else(invalid)?;
        if chroma < 0.0 {
            return Err(format!("c must not be negative: {chroma}"));
        }
        return Ok(Color::Rgb(oklch_to_rgb(lightness, chroma, hue)));
    }
    if let Some(arguments) = function_arguments(text, "okhsl(") {
        let [hue, saturation, lightness] = arguments.ok_or_else(invalid)?;
        let hue = degrees(hue).ok_or_else(invalid)?;
        let saturation = fraction(saturation, "s")?;
        let lightness = fraction(lightness, "l")?;
        return Ok(Color::Rgb(okhsl_to_rgb(hue, saturation, lightness)));
    }
    Err(invalid())
}

fn parse_hex(hex: &str) -> Option<Color> {
    if !hex.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |digits: &str| u8::from_str_radix(digits, 16).ok().map(f64::from);
    let channels = match hex.len() {
        3 => {
            let doubled: String = hex.chars().flat_map(|digit| [digit, digit]).collect();
            [&doubled[0..2], &doubled[2..4], &doubled[4..6]].map(channel)
        }
        6 => [&hex[0..2], &hex[2..4], &hex[4..6]].map(channel),
        _ => return None,
    };
    let [Some(red), Some(green), Some(blue)] = channels else {
        return None;
    };
    Some(Color::Rgb([red, green, blue]))
}

/// The three space-separated arguments of `name(…)` (any case); `Some(None)` when it is that
/// function with another count.
fn function_arguments<'a>(text: &'a str, name: &str) -> Option<Option<[&'a str; 3]>> {
    if !starts_with_ignoring_case(text, name) {
        return None;
    }
    let inner = text[name.len()..].strip_suffix(')')?;
    let parts: Vec<&str> = inner.split_whitespace().collect();
    Some(<[&str; 3]>::try_from(parts).ok())
}

/// A number as CSS writes one: an optional sign, digits with an optional point, an optional
/// exponent (no `inf`, no `NaN`).
fn plain_number(text: &str) -> Option<f64> {
    let allowed = |byte: u8| byte.is_ascii_digit() || b"+-.eE".contains(&byte);
    if text.is_empty() || !text.bytes().all(allowed) {
        return None;
    }
    text.parse::<f64>().ok().filter(|number| number.is_finite())
}

/// A hue in degrees, `deg` allowed after it.
fn degrees(text: &str) -> Option<f64> {
    plain_number(text.strip_suffix("deg").unwrap_or(text))
}

/// A share from 0 to 1, written as one or as a percentage.
fn fraction(text: &str, name: &str) -> Result<f64, String> {
    let share = match text.strip_suffix('%') {
        Some(percent) => plain_number(percent).map(|number| number / 100.0),
        None => plain_number(text),
    }
    .ok_or_else(|| format!("invalid color value: {text}"))?;
    if (0.0..=1.0).contains(&share) {
        Ok(share)
    } else {
        Err(format!("{name} must be between 0 and 1: {share}"))
    }
}

fn okhsl_to_rgb(hue: f64, saturation: f64, lightness: f64) -> [f64; 3] {
    let srgb = Srgb::<f64>::from_color_unclamped(Okhsl::new(hue, saturation, lightness));
    [srgb.red, srgb.green, srgb.blue].map(|channel| (channel * 255.0).clamp(0.0, 255.0))
}

/// OKLCH to sRGB, the chroma reduced (by bisection, hue and lightness kept) until the colour fits.
fn oklch_to_rgb(lightness: f64, chroma: f64, hue: f64) -> [f64; 3] {
    let (sine, cosine) = hue.to_radians().sin_cos();
    let at_chroma = |chroma: f64| {
        LinSrgb::<f64>::from_color_unclamped(Oklab::new(lightness, chroma * cosine, chroma * sine))
    };
    let direct = at_chroma(chroma);
    let fitted = if in_gamut(&direct) {
        direct
    } else {
        let (mut low, mut high) = (0.0, chroma);
        let mut fitted = at_chroma(0.0);
        for _ in 0..20 {
            let middle = (low + high) / 2.0;
            let candidate = at_chroma(middle);
            if in_gamut(&candidate) {
                low = middle;
                fitted = candidate;
            } else {
                high = middle;
            }
        }
        fitted
    };
    let srgb = Srgb::<f64>::from_linear(LinSrgb::new(
        fitted.red.clamp(0.0, 1.0),
        fitted.green.clamp(0.0, 1.0),
        fitted.blue.clamp(0.0, 1.0),
    ));
    [srgb.red, srgb.green, srgb.blue].map(|channel| channel * 255.0)
}

fn in_gamut(linear: &LinSrgb<f64>) -> bool {
    const EPSILON: f64 = 1e-7;
    [linear.red, linear.green, linear.blue]
        .iter()
        .all(|channel| (-EPSILON..=1.0 + EPSILON).contains(channel))
}

/// The channel values of the 6×6×6 cube of the 256-colour palette.
const CUBE_VALUES: [f64; 6] = [0.0, 95.0, 135.0, 175.0, 215.0, 255.0];

/// A colour as a terminal of one depth is sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TerminalColor {
    /// The terminal's own colour.
    Default,
    /// An index of the 256-colour palette.
    Indexed(u8),
    /// A 24-bit colour.
    Rgb([u8; 3]),
}

impl Color {
    /// This colour for a truecolor terminal, or the nearest of 256 colours for another.
    pub fn on_terminal(&self, truecolor: bool) -> TerminalColor {
        match *self {
            Color::TerminalDefault => TerminalColor::Default,
            Color::Indexed(index) => TerminalColor::Indexed(index),
            Color::Rgb(channels) if truecolor => {
                TerminalColor::Rgb(channels.map(|channel| channel.round() as u8))
            }
            Color::Rgb(channels) => TerminalColor::Indexed(nearest_256(channels)),
        }
    }

    /// The SGR parameters that set this colour as the foreground (`38;2;r;g;b` on a truecolor
    /// terminal, `38;5;n` otherwise, `39` for the terminal's own), without `ESC [` and `m`.
    pub fn foreground_sgr(&self, truecolor: bool) -> String {
        match self.on_terminal(truecolor) {
            TerminalColor::Rgb([red, green, blue]) => format!("38;2;{red};{green};{blue}"),
            TerminalColor::Indexed(index) => format!("38;5;{index}"),
            TerminalColor::Default => "39".to_owned(),
        }
    }
}

/// The index of the 256-colour palette nearest `rgb`: the cube's, or the grey ramp's when the
/// colour is nearly grey and the ramp is closer.
fn nearest_256(rgb: [f64; 3]) -> u8 {
    let cube = rgb.map(|channel| nearest_index(&CUBE_VALUES, channel));
    let cube_color = cube.map(|index| CUBE_VALUES[index]);
    let cube_index = 16 + 36 * cube[0] + 6 * cube[1] + cube[2];
    let grey = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]).round();
    let ramp: Vec<f64> = (0..24).map(|step| f64::from(8 + step * 10)).collect();
    let ramp_index = nearest_index(&ramp, grey);
    let ramp_value = ramp[ramp_index];
    let spread =
        rgb.iter().copied().fold(f64::MIN, f64::max) - rgb.iter().copied().fold(f64::MAX, f64::min);
    let index = if spread < 10.0 && distance(rgb, [ramp_value; 3]) < distance(rgb, cube_color) {
        232 + ramp_index
    } else {
        cube_index
    };
    u8::try_from(index).unwrap_or(u8::MAX)
}

fn nearest_index(values: &[f64], target: f64) -> usize {
    let mut best = 0;
    for (index, value) in values.iter().enumerate() {
        if (target - value).abs() < (target - values[best]).abs() {
            best = index;
        }
    }
    best
}

/// The distance between two colours, weighted by how bright each channel looks.
fn distance(first: [f64; 3], second: [f64; 3]) -> f64 {
    let [red, green, blue] = [0, 1, 2].map(|channel| first[channel] - second[channel]);
    red * red * 0.299 + green * green * 0.587 + blue * blue * 0.114
}

#[cfg(test)]
#[path = "theme_colors_tests.rs"]
mod tests;

//! Gemini's two thinking controls. Gemini 2.5 takes a token budget (`thinkingBudget`); Gemini 3
//! and later take a discrete `thinkingLevel` (`MINIMAL` … `HIGH`), and accept a budget only for
//! compatibility. Which a model takes is read from its id, as Pi 1.6.0 does (its model catalog
//! carries no flag for it); the levels a model takes come from the catalog
//! (`ctxkit_models::BuiltinModel::thinking_levels`), a level it lacks clamped to the nearest one,
//! upwards first, as Pi clamps. Such a model cannot turn thinking off: with no level asked, the
//! lowest it takes is sent, where the model's own default would think at `HIGH`.

use super::ReasoningLevel;
use crate::config::ProviderConfig;

/// Every level in order, as the catalog names them.
const LEVELS: [&str; 5] = ["minimal", "low", "medium", "high", "xhigh"];

/// Whether `model` takes `thinkingLevel` rather than `thinkingBudget`: Gemini 3 Pro and Flash
/// (`gemini-3-flash-preview`, `gemini-3.1-pro-preview`, `gemini-3.8-flash` …), Gemini 4 and
/// later, the `-latest` Flash aliases and Gemma 4.
pub(crate) fn takes_levels(model: &str) -> bool {
    let id = model.to_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    gemini_three(id)
        || gemini_four_or_later(id)
        || id == "gemini-flash-latest"
        || id == "gemini-flash-lite-latest"
        || id.contains("gemma-4")
        || id.contains("gemma4")
}

/// `gemini-3-pro…`, `gemini-3.1-flash…`: a 3, an optional minor version, then `pro` or `flash`.
fn gemini_three(id: &str) -> bool {
    id.match_indices("gemini-3").any(|(start, found)| {
        let rest = &id[start + found.len()..];
        let rest = match rest.strip_prefix('.') {
            Some(minor) => minor.trim_start_matches(|c: char| c.is_ascii_digit()),
            None => rest,
        };
        rest.starts_with("-pro") || rest.starts_with("-flash")
    })
}

/// `gemini-4…` to `gemini-99…`.
fn gemini_four_or_later(id: &str) -> bool {
    id.match_indices("gemini-").any(|(start, found)| {
        let rest = &id[start + found.len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        match rest[..digits].parse::<u32>() {
            Ok(major) => digits == 2 || major >= 4,
            Err(_) => false,
        }
    })
}

/// The `thinkingLevel` to send `config`'s model for `level` (`None`: thinking off), when the model
/// takes levels; `None` when it takes a budget.
pub(crate) fn thinking_level(
    config: &ProviderConfig,
    level: Option<ReasoningLevel>,
) -> Option<&'static str> {
    if !takes_levels(&config.model) {
        return None;
    }
    let taken = taken_levels(config);
    let wanted = level.map(|level| match level {
        ReasoningLevel::Minimal => 0,
        ReasoningLevel::Low => 1,
        ReasoningLevel::Medium => 2,
        ReasoningLevel::High => 3,
        ReasoningLevel::XHigh => 4,
    });
    let index = clamp(wanted.unwrap_or(0), &taken)?;
    Some(match LEVELS[index] {
        "minimal" => "MINIMAL",
        "low" => "LOW",
        "medium" => "MEDIUM",
        // Gemini's levels end at HIGH: a model the catalog gives `xhigh` is asked its highest.
        _ => "HIGH",
    })
}

/// Which of [`LEVELS`] the model takes: the catalog's, or all but `xhigh` for a model it lacks.
fn taken_levels(config: &ProviderConfig) -> Vec<bool> {
    let row = ctxkit_models::model_row(&config.provider, &config.model)
        .filter(|row| !row.thinking_levels.is_empty());
    LEVELS
        .iter()
        .map(|level| match row {
            Some(row) => row.thinking_levels.iter().any(|taken| taken == level),
            None => *level != "xhigh",
        })
        .collect()
}

/// `wanted` if taken, else the nearest taken level above it, else below it.
fn clamp(wanted: usize, taken: &[bool]) -> Option<usize> {
    (wanted..taken.len())
        .find(|&index| taken[index])
        .or_else(|| (0..wanted).rev().find(|&index| taken[index]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_three_and_later_take_levels_and_two_point_five_a_budget() {
        for id in [
            "gemini-3-flash-preview",
            "gemini-3.1-pro-preview",
            "gemini-3.8-flash",
            "gemini-3.1-flash-lite",
            "gemini-4-argon",
            "gemini-flash-latest",
            "gemma-4-31b-it",
            "models/gemini-3-pro-preview",
        ] {
            assert!(takes_levels(id), "{id}");
        }
        for id in [
            "gemini-2.5-flash",
            "gemini-2.5-pro",
            "gemini-pro-latest",
            "gemini-3-image",
        ] {
            assert!(!takes_levels(id), "{id}");
        }
    }

    #[test]
    fn a_level_the_model_lacks_goes_up_first_then_down() {
        // Gemini 3.1 Pro takes low, medium, high.
        let pro = [false, true, true, true, false];
        assert_eq!(clamp(0, &pro), Some(1));
        assert_eq!(clamp(4, &pro), Some(3));
        // Gemma 4 takes minimal and high.
        let gemma = [true, false, false, true, false];
        assert_eq!(clamp(1, &gemma), Some(3));
        assert_eq!(clamp(2, &gemma), Some(3));
        assert_eq!(clamp(0, &[false; 5]), None);
    }
}

//! Which thinking levels a model supports, and a level asked of it clamped to those, as Pi 1.6.0
//! clamps (`getSupportedThinkingLevels`, `clampThinkingLevel`): a level the model lacks becomes
//! the nearest one it has above it, else below it. Every surface that sets a level (`/thinking`,
//! Shift-Tab, `--model …:level`, `--thinking`, a session's recorded level, `defaultThinkingLevel`)
//! clamps through here, so a session continued in Pi thinks at the same budget.

use crate::catalog::model_row;

/// Every thinking level, lowest first, as Pi names them.
pub const THINKING_LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// The levels of a reasoning model whose catalog entry maps none specially.
const DEFAULT_LEVELS: [&str; 5] = ["off", "minimal", "low", "medium", "high"];

/// The levels `provider`'s model `id` supports, lowest first: `off` alone for a model that does
/// not reason (`reasoning`), the built-in table's list for a known model that has one, else the
/// default five (`xhigh` and `max` only where the catalog maps them, as Pi's).
pub fn supported_thinking_levels(provider: &str, id: &str, reasoning: bool) -> Vec<&'static str> {
    if !reasoning {
        return vec!["off"];
    }
    let listed = model_row(provider, id)
        .map(|row| row.supported_thinking_levels.as_slice())
        .unwrap_or_default();
    if listed.is_empty() {
        return DEFAULT_LEVELS.to_vec();
    }
    THINKING_LEVELS
        .into_iter()
        .filter(|level| listed.iter().any(|listed| listed == level))
        .collect()
}

/// `level` clamped to `supported` (lowest first): itself when supported, else the nearest
/// supported level above it, else below it; an unknown name becomes the lowest supported.
pub fn clamp_thinking_level(level: &str, supported: &[&'static str]) -> &'static str {
    let lowest = supported.first().copied().unwrap_or("off");
    if let Some(same) = supported.iter().find(|taken| **taken == level) {
        return same;
    }
    let Some(asked) = THINKING_LEVELS.iter().position(|known| *known == level) else {
        return lowest;
    };
    let above = THINKING_LEVELS[asked..].iter();
    let below = THINKING_LEVELS[..asked].iter().rev();
    above
        .chain(below)
        .find(|candidate| supported.contains(candidate))
        .copied()
        .unwrap_or(lowest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_come_from_the_table_else_the_default_five() {
        let sonnet = supported_thinking_levels("anthropic", "claude-sonnet-4-5", true);
        assert_eq!(sonnet, DEFAULT_LEVELS);
        assert_eq!(
            supported_thinking_levels("anthropic", "claude-sonnet-4-5", false),
            ["off"]
        );
        assert_eq!(
            supported_thinking_levels("someone", "own-model", true),
            DEFAULT_LEVELS
        );
        let opus = supported_thinking_levels("anthropic", "claude-opus-4-6", true);
        assert!(opus.contains(&"max"), "{opus:?}");
    }

    #[test]
    fn a_level_is_clamped_up_then_down_as_pis() {
        // (asked, supported, clamped)
        let cases: [(&str, &[&'static str], &str); 8] = [
            ("max", &DEFAULT_LEVELS, "high"),
            ("xhigh", &DEFAULT_LEVELS, "high"),
            ("high", &DEFAULT_LEVELS, "high"),
            ("minimal", &["off", "low", "medium", "high"], "low"),
            ("off", &["low", "medium", "high"], "low"),
            ("xhigh", &["off", "high", "max"], "max"),
            ("medium", &["off"], "off"),
            ("bogus", &["low", "high"], "low"),
        ];
        for (asked, supported, clamped) in cases {
            assert_eq!(clamp_thinking_level(asked, supported), clamped, "{asked}");
        }
    }
}

//! The budget arithmetic of a window, in one place: the compaction threshold (window − reserve),
//! when a context is over it, the threshold as a percentage, and the sliding window's floor (the
//! midpoint between the threshold and the window). The engine's checks, its view, its background
//! summaries and branch summaries, and compaction's loop guard all measure with these. What a reply
//! needs after its input (output floor and margin) is `ctxkit_overflow::output_room`.

/// The compaction threshold of a window: `context_window − reserve_tokens`, 0 when the reserve is
/// the whole window or more. Also the input budget of a request that keeps `reserve_tokens` for
/// its answer (a branch summary).
pub fn compaction_threshold(context_window: u64, reserve_tokens: u64) -> u64 {
    context_window.saturating_sub(reserve_tokens)
}

/// Whether a context of `context_tokens` must be compacted: strictly over window − reserve, as the
/// reference decides (a reserve over the window puts every context over it).
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    reserve_tokens: u64,
    enabled: bool,
) -> bool {
    enabled && i128::from(context_tokens) > i128::from(context_window) - i128::from(reserve_tokens)
}

/// The compaction threshold as a whole percentage of the window, rounded down; 0 for an unknown
/// window (0).
pub fn threshold_percent(context_window: u64, reserve_tokens: u64) -> u64 {
    if context_window == 0 {
        return 0;
    }
    compaction_threshold(context_window, reserve_tokens).saturating_mul(100) / context_window
}

/// The lowest percentage of the window at which the sliding window may act while compaction is
/// on: the midpoint between the threshold and the window, rounded up, so the window never holds a
/// request under the threshold (compaction would never run). 100 for an unknown window (0).
pub fn sliding_window_floor_percent(context_window: u64, reserve_tokens: u64) -> u64 {
    if context_window == 0 {
        return 100;
    }
    let floor_tokens = context_window - reserve_tokens.min(context_window) / 2;
    let percent = (u128::from(floor_tokens) * 100).div_ceil(u128::from(context_window));
    u64::try_from(percent).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_the_window_less_the_reserve_and_never_below_zero() {
        assert_eq!(compaction_threshold(200_000, 16_384), 183_616);
        assert_eq!(compaction_threshold(10_000, 16_384), 0);
        assert_eq!(compaction_threshold(0, 16_384), 0);
    }

    #[test]
    fn compaction_is_due_strictly_over_the_threshold() {
        assert!(!should_compact(183_616, 200_000, 16_384, true));
        assert!(should_compact(183_617, 200_000, 16_384, true));
        assert!(!should_compact(183_617, 200_000, 16_384, false));
        // A reserve over the window: the reference's subtraction goes negative, so even an empty
        // context is over it.
        assert!(should_compact(0, 10_000, 16_384, true));
    }

    #[test]
    fn the_threshold_percent_rounds_down() {
        assert_eq!(threshold_percent(200_000, 16_384), 91);
        assert_eq!(threshold_percent(100, 50), 50);
        assert_eq!(threshold_percent(0, 16_384), 0);
        assert_eq!(threshold_percent(1_000, 5_000), 0);
    }

    #[test]
    fn the_sliding_window_floor_is_the_midpoint_rounded_up() {
        // Threshold 91.8% of 200k: the midpoint to the window is 95.9%, so 96.
        assert_eq!(sliding_window_floor_percent(200_000, 16_384), 96);
        assert_eq!(sliding_window_floor_percent(100, 50), 75);
        // A reserve over the window: the midpoint of 0 and the window.
        assert_eq!(sliding_window_floor_percent(1_000, 5_000), 50);
        assert_eq!(sliding_window_floor_percent(0, 16_384), 100);
    }
}
